"""Screenshots of a report in headless Chromium: one PNG per section, for a human to look at.

``make demo`` writes them into ``screenshots/`` beside the report (``python -m
sparsefric.screenshots REPORT.html``); the render test (``tests/test_report_render.py``) drives
the same browser with the same flags.
The page is laid out at a laptop's width (1280 px). Each section is measured in the whole page,
then shown alone in a copy of the page (the others hidden by a style rule) in a window of its
height, so a screenshot holds one whole section.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from sparsefric.atomic import atomic_path

#: Headless, offline, no profile state: the report needs no network and must not fetch any.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--hide-scrollbars"]
#: Page width [px] of the layout checks and the screenshots.
WIDTH = 1280
#: Tallest screenshot [px]; a longer section is cut there.
MAX_HEIGHT = 16000
#: Where Chromium is looked for, in order; ``.ci/install-chromium.sh`` installs Debian's.
CANDIDATES = ("chromium", "chromium-browser", "/usr/bin/chromium")

#: Sections as block formatting contexts, so that their children's margins count in their height.
CONTAIN = "<style>body > section { display: flow-root; }</style>"
SECTION_PROBE = CONTAIN + """<script>
window.addEventListener("load", () => {
  const out = {};
  for (const s of document.querySelectorAll("body > section[id]")) {
    out[s.id] = s.getBoundingClientRect().height;
  }
  const pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def find_chromium() -> str | None:
    """Path of an executable Chromium, or None."""
    for name in CANDIDATES:
        found = shutil.which(name)
        if found and os.access(found, os.X_OK):
            return found
    return None


def run_chromium(chromium: str, args: list[str], profile: Path) -> subprocess.CompletedProcess:
    """Run headless ``chromium`` with :data:`FLAGS` and ``args`` in a throw-away ``profile``."""
    return subprocess.run([chromium, *FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=120, check=True)


def probe(chromium: str, page: str, script: str, work: Path, height: int = 2400) -> dict:
    """Run ``script`` (a ``<script>`` that writes JSON into ``<pre id="probe">``) in a copy of
    ``page`` laid out at :data:`WIDTH` and return what it wrote."""
    probed = work / "probed.html"
    probed.write_text(page.replace("</body>", script + "</body>"), encoding="utf-8")
    dom = run_chromium(chromium, ["--dump-dom", "--virtual-time-budget=5000",
                                  f"--window-size={WIDTH},{height}", probed.as_uri()],
                       work / "profile").stdout
    found = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
    if not found:
        raise RuntimeError("the probe script did not run in Chromium")
    return json.loads(found[1].replace("&quot;", '"').replace("&amp;", "&"))


def _alone(page: str, section: str) -> str:
    """``page`` with every top-level element but ``section`` hidden."""
    rule = CONTAIN + f"<style>body > :not(#{section}) {{ display: none !important; }}</style>"
    return page.replace("</head>", rule + "</head>", 1)


def section_screenshots(report: Path, out_dir: Path, chromium: str) -> list[Path]:
    """One PNG per section of ``report`` (``<stem>-<nn>-<section id>.png``) in ``out_dir``,
    :data:`WIDTH` px wide and as tall as the section; returns the files written. Screenshots
    of sections the report no longer has are removed."""
    page = report.read_text(encoding="utf-8")
    written = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        heights = probe(chromium, page, SECTION_PROBE, work)
        for number, (section, height) in enumerate(heights.items(), start=1):
            alone = work / f"{section}.html"
            alone.write_text(_alone(page, section), encoding="utf-8")
            size = min(MAX_HEIGHT, math.ceil(height) + 24)
            shot = work / f"{section}.png"
            run_chromium(chromium, [f"--screenshot={shot}", f"--window-size={WIDTH},{size}",
                                    alone.as_uri()], work / "profile")
            target = out_dir / f"{report.stem}-{number:02d}-{section}.png"
            with atomic_path(target) as part:
                shutil.copyfile(shot, part)
            written.append(target)
    for old in out_dir.glob(f"{report.stem}-[0-9][0-9]-*.png"):
        if old not in written:  # a section an earlier report had
            old.unlink()
    return written


def main(argv: list[str] | None = None) -> int:
    """``python -m sparsefric.screenshots REPORT.html [--out DIR]``: exit 0 with a message and
    nothing written when Chromium is missing."""
    parser = argparse.ArgumentParser(
        prog="python -m sparsefric.screenshots", allow_abbrev=False,
        description="Write a PNG of each section of a sparsefric report (headless Chromium, "
                    f"{WIDTH} px wide).",
        epilog="example: python -m sparsefric.screenshots results/example/report.html")
    parser.add_argument("report", type=Path, help="report.html written by sparsefric")
    parser.add_argument("--out", type=Path, default=None,
                        help="folder of the PNG files (default: screenshots/ beside the report)")
    args = parser.parse_args(argv)
    if not args.report.is_file():
        print(f"error: {args.report}: no such report", file=sys.stderr)
        return 2
    chromium = find_chromium()
    if chromium is None:
        print("screenshots skipped: chromium is not installed (.ci/install-chromium.sh "
              "installs it)", file=sys.stderr)
        return 0
    out = args.out or args.report.parent / "screenshots"
    try:
        written = section_screenshots(args.report, out, chromium)
    except (subprocess.SubprocessError, RuntimeError) as exc:
        print(f"error: {args.report}: chromium failed ({str(exc).splitlines()[0]})",
              file=sys.stderr)
        return 1
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
