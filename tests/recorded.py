"""A recorded velocity for sample-by-sample tests: data/example's slow training move, q̇ by
Butterworth differentiation of the measured angle, repeated to the length asked for."""

from __future__ import annotations

import functools

import numpy as np

from sparsefric.data import load_trajectories
from sparsefric.differentiation import differentiate

from .conftest import EXAMPLE

#: Sample period [s] of data/example.
DT = 1e-3


@functools.cache
def _velocity() -> np.ndarray:
    tr = load_trajectories(EXAMPLE / "train_v0p127.csv")[0]
    return differentiate(tr.t, tr.q, tr.tau, method="butterworth").qd


def recorded_velocity(n: int) -> np.ndarray:
    """n samples [rad/s] of the recorded velocity (the record repeated end to end)."""
    return np.resize(_velocity(), n)
