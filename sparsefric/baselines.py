r"""Baseline identification methods, fairly implemented, each returning a :class:`JointModel`.

These are the methods users apply today (ALGORITHM.md §6); ``sparsefric`` is compared with them.

* :func:`idim_ls` — the robotics standard (Gautier, Janot): inverse dynamic identification model
  by linear least squares on a fixed model, with a zero-phase Butterworth filter of q, central
  differences and parallel decimation.  Reproduces the published EMPS reference.
* :func:`output_error_lugre` — all LuGre and rigid-body parameters by bounded nonlinear least
  squares (``scipy.optimize.least_squares``, trust-region reflective) on the torque error, with
  the bristle state z integrated along the measured velocity.
* :func:`two_step_lugre` — classical Canudas de Wit & Lischinsky two-step identification (Festo
  seed §5): static curve from constant-velocity points by nonlinear least squares, then σ0, σ1
  and I from a pre-sliding experiment by least squares on a second-order ARX model.
* :func:`presliding_experiment` — simulates that pre-sliding experiment for a truth model.

Model (ALGORITHM.md §1), SI units (rad, rad/s, N·m; m, m/s, N for a prismatic axis)::

    τ = I q̈ + a_c cos q + a_s sin q + o + τ_f
    τ_f = σ0 z + σ1 ż + Σ_p c_p q̇^p,   ż = q̇ − σ0 |q̇| z / g(q̇)
    g(q̇) = f_c + A exp(−|q̇/Ω_s|^δ)
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import least_squares
from scipy.signal import butter, sosfiltfilt
from scipy.signal import decimate as _decimate

from sparsefric.data import Trajectory
from sparsefric.differentiation import differentiate
from sparsefric.model import JointModel
from sparsefric.simulate import Sensors, multisine, simulate

__all__ = [
    "idim_ls",
    "idim_regressor",
    "output_error_lugre",
    "output_error_multistart",
    "presliding_experiment",
    "fit_static_curve",
    "fit_presliding_arx",
    "two_step_lugre",
]

# --------------------------------------------------------------------------------------------
# IDIM-LS


def _butterworth_derivatives(q: np.ndarray, h: float, cutoff_hz: float,
                             order: int = 4) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Zero-phase Butterworth low-pass of q, then central differences.

    q_f = filtfilt(butter(order, f_c)) q,  q̇_i = (q_f,i+1 − q_f,i−1)/(2h),  q̈ = the same on q̇.
    The cutoff ``cutoff_hz`` [Hz] is the −3 dB frequency of one pass (MATLAB
    ``butter(order, 2 f_c h)``).
    """
    sos = butter(order, cutoff_hz, btype="low", fs=1.0 / h, output="sos")
    qf = sosfiltfilt(sos, q, padlen=min(3 * (2 * order + 1), q.size - 1))
    qd = np.gradient(qf, h)
    return qf, qd, np.gradient(qd, h)


def idim_regressor(q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, axis: str,
                   stribeck: tuple[float, float] | None = None,
                   viscous_powers: Sequence[int] = (1,)) -> tuple[np.ndarray, list[str]]:
    r"""Observation matrix W of the fixed IDIM model τ = W θ.

    Columns: q̈; cos q, sin q (revolute) or 1 (prismatic, offset); sign(q̇);
    sign(q̇)·exp(−|q̇/Ω_s|^δ) if ``stribeck`` = (Ω_s, δ) is given; q̇^p for p in ``viscous_powers``.

    Returns
    -------
    W : ndarray, shape (n, k)
    names : list of str
        Parameter names: inertia, gravity_cos, gravity_sin | offset, coulomb, [stribeck], c<p>.
    """
    cols = [qdd]
    names = ["inertia"]
    if axis == "revolute":
        cols += [np.cos(q), np.sin(q)]
        names += ["gravity_cos", "gravity_sin"]
    elif axis == "prismatic":
        cols.append(np.ones_like(q))
        names.append("offset")
    else:
        raise ValueError(f"axis must be 'revolute' or 'prismatic', got {axis!r}")
    sgn = np.sign(qd)
    cols.append(sgn)
    names.append("coulomb")
    if stribeck is not None:
        omega, delta = stribeck
        cols.append(sgn * np.exp(-np.abs(qd / omega) ** delta))
        names.append("stribeck")
    for p in viscous_powers:
        cols.append(qd ** int(p))
        names.append(f"c{int(p)}")
    return np.column_stack(cols), names


def _parallel_decimate(x: np.ndarray, factor: int, edge: int) -> np.ndarray:
    r"""Parallel decimation (Gautier): low-pass every column, keep every ``factor``-th sample.

    ``scipy.signal.decimate`` with its zero-phase 8th-order Chebyshev I filter (cutoff
    0.8·f_s/(2·factor)), as MATLAB's ``decimate``; ``edge`` decimated samples are then dropped at
    each end (filter transients).
    """
    y = x if factor <= 1 else _decimate(x, factor, ftype="iir", axis=0, zero_phase=True)
    return y[edge: y.shape[0] - edge]


def _model_from_theta(theta: np.ndarray, names: list[str], axis: str,
                      stribeck: tuple[float, float] | None) -> JointModel:
    p = dict(zip(names, (float(v) for v in theta), strict=True))
    viscous = tuple((int(n[1:]), p[n]) for n in names if n.startswith("c") and n[1:].isdigit())
    kw = {}
    if stribeck is not None:
        kw = {"stribeck_velocity": float(stribeck[0]),
              "stribeck": ((float(stribeck[1]), p["stribeck"]),)}
    return JointModel(axis=axis, inertia=p["inertia"], gravity_cos=p.get("gravity_cos", 0.0),
                      gravity_sin=p.get("gravity_sin", 0.0), offset=p.get("offset", 0.0),
                      kind="static", coulomb=p["coulomb"], viscous=viscous, **kw)


def idim_ls(trajectories: Sequence[Trajectory], axis: str = "revolute", *,
            cutoff_hz: float = 100.0, decimate: int = 10,
            stribeck: tuple[float, float] | None = None,
            viscous_powers: Sequence[int] = (1,), order: int = 4,
            edge_s: float = 0.05, min_velocity: float = 0.0) -> JointModel:
    r"""Inverse dynamic identification model by least squares (IDIM-LS).

    For every trajectory: q_f = zero-phase Butterworth (``order``, ``cutoff_hz``) of q; q̇, q̈ by
    central differences of q_f; the observation matrix W(q_f, q̇, q̈) (:func:`idim_regressor`) and
    the measured τ are decimated in parallel (the same zero-phase Chebyshev low-pass on every
    column, then every ``decimate``-th sample); rows of all trajectories are stacked and

    .. math:: \hat\theta = \arg\min_\theta \|Y - W\theta\|_2^2,\qquad
              \sigma_{\hat\theta_j}^2 = \hat\sigma^2 [(W^\top W)^{-1}]_{jj},\quad
              \hat\sigma^2 = \|Y - W\hat\theta\|^2 / (r - k).

    Fixed model: I q̈ + a_c cos q + a_s sin q (revolute) or M q̈ + o (prismatic)
    + f_c sign(q̇) [+ A sign(q̇) exp(−|q̇/Ω_s|^δ)] + Σ_p c_p q̇^p.

    Parameters
    ----------
    trajectories : sequence of Trajectory
        Measured t [s], q [rad or m], τ [N·m or N], uniformly sampled.
    axis : {"revolute", "prismatic"}
    cutoff_hz : float
        Butterworth cutoff [Hz] (EMPS reference: 100 Hz at 1 kHz).
    decimate : int
        Decimation factor (1: none; EMPS reference: 10).
    stribeck : (Ω_s [rad/s], δ [-]), optional
        Fixed Stribeck shape; its amplitude A [N·m] is then estimated linearly.
    viscous_powers : sequence of int
        Powers p of the viscous terms c_p q̇^p.
    order : int
        Butterworth order (4).
    edge_s : float
        Time [s] dropped at each end of every trajectory (filter transients).
    min_velocity : float
        Rows with |q̇| below this [rad/s] (after decimation) are dropped, as is usual when the
        joint stops: at rest the friction is any value in [−f_s, f_s], not f_c sign(q̇).
        0 keeps all rows (the EMPS reference).

    Returns
    -------
    JointModel
        ``kind="static"``; ``extra["idim_ls"]`` holds the settings, the number of rows, the
        torque RMS residual and the relative standard deviations %σ of the parameters.
    """
    rows, ys = [], []
    names: list[str] = []
    for tr in trajectories:
        h = tr.dt
        qf, qd, qdd = _butterworth_derivatives(np.asarray(tr.q, float), h, cutoff_hz, order)
        W, names = idim_regressor(qf, qd, qdd, axis, stribeck, viscous_powers)
        edge = max(1, int(round(edge_s / (h * max(decimate, 1)))))
        keep = np.abs(_parallel_decimate(qd, decimate, edge)) >= min_velocity
        rows.append(_parallel_decimate(W, decimate, edge)[keep])
        ys.append(_parallel_decimate(np.asarray(tr.tau, float), decimate, edge)[keep])
    W = np.vstack(rows)
    y = np.concatenate(ys)
    theta, *_ = np.linalg.lstsq(W, y, rcond=None)
    resid = y - W @ theta
    r, k = W.shape
    s2 = float(resid @ resid) / max(r - k, 1)
    std = np.sqrt(s2 * np.diag(np.linalg.pinv(W.T @ W)))
    rel = 100.0 * std / np.maximum(np.abs(theta), 1e-300)
    model = _model_from_theta(theta, names, axis, stribeck)
    info = {"cutoff_hz": cutoff_hz, "decimate": decimate, "order": order, "rows": r,
            "min_velocity": min_velocity,
            "rmse": float(np.sqrt(np.mean(resid**2))),
            "relative_std_percent": dict(zip(names, rel.tolist(), strict=True))}
    return model.with_(extra={"method": "idim_ls", "idim_ls": info})


# --------------------------------------------------------------------------------------------
# Output-error LuGre fit


@dataclass(frozen=True)
class _Record:
    """One trajectory prepared for the torque-error fit: filtered q, q̇, q̈, τ and steps."""

    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    dt: float


@dataclass(frozen=True)
class _Layout:
    """Which free parameters the vector x holds, in order (see :func:`_pack`)."""

    axis: str
    fit_offset: bool
    n_stribeck: int
    powers: tuple[int, ...]
    tanh_k: float


def _prepare(trajectories: Sequence[Trajectory], cutoff_hz: float) -> list[_Record]:
    out = []
    for tr in trajectories:
        d = differentiate(tr.t, tr.q, tr.tau, method="butterworth", cutoff_hz=cutoff_hz)
        out.append(_Record(d.q, d.qd, d.qdd, d.tau, tr.dt))
    return out


def _complete_start(start: JointModel, sigma0: float, omega: float) -> JointModel:
    """Fill what a static start lacks: Stribeck term (δ = 2, A = f_c/4), Ω_s, σ0, σ1, c1."""
    m = start
    fc = max(abs(m.coulomb), 1e-3)
    if not m.stribeck or all(a <= 0 for _, a in m.stribeck):
        m = m.with_(stribeck=((2.0, 0.25 * fc),), stribeck_velocity=omega)
    m = m.with_(coulomb=fc, stribeck=tuple((d, max(a, 1e-3 * fc)) for d, a in m.stribeck))
    if m.kind != "lugre" or m.sigma0 <= 0:
        s0 = sigma0
        s1 = np.sqrt(s0 * max(m.inertia, 1e-6))
        m = m.with_(kind="lugre", sigma0=s0, sigma1=float(s1))
    if m.sigma1 <= 0:
        m = m.with_(sigma1=1e-3)
    if not m.viscous:
        m = m.with_(viscous=((1, 0.0),))
    return m


def _pack(m: JointModel, lay: _Layout) -> np.ndarray:
    r"""x = [I, a_c, a_s | o, ln f_c, ln A_i…, ln Ω_s, ln δ_i…, c_p…, ln σ0, ln σ1]."""
    x = [m.inertia]
    if lay.axis == "revolute":
        x += [m.gravity_cos, m.gravity_sin]
    if lay.fit_offset:
        x.append(m.offset)
    x.append(np.log(m.coulomb))
    x += [np.log(a) for _, a in m.stribeck]
    x.append(np.log(m.stribeck_velocity))
    x += [np.log(d) for d, _ in m.stribeck]
    x += [c for _, c in m.viscous]
    x += [np.log(m.sigma0), np.log(m.sigma1)]
    return np.array(x, dtype=float)


def _unpack(x: np.ndarray, lay: _Layout, template: JointModel) -> JointModel:
    i = 0

    def take(n: int) -> np.ndarray:
        nonlocal i
        v = x[i: i + n]
        i += n
        return v

    inertia = float(take(1)[0])
    a_c, a_s = (take(2) if lay.axis == "revolute" else (template.gravity_cos,
                                                        template.gravity_sin))
    offset = float(take(1)[0]) if lay.fit_offset else template.offset
    fc = float(np.exp(take(1)[0]))
    amps = np.exp(take(lay.n_stribeck))
    omega = float(np.exp(take(1)[0]))
    deltas = np.exp(take(lay.n_stribeck))
    coefs = take(len(lay.powers))
    s0, s1 = np.exp(take(2))
    return template.with_(
        inertia=inertia, gravity_cos=float(a_c), gravity_sin=float(a_s), offset=offset,
        kind="lugre", coulomb=fc, stribeck_velocity=omega,
        stribeck=tuple((float(d), float(a)) for d, a in zip(deltas, amps, strict=True)),
        viscous=tuple((p, float(c)) for p, c in zip(lay.powers, coefs, strict=True)),
        sigma0=float(s0), sigma1=float(s1))


def _bounds(x0: np.ndarray, lay: _Layout) -> tuple[np.ndarray, np.ndarray]:
    """Bounds: I ≥ 0; Ω_s ∈ [1e-4, 10]; δ ∈ [0.3, 5]; σ0 ∈ [1, 1e9]; σ1 ∈ [1e-4, 1e6]."""
    lo = np.full_like(x0, -np.inf)
    hi = np.full_like(x0, np.inf)
    lo[0] = 0.0
    j = 1 + (2 if lay.axis == "revolute" else 0) + int(lay.fit_offset)
    lo[j], hi[j] = np.log(1e-6), np.log(1e6)  # f_c
    j += 1
    lo[j: j + lay.n_stribeck], hi[j: j + lay.n_stribeck] = np.log(1e-6), np.log(1e6)
    j += lay.n_stribeck
    lo[j], hi[j] = np.log(1e-4), np.log(10.0)
    j += 1
    lo[j: j + lay.n_stribeck], hi[j: j + lay.n_stribeck] = np.log(0.3), np.log(5.0)
    lo[-2], hi[-2] = np.log(1.0), np.log(1e9)
    lo[-1], hi[-1] = np.log(1e-4), np.log(1e6)
    return lo, hi


def _torque_residual(m: JointModel, records: Sequence[_Record]) -> np.ndarray:
    """τ̂ − τ over all records, z integrated from 0 along the filtered velocity [N·m]."""
    return np.concatenate([m.torque(r.q, r.qd, r.qdd, r.dt) - r.tau for r in records])


def output_error_lugre(trajectories: Sequence[Trajectory], axis: str, start: JointModel, *,
                       max_nfev: int = 200, cutoff_hz: float = 20.0, sigma0_start: float = 1e4,
                       stribeck_velocity_start: float = 0.05, fit_offset: bool | None = None,
                       ftol: float = 1e-8) -> JointModel:
    r"""All LuGre and rigid-body parameters by bounded nonlinear least squares on the torque error.

    .. math:: \min_x \sum_k \big(I\ddot q_k + a_c\cos q_k + a_s\sin q_k + o
              + \sigma_0 z_k + \sigma_1 \dot z_k + \textstyle\sum_p c_p \dot q_k^p - \tau_k\big)^2

    with z integrated along the measured velocity by :func:`sparsefric.lugre.integrate_z`
    (exact exponential update, z(0) = 0).  q̇, q̈ and τ come from a zero-phase 4th-order
    Butterworth low-pass (``cutoff_hz``) and central differences.  Positive parameters (f_c, A_i,
    Ω_s, δ_i, σ0, σ1) are optimised by their logarithm and all are bounded (see ``_bounds``);
    the solver is ``scipy.optimize.least_squares`` (trust-region reflective, finite-difference
    Jacobian, ``x_scale="jac"``).

    Parameters
    ----------
    trajectories : sequence of Trajectory
    axis : {"revolute", "prismatic"}
    start : JointModel
        Initial guess, typically :func:`idim_ls`.  A static start gets σ0 = ``sigma0_start``
        [N·m/rad], σ1 = √(σ0 I) [N·m·s/rad], and if it has no Stribeck term one with δ = 2,
        A = f_c/4 and Ω_s = ``stribeck_velocity_start`` [rad/s].  Its viscous powers are kept.
    max_nfev : int
        Largest number of residual evaluations (a Jacobian costs one per parameter).
    cutoff_hz : float
        Butterworth cutoff [Hz] of the differentiation.
    fit_offset : bool, optional
        Fit the offset o (default: for a prismatic axis only).
    ftol : float
        Relative cost tolerance of the solver.

    Returns
    -------
    JointModel
        ``kind="lugre"``; ``extra["output_error"]`` holds nfev and njev (solver counts),
        ``evaluations`` (all residual evaluations, finite-difference Jacobians included), wall
        time [s], the start and final torque RMS errors [N·m] against the filtered torque, the
        solver status and message.
    """
    records = _prepare(trajectories, cutoff_hz)
    m0 = _complete_start(start.with_(axis=axis), sigma0_start, stribeck_velocity_start)
    lay = _Layout(axis=axis, fit_offset=(axis == "prismatic") if fit_offset is None
                  else bool(fit_offset), n_stribeck=len(m0.stribeck),
                  powers=tuple(int(p) for p, _ in m0.viscous), tanh_k=m0.tanh_k)
    x0 = _pack(m0, lay)
    lo, hi = _bounds(x0, lay)
    x0 = np.clip(x0, lo + 1e-12, hi - 1e-12)
    n = sum(r.q.size for r in records)
    calls = [0]

    def fun(x: np.ndarray) -> np.ndarray:
        calls[0] += 1
        res = _torque_residual(_unpack(x, lay, m0), records)
        return np.nan_to_num(res, nan=1e6, posinf=1e6, neginf=-1e6) / np.sqrt(n)

    t0 = time.perf_counter()
    sol = least_squares(fun, x0, bounds=(lo, hi), x_scale="jac", max_nfev=max_nfev,
                        ftol=ftol, xtol=1e-10, method="trf")
    wall = time.perf_counter() - t0
    model = _unpack(sol.x, lay, m0)
    info = {"nfev": int(sol.nfev), "njev": int(sol.njev or 0), "evaluations": calls[0],
            "wall_time_s": wall, "rmse_start": float(np.sqrt(np.mean(fun(x0) ** 2) * n)),
            "rmse": float(np.sqrt(np.mean(sol.fun**2) * n)), "status": int(sol.status),
            "message": str(sol.message), "cutoff_hz": cutoff_hz, "samples": int(n),
            "parameters": int(x0.size)}
    return model.with_(extra={"method": "output_error_lugre", "output_error": info})


def output_error_multistart(trajectories: Sequence[Trajectory], axis: str, start: JointModel,
                            sigma0_starts: Sequence[float], **options: Any) -> JointModel:
    """:func:`output_error_lugre` from each σ0 start, keeping the lowest torque RMS error.

    The comparison with sparsefric on equal terms when σ0 is not known beforehand: the same
    starts as its multi-start (:func:`sparsefric.identify.default_sigma0_starts`). ``options``
    go to every fit. ``extra["output_error"]`` is the kept fit's, with ``starts`` and the
    summed ``wall_time_s`` and ``evaluations`` of all fits.
    """
    fits = [output_error_lugre(trajectories, axis, start, sigma0_start=float(s0), **options)
            for s0 in sigma0_starts]
    best = min(fits, key=lambda m: m.extra["output_error"]["rmse"])
    info = dict(best.extra["output_error"], starts=[float(s) for s in sigma0_starts],
                wall_time_s=sum(m.extra["output_error"]["wall_time_s"] for m in fits),
                evaluations=sum(m.extra["output_error"]["evaluations"] for m in fits))
    return best.with_(extra={"method": "output_error_multistart", "output_error": info})


# --------------------------------------------------------------------------------------------
# Classical two-step identification


def _static_columns(v: np.ndarray, omega: float, delta: float,
                    powers: Sequence[int]) -> np.ndarray:
    s = np.sign(v)
    cols = [s, s * np.exp(-np.abs(v / omega) ** delta)] + [v ** int(p) for p in powers]
    return np.column_stack(cols)


def fit_static_curve(velocity: np.ndarray, friction: np.ndarray, *,
                     viscous_powers: Sequence[int] = (1,), delta: float | None = None,
                     ) -> tuple[float, float, float, float, tuple[tuple[int, float], ...]]:
    r"""Static friction curve from constant-velocity points by nonlinear least squares.

    .. math:: \tau_f(v) = \operatorname{sign}(v)\big(f_c + A e^{-|v/\Omega_s|^\delta}\big)
              + \textstyle\sum_p c_p v^p     \qquad\text{(seed eq. 5.13–5.14)}

    Start: for δ = 2 (or the given δ) and Ω_s on a log grid, the linear parameters (f_c, A, c_p)
    by least squares; the best grid point starts ``least_squares`` over
    (ln f_c, ln A, ln Ω_s, ln δ, c_p) (δ fixed if given).

    Parameters
    ----------
    velocity : ndarray
        Constant velocities v [rad/s] (both signs allowed; 0 is ignored).
    friction : ndarray
        Friction torque τ_f [N·m] measured at each velocity.
    viscous_powers : sequence of int
    delta : float, optional
        Fixed Stribeck exponent; default: fitted.

    Returns
    -------
    (f_c [N·m], A [N·m], Ω_s [rad/s], δ [-], ((p, c_p), ...))
    """
    v = np.asarray(velocity, float)
    y = np.asarray(friction, float)
    keep = v != 0
    v, y = v[keep], y[keep]
    d0 = 2.0 if delta is None else float(delta)
    vmax = float(np.max(np.abs(v)))
    grid = np.geomspace(max(float(np.min(np.abs(v))) / 3, 1e-5), vmax, 60)
    best = None
    for om in grid:
        X = _static_columns(v, om, d0, viscous_powers)
        th, *_ = np.linalg.lstsq(X, y, rcond=None)
        sse = float(np.sum((X @ th - y) ** 2))
        if th[0] > 0 and th[1] > 0 and (best is None or sse < best[0]):
            best = (sse, om, th)
    if best is None:  # no Stribeck dip: a small one so that logs exist
        X = _static_columns(v, grid[0], d0, viscous_powers)
        th, *_ = np.linalg.lstsq(X, y, rcond=None)
        th[0] = max(th[0], 1e-3)
        th[1] = 1e-3 * th[0]
        best = (0.0, float(grid[0]), th)
    _, om, th = best
    fix_delta = delta is not None
    np_ = len(viscous_powers)

    def unpack(x: np.ndarray) -> tuple[float, float, float, float, np.ndarray]:
        fc, a, w = np.exp(x[:3])
        d = d0 if fix_delta else float(np.exp(x[3]))
        return float(fc), float(a), float(w), d, x[-np_:] if np_ else np.zeros(0)

    def fun(x: np.ndarray) -> np.ndarray:
        fc, a, w, d, c = unpack(x)
        return _static_columns(v, w, d, viscous_powers) @ np.concatenate([[fc, a], c]) - y

    x0 = [np.log(th[0]), np.log(max(th[1], 1e-6)), np.log(om)]
    lo = [np.log(1e-6), np.log(1e-9), np.log(1e-5)]
    hi = [np.log(1e6), np.log(1e6), np.log(max(10 * vmax, 1e-3))]
    if not fix_delta:
        x0.append(np.log(d0))
        lo.append(np.log(0.3))
        hi.append(np.log(5.0))
    x0 += list(th[2:])
    lo += [-np.inf] * np_
    hi += [np.inf] * np_
    x0 = np.clip(np.array(x0), np.array(lo) + 1e-9, np.array(hi) - 1e-9)
    sol = least_squares(fun, x0, bounds=(lo, hi), x_scale="jac")
    fc, a, w, d, c = unpack(sol.x)
    return fc, a, w, d, tuple((int(p), float(ci)) for p, ci in zip(viscous_powers, c,
                                                                    strict=True))


def _lowpass_decimate(x: np.ndarray, factor: int) -> np.ndarray:
    return x if factor <= 1 else _decimate(x, factor, ftype="iir", zero_phase=True)


def _arx_simulate(th: np.ndarray, u: np.ndarray, y0: np.ndarray, discretisation: str,
                  ) -> np.ndarray:
    """Noise-free output of the fitted ARX model driven by u (the instruments' source)."""
    a1, a0 = th[0], th[1]
    b = th[2:-1]
    c = th[-1]
    x = np.empty(u.size)
    x[:2] = y0[:2]
    for k in range(2, u.size):
        forced = b[0] * u[k - 2] if discretisation == "euler" else b[0] * u[k - 1] + b[1] * u[k - 2]
        x[k] = -a1 * x[k - 1] - a0 * x[k - 2] + forced + c
    return x


def _iv_step(th: np.ndarray, X: np.ndarray, y: np.ndarray, u: np.ndarray,
             discretisation: str) -> np.ndarray:
    r"""One instrumental-variable update θ = (Zᵀ X)⁻¹ Zᵀ y with Z = X whose output lags are
    replaced by the simulated model output (uncorrelated with the output noise)."""
    x = _arx_simulate(th, u, y, discretisation)
    if not np.all(np.isfinite(x)) or np.max(np.abs(x)) > 1e6 * (np.max(np.abs(y)) + 1e-300):
        return th
    Z = X.copy()
    Z[:, 0] = -x[1:-1]
    Z[:, 1] = -x[:-2]
    new, *_ = np.linalg.lstsq(Z.T @ X, Z.T @ y[2:], rcond=None)
    return new


def fit_presliding_arx(q: np.ndarray, u: np.ndarray, h: float, *, decimate: int = 1,
                       discretisation: str = "zoh", instrumental: int = 0,
                       ) -> tuple[float, float, float, dict]:
    r"""Mass–spring–damper I q̈ + d q̇ + σ0 q = u from a pre-sliding record by ARX least squares.

    In pre-sliding (|σ0 z| ≪ g, so ż ≈ q̇, z ≈ q − q_0) the joint obeys (seed eq. 5.15)

    .. math:: I\ddot q + (\sigma_1 + c_1)\dot q + \sigma_0 (q - q_0) = u,
              \qquad G(s) = \frac{1/I}{s^2 + (d/I)s + \sigma_0/I},\quad d = \sigma_1 + c_1.

    The record (optionally low-pass filtered and decimated by ``decimate``, the same filter on q
    and u) is fitted by linear least squares (seed eq. 5.18–5.19, plus a constant column for
    q_0 and gravity):

    * ``"euler"`` (the seed's eq. 5.17, s = (z − 1)/T):
      q_{k} = −a_1 q_{k−1} − a_0 q_{k−2} + b_0 u_{k−2} + c, then I = T²/b_0,
      d = I (a_1 + 2)/T, σ0 = I (1 + a_1 + a_0)/T².
    * ``"zoh"`` (exact for a held input, less biased at high sampling rates):
      q_{k} = −a_1 q_{k−1} − a_0 q_{k−2} + b_1 u_{k−1} + b_0 u_{k−2} + c; the poles p_i of
      z² + a_1 z + a_0 map to s_i = ln(p_i)/T; ω² = s_1 s_2, d/I = −(s_1 + s_2); the static gain
      (b_1 + b_0)/(1 + a_1 + a_0) = 1/σ0; I = σ0/ω².

    Parameters
    ----------
    q : ndarray
        Position [rad].
    u : ndarray
        Applied torque [N·m].
    h : float
        Sample period [s].
    decimate : int
        Zero-phase Chebyshev low-pass and decimation factor applied to q and u first.
    discretisation : {"zoh", "euler"}
    instrumental : int
        Number of instrumental-variable refinements (0: plain least squares, the seed's
        eq. 5.19).  LS is biased by output noise (the seed's remark); each IV step replaces the
        measured output lags in the instruments by the output of the current model simulated
        from u.

    Returns
    -------
    (σ0 [N·m/rad], d = σ1 + c1 [N·m·s/rad], I [kg·m²], info)
    """
    qd_ = _lowpass_decimate(np.asarray(q, float), decimate)
    ud_ = _lowpass_decimate(np.asarray(u, float), decimate)
    T = h * max(decimate, 1)
    edge = 5 if decimate > 1 else 0
    qd_, ud_ = qd_[edge: qd_.size - edge], ud_[edge: ud_.size - edge]
    q0 = float(np.mean(qd_))
    y = qd_ - q0  # centred: better conditioned, the constant column takes the rest
    one = np.ones(y.size - 2)
    if discretisation == "euler":
        X = np.column_stack([-y[1:-1], -y[:-2], ud_[:-2], one])
    elif discretisation == "zoh":
        X = np.column_stack([-y[1:-1], -y[:-2], ud_[1:-1], ud_[:-2], one])
    else:
        raise ValueError(f"discretisation must be 'euler' or 'zoh', got {discretisation!r}")
    th, *_ = np.linalg.lstsq(X, y[2:], rcond=None)
    for _ in range(instrumental):
        th = _iv_step(th, X, y, ud_, discretisation)
    a1, a0 = float(th[0]), float(th[1])
    if discretisation == "euler":
        b0 = float(th[2])
        inertia = T**2 / b0
        damping = inertia * (a1 + 2.0) / T
        sigma0 = inertia * (1.0 + a1 + a0) / T**2
    else:
        b1, b0 = float(th[2]), float(th[3])
        s = np.log(np.roots([1.0, a1, a0]).astype(complex)) / T
        omega2 = float(np.real(s[0] * s[1]))
        sigma0 = (1.0 + a1 + a0) / (b1 + b0)
        inertia = sigma0 / omega2
        damping = -float(np.real(s[0] + s[1])) * inertia
    info = {"a": [a1, a0], "b": [float(b) for b in th[2:-1]], "T": T,
            "discretisation": discretisation, "decimate": decimate}
    return float(sigma0), float(damping), float(inertia), info


def two_step_lugre(cve_points: tuple[np.ndarray, np.ndarray], presliding_trajectory: Trajectory,
                   axis: str = "revolute", *, viscous_powers: Sequence[int] = (1,),
                   delta: float | None = None, decimate: int = 5,
                   discretisation: str = "zoh", instrumental: int = 3,
                   rigid_body: JointModel | None = None) -> JointModel:
    r"""Classical two-step LuGre identification (Canudas de Wit & Lischinsky; Festo seed §5).

    1. Static parameters (f_c, A = f_s − f_c, Ω_s, δ, c_p) from constant-velocity friction points
       by nonlinear least squares (:func:`fit_static_curve`).
    2. σ0, d = σ1 + c_1 and I from the pre-sliding record by ARX least squares with
       instrumental-variable refinement (:func:`fit_presliding_arx`); σ1 = d − c_1 (the
       viscous slope of step 1).

    Parameters
    ----------
    cve_points : (ndarray, ndarray)
        Velocities v [rad/s] and steady friction torques τ_f [N·m] (e.g. from constant-velocity
        experiments; gravity and inertia already removed).
    presliding_trajectory : Trajectory
        Small torque below break-away (see :func:`presliding_experiment`); ``tau`` is the applied
        torque [N·m], ``q`` the angle [rad].
    axis : {"revolute", "prismatic"}
    viscous_powers : sequence of int
    delta : float, optional
        Fixed Stribeck exponent (default fitted).
    decimate : int
        Low-pass + decimation factor of the pre-sliding record before the ARX fit.
    discretisation : {"zoh", "euler"}
        ARX parametrisation (``"euler"`` is the seed's eq. 5.17).
    instrumental : int
        Instrumental-variable refinements of the ARX fit (0: the seed's plain LS, biased by
        position noise; the seed names IV as the remedy).
    rigid_body : JointModel, optional
        Source of a_c, a_s and o (e.g. :func:`idim_ls`); default 0.  I always comes from step 2.

    Returns
    -------
    JointModel
        ``kind="lugre"``; ``extra["two_step"]`` holds the ARX coefficients and d.
    """
    v, tf = (np.asarray(a, float) for a in cve_points)
    fc, amp, omega, dlt, viscous = fit_static_curve(v, tf, viscous_powers=viscous_powers,
                                                    delta=delta)
    tr = presliding_trajectory
    sigma0, damping, inertia, info = fit_presliding_arx(
        tr.q, tr.tau, tr.dt, decimate=decimate, discretisation=discretisation,
        instrumental=instrumental)
    c1 = dict(viscous).get(1, 0.0)
    rb = rigid_body or JointModel(axis=axis)
    info = {**info, "damping": damping, "inertia": inertia}
    return JointModel(axis=axis, inertia=inertia, gravity_cos=rb.gravity_cos,
                      gravity_sin=rb.gravity_sin, offset=rb.offset, kind="lugre",
                      coulomb=fc, stribeck_velocity=omega, stribeck=((dlt, amp),),
                      viscous=viscous, sigma0=sigma0, sigma1=damping - c1,
                      extra={"method": "two_step_lugre", "two_step": info})


def presliding_experiment(model: JointModel, amplitude_fraction: float = 0.1,
                          duration: float = 2.0, seed: int = 0, *,
                          sensors: Sensors | None = None, period: float = 1e-3,
                          f_low: float = 0.5, f_high: float | None = None,
                          n_tones: int = 12) -> Trajectory:
    r"""Simulate a pre-sliding experiment: open loop, torque below break-away.

    τ(t) = a_c cos q_0 + a_s sin q_0 + o + u(t), q_0 = 0, with u a random-phase multisine of peak
    ``amplitude_fraction``·τ_break (τ_break = :meth:`JointModel.breakaway_torque`) on ``n_tones``
    log-spaced tones from ``f_low`` to ``f_high`` (default 3× the pre-sliding resonance
    √(σ0/I)/2π, at most 0.2/period).  Gravity is held at its value at q_0 (the deflections are
    micro-radians).

    Parameters
    ----------
    model : JointModel
        Truth (LuGre).
    amplitude_fraction : float
        Peak of u as a fraction of the break-away torque.  The seed asks τ_e < τ_s/10 so that
        ż ≈ q̇; at 0.5 the bristle hysteresis makes the linear model wrong (σ0 −50 % on
        data/example's truth), hence the default 0.1.
    duration : float
        Length [s].
    seed : int
        Seed of the multisine phases and of the sensor noise.
    sensors : Sensors, optional
        Default: the simulator's default sensors with this ``seed``.

    Returns
    -------
    Trajectory
        ``tau`` is the measured applied torque [N·m]; truth columns attached.
    """
    fn = np.sqrt(max(model.sigma0, 1.0) / max(model.inertia, 1e-9)) / (2 * np.pi)
    fh = min(3.0 * fn, 0.2 / period) if f_high is None else f_high
    amp = amplitude_fraction * model.breakaway_torque()
    _, u = multisine(duration, amp, f_low, fh, n_tones=n_tones, period=period, seed=seed)
    hold = model.rigid_body_torque(np.zeros(1), np.zeros(1))[0]
    sens = sensors or Sensors(seed=seed)
    return simulate(model, tau_ff=hold + u, sensors=sens, q0=0.0, period=period,
                    name=f"presliding_{amplitude_fraction:g}")
