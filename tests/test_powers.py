"""The Wald test of a group of coefficients and the viscous powers it drops."""

from __future__ import annotations

import numpy as np
import pytest

from sparsefric.simulate import EXAMPLE_TRUTH
from sparsefric.steps.powers import drop_powers, dropped_note, undetermined_powers
from sparsefric.uncertainty.wald import wald_test

from .noise import ar1
from .test_uncertainty import prepared_with_noise


@pytest.fixture(scope="module")
def data() -> list:
    """Two records of EXAMPLE_TRUTH (9 q̇ + 0.8 q̇³ N·m) at up to 0.5 and 1 rad/s, with 0.3 N·m
    of correlated torque noise."""
    return prepared_with_noise(EXAMPLE_TRUTH, ar1(np.random.default_rng(5), 8000, 0.9, 0.3))


def _with_viscous(**powers: float):
    return EXAMPLE_TRUTH.with_(viscous=tuple((int(p[1:]), c) for p, c in powers.items()))


def test_a_real_rise_rejects_zero_and_a_power_at_zero_does_not(data):
    w, critical = wald_test(EXAMPLE_TRUTH, data, ["viscous:3"])
    assert w > 3 * critical  # 0.8 q̇³: 0.8 N·m at 1 rad/s against 0.3 N·m of noise
    w, critical = wald_test(_with_viscous(c1=9.0, c3=0.8, c5=0.0), data, ["viscous:5"])
    assert w == pytest.approx(0.0, abs=1e-12) and critical > 3.84  # χ²₁ and fixed-b above it


def test_the_group_is_judged_as_a_whole(data):
    """Split between two collinear columns, each half of the rise may hold 0; the pair cannot."""
    split = _with_viscous(c1=9.0, c3=0.4, c5=0.4)
    w_pair, critical_pair = wald_test(split, data, ["viscous:3", "viscous:5"])
    assert w_pair > critical_pair
    assert critical_pair > wald_test(split, data, ["viscous:5"])[1]  # two degrees of freedom


def test_powers_at_zero_are_dropped_all_at_once_or_the_highest_alone(data):
    assert undetermined_powers(EXAMPLE_TRUTH, data) == ()
    assert undetermined_powers(_with_viscous(c1=9.0, c3=0.8, c5=0.0), data) == (5,)
    assert undetermined_powers(_with_viscous(c1=9.0, c2=0.0, c4=0.0), data) == (2, 4)
    assert undetermined_powers(_with_viscous(c1=9.0), data) == ()


def test_the_note_names_the_powers_dropped():
    assert dropped_note(()) == ""
    assert "q̇^2, q̇^4 dropped" in dropped_note((4, 2)) and "95%" in dropped_note((2,))
    assert dropped_note((3,), "the static model's ").startswith("; the static model's viscous")


def test_drop_powers_refits_until_the_data_determine_what_is_left(data):
    def without(model, drop):
        return model.with_(viscous=tuple((p, c) for p, c in model.viscous if p not in drop))

    padded = _with_viscous(c1=9.0, c3=0.8, c5=0.0)
    model, dropped = drop_powers(padded, lambda m: m, without, data)
    assert dropped == (5,) and model.viscous == EXAMPLE_TRUTH.viscous
    assert drop_powers(padded, lambda m: m, lambda m, d: None, data) == (padded, ())
