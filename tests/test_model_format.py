"""Model file format 2: validity range and uncertainty sections, reading format 1, range checks."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest

from sparsefric.errors import ModelFileError, SparsefricError
from sparsefric.model import FORMAT, JointModel, StaticBand, Uncertainty
from sparsefric.schema import validate_model_dict
from sparsefric.validity import OutsideValidityWarning, ValidityRange

from .conftest import EXAMPLE

VALIDITY = ValidityRange(velocity=(-2.0, 2.5), speed=(0.02, 2.5), position=(-1.0, 0.5),
                         torque=(-60.0, 70.0))
UNCERTAINTY = Uncertainty(
    method="bootstrap", level=0.95, resamples=40, random_state=7,
    intervals={"inertia": (1.4, 1.6), "coulomb": (17.0, 19.0), "stribeck:1.5": (6.0, 8.0),
               "viscous:3": (0.7, 0.9), "sigma0": (1.2e4, 1.8e4), "g0": (24.0, 26.0)},
    inclusion={"qd": 1.0, "qd^3": 0.85, "sign(qd)*exp(-|qd/ws|^1.5)": 0.975},
    static_curve=StaticBand((0.1, 0.5, 1.0), (20.0, 24.0, 27.0), (21.0, 25.5, 28.0)))


@pytest.fixture
def described(truth):
    return truth.with_(validity=VALIDITY, uncertainty=UNCERTAINTY)


def test_format_1_file_loads_and_is_saved_as_format_2(tmp_path):
    v1 = json.loads((EXAMPLE / "truth.json").read_text())
    assert v1["format"] == "sparsefric-model/1"
    model = JointModel.load(EXAMPLE / "truth.json")
    model.save(tmp_path / "m.json")
    v2 = json.loads((tmp_path / "m.json").read_text())
    assert v2 == {**v1, "format": FORMAT} and FORMAT == "sparsefric-model/2"
    assert JointModel.load(tmp_path / "m.json") == model


def test_validity_and_uncertainty_round_trip(tmp_path, described):
    described.save(tmp_path / "m.json")
    back = JointModel.load(tmp_path / "m.json")
    assert back.validity == VALIDITY and back.uncertainty == UNCERTAINTY
    assert back.to_json() == described.to_json()
    data = json.loads(described.to_json())
    assert list(data)[:6] == ["format", "axis", "rigid_body", "friction", "validity",
                              "uncertainty"]
    assert data["uncertainty"]["intervals"]["stribeck:1.5"] == [6.0, 8.0]
    assert data["provenance"] == "experiments/make_example.py"  # extra keys kept


def test_a_bootstrap_section_without_its_seed_still_loads(tmp_path, described):
    """Files written before the seed was recorded have none: validated and read as None."""
    data = described.to_dict()
    assert data["uncertainty"]["random_state"] == 7
    del data["uncertainty"]["random_state"]
    validate_model_dict(data)
    (tmp_path / "m.json").write_text(json.dumps(data))
    assert JointModel.load(tmp_path / "m.json").uncertainty.random_state is None


def test_sections_take_no_part_in_equality(truth, described):
    assert described == truth


def test_asymptotic_intervals_have_no_resample_count(tmp_path, truth):
    u = Uncertainty(method="asymptotic", level=0.9, intervals={"sigma1": (40.0, 80.0)})
    truth.with_(uncertainty=u).save(tmp_path / "m.json")
    assert JointModel.load(tmp_path / "m.json").uncertainty == u
    assert "resamples" not in json.loads((tmp_path / "m.json").read_text())["uncertainty"]


def test_an_open_interval_end_is_null_in_the_file(tmp_path, truth):
    """σ0 bounded from below only (pre-sliding below the resolution): [lo, null] on disk, valid
    by the schema, +∞ when read back."""
    u = Uncertainty(method="asymptotic", level=0.95,
                    intervals={"sigma0": (5e3, math.inf), "sigma1": (-2.0, math.inf)})
    truth.with_(uncertainty=u).save(tmp_path / "m.json")
    data = json.loads((tmp_path / "m.json").read_text())
    assert data["uncertainty"]["intervals"] == {"sigma0": [5e3, None], "sigma1": [-2.0, None]}
    validate_model_dict(data)
    assert JointModel.load(tmp_path / "m.json").uncertainty == u


def _asymptotic(section: dict) -> None:
    """A bootstrap section relabelled asymptotic, its resample count gone, its seed kept."""
    del section["resamples"]
    section["method"] = "asymptotic"


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d["validity"].update(velocity=[2.0, -2.0]),
     r"validity: key 'velocity' must be \[min, max\] with min ≤ max"),
    (lambda d: d["validity"].update(speed=[-0.1, 1.0]), "validity: key 'speed' min must be ≥ 0"),
    (lambda d: d["validity"].update(velocity=[1.0]), "key 'velocity' must be \\[min, max\\]"),
    (lambda d: d["validity"].update(velocty=[0, 1]), "validity: unknown key 'velocty'"),
    (lambda d: d["validity"].update(torque=[0, "x"]), "key 'torque' item 1 must be a finite"),
    (lambda d: d["uncertainty"].update(method="jackknife"), "key 'method' must be one of"),
    (lambda d: d["uncertainty"].update(level=1.0), "key 'level' must be < 1"),
    (lambda d: d["uncertainty"].pop("resamples"), "uncertainty: missing key 'resamples'"),
    (lambda d: d["uncertainty"].update(resamples=2.5), "'resamples' must be a positive integer"),
    (lambda d: d["uncertainty"].update(method="asymptotic"), "'resamples' belongs to method"),
    (lambda d: d["uncertainty"].update(random_state=-1), "'random_state' must be ≥ 0"),
    (lambda d: d["uncertainty"].update(random_state=0.5), "'random_state' must be an integer"),
    (lambda d: _asymptotic(d["uncertainty"]), "'random_state' belongs to method"),
    (lambda d: d["uncertainty"]["intervals"].update(mass=[1, 2]), "unknown parameter 'mass'"),
    (lambda d: d["uncertainty"]["intervals"].update({"viscous:0": [1, 2]}),
     "unknown parameter 'viscous:0'"),
    (lambda d: d["uncertainty"]["intervals"].update(coulomb=[19, 17]),
     "intervals: key 'coulomb' must be"),
    (lambda d: d["uncertainty"]["intervals"].update(coulomb=[None]),
     r"intervals: key 'coulomb' must be \[lo, hi\]"),
    (lambda d: d["uncertainty"]["intervals"].update(coulomb=[17, "x"]),
     "key 'coulomb' item 1 must be a finite"),
    (lambda d: d["uncertainty"]["inclusion"].update(qd=1.5), "must lie in \\[0, 1\\]"),
    (lambda d: d["uncertainty"]["static_curve"]["lower"].pop(),
     "must have equal lengths, got 3, 2, 3"),
    (lambda d: d["uncertainty"]["static_curve"].update(upper=[0, 0, 0]),
     "key 'lower' must not exceed key 'upper'"),
])
def test_sections_name_the_bad_key(tmp_path, described, mutate, message):
    data = described.to_dict()
    mutate(data)
    (tmp_path / "m.json").write_text(json.dumps(data))
    with pytest.raises(ModelFileError, match=message) as info:
        JointModel.load(tmp_path / "m.json")
    assert str(info.value).startswith(str(tmp_path / "m.json")) and "\n" not in str(info.value)


def test_unknown_format_names_both_readable_ones(truth):
    with pytest.raises(ModelFileError, match="'sparsefric-model/2' .*'sparsefric-model/1'"):
        JointModel.from_dict({**truth.to_dict(), "format": "sparsefric-model/3"}, "m.json")


def test_validity_from_samples():
    q = np.array([0.0, 0.5, 1.0, 0.5])
    qd = np.array([0.0, 1.0, 0.0, -2.0])
    tau = np.array([1.0, 3.0, -2.0, 0.0])
    v = ValidityRange.from_samples(q, qd, tau)
    assert v == ValidityRange((-2.0, 1.0), (1.0, 2.0), (0.0, 1.0), (-2.0, 3.0))
    assert ValidityRange.from_samples(q, qd, tau, sliding=qd > 0.5).speed == (1.0, 1.0)


def test_check_validity_names_the_quantities_and_how_far(described):
    assert described.check_validity(q=[0.0], qd=[1.0, -1.0]) == []
    found = described.check_validity(q=[-1.5, 0.0], qd=[1.0, 3.0], tau=[0.0])
    assert [(e.quantity, e.extreme, e.beyond) for e in found] == [("position", -1.5, 0.5),
                                                                  ("velocity", 3.0, 0.5)]
    assert found[1].low == -2.0 and found[1].high == 2.5
    assert described.with_(validity=None).check_validity(qd=[100.0]) == []


def test_out_of_range_warns_once_per_call_naming_quantity_range_and_extreme(described):
    qd = np.linspace(-3.0, 2.0, 50)
    with pytest.warns(OutsideValidityWarning) as record:
        described.friction_torque(qd, 1e-3)
    assert len(record) == 1 and record[0].filename == __file__
    assert str(record[0].message).startswith(
        "velocity -3 rad/s is outside the validity range [-2, 2.5] rad/s")
    with pytest.warns(OutsideValidityWarning, match="position 1 rad .*; velocity -3 rad/s"):
        described.torque(np.ones(50), qd, np.zeros(50), 1e-3)
    with pytest.warns(OutsideValidityWarning, match="velocity 3 m/s"):
        described.with_(axis="prismatic").static_friction(np.array([3.0]))


def test_inside_the_range_or_ignored_nothing_is_said(described):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        described.friction_torque(np.linspace(-2.0, 2.5, 50), 1e-3)
        described.static_friction(np.array([10.0]), outside="ignore")
        described.with_(validity=None).static_friction(np.array([10.0]))


def test_clamp_evaluates_at_the_edge_of_the_range(described, truth):
    qd = np.array([-5.0, 0.1, 5.0])
    np.testing.assert_array_equal(described.static_friction(qd, outside="clamp"),
                                  truth.static_friction(np.array([-2.0, 0.1, 2.5])))
    q = np.array([-3.0, 0.0, 3.0])
    np.testing.assert_array_equal(
        described.torque(q, qd, np.zeros(3), 1e-3, 0.0, outside="clamp"),
        truth.torque(np.array([-1.0, 0.0, 0.5]), np.array([-2.0, 0.1, 2.5]), np.zeros(3),
                     1e-3, 0.0))


def test_bad_outside_option_is_named(described):
    with pytest.raises(SparsefricError, match="option outside must be one of warn, clamp, "
                                              "ignore, got 'raise'"):
        described.static_friction(np.zeros(2), outside="raise")
