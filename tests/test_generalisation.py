"""Failure modes of unseen joints (issue: a randomised joint zoo), each on a simulated joint.

Mode 3 (differentiation of coarse encoders) and mode 6 (records with jumps) are tested with the
preprocessing; these are the modes of the fit itself.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from sparsefric.feature_library import DEFAULT_DELTAS
from sparsefric.lugre import FrictionParams
from sparsefric.signals import Signals
from sparsefric.simulate import EXAMPLE_TRUTH, PAPER_SPLIT, Sensors, paper_experiment
from sparsefric.steps import checks
from sparsefric.steps.iterations import FrictionData, Structure, outer_fit

SENSORS = Sensors(encoder_resolution=2 * np.pi / 2**20, position_noise=2e-6, torque_noise=0.2,
                  seed=7)


def _fit(truth, split, **kwargs):
    from sparsefric.estimator import SparseFric

    data = paper_experiment(truth, split, sensors=SENSORS)
    est = SparseFric(**kwargs).fit(data["train"], validate=data.get("validate"))
    return est, data


def test_mode1_the_outer_fit_keeps_stribeck_velocity_within_what_sliding_resolves():
    """σ0 multi-start collapse: with every sample in its columns, Ω_s fell to the TV noise at
    the stops (1e-7 rad/s) and A grew without bound. The bound from the sliding samples holds."""
    tr = paper_experiment(EXAMPLE_TRUTH, {"train": (0.127,)}, sensors=Sensors())["train"][0]
    qd = tr.truth["qd_true"]
    x = Signals(tr.q, qd, np.zeros_like(qd))
    tau_c = EXAMPLE_TRUTH.friction_torque(qd, tr.dt)
    low = np.log(0.05)
    data = FrictionData(x, tau_c, [(0, len(qd))], [float(tr.dt)],
                        theta_bounds=(low, np.log(20.0)))
    start = FrictionParams(18.0, 1e-4, np.array([1.5]), np.array([7.0]), np.array([1.0]),
                           np.array([9.0]), 15000.0, 60.0)
    found = outer_fit(start, Structure((1,), (1.5,)), data, nu=0.01)
    assert np.log(found.stribeck_velocity) >= low - 1e-9
    assert found.amplitudes[0] < 3 * 7.0


@pytest.mark.slow
def test_mode4_a_stribeck_knee_between_two_speeds_is_no_negative_viscous_slope():
    """δ 3, Ω_s 0.35 between the paper's training speeds: the fit was f_c + c1 q̇ with c1 = −5
    (static curve 12.5 % off, no warning). The viscous part now never falls with speed."""
    truth = EXAMPLE_TRUTH.with_(stribeck=((3.0, 12.0),), stribeck_velocity=0.35,
                                viscous=((1, 4.0),))
    est, _ = _fit(truth, PAPER_SPLIT)
    m = est.model_
    v = np.linspace(0, 1.5 * 2.13, 200)
    tau_v = np.zeros_like(v) + sum(c * v**p for p, c in m.viscous)
    assert np.all(np.diff(tau_v) >= -1e-9)
    assert checks.admissibility(m, 2.13) == []
    curve = np.geomspace(0.127, 2.13, 100)
    err = np.sqrt(np.mean((m.static_friction(curve) / truth.static_friction(curve) - 1) ** 2))
    assert err < 0.05 or any("friction curve" in w for w in est.warnings_)


@pytest.mark.slow
def test_mode5_one_slow_file_gives_its_friction_level_not_an_inadmissible_model():
    """Trained on one slow file the fit gave σ1 = −18 and c₅ = −2.3e5 with exit status 0; later
    a Coulomb-free c₁q̇ − c₃q̇³ − c₄q̇⁴ (g ≡ 0), refused as inadmissible. At one speed the data
    hold one friction level: the model is that level, said so, with the break-away unresolved."""
    est, _ = _fit(EXAMPLE_TRUTH, {"train": (0.03,)})
    m = est.model_
    assert m.kind == "lugre" and m.inertia > 0 and m.sigma1 >= 0
    assert not m.viscous and not m.stribeck
    level = float(EXAMPLE_TRUTH.static_friction(np.array([0.03]))[0])
    assert m.coulomb == pytest.approx(level, rel=0.03)
    assert not [f for f in checks.admissibility(m, 0.03) if f.level == "error"]
    codes = {f.code for f in est.result_.findings}
    assert "one_speed_level" in codes and "narrow_velocity_range" not in codes
    assert any("break-away" in w and "extrapolated" in w for w in est.warnings_)


@pytest.mark.parametrize("library", ["full", "coulomb-viscous", "coulomb-viscous-offset"])
def test_one_speed_keeps_the_coulomb_level_and_the_rigid_columns_of_any_library(library):
    """The one-speed rule cuts the friction candidates, not the rigid body: an offset column
    the named library carries stays (before, the rule swapped the library for ``full``)."""
    from dataclasses import replace

    from sparsefric.estimator import SparseFric

    s = SparseFric(library=library).settings()
    kinds = [t.kind for t in replace(s, coulomb_only=True).library().terms()]
    full = [t.kind for t in s.library().terms()]
    assert kinds == [k for k in full if k not in ("viscous", "stribeck")]
    assert "coulomb" in kinds and ("offset" in kinds) == (library == "coulomb-viscous-offset")


def test_the_narrow_speed_warning_counts_the_validation_records_speeds():
    """Trained at 0.15 and 0.8 rad/s (ratio 5.3) the warning said a Stribeck term cannot be
    identified, also where a 0.03 rad/s validation record, which chooses the structure and
    joins the refits, widens the range to 27 (on 7 of 10 such zoo joints the break-away came
    out within 2.1 %). It is judged on every record the fit uses; a union still narrow names
    its range."""
    from sparsefric.data_checks import check_speed_range
    from sparsefric.identify import speed_range_with
    from sparsefric.preprocessing import Preprocessor

    data = paper_experiment(EXAMPLE_TRUTH, {"train": (0.15, 0.8), "slow": (0.03,),
                                            "between": (0.1,)}, sensors=SENSORS)
    prep = {role: Preprocessor().prepare(records) for role, records in data.items()}
    found = check_speed_range(prep["train"].signals.qd)
    assert [f.code for f in found] == ["narrow_velocity_range"]
    assert speed_range_with(found, prep["train"], None, "revolute") == found
    assert speed_range_with(found, prep["train"], prep["slow"], "revolute") == []
    union = speed_range_with(found, prep["train"], prep["between"], "revolute")
    assert [f.code for f in union] == ["narrow_velocity_range"]
    low = [float(m.group(1)) for f in (found[0], union[0])
           if (m := re.match(r"the joint moves at ([0-9.]+)–", f.message))]
    assert low[0] == pytest.approx(0.15, rel=0.05) and low[1] == pytest.approx(0.1, rel=0.05)


def test_the_narrow_speed_warning_counts_a_steady_move_slower_than_a_hundredth():
    """Zoo joint 11 of seed 1130196894: training at 0.044 and 0.19 m/s, validation at 0.0016
    m/s (ratio 120). The validation record slides below 1 % of the top speed, so no speed
    percentile counted it: the warning said the joint "moves at 0.0251–0.191 m/s only", and the
    break-away check of the same report called 0.0016 m/s the slowest steady level. The steady
    levels count it; the training records alone still draw the warning."""
    from sparsefric.data_checks import check_speed_range, diagnose_prepared, speed_range_of
    from sparsefric.identify import speed_range_with
    from sparsefric.preprocessing import Preprocessor

    from .conftest import zoo as load_zoo

    spec = load_zoo().draw_joint(1130196894, 11)
    data = load_zoo().simulate_joint(spec)
    train, val = (Preprocessor().prepare(records) for records in (data.train, data.validate))
    found = diagnose_prepared(train, axis=spec.truth.axis)
    assert "narrow_velocity_range" in {f.code for f in found}
    both = train.join(val)
    percentiles = check_speed_range(both.signals.qd, "m/s")
    assert [f.code for f in percentiles] == ["narrow_velocity_range"]  # they miss 0.0016 m/s
    assert speed_range_of(both, "m/s") == []
    kept = speed_range_with(found, train, val, spec.truth.axis)
    assert [f for f in found if f.code != "narrow_velocity_range"] == kept


@pytest.mark.slow
def test_mode2_a_stribeck_region_only_the_validation_records_reach_is_not_silent():
    """Ω_s 0.0174 below the slowest training speed 0.127: the Stribeck term was dropped (break-away
    −52 %) without a word, although the 0.03 rad/s validation record shows it."""
    truth = EXAMPLE_TRUTH.with_(stribeck=((0.84, 20.0),), stribeck_velocity=0.0174)
    est, _ = _fit(truth, PAPER_SPLIT)
    off = est.model_.breakaway_torque() / truth.breakaway_torque() - 1
    named = [w for w in est.warnings_
             if any(k in w for k in ("break-away", "Stribeck", "friction curve"))]
    assert abs(off) < 0.25 or named


@pytest.mark.slow
def test_mode3_an_inertia_the_data_do_not_pin_down_is_named():
    """Zoo joint 15 (seed 2024): one file of a prismatic joint whose pre-sliding deflection
    (5 µm) is below one encoder count (7 µm). Step 1 finds I +5 %, the LuGre stage +436 %, with
    a narrow interval; the disagreement of the two is a warning naming the inertia."""
    from sparsefric.estimator import SparseFric

    from .conftest import zoo as load_zoo

    zoo = load_zoo()
    spec = zoo.draw_joint(2024, 15)
    data = zoo.simulate_joint(spec)
    est = SparseFric(axis="prismatic").fit(data.train, validate=data.validate or None)
    if est.model_.kind == "lugre" and abs(est.model_.inertia / spec.truth.inertia - 1) > 0.25:
        assert any(w.startswith("the inertia is not pinned down") for w in est.warnings_)


@pytest.mark.slow
def test_mode3_the_inertia_is_not_biased_by_the_torque_smoothing():
    """Zoo joint 32 of seed 839709135: regressed on the denoised torque the inertia came out
    −9 % with an interval of ±1 % and no warning. The TV-denoised torque is rounded at the
    steps of the acceleration where the TV q̈ is not. The final coefficients now regress the
    measured torque (+0.5 %); the interval reaches the denoised torque's optimum too."""
    from sparsefric.estimator import SparseFric

    from .conftest import zoo as load_zoo

    zoo = load_zoo()
    spec = zoo.draw_joint(839709135, 32)
    data = zoo.simulate_joint(spec)
    est = SparseFric(axis=spec.truth.axis).fit(data.train, validate=data.validate or None)
    # four sensor-noise realisations: −2.15 … +0.38 %
    assert est.model_.inertia == pytest.approx(spec.truth.inertia, rel=0.03)
    lower, upper = est.model_.uncertainty.intervals["inertia"]
    assert lower < 0.95 * spec.truth.inertia and upper > spec.truth.inertia
    reason = est.result_.convergence_reason  # both fit the measured torque (§101 replaces §33)
    assert "refitted on the measured torque" in reason or "minimum of the prediction" in reason


@pytest.mark.slow
def test_mode3_the_inertia_of_a_joint_logged_slower_than_its_control():
    """Zoo joint 22 of seed 2024 logs at 250 Hz what a 1 kHz controller applies: the torque's
    steps fall between samples, the positions' q̈ sees them as ramps. Regressing the torque
    sample by sample put the inertia +2.8 % off; the sample-averaged equation +0.6 %, and the
    intervals are taken of the same equation (the measured torque's optimum stays near)."""
    from sparsefric.estimator import SparseFric

    from .conftest import zoo as load_zoo

    zoo = load_zoo()
    spec = zoo.draw_joint(2024, 22)
    assert spec.log_every > 1
    data = zoo.simulate_joint(spec)
    est = SparseFric(axis=spec.truth.axis).fit(data.train, validate=data.validate or None)
    assert est.model_.inertia == pytest.approx(spec.truth.inertia, rel=0.015)
    table = est.uncertainty_.table.set_index("name")
    assert abs(table.loc["inertia", "gap"]) < 0.01 * spec.truth.inertia


@pytest.mark.slow
def test_an_offset_the_refit_cannot_tell_from_zero_is_not_reported():
    """Zoo joint 26 of seed 2024 has no torque offset, yet step 1's refit with an offset column
    puts 0.69 N·m (14 % of the torque RMS) into it, 1.8 standard errors from 0: the warning
    was a false alarm (6 of 40 on that seed). With 20 % of the RMS added the offset stands
    4 standard errors out and is reported."""
    from sparsefric.estimator import SparseFric

    from .conftest import zoo as load_zoo

    zoo = load_zoo()
    data = zoo.simulate_joint(zoo.draw_joint(2024, 26))

    def offset_warnings(added: float) -> list[str]:
        train, val = ([t.with_(tau=t.tau + added) for t in trajs]
                      for trajs in (data.train, data.validate))
        est = SparseFric(static_only=True).fit(train, validate=val or None)
        return [w for w in est.warnings_ if "constant offset" in w]

    assert offset_warnings(0.0) == []
    rms = float(np.sqrt(np.mean(np.concatenate([t.tau for t in data.train]) ** 2)))
    (warning,) = offset_warnings(0.2 * rms)
    assert "standard errors" in warning


@pytest.mark.slow
def test_a_validation_refit_that_ends_in_an_error_leaves_the_training_model():
    """Fixed-seed zoo joint 26 with noise seed 2, static only (paper split): the training model
    (f_c 2.40 N·m, truth 2.44) misses the 0.03 rad/s validation level, so the records are
    fitted again with it; that fit kept a Stribeck rise without a Coulomb level, inadmissible,
    and its error ended the whole identification. The training model now stands, named."""
    from sparsefric.estimator import SparseFric

    from .conftest import zoo as load_zoo

    zoo = load_zoo()
    spec = zoo.with_noise_seed(zoo.draw_joint(2024, 26), 2)
    data = zoo.simulate_joint(spec)
    est = SparseFric(static_only=True).fit(data.train, validate=data.validate)
    assert est.model_.coulomb == pytest.approx(spec.truth.coulomb, rel=0.05)
    (missed,) = [w for w in est.warnings_ if w.startswith("the friction curve misses")]
    assert "validate_v0.03" in missed


def _inertia_right_or_named(est, truth, rel: float) -> bool:
    """Whether the inertia is within ``rel`` of the truth's, or its interval holds the truth
    and a warning names it: on joints whose ramps barely show it, which way the noise moves
    it differs between sensor-noise realisations."""
    model = est.model_
    if model.inertia == pytest.approx(truth.inertia, rel=rel):
        return True
    lower, upper = model.uncertainty.intervals["inertia"]
    return lower <= truth.inertia <= upper and any(w.startswith("the inertia")
                                                   for w in est.warnings_)


def _zoo_fit(seed: int, index: int):
    """(spec, fitted SparseFric) of zoo joint ``index`` of ``seed``, defaults."""
    from sparsefric.estimator import SparseFric

    from .conftest import zoo as load_zoo

    spec = load_zoo().draw_joint(seed, index)
    data = load_zoo().simulate_joint(spec)
    return spec, SparseFric(axis=spec.truth.axis).fit(data.train, validate=data.validate or None)


@pytest.mark.slow
def test_mode2_validation_records_the_model_misses_are_fitted():
    """Zoo joint 11 of seed 463494046 (a seed drawn at run time): trained at 0.0024–0.022 rad/s,
    validated at 0.049 and 0.21 rad/s. Fitted on training alone, the model (static, no Coulomb
    level) missed the steady friction of both validation records (static curve 82 % off,
    break-away −80 %, I ×11, test error 19× the truth's), with a warning. Identified again
    with them fitted, it describes every record and the truth (``DESIGN.md`` §70). (Under other
    sensor noise the training model may describe the validation records itself, within 4 %.)"""
    spec, est = _zoo_fit(463494046, 11)
    pooled = [w for w in est.warnings_ if "fitted with the validation records" in w]
    assert all("it misses 0" in w for w in pooled)
    assert not any(w.startswith("the friction curve misses") for w in est.warnings_)
    truth, model = spec.truth, est.model_
    v = np.geomspace(0.0024, 0.21, 50)
    assert np.max(np.abs(model.static_friction(v) / truth.static_friction(v) - 1)) < 0.05
    assert model.breakaway_torque() == pytest.approx(truth.breakaway_torque(), rel=0.05)
    assert _inertia_right_or_named(est, truth, rel=0.1)


@pytest.mark.slow
def test_a_coulomb_level_beyond_the_recorded_speeds_is_named_and_its_interval_holds_it():
    """Fixed-seed zoo joint 1: records at 0.014–0.29 rad/s, the truth's Ω_s 0.45 rad/s. The
    static curve fits within 0.5 % over the records, but f_c came out +51 % with the interval
    [5.1, 7.2] N·m around 6.16 (truth 4.07) and no word: the records end inside the rise, and
    f_c is the model's extrapolation of its decay (``DESIGN.md`` §73)."""
    spec, est = _zoo_fit(2024, 1)
    (named,) = [w for w in est.warnings_ if "Coulomb level f_c =" in w and "extrapolated" in w]
    assert "0.293 rad/s" in named
    lower, upper = est.model_.uncertainty.intervals["coulomb"]
    assert lower == 0.0 and upper > est.model_.coulomb
    assert lower <= spec.truth.coulomb <= upper


@pytest.mark.slow
def test_a_model_that_describes_the_validation_records_is_not_refitted(fitted):
    """data/example: the model meets the steady friction of every record, so the validation
    records only score it."""
    assert not any(f.code == "validation_pooled" for f in fitted.result_.findings)
    assert fitted.result_.sweep.validation_source != "training"


@pytest.mark.slow
def test_a_stribeck_model_that_misses_its_fastest_level_gets_its_viscous_slope():
    """Zoo joint 25 of seed 387084888 (a seed drawn at run time): one file at 0.041, 0.88 and
    1.8 rad/s, torque noise 4.7 % of the peak, the truth f_c 33 N·m with a Stribeck term
    (Ω_s 0.26 rad/s) and 4.1 q̇ + 0.8 q̇³. The λ path never held a Stribeck and a viscous
    term together: the model was f_c + Stribeck alone, 11 % under the 1.8 rad/s level (a
    warning), with the inertia −7.5 % from the misfit and no word on it (``DESIGN.md`` §84).
    The data leave the viscous shape open: the path ended at δ 0.5 with 1.7 q̇³ and the inertia
    −3.6 % until a power needed q̇ beside it (§99); now δ 0.5 and 2.25 with 10.8 q̇, the static
    curve 0.9 % off, and the inertia +5.1 %, named with an interval that holds the truth."""
    spec, est = _zoo_fit(387084888, 25)
    truth, model = spec.truth, est.model_
    assert model.viscous and model.stribeck
    assert not any(w.startswith("the friction curve misses") for w in est.warnings_)
    v = np.geomspace(0.041, 1.8, 50)
    err = np.sqrt(np.mean((model.static_friction(v) / truth.static_friction(v) - 1) ** 2))
    assert err < 0.03
    low, high = est.uncertainty_.interval("inertia")
    named = any(w.startswith("the inertia is poorly determined") for w in est.warnings_)
    assert model.inertia == pytest.approx(truth.inertia, rel=0.04) or (
        named and low <= truth.inertia <= high)


@pytest.mark.slow
def test_a_stribeck_shape_bent_by_viscous_powers_is_cut_to_its_slope():
    """Fixed-seed zoo joint 12: one file at 0.12, 0.37 and 0.62 rad/s, validation at
    0.065 rad/s, the truth δ 2.63 with Ω_s 0.056 rad/s and 1.57 q̇. The model was δ 1 with
    14.8 q̇ − 43.6 q̇³ + 57.9 q̇⁵: 20 N·m too much friction at the 0.94 rad/s test speed and
    the break-away +8 % (``DESIGN.md`` §86)."""
    spec, est = _zoo_fit(2024, 12)
    truth, model = spec.truth, est.model_
    assert [p for p, _ in model.viscous] == [1]
    assert [d for d, _ in model.stribeck] in ([2.5], [2.75])
    v = np.geomspace(0.065, 0.94, 50)  # the recorded speeds and the test's
    assert np.max(np.abs(model.static_friction(v) / truth.static_friction(v) - 1)) < 0.01
    assert model.breakaway_torque() == pytest.approx(truth.breakaway_torque(), rel=0.02)


@pytest.mark.slow
def test_a_direction_dependent_viscous_rise_seen_by_a_validation_record_is_fitted():
    """Fixed-seed zoo joint 34: training at 0.067–0.31 rad/s, validation at 0.025 and
    1.6 rad/s, the truth 2.10 q̇ + 0.175 q̇² + 0.064 q̇³. Where the training model (linear
    viscous) missed the 1.6 rad/s level, the model fitted with the validation records too was
    counted as missing it as well, its q̇² compared with a point in which the two directions
    cancel it, and rejected (``DESIGN.md`` §87). The cubic term is 3.8 % of the friction at
    1.6 rad/s, under the 5 % a miss needs: whether the training model misses that level at all
    turns on the noise (three of ten sensor seeds, and other processors' round-off, fit it with a
    steeper linear term), so what is asserted holds either way: every steady level fitted, and a
    pooled model only one that misses none."""
    from sparsefric.lugre import direction_mean_curve
    from sparsefric.steps import checks

    spec, est = _zoo_fit(2024, 34)
    truth, model, cve = spec.truth, est.model_, est.result_.cve
    pooled = [w for w in est.warnings_
              if w.startswith("the model fitted on the training records missed")]
    assert all("it misses 0" in w for w in pooled)
    assert not any(w.startswith("the friction curve misses") for w in est.warnings_)
    v = cve.velocity.to_numpy(float)
    assert np.abs(v).max() == pytest.approx(1.6, rel=0.01)  # the validation level is scored
    assert not checks.cve_misses(model, cve).any()
    err = direction_mean_curve(v, model.friction) / direction_mean_curve(v, truth.friction) - 1
    assert np.max(np.abs(err)) < 0.02  # ten sensor seeds: ≤ 1.1 %
    # on an AMD EPYC's round-off the LuGre stage ends at f_c = 0 with a rise carrying the dry
    # friction (``DESIGN.md`` §114), the break-away +5.2 %, named extrapolated
    assert model.breakaway_torque() == pytest.approx(truth.breakaway_torque(), rel=0.04) or (
        model.coulomb == 0.0
        and any("break-away" in w and "extrapolated" in w for w in est.warnings_))


@pytest.mark.slow
def test_a_negative_inertia_is_held_at_zero_and_the_friction_kept():
    """Zoo joint 27 of seed 523578492 (a seed drawn at run time; prismatic, training at
    0.0059 and 0.024 m/s logged at 1 kHz, ramps shorter than a sample): the static and the
    LuGre fit put the mass below zero (−0.037, −0.024 kg; truth +0.038), and the
    identification was refused whole although the LuGre friction was within 0.2 % (f_c, σ0).
    The mass is now held at 0 with a warning that names it (``DESIGN.md`` §88). Other sensor
    noise leaves the fitted mass positive (−36 … +161 %), named as not pinned down."""
    spec, est = _zoo_fit(523578492, 27)
    truth, model = spec.truth, est.model_
    assert model.kind == "lugre"
    if model.inertia == 0.0:
        assert any(w.startswith("the inertia came out below zero") for w in est.warnings_)
        assert not any(w.startswith("the inertia is not pinned down") for w in est.warnings_)
        assert "I and σ1 at the bound 0" in est.convergence_reason_  # σ1 ≥ 0 binds here too
    else:
        assert any(w.startswith("the inertia is not pinned down") for w in est.warnings_)
    assert model.coulomb == pytest.approx(truth.coulomb, rel=0.02)
    assert model.sigma0 == pytest.approx(truth.sigma0, rel=0.05)
    lo, hi = model.uncertainty.intervals["inertia"]
    assert lo == 0.0 and lo < truth.inertia < hi


@pytest.mark.slow
def test_a_viscous_slope_only_the_steady_levels_show_is_kept():
    """Zoo joint 2 of seed 56594828 (a seed drawn at run time): one file at 0.016–0.42 rad/s,
    truth 3.99 N·m + 0.16 q̇ − 0.017 q̇² + 0.0066 q̇³. AICc scored the Coulomb level alone
    and the same with c₁q̇ alike (ΔAICc 0.33), and their held-out prediction errors were within
    0.05 %; the Coulomb level alone missed the 0.42 rad/s level by 1.2 % (96 standard errors)
    and predicted the test moves at 0.74 and 1.5 rad/s with 3.3 × the truth's error
    (``DESIGN.md`` §89)."""
    from sparsefric.lugre import direction_mean_curve
    from sparsefric.preprocessing import prepare

    from .conftest import zoo as load_zoo

    spec, est = _zoo_fit(56594828, 2)
    truth, model = spec.truth, est.model_
    assert [p for p, _ in model.viscous] == [1]
    v = np.array([0.016, 0.11, 0.42])
    err = direction_mean_curve(v, model.friction) / direction_mean_curve(v, truth.friction) - 1
    assert np.max(np.abs(err)) < 0.004
    test = prepare(load_zoo().simulate_joint(spec).test)
    assert test.relative_error(model) < 1.6 * test.relative_error(truth)


@pytest.mark.slow
def test_a_rise_that_carried_the_dry_friction_alone_gives_way_to_the_coulomb_level():
    """Zoo joint 26 of seed 1193812448 (drawn at run time; the paper's split, truth 4.83 N·m
    + 2.33 q̇ + 0.077 q̇³ and a rise of 0.34 N·m at Ω_s 0.028 rad/s): step 1 selected
    5.05 e^(−|q̇/3.86|^0.75) + 3.69 q̇ with no Coulomb level, the λ path never having held
    the Coulomb level with q̇³, and the LuGre model kept f_c at its bound 0 with the inertia
    +4.2 % (the oracle's +0.07 %). The Coulomb level added with Ω_s searched over its range
    finds the rise at the truth's knee, at a lower AICc (``DESIGN.md`` §114). On noise seeds
    0, 1, 3 and 4 f_c comes out within 2 %, I within 0.9 % and Ω_s at 0.012–0.06 rad/s; on
    noise seed 2 the rise at Ω_s 4.1 rad/s keeps AICc's choice (ΔAICc 5 to the best Coulomb
    variant) and f_c stays at 0, named: the drawn noise is asserted."""
    spec, est = _zoo_fit(1193812448, 26)
    truth, model = spec.truth, est.model_
    assert model.coulomb == pytest.approx(truth.coulomb, rel=0.03)
    assert model.inertia == pytest.approx(truth.inertia, rel=0.02)
    assert model.stribeck_velocity < 0.1


@pytest.mark.slow
def test_a_missed_training_level_is_refitted_and_a_coulomb_level_the_interval_leaves_open_named():
    """Zoo joint 23 of seed 859464136 (drawn at run time): prismatic, paper split, truth
    22.35 N + 31.1 e^{−|v/0.043|^1.4} N + 180.5 v; training at 0.0127 and 0.213 m/s,
    validation at 0.003 and 0.175. Fitted on training alone, a Coulomb level of 52 N (+133 %)
    missed its own 0.213 m/s level by 14 % and predicted the test with 2.06 × the truth's
    error. Refitted with the validation records, its curve meets every level; f_c still rests
    on no data — Ω_s's interval reaches twice the fastest speed, or (since §94's bristle
    update, f_c 27.7 N) the model's own rise still adds 39 % of f_c there — and one warning
    says so (``DESIGN.md`` §91)."""
    from sparsefric.preprocessing import prepare

    from .conftest import zoo as load_zoo

    spec, est = _zoo_fit(859464136, 23)
    pooled = [w for w in est.warnings_ if "fitted with the validation records" in w]
    assert all("it misses 0" in w for w in pooled)  # other sensor noise: none, or validate_v0.003
    (named,) = [w for w in est.warnings_ if "Coulomb level f_c" in w and "extrapolated" in w]
    assert "the interval of Ω_s reaches up to" in named or "Stribeck rise still adds" in named
    lower, upper = est.model_.uncertainty.intervals["coulomb"]
    assert lower == 0.0 and lower < spec.truth.coulomb < upper
    test = prepare(load_zoo().simulate_joint(spec).test)
    assert test.relative_error(est.model_) < 1.5 * test.relative_error(spec.truth)


@pytest.mark.slow
def test_a_pair_of_rises_the_sweep_prefers_is_merged_into_the_one_that_predicts_better():
    """Zoo joint 6 of seed 2002588774 (a seed drawn at run time; the paper's split, truth one
    rise δ 2.72, Ω_s 0.32 rad/s): the refinement's sweeps chose the rises δ = (0.5, 4), and
    the break-away came out +8.6 % with no word (its interval held the truth). Re-iterated
    with one rise, δ = 2.75 predicts the validation records 8 % better than the pair and is
    kept (``DESIGN.md`` §93); the prediction-error fit (§101) then moves δ within a step of
    the exponents' grid. (Where the rounds' round-off differs, as on another CPU's vector
    instructions, they may end on that one rise themselves, with nothing to merge.)"""
    spec, est = _zoo_fit(2002588774, 6)
    truth, model = spec.truth, est.model_
    (rise,) = model.stribeck
    assert 2.25 <= rise[0] <= 3.25
    merged = est.result_.lugre.refinement.merged
    assert merged is None or rise[0] == pytest.approx(merged, abs=0.25)
    assert model.breakaway_torque() == pytest.approx(truth.breakaway_torque(), rel=0.03)
    v = np.geomspace(0.03, 2.13, 50)  # the zoo's criterion: 3 % RMS over the recorded speeds
    assert np.sqrt(np.mean((model.static_friction(v) / truth.static_friction(v) - 1) ** 2)) < 0.03


def _test_error_ratio(spec, est) -> float:
    """Test error of the fitted model over the truth's, on the zoo joint's test records."""
    from sparsefric.preprocessing import Preprocessor

    from .conftest import zoo as load_zoo

    test = Preprocessor().prepare(load_zoo().simulate_joint(spec).test)
    return test.relative_error(est.model_) / test.relative_error(spec.truth)


@pytest.mark.slow
def test_a_viscous_power_comes_with_the_linear_term():
    """Zoo joint 38 of seed 866655341 (drawn at run time): one file at 0.017–0.56 rad/s,
    tested at 0.17 and 1.1 rad/s; truth f_c 26.7 N·m, a Stribeck rise of 33 N·m at Ω_s
    0.21 rad/s and 11.0 q̇ + 0.86 q̇³. The model's viscous part was 222 q̇⁵ alone: 358 N·m at
    1.1 rad/s where the truth has 13, a test error 54 × the truth's (``DESIGN.md`` §99)."""
    spec, est = _zoo_fit(866655341, 38)
    powers = [p for p, _ in est.model_.viscous]
    assert 1 in powers or not powers
    # one steady level above the rise: f_c is −6 … −21 % over four noise realisations, named
    assert est.model_.coulomb == pytest.approx(spec.truth.coulomb, rel=0.1) or any(
        "Coulomb level f_c" in w and ("not separated" in w or "extrapolated" in w)
        for w in est.warnings_)
    assert _test_error_ratio(spec, est) < 1.1


@pytest.mark.slow
def test_a_viscous_power_the_data_cannot_tell_from_a_lower_one_is_the_lower():
    """Zoo joint 22 of seed 1323236425 (drawn at run time): one file at 0.076–0.91 rad/s,
    tested at 0.54 and 1.8 rad/s; truth 21.8 + 6.17 q̇ + 1.40 q̇³ N·m. Over the recorded speeds
    q̇³ and q̇⁵ are one column (cosine 0.999); the model took 1.32 q̇⁵, 17 N·m too much at
    1.8 rad/s, a test error 15.7 × the truth's (``DESIGN.md`` §99)."""
    spec, est = _zoo_fit(1323236425, 22)
    powers = [p for p, _ in est.model_.viscous]
    assert max(powers) <= 3
    # where the noise hides q̇³ (2 of 4 realisations) q̇ alone extrapolates to 1.8 rad/s with
    # 5.5 × the truth's error (DESIGN Known limits); q̇⁵ gave 15.7 ×
    assert _test_error_ratio(spec, est) < (1.5 if 3 in powers else 8.0)


@pytest.mark.slow
def test_a_viscous_polynomial_fitted_to_the_noise_is_dropped():
    """Zoo joint 29 of seed 1579784190 (drawn at run time): a file with jumps at 0.017–0.12
    rad/s, 4.7 % noise, tested at 0.83 and 2.0 rad/s; truth 1.94 q̇. The model kept 0.57 q̇ −
    2.75 q̇² − 25.8 q̇³ + 108 q̇⁴ + 713 q̇⁵: under 0.05 N·m over the recorded speeds, 2.3e4 N·m
    at 2 rad/s, a test error 8340 × the truth's (``DESIGN.md`` §100)."""
    spec, est = _zoo_fit(1579784190, 29)
    assert [p for p, _ in est.model_.viscous] == [1]
    assert "q̇^2, q̇^3, q̇^4, q̇^5 dropped" in est.convergence_reason_
    assert _test_error_ratio(spec, est) < 1.3


@pytest.mark.slow
def test_a_viscous_rise_the_slow_records_leave_open_is_not_extrapolated():
    """Zoo joint 2 of seed 866655341 (drawn at run time): recorded below 0.6 rad/s; truth
    5.3 q̇ + 0.16 q̇² + 0.71 q̇³ with a Stribeck rise. The model's q̇ … q̇⁵ (23.6, −10.3, −15.4,
    12.9, 10.8) bent its static curve 5.5 % off and tested 13.3 × the truth's error."""
    spec, est = _zoo_fit(866655341, 2)
    assert max(p for p, _ in est.model_.viscous) == 1
    assert _test_error_ratio(spec, est) < 1.1


def _static_error(spec, est) -> float:
    """RMS % of the static curve's error over the recorded steady speeds (the zoo's score)."""
    from .conftest import zoo as load_zoo

    return load_zoo().static_rms(est.model_, spec.truth, load_zoo().steady_speeds(spec))


@pytest.mark.slow
def test_a_stribeck_rise_the_transients_show_comes_from_the_prediction_error():
    """Zoo joint 9 of seed 2024: a file with jumps at 0.15–0.79 rad/s, validated at 0.079
    (truth δ 1.61, Ω_s 0.020): the rise is seen only in the ramps. The iterations ended at
    δ 3.25 with the break-away −13 %; at the minimum of the prediction error, fitted on the
    validation record too, it is within 3 % (``DESIGN.md`` §101)."""
    from .conftest import zoo as load_zoo

    spec, est = _zoo_fit(2024, 9)
    v_max = 1.2 * max(load_zoo().steady_speeds(spec))
    truth = spec.truth.breakaway_torque(v_max=v_max)
    assert est.model_.breakaway_torque(v_max=v_max) == pytest.approx(truth, rel=0.03)
    assert "minimum of the prediction error" in est.convergence_reason_


@pytest.mark.slow
def test_a_prediction_error_fit_that_predicts_better_by_a_hair_is_not_taken():
    """Zoo joint 8 of seed 1579784190: one file at 0.023, 0.06 and 2.1 rad/s, truth two rises
    (δ 0.87, 2.26; Ω_s 0.2). Between 0.06 and 2.1 rad/s only the ramps speak: the fit turned
    the rise into a knee at δ 4, predicting the held-out blocks 0.1 % better (0.17 standard
    errors), and the static curve went 0.85 → 6.8 % off. Within a standard error the
    iterations' model stays."""
    spec, est = _zoo_fit(1579784190, 8)
    assert "minimum of the prediction error" not in est.convergence_reason_
    assert _static_error(spec, est) < 5.0  # 0.84 … 3.73 % over four noise realisations


@pytest.mark.slow
def test_a_stribeck_shape_off_the_prediction_error_optimum_is_moved_there():
    """Zoo joint 31 of seed 1579784190 (random speed set): the iterations' model met the steady
    levels with a static curve 2.1 % off and a test error 1.51 × the truth's; at the minimum
    of the prediction error it is 0.4 % and 1.01 × (``DESIGN.md`` §101)."""
    spec, est = _zoo_fit(1579784190, 31)
    assert _static_error(spec, est) < 1.0
    assert _test_error_ratio(spec, est) < 1.1


@pytest.mark.slow
def test_records_that_barely_slide_are_named_not_called_reversed():
    """Zoo joint 4 of seed 1869181815: bristles that deflect 0.018 rad before they slide
    (σ0 = 463 N·m/rad, f_c = 8.4 N·m), trained on moves of 0.008–0.034 rad. Step 1 reads the
    spring-like torque as an inertia of −6.5 kg·m² with no friction; the error said to negate
    the torque column, which would make it wrong. It names the records instead."""
    from sparsefric.errors import SparsefricError

    with pytest.raises(SparsefricError, match="barely slide") as info:
        _zoo_fit(1869181815, 4)
    assert "negate" not in str(info.value)


@pytest.mark.slow
def test_a_validation_level_the_training_model_misses_is_refitted_on_every_record():
    """Zoo joint 21 of seed 1193812448 (drawn at run time; the paper's split, truth 2.14 N·m,
    a rise of 1.25 N·m at Ω_s 0.32 rad/s): the training model misses the 0.03 rad/s
    validation level by 4 %, and its prediction-error fit gained too little on the
    validation torque to be taken, so the model stood as trained: static curve 2.8 % off,
    test error 1.24 × the truth's, the miss warned. Refitted on every record from the
    iterations' model, the static curve held to the steady levels, it is 0.8 % and 1.03 ×
    (``DESIGN.md`` §115). Over noise seeds 0–4 the result is within 2.1 % and 1.17 ×."""
    spec, est = _zoo_fit(1193812448, 21)
    assert _static_error(spec, est) < 2.5
    assert _test_error_ratio(spec, est) < 1.2


@pytest.mark.slow
def test_a_held_out_block_the_training_model_misses_is_fitted_from_step_1():
    """Zoo joint 18 of seed 1217123630 (one file, no validation file): the model fitted on
    the record's training parts missed the steady friction of a held-out block; refitted on
    the whole record it met that block but kept the training parts' structure, and missed
    all four steady levels (static curve 10 % off, f_c +20 %, test error 3.7 × the truth's,
    on each of noise seeds 0–4). Identified again with the blocks fitted from step 1, it
    misses none by 5 %: 0.6 %, f_c within 1 %, 1.04 × (``DESIGN.md`` §115)."""
    spec, est = _zoo_fit(1217123630, 18)
    (pooled,) = [w for w in est.warnings_ if "fitted with the validation records" in w]
    assert "the model refitted from it misses" in pooled and "it misses 0" in pooled
    assert _static_error(spec, est) < 1.5
    assert est.model_.coulomb == pytest.approx(spec.truth.coulomb, rel=0.03)
    assert _test_error_ratio(spec, est) < 1.1


@pytest.mark.slow
def test_undetermined_powers_go_where_step_1_finds_no_inertia():
    """Zoo joint 22 of seed 1925677199 (drawn at run time; one file at 0.035–0.24 rad/s, truth
    27.4 N·m + 1.35 q̇ and a rise below 0.01 rad/s, I 0.39 kg·m², step 1's inertia negative):
    the LuGre model kept 0.0013 q̇ − 0.69 q̇³ + 139 q̇⁵, whose Wald test left them at 0
    (W 0.05, critical 6.6), because the run without them had an inertia of −0.003 (its own
    0.018); refitted on the measured torque they grew to 2.2 q̇ − 64 q̇³ + 843 q̇⁵, and the test
    error at 0.61 and 1.6 rad/s was 1450 × the truth's. Where step 1 finds no inertia, its
    sign no longer refuses the drop (``DESIGN.md`` §117). Over noise seeds 0–4: no power ≥ 2,
    test error 1.02–1.16 × the truth's."""
    spec, est = _zoo_fit(1925677199, 22)
    assert [p for p, _ in est.model_.viscous if p >= 2] == []
    assert _test_error_ratio(spec, est) < 1.25


@pytest.mark.slow
def test_a_breakaway_the_steepest_knee_puts_below_the_data_is_named_extrapolated():
    """Run-time seed 1193812448's joint 8: one file at 0.026–0.35 rad/s; truth f_c 25.9 N·m,
    Stribeck terms of δ 0.59 and 1.85 at Ω_s 0.027 rad/s rising 11 N·m below the slowest
    level. The model ended its rise in one knee of δ 4 (the grid's top) just below 0.026 rad/s
    and reported a break-away 24 % low inside a ±3 % interval with no word (``DESIGN.md``
    §119). Either the break-away is right, or it is named extrapolated and its interval holds
    the truth."""
    spec, est = _zoo_fit(1193812448, 8)
    truth = spec.truth.breakaway_torque()
    row = est.uncertainty_.table.set_index("name").loc["breakaway"]
    named = any("break-away" in w and "extrapolated" in w for w in est.warnings_)
    assert est.model_.breakaway_torque() == pytest.approx(truth, rel=0.05) or (
        named and row.lower <= truth <= row.upper)


@pytest.mark.slow
def test_an_exponent_at_the_end_of_the_grid_is_not_reported_as_plainly_converged():
    """Run-time seed 2017666605's joint 17: truth one Stribeck term of δ 1.51 (0.49 N·m at
    Ω_s 0.29 rad/s), levels at 0.012, 0.077, 0.56 and 1.3 rad/s. The fitted δ lands anywhere
    from 1.25 to 4 as the sensor noise changes; at 4, the grid's top, the fit stopped at the
    edge of the model class, and the model was reported as plainly converged (``DESIGN.md``
    §120). A δ at either end of the grid is named, in a warning and in the reason, and a δ
    inside it is not."""
    _, est = _zoo_fit(2017666605, 17)
    bound = [d for d, _ in est.model_.stribeck if d in (min(DEFAULT_DELTAS), max(DEFAULT_DELTAS))]
    warned = [w for w in est.warnings_ if "of the exponents the fit tries" in w]
    assert len(warned) == len(set(bound))
    assert ("at the end of the range the fit may give" in est.convergence_reason_) == bool(bound)
    for delta in bound:
        assert any(f"δ = {delta:g} (Ω_s" in w for w in warned)
