"""Atomic output: stale staging folders of dead runs are removed, earlier results are kept."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from sparsefric.atomic import STALE_AGE_S, refuse_results, remove_stale_stages, staged
from sparsefric.errors import OptionError
from sparsefric.options import as_flags


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _stage(parent, name: str):
    path = parent / name
    (path / "sub").mkdir(parents=True)
    (path / "sub" / "half.csv").write_text("t,q\n")
    return path


def test_the_next_run_removes_staging_folders_of_dead_runs(tmp_path):
    from sparsefric.atomic import _host

    dead = _stage(tmp_path, f".out.staging-{_host()}-{_dead_pid()}-abc123_x")
    alive = _stage(tmp_path, f".out.staging-{_host()}-{os.getpid()}-def456")
    other_out = _stage(tmp_path, f".other.staging-{_host()}-{_dead_pid()}-ghi789")
    staged(tmp_path / "out", lambda stage: (stage / "model.json").write_text("{}"))
    assert (tmp_path / "out" / "model.json").exists()
    assert not dead.exists() and alive.exists() and other_out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["out", alive.name, other_out.name])


def test_staging_folders_without_a_live_process_on_this_host_are_removed_when_old(tmp_path):
    old = _stage(tmp_path, ".out.staging-k2j4_x9")  # an older version's name: no host, no pid
    foreign = _stage(tmp_path, ".out.staging-elsewhere-12-k2j4_x9")
    young = _stage(tmp_path, ".out.staging-elsewhere-13-abcdef")
    past = time.time() - STALE_AGE_S - 60
    for path in (old, foreign):
        os.utime(path, (past, past))
    assert sorted(remove_stale_stages(tmp_path / "out")) == sorted([old, foreign])
    assert young.exists()


def test_an_interrupted_run_removes_its_own_staging_folder(tmp_path):
    def work(stage):
        (stage / "model.json").write_text("{}")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        staged(tmp_path / "out", work)
    assert list(tmp_path.iterdir()) == []


def test_results_of_an_earlier_run_are_refused_without_force(tmp_path):
    out = tmp_path / "out"
    refuse_results(out, ("model.json",), force=False)  # absent: fine
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    refuse_results(out, ("model.json",), force=False)  # a folder without results: fine
    (out / "model.json").write_text("{}")
    with pytest.raises(OptionError) as info:
        refuse_results(out, ("report.html", "model.json"), force=False)
    message = as_flags(f"--{info.value.parameter} {info.value.problem}")
    assert "model.json" in message and "--force" in message and "\n" not in message
    refuse_results(out, ("model.json",), force=True)
