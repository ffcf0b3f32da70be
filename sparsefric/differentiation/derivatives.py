"""Denoised q, q̇, q̈ and τ from one uniformly sampled record: the four methods of
:func:`differentiate`.

The "tv" method is the paper's pipeline (Mahmoudkhani et al. 2023, §5.1; ALGORITHM.md §4), written
on the signal: total-variation regularisation of the acceleration is ℓ1 trend filtering of the
angle with the third difference penalised (see :mod:`.trend_filter` for the solver and why).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numba
import numpy as np

from sparsefric.differentiation.trend_filter import (
    TrendFilterResult,
    measurement_noise_std,
    rounding_dominated,
    trend_filter,
)
from sparsefric.errors import SparsefricError
from sparsefric.options import DIFFERENTIATION, nyquist_conflict
from sparsefric.threads import in_parallel

__all__ = [
    "METHODS",
    "DifferentiationError",
    "Derivatives",
    "differentiate",
    "tv_fit",
    "select_tv_weight",
    "second_difference",
    "central_difference",
    "sample_average",
]

METHODS: tuple[str, ...] = DIFFERENTIATION

#: Default Butterworth cutoff [Hz] (capped at 0.4·Nyquist for slow sampling).
DEFAULT_CUTOFF_HZ = 20.0
#: Default Savitzky–Golay window [s] (at least polyorder + 2 samples).
DEFAULT_WINDOW_S = 0.05
#: Savitzky–Golay polynomial order.
SAVGOL_POLYORDER = 3
#: Dimensionless TV weights κ = λ/σ̂ searched by the automatic rule (half-decade grid). The
#: slow records of coarse encoders need up to 3e4–1e5 (``DESIGN.md`` §23).
KAPPA_GRID: tuple[float, ...] = (0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0, 3000.0, 1e4,
                                 3e4, 1e5)
#: One more half-decade step below and above :data:`KAPPA_GRID`, tried once when the rule ends
#: at an end of it; a κ chosen there is reported in :attr:`Derivatives.notes`.
KAPPA_EXTENSION: tuple[float, float] = (0.1, 3e5)
_SEARCH_GRID: tuple[float, ...] = (KAPPA_EXTENSION[0], *KAPPA_GRID, KAPPA_EXTENSION[1])
_KAPPA_START = _SEARCH_GRID.index(100.0)
#: The angle's κ is raised above SURE's choice when a larger one predicts the torque with an RMS
#: residual smaller by more than this fraction (:func:`torque_residual`).
TORQUE_GAIN = 0.02
#: Where the rounding dominates, the angle read is the true one to within half a count plus a
#: noise below Δ/√12 = σ̂: |y − q| ≤ Δ/2 + 2.5σ̂ on 99 % of the samples, i.e. 0.5·√12 + 2.5 in
#: units of σ̂. A raised κ whose fit leaves this band is smoothing motion, not rounding.
LATTICE_BAND = 0.5 * np.sqrt(12.0) + 2.5
#: Samples moving faster than this fraction of the record's 99th-percentile speed enter the
#: torque check of κ.
_MOVING_FRACTION = 0.05
#: Records longer than this choose κ on windows of ``_SURE_WINDOW`` samples.
_SURE_FULL_MAX = 30_000
_SURE_WINDOW = 10_000
_SURE_N_WINDOWS = 3
#: Noise estimates below this fraction of the signal's peak deviation are no sensor's (a 20-bit
#: encoder's rounding is 3e-7 of a turn): the record is noise-free (a simulation) and is not
#: regularised.
NOISE_FREE_FRACTION = 1e-9


class DifferentiationError(SparsefricError, ValueError):
    """Invalid input to :func:`differentiate` (a ``ValueError`` and a ``SparsefricError``)."""


@dataclass(frozen=True)
class Derivatives:
    """Denoised signals of one record, all of the length of ``t``.

    Attributes
    ----------
    q : ndarray
        Position [rad or m].
    qd : ndarray
        Velocity [rad/s or m/s].
    qdd : ndarray
        Acceleration [rad/s² or m/s²].
    tau : ndarray
        Torque or force [N·m or N].
    method : str
        One of :data:`METHODS`.
    params : dict
        What was used and how it was chosen (e.g. ``regularization``, ``lambda``, ``rule``).
    notes : tuple of str
        What the user should know about the choice (an automatic κ at the end of its range).
    """

    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    method: str
    params: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


# --------------------------------------------------------------------------------------------
# small array helpers


def central_difference(x: np.ndarray, h: float) -> np.ndarray:
    """First derivative by central differences, ``(x_{i+1} − x_{i−1})/(2h)``, one-sided at ends."""
    return np.gradient(x, h)


def second_difference(x: np.ndarray, h: float) -> np.ndarray:
    """Second derivative ``(x_{i+1} − 2x_i + x_{i−1})/h²``; end values copy their neighbours."""
    out = np.empty_like(x)
    if x.size < 3:
        out[:] = 0.0
        return out
    out[1:-1] = np.diff(x, 2) / h**2
    out[0] = out[1]
    out[-1] = out[-2]
    return out


def held_average(x: np.ndarray, bounds: Sequence[tuple[int, int]]) -> np.ndarray:
    r"""Samples of a held signal averaged as a second difference of positions averages q̈.

    A command logged at t_k and held over [t_k, t_k + h) (zero-order hold: what a controller
    applies, and the torque a robot logs as its command) is, under the triangle of half-width
    h around t_k that weighs the q̈ of :func:`second_difference`,

    .. math:: \bar x_k = (x_{k-1} + x_k) / 2,

    not x_k nor :func:`sample_average`'s (x_{k−1} + 4x_k + x_{k+1})/6, which pair the motion
    with the torque h/2 early. During pre-sliding (τ ≈ σ0 z + σ1 ż) a shift δ adds δσ0 ż: σ1
    comes out h σ0/2 high, +6 to +12 % on the simulated benchmark joints (``DESIGN.md`` §68).
    The first sample of each record, which has no predecessor, is kept. ``x`` (held signals,
    samples along axis 0), ``bounds`` and the result as in :func:`sample_average`.
    """
    x = np.asarray(x, dtype=float)
    out = x.copy()
    for a, b in bounds:
        out[a + 1:b] = 0.5 * (x[a:b - 1] + x[a + 1:b])
    return out


def torque_average(tau: np.ndarray, bounds: Sequence[tuple[int, int]], held: bool) -> np.ndarray:
    """The torque [N·m] averaged as the q̈ of a second difference of positions: by
    :func:`held_average` where it is a command held until the next sample (``held``), else by
    :func:`sample_average`."""
    return held_average(tau, bounds) if held else sample_average(tau, bounds)


def sample_average(x: np.ndarray, bounds: Sequence[tuple[int, int]]) -> np.ndarray:
    r"""Samples of ``x`` averaged as a second difference of sampled positions averages q̈.

    .. math:: \frac{q_{i+1} - 2 q_i + q_{i-1}}{h^2}
              = \int_{-h}^{h} \ddot q(t_i + s)\,\frac{1 - |s|/h}{h}\,ds

    so the q̈ of :func:`second_difference` (of any fit of the positions) is the continuous
    acceleration under a triangle of half-width h, not its value at t_i. The equation of motion
    holds sample by sample for that average only if τ and the other terms are averaged alike;
    for a signal linear between samples the triangle average is

    .. math:: \bar x_i = (x_{i-1} + 4 x_i + x_{i+1}) / 6.

    A torque logged once per sample but applied in steps between them has steps the positions'
    q̈ sees as ramps: regressing the instantaneous torque on that q̈ put the inertia +2.4…3 %
    high on zoo joints logged at 250 Hz, with the true friction subtracted (``DESIGN.md`` §35).

    Parameters
    ----------
    x : ndarray, shape (n,) or (n, k)
        Signals of stacked records, samples along axis 0.
    bounds : sequence of (start, stop)
        Slice of each record; its end samples stand in for their missing neighbours.

    Returns
    -------
    ndarray
        The averaged samples, same shape as ``x``.
    """
    x = np.asarray(x, dtype=float)
    out = x.copy()
    samples, columns = x.reshape(len(x), -1), out.reshape(len(out), -1)  # views: (n,) → (n, 1)
    for a, b in bounds:
        if b - a >= 2:
            _triangle(samples[a:b], columns[a:b])
    return out


@numba.njit(cache=True, nogil=True)
def _triangle(s, out):
    """``out`` = the triangle averages of the record ``s`` (n ≥ 2 samples × k columns), in
    numpy's order of operations: the same bits as the array expressions, without their four
    temporaries (a 1M-sample record: 3.5 → 1.1 ms)."""
    n = s.shape[0]
    for j in range(s.shape[1]):
        for i in range(1, n - 1):
            out[i, j] = (s[i - 1, j] + 4.0 * s[i, j] + s[i + 1, j]) / 6.0
        out[0, j] = (5.0 * s[0, j] + s[1, j]) / 6.0
        out[n - 1, j] = (s[n - 2, j] + 5.0 * s[n - 1, j]) / 6.0


def _integrate(f: np.ndarray, h: float) -> np.ndarray:
    """Cumulative trapezoidal integral from 0, same length as ``f`` (scipy's
    ``cumulative_trapezoid(f, dx=h, initial=0)``, operation for operation, without importing
    scipy.integrate at start-up)."""
    return np.concatenate(([0.0], np.cumsum(h * (f[1:] + f[:-1]) / 2.0)))


def _fit_constants(target: np.ndarray, base: np.ndarray, columns: list[np.ndarray]) -> np.ndarray:
    """``base + Σ c_j columns_j`` with ``c`` the least-squares fit to ``target``."""
    A = np.column_stack(columns)
    c, *_ = np.linalg.lstsq(A, target - base, rcond=None)
    return base + A @ c


# --------------------------------------------------------------------------------------------
# TV (trend filtering) with the automatic weight


class TrendFits:
    """Trend filters of order ``m`` of windows of one signal ``ys``, each solved once.

    The κ search, the torque check and the final fit of :func:`tv_fit` ask for the same
    (window, κ) fits; the interior-point solve is the cost of the differentiation.
    """

    def __init__(self, ys: np.ndarray, m: int):
        self.ys = ys
        self.m = m
        self._done: dict[tuple[int, int, float], TrendFilterResult] = {}

    def __call__(self, window: slice, kappa: float) -> TrendFilterResult:
        """:func:`trend_filter` of ``ys[window]`` with λ = ``kappa``."""
        start, stop, _ = window.indices(self.ys.size)
        key = (start, stop, float(kappa))
        if key not in self._done:
            self._done[key] = trend_filter(self.ys[start:stop], float(kappa), self.m)
        return self._done[key]


def _sure(fits: TrendFits, window: slice, kappa: float) -> float:
    """Stein's unbiased risk estimate per sample, in units of σ̂², of the trend filter of the
    ``window`` of ``fits.ys`` (already divided by σ̂): ``(‖y − x̂‖² − n + 2·df)/n`` with
    df = #knots + m (Tibshirani & Taylor 2012)."""
    y = fits.ys[window]
    r = fits(window, kappa)
    n = y.size
    return float((np.sum((y - r.x) ** 2) - n + 2.0 * (r.n_knots + fits.m)) / n)


def spaced_windows(n: int, full_max: int, window: int, count: int = 3) -> list[slice]:
    """The whole record of ``n`` samples if n ≤ ``full_max``, else ``count`` evenly spaced
    windows of ``window`` samples (first and last at the ends): a long record's local
    properties from a bounded share of it."""
    if n <= full_max:
        return [slice(0, n)]
    starts = np.linspace(0, n - window, count).astype(int)
    return [slice(int(s), int(s) + window) for s in starts]


def _sure_windows(n: int) -> list[slice]:
    """Whole record, or ``_SURE_N_WINDOWS`` evenly spaced windows of ``_SURE_WINDOW`` samples."""
    return spaced_windows(n, _SURE_FULL_MAX, _SURE_WINDOW, _SURE_N_WINDOWS)


def _descend(score: Callable[[int], float], start: int, size: int) -> int:
    """From index ``start``, move to the neighbour with the lower score until none is lower."""
    i = start
    while True:
        best = min((j for j in (i - 1, i, i + 1) if 0 <= j < size), key=score)
        if best == i:
            return i
        i = best


def select_tv_weight(y: np.ndarray, m: int, fits: TrendFits | None = None
                     ) -> tuple[float, dict[int, float]]:
    """Automatic dimensionless TV weight κ for ``y`` divided by its noise level.

    Rule: minimise SURE(κ) (Stein's unbiased estimate of the mean squared error of the fitted
    signal, with the trend-filter degrees of freedom df = #knots + m) over the half-decade grid
    :data:`KAPPA_GRID` and its one-step :data:`KAPPA_EXTENSION`, by a descent from κ = 100 to the
    neighbour that lowers it until none does (the extension is reached only when the end of the
    grid still lowers SURE). Long records (> 30,000 samples) sum SURE over three evenly spaced
    10,000-sample windows (trend filtering is local, so the best κ does not depend on the record
    length). ``fits``: the :class:`TrendFits` of ``y`` to share solves with the caller.

    Returns
    -------
    kappa : float
    scores : dict
        SURE per index of the searched grid (:data:`KAPPA_EXTENSION` [0], :data:`KAPPA_GRID`,
        :data:`KAPPA_EXTENSION` [1]) evaluated.
    """
    wins = _sure_windows(y.size)
    fits = TrendFits(y, m) if fits is None else fits
    scores: dict[int, float] = {}

    def score(i: int) -> float:
        if i not in scores:
            scores[i] = sum(_sure(fits, w, _SEARCH_GRID[i]) for w in wins)
        return scores[i]

    return _SEARCH_GRID[_descend(score, _KAPPA_START, len(_SEARCH_GRID))], scores


def torque_columns(x: np.ndarray, h: float) -> np.ndarray:
    r"""Columns [q̈, 1, cos q, sin q, sign q̇, q̇] of a quick torque model on the fitted angle ``x``.

    q̈ [rad/s²] is the second difference of ``x`` [rad], q̇ [rad/s] its central difference (for
    a prismatic axis m, m/s, m/s²; cos and sin of a short travel are then nearly a constant and
    a slope). Shape (n, 6).
    """
    qd = central_difference(x, h)
    return np.column_stack([second_difference(x, h), np.ones_like(x), np.cos(x), np.sin(x),
                            np.sign(qd), qd])


def torque_residual(cols: np.ndarray, tau: np.ndarray) -> float:
    """RMS residual [units of τ] of the least-squares fit of ``tau`` on ``cols``."""
    coef = np.linalg.lstsq(cols, tau, rcond=None)[0]
    return float(np.sqrt(np.mean((cols @ coef - tau) ** 2)))


def _within_band(ys: np.ndarray, fits: list[np.ndarray], wins: list[slice]) -> bool:
    """Whether the windowed fits stay within :data:`LATTICE_BAND` of ``ys`` (units of σ̂) on
    99 % of the samples."""
    residual = np.concatenate([ys[w] - x for w, x in zip(wins, fits, strict=True)])
    return bool(np.quantile(np.abs(residual), 0.99) <= LATTICE_BAND)


def raise_for_torque(ys: np.ndarray, scale: float, tau: np.ndarray, h: float, m: int,
                     kappa: float, fits: TrendFits | None = None) -> tuple[float, float]:
    r"""SURE's ``kappa``, or a larger κ of the grid whose fitted angle predicts the torque better.

    SURE assumes white noise; the rounding error of a slow move on a coarse encoder is a slow
    staircase, which it takes for signal, and the q̈ of the fit that follows it is noise
    (``DESIGN.md`` §23). For ``kappa`` and every larger κ of the searched grid, the angle
    ``ys``·``scale`` [rad] (``ys`` centred and divided by σ̂, windows as for SURE) is fitted and τ
    [N·m] regressed on :func:`torque_columns` over the samples moving faster than
    :data:`_MOVING_FRACTION` of the 99th-percentile speed of the smoothest fit. Of the κ whose
    fit stays within the encoder's error band (99th percentile of |``ys`` − x̂| ≤
    :data:`LATTICE_BAND`), the one with the smallest RMS residual r(κ) replaces ``kappa`` when
    r(κ) < (1 − :data:`TORQUE_GAIN`)·r(kappa). Without the band, the static model of the check
    prefers a velocity smeared across reversals: on a stiff joint moving at 9 counts per sample
    it took κ from 30 to 1e5, the fit strayed 7 counts from the readings, and the σ0 identified
    from it was −76 % (``DESIGN.md`` §23). ``fits``: the :class:`TrendFits` of ``ys`` the κ
    search used.

    Returns
    -------
    kappa : float
        The κ kept.
    ratio : float
        r(κ)/r(``kappa``) (1 when SURE's κ is kept).
    """
    wins = _sure_windows(ys.size)
    fits = TrendFits(ys, m) if fits is None else fits
    larger = [k for k in _SEARCH_GRID if k >= kappa and
              (k == kappa or _within_band(ys, [fits(w, k).x for w in wins], wins))]
    cols = {k: np.vstack([torque_columns(fits(w, k).x * scale, h) for w in wins])
            for k in larger}
    taus = np.concatenate([tau[w] for w in wins])
    speed = np.abs(cols[larger[-1]][:, -1])
    moving = speed > _MOVING_FRACTION * float(np.quantile(speed, 0.99))
    if moving.sum() < 60:
        return kappa, 1.0
    residual = {k: torque_residual(c[moving], taus[moving]) for k, c in cols.items()}
    best = min(larger, key=residual.__getitem__)
    if residual[best] < (1.0 - TORQUE_GAIN) * residual[kappa]:
        return best, residual[best] / residual[kappa]
    return kappa, 1.0


def _auto_kappa(fits: TrendFits, scale: float, tau: np.ndarray | None,
                h: float | None) -> tuple[float, str]:
    """SURE's κ (:func:`select_tv_weight`) for ``fits.ys``; on a staircase
    (:func:`.rounding_dominated`), raised by :func:`raise_for_torque` when ``tau`` and ``h`` are
    given. And the rule in words."""
    ys, m = fits.ys, fits.m
    kappa, _ = select_tv_weight(ys, m, fits)
    rule = (f"auto: κ = argmin SURE over half-decade grid {_SEARCH_GRID[0]:g}..{_SEARCH_GRID[-1]:g}"
            f" (df = knots + {m}); λ = κ·σ̂")
    if tau is not None and h is not None and rounding_dominated(ys, m + 1):
        raised, ratio = raise_for_torque(ys, scale, tau, h, m, kappa, fits)
        if raised != kappa:
            rule += (f"; raised from SURE's {kappa:g}: the torque residual of a rigid-body + "
                     f"Coulomb + viscous fit is {100 * (1 - ratio):.1f} % smaller")
            kappa = raised
    return kappa, rule


def tv_fit(y: np.ndarray, m: int, kappa: float | None = None, *, tau: np.ndarray | None = None,
           h: float | None = None) -> tuple[np.ndarray, dict[str, Any]]:
    """ℓ1 trend filter of ``y`` with λ = κ·σ̂ (σ̂ from :func:`measurement_noise_std`).

    Solves ``x̂ = argmin ½‖y − x‖² + κσ̂‖D⁽ᵐ⁾x‖₁`` (units: λ = κσ̂ in units of y) on the
    rescaled signal (y − ȳ)/σ̂, so that the solver always sees O(1) noise whatever the units.

    Parameters
    ----------
    y : ndarray
        Samples.
    m : int
        Difference order penalised (m = k + 1 for TV of the k-th derivative).
    kappa : float, optional
        Dimensionless weight; ``None`` chooses it by :func:`select_tv_weight`.
    tau : ndarray, optional
        The record's torque [N·m]: with ``h``, the automatic κ of an angle ``y`` [rad] is raised
        where a larger one predicts the torque better (:func:`raise_for_torque`).
    h : float, optional
        Sample period [s].

    Returns
    -------
    x : ndarray
        Fitted signal (units of y).
    info : dict
        ``regularization`` (κ), ``lambda`` (κσ̂), ``noise_std`` (σ̂), ``rule``, ``range_end``
        (an automatic κ at an end of the searched grid), solver figures.
    """
    offset = float(np.mean(y))
    sigma = measurement_noise_std(y, m + 1)
    if sigma <= NOISE_FREE_FRACTION * float(np.max(np.abs(y - offset), initial=0.0)):
        # scaling by a rounding-level σ̂ hands the solver samples of 1e11–1e16, where its dual
        # variable lands on the box edge (division by zero on a noise-free simulated angle with
        # σ̂ = 3e-17 rad, and on a smooth torque with σ̂ = 4e-12 of its span)
        sigma = 0.0
    scale = sigma if sigma > 0 else 1.0
    ys = (y - offset) / scale
    auto = kappa is None and sigma > 0.0
    fits = TrendFits(ys, m)
    if kappa is None:
        kappa, rule = (_auto_kappa(fits, scale, tau, h) if auto else
                       (0.0, "auto: no noise detected (σ̂ = 0), no regularisation"))
    elif not np.isfinite(kappa) or kappa < 0:
        raise DifferentiationError(f"regularization must be a finite number >= 0, got {kappa}")
    else:
        rule = "user: λ = regularization·σ̂"
    res = fits(slice(None), float(kappa))
    info: dict[str, Any] = {
        "regularization": float(kappa),
        "lambda": float(kappa) * sigma,
        "noise_std": sigma,
        "rule": rule,
        "range_end": auto and kappa in (_SEARCH_GRID[0], _SEARCH_GRID[-1]),
        "penalty_order": m,
        "knots": res.n_knots,
        "iterations": res.iterations,
        "duality_gap": res.gap * scale**2,
        "converged": str(res.converged),
    }
    return res.x * scale + offset, info


def range_note(info: dict[str, Any], signal: str) -> tuple[str, ...]:
    """A note when :func:`tv_fit` chose κ at an end of the searched grid, else none."""
    if not info.get("range_end"):
        return ()
    kappa = info["regularization"]
    beyond = "less" if kappa == _SEARCH_GRID[0] else "more"
    return (f"the automatic TV weight of the {signal} ended at κ = {kappa:g}, the end of the range "
            f"it searches ({_SEARCH_GRID[0]:g}–{_SEARCH_GRID[-1]:g}); {beyond} smoothing might "
            "suit it better: check the derivatives, or set the regularization",)


def _tv(
    t: np.ndarray,
    q: np.ndarray,
    tau: np.ndarray,
    h: float,
    kappa_q: float | None,
    kappa_tau: float | None,
    tv_order: int,
    denoise_torque: bool = True,
) -> Derivatives:
    """The paper's pipeline; see :func:`differentiate`."""
    m = tv_order + 1
    # the angle's and the torque's fits are independent: side by side
    fits = [lambda: tv_fit(q, m, kappa_q, tau=tau, h=h)]
    if denoise_torque:
        fits.append(lambda: tv_fit(tau, 2, kappa_tau))
    (x, info_q), *torque_fit = in_parallel(lambda fit: fit(), fits)
    # q̈ from the fitted angle, then q̇ and q by integration, constants by LS on the angle.
    if tv_order >= 2:
        qdd = second_difference(x, h)
        I1 = _integrate(qdd, h)
        I2 = _integrate(I1, h)
        tt = t - t[0]
        c, *_ = np.linalg.lstsq(np.column_stack([np.ones_like(tt), tt]), q - I2, rcond=None)
        qd = I1 + c[1]
        q_hat = I2 + c[0] + c[1] * tt
    else:  # TV of the velocity: q̇ from the fit, q̈ by differencing it (piecewise constant q̇).
        qd = central_difference(x, h)
        qdd = central_difference(qd, h)
        q_hat = _fit_constants(q, _integrate(qd, h), [np.ones_like(q)])
    # Torque: TV-regularised derivative (TV of τ̇, i.e. D² on τ), then integrated back and the
    # constant fitted by LS to the measured torque.
    info_t: dict[str, Any] = {"rule": "measured torque, not denoised"}
    tau_hat = tau.copy()
    if torque_fit:
        xt, info_t = torque_fit[0]
        tau_hat = _fit_constants(tau, _integrate(central_difference(xt, h), h),
                                 [np.ones_like(tau)])
    params: dict[str, Any] = {
        "tv_order": tv_order,
        **info_q,
        **{f"tau_{k}": v for k, v in info_t.items()},
    }
    notes = range_note(info_q, "position") + range_note(info_t, "torque")
    return Derivatives(q_hat, qd, qdd, tau_hat, "tv", params, notes)


# --------------------------------------------------------------------------------------------
# classical filters


def _butterworth(q: np.ndarray, tau: np.ndarray, h: float, cutoff_hz: float | None) -> Derivatives:
    from scipy.signal import butter, sosfiltfilt  # ~0.5 s to import: only where used

    fs = 1.0 / h
    fc = min(DEFAULT_CUTOFF_HZ, 0.4 * fs / 2.0) if cutoff_hz is None else float(cutoff_hz)
    why = nyquist_conflict(fc, h) if fc > 0 else f"{fc:g} is not positive"
    if why:
        raise DifferentiationError(f"cutoff_hz {why}")
    sos = butter(4, fc, btype="low", fs=fs, output="sos")
    padlen = min(3 * 9, q.size - 1)  # scipy's default, shortened for short records
    qf = sosfiltfilt(sos, q, padlen=padlen)
    qd = central_difference(qf, h)
    qdd = central_difference(qd, h)
    tf = sosfiltfilt(sos, tau, padlen=padlen)
    rule = "default 20 Hz (capped at 0.4·Nyquist)" if cutoff_hz is None else "user"
    return Derivatives(qf, qd, qdd, tf, "butterworth", {"cutoff_hz": fc, "order": 4, "rule": rule})


def _savgol(q: np.ndarray, tau: np.ndarray, h: float, window_s: float | None) -> Derivatives:
    from scipy.signal import savgol_filter  # ~0.5 s to import: only where used

    w_s = DEFAULT_WINDOW_S if window_s is None else float(window_s)
    if not (np.isfinite(w_s) and w_s > 0):
        raise DifferentiationError(f"window_s must be a positive duration in s, got {w_s}")
    n_win = int(round(w_s / h)) | 1  # odd
    n_win = max(n_win, SAVGOL_POLYORDER + 2 + (SAVGOL_POLYORDER + 1) % 2)
    if n_win > q.size:
        raise DifferentiationError(
            f"savgol window of {n_win} samples is longer than the record ({q.size} samples)"
        )
    kw = {"window_length": n_win, "polyorder": SAVGOL_POLYORDER, "delta": h, "mode": "interp"}
    qf = savgol_filter(q, deriv=0, **kw)
    qd = savgol_filter(q, deriv=1, **kw)
    qdd = savgol_filter(q, deriv=2, **kw)
    tf = savgol_filter(tau, deriv=0, **kw)
    rule = "default 0.05 s" if window_s is None else "user"
    return Derivatives(
        qf,
        qd,
        qdd,
        tf,
        "savgol",
        {
            "window_s": n_win * h,
            "window_samples": n_win,
            "polyorder": SAVGOL_POLYORDER,
            "rule": rule,
        },
    )


# --------------------------------------------------------------------------------------------
# public entry point


def _as_1d(name: str, a: Any, n: int | None) -> np.ndarray:
    arr = np.asarray(a, dtype=float)
    if arr.ndim != 1:
        raise DifferentiationError(f"{name} must be a 1-D array, got shape {arr.shape}")
    if n is not None and arr.size != n:
        raise DifferentiationError(f"{name} has {arr.size} samples but t has {n}")
    if not np.all(np.isfinite(arr)):
        raise DifferentiationError(f"{name} contains NaN or infinite values")
    return arr


def _sample_period(t: np.ndarray) -> float:
    """Mean sample period; requires strictly increasing, uniform (±1 %) sampling."""
    if t.size < 2:
        raise DifferentiationError("need at least 2 samples")
    dt = np.diff(t)
    if np.any(dt <= 0):
        raise DifferentiationError("t must be strictly increasing")
    h = float((t[-1] - t[0]) / (t.size - 1))
    if np.max(np.abs(dt - h)) > 0.01 * h:
        raise DifferentiationError(
            f"t must be uniformly sampled: steps range {dt.min():g}..{dt.max():g} s around {h:g} s"
        )
    return h


def _split_regularization(
    regularization: float | tuple[float | None, float | None] | None,
) -> tuple[float | None, float | None]:
    if regularization is None:
        return None, None
    if isinstance(regularization, tuple | list):
        if len(regularization) != 2:
            raise DifferentiationError("regularization must be a number or a pair (q, tau)")
        return regularization[0], regularization[1]
    return float(regularization), None


def differentiate(  # noqa: PLR0913 - the options of each method, keyword-only
    t: np.ndarray,
    q: np.ndarray,
    tau: np.ndarray,
    method: str = "tv",
    qd: np.ndarray | None = None,
    qdd: np.ndarray | None = None,
    *,
    regularization: float | tuple[float | None, float | None] | None = None,
    cutoff_hz: float | None = None,
    window_s: float | None = None,
    tv_order: int = 2,
    denoise_torque: bool = True,
) -> Derivatives:
    r"""Denoised position, velocity, acceleration and torque of one contiguous record.

    Parameters
    ----------
    t : ndarray, shape (n,)
        Time [s], strictly increasing and uniformly sampled (period h, ±1 %).
    q : ndarray, shape (n,)
        Measured angle [rad] or position [m].
    tau : ndarray, shape (n,)
        Measured torque [N·m] or force [N].
    method : {"tv", "butterworth", "savgol", "given"}
        * ``"tv"`` (default) — the paper's pipeline.  The angle is fitted by ℓ1 trend filtering

          .. math:: \hat x = \arg\min_x \tfrac12\|q - x\|_2^2 + \lambda\|D^{(m)}x\|_1,
                    \quad m = \text{tv\_order} + 1 = 3,

          which is total-variation regularisation of the acceleration ``D²x/h²`` (piecewise
          constant q̈: trapezoidal velocity profiles with exact stops).  Then
          ``q̈_i = (x̂_{i+1} − 2x̂_i + x̂_{i−1})/h²``, ``q̇ = ∫q̈ dt + c₁``,
          ``q = ∫∫q̈ + c₁t + c₀`` with (c₀, c₁) the least-squares fit to the measured angle.
          The torque is TV-differentiated (m = 2, TV of τ̇), integrated back, and its constant
          fitted by least squares to the measured torque.
        * ``"butterworth"`` — zero-phase 4th-order Butterworth low-pass (``sosfiltfilt``) on q
          and τ, cutoff ``cutoff_hz`` (default 20 Hz, at most 0.4·Nyquist), then central
          differences (``np.gradient``) for q̇ and q̈ (the IDIM-LS standard).
        * ``"savgol"`` — Savitzky–Golay, cubic, window ``window_s`` (default 0.05 s), with
          ``deriv=1, 2`` for q̇, q̈; τ smoothed with the same window.
        * ``"given"`` — use ``qd`` and ``qdd`` as given; q and τ unchanged.
    qd, qdd : ndarray, optional
        Measured velocity [rad/s] and acceleration [rad/s²]; required by ``"given"``.
    regularization : float or (float, float), optional
        ``"tv"`` only: the dimensionless TV weight κ (λ = κ·σ̂, σ̂ the noise standard deviation
        of the signal estimated by :func:`.trend_filter.measurement_noise_std`,
        so κ does not depend on units, record length or sampling rate).  A pair sets κ for q
        and τ separately (``None`` in the pair keeps the automatic rule).  Default: automatic —
        κ minimises Stein's unbiased risk estimate (SURE) of the fitted signal over the grid
        0.3, 1, 3, …, 3000 (see :func:`select_tv_weight`).  The chosen κ, λ [units of q], σ̂ and
        the rule are in ``params`` (``tau_``-prefixed for the torque).
    cutoff_hz : float, optional
        ``"butterworth"`` cutoff [Hz].
    window_s : float, optional
        ``"savgol"`` window [s].
    tv_order : {1, 2, 3}
        ``"tv"`` only: the derivative of q whose total variation is penalised (2: acceleration,
        the paper's choice and the best q̈ on trapezoidal moves; 1: velocity; 3: jerk).
    denoise_torque : bool
        False: the returned torque is the measured one, and the torque's fit is skipped (half
        of the TV work, which a prediction compared with the measured torque does not need).

    Returns
    -------
    Derivatives
        Arrays of length n and ``params``.

    Raises
    ------
    DifferentiationError
        (a ``ValueError``) on an unknown method, missing ``qd``/``qdd`` for ``"given"``,
        mismatched lengths, non-uniform time or invalid options.
    """
    if method not in METHODS:
        raise DifferentiationError(
            f"unknown differentiation method {method!r}; valid methods: {', '.join(METHODS)}"
        )
    t = _as_1d("t", t, None)
    n = t.size
    q = _as_1d("q", q, n)
    tau = _as_1d("tau", tau, n)
    h = _sample_period(t)
    if method == "given":
        missing = [name for name, a in (("qd", qd), ("qdd", qdd)) if a is None]
        if missing:
            raise DifferentiationError(
                f"method 'given' needs measured {' and '.join(missing)} "
                "(pass qd= and qdd=, or choose method 'tv', 'butterworth' or 'savgol')"
            )
        return Derivatives(
            q.copy(),
            _as_1d("qd", qd, n),
            _as_1d("qdd", qdd, n),
            tau.copy(),
            "given",
            {"rule": "measured qd and qdd used as given"},
        )
    if method in ("butterworth", "savgol"):
        d = (_butterworth(q, tau, h, cutoff_hz) if method == "butterworth" else
             _savgol(q, tau, h, window_s))
        return d if denoise_torque else replace(d, tau=tau.copy())
    if tv_order not in (1, 2, 3):
        raise DifferentiationError(f"tv_order must be 1, 2 or 3, got {tv_order}")
    kq, kt = _split_regularization(regularization)
    return _tv(t, q, tau, h, kq, kt, tv_order, denoise_torque)
