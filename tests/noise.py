"""Correlated noise for tests of standard errors and intervals."""

from __future__ import annotations

import numpy as np


def ar1(rng: np.random.Generator, n: int, rho: float, sd: float) -> np.ndarray:
    """AR(1) noise of stationary standard deviation ``sd``."""
    e = rng.normal(0.0, sd * np.sqrt(1 - rho**2), n)
    out = np.empty(n)
    out[0] = rng.normal(0.0, sd)
    for i in range(1, n):
        out[i] = rho * out[i - 1] + e[i]
    return out
