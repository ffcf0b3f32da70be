"""Physics checks of sparsefric.validation on known signals and the bundled example data."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sparsefric.data import load_trajectories
from sparsefric.differentiation import differentiate
from sparsefric.model import JointModel
from sparsefric.validation import (
    constant_velocity_mask,
    cve_from_trajectories,
    cve_pairs,
    cve_points,
    default_accel_threshold,
    free_run_compare,
    friction_from_torque,
    hysteresis,
    metrics_table,
    relative_error_series,
    restart_indices,
    torque_metrics,
    travel_since_start,
)

EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "example"


@pytest.fixture(scope="module")
def truth() -> JointModel:
    return JointModel.load(EXAMPLE / "truth.json")


@pytest.fixture(scope="module")
def example():
    return load_trajectories(sorted(EXAMPLE.glob("*_v*.csv")))


# ----------------------------------------------------------------------------- metrics


def test_metrics_on_known_signals():
    tau = np.array([1.0, -2.0, 3.0, -4.0])
    tau_hat = tau + np.array([0.1, -0.1, 0.1, -0.1])
    m = torque_metrics(tau, tau_hat)
    assert m.rms == pytest.approx(0.1)
    assert m.relative_rms == pytest.approx(0.2 / np.sqrt(30))
    assert m.nrmse == pytest.approx(0.1 / 7)
    assert m.max_abs == pytest.approx(0.1)
    assert m.max_relative == pytest.approx(0.1 / 4)
    assert m.n == 4
    np.testing.assert_allclose(relative_error_series(tau, tau_hat), [-0.025, 0.025, -0.025, 0.025])


def test_metrics_perfect_and_mismatch():
    tau = np.sin(np.linspace(0, 10, 500))
    m = torque_metrics(tau, tau)
    assert m.relative_rms == 0 and m.max_abs == 0
    with pytest.raises(ValueError, match="length"):
        torque_metrics(tau, tau[:-1])


def test_metrics_table_is_tidy():
    tau = [np.ones(10), 2 * np.ones(20)]
    preds = {"static": [0.9 * np.ones(10), 2 * np.ones(20)],
             "dynamic": [np.ones(10), 1.8 * np.ones(20)]}
    df = metrics_table(["a", "b"], tau, preds, dataset="test")
    assert len(df) == 4
    assert set(df["model"]) == {"static", "dynamic"}
    row = df[(df.trajectory == "a") & (df.model == "static")].iloc[0]
    assert row["relative_rms"] == pytest.approx(0.1)
    assert row["dataset"] == "test" and row["n"] == 10


# ----------------------------------------------------------------------------- CVE


def _level(name: str) -> float:
    return float(re.search(r"_v(\d+)p(\d+)", name).expand(r"\1.\2"))


def test_cve_points_match_truth_curve(example, truth):
    pts = cve_from_trajectories(example)
    assert len(pts) == len(example) == 6
    for _, p in pts.iterrows():
        nominal = _level(p["trajectory"])
        assert p["velocity"] == pytest.approx(nominal, rel=0.03)
        expected = float(truth.static_friction(np.array([p["velocity"]]))[0])
        assert p["friction"] == pytest.approx(expected, rel=0.01), p["trajectory"]
        # the spread over position bins is small against the friction level
        assert p["friction_std"] < 0.01 * expected
        assert p["n_bins"] >= 20


def test_cve_gravity_from_pairs(example, truth):
    traj = next(t for t in example if "v0p81" in t.name)
    d = differentiate(traj.t, traj.q, traj.tau, method="butterworth")
    pairs = cve_pairs(d.q, d.qd, d.qdd, traj.tau)
    q = pairs["position"].to_numpy()
    gravity = truth.gravity_cos * np.cos(q) + truth.gravity_sin * np.sin(q)
    assert np.max(np.abs(pairs["gravity"] - gravity)) < 0.3  # N·m, against |gravity| ~ 25


def test_cve_synthetic_two_levels():
    """Two velocity levels in one record give two points with the exact friction."""
    h = 1e-3
    parts_q, parts_qd = [], []
    q0 = 0.0
    for v in (0.5, -0.5, 1.0, -1.0):
        n = int(1.0 / abs(v) / h)
        qd = np.full(n, v)
        parts_qd.append(np.r_[np.zeros(200), qd])
        parts_q.append(np.r_[np.full(200, q0), q0 + np.cumsum(qd) * h])
        q0 = parts_q[-1][-1]
    q, qd = np.concatenate(parts_q), np.concatenate(parts_qd)
    qdd = np.gradient(qd, h)

    def friction(v):
        return np.sign(v) * (2.0 + 3.0 * np.abs(v))

    tau = 10 * np.cos(q) + friction(qd)
    pts = cve_points(cve_pairs(q, qd, qdd, tau, speed_threshold=0.1))
    assert len(pts) == 2
    np.testing.assert_allclose(pts["velocity"], [0.5, 1.0], rtol=1e-9)
    np.testing.assert_allclose(pts["friction"], [3.5, 5.0], rtol=1e-3)


def test_cve_finds_every_steady_level_of_a_one_file_recording(one_file, truth):
    """Moves at 0.05, 0.3 and 1.2 rad/s in one record: a point per level at the true friction.
    A speed floor at 20 % of the fastest speed (0.24 rad/s) kept only the two fast levels."""
    from sparsefric.preprocessing import prepare

    from .conftest import ONE_FILE_SPEEDS

    prep = prepare([one_file])
    x = prep.signals
    pts = cve_points(cve_pairs(x.q, x.qd, x.qdd, prep.tau))
    np.testing.assert_allclose(pts["velocity"], ONE_FILE_SPEEDS, rtol=0.03)
    np.testing.assert_allclose(pts["friction"],
                               truth.static_friction(pts["velocity"].to_numpy()), rtol=0.01)
    assert (pts["n_bins"] >= 30).all()


def test_cve_leaves_out_the_creep_of_a_joint_held_near_rest(monkeypatch):
    """Steady levels at 0.5 and 1 rad/s over 0.5–1 rad, and a creep forth and back at
    0.002 rad/s (above the stop speed, 10⁻³ of 1 rad/s) over 0.8 mrad with no friction: the
    creep's runs travel less than MIN_RUN_TRAVEL of the stroke and give no point."""
    h = 1e-3
    parts_qd = []
    for v, seconds in ((0.5, 1.0), (-0.5, 1.0), (0.002, 0.4), (-0.002, 0.4), (1.0, 1.0),
                       (-1.0, 1.0)):
        parts_qd.append(np.r_[np.zeros(200), np.full(int(seconds / h), v)])
    qd = np.concatenate(parts_qd)
    q = np.cumsum(qd) * h
    qdd = np.gradient(qd, h)
    creeping = np.abs(qd) == 0.002
    tau = 10 * np.cos(q) + np.where(creeping, 0.0, np.sign(qd) * (2.0 + 3.0 * np.abs(qd)))
    pts = cve_points(cve_pairs(q, qd, qdd, tau))
    np.testing.assert_allclose(pts["velocity"], [0.5, 1.0], rtol=1e-9)
    np.testing.assert_allclose(pts["friction"], [3.5, 5.0], rtol=1e-3)
    monkeypatch.setattr("sparsefric.validation.MIN_RUN_TRAVEL", 0.0)
    everything = cve_points(cve_pairs(q, qd, qdd, tau))
    assert everything["velocity"].min() == pytest.approx(0.002)  # the creep, if let in


def _slow_moves(h: float, v: float, noise: float, seed: int = 0):
    """Passes at ±v [rad/s] of 2 s started and stopped within 4 samples, dwells of 0.1 s, and
    white noise of ``noise`` [rad/s²] on q̈ (a differentiated position's)."""
    ramp = np.linspace(0.0, 1.0, 5)[1:]
    one = np.r_[np.zeros(int(0.1 / h)), ramp, np.ones(int(2.0 / h)), ramp[::-1]]
    qd = np.concatenate([sign * v * one for sign in (1, -1, 1, -1)])
    q = np.cumsum(qd) * h
    qdd = np.gradient(qd, h) + noise * np.random.default_rng(seed).normal(size=qd.size)
    return q, qd, qdd


def test_slow_moves_started_briskly_give_their_steady_level():
    """A record at 0.065 rad/s whose moves accelerate within 4 samples at 2 kHz: under 1 % of
    the samples accelerate, so the 99th percentile of |q̈| is the noise's, and 5 % of it left
    no run steady (no CVE point); the noise floor of the threshold finds the level."""
    h, v = 5e-4, 0.065
    q, qd, qdd = _slow_moves(h, v, noise=0.15)
    tau = 10 * np.cos(q) + np.sign(qd) * (2.0 + 3.0 * np.abs(qd))
    old = 0.05 * np.percentile(np.abs(qdd), 99)
    assert cve_points(cve_pairs(q, qd, qdd, tau, accel_threshold=old)).empty
    threshold = default_accel_threshold(qd, qdd)
    assert 3 * 0.15 <= threshold <= 0.25 * v / (4 * h)  # above the noise, below the starts
    pts = cve_points(cve_pairs(q, qd, qdd, tau))
    np.testing.assert_allclose(pts["velocity"], [v], rtol=1e-6)
    np.testing.assert_allclose(pts["friction"], [2.0 + 3.0 * v], rtol=1e-6)


def test_the_noise_floor_of_the_threshold_stays_below_a_sinusoids_acceleration():
    """Where the joint never slides steadily the noise estimate is the motion's own q̈: the
    floor is capped at a quarter of its scale, where the speed is within 3 % of its peak."""
    t = np.arange(20000) * 1e-3
    qd = np.cos(2 * np.pi * 0.5 * t)
    qdd = -np.pi * np.sin(2 * np.pi * 0.5 * t)
    assert default_accel_threshold(qd, qdd) == pytest.approx(0.25 * np.pi, rel=1e-3)
    clean = _slow_moves(1e-3, 0.5, noise=0.0)
    assert default_accel_threshold(clean[1], clean[2]) == 0.0  # no noise: nothing to admit


def test_constant_velocity_mask_trims_edges():
    qd = np.r_[np.zeros(50), np.ones(100), np.zeros(50)]
    qdd = np.gradient(qd)
    mask = constant_velocity_mask(qd, qdd, accel_threshold=1e-3, speed_threshold=0.5, trim=10)
    assert mask.sum() == 100 - 2 * 10 - 2  # the gradient also marks the samples at the corners
    assert not mask[:61].any() and not mask[-61:].any()


def test_travel_counts_from_each_start_and_reversal():
    """The travel restarts where the joint was stopped or turned, and the settle distance
    leaves out the samples of each move that travelled less."""
    qd = np.r_[np.zeros(5), np.ones(20), -np.ones(20), np.zeros(5), np.ones(10)]
    q = np.cumsum(qd) * 0.1
    travel = travel_since_start(q, qd, stop_speed=0.5)
    assert travel[5] == 0.0 and travel[24] == pytest.approx(1.9)  # 19 steps of 0.1 rad
    assert travel[25] == 0.0 and travel[44] == pytest.approx(1.9)
    assert travel[50] == 0.0 and travel[-1] == pytest.approx(0.9)
    qdd = np.zeros_like(qd)
    mask = constant_velocity_mask(qd, qdd, accel_threshold=1.0, speed_threshold=0.5, trim=0,
                                  q=q, settle=1.0)
    assert np.flatnonzero(mask).tolist() == [*range(15, 25), *range(35, 45)]


def test_cve_empty_without_constant_velocity():
    t = np.arange(2000) * 1e-3
    q = np.sin(2 * np.pi * t)
    qd = 2 * np.pi * np.cos(2 * np.pi * t)
    qdd = -(2 * np.pi) ** 2 * q
    pts = cve_points(cve_pairs(q, qd, qdd, qd, accel_threshold=1e-6))
    assert isinstance(pts, pd.DataFrame) and pts.empty


# ----------------------------------------------------------------------------- free run


def test_restart_indices():
    np.testing.assert_array_equal(restart_indices(10, 0.1, 0.3), [0, 3, 6, 9])
    np.testing.assert_array_equal(restart_indices(10, 0.1, None), [0])


def test_free_run_truth_reproduces_measurement(example, truth):
    traj = next(t for t in example if "v0p81" in t.name)
    res = free_run_compare(truth, traj.t, traj.q, traj.tau, restart_s=0.5)
    assert res.rms_q < 1e-3  # rad, on a 1.45 rad stroke
    assert res.max_abs_q < 5e-3
    assert res.rms_qd < 0.01  # rad/s, on 0.81 rad/s
    assert len(res.restarts) == int(np.ceil(len(traj) / 500))
    np.testing.assert_allclose(res.q_sim[res.restarts], traj.q[res.restarts])
    # a wrong model (inertia and Coulomb friction off) does clearly worse
    wrong = truth.with_(inertia=2 * truth.inertia, coulomb=0.7 * truth.coulomb)
    bad = free_run_compare(wrong, traj.t, traj.q, traj.tau, res.qd, restart_s=0.5)
    assert bad.rms_q > 5 * res.rms_q


def test_free_run_static_model(example, truth):
    """A static model runs through the same simulator (stiff bristle) and stays near."""
    traj = next(t for t in example if "v0p81" in t.name)
    static = truth.with_(kind="static")
    res = free_run_compare(static, traj.t[:3000], traj.q[:3000], traj.tau[:3000],
                           traj.truth["qd_true"][:3000], restart_s=0.5)
    assert np.all(np.isfinite(res.q_sim))
    assert res.rms_q < 0.02  # rad; without restarts the open-loop drift is ~0.6 rad


# ----------------------------------------------------------------------------- hysteresis


def test_hysteresis_branches(truth):
    h = 1e-3
    t = np.arange(4000) * h
    qd = 0.5 * np.sin(2 * np.pi * 0.5 * t)
    qdd = 0.5 * 2 * np.pi * 0.5 * np.cos(2 * np.pi * 0.5 * t)
    q = np.cumsum(qd) * h
    tau_f = truth.friction_torque(qd, h)
    tau = truth.rigid_body_torque(q, qdd) + tau_f
    measured = friction_from_torque(truth, q, qdd, tau)
    np.testing.assert_allclose(measured, tau_f, atol=1e-9)
    loops = hysteresis(qd, qdd, measured, v_window=0.1)
    assert set(loops["branch"]) == {"accelerating", "decelerating"}
    assert loops["qd"].abs().max() < 0.1
    # q̇ = 0.5 sin(πt) on [0, 4) s: low-speed episodes at t = 0, 1, 2, 3 and 4 s
    assert loops["event"].nunique() == 5
    acc = loops[loops.branch == "accelerating"]
    assert np.all(acc["qd"].to_numpy() * qdd[acc["index"].to_numpy()] > 0)
    # LuGre lags: at the same positive speed, friction is lower while accelerating out of a
    # reversal than while decelerating into one
    pos = loops[(loops.qd > 0.05) & (loops.qd < 0.09)]
    f_acc = pos[pos.branch == "accelerating"]["tau_f"].mean()
    f_dec = pos[pos.branch == "decelerating"]["tau_f"].mean()
    assert f_acc < f_dec


def test_free_run_of_a_model_without_coulomb_friction():
    """A static model with viscous friction only (f_c + ΣA = 0): simulated as LuGre its g(q̇)
    was 0 and the report's free run divided by zero; the joint now follows τ = I q̈ + c q̇."""
    model = JointModel(inertia=1.0, viscous=((1, 2.0),))
    t = np.arange(2000) * 1e-3
    tau = np.where(t < 1.0, 2.0, 0.0)  # 2 N·m for 1 s: q̇ → 1 − e^{−2t}, then decays
    qd_true = np.where(t < 1.0, 1 - np.exp(-2 * t), (1 - np.exp(-2.0)) * np.exp(-2 * (t - 1.0)))
    q_true = np.concatenate([[0.0], np.cumsum(qd_true[:-1]) * 1e-3])
    res = free_run_compare(model, t, q_true, tau, qd=qd_true)
    assert np.all(np.isfinite(res.q_sim))
    np.testing.assert_allclose(res.qd_sim, qd_true, atol=5e-3)
