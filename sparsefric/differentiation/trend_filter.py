"""ℓ1 trend filtering by a primal-dual interior-point method with banded Newton solves.

Problem (order ``m`` = number of differences penalised, all quantities per sample)::

    x̂ = argmin_x  ½‖y − x‖₂² + λ‖D⁽ᵐ⁾x‖₁                                     (1)

``D⁽ᵐ⁾`` is the (n−m)×n forward-difference matrix of order m, so ``(D⁽ᵐ⁾x)_i`` has the
units of ``y`` and so has λ.  m = 3 makes x̂ piecewise quadratic: its second difference
(the acceleration) is piecewise constant, i.e. (1) is total-variation regularisation of the
acceleration written on the signal rather than on its derivative.

Solver: the dual of (1) (Kim, Koh, Boyd & Gorinevsky, SIAM Review 51(2), 2009) is the box-
constrained QP ::

    min_ν ½νᵀDDᵀν − yᵀDᵀν   s.t.  −λ ≤ ν ≤ λ,      x̂ = y − Dᵀν,               (2)

solved by a primal-dual interior-point method.  Each Newton step is one symmetric positive-
definite solve with ``DDᵀ + diag(·)`` which has m sub-diagonals: O(n·m²) with a banded LDLᵀ
factorisation, memory O(n·m).  The iterations are compiled with numba in :mod:`._ipm` (fused
loops, O(n) per Newton step).
Convergence is certified by the duality gap: the primal objective is 1-strongly convex, so
``‖x − x*‖₂² ≤ 2·gap``.  Typical runs need 20–40 Newton steps, independently of n.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb

import numpy as np

from sparsefric.differentiation import _ipm

__all__ = ["TrendFilterResult", "diff_op", "diff_adjoint", "noise_std", "trend_filter"]


@dataclass(frozen=True)
class TrendFilterResult:
    """Solution of (1): fitted signal ``x``, dual ``nu``, diagnostics."""

    x: np.ndarray
    nu: np.ndarray
    gap: float
    iterations: int
    converged: bool
    n_knots: int


def diff_op(x: np.ndarray, m: int) -> np.ndarray:
    """``D⁽ᵐ⁾x``: m-th forward difference, length n − m (units of x, not divided by hᵐ)."""
    return np.diff(x, m)


def diff_adjoint(z: np.ndarray, m: int) -> np.ndarray:
    """``D⁽ᵐ⁾ᵀz``: adjoint of :func:`diff_op`, length len(z) + m."""
    out = np.diff(np.pad(z, (m, m)), m)
    return -out if m % 2 else out


# Gaussian correction of the trimmed mean square: E[z² | |z| < c] with P(|z| < c) = 1 − _TRIM.
_TRIM = 0.1
# c = Φ⁻¹(1 − _TRIM/2), scipy.special.ndtri(0.95) to the last bit (a test checks it). Written out
# because importing scipy.special costs `predict` ~0.15 s, and the standard library's
# NormalDist().inv_cdf differs in the last digit, which moves single zoo fits (DESIGN.md).
_C = 1.6448536269514722
_TRIM_FACTOR = 1.0 - 2.0 * _C * float(np.exp(-0.5 * _C**2) / np.sqrt(2.0 * np.pi)) / (1.0 - _TRIM)


def noise_std(y: np.ndarray, m: int = 4) -> float:
    """Robust standard deviation of the white noise in ``y`` from its m-th differences.

    For a white noise of variance σ², ``Var(D⁽ᵐ⁾e) = C(2m, m)·σ²``.  The smooth part of a densely
    sampled signal hardly contributes to ``D⁽ᵐ⁾y`` except at a few kinks, so ::

        σ̂² = mean of the smallest 90 % of (D⁽ᵐ⁾y)²  /  (C(2m, m) · 0.6232)

    (0.6232 = E[z² | |z| < 1.645] for z ~ N(0, 1); the 10 % trimmed are the kinks).  A trimmed
    mean square rather than a median, because the median of quantised data (encoder counts
    coarser than the noise) is 0 on long stretches.  Units of ``y``.
    """
    d = np.diff(np.asarray(y, dtype=float), m)
    if d.size == 0:
        return 0.0
    d2 = np.sort(d * d)
    keep = d2[: max(1, int(np.ceil((1.0 - _TRIM) * d2.size)))]
    return float(np.sqrt(np.mean(keep) / (comb(2 * m, m) * _TRIM_FACTOR)))


#: A value is on the lattice when it lies within this fraction of a step of a lattice point.
LATTICE_TOLERANCE = 0.05
#: Share of the gaps between distinct values that must be whole numbers of steps.
LATTICE_SHARE = 0.95
#: The smallest gap between distinct values may span this many steps at most (a record that
#: never dwells on neighbouring counts).
LATTICE_MAX_MULTIPLE = 20
#: Fewest gaps between distinct values from which a lattice is read …
LATTICE_MIN_GAPS = 10
#: … unless the record repeats its values: at most this share of its samples distinct. A slow
#: move on a coarse encoder visits a handful of counts, each for hundreds of samples (a zoo
#: record at 0.0096 rad/s on a 12-bit encoder logged at 4 kHz: 6 values in 10,201 samples).
#: Continuous values are nearly all distinct; a record that holds a few values for many
#: samples each is a staircase however its levels arose, and the rounding of its steps is a
#: floor the trend filter should not smooth below.
LATTICE_REPEATS = 0.01
#: Gaps below this fraction of max|y| are differences of representation (a value printed with
#: 9 digits, a turn added by unwrapping), not of position.
_REPRESENTATION = 1e-8


def _lattice_gaps(y: np.ndarray) -> np.ndarray:
    """Gaps [units of y] between the distinct values of ``y``, representation noise left out."""
    u = np.unique(y)
    gaps = np.diff(u)
    return gaps[gaps > _REPRESENTATION * float(np.max(np.abs(u), initial=0.0))]


def _whole_steps(gaps: np.ndarray, step: float) -> np.ndarray:
    """Which gaps are whole numbers of ``step`` (within :data:`LATTICE_TOLERANCE` of a step)."""
    k = gaps / step
    return (np.abs(k - np.round(k)) < LATTICE_TOLERANCE) & (np.round(k) >= 1)


def _refine_step(gaps: np.ndarray, step: float, rounds: int = 3) -> float:
    """Δ = Σ gaps / Σ counts over the gaps that are whole numbers of steps, repeated: the
    spread of the gaps measures Δ far more precisely than the smallest gap alone (a 20-bit step
    read from 9-digit values is off by 2e-4 of itself, 4 steps over 1 rad)."""
    for _ in range(rounds):
        ok = _whole_steps(gaps, step)
        if not ok.any():
            break
        step = float(np.sum(gaps[ok]) / np.sum(np.round(gaps[ok] / step)))
    return step


def _approximate_gcd(values: np.ndarray, tol: float) -> float:
    """Greatest common divisor of ``values`` by Euclid's algorithm, remainders within ``tol``
    of 0 or of the divisor counted as 0 (units of the values)."""
    out = float(values[0])
    for v in values[1:]:
        a, b = max(out, float(v)), min(out, float(v))
        while b > tol:
            r = a % b
            a, b = b, (0.0 if r < tol or b - r < tol else r)
        out = a
    return out


def _candidates(gaps: np.ndarray, floor: float) -> list[float]:
    """Steps to try, largest first: the smallest gap c (clustered within the tolerance) divided
    by 1 … :data:`LATTICE_MAX_MULTIPLE`, then the approximate gcd of the ten smallest gaps (a
    record that never visits neighbouring counts: gaps of 1857 and 1858 counts)."""
    smallest = float(np.min(gaps))
    c = float(np.median(gaps[gaps <= smallest * (1.0 + LATTICE_TOLERANCE)]))
    return [c / k for k in range(1, LATTICE_MAX_MULTIPLE + 1)] + \
        [_approximate_gcd(np.sort(gaps)[:10], 0.1 * floor)]


def quantisation_step(y: np.ndarray) -> float:
    """The step Δ of a signal that takes values on a lattice (encoder counts), else 0.

    The gaps g_j between the distinct values of ``y`` are whole multiples of Δ. The smallest gap
    (the median of the gaps within :data:`LATTICE_TOLERANCE` of it) is a candidate c; for
    k = 1, 2, … :data:`LATTICE_MAX_MULTIPLE`, then for the approximate gcd of the ten smallest
    gaps, Δ = c/k is refined to Σg/Σ round(g/Δ) and accepted when at least
    :data:`LATTICE_SHARE` of the gaps are whole numbers of it. The first (largest) Δ that passes
    is returned. It needs :data:`LATTICE_MIN_GAPS` gaps, or two where the record repeats its
    values (:data:`LATTICE_REPEATS`). It does not need the signal to rest on a count: an
    encoder that advances thousands of counts per sample is found too. Continuous values fail,
    since their gaps are whole multiples of a small c only by chance (2 × 5 % of them). Units
    of ``y``.
    """
    y = np.asarray(y, dtype=float)
    gaps = _lattice_gaps(y)
    repeats = 2 <= gaps.size < LATTICE_REPEATS * y.size
    if gaps.size < LATTICE_MIN_GAPS and not repeats:
        return 0.0
    floor = _REPRESENTATION * float(np.max(np.abs(y)))
    for candidate in _candidates(gaps, floor):
        if candidate <= floor:
            continue
        step = _refine_step(gaps, candidate)
        if np.mean(_whole_steps(gaps, step)) >= LATTICE_SHARE:
            return step
    return 0.0


#: Samples per block of :func:`regime_noise_std`.
NOISE_BLOCK = 1000
#: Ratio of the upper-quartile block estimate to the whole-record one beyond which the noise
#: level is taken to change along the record. Below it λ = κσ̂ moves by much less than one step
#: of the half-decade κ grid (×3.2), and the whole-record estimate is kept.
NOISE_CHANGE_RATIO = 1.3


def regime_noise_std(y: np.ndarray, m: int = 4) -> float:
    """:func:`noise_std` of the record, or of its noisier part if the noise level changes.

    The trimmed estimate of the whole record mixes regimes: where a recording rests for long
    stretches, quieter than in motion, it underestimates the moving noise, the SURE rule then
    chooses a far smaller κ and the barely smoothed q̈ attenuates the inertia (``DESIGN.md``
    §17). The record is cut into blocks of :data:`NOISE_BLOCK` samples; when the upper quartile
    of their estimates exceeds the whole-record one by :data:`NOISE_CHANGE_RATIO`, it is used
    instead (smoothing for the noisier regime; too much smoothing costs far less than too
    little). On a record with uniform noise the two agree and nothing changes.
    """
    overall = noise_std(y, m)
    n = y.size // NOISE_BLOCK
    if n < 4:
        return overall
    blocks = [noise_std(y[i * NOISE_BLOCK:(i + 1) * NOISE_BLOCK], m) for i in range(n)]
    upper = float(np.quantile(blocks, 0.75))
    return upper if upper > NOISE_CHANGE_RATIO * overall else overall


def measurement_noise_std(y: np.ndarray, m: int = 4) -> float:
    """:func:`regime_noise_std`; on a lattice of step Δ whose rounding Δ/√12 exceeds
    :func:`noise_std`, Δ/√12.

    Slow moves on a coarse encoder stay on one count for many samples: their differences are
    mostly 0, and the trimmed mean square sees less noise than the rounding adds. The smaller
    estimate lets the trend filter follow every count (``DESIGN.md`` §18). Where the rounding
    dominates, it is the known floor and the blocks are not compared: at the slow speeds of some
    blocks successive rounding errors are correlated and their estimates scatter around Δ/√12.
    Where the noise exceeds the rounding, the lattice does not matter (``DESIGN.md`` §23).
    """
    step = quantisation_step(y)
    if step > 0 and noise_std(y, m) <= step / np.sqrt(12.0):
        return step / np.sqrt(12.0)
    return regime_noise_std(y, m)


def rounding_dominated(y: np.ndarray, m: int = 4) -> bool:
    """Whether ``y`` lies on a lattice of step Δ whose rounding error Δ/√12 is at least the
    noise :func:`noise_std` sees: a staircase, whose error is not white."""
    step = quantisation_step(y)
    return step > 0 and noise_std(y, m) <= step / np.sqrt(12.0)


def trend_filter(
    y: np.ndarray,
    lam: float,
    m: int = 3,
    *,
    gap_tol: float | None = None,
    max_iter: int = 100,
) -> TrendFilterResult:
    """Solve the ℓ1 trend-filtering problem (1) by a primal-dual interior-point method.

    Parameters
    ----------
    y : ndarray, shape (n,)
        Samples (any unit; best pre-scaled so that the noise is O(1)).
    lam : float
        λ ≥ 0 in (1), units of ``y``.
    m : int
        Order of the difference penalised (1: piecewise constant, 2: piecewise linear,
        3: piecewise quadratic fit).
    gap_tol : float, optional
        Stop when the duality gap ≤ gap_tol; then ``‖x − x*‖₂ ≤ √(2·gap_tol)``.  Default
        ``1e-8·n·σ̂²`` with σ̂ = :func:`noise_std` (y), i.e. an RMS distance to the exact
        minimiser below 1.5e-4 of the noise.
    max_iter : int
        Newton steps at most.

    Returns
    -------
    TrendFilterResult
        ``x`` the fit, ``nu`` the dual variable (|ν_i| = λ at the knots), the final gap.
    """
    y = np.ascontiguousarray(y, dtype=float)
    lam = float(lam)
    n = y.size
    if n <= m or lam <= 0.0:
        # No m-th difference to penalise, or no regularisation: the fit is the data.
        return TrendFilterResult(y.copy(), np.zeros(max(n - m, 0)), 0.0, 0, True, 0)
    if gap_tol is None:
        sig = noise_std(y, min(m + 1, 4)) or float(np.std(y)) or 1.0
        gap_tol = 1e-8 * n * sig**2
    c = _ipm.diff_coeffs(m)
    z, gap, it, status = _ipm.pdip(y, lam, c, _ipm.ddt_band(m), float(gap_tol), int(max_iter))
    x = y - _ipm.adjoint(z, c)
    n_knots = int(np.count_nonzero(np.abs(z) > lam * (1.0 - 1e-4)))
    return TrendFilterResult(x, z, float(gap), int(it), status == _ipm.CONVERGED, n_knots)
