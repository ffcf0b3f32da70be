"""Interrupted runs leave nothing behind; identical inputs give identical model files."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import time

import pytest

from sparsefric.cli import main

from .conftest import example_files

pytestmark = pytest.mark.slow  # whole identifications

FAST = ["--sigma0-starts", "1e4", "--omega-starts", "0.05"]


def _model_without_stamp(path) -> dict:
    data = json.loads(path.read_text())
    data.pop("created")
    return data


def test_same_input_gives_byte_identical_model_apart_from_timestamp(tmp_path):
    train = [str(p) for p in example_files("train")]
    for run in ("a", "b"):
        assert main(["identify", *train, *FAST, "--quiet", "--out", str(tmp_path / run)]) == 0
    a, b = (_model_without_stamp(tmp_path / r / "model.json") for r in ("a", "b"))
    assert a == b
    text = {r: (tmp_path / r / "model.json").read_text().splitlines() for r in ("a", "b")}
    differing = [x for x, y in zip(text["a"], text["b"], strict=True) if x != y]
    assert all('"created"' in line for line in differing)


def _read_until(fd: int, word: bytes | None, timeout: float) -> bytes:
    """What the terminal ``fd`` receives until ``word`` appears (None: until it closes) or
    ``timeout`` [s] passes."""
    out, end = b"", time.monotonic() + timeout
    while (word is None or word not in out) and time.monotonic() < end:
        if select.select([fd], [], [], 0.5)[0]:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # EIO: the child closed its end
                break
            if not chunk:
                break
            out += chunk
    return out


@pytest.mark.parametrize("sig, status, word", [(signal.SIGINT, 130, "interrupted"),
                                               (signal.SIGTERM, 143, "terminated")])
def test_a_signal_during_identify_leaves_no_partial_output(tmp_path, sig, status, word):
    """The signal arrives inside the fit, where its progress bar shows the LuGre iterations:
    stderr is a terminal, so the bar is drawn (a fixed wait landed before the fit on a slow
    machine and after it on a fast one)."""
    out = tmp_path / "out"
    terminal, child_end = pty.openpty()
    # a terminal of 24 × 120 characters: tqdm draws nothing on one of width 0
    fcntl.ioctl(child_end, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "sparsefric.cli", "identify",
         *map(str, example_files("train")), "--validate", *map(str, example_files("validate")),
         "--out", str(out)],
        stdout=subprocess.PIPE, stderr=child_end)
    os.close(child_end)
    try:
        seen = _read_until(terminal, b"LuGre", timeout=120)
        assert b"LuGre" in seen and proc.poll() is None, seen.decode(errors="replace")
        proc.send_signal(sig)
        err = (seen + _read_until(terminal, None, timeout=120)).decode(errors="replace")
        proc.wait(timeout=120)
    finally:
        os.close(terminal)
    assert proc.returncode == status, err
    assert word in err and "Traceback" not in err
    assert not (out / "model.json").exists() and not (out / "report.html").exists()
    assert not list(tmp_path.glob(".out.staging-*"))
