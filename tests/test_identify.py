"""The whole pipeline on bundled data: the acceptance figures we hold ourselves to."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest

from sparsefric.data import load_trajectories
from sparsefric.errors import SparsefricError
from sparsefric.estimator import SparseFric
from sparsefric.identify import (
    DEFAULT_SIGMA0_STARTS,
    default_sigma0_starts,
    fit_joint,
    settings,
)

from .conftest import EMPS

pytestmark = pytest.mark.slow  # whole identifications

V = np.geomspace(0.02, 2.1, 400)


def _curve_error(model, truth) -> float:
    ref = truth.static_friction(V)
    return float(np.sqrt(np.mean(((model.static_friction(V) - ref) / ref) ** 2)))


def test_static_step_recovers_rigid_body_and_term_families(fitted, truth):
    m = fitted.static_model_
    assert m.inertia == pytest.approx(truth.inertia, rel=0.02)
    assert m.gravity_cos == pytest.approx(truth.gravity_cos, rel=0.02)
    # step 1's δ is 2.75 here (AICc flat over the δ grid: 0.2 above δ = 0.5), and the static
    # friction (ż = 0) leans on a_s: −3 %; the LuGre stage brings it to +0.3 %
    assert m.gravity_sin == pytest.approx(truth.gravity_sin, rel=0.04)
    active = set(fitted.terms_[fitted.terms_.step1_active].kind)
    assert {"inertia", "gravity_cos", "gravity_sin", "viscous", "coulomb", "stribeck"} <= active
    assert _curve_error(m, truth) < 0.06
    table = fitted.selection_
    assert table.selected.sum() == 1 and table.loc[table.selected, "aic_r"].item() == 0.0
    assert (table.n_active + table.n_eliminated == len(fitted.result_.library)).all()


def test_lugre_iterations_recover_dynamic_parameters(fitted, truth):
    m = fitted.model_
    assert m.kind == "lugre" and fitted.converged_ and not fitted.warnings_
    assert m.sigma0 == pytest.approx(truth.sigma0, rel=0.2)
    assert m.sigma1 == pytest.approx(truth.sigma1, rel=0.3)
    assert m.inertia == pytest.approx(truth.inertia, rel=0.01)
    assert _curve_error(m, truth) < 0.02
    assert m.breakaway_torque() == pytest.approx(truth.breakaway_torque(), rel=0.03)
    assert abs(fitted.result_.xi_u - 1) < 0.05


def test_a_held_torque_puts_sigma1_at_the_truth(fitted, truth, example):
    """data/example logs the command the simulator holds over each interval. Averaged as an
    instantaneous torque (the default) against the second-difference q̈, the torque pairs with
    the motion h/2 early, and pre-sliding turns that into σ1 + hσ0/2 = 60 + 7.5 N·m·s/rad:
    +11 %. Told that the torque is held, σ1 is within a few percent."""
    assert 1.06 < fitted.model_.sigma1 / truth.sigma1 < 1.2
    held = SparseFric(torque_timing="hold", uncertainty="none")
    held.fit(example["train"], validate=example["validate"])
    assert held.model_.sigma1 == pytest.approx(truth.sigma1, rel=0.05)
    assert held.model_.inertia == pytest.approx(truth.inertia, rel=0.01)
    assert fitted.model_.extra["fit"]["torque_timing"] == "instant"
    assert held.model_.extra["fit"]["torque_timing"] == "hold"  # model.json says how
    with pytest.raises(SparsefricError, match="torque_timing"):
        SparseFric(torque_timing="zoh").fit(example["train"])


def test_a_torque_logged_early_is_aligned_by_torque_delay(fitted, example):
    """data/example with its torque logged 3 samples (3 ms) early, as a drive logs its current
    command: σ1 reads the lead as bristle damping, L σ0 ≈ 45 N·m·s/rad on the 66.5 of the
    records as they are (114.7 measured, +73 %), and the fit warns with the delay to rerun
    with (−0.0028 s). With torque_delay=-0.003 every record is aligned, training, validation
    and test: no warning, σ1 71.1 (+7 %: at the minimum of the prediction error, which
    predicts the aligned records' validation torque 0.4 % better, ``DESIGN.md`` §101, and the
    records' as they are not), the test error that of the records as they are (3.31 against
    3.34 %), and model.json records the delay."""
    early = {role: [tr.with_(tau=np.roll(tr.tau, -3)) for tr in trajs]  # 3 samples early
             for role, trajs in example.items()}
    plain = fitted.model_.sigma1
    lead = SparseFric(uncertainty="none").fit(early["train"], validate=early["validate"])
    (found,) = [f for f in lead.result_.findings if f.code == "torque_delay"]
    rerun = re.search(r"rerun with `torque_delay=([^`]+)`$", found.message)
    assert rerun and float(rerun[1]) == pytest.approx(-3e-3, abs=5e-4)
    assert lead.model_.sigma1 > 1.5 * plain
    # the bootstrap's refits skip the warnings of the fitted model, the scan among them: the
    # same model, without the finding
    quiet, _ = fit_joint(early["train"], early["validate"],
                         replace(settings({"uncertainty": "none"}), model_warnings=False))
    assert quiet.model.parameters() == lead.model_.parameters()
    assert not any(f.code == "torque_delay" for f in quiet.findings)
    aligned = SparseFric(uncertainty="none", torque_delay=-3e-3)
    aligned.fit(early["train"], validate=early["validate"])
    assert not any(f.code == "torque_delay" for f in aligned.result_.findings)
    assert aligned.model_.sigma1 == pytest.approx(plain, rel=0.1)
    assert aligned.relative_error(early["test"]) == pytest.approx(
        fitted.relative_error(example["test"]), rel=0.03)
    assert aligned.model_.extra["fit"]["torque_delay"] == -3e-3


def test_refinement_rounds_reach_the_true_stribeck_shape(fitted, truth):
    """Step 1 picks δ = 0.5 (ż = 0 biases it); rounds with the LuGre columns reach δ = 1.5."""
    assert fitted.result_.refined and len(fitted.result_.lugre.refinement.runs) >= 2
    (delta, amp), = fitted.model_.stribeck
    assert delta == 1.5 and amp == pytest.approx(7.0, rel=0.05)
    assert fitted.model_.stribeck_velocity == pytest.approx(0.08, rel=0.1)


def test_refinement_selects_friction_terms_with_the_dynamic_columns(fitted):
    table = fitted.result_.lugre.refinement.table.table
    assert table.selected.sum() == 1
    assert fitted.result_.refined  # on data/example the re-selected model predicts better


def test_dynamic_model_predicts_test_data_at_the_noise_floor(fitted, example, truth):
    dynamic = fitted.relative_error(example["test"])
    static = fitted.relative_error(example["test"], fitted.static_model_)
    floor = fitted.relative_error(example["test"], truth)
    assert dynamic < static / 3
    assert dynamic < 1.2 * floor


def test_every_sigma0_start_converges_or_says_why(fitted):
    lugre = fitted.result_.lugre
    assert len(lugre.runs) == len(lugre.sigma0_starts)
    for run in lugre.runs:
        assert run.reason and run.history
        if not run.converged:
            assert "converge" in run.reason or "stalled" in run.reason or "g(" in run.reason


@pytest.fixture(scope="module")
def emps():
    return load_trajectories([EMPS])


def test_emps_reference_model_is_reproduced(emps):
    est = SparseFric(axis="prismatic", library="coulomb-viscous-offset", static_only=True)
    m = est.fit(emps).model_
    assert m.inertia == pytest.approx(95.1089, rel=0.01)
    assert dict(m.viscous)[1] == pytest.approx(203.5034, rel=0.02)
    assert m.coulomb == pytest.approx(20.3935, rel=0.03)
    assert m.offset == pytest.approx(-3.1648, abs=0.3)


def test_a_torque_of_the_opposite_sign_is_named(emps):
    """Torque logged with the opposite sign convention: inertia −95 kg; once a division by zero
    deep in the LuGre integration (the sign constraint zeroed the Coulomb level)."""
    flipped = [emps[0].with_(tau=-emps[0].tau)]
    est = SparseFric(axis="prismatic", library="coulomb-viscous-offset")
    with pytest.raises(SparsefricError, match="inertia is negative .* opposite sign"):
        est.fit(flipped)


def test_no_positive_coulomb_level_keeps_the_static_model(example, monkeypatch):
    short = [tr.with_(t=tr.t[:6000], q=tr.q[:6000], tau=tr.tau[:6000])
             for tr in example["train"]]
    import sparsefric.identify as identify

    est = SparseFric(sigma0_starts=(1e4,))
    monkeypatch.setattr(identify, "first_outer",
                        lambda static, prep, nu: replace(static.terms, coulomb=0.0, stribeck=()))
    est.fit(short)
    assert est.model_ is est.static_model_ and est.lugre_model_ is None
    assert any("no positive Coulomb level" in w for w in est.warnings_)


def test_a_static_model_without_dry_friction_gets_the_coulomb_level(example, truth):
    """A static model to return whose g(q̇) decays to 0 within the recorded speeds (no
    Coulomb level, a steep Stribeck rise) was refused as inadmissible: step 1's support now
    gets the Coulomb column, as the LuGre steps give it, and a warning says so."""
    from types import SimpleNamespace

    import sparsefric.identify as identify
    from sparsefric.steps import checks

    s = settings({"static_only": True})
    prep = s.preprocessor.prepare(example["train"])
    static = identify.fit_static(prep, None, s.library(), omega_starts=s.omega_starts,
                                 nu=s.iterations.nu, thresholds=s.thresholds, rule=s.rule)
    bare = static.terms.joint_model(s.axis, s.tanh_k).with_(
        coulomb=0.0, stribeck=((3.75, 20.0),), stribeck_velocity=0.17)
    assert checks.dry_level_lost(bare, 2.1) == pytest.approx(-2.1)
    result = SimpleNamespace(model=bare, static_model=bare, findings=[])
    identify._keep_dry_level(result, static, prep, s, 2.1)
    assert result.model is result.static_model
    assert result.model.coulomb == pytest.approx(truth.coulomb, rel=0.1)
    assert checks.admissibility(result.model, 2.1) == []
    (added,) = result.findings
    assert added.code == "coulomb_added" and "no dry friction left at -2.1 rad/s" in added.message


def test_a_torque_offset_is_pointed_out(example, fitted):
    """+10 N·m on every torque of data/example (23 % of its RMS): without --offset it cost the
    inertia 11 % and f_c 35 %, silently; the refit with an offset column finds 9.7 N·m."""
    biased = {role: [tr.with_(tau=tr.tau + 10.0) for tr in example[role]]
              for role in ("train", "validate")}
    est = SparseFric(static_only=True).fit(biased["train"], validate=biased["validate"])
    (warning,) = [w for w in est.warnings_ if "`offset=True`" in w]
    found = re.search(r"puts ([\d.]+) N·m \(23 %", warning)
    assert found and float(found.group(1)) == pytest.approx(10.0, abs=0.5)
    assert not [w for w in fitted.warnings_ if "offset" in w]


def test_loading_notes_reach_the_warnings(emps):
    noted = [emps[0].with_(notes=("emps: column 'q' wraps around at ±π",))]
    est = SparseFric(axis="prismatic", library="coulomb-viscous-offset", static_only=True)
    assert est.fit(noted).warnings_[0] == noted[0].notes[0]


def test_free_run_of_the_identified_model_follows_the_measured_motion(fitted, example):
    traj = example["test"][0]
    n = 1500  # 1.5 s from rest: open loop drifts over longer spans of a closed-loop recording
    q, qd = fitted.simulate(traj.tau[:n], q0=traj.q[0], qd0=0.0, dt=traj.dt)
    ref_q, ref_qd = traj.truth["q_true"][:n], traj.truth["qd_true"][:n]
    assert np.sqrt(np.mean((q - ref_q) ** 2)) < 0.05 * np.ptp(ref_q)
    assert np.sqrt(np.mean((qd - ref_qd) ** 2)) < 0.1 * np.max(np.abs(ref_qd))


def test_custom_columns_join_the_library(example):
    from sparsefric.feature_library import CustomLibrary, static_library

    lib = static_library(name="coulomb-viscous") + CustomLibrary(
        [lambda q, qd, qdd: np.cos(2 * q)], ["cos(2q)"])
    assert [t.name for t in lib.terms()][-1] == "cos(2q)"
    assert len(lib.select([True] * (len(lib) - 1) + [False])) == len(lib) - 1


def test_collinear_columns_are_reported():
    from sparsefric.data import Trajectory

    t = np.arange(6000) * 1e-3
    q = 0.01 * np.sin(2 * np.pi * 5 * t)  # the joint barely moves: cos q ≈ 1
    qd = np.gradient(q, t)
    tau = 0.2 * np.gradient(qd, t) + 5 * np.cos(q) + 3 * np.sign(qd) + 2 * qd
    tau += 0.05 * np.random.default_rng(0).normal(size=t.size)
    est = SparseFric(library="coulomb-viscous", offset=True, static_only=True,
                     differentiation="given")
    est.fit([Trajectory(t, q, tau, qd=qd, qdd=np.gradient(qd, t))])
    assert ("cos(q)", "1") in [(a, b) for a, b, _ in est.result_.collinear]
    assert any("nearly collinear" in w for w in est.warnings_)


def test_default_sigma0_starts_scale_with_the_breakaway_level(fitted):
    assert default_sigma0_starts(25.0, "revolute") == pytest.approx(DEFAULT_SIGMA0_STARTS)
    # a linear guide deflects ~µm before sliding: σ0 starts 100× stiffer per metre
    assert default_sigma0_starts(25.0, "prismatic") == pytest.approx(
        [100 * s for s in DEFAULT_SIGMA0_STARTS])
    g0 = fitted.static_model_.coulomb + sum(a for _, a in fitted.static_model_.stribeck)
    starts = fitted.result_.lugre.sigma0_starts
    assert starts == pytest.approx(default_sigma0_starts(g0, "revolute"), rel=0.2)
    # on data/example g(0) ≈ 25 N·m: the paper's starts
    assert starts == pytest.approx(DEFAULT_SIGMA0_STARTS, rel=0.15)


def test_the_fitted_data_are_differentiated_once(fitted, example, monkeypatch):
    import pickle

    import sparsefric.preprocessing as preprocessing

    def fail(*a, **k):
        raise AssertionError("differentiated again")

    monkeypatch.setattr(preprocessing, "prepare", fail)
    result = fitted.result_
    train = result.prepare(example["train"])
    assert result.prepare(example["validate"]) is not train
    with pytest.raises(AssertionError, match="again"):
        result.prepare(example["test"])
    assert pickle.loads(pickle.dumps(fitted)).result_.preprocessor._cache == []


def test_a_weak_joint_keeps_its_inertia_when_validation_reaches_a_new_regime():
    """The paper's split validates at 0.03 rad/s, below every training speed. Scored on the
    validation samples alone, AICc chose Coulomb + cos q for this weak joint (I = 0, test error
    4.3× the noise floor)."""
    from sparsefric.model import JointModel
    from sparsefric.simulate import Sensors, paper_experiment

    truth = JointModel(axis="revolute", inertia=0.02, gravity_cos=0.3, gravity_sin=0.05,
                       kind="lugre", coulomb=0.5, stribeck_velocity=0.05,
                       stribeck=((1.5, 0.3),), viscous=((1, 0.2),), sigma0=1e3, sigma1=1.8)
    d = paper_experiment(truth, sensors=Sensors(position_noise=5e-6, torque_noise=0.0136,
                                                seed=1))
    est = SparseFric().fit(d["train"], validate=d["validate"])
    assert est.static_model_.inertia == pytest.approx(truth.inertia, rel=0.05)
    assert est.model_.inertia == pytest.approx(truth.inertia, rel=0.05)
    floor = est.relative_error(d["test"], model=truth)
    assert est.relative_error(d["test"]) < 1.2 * floor
    # δ = 2.75 for 1.5 (its test error is below the truth's: these data do not tell them apart)
    assert _curve_error(est.model_, truth) < 0.04


def test_parameters_held_at_their_bound_are_named_beside_the_convergence():
    """A model at the edge of what it may be is not reported as plainly converged: the
    inertia held at 0, and of a LuGre model f_c and σ1 at their sign constraints; a static
    model's f_c of 0 is a term left out."""
    from sparsefric.identify import _at_zero
    from sparsefric.simulate import EXAMPLE_TRUTH

    assert _at_zero(EXAMPLE_TRUTH) == []
    assert _at_zero(EXAMPLE_TRUTH.with_(inertia=0.0, sigma1=0.0)) == ["I", "σ1"]
    assert _at_zero(EXAMPLE_TRUTH.with_(coulomb=0.0)) == ["f_c"]
    assert _at_zero(EXAMPLE_TRUTH.with_(kind="static", coulomb=0.0, sigma0=0.0,
                                        sigma1=0.0)) == []


def test_an_inadmissible_model_from_a_one_way_move_names_the_cause():
    """One move of data/example, 0 to +2.1 rad/s: the Coulomb level is left to gravity, the
    fitted friction opposes the motion nowhere, and the error says why (not only where)."""
    from .conftest import EXAMPLE

    (record,) = load_trajectories([EXAMPLE / "train_v2p13.csv"])
    one_way = record.part(slice(500, 1500))
    est = SparseFric(static_only=True, library="coulomb-viscous", differentiation="butterworth")
    with pytest.raises(SparsefricError, match=r"physically inadmissible: .*; the data explain "
                                              r"it: the joint moves in the positive direction"):
        est.fit([one_way])
