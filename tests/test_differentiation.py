"""Tests of sparsefric.differentiation on synthetic trapezoidal moves with known truth."""

from __future__ import annotations

import numpy as np
import pytest

from sparsefric.differentiation import (
    METHODS,
    Derivatives,
    differentiate,
    held_average,
    noise_std,
    sample_average,
    trend_filter,
)
from sparsefric.simulate import stop_and_go_moves as trapezoid_moves


def rms(a: np.ndarray) -> float:
    return float(np.sqrt(np.mean(a**2)))


@pytest.fixture(scope="module")
def sig() -> dict:
    return trapezoid_moves()


@pytest.fixture(scope="module")
def tv(sig) -> Derivatives:
    return differentiate(sig["t"], sig["qm"], sig["taum"])


def test_tv_acceleration_beats_central_differences_and_butterworth(sig, tv):
    t, qm = sig["t"], sig["qm"]
    central = np.gradient(np.gradient(qm, t), t)
    bw = differentiate(t, qm, sig["taum"], "butterworth")
    e_tv = rms(tv.qdd - sig["qdd"])
    e_cd = rms(central - sig["qdd"])
    e_bw = rms(bw.qdd - sig["qdd"])
    assert e_tv * 5.0 <= e_cd
    assert e_tv <= e_bw
    # Absolute level (accelerations are ±10 rad/s²): measured 0.19 rad/s²; Butterworth 0.59.
    assert e_tv < 0.35
    assert rms(tv.qd - sig["qd"]) < 6e-4  # rad/s; measured 2.6e-4
    assert rms(tv.q - sig["q"]) < 5e-6  # rad; below the 1e-5 rad noise
    # Denoised torque: away from the 20 N·m torque steps where q̈ jumps (±20 ms, 4 % of the
    # samples, which the TV-of-τ̇ smoothing rounds off) it is 3.6x closer to the truth than the
    # measured torque; overall it is far better than the 20 Hz Butterworth's.
    jump = np.abs(np.diff(sig["qdd"], prepend=sig["qdd"][0])) > 0
    away = np.convolve(jump.astype(float), np.ones(41), "same") == 0
    assert rms((tv.tau - sig["tau"])[away]) < 0.5 * rms((sig["taum"] - sig["tau"])[away])
    assert rms(tv.tau - sig["tau"]) < 0.5 * rms(bw.tau - sig["tau"])


def test_stops_stay_stopped_without_ringing(sig, tv):
    t = sig["t"]
    for a, b in sig["stops"][1:-1]:  # the 1 s stops between moves (and after reversals)
        full = (t >= a) & (t < b)
        inner = (t >= a + 0.01) & (t < b - 0.01)
        # No ringing: |q̇| under 2e-3 rad/s (1.6 % of the slow 0.127 rad/s move) inside the stop.
        assert np.max(np.abs(tv.qd[inner])) < 2e-3
        assert np.max(np.abs(tv.qdd[inner])) < 0.3  # rad/s², vs ±10 rad/s² when moving
        # Not smeared: at most 20 ms of the 1 s stop shows |q̇| above 2e-3 rad/s.
        assert np.mean(np.abs(tv.qd[full]) < 2e-3) >= 0.98


def test_stop_smearing_is_caught_for_a_smoothing_filter(sig):
    # The same criterion fails for a 20 Hz Butterworth: the test can tell a smeared stop.
    bw = differentiate(sig["t"], sig["qm"], sig["taum"], "butterworth")
    a, b = sig["stops"][2]
    full = (sig["t"] >= a) & (sig["t"] < b)
    assert np.mean(np.abs(bw.qd[full]) < 2e-3) < 0.98


def test_agrees_with_pynumdiff_tvrdiff_on_small_signal():
    pytest.importorskip("cvxpy")
    from pynumdiff.total_variation_regularization import tvrdiff
    from pynumdiff.utils.utility import robust_data_scale

    s = trapezoid_moves(fs=100.0, vmax=(0.5,), acc=5.0, stop=0.5, noise=1e-3, seed=4)
    qm, h = s["qm"], 0.01
    assert 300 <= qm.size <= 600
    gamma = 0.5
    x_ref, v_ref = tvrdiff(qm, h, 2, gamma)  # TV of the acceleration
    # pynumdiff minimises ‖(q−μ)/σ − x‖² + γ‖D³x‖₁ (σ its robust scale) ⇔ ours with λ = γσ/2.
    lam = gamma * robust_data_scale(qm) / 2.0
    res = trend_filter(qm, lam, 3)
    assert res.converged

    def objective(x):
        return 0.5 * np.sum((qm - x) ** 2) + lam * np.sum(np.abs(np.diff(x, 3)))

    # Same minimiser: ours is at least as good (pynumdiff's OSQP stops 0.1–0.5 % above), and
    # the fits agree to 0.3 of the 1e-3 rad noise, velocities to 2 % of the peak
    # velocity (the differences are OSQP's stopping tolerance, not ours: our gap is ~1e-12).
    assert objective(res.x) <= objective(x_ref) * (1 + 1e-9)
    assert np.max(np.abs(res.x - x_ref)) < 3e-4
    v = np.gradient(res.x, h)
    assert np.max(np.abs(v[2:-2] - v_ref[2:-2])) < 0.02 * np.max(np.abs(v_ref))


def test_trend_filter_gap_certifies_optimality():
    rng = np.random.default_rng(1)
    y = np.cumsum(np.cumsum(rng.standard_normal(2000))) * 1e-3 + rng.standard_normal(2000)
    res = trend_filter(y, 20.0, 3)
    assert res.converged
    obj = 0.5 * np.sum((y - res.x) ** 2) + 20.0 * np.sum(np.abs(np.diff(res.x, 3)))
    # Any perturbation does not decrease the objective by more than the gap.
    for _ in range(3):
        xp = res.x + 1e-3 * rng.standard_normal(y.size)
        objp = 0.5 * np.sum((y - xp) ** 2) + 20.0 * np.sum(np.abs(np.diff(xp, 3)))
        assert objp >= obj - res.gap
    # Dual feasibility and primal recovery x = y − Dᵀν.
    assert np.max(np.abs(res.nu)) <= 20.0
    assert res.gap <= 1e-8 * y.size * noise_std(y, 4) ** 2 * 1.0001


def test_trimming_quantile_is_scipys_to_the_last_bit():
    """The written-out c = Φ⁻¹(0.95) of the trimmed noise estimate is scipy's ndtri, bit for
    bit: the standard library's differs in the last digit, which moves single zoo fits."""
    from scipy.special import ndtri

    from sparsefric.differentiation.trend_filter import _C, _TRIM

    assert float(ndtri(1.0 - _TRIM / 2.0)) == _C


def test_noise_std_recovers_white_noise_level():
    rng = np.random.default_rng(2)
    t = np.linspace(0.0, 10.0, 20_000)
    y = np.sin(2 * np.pi * 0.3 * t) + 3e-4 * rng.standard_normal(t.size)
    assert noise_std(y) == pytest.approx(3e-4, rel=0.05)


def test_automatic_regularization_is_reported_and_overridable(sig, tv):
    p = tv.params
    assert p["rule"].startswith("auto")
    assert p["regularization"] > 0
    assert p["lambda"] == pytest.approx(p["regularization"] * p["noise_std"])
    assert p["noise_std"] == pytest.approx(1e-5, rel=0.2)
    assert p["tau_regularization"] > 0 and p["tau_rule"].startswith("auto")
    d = differentiate(sig["t"], sig["qm"], sig["taum"], regularization=7.0)
    assert d.params["regularization"] == 7.0
    assert d.params["rule"].startswith("user")
    assert d.params["tau_rule"].startswith("auto")
    assert not np.allclose(d.qdd, tv.qdd)
    d2 = differentiate(sig["t"], sig["qm"], sig["taum"], regularization=(7.0, 2.0))
    assert d2.params["tau_regularization"] == 2.0
    np.testing.assert_allclose(d2.qdd, d.qdd)


def test_rule_is_unit_and_scale_free(sig, tv):
    # The same motion in millirad: same κ chosen, every derivative scales by 1000.
    d = differentiate(sig["t"], 1000.0 * sig["qm"], sig["taum"])
    assert d.params["regularization"] == tv.params["regularization"]
    np.testing.assert_allclose(d.qdd, 1000.0 * tv.qdd, rtol=0, atol=1e-3 * 1000 * 0.05)


def test_rule_at_100_hz_still_beats_central_differences():
    s = trapezoid_moves(fs=100.0, acc=5.0, noise=1e-4, seed=5)
    d = differentiate(s["t"], s["qm"], s["taum"])
    central = np.gradient(np.gradient(s["qm"], s["t"]), s["t"])
    assert rms(d.qdd - s["qdd"]) < rms(central - s["qdd"])
    assert rms(d.qd - s["qd"]) < rms(np.gradient(s["qm"], s["t"]) - s["qd"])


@pytest.mark.parametrize("method", ["tv", "butterworth", "savgol", "given"])
def test_every_method_returns_full_length_arrays(method):
    s = trapezoid_moves(vmax=(0.5,), stop=0.3, seed=6)
    n = s["t"].size
    d = differentiate(s["t"], s["qm"], s["taum"], method, qd=s["qd"], qdd=s["qdd"])
    assert isinstance(d, Derivatives)
    assert d.method == method
    for a in (d.q, d.qd, d.qdd, d.tau):
        assert a.shape == (n,) and np.all(np.isfinite(a))
    if method == "given":
        np.testing.assert_array_equal(d.qd, s["qd"])
        np.testing.assert_array_equal(d.tau, s["taum"])
    else:
        assert rms(d.qdd - s["qdd"]) < 1.0  # all smoothers get within 1 rad/s² of ±10


@pytest.mark.parametrize("method", ["tv", "butterworth", "savgol"])
def test_a_measured_torque_left_alone_changes_no_motion_signal(sig, tv, method):
    """``denoise_torque=False`` (``predict``): the torque as measured, q, q̇, q̈ as before."""
    full = tv if method == "tv" else differentiate(sig["t"], sig["qm"], sig["taum"], method)
    raw = differentiate(sig["t"], sig["qm"], sig["taum"], method, denoise_torque=False)
    np.testing.assert_array_equal(raw.tau, sig["taum"])
    assert raw.tau is not sig["taum"] and not np.array_equal(full.tau, sig["taum"])
    for a, b in ((raw.q, full.q), (raw.qd, full.qd), (raw.qdd, full.qdd)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("order", [1, 3])
def test_other_tv_orders_run(order):
    s = trapezoid_moves(vmax=(0.5,), stop=0.3, seed=7)
    d = differentiate(s["t"], s["qm"], s["taum"], tv_order=order)
    assert d.qdd.shape == s["t"].shape and d.params["penalty_order"] == order + 1
    assert rms(d.qd - s["qd"]) < 5e-3


def test_given_without_columns_is_a_clear_error(sig):
    with pytest.raises(ValueError, match="'given' needs measured qd and qdd"):
        differentiate(sig["t"], sig["qm"], sig["taum"], "given")
    with pytest.raises(ValueError, match="needs measured qdd"):
        differentiate(sig["t"], sig["qm"], sig["taum"], "given", qd=sig["qd"])


def test_bad_method_names_it_and_the_valid_ones(sig):
    with pytest.raises(ValueError, match="'kalman'") as e:
        differentiate(sig["t"], sig["qm"], sig["taum"], "kalman")
    for m in METHODS:
        assert m in str(e.value)


def test_bad_inputs_raise_value_error():
    t = np.arange(100) * 1e-3
    q = np.zeros(100)
    with pytest.raises(ValueError, match="samples"):
        differentiate(t, q[:-1], q)
    with pytest.raises(ValueError, match="uniformly"):
        differentiate(t**2, q, q)
    with pytest.raises(ValueError, match="increasing"):
        differentiate(t[::-1], q, q)
    with pytest.raises(ValueError, match="cutoff_hz"):
        differentiate(t, q, q, "butterworth", cutoff_hz=600.0)


@pytest.mark.parametrize("m", [1, 2, 3, 4])
@pytest.mark.parametrize("n", [2, 3, 5, 6, 9, 3000])
def test_trend_filter_duality_gap_checked_independently(m, n):
    # The compiled solver's certificate, recomputed in numpy: x = y − Dᵀν with |ν| ≤ λ is dual
    # feasible, so primal(x) − dual(ν) bounds the distance to the optimum.
    rng = np.random.default_rng(10 * m + n)
    y = np.cumsum(rng.standard_normal(n)) * 0.1 + rng.standard_normal(n)
    lam = 3.0
    res = trend_filter(y, lam, m, gap_tol=1e-9 * n)
    assert res.converged
    if n <= m:  # nothing to penalise
        np.testing.assert_array_equal(res.x, y)
        return
    assert np.max(np.abs(res.nu)) <= lam
    dtnu = y - res.x
    np.testing.assert_allclose(np.diff(np.pad(res.nu, m), m) * (-1) ** m, dtnu, atol=1e-9)
    primal = 0.5 * np.sum(dtnu**2) + lam * np.sum(np.abs(np.diff(res.x, m)))
    dual = -0.5 * np.sum(dtnu**2) + float(np.diff(y, m) @ res.nu)
    assert 0.0 <= primal - dual <= 1e-9 * n * (1 + 1e-6)


def test_differentiate_is_deterministic(sig, tv):
    d = differentiate(sig["t"], sig["qm"], sig["taum"])
    for a, b in ((d.q, tv.q), (d.qd, tv.qd), (d.qdd, tv.qdd), (d.tau, tv.tau)):
        np.testing.assert_array_equal(a, b)
    assert d.params == tv.params


def test_coarse_encoder_noise_is_at_least_the_rounding_noise():
    """Noise-free moves on a 14-bit encoder: the differences are mostly 0, so the trimmed
    estimate alone sees less noise than the rounding adds, and the filter follows the counts."""
    from sparsefric.differentiation.trend_filter import measurement_noise_std, quantisation_step

    s = trapezoid_moves(noise=0.0)
    step = 2 * np.pi / 2**14
    qm = np.round(s["q"] / step) * step
    assert quantisation_step(qm) == pytest.approx(step, rel=1e-6)
    assert noise_std(qm) < 0.95 * step / np.sqrt(12)
    assert measurement_noise_std(qm) == pytest.approx(step / np.sqrt(12), rel=1e-3)
    d = differentiate(s["t"], qm, s["taum"])
    # 0.62 rad/s²: the torque check raises SURE's κ 100 (0.41) to 3e4 on this staircase
    # (DESIGN.md §23); 0.66 with the trimmed noise estimate alone
    assert rms(d.qdd - s["qdd"]) < 0.65
    assert d.params["regularization"] == 3e4
    # the moves' own 20-bit counts are found too (the old rule, which wanted 5 % of repeated
    # samples, missed them), and their rounding is the floor
    fine = 2 * np.pi / 2**20
    assert quantisation_step(s["qm"]) == pytest.approx(fine, rel=1e-6)
    assert measurement_noise_std(s["qm"]) == pytest.approx(fine / np.sqrt(12), rel=1e-6)


def test_noise_free_and_float32_records():
    """Simulated records without noise: σ̂ is the float rounding (3e-17 rad; 4e-12 of the smooth
    torque's span), which once scaled the samples to 1e11–1e16 and crashed the solver with a
    division by zero. Such a record is now not regularised; one stored as float32 (σ̂ ≈ 3e-8
    of the span) is filtered, and the solver stops where z is rounded onto the box edge."""
    s = trapezoid_moves()
    moving = np.abs(s["qd"]) > 0
    exact = differentiate(s["t"], s["q"], s["tau"])
    assert exact.params["regularization"] == 0.0 and exact.params["noise_std"] == 0.0
    assert exact.params["tau_regularization"] == 0.0 and exact.params["tau_noise_std"] == 0.0
    assert rms(exact.qd[moving] - s["qd"][moving]) < 2e-4  # rad/s; 6e-5 measured
    f32 = differentiate(s["t"], *(s[k].astype(np.float32).astype(float) for k in ("q", "tau")))
    assert f32.params["noise_std"] > 0 and f32.params["tau_noise_std"] > 0
    assert rms(f32.qd[moving] - s["qd"][moving]) < 2e-4
    assert rms(f32.tau - exact.tau) < 1e-3 * rms(s["tau"])


def test_a_quiet_stretch_does_not_lower_the_noise_estimate():
    """A record that starts with 12 s at rest, quieter than the motion: the whole-record noise
    estimate fell to ~60 % of the moving noise, κ dropped 100–1000×, and the barely smoothed q̈
    cost the inertia 48 % on data/example. The estimate now follows the noisier regime."""
    from sparsefric.differentiation.trend_filter import regime_noise_std

    s = trapezoid_moves()
    rng = np.random.default_rng(7)
    n = 12000
    h = s["t"][1] - s["t"][0]
    t = np.r_[np.arange(n) * h, s["t"] + n * h]
    q = np.r_[s["q"][0] + 2e-6 * rng.standard_normal(n), s["qm"]]
    tau = np.r_[s["tau"][0] + 0.01 * rng.standard_normal(n), s["taum"]]
    moving = noise_std(s["qm"])
    assert noise_std(q) < 0.8 * moving
    assert regime_noise_std(q) == pytest.approx(moving, rel=0.1)
    alone = differentiate(s["t"], s["qm"], s["taum"])
    d = differentiate(t, q, tau)
    err = rms(d.qdd[n:] - s["qdd"])
    assert err < 2.0 * rms(alone.qdd - s["qdd"])  # 1.5×; 37× with the whole-record estimate


def test_a_lattice_is_found_when_the_encoder_advances_thousands_of_counts_per_sample():
    """A 2e-8 m encoder on a move at 0.05 m/s logged at 500 Hz: 5000 counts per sample, no
    sample repeats its predecessor and the smallest difference is several counts. The old rule
    (≥ 5 % zero differences, multiples of the 1st-percentile difference) found no lattice."""
    from sparsefric.differentiation.trend_filter import measurement_noise_std, quantisation_step

    step = 2e-8
    t = np.arange(4000) / 500
    q_true = 0.05 * t + 0.01 * np.sin(2 * np.pi * 0.5 * t)
    noisy = q_true + np.random.default_rng(3).normal(0.0, 0.3 * step, t.size)
    qm = np.round(noisy / step) * step + 0.123456  # an offset off the lattice
    assert np.mean(np.diff(qm) == 0) == 0.0
    assert quantisation_step(qm) == pytest.approx(step, rel=1e-6)
    assert measurement_noise_std(qm) >= step / np.sqrt(12) * 0.999


def test_the_lattice_step_is_exact_from_values_printed_with_nine_digits():
    """data/example's 20-bit angles written with 9 significant digits: the smallest gap alone is
    2e-4 off the step (4 counts over the 1.4 rad travelled); the refined step is exact."""
    from sparsefric.data import load_trajectories
    from sparsefric.differentiation.trend_filter import quantisation_step

    from .conftest import EXAMPLE

    for name in ("train_v0p127.csv", "validate_v0p03.csv"):  # the old rule found none in these
        q = load_trajectories(EXAMPLE / name)[0].q
        assert quantisation_step(q) == pytest.approx(2 * np.pi / 2**20, rel=1e-7)


def test_continuous_values_have_no_lattice():
    from sparsefric.differentiation.trend_filter import quantisation_step

    rng = np.random.default_rng(4)
    assert quantisation_step(np.cumsum(rng.normal(size=20_000))) == 0.0
    assert quantisation_step(np.sin(np.arange(20_000) * 1e-3) + rng.normal(0, 1e-5, 20_000)) == 0.0


def test_a_slow_move_on_a_coarse_encoder_visits_few_counts_and_is_still_a_lattice():
    """A zoo validation record: 0.0096 rad/s on a 12-bit encoder logged at 4 kHz visits six
    counts in 10,201 samples (5 gaps, fewer than the 10 a lattice needs otherwise), dithering
    between neighbours. Without the lattice the noise estimate fell to a third of the rounding
    Δ/√12, κ to the bottom of its grid, and q̇ spiked to ±2.9 rad/s at every dither. Values held
    for many samples but not on a lattice, and too few levels, stay continuous."""
    from sparsefric.differentiation.trend_filter import measurement_noise_std, quantisation_step

    step = 2 * np.pi / 2**12
    t = np.arange(10_201) / 4000
    rng = np.random.default_rng(5)
    span = 5 * step  # back and forth over five counts at 0.0096 rad/s
    q_true = span * (1 - np.abs(1 - (0.0096 * t / span) % 2)) - 0.6
    qm = np.round((q_true + rng.normal(0.0, 0.09 * step, t.size)) / step) * step
    assert 3 <= len(np.unique(qm)) <= 11
    assert quantisation_step(qm) == pytest.approx(step, rel=1e-9)
    assert measurement_noise_std(qm) == pytest.approx(step / np.sqrt(12))
    d = differentiate(t, qm, np.zeros_like(t))
    assert np.max(np.abs(d.qd)) < 0.3  # 0.12 rad/s; 3.3 with the lattice missed (κ 0.1)
    held = np.repeat(rng.uniform(0.0, 1.0, 8), 1000)  # 8 arbitrary levels, each held
    assert quantisation_step(held) == 0.0
    assert quantisation_step(np.repeat([0.0, 1.0], 5000)) == 0.0


@pytest.fixture(scope="module")
def staircase() -> dict:
    """A light joint (I 0.05 kg·m², f_c 1.2 N·m) moving at 0.03 rad/s, logged at 1 kHz on a
    12-bit encoder (0.02 counts per sample) with 0.1 count of noise before rounding; the loop
    itself reads a fine encoder."""
    from sparsefric.model import JointModel
    from sparsefric.simulate import Sensors, simulate_moves

    truth = JointModel(inertia=0.05, gravity_cos=0.5, kind="lugre", coulomb=1.2,
                       stribeck_velocity=0.2, stribeck=((1.0, 0.8),), viscous=((1, 0.3),),
                       sigma0=2e4, sigma1=63.0)
    tr = simulate_moves(truth, 0.0, 0.1, 0.03, 0.5, dwell=0.3,
                        sensors=Sensors(2 * np.pi / 2**24, 0.0, 0.02, seed=1))
    step = 2 * np.pi / 4096
    noisy = tr.truth["q_true"] + np.random.default_rng(2).normal(0.0, 0.1 * step, len(tr))
    return {"t": tr.t, "q": np.round(noisy / step) * step, "tau": tr.tau,
            "qdd": tr.truth["qdd_true"]}


def test_on_a_staircase_the_weight_is_raised_until_the_torque_is_predicted(staircase):
    """SURE takes the slow rounding staircase for signal (κ = 10 here) and q̈ follows every
    count: 100× its RMS in error. Raised where the torque residual of a quick rigid-body fit
    falls, q̈ is within its RMS."""
    s = staircase
    d = differentiate(s["t"], s["q"], s["tau"])
    sure = float(d.params["rule"].split("SURE's ")[1].split(":")[0])
    assert sure <= 100.0 and d.params["regularization"] >= 1e4
    scale = rms(s["qdd"])
    assert rms(d.qdd - s["qdd"]) < 1.0 * scale  # 0.87 measured
    only_sure = differentiate(s["t"], s["q"], s["tau"], regularization=sure)
    assert rms(only_sure.qdd - s["qdd"]) > 10.0 * scale


def test_a_weight_at_the_end_of_its_range_is_noted():
    """A κ at an end of the searched grid (after the one-step extension) gets a note naming the
    signal and κ; data/example's slow training record keeps its κ (1000) and has no note."""
    from sparsefric.data import load_trajectories
    from sparsefric.differentiation.derivatives import KAPPA_EXTENSION, range_note

    from .conftest import EXAMPLE

    top = range_note({"range_end": True, "regularization": KAPPA_EXTENSION[1]}, "position")
    assert len(top) == 1 and "position ended at κ = 300000" in top[0] and "more smoothing" in top[0]
    low = range_note({"range_end": True, "regularization": KAPPA_EXTENSION[0]}, "torque")
    assert "torque ended at κ = 0.1" in low[0] and "less smoothing" in low[0]
    assert range_note({"range_end": False, "regularization": 1000.0}, "position") == ()
    tr = load_trajectories(EXAMPLE / "train_v0p127.csv")[0]
    example = differentiate(tr.t, tr.q, tr.tau)
    assert example.params["regularization"] == 1000.0 and example.notes == ()


def test_a_raised_weight_never_smooths_beyond_the_encoders_error_band(monkeypatch):
    """Zoo joint 27 (seed 2024): a stiff prismatic joint (σ0 6e5 N/m) at 0.02 m/s, 13 counts of
    3.1 µm per sample. The torque check alone raises κ from 30 to 1e5 (its static model prefers a
    velocity smeared across reversals) and the fit strays 7 counts from the readings; within
    the band |q − x̂| ≤ Δ/2 + 2.5σ̂ the fit stays within a count of the true position."""
    from sparsefric.differentiation import derivatives
    from sparsefric.differentiation.trend_filter import quantisation_step

    from .conftest import zoo as load_zoo

    zoo = load_zoo()
    spec = zoo.draw_joint(2024, 27)
    rec = zoo.simulate_record(spec, spec.records["train"][1], spec.sensor_seed + 100)
    step = quantisation_step(rec.q)
    d = differentiate(rec.t, rec.q, rec.tau)
    stray = np.quantile(np.abs(d.q - rec.truth["q_true"]), 0.99) / step
    assert d.params["regularization"] <= 1e3 and stray < 1.0  # κ 30, 0.55 count measured
    monkeypatch.setattr(derivatives, "LATTICE_BAND", np.inf)
    loose = differentiate(rec.t, rec.q, rec.tau)
    assert loose.params["regularization"] >= 3e4
    assert np.quantile(np.abs(loose.q - rec.truth["q_true"]), 0.99) / step > 3.0


def test_sample_average_is_what_the_second_difference_of_positions_does_to_the_acceleration():
    """q̈ linear between samples (steps of the jerk at the samples): the second difference of
    the exactly sampled positions is the (1, 4, 1)/6 average of the sampled q̈, not q̈ itself;
    each record is averaged on its own."""
    rng = np.random.default_rng(3)
    h, n = 4e-3, 200
    qdd = np.cumsum(rng.normal(size=n)) * 10.0  # rad/s² at the samples, linear in between
    # exact positions: integrate the piecewise-linear q̈ twice, interval by interval
    q, qd = np.zeros(n), np.zeros(n)
    for i in range(n - 1):
        a0, a1 = qdd[i], qdd[i + 1]
        q[i + 1] = q[i] + qd[i] * h + (2 * a0 + a1) * h**2 / 6
        qd[i + 1] = qd[i] + (a0 + a1) * h / 2
    d2 = np.diff(q, 2) / h**2
    averaged = sample_average(qdd, [(0, n)])
    np.testing.assert_allclose(d2, averaged[1:-1], rtol=0, atol=1e-9 * np.abs(qdd).max())
    assert np.abs(d2 - qdd[1:-1]).max() > 0.1  # the average is not the sampled value
    two = sample_average(np.r_[np.zeros(5), np.ones(5)], [(0, 5), (5, 10)])
    np.testing.assert_array_equal(two, np.r_[np.zeros(5), np.ones(5)])
    columns = sample_average(np.column_stack([qdd, 2 * qdd]), [(0, n)])
    np.testing.assert_allclose(columns[:, 1], 2 * averaged)


def test_held_average_is_what_the_second_difference_does_to_a_held_acceleration():
    """A command held over [t_k, t_k + h) drives a q̈ constant on each interval: the second
    difference of the exact positions is (a_{k−1} + a_k)/2, the held average, and neither
    a_k nor the (1, 4, 1)/6 average; the first sample of each record stays."""
    rng = np.random.default_rng(4)
    h, n = 1e-3, 300
    a = rng.normal(size=n) * 50.0  # rad/s² held over each interval
    q, qd = np.zeros(n), np.zeros(n)
    for i in range(n - 1):
        q[i + 1] = q[i] + qd[i] * h + a[i] * h**2 / 2
        qd[i + 1] = qd[i] + a[i] * h
    d2 = np.diff(q, 2) / h**2
    held = held_average(a, [(0, n)])
    np.testing.assert_allclose(d2, held[1:-1], rtol=0, atol=1e-9 * np.abs(a).max())
    assert np.abs(d2 - sample_average(a, [(0, n)])[1:-1]).max() > 1.0
    assert held[0] == a[0]
    two = held_average(np.r_[np.zeros(5), np.ones(5)], [(0, 5), (5, 10)])
    np.testing.assert_array_equal(two, np.r_[np.zeros(5), np.ones(5)])
