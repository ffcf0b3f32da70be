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
from sparsefric.lugre import g_at, viscous_at, z_step
from sparsefric.model import JointModel


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


# ---------------------------------------------------------------------------- reference moves
def trapezoid_moves(q_low: float, q_high: float, velocity: float, acceleration: float,
                    dwell: float = 0.5, cycles: int = 1, period: float = 1e-3
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Back-and-forth point-to-point moves with a trapezoidal velocity profile.

    Rest at ``q_low`` [rad] for ``dwell`` [s], move to ``q_high`` at target ``velocity`` [rad/s]
    with ``acceleration`` [rad/s²], rest, move back; ``cycles`` times; a final rest.

    Returns
    -------
    t, q_ref, qd_ref, qdd_ref : ndarray
        Reference time [s], position [rad], velocity [rad/s], acceleration [rad/s²].
    """
    if velocity <= 0 or acceleration <= 0 or q_high <= q_low:
        raise ValueError("need velocity > 0, acceleration > 0 and q_high > q_low")
    dist = q_high - q_low
    v = min(velocity, np.sqrt(dist * acceleration))  # triangular profile if the move is short
    t_acc = v / acceleration
    t_move = 2 * t_acc + (dist - v * t_acc) / v
    segments = [(dwell, 0.0)]
    for _ in range(cycles):
        segments += [(t_move, +1.0), (dwell, 0.0), (t_move, -1.0), (dwell, 0.0)]
    total = sum(d for d, _ in segments)
    t = np.arange(int(np.floor(total / period)) + 1) * period
    qdd = np.zeros_like(t)
    start = 0.0
    for duration, direction in segments:
        if direction:
            s = t - start
            qdd += direction * acceleration * ((s >= 0) & (s < t_acc))
            qdd -= direction * acceleration * ((s >= t_move - t_acc) & (s < t_move))
        start += duration
    # exact integration of the piecewise-constant acceleration, sample by sample
    qd = np.concatenate([[0.0], np.cumsum(qdd[:-1]) * period])
    q = q_low + np.concatenate([[0.0], np.cumsum(qd[:-1] + 0.5 * qdd[:-1] * period) * period])
    return t, q, qd, qdd


def multisine(duration: float, amplitude: float, f_low: float, f_high: float, n_tones: int = 8,
              period: float = 1e-3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Random-phase multisine torque [N·m] with peak ``amplitude`` on log-spaced tones [Hz]."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(round(duration / period))) * period
    f = np.geomspace(f_low, f_high, n_tones)
    phases = rng.uniform(0, 2 * np.pi, n_tones)
    sig = np.sin(2 * np.pi * f[None, :] * t[:, None] + phases[None, :]).sum(axis=1)
    return t, amplitude * sig / np.max(np.abs(sig))


def chirp(duration: float, amplitude: float, f0: float, f1: float,
          period: float = 1e-3) -> tuple[np.ndarray, np.ndarray]:
    """Logarithmic chirp torque [N·m] from f0 to f1 [Hz]."""
    from scipy.signal import chirp as _chirp

    t = np.arange(int(round(duration / period))) * period
    return t, amplitude * _chirp(t, f0=f0, f1=f1, t1=t[-1], method="logarithmic")


# ---------------------------------------------------------------------------- the kernel
@numba.njit(cache=True)
def _simulate(q_ref, qd_ref, tau_ff, kp, kd, alpha, T, substeps,
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


def _static_as_lugre(model: JointModel) -> JointModel:
    """A static model simulated as LuGre with a stiff bristle (0.1 mrad pre-sliding deflection).

    A model with no Coulomb–Stribeck level (only viscous friction) gets a negligible one,
    :data:`NO_FRICTION_LEVEL`; with g = 0 the report's free run divided by zero.
    """
    if model.kind == "lugre":
        return model
    if not model.g0 > 0:
        model = model.with_(coulomb=NO_FRICTION_LEVEL, stribeck=())
    sigma0 = max(model.g0, 1e-6) / 1e-4
    return model.with_(kind="lugre", sigma0=sigma0,
                       sigma1=2 * np.sqrt(sigma0 * max(model.inertia, 1e-9)))


def simulate(model: JointModel, *, tau_ff: np.ndarray, q_ref: np.ndarray | None = None,
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
    if not model.inertia > 0:
        raise ValueError("a joint with zero inertia cannot be simulated (rigid_body.inertia ≤ 0)")
    m = _static_as_lugre(model)
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
    f = m.friction
    fc, omega, deltas, amps, powers, coefs, k = f.as_tuple()
    alpha = 1.0 - np.exp(-2 * np.pi * ctrl.velocity_filter_hz * ctrl.period)
    a_c, a_s = (m.gravity_cos, m.gravity_sin) if m.axis == "revolute" else (0.0, 0.0)
    q_t, qd_t, qdd_t, z_t, q_m, tau = _simulate(
        q_ref, qd_ref, np.asarray(tau_ff, dtype=float), kp, kd, alpha, ctrl.period, int(substeps),
        m.inertia, a_c, a_s, m.offset, fc, omega, deltas, amps, powers, coefs, k,
        m.sigma0, m.sigma1, pos_noise, float(sensors.encoder_resolution), start, float(qd0),
        0.0)
    t = np.arange(n) * ctrl.period
    truth = {"q_true": q_t, "qd_true": qd_t, "qdd_true": qdd_t, "z_true": z_t}
    return Trajectory(t=t, q=q_m, tau=tau + tau_noise, name=name, truth=truth)


def simulate_moves(model: JointModel, q_low: float, q_high: float, velocity: float,
                   acceleration: float, *, dwell: float = 0.5, cycles: int = 1,
                   controller: Controller = Controller(), sensors: Sensors = Sensors(),
                   substeps: int = 10, name: str = "moves") -> Trajectory:
    """Closed-loop trapezoidal back-and-forth moves (the main paper's experiment)."""
    _, q_ref, qd_ref, qdd_ref = trapezoid_moves(q_low, q_high, velocity, acceleration, dwell,
                                                cycles, controller.period)
    ff = model.with_(kind="static").rigid_body_torque(q_ref, qdd_ref)
    return simulate(model, tau_ff=ff, q_ref=q_ref, qd_ref=qd_ref, controller=controller,
                    sensors=sensors, substeps=substeps, name=name)
