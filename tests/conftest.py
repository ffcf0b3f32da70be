"""Shared fixtures: bundled data and one identification of data/example per test session."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from sparsefric.data import load_trajectories
from sparsefric.model import JointModel

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "data" / "example"
EMPS = ROOT / "data" / "emps" / "emps_estimation.csv"


def zoo():
    """The joint zoo of ``benchmarks/zoo.py`` (its folder is appended to the path, so that its
    scripts never shadow an installed package)."""
    import importlib
    import sys

    bench = str(ROOT / "benchmarks")
    if bench not in sys.path:
        sys.path.append(bench)
    return importlib.import_module("zoo")


def imported_by(modules: str, watched: tuple[str, ...], then: str = "") -> list[str]:
    """Which of the ``watched`` modules a fresh interpreter has loaded after importing
    ``modules`` (comma-separated) and running the statement ``then``: what a start-up or a
    command costs."""
    code = "; ".join([f"import sys, {modules}", *([then] if then else []),
                      f"print(' '.join(m for m in {watched!r} if m in sys.modules))"])
    done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                          text=True)
    return done.stdout.split()


def example_files(role: str) -> list[Path]:
    """The data/example files of one role (train, validate, test)."""
    return sorted(EXAMPLE.glob(f"{role}_*.csv"))


@pytest.fixture(scope="session")
def truth() -> JointModel:
    return JointModel.load(EXAMPLE / "truth.json")


@pytest.fixture(scope="session")
def example():
    """{"train": [...], "validate": [...], "test": [...]} trajectories of data/example."""
    return {role: load_trajectories(example_files(role))
            for role in ("train", "validate", "test")}


@pytest.fixture(scope="session")
def fitted(example):
    """The full pipeline (steps 0–3, model A) on data/example, fitted once."""
    from sparsefric.estimator import SparseFric

    return SparseFric().fit(example["train"], validate=example["validate"])


@pytest.fixture
def bootstrap_calls(monkeypatch) -> list[dict]:
    """The keyword arguments of every bootstrap the test's fits ask for; each returns the fast
    intervals instead of rerunning the identification."""
    from sparsefric.uncertainty import estimate

    calls: list[dict] = []

    def record(result, train, validate, settings, **options):
        calls.append(options)
        return estimate.estimate_uncertainty(result, train, validate, method="fast")

    monkeypatch.setattr(estimate, "bootstrap_uncertainty", record)
    return calls


#: Speeds [rad/s] of the moves of :func:`one_file`, slowest first.
ONE_FILE_SPEEDS = (0.05, 0.3, 1.2)


@pytest.fixture(scope="session")
def one_file():
    """data/example's joint recorded in one continuous file: a back-and-forth move at each of
    :data:`ONE_FILE_SPEEDS` in turn (each from where the last one stopped), closed loop,
    20-bit encoder, 0.3 N·m torque noise — the single-file use, without jumps."""
    import numpy as np

    from sparsefric.simulate import EXAMPLE_TRUTH, Sensors
    from sparsefric.simulate.excitation import trapezoid_moves
    from sparsefric.simulate.joint import Controller, simulate

    refs, q0 = [], -0.6
    for v in ONE_FILE_SPEEDS:
        _, q, qd, qdd = trapezoid_moves(q0, q0 + 1.0, v, 6.0, 0.3, 1, 1e-3)
        refs.append((q, qd, qdd))
        q0 = float(q[-1])
    q_ref, qd_ref, qdd_ref = (np.concatenate(c) for c in zip(*refs, strict=True))
    feedforward = EXAMPLE_TRUTH.with_(kind="static").rigid_body_torque(q_ref, qdd_ref)
    sensors = Sensors(encoder_resolution=2 * np.pi / 2**20, position_noise=5e-6,
                      torque_noise=0.3, seed=7)
    return simulate(EXAMPLE_TRUTH, tau_ff=feedforward, q_ref=q_ref, qd_ref=qd_ref,
                    controller=Controller(), sensors=sensors, name="one_file")
