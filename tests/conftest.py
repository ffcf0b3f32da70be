"""Shared fixtures: bundled data and one identification of data/example per test session."""

from __future__ import annotations

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
    from sparsefric.identify import SparseFric

    return SparseFric().fit(example["train"], validate=example["validate"])
