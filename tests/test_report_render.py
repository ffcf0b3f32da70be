"""report.html renders in headless Chromium at a laptop's width (1280 px): nothing overflows the
page, every figure is an inline SVG whose axes carry labels with units, and the page is not
blank. Skipped only when Chromium is absent outside CI (``.ci/install-chromium.sh`` installs it).

The layout is measured in the browser by a script added to a copy of the page (the report
itself has none) that writes its findings into the DOM, read back with ``--dump-dom``.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from sparsefric.estimator import SparseFric
from sparsefric.model import JointModel
from sparsefric.report import write_model_comparison, write_report
from sparsefric.screenshots import WIDTH, find_chromium, probe, run_chromium, section_screenshots

from .conftest import EXAMPLE

pytestmark = pytest.mark.slow  # whole identifications

HEIGHT = 2400
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
    found = find_chromium()
    if found:
        return found
    if os.environ.get("CI", "").lower() in ("true", "1"):
        pytest.fail("chromium is missing in CI: run .ci/install-chromium.sh")
    pytest.skip("chromium is not installed (run .ci/install-chromium.sh)")


def _pieces(example) -> list:
    """Short pieces of the training records of data/example."""
    return [t.with_(t=t.t[:4000], q=t.q[:4000], tau=t.tau[:4000], truth={})
            for t in example["train"]]


def _light(train, model: str = "A") -> SparseFric:
    """A light fit (not a good model; enough to exercise the report)."""
    return SparseFric(model=model, sigma0_starts=(1e4,), omega_starts=(0.05,),
                      thresholds=np.geomspace(0.1, 20, 6)).fit(train)


@pytest.fixture(scope="module")
def report(example, tmp_path_factory) -> Path:
    """report.html of a light fit on short pieces of data/example, with the true model; the
    test record is long enough for zoomed windows."""
    train = _pieces(example)
    est = _light(train)
    out = tmp_path_factory.mktemp("report")
    truth = JointModel.load(EXAMPLE / "truth.json")
    write_report(est.result_, out, train, test=[example["test"][0]], known={"truth": truth})
    return out / "report.html"


@pytest.fixture(scope="module")
def layout(report, tmp_path_factory) -> dict:
    """What the probe measured in Chromium at 1280 px."""
    page = report.read_text(encoding="utf-8")
    return probe(_chromium(), page, PROBE, tmp_path_factory.mktemp("probe"), HEIGHT)


def test_nothing_overflows_the_page_at_1280_px(layout):
    assert layout["width"] >= WIDTH - 20
    assert layout["scrollWidth"] <= layout["width"], "the page scrolls sideways"
    assert layout["overflow"] == []


def test_every_axis_of_every_figure_has_a_label_with_its_unit(layout):
    figures = {p["figure"] for p in layout["panels"]}
    assert {"fig-selection", "fig-coefficients", "fig-friction", "fig-convergence",
            "fig-torque-train", "fig-torque-test", "fig-residuals-test", "fig-free-run",
            "fig-loops-test", "fig-branches-train"} <= figures
    for p in layout["panels"]:
        (x, x_width), (y, y_width) = p["x"], p["y"]
        assert x and UNIT.search(x) and x_width > 0, p
        assert y and y_width > 0, p
        assert p["categorical"] or UNIT.search(y), p
        assert x_width < p["width"], p  # the label fits under its panel


def test_the_comparison_of_models_a_and_b_fits_the_page(example, tmp_path):
    train = _pieces(example)
    results = {m: _light(train, m).result_ for m in ("A", "B")}
    write_model_comparison(results, tmp_path, train, test=[example["test"][0]])
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    (tmp_path / "probe").mkdir()
    found = probe(_chromium(), page, PROBE, tmp_path / "probe", HEIGHT)
    assert found["scrollWidth"] <= found["width"] and found["overflow"] == []
    assert {p["figure"] for p in found["panels"]} == {"fig-free-run-errors",
                                                       "fig-branches-train"}
    for p in found["panels"]:
        assert UNIT.search(p["x"][0]) and UNIT.search(p["y"][0]), p


def test_long_records_get_zoomed_windows(report):
    page = report.read_text(encoding="utf-8")
    torque = page[page.index('id="fig-torque-test"'):]
    torque = torque[:torque.index("</svg>")]
    assert "zoom: a reversal of a typical move" in torque


def test_screenshot_is_not_blank(report, tmp_path):
    import matplotlib.image as mpimg

    shot = tmp_path / "report.png"
    run_chromium(_chromium(), [f"--screenshot={shot}", f"--window-size={WIDTH},{HEIGHT}",
                               report.as_uri()], tmp_path / "profile")
    pixels = mpimg.imread(shot)[..., :3]
    assert pixels.shape[:2] == (HEIGHT, WIDTH)
    dark = (pixels.mean(axis=2) < 0.5).mean()
    colours = len(np.unique((pixels[::4, ::4] * 255).astype(np.uint8).reshape(-1, 3), axis=0))
    assert 0.005 < dark < 0.5  # text and plot lines on a white page
    assert colours > 50  # figures (coloured curves), not just black text
    keep = os.environ.get("SPARSEFRIC_KEEP_SCREENSHOT")
    if keep:
        shutil.copy(shot, keep)


def test_a_screenshot_of_each_section(report, tmp_path):
    import matplotlib.image as mpimg

    sections = re.findall(r'<section id="([^"]+)"', report.read_text(encoding="utf-8"))
    shots = section_screenshots(report, tmp_path / "shots", _chromium())
    assert [p.name for p in shots] == [f"report-{i:02d}-{s}.png"
                                       for i, s in enumerate(sections, start=1)]
    heights = []
    for shot in shots:
        pixels = mpimg.imread(shot)[..., :3]
        assert pixels.shape[1] == WIDTH
        heights.append(pixels.shape[0])
        dark_rows = np.flatnonzero((pixels.mean(axis=2) < 0.5).any(axis=1))
        assert dark_rows.size, shot.name  # the section's heading at least
        # the whole section: its last dark row (a table's border, an axis label) is inside
        assert dark_rows[-1] < pixels.shape[0] - 8, shot.name
    assert len(set(heights)) > len(heights) // 2  # each window sized to its section
    assert not list((tmp_path / "shots").glob(".*"))  # no partial files left
    stale = tmp_path / "shots" / "report-11-gone.png"
    stale.write_bytes(b"")  # a section of an earlier report
    assert section_screenshots(report, tmp_path / "shots", _chromium()) == shots
    assert not stale.exists()
