"""Candidate libraries: the columns, their units, and the Ω_s derivatives Newton relies on."""

from __future__ import annotations

import numpy as np
import pytest

from sparsefric.feature_library import (
    RigidBodyLibrary,
    SignalLibrary,
    StribeckLibrary,
    ViscousLibrary,
    static_library,
)
from sparsefric.signals import Signals

RNG = np.random.default_rng(3)
X = Signals(RNG.uniform(-1, 1, 300), np.r_[0.0, RNG.uniform(-0.5, 0.5, 299)],
            RNG.normal(size=300))


def test_rigid_body_and_viscous_columns_are_what_they_say():
    rigid = RigidBodyLibrary("revolute").evaluate(X, 0.0)[0]
    np.testing.assert_array_equal(rigid, np.column_stack([X.qdd, np.cos(X.q), np.sin(X.q)]))
    prismatic = RigidBodyLibrary("prismatic")
    assert [t.kind for t in prismatic.terms()] == ["inertia", "offset"]
    visc = ViscousLibrary((1, 2, 5)).evaluate(X, 0.0)[0]
    np.testing.assert_allclose(visc, np.column_stack([X.qd, X.qd**2, X.qd**5]), rtol=1e-14)


def test_stribeck_columns_are_sign_times_exponentials():
    theta = np.log(0.1)
    cols = StribeckLibrary((0.5, 2.0)).evaluate(X, theta)[0]
    s = np.sign(X.qd)
    expected = np.column_stack([s, s * np.exp(-np.abs(X.qd / 0.1) ** 0.5),
                                s * np.exp(-np.abs(X.qd / 0.1) ** 2.0)])
    np.testing.assert_allclose(cols, expected, rtol=1e-12, atol=1e-300)


def test_stribeck_columns_of_any_exponents_share_one_table_of_speed_powers(monkeypatch):
    """Libraries of other exponents on the same samples get their columns from one table of
    |q̇|^δ that grows with the exponents asked for; a record longer than the table's limit gets
    the same columns without a table (``Signals.speed_powers``)."""
    from sparsefric import signals

    x = Signals(X.q, X.qd, X.qdd)
    theta = np.log(0.05)

    def expected(deltas):
        return np.column_stack([np.sign(x.qd) * np.exp(-np.abs(x.qd / 0.05) ** d)
                                for d in deltas])

    for deltas in [(2.0,), (0.5, 4.0), (4.0, 2.0, 1.25), (2.0,)]:
        cols = StribeckLibrary(deltas, coulomb=False).evaluate(x, theta)[0]
        np.testing.assert_allclose(cols, expected(deltas), rtol=1e-11, atol=1e-300)
    known, table, _ = x.__dict__["_speed_powers"]
    assert known == (0.5, 1.25, 2.0, 4.0) and table.shape == (len(x), 4)
    monkeypatch.setattr(signals, "POWER_TABLE_ROWS", len(x) - 1)
    long = Signals(X.q, X.qd, X.qdd)
    cols = StribeckLibrary((0.5, 4.0), coulomb=False).evaluate(long, theta)[0]
    np.testing.assert_allclose(cols, expected((0.5, 4.0)), rtol=1e-11, atol=1e-300)
    assert "_speed_powers" not in long.__dict__


def test_model_b_multiplies_by_tanh():
    cols = StribeckLibrary((1.0,), tanh_k=150.0).evaluate(X, np.log(0.1))[0]
    np.testing.assert_allclose(cols[:, 0], np.tanh(150.0 * X.qd), rtol=1e-14)


@pytest.mark.parametrize("delta", [0.5, 1.0, 2.25, 4.0])
def test_omega_derivatives_match_finite_differences(delta):
    lib = StribeckLibrary((delta,), coulomb=False)
    theta, h = np.log(0.12), 1e-5
    _, d1, d2 = lib.evaluate(X, theta, order=2)
    plus, minus = lib.evaluate(X, theta + h)[0], lib.evaluate(X, theta - h)[0]
    centre = lib.evaluate(X, theta)[0]
    np.testing.assert_allclose(d1, (plus - minus) / (2 * h), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(d2, (plus - 2 * centre + minus) / h**2, rtol=1e-4, atol=1e-5)


def test_combine_is_the_weighted_sum_of_the_columns_and_its_derivatives():
    lib = static_library("revolute", n_viscous=3, deltas=(0.75, 1.5))
    coef = RNG.normal(size=len(lib))
    theta = np.log(0.08)
    full = lib.evaluate(X, theta, order=2)
    for got, cols in zip(lib.combine(X, theta, coef, order=2), full, strict=True):
        np.testing.assert_allclose(got, cols @ coef, rtol=1e-10, atol=1e-12)


def test_units_follow_the_axis():
    rev = [t.unit for t in static_library("revolute", n_viscous=2, deltas=(1.0,)).terms()]
    pri = [t.unit for t in static_library("prismatic", n_viscous=2, deltas=(1.0,)).terms()]
    assert rev == ["kg·m²", "N·m", "N·m", "N·m·s/rad", "N·m·s^2/rad^2", "N·m", "N·m"]
    assert pri == ["kg", "N", "N·s/m", "N·s^2/m^2", "N", "N"]


def test_select_keeps_the_chosen_columns_in_order():
    lib = static_library("revolute", n_viscous=3, deltas=(0.5, 1.0, 2.0))
    mask = np.array([t.kind != "viscous" and t.param != 1.0 for t in lib.terms()])
    sub = lib.select(mask)
    assert [t.name for t in sub.terms()] == [t.name for t, m in zip(lib.terms(), mask,
                                                                      strict=True) if m]
    theta = np.log(0.1)
    np.testing.assert_array_equal(sub.evaluate(X, theta)[0], lib.evaluate(X, theta)[0][:, mask])


def test_signal_columns_come_from_the_extras():
    x = Signals(X.q, X.qd, X.qdd, extra={"zdot": X.qd * 2})
    np.testing.assert_array_equal(SignalLibrary(["zdot"]).evaluate(x, 0.0)[0][:, 0], X.qd * 2)
    with pytest.raises(ValueError, match="unknown signal columns"):
        SignalLibrary(["nope"])
