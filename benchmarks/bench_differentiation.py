"""Speed and accuracy of sparsefric.differentiation against pynumdiff 0.3 ``tvrdiff``.

Run:  .venv/bin/python benchmarks/bench_differentiation.py  (about 30 s; pynumdiff is the slow part)

Prints: time of TV differentiation (TV of the acceleration) on 10,000 samples for ours and
pynumdiff's cvxpy ``tvrdiff(order=2)`` at the same λ, the ratio; the time on 100,000 samples;
an accuracy table (RMS error of q̇ and q̈ against the known truth) for every method.
"""

from __future__ import annotations

import time

import numpy as np

from sparsefric.differentiation import differentiate, noise_std, trend_filter

ENCODER_STEP = 2 * np.pi / 2**20


def trapezoid_moves(
    fs: float = 1000.0, reps: int = 1, stop: float = 1.0, noise: float = 1e-5, seed: int = 0
) -> dict:
    """Back-and-forth trapezoidal moves at 0.127 and 2.13 rad/s, 10 rad/s², 1 s stops."""
    segs = [(stop, 0.0, True)]
    for v in (0.127, 2.13) * reps:
        for sgn in (1, -1):
            ta = v / 10.0
            tc = max(min(1.0, 3.0 * v) / v - ta, 0.0)
            segs += [(ta, sgn * 10.0, False), (tc, 0.0, False), (ta, -sgn * 10.0, False)]
            segs.append((stop, 0.0, True))
    t = np.arange(int(round(sum(s[0] for s in segs) * fs))) / fs
    q, qd, qdd = np.zeros_like(t), np.zeros_like(t), np.zeros_like(t)
    t0 = q0 = v0 = 0.0
    for dur, a, is_stop in segs:
        v0 = 0.0 if is_stop else v0
        sel = (t >= t0) & (t < t0 + dur)
        s = t[sel] - t0
        qdd[sel], qd[sel], q[sel] = a, v0 + a * s, q0 + v0 * s + 0.5 * a * s**2
        q0, v0, t0 = q0 + v0 * dur + 0.5 * a * dur**2, v0 + a * dur, t0 + dur
    rng = np.random.default_rng(seed)
    qm = np.round((q + noise * rng.standard_normal(t.size)) / ENCODER_STEP) * ENCODER_STEP
    tau = 2.0 * qdd + 1.5 * np.cos(q) + 0.3 * np.tanh(200.0 * qd) + 0.5 * qd
    taum = tau + 0.05 * rng.standard_normal(t.size)
    return dict(t=t, qm=qm, taum=taum, q=q, qd=qd, qdd=qdd, tau=tau)


def rms(a: np.ndarray) -> float:
    return float(np.sqrt(np.mean(a**2)))


def timed(f, *a, **k):
    t0 = time.perf_counter()
    out = f(*a, **k)
    return out, time.perf_counter() - t0


def main() -> None:
    from pynumdiff.total_variation_regularization import tvrdiff
    from pynumdiff.utils.utility import robust_data_scale

    n = 10_000
    s = trapezoid_moves()
    s = {k: v[:n] for k, v in s.items()}
    t, qm, h = s["t"], s["qm"], 1e-3

    # Our automatic choice, then pynumdiff at the same λ (γ = 2λ/σ_robust).
    d_tv, t_auto = timed(differentiate, t, qm, s["taum"])
    lam = d_tv.params["lambda"]
    gamma = 2.0 * lam / robust_data_scale(qm)
    res, t_ours = timed(trend_filter, qm, lam, 3)
    (x_p, v_p), t_pnd = timed(tvrdiff, qm, h, 2, gamma)

    def obj(x):
        return 0.5 * np.sum((qm - x) ** 2) + lam * np.sum(np.abs(np.diff(x, 3)))

    print(
        f"n = {n}: TV of the acceleration (ℓ1 trend filter, ‖D³x‖₁), λ = {lam:.3g} rad "
        f"(κ = {d_tv.params['regularization']:g}, auto), pynumdiff γ = {gamma:.4g}"
    )
    print(f"  ours (trend_filter, fixed λ)      {t_ours:8.3f} s   objective {obj(res.x):.6e}")
    print(f"  pynumdiff tvrdiff(order=2)        {t_pnd:8.3f} s   objective {obj(x_p):.6e}")
    print(f"  ratio pynumdiff / ours            {t_pnd / t_ours:8.1f} x")
    print(f"  ours, full differentiate() (auto κ for q and τ, q̇, q̈, τ): {t_auto:.3f} s")

    big = trapezoid_moves(reps=9, seed=1)
    big = {k: v[:100_000] for k, v in big.items()}
    sig = noise_std(big["qm"], 4)
    yb = (big["qm"] - big["qm"].mean()) / sig
    rb, t_big = timed(trend_filter, yb, d_tv.params["regularization"], 3)
    db, t_big_auto = timed(differentiate, big["t"], big["qm"], big["taum"])
    print(
        f"n = {big['t'].size}: trend_filter fixed λ {t_big:.3f} s ({rb.iterations} Newton steps, "
        f"converged={rb.converged}); differentiate() with auto κ for q and τ {t_big_auto:.3f} s"
    )

    # Accuracy table on the 10,000-sample record.
    qdd_p = np.gradient(v_p, h)
    rows = [
        ("tv (auto)", d_tv.qd, d_tv.qdd),
        ("butterworth 20 Hz", *_bw(s)),
        ("savgol 0.05 s", *_sg(s)),
        ("central differences (raw)", np.gradient(qm, h), np.gradient(np.gradient(qm, h), h)),
        ("pynumdiff tvrdiff order 2", v_p, qdd_p),
    ]
    for order in (1, 3):
        d = differentiate(t, qm, s["taum"], tv_order=order)
        rows.append((f"tv (auto) tv_order={order}", d.qd, d.qdd))
    print(f"\naccuracy on {n} samples at 1 kHz (truth known): RMS error")
    print(f"  {'method':30s} {'q̇ [rad/s]':>12s} {'q̈ [rad/s²]':>12s}")
    for name, qd, qdd in rows:
        print(f"  {name:30s} {rms(qd - s['qd']):12.3e} {rms(qdd - s['qdd']):12.4f}")
    print(
        f"  torque RMS error: tv {rms(d_tv.tau - s['tau']):.4f} N·m, "
        f"raw {rms(s['taum'] - s['tau']):.4f} N·m"
    )


def _bw(s):
    d = differentiate(s["t"], s["qm"], s["taum"], "butterworth")
    return d.qd, d.qdd


def _sg(s):
    d = differentiate(s["t"], s["qm"], s["taum"], "savgol")
    return d.qd, d.qdd


if __name__ == "__main__":
    main()
