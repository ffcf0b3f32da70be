"""The model file: round trip, validation naming the first bad key, evaluation."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from sparsefric.errors import ModelFileError, OptionError
from sparsefric.model import JointModel


def test_round_trip_is_exact(tmp_path, truth):
    truth.save(tmp_path / "m.json")
    back = JointModel.load(tmp_path / "m.json")
    assert back == truth and back.to_json() == truth.to_json()


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d.pop("format"), "key 'format'"),
    (lambda d: d.update(axis="spherical"), "key 'axis' must be one of"),
    (lambda d: d["rigid_body"].pop("inertia"), "rigid_body: missing key 'inertia'"),
    (lambda d: d["friction"].update(sigma0=-1.0), "key 'sigma0' must be > 0"),
    (lambda d: d["friction"].update(stribeck_velocity=0), "'stribeck_velocity' must be > 0"),
    (lambda d: d["friction"]["viscous"].append({"power": 1.5, "coefficient": 1}),
     r"viscous\[2\]: key 'power' must be a positive integer"),
    (lambda d: d["friction"].update(sign={"type": "tanh"}), "sign: missing key 'K'"),
    (lambda d: d["friction"].update(coulomb="high"), "'coulomb' must be a finite number"),
])
def test_validation_names_the_bad_key(tmp_path, truth, mutate, message):
    data = truth.to_dict()
    mutate(data)
    (tmp_path / "m.json").write_text(json.dumps(data))
    with pytest.raises(ModelFileError, match=message):
        JointModel.load(tmp_path / "m.json")


@pytest.mark.parametrize("changes, message", [
    ({"coulomb": float("nan")}, r"friction: key 'coulomb' must be a finite number, got nan$"),
    ({"kind": "lugre", "sigma0": 0.0}, r"friction: key 'sigma0' must be > 0, got 0.0$"),
    ({"inertia": -1.0}, r"rigid_body: key 'inertia' must be ≥ 0, got -1.0$"),
    ({"viscous": ((1.5, 2.0),)},
     r"friction\.viscous\[0\]: key 'power' must be a positive integer$"),
])
def test_a_model_the_loader_refuses_is_not_written(tmp_path, truth, changes, message):
    bad = truth.with_(**changes)
    with pytest.raises(ModelFileError, match=f"^{re.escape(str(tmp_path / 'm.json'))}: {message}"):
        bad.save(tmp_path / "m.json")
    assert not (tmp_path / "m.json").exists()
    with pytest.raises(ModelFileError, match=f"^model: {message}"):
        bad.to_json()


def test_extra_cannot_replace_the_models_own_keys(tmp_path, truth):
    with pytest.raises(OptionError, match=r"^extra must not hold 'axis', a key of the model "
                                          r"itself \(format, axis, rigid_body, friction, "):
        truth.with_(extra={"axis": "prismatic", "fit": {}}).save(tmp_path / "m.json")
    kept = truth.with_(extra={"fit": {"rmse": float("nan")}})
    kept.save(tmp_path / "m.json")
    assert JointModel.load(tmp_path / "m.json").extra == {"fit": {"rmse": None}}


@pytest.mark.parametrize("changes, message", [
    ({"kind": "LuGre"}, "kind must be one of lugre, static, got 'LuGre'"),
    ({"axis": "linear"}, "axis must be one of revolute, prismatic, got 'linear'"),
])
def test_construction_refuses_an_unknown_axis_or_kind(truth, changes, message):
    with pytest.raises(OptionError, match=f"^{message}$"):
        JointModel(**changes)
    with pytest.raises(OptionError, match=f"^{message}$"):
        truth.with_(**changes)


def test_a_dictionary_built_with_numpy_numbers_is_read(truth):
    data = truth.to_dict()
    data["rigid_body"].update(inertia=np.float32(1.5), offset=np.int64(0))
    data["friction"]["viscous"][0]["power"] = np.int64(1)
    model = JointModel.from_dict(data)
    assert model.inertia == 1.5 and model.offset == 0.0 and model.viscous[0][0] == 1
    assert type(model.inertia) is float and type(model.viscous[0][0]) is int


@pytest.mark.parametrize("value", [True, np.bool_(True), "1.5", np.str_("1.5")])
def test_a_bool_or_a_string_is_no_number(truth, value):
    data = truth.to_dict()
    data["rigid_body"]["inertia"] = value
    with pytest.raises(ModelFileError, match="key 'inertia' must be a finite number, got"):
        JointModel.from_dict(data)


def test_extra_is_a_copy_of_the_dictionary(truth):
    data = {**truth.to_dict(), "fit": {"model": "A"}}
    JointModel.from_dict(data).extra["fit"]["model"] = "B"
    assert data["fit"] == {"model": "A"}


def test_bad_json_and_missing_file(tmp_path):
    (tmp_path / "m.json").write_text("{not json")
    with pytest.raises(ModelFileError, match="not valid JSON"):
        JointModel.load(tmp_path / "m.json")
    with pytest.raises(ModelFileError, match="no such model file"):
        JointModel.load(tmp_path / "absent.json")


def test_static_curve_matches_definition(truth):
    v = np.array([-1.0, 0.05, 0.5])
    g = truth.coulomb + 7.0 * np.exp(-np.abs(v / 0.08) ** 1.5)
    expected = np.sign(v) * g + 9.0 * v + 0.8 * v**3
    np.testing.assert_allclose(truth.static_friction(v), expected, rtol=1e-12)
    assert truth.breakaway_torque() == pytest.approx(25.0, rel=1e-3)


def test_static_friction_of_a_number_is_a_number(truth):
    """As numpy's functions: a number for a number (a format string takes it), an array for
    an array."""
    at = truth.static_friction(0.5)
    assert type(at) is float and f"{at:.2f}" == f"{truth.static_friction(np.array([0.5]))[0]:.2f}"
    assert type(truth.friction_object().static_curve(np.float64(0.5))) is float
    assert truth.static_friction(np.array([0.5])).shape == (1,)


def test_a_grid_of_velocities_is_refused_naming_qd(truth):
    grid = np.array([[0.1, 0.5], [0.2, 0.3]])
    message = r"^qd must be a number or a 1-D array, got shape \(2, 2\)$"
    with pytest.raises(OptionError, match=message):
        truth.static_friction(grid)
    with pytest.raises(OptionError, match=message):
        truth.friction_torque(grid, 1e-3)
    with pytest.raises(OptionError, match=message):
        truth.friction_object().simulate(grid, 1e-3)


def test_breakaway_is_the_coulomb_stribeck_peak_not_a_viscous_one(truth):
    # a fitted negative q̇² term makes the whole static curve peak far above f_s
    bent = truth.with_(viscous=((1, 338.0), (2, -230.0)))
    assert bent.breakaway_torque() == pytest.approx(25.0, rel=1e-3)
    # model B: tanh(K q̇) needs ~3/K = 0.02 rad/s to rise, where g has fallen to ≈ 24.2
    assert 23.8 < truth.with_(tanh_k=150.0).breakaway_torque() < 24.3
    assert truth.with_(stribeck=()).breakaway_torque() == pytest.approx(18.0, rel=1e-6)


@pytest.mark.parametrize("v_max", [0.0, -1.0, float("nan"), float("inf")])
def test_breakaway_needs_a_positive_finite_speed(truth, v_max):
    with pytest.raises(OptionError, match=rf"^v_max must be a positive, finite speed \[rad/s\], "
                                          rf"got {v_max!r}$"):
        truth.breakaway_torque(v_max)


def test_breakaway_below_the_grid_start_searches_up_to_v_max_only(truth):
    model_b, v = truth.with_(tanh_k=150.0), 1e-9  # tanh(K q̇) g(q̇) rises with q̇ there
    assert model_b.breakaway_torque(v) == pytest.approx(model_b.static_friction(v) - 9.0 * v,
                                                        rel=1e-9)


def test_parameters_list_the_stribeck_velocity_only_with_a_stribeck_term(truth):
    names = [name for name, _, _ in truth.parameters()]
    assert "Ω_s (Stribeck velocity)" in names and "A (Stribeck, δ = 1.5)" in names
    coulomb_viscous = truth.with_(stribeck=())
    rows = coulomb_viscous.parameters()
    assert not any(name.startswith(("Ω_s", "A (Stribeck")) for name, _, _ in rows)
    assert rows[-1] == ("breakaway torque", "N·m", coulomb_viscous.breakaway_torque())


V = np.linspace(0.1, 0.5, 5)
STEP = r"must be a positive, finite time step \[s\], got"


@pytest.mark.parametrize("kind", ["lugre", "static"])
@pytest.mark.parametrize("qd, dt, message", [
    (V, -1e-3, rf"^dt {STEP} -0.001$"),
    (V, 0.0, rf"^dt {STEP} 0.0$"),
    (V, np.nan, rf"^dt {STEP} nan$"),
    (V, np.r_[1e-3, 1e-3, -1e-3, 1e-3], rf"^dt\[2\] {STEP} -0.001$"),
    (np.r_[0.1, np.nan, 0.3], 1e-3, r"^qd\[1\] must be a finite velocity \[rad/s\], got nan$"),
    (V, np.array([1e-3, 0.5]),
     r"^dt must be a number or an array of 4 or 5 time steps for 5 samples, got shape \(2,\)$"),
])
def test_a_record_the_bristle_update_cannot_take_is_refused(truth, kind, qd, dt, message):
    """As LuGreFriction refuses it: z would turn NaN for good, run backwards or follow steps
    cycled to the record's length."""
    model = truth.with_(kind=kind)
    with pytest.raises(OptionError, match=message):
        model.friction_torque(qd, dt)
    with pytest.raises(OptionError, match=message):
        model.torque(np.zeros(len(qd)), qd, np.zeros(len(qd)), dt)


def test_dt_holds_one_step_per_interval_or_per_sample(truth):
    """n − 1 steps, or n with the last unused (and not checked)."""
    tau = truth.friction_torque(V, 1e-3)
    np.testing.assert_array_equal(truth.friction_torque(V, np.full(4, 1e-3)), tau)
    np.testing.assert_array_equal(truth.friction_torque(V, np.r_[np.full(4, 1e-3), np.nan]), tau)


def test_a_joint_held_at_rest_needs_its_gravity_torque_only(truth):
    """A record that never moves (speed noise of 0.1 mrad/s) is predicted as gravity, not
    gravity plus the break-away torque of a bristle started at steady sliding."""
    q = np.full(100, -0.6)
    qd = np.random.default_rng(0).normal(0.0, 1e-4, 100)
    tau = truth.torque(q, qd, np.zeros(100), 1e-3)
    gravity = truth.rigid_body_torque(q, np.zeros(100))
    assert np.max(np.abs(tau - gravity)) < 0.05
