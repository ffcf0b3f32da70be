r"""IDIM-LS: the robotics standard (Gautier, Janot) — a fixed inverse dynamic model by linear least
squares, with a zero-phase Butterworth filter of q, central differences and parallel decimation.
Reproduces the published EMPS reference.

Model (ALGORITHM.md §1), SI units (rad, rad/s, N·m; m, m/s, N for a prismatic axis)::

    τ = I q̈ + a_c cos q + a_s sin q (or + o) + f_c sign(q̇)
        [+ A sign(q̇) e^{−|q̇/Ω_s|^δ}] + Σ_p c_p q̇^p
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.signal import butter, sosfiltfilt
from scipy.signal import decimate as _decimate

from sparsefric.data import Trajectory
from sparsefric.model import JointModel


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
