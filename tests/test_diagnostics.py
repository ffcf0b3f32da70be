"""Degenerate experiments are named before fitting (synthetic arrays, one case per code), and a
fitted model's own checks."""

from __future__ import annotations

import re
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

from sparsefric.data import Trajectory
from sparsefric.data_checks import (
    MIN_TRAVEL_STEPS,
    Finding,
    check_counts,
    check_given_derivatives,
    check_motion,
    derivative_ratio,
    diagnose,
    diagnose_prepared,
    errors,
    forces_static,
    position_travel,
)
from sparsefric.diagnostics import best_delay, check_torque_timing, delay_errors
from sparsefric.options import as_flags

DT = 1e-3


def _from_velocity(qd: np.ndarray, q0: float = 0.0, seed: int = 0, clip: float | None = None):
    """q, q̇, q̈, τ for a velocity record: Coulomb + viscous friction, gravity, sensor noise."""
    q = q0 + np.cumsum(qd) * DT
    qdd = np.gradient(qd, DT)
    rng = np.random.default_rng(seed)
    tau = 2.0 * np.sign(qd) + 0.5 * qd + 3.0 * np.cos(q) + 0.05 * rng.standard_normal(qd.size)
    if clip is not None:
        tau = np.clip(tau, -clip, clip)
    return q, qd, qdd, tau


def _rich_velocity() -> np.ndarray:
    """Slow and fast back-and-forth moves (speeds over two decades, stops and reversals)."""
    t = np.arange(8000) * DT
    return np.where(t < 4.0, 0.02, 2.0) * np.sin(2 * np.pi * 0.5 * t)


def _codes(findings: list[Finding]) -> set[str]:
    return {f.code for f in findings}


def test_rich_experiment_has_no_findings():
    assert diagnose(*_from_velocity(_rich_velocity())) == []


def test_zero_torque_is_an_error():
    q, qd, qdd, _ = _from_velocity(_rich_velocity())
    found = diagnose(q, qd, qdd, np.zeros_like(q))
    assert _codes(errors(found)) == {"zero_torque"}
    assert found[0].level == "error"


def test_constant_torque_is_an_error():
    q, qd, qdd, _ = _from_velocity(_rich_velocity())
    assert "constant_torque" in _codes(errors(diagnose(q, qd, qdd, np.full_like(q, 4.2))))


def test_clipped_torque_is_flagged():
    found = diagnose(*_from_velocity(_rich_velocity(), clip=3.0))
    assert _codes(found) == {"torque_clipped"}
    assert {f.level for f in found} == {"warning"}


def test_quantised_torque_is_not_clipping():
    q, qd, qdd, tau = _from_velocity(_rich_velocity())
    assert diagnose(q, qd, qdd, np.round(tau, 2)) == []


def test_never_stopping_joint_forces_a_static_model():
    t = np.arange(5000) * DT
    found = diagnose(*_from_velocity(1.0 + 0.9 * np.sin(2 * np.pi * t)))
    assert {"no_presliding", "one_direction"} <= _codes(found)
    assert forces_static(found)


def test_reversals_without_stops_excite_presliding():
    t = np.arange(5000) * DT
    found = diagnose(*_from_velocity(np.sin(2 * np.pi * t) + 0.5 * np.sin(2 * np.pi * 0.2 * t)))
    assert "no_presliding" not in _codes(found) and not forces_static(found)


def test_one_trajectory_with_stops_is_enough():
    t = np.arange(4000) * DT
    cruise = _from_velocity(1.0 + 0.95 * np.sin(2 * np.pi * t))
    rich = _from_velocity(_rich_velocity())
    stacked = [np.concatenate(p) for p in zip(cruise, rich, strict=True)]
    bounds = [(0, 4000), (4000, 12000)]
    assert "no_presliding" not in _codes(diagnose(*stacked, bounds))
    assert "no_presliding" in _codes(diagnose(*[x[:4000] for x in stacked], [(0, 4000)]))


def test_one_direction_with_stops():
    qd = np.maximum(_rich_velocity(), 0.0)
    found = diagnose(*_from_velocity(qd))
    assert "one_direction" in _codes(found) and "no_presliding" not in _codes(found)


def _square_moves(speeds: np.ndarray) -> np.ndarray:
    """Back-and-forth moves at ``speeds`` [rad/s] (one per half period of 1 s), 50 ms ramps."""
    t = np.arange(6000) * DT
    square = np.sign(np.sin(2 * np.pi * 0.5 * t)) * speeds[(t // 1).astype(int) % len(speeds)]
    return np.convolve(square, np.ones(50) / 50, mode="same")


def test_one_speed_holds_one_friction_level():
    found = diagnose(*_from_velocity(_square_moves(np.array([0.8]))))
    assert _codes(found) == {"one_speed_level"}
    assert "rad/s" in found[0].message and "Coulomb level" in found[0].message
    prismatic = diagnose(*_from_velocity(_square_moves(np.array([0.8]))), axis="prismatic")
    assert "m/s)" in prismatic[0].message


def test_speeds_within_a_decade_are_too_narrow_for_stribeck():
    found = diagnose(*_from_velocity(_square_moves(np.array([0.3, 0.8]))))
    assert _codes(found) == {"narrow_velocity_range"}
    assert "rad/s" in found[0].message
    assert "σ1" in found[0].message  # fitted on reversals through the unrecorded low speeds


def test_angle_in_degrees_is_suspected():
    t = np.arange(6000) * DT
    qd_deg = 180.0 * 2 * np.pi * 0.5 * np.cos(2 * np.pi * 0.5 * t) * np.where(t < 3, 0.05, 1)
    q, qd, qdd, tau = _from_velocity(qd_deg)
    assert "angle_in_degrees" in _codes(diagnose(q, qd, qdd, tau))
    assert "angle_in_degrees" not in _codes(diagnose(q, qd, qdd, tau, axis="prismatic"))
    rad = np.pi / 180
    assert "angle_in_degrees" not in _codes(diagnose(q * rad, qd * rad, qdd * rad, tau))


def test_a_prismatic_position_in_mm_is_suspected():
    """A 0.5 m axis at up to 1.5 m/s is plausible; the same in mm (500 "m" at 1500 "m/s") is
    not; a revolute joint is judged by the degree check instead."""
    t = np.arange(6000) * DT
    q, qd, qdd, tau = _from_velocity(1.5 * np.cos(np.pi * t) * np.where(t < 3, 0.1, 1))
    assert "length_in_mm" not in _codes(diagnose(q, qd, qdd, tau, axis="prismatic"))
    found = diagnose(1e3 * q, 1e3 * qd, 1e3 * qdd, tau, axis="prismatic")
    assert "length_in_mm" in _codes(found)
    assert "length_in_mm" not in _codes(diagnose(1e3 * q, 1e3 * qd, 1e3 * qdd, tau))


@pytest.mark.parametrize(("steps_per_unit", "unit"), [(2**17 / (2 * np.pi), "rad"), (1e6, "m")])
def test_a_position_in_encoder_counts_is_suspected(example, steps_per_unit, unit):
    """data/example's 0.127 rad/s training record in counts of a 2^17-count encoder (or a
    prismatic axis in whole µm) went through with no unit warning; the same record in rad, and
    whole numbers over a span a real encoder could step (99 rad), draw none."""
    record = example["train"][0]
    counts = replace(record, q=np.round(record.q * steps_per_unit))
    (found,) = check_counts([counts], unit)
    assert found.code == "position_in_counts" and f"spanning {np.ptp(counts.q):.6g} {unit}" \
        in found.message
    assert check_counts([record], unit) == []
    short = replace(record, q=np.round(record.q / np.ptp(record.q) * 99))
    assert check_counts([short], unit) == []


def test_the_training_checks_and_predict_name_a_position_in_counts(tmp_path, example, capsys):
    """Through the data checks of a fit (the whole records, where blocks are held out) and
    predict's unit checks, which a model identified in rad meets on records in counts."""
    from sparsefric.cli import main
    from sparsefric.data import save_trajectory
    from sparsefric.preprocessing import Preprocessor

    from .conftest import EXAMPLE

    record = example["train"][0]
    counts = replace(record, q=np.round(record.q * 2**17 / (2 * np.pi)))
    prep = Preprocessor().prepare([counts])
    assert "position_in_counts" in _codes(diagnose_prepared(prep))
    assert "position_in_counts" not in _codes(diagnose_prepared(Preprocessor().prepare([record])))
    save_trajectory(tmp_path / "counts.csv", counts)
    assert main(["predict", str(EXAMPLE / "truth.json"), str(tmp_path / "counts.csv")]) == 0
    assert "warning: the position holds whole numbers only" in capsys.readouterr().err


def _given(scale_qd: float = 1.0, scale_qdd: float = 1.0) -> Trajectory:
    """data/example's 2.13 rad/s training record with its truth columns as the measured
    velocity and acceleration, multiplied by the given factors."""
    from sparsefric.data import Columns, load_trajectories

    from .conftest import example_files

    (traj,) = load_trajectories(example_files("train")[-1])
    return traj.with_(qd=scale_qd * traj.truth["qd_true"], qdd=scale_qdd * traj.truth["qdd_true"],
                      columns=Columns(velocity="qd", acceleration="qdd"))


def test_given_derivatives_in_the_position_unit_pass_noisy_lagged_or_coarse():
    """A measured velocity or acceleration with noise or a lag of 5 samples is the derivative
    still (within a few %); beside a 12-bit encoder's position the acceleration cannot be told
    (NaN: no finding), the velocity can."""
    traj = _given()
    rng = np.random.default_rng(0)
    noisy = traj.with_(qd=traj.qd + 0.2 * np.std(traj.qd) * rng.standard_normal(len(traj)),
                       qdd=traj.qdd + np.std(traj.qdd) * rng.standard_normal(len(traj)))
    lagged = traj.with_(qd=np.r_[traj.qd[:5], traj.qd[:-5]], qdd=np.r_[traj.qdd[:5],
                                                                        traj.qdd[:-5]])
    count = 2 * np.pi / 4096
    coarse = traj.with_(q=np.round(traj.q / count) * count)
    assert check_given_derivatives([traj, noisy, lagged, coarse], used=True) == []
    for record in (traj, noisy, lagged, coarse):
        assert derivative_ratio(record.t, record.q, record.qd, 1) == pytest.approx(1, abs=0.01)
    for record in (traj, noisy, lagged):
        assert derivative_ratio(record.t, record.q, record.qdd, 2) == pytest.approx(1, abs=0.1)
    assert np.isnan(derivative_ratio(coarse.t, coarse.q, coarse.qdd, 2))


@pytest.mark.parametrize("scales, code, text", [
    ((30 / np.pi, 30 / np.pi), "given_velocity_mismatch",
     "column 'qd' is 9.55 × dq/dt of the position column 'q': rpm? 60/2π = 9.55"),
    ((-1.0, -1.0), "given_velocity_mismatch",
     "column 'qd' is -1 × dq/dt of the position column 'q': the opposite sign: negate the column"),
    ((1.0, 180 / np.pi), "given_acceleration_mismatch",
     "column 'qdd' is 57.6 × d²q/dt² of the position column 'q': deg/s²? 180/π = 57.3"),
    ((3.0, 1.0), "given_velocity_mismatch", "column 'qd' is 3 × dq/dt of the position column "
     "'q': check the column's unit, sign and gear ratio"),
])
def test_given_derivatives_in_another_unit_or_sign_are_named(scales, code, text):
    """A velocity in rpm was fitted as rad/s (the inertia 9.5× low) without a word; negated, it
    was blamed on the torque's sign. An error where the fit uses them, a warning otherwise."""
    traj = _given(*scales)
    found = check_given_derivatives([traj, traj.with_(name="again")], used=True)
    assert found[0].code == code and found[0].level == "error"
    assert found[0].message.startswith(f"{traj.name} (and 1 other record): {text}")
    assert "`differentiation='given'` would fit the model to it" in found[0].message
    (unused, *_) = check_given_derivatives([traj])
    assert unused.level == "warning" and "taken from the position instead" in unused.message


def test_messages_are_single_lines_and_errors_come_first():
    q, qd, qdd, _ = _from_velocity(1.0 + 0.9 * np.sin(np.arange(3000) * DT))
    found = diagnose(q, qd, qdd, np.zeros_like(q))
    assert found[0].code == "zero_torque" and len(found) > 1
    assert all(f.message and "\n" not in f.message and f.level in ("warning", "error")
               for f in found)


def _prepared(q, qd, qdd, tau, raw):
    """A one-record Prepared set: denoised ``tau``, measured ``raw`` [N·m]."""
    record = Trajectory(np.arange(q.size) * DT, q, raw)
    return SimpleNamespace(signals=SimpleNamespace(q=q, qd=qd, qdd=qdd), tau=tau, tau_raw=raw,
                           bounds=[(0, len(q))], dt=[DT], pieces=(record,), params=[])


def test_diagnose_prepared_reads_the_raw_torque():
    q, qd, qdd, tau = _from_velocity(_rich_velocity(), clip=3.0)
    assert _codes(diagnose_prepared(_prepared(q, qd, qdd, tau.copy(), tau))) == {"torque_clipped"}


def test_denoising_that_removes_most_of_the_torque_is_flagged():
    q, qd, qdd, tau = _from_velocity(_rich_velocity())
    hunting = tau + 4.0 * np.sin(2 * np.pi * 60 * np.arange(tau.size) * DT)  # a 60 Hz limit cycle

    def prepared(raw):
        return _prepared(q, qd, qdd, tau, raw)

    assert diagnose_prepared(prepared(tau + 0.05)) == []
    found = diagnose_prepared(prepared(hunting))
    assert _codes(found) == {"torque_mostly_noise"} and found[0].level == "warning"
    assert "% of the torque" in found[0].message and "\n" not in found[0].message


def test_a_user_cutoff_that_removes_much_of_the_torque_is_named_not_the_data():
    """At --cutoff-hz 0.5 the warning said the records were "dominated by content faster than
    the motion"; the user's cutoff was: it is named."""
    q, qd, qdd, tau = _from_velocity(_rich_velocity())
    smooth = np.convolve(tau, np.ones(2000) / 2000, mode="same")
    prep = _prepared(q, qd, qdd, smooth, tau)
    prep.params = [{"method": "butterworth", "cutoff_hz": 0.5, "rule": "user"}]
    (f,) = diagnose_prepared(prep)
    assert f.code == "cutoff_within_motion" and "`cutoff_hz=0.5` Hz" in f.message
    prep.params = [{"method": "butterworth", "cutoff_hz": 20.0, "rule": "default 20 Hz"}]
    assert _codes(diagnose_prepared(prep)) == {"torque_mostly_noise"}


#: A count of a 20-bit encoder [rad].
COUNT = 2 * np.pi / 2**20


def _still(kind: str, n: int = 5000) -> np.ndarray:
    """Positions [rad] of a joint that stands still: held on a 20-bit encoder dithering by a
    count, drifting 4 counts, or an unquantised sensor's noise alone."""
    rng = np.random.default_rng(3)
    if kind == "held":
        return np.round((-0.6 + 5e-6 * rng.standard_normal(n)) / COUNT) * COUNT
    if kind == "drifting":
        drift = 4 * COUNT * np.arange(n) / n
        return np.round((0.1 + drift + 2e-6 * rng.standard_normal(n)) / COUNT) * COUNT
    return 0.2 + 1e-6 * rng.standard_normal(n)


def _motion(*records: tuple[str, np.ndarray]) -> list[Finding]:
    """:func:`check_motion` of named position records [rad], the speed taken as zero."""
    trajs = [Trajectory(np.arange(q.size) * DT, q, np.zeros_like(q), name=name)
             for name, q in records]
    ends = np.cumsum([0, *(q.size for _, q in records)])
    return check_motion(trajs, np.zeros(ends[-1]), list(zip(ends[:-1], ends[1:], strict=True)))


@pytest.mark.parametrize("kind", ["held", "drifting", "noisy"])
def test_a_joint_that_barely_moves_is_refused_before_the_fit(kind):
    """A held joint ended in "the identified model is physically inadmissible", or worse, in
    a model fitted to noise; named as the record with its span in encoder steps."""
    (f,) = _motion((f"{kind}.csv", _still(kind)))
    assert f.level == "error" and f.code == "no_motion" and "\n" not in f.message
    assert f.message.startswith(f"{kind}.csv: the joint barely moves: its position spans ")
    assert "steps of its resolution" in f.message and "record the joint moving" in f.message
    (f,) = _motion(("a.csv", _still("held")), ("b.csv", _still("drifting")))
    assert f.message.startswith("the joint barely moves in all 2 training records: the widest, "
                                "b.csv, spans ")


def test_slow_moves_and_presliding_records_are_motion():
    """0.005 rad/s over 0.5 rad is slow data, not a still joint; the pre-sliding record of
    ``simulate --presliding`` spans 22 steps of its resolution (4e-4 rad); a still record
    beside moving ones adds to them."""
    from sparsefric.baselines import presliding_experiment
    from sparsefric.simulate import EXAMPLE_TRUTH

    slow = np.round(0.005 * np.arange(20000) * 5e-3 / COUNT) * COUNT  # 100 s at 200 Hz
    presliding = presliding_experiment(EXAMPLE_TRUTH).q
    span, step = position_travel(presliding)
    assert MIN_TRAVEL_STEPS * step < span < 3 * MIN_TRAVEL_STEPS * step
    assert _motion(("slow.csv", slow)) == []
    assert _motion(("presliding.csv", presliding)) == []
    assert _motion(("held.csv", _still("held")), ("slow.csv", slow)) == []


def test_mismatched_lengths_are_rejected():
    with pytest.raises(ValueError):
        diagnose(np.zeros(3), np.zeros(3), np.zeros(2), np.zeros(3))


def test_negative_inertia_is_an_error_only_without_friction():
    from sparsefric.diagnostics import check_inertia
    from sparsefric.model import JointModel

    flipped = JointModel(inertia=-1.6, coulomb=0.0)
    (f,) = check_inertia(flipped, 0.5)
    assert f.level == "error" and f.code == "opposite_torque_sign" and "kg·m²" in f.message
    (f,) = check_inertia(JointModel(inertia=-0.01, coulomb=5.0), 0.5)
    assert f.level == "warning" and f.code == "negative_inertia"
    assert check_inertia(JointModel(inertia=1.5, coulomb=5.0), 0.5) == []


def test_negative_inertia_with_viscous_friction_only_is_no_reversed_torque():
    """Zoo joint 29 of seed 771204 (moves at 0.017 and 0.051 rad/s, |q̈| ≤ 0.6 rad/s²): step 1
    put f_c into a steep viscous polynomial, c₁ = 870, c₃ = −5e5, c₅ = 1.3e8, and the
    inertia at −37 kg·m². Its friction opposes the motion: the torque is the right way round,
    and "negate the torque column" was wrong advice. Viscous friction of the wrong sign is."""
    from sparsefric.diagnostics import check_inertia
    from sparsefric.model import JointModel

    steep = JointModel(inertia=-37.0, coulomb=0.0, viscous=((1, 870.0), (3, -5e5), (5, 1.3e8)))
    (f,) = check_inertia(steep, 0.034)
    assert f.code == "negative_inertia"
    (f,) = check_inertia(JointModel(inertia=-1.6, coulomb=0.0, viscous=((1, -3.0),)), 0.5)
    assert f.code == "opposite_torque_sign"


def test_a_period_of_seconds_is_questioned():
    from sparsefric.data_checks import check_sampling

    (f,) = check_sampling([1e-3, 1.0])  # a time column in ms read as s
    assert f.code == "slow_sampling" and "1 s" in f.message and "ms" in f.message
    assert check_sampling([1e-3, 1e-2]) == []


def test_a_period_of_microseconds_is_questioned():
    """--time-unit ms on a 1 kHz file in seconds: a 1 µs period and speeds of 2000 rad/s,
    fitted without a word (I came out 1.6e-6 kg·m²)."""
    from sparsefric.data_checks import check_sampling

    (f,) = check_sampling([1e-6, 1e-6])
    assert f.code == "fast_sampling" and "1e-06 s" in f.message and "1000× too large" in f.message
    assert check_sampling([2.5e-4, 5e-5]) == []


# ---------------------------------------------------------------------------- torque timing
def test_delay_scan_finds_a_shift_between_samples():
    h = 1e-3
    t = np.arange(4000) * h
    tau_hat = np.sin(2 * np.pi * 3 * t) + 0.4 * np.sign(np.sin(2 * np.pi * 1.3 * t))
    lead = 2.6 * h  # the measured torque shows at t what the motion answers at t + lead
    tau = np.interp(t + lead, t, tau_hat) + 0.01 * np.random.default_rng(1).standard_normal(t.size)
    lags = h * np.arange(-8, 9)
    errors = delay_errors(tau, tau_hat, [(0, 2000), (2000, 4000)], [h, h], lags)
    assert abs(best_delay(lags, errors) - lead) < 0.2 * h
    assert errors.argmin() == 11  # 3 samples: the grid point next to 2.6


@pytest.fixture(scope="module")
def example_prepared(example):
    from sparsefric.preprocessing import Preprocessor

    return Preprocessor().prepare(example["train"])


def _shifted(prep, samples: int):
    """``prep`` with the measured torque of each record ``samples`` early (> 0) or late."""
    tau = prep.tau_raw.copy()
    for a, b in prep.bounds:
        tau[a:b] = np.roll(tau[a:b], -samples)
    return replace(prep, tau_raw=tau)


@pytest.mark.parametrize("samples", [0, 3, -3])
def test_a_torque_early_or_late_against_the_motion_is_named(truth, example_prepared, samples):
    """data/example's truth against its own records: silent; with the torque 3 ms early (a
    logged current command), σ1 would absorb L·σ0 = 45 of the truth's 60 N·m·s/rad: named,
    with the delay to ±0.5 ms and the ``torque_delay`` that aligns it (negative: the torque
    is early); 3 ms late, named as late. Records aligned by 1 ms already and still 3 ms early
    need 4 ms in all."""
    found = check_torque_timing(truth, [_shifted(example_prepared, samples)])
    if samples == 0:
        assert found == []
        return
    (f,) = found
    assert f.code == "torque_delay"
    side = "early" if samples > 0 else "late"
    ms = float(f.message.split("torque is ")[1].split(" ms")[0])
    assert f" ms ({ms:.2g} samples) {side}" in f.message and abs(ms - 3.0) < 0.5
    assert ("too high" if samples > 0 else "too low") in f.message
    assert _rerun_delay(f.message) == pytest.approx(-samples * 1e-3, abs=5e-4)
    assert as_flags(f.message).endswith(f"rerun with --torque-delay {_rerun_delay(f.message)}")
    (f,) = check_torque_timing(truth, [_shifted(example_prepared, samples)], aligned=-1e-3)
    assert _rerun_delay(f.message) == pytest.approx(-1e-3 - samples * 1e-3, abs=5e-4)


def test_the_delay_to_rerun_with_is_given_to_a_tenth_of_a_sample(truth, example_prepared):
    """Records aligned by 20 ms already and still 2.4 samples early at 1 kHz need 22.4 ms:
    to two significant digits the warning said 22 ms, and of a lead below 0.5 ms, the 20 ms
    applied already."""
    prep = example_prepared
    tau = prep.tau_raw.copy()
    for a, b in prep.bounds:
        index = np.arange(b - a, dtype=float)
        tau[a:b] = np.interp(index + 2.4, index, prep.tau_raw[a:b])
    (f,) = check_torque_timing(truth, [replace(prep, tau_raw=tau)], aligned=-0.020)
    assert _rerun_delay(f.message) == pytest.approx(-0.0224, abs=1.5e-4)
    assert len(repr(_rerun_delay(f.message))) <= len("-0.0224")


def test_the_delay_scan_compares_at_most_delay_rows_of_a_record(monkeypatch):
    """A record a little shorter than twice the limit gave all its samples (stride 1)."""
    import sparsefric.diagnostics as diagnostics

    monkeypatch.setattr(diagnostics, "DELAY_ROWS", 10)
    (rows,) = delay_errors(np.ones(19), np.zeros(19), [(0, 19)], [1e-3], np.zeros(1))
    assert rows == 10


def _rerun_delay(message: str) -> float:
    """The ``torque_delay`` [s] a ``torque_delay`` warning says to rerun with."""
    (value,) = re.findall(r"rerun with `torque_delay=([^`]+)`$", message)
    return float(value)


def test_a_negative_inertia_without_friction_on_records_that_barely_slide_is_no_reversed_torque():
    """Zoo joint 4 of seed 1869181815 (σ0 = 463 N·m/rad, f_c = 8.4 N·m: the bristles deflect
    0.018 rad before they slide; trained on moves of 0.008–0.034 rad): step 1 fitted the
    spring-like pre-sliding torque as an inertia of −6.5 kg·m² with no friction, and the error
    said to negate the torque column. The torque did positive work on the motion, which a
    reversed one cannot: the error now says the records barely slide. A negative power keeps
    the reversed-sign error, and an unknown one (NaN) too."""
    from sparsefric.diagnostics import check_inertia
    from sparsefric.model import JointModel

    spring = JointModel(inertia=-6.5, coulomb=0.0)
    (f,) = check_inertia(spring, 0.02, power=0.03)
    assert f.level == "error" and f.code == "no_sliding" and "barely slide" in f.message
    assert "negate" not in f.message
    assert check_inertia(spring, 0.02, power=-0.03)[0].code == "opposite_torque_sign"
    assert check_inertia(spring, 0.02)[0].code == "opposite_torque_sign"


def test_validation_and_test_records_get_the_unit_checks(example, fitted):
    """Only the training records were unit-checked: data/example's validation records in
    degrees ran with no unit warning and the model missed the steady friction of every
    training level (−46 % at 2.13 rad/s); test records in counts went to the report's error."""
    from sparsefric.estimator import SparseFric

    degrees = [replace(r, q=np.degrees(r.q)) for r in example["validate"]]
    est = SparseFric(static_only=True).fit(example["train"], validate=degrees)
    assert any(w.startswith("validation data: the position spans") and "like degrees" in w
               for w in est.warnings_)
    assert not any(w.startswith("validation data") for w in fitted.warnings_)
    counts = [replace(r, q=np.round(r.q * 2**17 / (2 * np.pi))) for r in example["test"]]
    est.result_.check_test(counts)
    assert any(f.message.startswith("test data: the position holds whole numbers")
               for f in est.result_.findings)
