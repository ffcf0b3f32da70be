r"""Autocorrelation-consistent (HAC) standard errors of least-squares coefficients.

The torque residuals of this pipeline are strongly autocorrelated (the smoothed derivatives and
the model error move slowly), so the plain least-squares covariance σ̂² (XᵀX)⁻¹ is far too
narrow. The sandwich covariance with a Newey–West long-run score sum (:func:`hac_covariance`),
a lag window from the integrated autocorrelation time of the residuals and scores
(:func:`bandwidth`) and the fixed-b critical values of the Bartlett kernel
(:func:`critical_value`) give intervals and t statistics that hold with few effective blocks.
Used by the ``fast`` intervals (:mod:`sparsefric.uncertainty`) and by the torque-offset check
(:func:`sparsefric.diagnostics.check_offset`). Pure functions of arrays.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import fft as sfft
from scipy.special import ndtri  # the normal quantile; scipy.stats would add ~0.5 s of import

from sparsefric.differentiation import spaced_windows

__all__ = ["CORRELATION_WINDOW", "FIXED_B", "LONG_RECORD", "bandwidth", "correlation_time",
           "critical_value", "hac_covariance", "newey_west", "paired_gain", "sandwich"]

#: Records longer than this [samples] have their correlation time measured on windows
#: (:func:`bandwidth`), and are re-differentiated on windows by the fast intervals
#: (:func:`sparsefric.uncertainty.lighter_smoothing`).
LONG_RECORD = 100_000
#: Samples of each window on which :func:`bandwidth` measures a long record's correlation time.
CORRELATION_WINDOW = 100_000


def newey_west(scores: np.ndarray, lag: int) -> np.ndarray:
    r"""Bartlett-weighted long-run sum of one record's scores.

    .. math:: S = \sum_{|l| \le L} \Bigl(1 - \frac{|l|}{L+1}\Bigr) \sum_t u_t u_{t-l}^\top
             = \frac{1}{L+1} \sum_k v_k v_k^\top, \qquad v_k = \sum_{t=k}^{k+L} u_t,

    the windows k = −L … n − 1 clipped to the record, so that the cost is O(n p²) whatever L.

    Parameters
    ----------
    scores : ndarray, shape (n, p)
        u_t [units of the score].
    lag : int
        L ≥ 0 [samples].
    """
    u = np.asarray(scores, dtype=float)
    n = u.shape[0]
    c = np.vstack([np.zeros((1, u.shape[1])), np.cumsum(u, axis=0)])
    k = np.arange(-lag, n)
    v = c[np.minimum(k + lag + 1, n)] - c[np.maximum(k, 0)]
    return v.T @ v / (lag + 1)


def correlation_time(x: np.ndarray, window: float = 5.0) -> np.ndarray | float:
    r"""Integrated autocorrelation time of a series, or of each column [samples].

    .. math:: \tau = 1 + 2 \sum_{l=1}^{M} \rho_l,

    ρ the sample autocorrelation (by FFT), M the smallest lag with M ≥ ``window``·τ(M) (Sokal's
    automatic window). 1 for white noise; ≈ 2T + 1 for an exponential correlation over T samples.

    Parameters
    ----------
    x : ndarray, shape (n,) or (n, k)
        One series, or k series as columns.

    Returns
    -------
    float, or ndarray of shape (k,)
        τ ≥ 1 (1 for a constant series).
    """
    y = np.asarray(x, dtype=float)
    cols = y.reshape(len(y), -1)
    n = cols.shape[0]
    if n < 4:
        return 1.0 if y.ndim == 1 else np.ones(cols.shape[1])
    cols = cols - cols.mean(axis=0)
    f = sfft.rfft(cols, sfft.next_fast_len(2 * n), axis=0)
    acf = sfft.irfft(f * np.conj(f), axis=0)[:n]
    zero = acf[0] <= 0
    acf = acf / np.where(zero, 1.0, acf[0])
    tau = 1.0 + 2.0 * np.cumsum(acf[1:], axis=0)
    ok = np.arange(1, n)[:, None] >= window * tau
    first = np.where(ok.any(axis=0), ok.argmax(axis=0), n - 2)
    out = np.where(zero, 1.0, np.maximum(tau[first, np.arange(cols.shape[1])], 1.0))
    return float(out[0]) if y.ndim == 1 else out


def paired_gain(before: np.ndarray, after: np.ndarray) -> float:
    r"""How many standard errors the squared residuals ``after`` are below ``before`` on the same
    samples (the Diebold–Mariano statistic of two predictions with the squared-error loss).

    .. math:: z = \frac{\bar d}{\sqrt{s_d^2\,\tau_d / n}}, \qquad
              d_t = e_{\text{before},t}^2 - e_{\text{after},t}^2,

    τ_d the :func:`correlation_time` of d: the residuals of one record are not independent
    samples, and a comparison that counted them as such would call a difference of a few
    parts in 10⁴ significant.

    Parameters
    ----------
    before, after : ndarray, shape (n,)
        Residuals of the two predictions [N·m] (either sign convention).

    Returns
    -------
    float
        z [standard errors]: positive where ``after`` predicts better, 0 where the two
        residual series are identical, NaN where either is not finite.
    """
    d = np.asarray(before, dtype=float) ** 2 - np.asarray(after, dtype=float) ** 2
    if not np.all(np.isfinite(d)):
        return math.nan
    spread = float(np.var(d)) * float(correlation_time(d)) / max(len(d), 1)
    if not spread > 0:
        return 0.0 if not np.any(d) else math.copysign(math.inf, float(np.mean(d)))
    return float(np.mean(d)) / math.sqrt(spread)


def bandwidth(residual: np.ndarray, scores: np.ndarray, bounds: Sequence[tuple[int, int]],
              factor: float = 5.0) -> tuple[int, ...]:
    """Newey–West lag window L [samples] of each record.

    L = ⌈``factor``·τ⌉, τ the largest :func:`correlation_time` of the record's residuals and of
    its score columns u_t,j = J_t,j r_t; at most a quarter of the record. With an exponential
    autocorrelation the Bartlett window then loses about 1/(2·``factor``) of the long-run
    variance. A record longer than :data:`LONG_RECORD` samples takes the largest τ of three
    evenly spaced windows of :data:`CORRELATION_WINDOW` samples: the correlation time is a
    local property, and the FFT of every column of a 1e6-sample record cost 1.4 s and 0.4 GB.
    """
    lags = []
    for a, b in bounds:
        r, u = residual[a:b], scores[a:b]
        tau = max(float(np.max(correlation_time(np.column_stack([r[w], u[w]]))))
                  for w in spaced_windows(b - a, LONG_RECORD, CORRELATION_WINDOW))
        lags.append(int(min(math.ceil(factor * tau), max((b - a) // 4, 1))))
    return tuple(lags)


def hac_covariance(J: np.ndarray, residual: np.ndarray, bounds: Sequence[tuple[int, int]],
                   lags: Sequence[int]) -> np.ndarray:
    r"""Sandwich covariance of least-squares parameters with autocorrelated residuals.

    .. math:: \operatorname{Cov}\hat\theta = B^{-1} S B^{-1},\quad B = J^\top J,\quad
              S = \sum_\text{records} \text{newey\_west}(u - \bar u, L)

    with scores u_t = J_tᵀ r_t (centred: the estimate need not be the exact least-squares
    optimum of the prediction error). Columns are scaled to unit norm for the inverse.

    Parameters
    ----------
    J : ndarray, shape (n, p)
        ∂τ̂/∂θ [N·m per unit of θ].
    residual : ndarray, shape (n,)
        τ − τ̂ [N·m].
    bounds : sequence of (int, int)
        Records; no lag crosses a record boundary.
    lags : sequence of int
        L of each record [samples].

    Returns
    -------
    ndarray, shape (p, p)
        Covariance of θ [units of θ squared].
    """
    d = np.linalg.norm(J, axis=0)
    d[d == 0] = 1.0
    Js = J / d
    u = Js * residual[:, None]
    u = u - u.mean(axis=0)
    S = sum(newey_west(u[a:b], L) for (a, b), L in zip(bounds, lags, strict=True))
    B_inv = np.linalg.pinv(Js.T @ Js)
    return (B_inv @ S @ B_inv) / np.outer(d, d)


#: Fixed-b critical values of the Bartlett-kernel HAC t statistic (Kiefer & Vogelsang 2005):
#: one-sided probability p → coefficients of cv(b) = c0 + c1 b + c2 b² + c3 b³, b = L/n.
FIXED_B = {0.90: (1.2816, 1.3040, 0.5135, -0.3386), 0.95: (1.6449, 2.1859, 0.3142, -0.3427),
           0.975: (1.9600, 2.9694, 0.4160, -0.5324), 0.99: (2.3263, 4.1618, 0.5368, -0.9620)}


def critical_value(level: float, b: float) -> float:
    r"""Two-sided critical value of a Bartlett-kernel HAC t statistic with lag window b = L/n.

    The fixed-b limit (Kiefer & Vogelsang 2005) of the 1 − (1 − ``level``)/2 quantile,

    .. math:: c(b) = c_0 + c_1 b + c_2 b^2 + c_3 b^3,

    tabulated for one-sided probabilities 0.90, 0.95, 0.975, 0.99; between them the ratio
    c(b)/c(0) is interpolated linearly in the probability (held constant outside). c(0) is the
    normal quantile. A long window (large b) estimates the long-run variance from few
    effective blocks, which the larger value accounts for: at b = 0.25 it is 2.72 instead of
    1.96 for 95 %.
    """
    return float(ndtri(0.5 + 0.5 * level) * fixed_b_ratio(level, b))


def fixed_b_ratio(level: float, b: float) -> float:
    """c(b)/c(0) of :func:`critical_value`: how much a lag window b = L/n widens the normal
    quantile of ``level`` (1 at b = 0)."""
    p = 0.5 + 0.5 * level
    keys = sorted(FIXED_B)
    ratios = [np.polyval(FIXED_B[k][::-1], b) / FIXED_B[k][0] for k in keys]
    return float(np.interp(p, keys, ratios))


def sandwich(J: np.ndarray, residual: np.ndarray,
             bounds: Sequence[tuple[int, int]] | None = None,
             factor: float = 5.0) -> tuple[np.ndarray, tuple[int, ...]]:
    """:func:`hac_covariance` of least-squares coefficients with its lag windows from
    :func:`bandwidth` (``factor`` correlation times); b = ΣL/n of :func:`critical_value` is
    ``sum(lags) / len(residual)``.

    Parameters
    ----------
    J : ndarray, shape (n, p)
        The regression's columns (or Jacobian) [N·m per unit of each coefficient].
    residual : ndarray, shape (n,)
        τ − τ̂ [N·m].
    bounds : sequence of (int, int), optional
        Records (default: one); no lag crosses a boundary.

    Returns
    -------
    cov : ndarray, shape (p, p)
        Covariance of the coefficients [their units squared].
    lags : tuple of int
        L of each record [samples].
    """
    bounds = [(0, len(residual))] if bounds is None else bounds
    lags = bandwidth(residual, J * residual[:, None], bounds, factor)
    return hac_covariance(J, residual, bounds, lags), lags
