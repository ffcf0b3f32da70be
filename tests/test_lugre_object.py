"""The stateful LuGre friction object: sample by sample, vectorised, reset, range policy."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from sparsefric import lugre
from sparsefric.errors import SparsefricError
from sparsefric.lugre import LuGreFriction, lugre_torque, static_curve
from sparsefric.validity import OutsideValidityWarning, ValidityRange

from .recorded import DT, recorded_velocity

N = 20_000


@pytest.fixture(params=[0.0, 150.0], ids=["model_A", "model_B"])
def model(request, truth):
    return truth.with_(tanh_k=request.param)


def test_step_reproduces_lugre_torque(model):
    qd = recorded_velocity(N)
    ref = lugre_torque(qd, DT, model.friction, z0=1e-4)
    f = model.friction_object(z0=1e-4)
    assert f.z == 1e-4 and f.dynamic
    out = np.array([f.step(v, DT) for v in qd])
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12 * np.max(np.abs(ref)))


def test_simulate_in_pieces_continues_from_the_state(model):
    qd = recorded_velocity(N)
    dt = np.full(N, DT) * (1 + 0.01 * np.sin(np.arange(N)))  # a varying sample period
    ref = lugre_torque(qd, dt[1:], model.friction, z0=0.0)
    f = model.friction_object()
    first = [f.step(v, h) for v, h in zip(qd[:10], dt[:10], strict=True)]
    middle, z = f.simulate(qd[10:5000], dt[10:5000])
    assert f.z == z[-1]
    last, _ = f.simulate(qd[5000:], dt[5000:])
    np.testing.assert_allclose(np.r_[first, middle, last], ref, rtol=1e-12,
                               atol=1e-12 * np.max(np.abs(ref)))


def test_reset_starts_again(model):
    qd = recorded_velocity(3000)
    f = model.friction_object()
    a, za = f.simulate(qd, DT)
    f.reset(za[-1] / 2)
    assert f.z == za[-1] / 2
    f.reset()
    b, zb = f.simulate(qd, DT)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(za, zb)


def test_steady_sliding_reaches_the_static_curve(model):
    f = model.friction_object()
    tau, _ = f.simulate(np.full(3000, 0.4), DT)
    assert tau[-1] == pytest.approx(f.static_curve(np.array([0.4]))[0], rel=1e-9)


def test_static_model_returns_the_static_curve_without_state(model):
    qd = recorded_velocity(500)
    f = model.with_(kind="static").friction_object()
    assert not f.dynamic
    ref = static_curve(qd, model.friction)
    np.testing.assert_allclose([f.step(v, DT) for v in qd], ref, rtol=1e-14)
    tau, z = f.simulate(qd, DT)
    np.testing.assert_allclose(tau, ref, rtol=1e-14)
    assert f.z == 0.0 and not np.any(z)


def _bounded(model, outside):
    bounded = model.with_(validity=ValidityRange(velocity=(-0.1, 0.1)))
    return bounded.friction_object(outside=outside)


def test_outside_the_range_warns_once_until_reset(model):
    f = _bounded(model, "warn")
    with pytest.warns(OutsideValidityWarning,
                      match=r"velocity 0.2 rad/s is outside the validity range \[-0.1, 0.1\]"
                      ) as record:
        f.step(0.2, DT)
        f.step(0.3, DT)
        f.simulate(np.full(10, -0.5), DT)
    assert len(record) == 1 and record[0].filename == __file__
    f.reset()
    with pytest.warns(OutsideValidityWarning, match="velocity -0.5 rad/s"):
        f.simulate(np.r_[0.0, -0.5], DT)


def test_clamp_limits_the_velocity_and_ignore_does_nothing(model):
    qd = np.r_[0.0, 0.05, 0.2, 0.3, -0.4]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clamped, _ = _bounded(model, "clamp").simulate(qd, DT)
        ignored, _ = _bounded(model, "ignore").simulate(qd, DT)
    free = LuGreFriction(model.friction)
    np.testing.assert_array_equal(clamped, free.simulate(np.clip(qd, -0.1, 0.1), DT)[0])
    free.reset()
    np.testing.assert_array_equal(ignored, free.simulate(qd, DT)[0])


def test_bad_outside_option_is_named(model):
    with pytest.raises(SparsefricError, match="option outside must be one of"):
        LuGreFriction(model.friction, outside="stop")


#: Inputs the bristle update cannot take, and the error that names them.
BAD_SAMPLES = [
    (np.nan, DT, r"^qd must be a finite velocity \[rad/s\], got nan$"),
    (-np.inf, DT, r"^qd must be a finite velocity \[rad/s\], got -inf$"),
    (0.1, np.nan, r"^dt must be a positive, finite time step \[s\], got nan$"),
    (0.1, -DT, r"^dt must be a positive, finite time step \[s\], got -0.001$"),
    (0.1, 0.0, r"^dt must be a positive, finite time step \[s\], got 0.0$"),
    # not a number at all: named as the others, not a bare float() error
    ("fast", DT, r"^qd must be a finite velocity \[rad/s\], got 'fast'$"),
    (None, DT, r"^qd must be a finite velocity \[rad/s\], got None$"),
    (True, DT, r"^qd must be a finite velocity \[rad/s\], got True$"),
    ([0.1, 0.2], DT, r"^qd must be a finite velocity \[rad/s\], got \[0.1, 0.2\]$"),
    (0.1, "fast", r"^dt must be a positive, finite time step \[s\], got 'fast'$"),
    (0.1, None, r"^dt must be a positive, finite time step \[s\], got None$"),
]


@pytest.mark.parametrize("kind", ["lugre", "static"])
@pytest.mark.parametrize("qd, dt, message", BAD_SAMPLES)
def test_a_bad_sample_is_refused_and_the_state_kept(model, kind, qd, dt, message):
    """A controller skips the sample: no NaN, range warning or backward z, and the next
    samples are those of an object that never saw it."""
    v = recorded_velocity(400)
    bounded = model.with_(kind=kind, validity=ValidityRange(velocity=(-1.0, 1.0)))
    f, ref = bounded.friction_object(), bounded.friction_object()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal([f.step(x, DT) for x in v[:200]],
                                      [ref.step(x, DT) for x in v[:200]])
        z = f.z
        with pytest.raises(ValueError, match=message):
            f.step(qd, dt)
        assert f.z == z
        np.testing.assert_array_equal([f.step(x, DT) for x in v[200:]],
                                      [ref.step(x, DT) for x in v[200:]])


def test_a_record_with_a_bad_sample_is_refused_whole(model):
    v = recorded_velocity(50)
    f = model.friction_object()
    with pytest.raises(SparsefricError, match=r"^qd\[7\] must be a finite velocity"):
        f.simulate(np.r_[v[:7], np.nan, v[8:]], DT)
    with pytest.raises(ValueError, match=r"^dt\[3\] must be a positive, finite time step"):
        f.simulate(v, np.r_[DT, DT, DT, -DT, np.full(46, DT)])
    assert f.z == 0.0
    with pytest.raises(ValueError, match=r"^dt must be a number or an array of 50 time steps "
                                         r"for 50 samples, got shape \(49,\)$"):
        f.simulate(v, np.full(49, DT))
    assert f.z == 0.0
    f.simulate(v, np.r_[np.nan, np.full(49, DT)])  # dt before the first sample is not used
    with pytest.raises(ValueError, match=r"^dt must be a positive, finite time step"):
        f.simulate(v, 0.0)


@pytest.mark.parametrize("dt", [DT, np.full(49, DT), np.full(50, DT)],
                         ids=["number", "per interval", "per sample"])
def test_a_records_time_steps_are_built_once(model, monkeypatch, dt):
    """The check built one step per sample, then the integration built them again."""
    built = []
    per_sample = lugre._per_sample
    monkeypatch.setattr(lugre, "_per_sample",
                        lambda *a: built.append(per_sample(*a)) or built[-1])
    v = recorded_velocity(50)
    expected = lugre_torque(v, DT, model.friction, 1e-4)
    built.clear()
    np.testing.assert_array_equal(model.friction_torque(v, dt, 1e-4), expected)
    assert len({id(steps) for steps in built}) == 1
    if np.size(dt) == 50:
        built.clear()
        f = model.friction_object(z0=1e-4)
        np.testing.assert_array_equal(f.simulate(v, dt)[0][1:], expected[1:])
        assert len({id(steps) for steps in built}) == 1
        with pytest.raises(ValueError, match=r"^dt must be a positive, finite time step "
                                             r"\[s\], got 'fast'$"):
            f.simulate(v, "fast")


def test_the_first_step_after_reset_takes_no_time_step(model):
    """Its dt is not used, so None is as good as any number."""
    v = recorded_velocity(20)
    f, ref = model.friction_object(), model.friction_object()
    out = [f.step(v[0], None), *(f.step(x, DT) for x in v[1:])]
    np.testing.assert_array_equal(out, [ref.step(x, DT) for x in v])


@pytest.mark.parametrize("z0", [np.nan, np.inf])
def test_a_start_that_is_not_finite_is_refused(model, z0):
    message = rf"^z0 must be a finite bristle deflection, got {z0!r}$"
    with pytest.raises(ValueError, match=message):
        model.friction_object(z0=z0)
    f = model.friction_object(z0=1e-4)
    with pytest.raises(ValueError, match=message):
        f.reset(z0)
    assert f.z == 1e-4
    with pytest.raises(ValueError, match=message):
        model.friction_torque(recorded_velocity(20), DT, z0)
