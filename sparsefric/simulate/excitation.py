"""Excitation signals: reference moves for a position loop and open-loop torques.

* :func:`trapezoid_moves` — back-and-forth point-to-point moves with a trapezoidal velocity
  profile (the experiment of Mahmoudkhani et al. 2023, §5);
* :func:`multisine`, :func:`chirp` — open-loop torques [N·m];
* :func:`stop_and_go_moves` — exact trapezoidal moves with stops and a synthetic torque, without a
  friction model (a reference for testing differentiation).
"""

from __future__ import annotations

import numpy as np


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
    from scipy.signal import chirp as _chirp  # scipy.signal takes ~0.5 s to import

    t = np.arange(int(round(duration / period))) * period
    return t, amplitude * _chirp(t, f0=f0, f1=f1, t1=t[-1], method="logarithmic")


_ENCODER_STEP = 2 * np.pi / 2**20  # rad, 20-bit encoder


def stop_and_go_moves(
    fs: float = 1000.0,
    vmax: tuple[float, ...] = (0.127, 2.13),
    acc: float = 10.0,
    stop: float = 1.0,
    noise: float = 1e-5,
    tau_noise: float = 0.05,
    seed: int = 0,
) -> dict:
    """Back-and-forth trapezoidal-velocity moves with exact stops, without a friction model.

    Velocity targets ``vmax`` [rad/s], acceleration ``acc`` [rad/s²], ``stop`` [s] at rest
    between moves (q̇ ≡ 0), sampled at ``fs`` [Hz]; a smooth synthetic torque. Used to test and
    benchmark differentiation against exact derivatives.

    Returns t, measured q (Gaussian noise then 20-bit encoder quantisation) and τ, the truths
    q, qd, qdd, tau, and the stop intervals [(t_start, t_end)].
    """
    segs = [(stop, 0.0, True)]
    for v in vmax:
        for sgn in (1, -1):
            ta = v / acc
            tc = max(min(1.0, 3.0 * v) / v - ta, 0.0)
            segs += [(ta, sgn * acc, False), (tc, 0.0, False), (ta, -sgn * acc, False)]
            segs.append((stop, 0.0, True))
    h = 1.0 / fs
    t = np.arange(int(round(sum(s[0] for s in segs) * fs))) * h
    q, qd, qdd = np.zeros_like(t), np.zeros_like(t), np.zeros_like(t)
    stops = []
    t0 = q0 = v0 = 0.0
    for dur, a, is_stop in segs:
        if is_stop:
            v0 = 0.0
            stops.append((t0, t0 + dur))
        sel = (t >= t0) & (t < t0 + dur)
        s = t[sel] - t0
        qdd[sel], qd[sel], q[sel] = a, v0 + a * s, q0 + v0 * s + 0.5 * a * s**2
        q0, v0, t0 = q0 + v0 * dur + 0.5 * a * dur**2, v0 + a * dur, t0 + dur
    rng = np.random.default_rng(seed)
    qm = np.round((q + noise * rng.standard_normal(t.size)) / _ENCODER_STEP) * _ENCODER_STEP
    tau = 2.0 * qdd + 1.5 * np.cos(q) + 0.3 * np.tanh(200.0 * qd) + 0.5 * qd
    taum = tau + tau_noise * rng.standard_normal(t.size)
    return dict(t=t, qm=qm, taum=taum, q=q, qd=qd, qdd=qdd, tau=tau, stops=stops)
