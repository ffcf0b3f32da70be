"""report.html renders in headless Chromium: every figure is an embedded PNG and the page is not
blank. Skipped only when Chromium is absent outside CI (``.ci/install-chromium.sh`` installs it)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from sparsefric.identify import SparseFric
from sparsefric.report import write_report

pytestmark = pytest.mark.slow  # whole identifications

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--hide-scrollbars"]
WIDTH, HEIGHT = 1200, 2400


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
    """report.html of a light fit on short pieces of data/example."""
    train = [t.with_(t=t.t[:4000], q=t.q[:4000], tau=t.tau[:4000], truth={})
             for t in example["train"]]
    est = SparseFric(sigma0_starts=(1e4,), omega_starts=(0.05,),
                     thresholds=np.geomspace(0.1, 20, 6)).fit(train)
    out = tmp_path_factory.mktemp("report")
    write_report(est.result_, out, train, test=[example["test"][0]])
    return out / "report.html"


def test_dom_has_every_figure_as_an_embedded_png(report, tmp_path):
    dom = _run(["--dump-dom", report.as_uri()], tmp_path).stdout
    assert "<h1>" in dom and "Parameters" in dom
    imgs = re.findall(r"<img\b[^>]*>", dom)
    embedded = [i for i in imgs if 'src="data:image/png;base64,' in i]
    assert len(imgs) >= 6 and len(embedded) == len(imgs)


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
