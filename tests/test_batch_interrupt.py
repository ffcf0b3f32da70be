"""``sparsefric batch`` under Ctrl-C: the workers ignore SIGINT and are stopped by the batch,
which then says which joints were finished and which were not."""

from __future__ import annotations

import multiprocessing
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import sparsefric.batch as batch_module
from sparsefric.batch import JointResult, JointSpec, run_batch_specs


def _mark(out: str, joint: str, what: str) -> Path:
    path = Path(out) / f"{joint}.{what}"
    path.write_text(f"{os.getpid()} {time.time()}")
    return path


def joint_of_a_second(spec: JointSpec, out: str) -> JointResult:
    """Stands for an identification in a worker process: about a second of work."""
    _mark(out, spec.joint, "started")
    time.sleep(1.0)
    _mark(out, spec.joint, "done")
    return JointResult(spec.joint, "ok", seconds=1.0)


def joint_at_once_or_late(spec: JointSpec, out: str) -> JointResult:
    """Joint ``quick`` returns at once; any other writes its marker only after 4 s."""
    _mark(out, spec.joint, "started")
    if spec.joint != "quick":
        time.sleep(4.0)
        _mark(out, spec.joint, "done")
    return JointResult(spec.joint, "ok")


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _keep_interrupting(stop: threading.Event, sent: list[int]) -> None:
    """SIGINT to every worker process, from its start on (as Ctrl-C does to the group)."""
    while not stop.is_set():
        try:
            children = multiprocessing.active_children()
        except RuntimeError:  # the set of children changed meanwhile
            continue
        for proc in children:
            if proc.pid is not None:
                os.kill(proc.pid, signal.SIGINT)
                sent.append(proc.pid)
        time.sleep(0.01)


@pytest.mark.slow  # starts worker processes
def test_workers_ignore_ctrl_c_from_their_start(tmp_path, monkeypatch, capfd):
    monkeypatch.setattr(batch_module, "identify_joint", joint_of_a_second)
    stop, sent, results = threading.Event(), [], []
    killer = threading.Thread(target=_keep_interrupting, args=(stop, sent))
    killer.start()
    try:
        batch_module._run_local([JointSpec(j, ()) for j in ("a", "b")], str(tmp_path), 2,
                                results.append)
    finally:
        stop.set()
        killer.join()
    assert sorted((r.joint, r.status) for r in results) == [("a", "ok"), ("b", "ok")]
    err = capfd.readouterr().err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert len(set(sent)) == 2  # both workers got SIGINT, during their imports and fits


@pytest.mark.slow  # starts worker processes
def test_ctrl_c_stops_the_workers_at_once(tmp_path, monkeypatch, capfd):
    """The parent interrupted when the first joint is back: the running joints are stopped
    and the waiting one never starts, so nothing is written after the interrupt."""
    monkeypatch.setattr(batch_module, "identify_joint", joint_at_once_or_late)
    host = re.sub(r"[^A-Za-z0-9_.]", "_", socket.gethostname())
    stage = tmp_path / f".slow.staging-{host}-{_dead_pid()}-x"
    stage.mkdir()  # stand-in of the staging folder of a stopped worker

    def report(res: JointResult) -> None:
        raise KeyboardInterrupt

    specs = [JointSpec(j, ()) for j in ("quick", "slow", "waiting", "last")]
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        batch_module._run_local(specs, str(tmp_path), 2, report)
    stopped = time.monotonic()
    started = sorted(p.name for p in tmp_path.glob("*.started"))
    assert "quick.started" in started and "last.started" not in started
    time.sleep(max(0.0, 5.0 - (stopped - start)))  # past the 4 s of any joint started
    assert not list(tmp_path.glob("*.done"))
    assert multiprocessing.active_children() == []
    assert "Traceback" not in capfd.readouterr().err
    assert not stage.exists()


def test_an_interrupted_batch_says_what_it_finished(tmp_path, monkeypatch):
    out = tmp_path / "out"
    (out / "old").mkdir(parents=True)
    (out / "old" / "model.json").write_text("{}")  # an earlier run's, redone with force

    def fake_run(specs, out_dir, workers, report):
        report(JointResult("a", "ok"))
        report(JointResult("b", "failed", "no column 'tau'"))
        (out / "c").mkdir()
        (out / "c" / "model.json").write_text("{}")  # published, not yet reported
        raise KeyboardInterrupt

    monkeypatch.setattr(batch_module, "_run_local", fake_run)
    specs = [JointSpec(j, ()) for j in ("a", "b", "c", "d", "old")]
    with pytest.raises(KeyboardInterrupt) as info:
        run_batch_specs(specs, out, workers=2, force=True, progress=False)
    assert info.value.__notes__ == [
        f"2 joints finished and were kept in {out} (a, c); 1 failed (b); 2 not finished "
        "(d, old): a rerun does them; summary not written"]
    assert not (out / "summary.csv").exists()
