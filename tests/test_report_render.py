"""report.html renders in headless Chromium at a laptop's width (1280 px): nothing overflows the
page, every figure is an inline SVG whose axes carry labels with units, and the page is not
blank. Skipped only when Chromium is absent outside CI (``.ci/install-chromium.sh`` installs it).

The layout is measured in the browser by a script added to a copy of the page (the report
itself has none) that writes its findings into the DOM, read back with ``--dump-dom``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from sparsefric.identify import SparseFric
from sparsefric.model import JointModel
from sparsefric.report import write_report

from .conftest import EXAMPLE

pytestmark = pytest.mark.slow  # whole identifications

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--hide-scrollbars"]
WIDTH, HEIGHT = 1280, 2400
#: Axis labels name their unit in brackets: "t [s]", "τ [N·m]", "ξ_u [-]".
UNIT = re.compile(r"\[[^\]]+\]")

PROBE = """<script>
window.addEventListener("load", () => {
  const W = document.documentElement.clientWidth;
  const box = (el) => el.getBoundingClientRect();
  const name = (el) => el.tagName + "#" + (el.id || el.closest("section")?.id || "");
  const out = {width: W, scrollWidth: document.documentElement.scrollWidth, overflow: [],
               panels: []};
  const boxes = "svg.figure, .scroll, nav, p, h1, h2, .headline, table:not(.scroll table)";
  for (const el of document.querySelectorAll(boxes)) {
    const r = box(el);
    if (r.right > W + 0.5 || r.left < -0.5) out.overflow.push(name(el));
  }
  for (const g of document.querySelectorAll("svg.figure g.panel")) {
    const label = (cls) => { const t = g.querySelector("text." + cls);
                             return t ? [t.textContent, box(t).width] : [null, 0]; };
    out.panels.push({figure: g.closest("svg").id, categorical: g.classList.contains(
      "categorical"), x: label("xlabel"), y: label("ylabel"),
      width: box(g).width});
  }
  const pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def _chromium() -> str:
    found = next((p for p in (shutil.which("chromium"), shutil.which("chromium-browser"),
                              "/usr/bin/chromium") if p and os.access(p, os.X_OK)), None)
    if found:
        return found
    if os.environ.get("CI", "").lower() in ("true", "1"):
        pytest.fail("chromium is missing in CI: run .ci/install-chromium.sh")
    pytest.skip("chromium is not installed (run .ci/install-chromium.sh)")


def _run(args: list[str], tmp: Path) -> subprocess.CompletedProcess:
    return subprocess.run([_chromium(), *FLAGS, f"--user-data-dir={tmp / 'profile'}", *args],
                          capture_output=True, text=True, timeout=120, check=True)


@pytest.fixture(scope="module")
def report(example, tmp_path_factory) -> Path:
    """report.html of a light fit on short pieces of data/example, with the true model; the
    test record is long enough for zoomed windows."""
    train = [t.with_(t=t.t[:4000], q=t.q[:4000], tau=t.tau[:4000], truth={})
             for t in example["train"]]
    est = SparseFric(sigma0_starts=(1e4,), omega_starts=(0.05,),
                     thresholds=np.geomspace(0.1, 20, 6)).fit(train)
    out = tmp_path_factory.mktemp("report")
    truth = JointModel.load(EXAMPLE / "truth.json")
    write_report(est.result_, out, train, test=[example["test"][0]], known={"truth": truth})
    return out / "report.html"


@pytest.fixture(scope="module")
def layout(report, tmp_path_factory) -> dict:
    """What the probe measured in Chromium at 1280 px."""
    tmp = tmp_path_factory.mktemp("probe")
    probed = tmp / "probed.html"
    probed.write_text(report.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"),
                      encoding="utf-8")
    dom = _run(["--dump-dom", "--virtual-time-budget=5000", f"--window-size={WIDTH},{HEIGHT}",
                probed.as_uri()], tmp).stdout
    found = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
    assert found, "the probe did not run"
    return json.loads(found[1].replace("&quot;", '"').replace("&amp;", "&"))


def test_nothing_overflows_the_page_at_1280_px(layout):
    assert layout["width"] >= WIDTH - 20
    assert layout["scrollWidth"] <= layout["width"], "the page scrolls sideways"
    assert layout["overflow"] == []


def test_every_axis_of_every_figure_has_a_label_with_its_unit(layout):
    figures = {p["figure"] for p in layout["panels"]}
    assert {"fig-selection", "fig-coefficients", "fig-friction", "fig-convergence",
            "fig-torque-train", "fig-torque-test", "fig-residuals-test", "fig-free-run",
            "fig-loops-test"} <= figures
    for p in layout["panels"]:
        (x, x_width), (y, y_width) = p["x"], p["y"]
        assert x and UNIT.search(x) and x_width > 0, p
        assert y and y_width > 0, p
        assert p["categorical"] or UNIT.search(y), p
        assert x_width < p["width"], p  # the label fits under its panel


def test_long_records_get_zoomed_windows(report):
    page = report.read_text(encoding="utf-8")
    torque = page[page.index('id="fig-torque-test"'):]
    torque = torque[:torque.index("</svg>")]
    assert "zoom: a reversal of a typical move" in torque


def test_screenshot_is_not_blank(report, tmp_path):
    import matplotlib.image as mpimg

    shot = tmp_path / "report.png"
    _run([f"--screenshot={shot}", f"--window-size={WIDTH},{HEIGHT}", report.as_uri()], tmp_path)
    pixels = mpimg.imread(shot)[..., :3]
    assert pixels.shape[:2] == (HEIGHT, WIDTH)
    dark = (pixels.mean(axis=2) < 0.5).mean()
    colours = len(np.unique((pixels[::4, ::4] * 255).astype(np.uint8).reshape(-1, 3), axis=0))
    assert 0.005 < dark < 0.5  # text and plot lines on a white page
    assert colours > 50  # figures (coloured curves), not just black text
    keep = os.environ.get("SPARSEFRIC_KEEP_SCREENSHOT")
    if keep:
        shutil.copy(shot, keep)
