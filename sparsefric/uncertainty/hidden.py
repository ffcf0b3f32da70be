r"""The largest Stribeck rise below the slowest steady speed that the records leave possible.

An extrapolated break-away (:func:`~sparsefric.steps.checks.reach`) was open above
(``DESIGN.md`` §63): no record slides steadily where the rise would be, and a rise there can
be any height as far as the steady levels tell. The starts and stops pass through those
speeds, though, and a rise there changes the torque of the transients. A rise

.. math:: \Delta g(\dot q) = A\, e^{-|\dot q/\Omega|^\delta}

added to the model's g(q̇) [N·m], the model's own parameters free (linearised: the residual
projected off the columns of the torque Jacobian J), is ruled out where

.. math:: \frac{S(A) - S(0)}{\sigma^2_{\rm eff}} > c^2, \qquad
          S(A) = \lVert (I - P_J)(r - \Delta\hat\tau(A)) \rVert^2,

r the model's residual [N·m], Δτ̂(A) what the rise changes in the simulated torque (z
integrated again along every record with g + Δg), σ²_eff = S(0)/n · τ_r with τ_r the
residuals' integrated correlation time (:func:`~sparsefric.hac.correlation_time`: they are not
independent samples) and c the intervals' critical value. The lower Ω, the shorter the
transients stay below it and the larger a rise must be to be seen; at Ω → 0 none is. Below
one position-noise step per sample, σ̂√12/h [rad/s], the angle does not resolve the speed at
all: the bound is taken at that Stribeck velocity (where a rise needs to be largest to be seen;
on the zoo joints it grew monotonically as Ω fell), over the knee shapes δ ∈
:data:`EXPONENTS`, and it exists only where that velocity is below half the slowest steady
speed. A rise with its knee below the resolution is not bounded by it: that is the assumption
the finite end rests on, and the ``extrapolated`` warning still names the extrapolation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from sparsefric.hac import correlation_time
from sparsefric.lugre import integrate_z, sign_function, stribeck_g
from sparsefric.model import JointModel
from sparsefric.optimizers.sr3 import data_theta_bounds
from sparsefric.preprocessing import Prepared
from sparsefric.steps import checks
from sparsefric.threads import in_parallel
from sparsefric.uncertainty.jacobian import Records

__all__ = ["EXPONENTS", "hidden_rise_bound", "resolved_speed"]

#: Knee shapes δ of the hidden rise: the steeper the knee, the less of it reaches the speeds
#: the transients pass at (with the knee that low, δ 0.5 was seen at a smaller A than δ 1 on
#: every zoo joint tried).
EXPONENTS = (1.0, 2.0, 4.0)
#: Amplitudes tried, as multiples of g(0): 2^k for k from the first to the last.
DOUBLINGS = (-6, 12)
#: Bisection steps between the last amplitude not ruled out and the first ruled out.
BISECTIONS = 4


def resolved_speed(data: Sequence[Prepared], rec: Records) -> float:
    """The slowest Stribeck velocity [rad/s | m/s] the angle resolves: one position-noise step
    per sample, σ̂√12/h (σ̂ the median noise of the first set's records, h the median sample
    period), and no lower than the data's bound on Ω_s
    (:func:`~sparsefric.optimizers.sr3.data_theta_bounds`)."""
    noise = checks.median_position_noise(data[0])
    floor = math.exp(data_theta_bounds(rec.qd)[0])
    return max(floor, noise * math.sqrt(12.0) / float(np.median(rec.dt)))


class _Rise:
    """Δτ̂ [N·m] along ``rec`` of a rise added to ``model``'s g(q̇); the model's own friction
    integrated once, for every shape and amplitude tried."""

    def __init__(self, model: JointModel, rec: Records):
        self.model, self.rec = model, rec
        p = model.friction
        if model.kind == "lugre":
            self.g = stribeck_g(rec.qd, p)
            self.before = self._friction(self.g)
        else:
            self.sign = sign_function(rec.qd, p.tanh_k)

    def _friction(self, g: np.ndarray) -> np.ndarray:
        """σ0 z + σ1 ż [N·m] along every record with g(q̇) = ``g``."""
        p, out = self.model.friction, []
        for (a, b), h in zip(self.rec.bounds, self.rec.dt, strict=True):
            z, zd = integrate_z(self.rec.qd[a:b], h, p, g=g[a:b])
            out.append(p.sigma0 * z + p.sigma1 * zd)
        return np.concatenate(out)

    def shape(self, omega: float, delta: float) -> np.ndarray:
        """e^(−|q̇/Ω|^δ) at the samples, Ω = ``omega`` [rad/s | m/s]."""
        return np.exp(-np.abs(self.rec.qd / omega) ** delta)

    def __call__(self, shape: np.ndarray, amplitude: float) -> np.ndarray:
        """Δτ̂ of the rise ``amplitude`` × ``shape`` [N·m]."""
        if self.model.kind != "lugre":
            return self.rec.average(amplitude * shape * self.sign)
        return self.rec.average(self._friction(self.g + amplitude * shape) - self.before)


def _projector(J: np.ndarray) -> np.ndarray:
    """Orthonormal basis [n × rank] of the columns of ``J`` (unit-scaled, singular values
    below 1e-10 of the largest dropped)."""
    norms = np.linalg.norm(J, axis=0)
    norms[norms == 0] = 1.0
    U, s, _ = np.linalg.svd(J / norms, full_matrices=False)
    return U[:, s > 1e-10 * s.max(initial=0.0)]


def _largest_unseen(rise: Callable[[float], np.ndarray],
                    excess: Callable[[np.ndarray], float], limit: float, g0: float) -> float:
    """The largest amplitude [N·m] whose ``excess`` stays within ``limit`` (to
    1/2^:data:`BISECTIONS` of the bracket of doublings of ``g0`` where it first exceeds it),
    +∞ where no amplitude of :data:`DOUBLINGS` exceeds it.

    The excess grows with the amplitude, at first as its square: the search starts from the
    doubling that the smallest amplitude's excess extrapolates to and steps down or up from
    there (2–3 steps where a walk from the smallest took 6–12)."""
    first, last = DOUBLINGS
    at_first = excess(rise(g0 * 2.0 ** first))
    if at_first > limit:
        low, high = 0.0, g0 * 2.0 ** first
    else:
        guess = first + 0.5 * math.log2(limit / at_first) if at_first > 0 else last
        k = int(min(max(math.floor(guess), first + 1), last))
        while k > first + 1 and excess(rise(g0 * 2.0 ** k)) > limit:
            k -= 1
        while k <= last and not excess(rise(g0 * 2.0 ** k)) > limit:
            k += 1
        if k > last:
            return math.inf
        low, high = g0 * 2.0 ** (k - 1), g0 * 2.0 ** k
    for _ in range(BISECTIONS):
        mid = 0.5 * (low + high)
        low, high = (low, mid) if excess(rise(mid)) > limit else (mid, high)
    return high


def hidden_rise_bound(model: JointModel, data: Sequence[Prepared], rec: Records,
                      J: np.ndarray, residual: np.ndarray, critical: float,
                      slowest: float) -> float:
    """The largest rise [N·m] below the slowest steady speed ``slowest`` [rad/s | m/s] that the
    records ``rec`` leave possible (see the module doc), the largest over :data:`EXPONENTS`;
    +∞ where the angle resolves no speed below half of ``slowest``
    (:func:`resolved_speed`), where one shape is not ruled out at any amplitude tried, or
    where the residual is not finite.

    ``J`` and ``residual``: the Jacobian of the simulated torque in the model's parameters and
    τ − τ̂ on ``rec`` [N·m]; ``critical``: the intervals' critical value c.
    """
    omega = resolved_speed(data, rec)
    g0 = model.breakaway_torque()
    if not (omega < 0.5 * slowest and g0 > 0 and np.all(np.isfinite(residual))):
        return math.inf
    Q = _projector(J)

    def off(x: np.ndarray) -> float:
        e = x - Q @ (Q.T @ x)
        return float(e @ e)

    base = off(residual)
    scale = base / len(residual) * float(correlation_time(residual))
    if not scale > 0:
        return math.inf

    def excess(change: np.ndarray) -> float:
        """The rise's increase of the projected squared residual [effective variances]."""
        if not np.all(np.isfinite(change)):
            return math.inf
        return (off(residual - change) - base) / scale

    rise = _Rise(model, rec)

    def largest(delta: float) -> float:
        shape = rise.shape(omega, delta)
        return _largest_unseen(lambda a: rise(shape, a), excess, critical ** 2, g0)

    return max(in_parallel(largest, EXPONENTS))
