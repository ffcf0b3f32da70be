"""The samples the regressions run on: q, q̇, q̈ of all trajectories stacked, with extra signals.

:class:`Signals` is what step 0 (:mod:`sparsefric.preprocessing`) produces and what every
candidate library (:mod:`sparsefric.feature_library`) evaluates. Units: rad, rad/s, rad/s²
(m, m/s, m/s² for a prismatic axis).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

#: Longest record whose |q̇|^δ table :meth:`Signals.speed_powers` keeps.
POWER_TABLE_ROWS = 200_000


@dataclass(frozen=True)
class Signals:
    """The samples a library is evaluated on (training trajectories stacked).

    Attributes
    ----------
    q, qd, qdd : ndarray
        Position [rad], velocity [rad/s], acceleration [rad/s²].
    multiplier : ndarray, optional
        m(t) of the Coulomb/Stribeck columns; default s(q̇) of the library.
    extra : dict
        Other named signals (``zdot`` [rad/s], ``u`` [N·m], ``udot`` [N·m/s]) for LuGre columns.
    """

    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    multiplier: np.ndarray | None = None
    extra: dict[str, np.ndarray] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.qd)

    def take(self, index: np.ndarray | slice) -> Signals:
        """The samples at ``index`` (all signals, multiplier and extras alike)."""
        return Signals(self.q[index], self.qd[index], self.qdd[index],
                       None if self.multiplier is None else self.multiplier[index],
                       {k: v[index] for k, v in self.extra.items()})

    @cached_property
    def cos_q(self) -> np.ndarray:
        """cos q, cached."""
        return np.cos(self.q)

    @cached_property
    def sin_q(self) -> np.ndarray:
        """sin q, cached."""
        return np.sin(self.q)

    def qd_power(self, p: int) -> np.ndarray:
        """q̇^p by repeated multiplication, cached per power."""
        cache = self.__dict__.setdefault("_qd_powers", {1: self.qd})
        if p not in cache:
            cache[p] = self.qd_power(p - 1) * self.qd
        return cache[p]

    @cached_property
    def log_speed(self) -> np.ndarray:
        """ln|q̇| (−690 at rest)."""
        return np.log(np.maximum(np.abs(self.qd), 1e-300))

    def speed_powers(self, deltas: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray]:
        """|q̇|^δ = e^{δ ln|q̇|} [(rad/s)^δ] for each δ of ``deltas``: a table (n, m) and the
        column of each δ in it, shape (len(deltas),).

        The Stribeck columns e^{−|q̇/Ω_s|^δ} are evaluated thousands of times at new Ω_s, and
        |q̇/Ω_s|^δ = |q̇|^δ · Ω_s^{−δ} then costs one multiplication a sample instead of an
        exponential. One table of every δ asked for so far is kept (the libraries of a fit are
        subsets of one grid), on records of at most :data:`POWER_TABLE_ROWS` samples; longer
        ones get the columns asked for, uncached (a table of 15 exponents of 10⁶ samples
        would hold 120 MB).
        """
        if len(self) > POWER_TABLE_ROWS:
            return np.exp(np.multiply.outer(self.log_speed, deltas)), np.arange(len(deltas))
        known, table, columns = self.__dict__.get("_speed_powers",
                                                  ((), np.zeros((len(self), 0)), {}))
        if deltas not in columns:
            if not set(deltas) <= set(known):
                known = tuple(sorted(set(known) | set(deltas)))
                table, columns = np.exp(np.multiply.outer(self.log_speed, known)), {}
                self.__dict__["_speed_powers"] = known, table, columns
            columns[deltas] = np.array([known.index(d) for d in deltas], dtype=np.int64)
        return table, columns[deltas]


def concat_signals(parts: Sequence[Signals]) -> Signals:
    """The samples of several :class:`Signals` one after the other (multipliers and extras
    too, where every part has them)."""
    cat = np.concatenate
    multiplier = None if any(p.multiplier is None for p in parts) else \
        cat([p.multiplier for p in parts])
    keys = set.intersection(*(set(p.extra) for p in parts)) if parts else set()
    return Signals(cat([p.q for p in parts]), cat([p.qd for p in parts]),
                   cat([p.qdd for p in parts]), multiplier,
                   {k: cat([p.extra[k] for p in parts]) for k in sorted(keys)})
