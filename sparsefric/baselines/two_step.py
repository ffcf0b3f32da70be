r"""Classical two-step LuGre identification (Canudas de Wit & Lischinsky; Festo seed §5).

* :func:`fit_static_curve` — static curve from constant-velocity friction points by nonlinear
  least squares;
* :func:`fit_presliding_arx` — σ0, σ1 and I from a pre-sliding experiment by least squares on a
  second-order ARX model (with instrumental-variable refinement);
* :func:`two_step_lugre` — both steps;
* :func:`presliding_experiment` — simulates that pre-sliding experiment for a truth model.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.optimize import least_squares
from scipy.signal import decimate as _decimate

from sparsefric.data import Trajectory
from sparsefric.model import JointModel
from sparsefric.simulate import Sensors, multisine, simulate


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
        ż ≈ q̇; at larger amplitudes the bristle hysteresis makes the linear model wrong
        (``DESIGN.md`` §20), hence the default 0.1.
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
