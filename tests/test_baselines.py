"""Tests of the baseline identification methods (:mod:`sparsefric.baselines`)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import sparsefric.baselines as B  # noqa: N812
from sparsefric.data import Trajectory, load_trajectories
from sparsefric.errors import FitWarning
from sparsefric.model import JointModel

ROOT = Path(__file__).resolve().parents[1]
EMPS = ROOT / "data" / "emps" / "emps_estimation.csv"
EXAMPLE = ROOT / "data" / "example"

#: Published IDIM-LS reference of EMPS (data/emps/README.md).
EMPS_REF = {"inertia": 95.1089, "c1": 203.5034, "coulomb": 20.3935, "offset": -3.1648}


@pytest.fixture(scope="module")
def truth() -> JointModel:
    return JointModel.load(EXAMPLE / "truth.json")


@pytest.fixture(scope="module")
def train() -> list[Trajectory]:
    return load_trajectories(sorted(EXAMPLE.glob("train_*.csv")))


def test_idim_ls_reproduces_emps_reference():
    # Achieved: M −0.01 %, Fv −0.06 %, Fc +0.07 %, OF −3.170 N (0.005 N from −3.1648).
    d = pd.read_csv(EMPS)
    tr = Trajectory(t=d["t"].to_numpy(), q=d["q"].to_numpy(), tau=d["tau"].to_numpy())
    m = B.idim_ls([tr], "prismatic", cutoff_hz=100.0, decimate=10)
    got = {"inertia": m.inertia, "c1": dict(m.viscous)[1], "coulomb": m.coulomb,
           "offset": m.offset}
    rel = {k: abs(got[k] / EMPS_REF[k] - 1.0) for k in EMPS_REF}
    assert rel["inertia"] < 0.002
    assert rel["c1"] < 0.002
    assert rel["coulomb"] < 0.002
    assert abs(got["offset"] - EMPS_REF["offset"]) < 0.05
    assert m.kind == "static" and m.axis == "prismatic"
    assert m.extra["idim_ls"]["rows"] > 2000


def _with_short_piece(traj: Trajectory) -> Trajectory:
    """``traj`` with samples 1000:1030 moved by 0.5 rad: a piece too short between two jumps."""
    q = traj.q.copy()
    q[1000:1030] += 0.5
    return traj.with_(q=q)


def test_fit_baseline_warns_of_the_pieces_it_leaves_out(train):
    """The notes of the records' cutting were dropped: a piece left out went without a word."""
    jumped = [_with_short_piece(train[0]), *train[1:]]
    with pytest.warns(FitWarning) as record:
        B.fit_baseline("idim-ls", jumped, validate=[_with_short_piece(train[1])])
    notes = [str(w.message) for w in record if w.category is FitWarning]
    for traj in (train[0], train[1]):
        assert f"{traj.name}: 1 piece(s) between jumps shorter than 50 samples left out " \
               "(samples [1000:1030])" in notes
    assert {w.filename for w in record if w.category is FitWarning} == {__file__}
    with warnings.catch_warnings():
        warnings.simplefilter("error", FitWarning)  # nothing cut, nothing said
        B.fit_baseline("idim-ls", train)


def test_idim_ls_example_rigid_body(truth, train):
    m = B.idim_ls(train, "revolute", cutoff_hz=20.0, decimate=10, viscous_powers=(1, 3),
                  min_velocity=0.05)
    assert m.inertia == pytest.approx(truth.inertia, rel=0.02)
    assert m.gravity_cos == pytest.approx(truth.gravity_cos, rel=0.02)
    assert m.gravity_sin == pytest.approx(truth.gravity_sin, abs=0.6)  # −5.6 vs −6
    assert m.coulomb == pytest.approx(truth.coulomb, rel=0.1)


def test_idim_ls_stops_bias_without_velocity_threshold(truth, train):
    # At rest the friction is not f_c sign(q̇): keeping those rows biases I by > 10 %.
    m = B.idim_ls(train, "revolute", cutoff_hz=20.0, decimate=10)
    assert abs(m.inertia / truth.inertia - 1.0) > 0.1


def test_idim_ls_rejects_unknown_axis(train):
    with pytest.raises(ValueError, match="axis"):
        B.idim_ls(train[:1], "spherical")


def _cve_points(truth: JointModel, noise: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    v = np.geomspace(0.005, 2.5, 25)
    v = np.concatenate([v, -v])
    rng = np.random.default_rng(1)
    return v, truth.static_friction(v) + rng.normal(0.0, noise, v.size)


def test_fit_static_curve_recovers_truth(truth):
    v, tf = _cve_points(truth)
    fc, amp, omega, delta, viscous = B.fit_static_curve(v, tf, viscous_powers=(1, 3))
    assert fc == pytest.approx(truth.coulomb, rel=0.02)
    assert amp == pytest.approx(truth.stribeck[0][1], rel=0.05)
    assert omega == pytest.approx(truth.stribeck_velocity, rel=0.05)
    assert delta == pytest.approx(truth.stribeck[0][0], rel=0.1)
    assert dict(viscous)[1] == pytest.approx(9.0, rel=0.05)
    assert dict(viscous)[3] == pytest.approx(0.8, rel=0.05)


def test_two_step_recovers_sigma(truth):
    pre = B.presliding_experiment(truth, amplitude_fraction=0.1, duration=2.0, seed=0)
    assert np.ptp(pre.q) < 1e-3  # pre-sliding: sub-milliradian
    m = B.two_step_lugre(_cve_points(truth), pre, "revolute", viscous_powers=(1, 3))
    # Achieved: σ0 −1 %, σ1 +18 % (bristle hysteresis adds damping), I −2 %.
    assert m.kind == "lugre"
    assert m.sigma0 == pytest.approx(truth.sigma0, rel=0.2)
    assert m.sigma1 == pytest.approx(truth.sigma1, rel=0.3)
    assert m.inertia == pytest.approx(truth.inertia, rel=0.1)
    assert m.coulomb == pytest.approx(truth.coulomb, rel=0.02)


def test_presliding_arx_euler_and_plain_ls_run(truth):
    pre = B.presliding_experiment(truth, amplitude_fraction=0.1, seed=2)
    s0, d, inertia, info = B.fit_presliding_arx(pre.q, pre.tau, pre.dt, decimate=5,
                                                discretisation="euler")
    assert info["discretisation"] == "euler" and len(info["b"]) == 1
    assert np.isfinite([s0, d, inertia]).all()
    with pytest.raises(ValueError, match="discretisation"):
        B.fit_presliding_arx(pre.q, pre.tau, pre.dt, discretisation="tustin")


def test_output_error_improves_start(truth, train):
    start = B.idim_ls(train, "revolute", cutoff_hz=20.0, decimate=10, viscous_powers=(1, 3),
                      min_velocity=0.05)
    short = [t.with_(t=t.t[:3000], q=t.q[:3000], tau=t.tau[:3000]) for t in train]
    m = B.output_error_lugre(short, "revolute", start, max_nfev=15)
    info = m.extra["output_error"]
    assert m.kind == "lugre" and m.sigma0 > 0 and m.sigma1 > 0
    assert info["rmse"] < 0.8 * info["rmse_start"]
    assert info["nfev"] <= 15 and info["wall_time_s"] > 0
    assert info["samples"] == 6000


def test_output_error_multistart_keeps_the_best_start(train):
    start = B.idim_ls(train, "revolute", cutoff_hz=20.0, decimate=10, viscous_powers=(1, 3),
                      min_velocity=0.05)
    short = [t.with_(t=t.t[:2000], q=t.q[:2000], tau=t.tau[:2000]) for t in train]
    single = [B.output_error_lugre(short, "revolute", start, sigma0_start=s0, max_nfev=6)
              for s0 in (1e3, 1.5e4)]
    m = B.output_error_multistart(short, "revolute", start, (1e3, 1.5e4), max_nfev=6)
    info = m.extra["output_error"]
    best = min(single, key=lambda s: s.extra["output_error"]["rmse"])
    assert info["rmse"] == pytest.approx(best.extra["output_error"]["rmse"], rel=1e-9)
    assert m.sigma0 == pytest.approx(best.sigma0, rel=1e-9)
    assert info["starts"] == [1e3, 1.5e4] and m.extra["method"] == "output_error_multistart"
    assert info["evaluations"] == sum(s.extra["output_error"]["evaluations"] for s in single)


@pytest.fixture(scope="module")
def small_joint() -> tuple[JointModel, list[Trajectory]]:
    """data/example's truth in closed loop, logged at 1 kHz: a slow move (0.05 rad/s, the
    Stribeck region) and a fast one (1.2 rad/s)."""
    from sparsefric.simulate import EXAMPLE_TRUTH, Sensors, simulate_moves

    records = [simulate_moves(EXAMPLE_TRUTH, lo, hi, v, 4.0, dwell=0.3, sensors=Sensors(seed=k),
                              name=f"v{v}")
               for k, (lo, hi, v) in enumerate(((-0.1, 0.15, 0.05), (-0.6, 0.8, 1.2)))]
    return EXAMPLE_TRUTH, records


def test_output_error_on_the_pipelines_signals_recovers_the_truth_started_near_it(small_joint):
    # Achieved: I −0.8 %, f_c −0.3 %, σ0 +0.9 %, a_c −0.2 %; 18 solver steps, ~4 s.
    from sparsefric.preprocessing import Preprocessor

    truth, records = small_joint
    start = truth.with_(inertia=1.1 * truth.inertia, coulomb=0.95 * truth.coulomb,
                        sigma0=1.3 * truth.sigma0, sigma1=0.8 * truth.sigma1,
                        stribeck=((1.2, 8.0),))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a model without a validity range: nothing to say
        m = B.output_error_lugre(records, "revolute", start, differentiation="tv",
                                 complete_start=False, max_nfev=30)
    info = m.extra["output_error"]
    assert m.inertia == pytest.approx(truth.inertia, rel=0.02)
    assert m.coulomb == pytest.approx(truth.coulomb, rel=0.02)
    assert m.sigma0 == pytest.approx(truth.sigma0, rel=0.1)
    assert m.gravity_cos == pytest.approx(truth.gravity_cos, rel=0.01)
    assert info["rmse"] < 0.9 * info["rmse_start"] and info["cutoff_hz"] is None
    assert info["differentiation"] == "tv" and not info["averaged"]
    # the cost is the pipeline's score: the relative error of Prepared on the measured torque
    prep = Preprocessor().prepare(records)
    assert info["samples"] == len(prep)
    assert info["rmse"] * np.sqrt(len(prep)) / np.linalg.norm(prep.tau_raw) == \
        pytest.approx(prep.relative_error(m), rel=1e-9)
    assert prep.relative_error(m) <= prep.relative_error(truth)


def test_output_error_kept_structure_and_shared_preprocessing(small_joint, monkeypatch):
    """``complete_start=False`` fits the start's own terms (none of Stribeck: no Ω_s either);
    fits sharing a preprocessor differentiate the records once; a static start is refused."""
    import sparsefric.preprocessing as P  # noqa: N812

    truth, records = small_joint
    plain = truth.with_(stribeck=(), coulomb=truth.g0)
    calls, real = [], P.prepare
    monkeypatch.setattr(P, "prepare", lambda *a, **k: calls.append(1) or real(*a, **k))
    pre = P.Preprocessor()
    fits = [B.output_error_lugre(records, "revolute", plain, differentiation=d,
                                 complete_start=False, max_nfev=2, preprocessor=pre)
            for d in ("tv", "tv-averaged")]
    assert len(calls) == 1
    for m in fits:
        assert m.stribeck == () and m.stribeck_velocity == truth.stribeck_velocity
        assert dict(m.viscous).keys() == {1, 3}
        assert m.extra["output_error"]["parameters"] == 8  # I, a_c, a_s, f_c, c1, c3, σ0, σ1
    assert fits[1].extra["output_error"]["averaged"]  # TV of q̈: a second difference
    assert fits[0].extra["output_error"]["rmse"] != fits[1].extra["output_error"]["rmse"]
    with pytest.raises(ValueError, match="LuGre start"):
        B.output_error_lugre(records, "revolute", truth.with_(kind="static"),
                             differentiation="tv", complete_start=False, preprocessor=pre)
