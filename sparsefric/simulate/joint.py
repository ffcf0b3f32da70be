"""Joint simulator: rigid body + LuGre friction, closed-loop or open-loop, with sensor models.

The joint obeys ``I q̈ = τ − a_c cos q − a_s sin q − o − τ_f`` with τ_f from the LuGre model of
:mod:`sparsefric.lugre`. It is driven either by a sampled PD + feed-forward position controller
tracking trapezoidal back-and-forth moves (the experiment of Mahmoudkhani et al. 2023, §5), or by an
open-loop torque signal (multisine, chirp, a small pre-sliding excitation, or from a file).

Integration: the controller is sampled at the control period T (zero-order hold); the plant is
advanced with ``substeps`` sub-steps of h = T/substeps — the bristle state z by the exact
exponential update :func:`sparsefric.lugre.z_step`, then q̇ and q by semi-implicit Euler. Sensor
noise, encoder quantisation and torque noise are drawn from a seeded generator, so a run is
reproducible. The recorded torque at sample k is the command applied during [t_k, t_k + T).
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from sparsefric.data import Trajectory
from sparsefric.errors import OptionError
from sparsefric.lugre import g_at, viscous_at, z_step
from sparsefric.model import JointModel
from sparsefric.options import check_finite, check_integer, check_positive
from sparsefric.simulate.excitation import trapezoid_moves


@dataclass(frozen=True)
class Sensors:
    """Measurement models, all seeded.

    Attributes
    ----------
    encoder_resolution : float
        Quantisation step of the position [rad] (0: none). 2π/2²⁰ for a 20-bit encoder.
    position_noise : float
        Standard deviation of additive position noise [rad], before quantisation.
    torque_noise : float
        Standard deviation of additive torque noise [N·m].
    seed : int
        Seed of the noise generator.
    """

    encoder_resolution: float = 2 * np.pi / 2**20
    position_noise: float = 5e-6
    torque_noise: float = 0.2
    seed: int = 0


@dataclass(frozen=True)
class Controller:
    """PD + feed-forward position controller, sampled at ``1/period`` Hz.

    τ = I q̈_ref + a_c cos q_ref + a_s sin q_ref + o + k_p (q_ref − q_m) + k_d (q̇_ref − v̂),
    with v̂ a first-order low-pass (``velocity_filter_hz``) of the backward difference of q_m.
    ``None`` gains are set from the inertia for a ``bandwidth_hz`` closed loop (ζ = 0.8).
    """

    period: float = 1e-3
    kp: float | None = None
    kd: float | None = None
    bandwidth_hz: float = 15.0
    velocity_filter_hz: float = 150.0

    def gains(self, inertia: float) -> tuple[float, float]:
        """(k_p [N·m/rad], k_d [N·m·s/rad])."""
        w = 2 * np.pi * self.bandwidth_hz
        kp = self.kp if self.kp is not None else inertia * w**2
        kd = self.kd if self.kd is not None else 2 * 0.8 * inertia * w
        return float(kp), float(kd)


# ---------------------------------------------------------------------------- the kernel
@numba.njit(cache=True)
def _simulate(q_ref, qd_ref, tau_ff, kp, kd, alpha, T, substeps,  # noqa: PLR0913 - numba
              inertia, a_c, a_s, offset,
              fc, omega, deltas, amps, powers, coefs, k, sigma0, sigma1,
              pos_noise, resolution, q0, qd0, z0):
    n = tau_ff.shape[0]
    q_true = np.empty(n)
    qd_true = np.empty(n)
    qdd_true = np.empty(n)
    z_true = np.empty(n)
    q_meas = np.empty(n)
    tau = np.empty(n)
    q, qd, z = q0, qd0, z0
    h = T / substeps
    v_est = qd0
    for i in range(n):
        qm = q + pos_noise[i]
        if resolution > 0.0:
            qm = np.round(qm / resolution) * resolution
        q_meas[i] = qm
        if i > 0:
            v_est += alpha * ((qm - q_meas[i - 1]) / T - v_est)
        u = tau_ff[i] + kp * (q_ref[i] - qm) + kd * (qd_ref[i] - v_est)
        tau[i] = u
        for j in range(substeps):
            g = g_at(qd, fc, omega, deltas, amps)
            z_new = z_step(z, qd, g, sigma0, k, h)
            zd_inst = (z_new - z) / h
            friction = sigma0 * z_new + sigma1 * zd_inst + viscous_at(qd, powers, coefs)
            acc = (u - a_c * np.cos(q) - a_s * np.sin(q) - offset - friction) / inertia
            if j == 0:
                q_true[i] = q
                qd_true[i] = qd
                qdd_true[i] = acc
                z_true[i] = z
            z = z_new
            qd += acc * h
            q += qd * h
    return q_true, qd_true, qdd_true, z_true, q_meas, tau


#: Coulomb level [N·m or N] given to a static model without Coulomb–Stribeck friction when it
#: is simulated as LuGre (g = 0 has no bristle steady state: ż = q̇ − σ0|q̇|z/g divides by it).
NO_FRICTION_LEVEL = 1e-9


def as_lugre(model: JointModel) -> JointModel:
    """``model`` as a LuGre model: a static one gets a stiff bristle (0.1 mrad pre-sliding
    deflection, critically damped against the inertia).

    A model with no Coulomb–Stribeck level (only viscous friction) gets a negligible one,
    :data:`NO_FRICTION_LEVEL`: with g = 0 the bristle equation divides by zero.
    """
    if model.kind == "lugre":
        return model
    if not model.g0 > 0:
        model = model.with_(coulomb=NO_FRICTION_LEVEL, stribeck=())
    sigma0 = max(model.g0, 1e-6) / 1e-4
    return model.with_(kind="lugre", sigma0=sigma0,
                       sigma1=2 * np.sqrt(sigma0 * max(model.inertia, 1e-9)))


def _check_inertia(model: JointModel) -> None:
    if not model.inertia > 0:
        raise ValueError("a joint with zero inertia cannot be simulated (rigid_body.inertia ≤ 0)")


def _gravity(model: JointModel) -> tuple[float, float]:
    """(a_c, a_s) [N·m]; a prismatic axis has none."""
    return (model.gravity_cos, model.gravity_sin) if model.axis == "revolute" else (0.0, 0.0)


#: Most integration steps one free run takes in all when a stiff model needs more sub-steps
#: than asked for (under a second of compiled integration); beyond it the run may diverge.
MAX_FREE_RUN_STEPS = 5_000_000


def stable_substeps(model: JointModel, dt: float, substeps: int, n: int = 1,
                    speed: float = 0.0) -> int:
    """Sub-steps per sample period ``dt`` [s] that integrate ``model`` stably.

    The velocity is advanced by semi-implicit Euler with the friction of the step before, which
    diverges once a sub-step h exceeds twice the shortest time constant of the velocity: the
    damping I/(σ1 + dτ_v/dq̇) or the bristle's 1/√(σ0/I). With a poorly determined inertia
    (I = 2.6e-4 kg·m² against σ1 = 128 N·m·s/rad: a time constant of 2 µs) the 10 sub-steps of a
    1 ms sample overflow within a few samples. The count returned makes h at most that time
    constant, and at least ``substeps``; it is capped so that ``n`` samples take at most
    :data:`MAX_FREE_RUN_STEPS` steps.

    Parameters
    ----------
    model : JointModel
        A LuGre model (:func:`as_lugre`) with inertia > 0.
    dt : float
        Sample period [s].
    substeps : int
        The sub-steps asked for.
    n : int
        Number of samples of the run.
    speed : float
        Largest |q̇| [rad/s] the run is expected to reach (the slope of the viscous terms of
        power > 1 grows with it).
    """
    slope = sum(abs(p * c) * speed ** (p - 1) for p, c in model.viscous)
    rate = max((model.sigma1 + slope) / model.inertia, np.sqrt(model.sigma0 / model.inertia))
    needed = int(np.ceil(dt * rate)) if np.isfinite(rate) else substeps
    cap = max(substeps, MAX_FREE_RUN_STEPS // max(n, 1))
    return max(substeps, min(needed, cap))


def _speed_scale(model: JointModel, qd0: float) -> float:
    """Largest |q̇| [rad/s] a free run from ``qd0`` is expected to reach: that of the model's
    identification data when recorded."""
    v = model.validity.velocity if model.validity is not None else None
    return max(abs(qd0), *(abs(x) for x in v)) if v else abs(qd0)


def free_run(model: JointModel, tau: np.ndarray, q0: float, qd0: float = 0.0, z0: float = 0.0,
             dt: float = 1e-3, substeps: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """Open-loop, noise-free run of ``model``'s equation of motion driven by ``tau`` [N·m].

    Starts from position ``q0`` [rad], velocity ``qd0`` [rad/s] and bristle deflection ``z0``
    [rad]; sample k of ``tau`` is applied during [t_k, t_k + dt). A static model runs with the
    stiff bristle of :func:`as_lugre`. A stiff model is integrated with more than ``substeps``
    sub-steps per sample (:func:`stable_substeps`). Returns q [rad] and q̇ [rad/s] at the
    samples. :class:`~sparsefric.errors.OptionError` names an input it cannot integrate (a
    torque that is not finite, a ``dt`` ≤ 0, a start that is not finite): the run would be
    NaN throughout.
    """
    _check_inertia(model)
    tau = np.asarray(tau, dtype=float)
    if tau.ndim != 1 or not np.isfinite(tau).all():
        raise OptionError("tau", "must be a 1-D array of finite torques")
    check_positive("dt", dt)
    substeps = check_integer("substeps", substeps, 1)
    q0, qd0, z0 = (check_finite(name, v) for name, v in (("q0", q0), ("qd0", qd0), ("z0", z0)))
    m = as_lugre(model)
    n = len(tau)
    substeps = stable_substeps(m, dt, int(substeps), n, _speed_scale(m, qd0))
    zeros = np.zeros(n)
    a_c, a_s = _gravity(m)
    out = _simulate(zeros, zeros, np.ascontiguousarray(tau, dtype=float), 0.0, 0.0, 0.0,
                    float(dt), int(substeps), m.inertia, a_c, a_s, m.offset,
                    *m.friction.as_tuple(), m.sigma0, m.sigma1, zeros, 0.0, float(q0),
                    float(qd0), float(z0))
    return out[0], out[1]


def simulate(model: JointModel, *, tau_ff: np.ndarray,  # noqa: PLR0913 - keyword options
             q_ref: np.ndarray | None = None,
             qd_ref: np.ndarray | None = None, controller: Controller | None = None,
             sensors: Sensors = Sensors(), substeps: int = 10, q0: float | None = None,
             qd0: float = 0.0, period: float | None = None,
             name: str = "simulated") -> Trajectory:
    """Simulate the joint and return the measured trajectory with the truth attached.

    Parameters
    ----------
    model : JointModel
        The truth; a static model is simulated with a stiff bristle.
    tau_ff : ndarray
        Feed-forward (closed loop) or the whole applied torque (open loop) [N·m], one per sample.
    q_ref, qd_ref : ndarray, optional
        Reference position [rad] and velocity [rad/s]; with ``controller`` they close the loop.
    controller : Controller, optional
        ``None``: open loop, the torque is ``tau_ff``.
    period : float, optional
        Sample period [s] (default: the controller's, 1 ms).
    sensors : Sensors
        Encoder quantisation, position and torque noise, seed.
    substeps : int
        Plant sub-steps per control period.
    q0, qd0 : float
        Initial position [rad] (default: ``q_ref[0]`` or 0) and velocity [rad/s].

    Returns
    -------
    Trajectory
        ``t, q, tau`` as measured; ``truth`` holds ``q_true, qd_true, qdd_true, z_true``.
    """
    _check_inertia(model)
    m = as_lugre(model)
    ctrl = controller or Controller(period=period or 1e-3)
    if period is not None and controller is not None and period != controller.period:
        raise ValueError("period and controller.period disagree")
    n = len(tau_ff)
    closed = controller is not None and q_ref is not None
    kp, kd = ctrl.gains(m.inertia) if closed else (0.0, 0.0)
    q_ref = np.zeros(n) if q_ref is None else np.asarray(q_ref, dtype=float)
    qd_ref = np.zeros(n) if qd_ref is None else np.asarray(qd_ref, dtype=float)
    start = float(q_ref[0]) if q0 is None else float(q0)
    rng = np.random.default_rng(sensors.seed)
    pos_noise = rng.normal(0.0, sensors.position_noise, n)
    tau_noise = rng.normal(0.0, sensors.torque_noise, n)
    alpha = 1.0 - np.exp(-2 * np.pi * ctrl.velocity_filter_hz * ctrl.period)
    a_c, a_s = _gravity(m)
    q_t, qd_t, qdd_t, z_t, q_m, tau = _simulate(
        q_ref, qd_ref, np.asarray(tau_ff, dtype=float), kp, kd, alpha, ctrl.period, int(substeps),
        m.inertia, a_c, a_s, m.offset, *m.friction.as_tuple(), m.sigma0, m.sigma1, pos_noise,
        float(sensors.encoder_resolution), start, float(qd0), 0.0)
    t = np.arange(n) * ctrl.period
    truth = {"q_true": q_t, "qd_true": qd_t, "qdd_true": qdd_t, "z_true": z_t}
    return Trajectory(t=t, q=q_m, tau=tau + tau_noise, name=name, truth=truth)


def simulate_moves(model: JointModel, q_low: float, q_high: float,  # noqa: PLR0913
                   velocity: float,
                   acceleration: float, *, dwell: float = 0.5, cycles: int = 1,
                   controller: Controller = Controller(), sensors: Sensors = Sensors(),
                   substeps: int = 10, name: str = "moves") -> Trajectory:
    """Closed-loop trapezoidal back-and-forth moves (the main paper's experiment)."""
    _, q_ref, qd_ref, qdd_ref = trapezoid_moves(q_low, q_high, velocity, acceleration, dwell,
                                                cycles, controller.period)
    ff = model.with_(kind="static").rigid_body_torque(q_ref, qdd_ref)
    return simulate(model, tau_ff=ff, q_ref=q_ref, qd_ref=qd_ref, controller=controller,
                    sensors=sensors, substeps=substeps, name=name)
