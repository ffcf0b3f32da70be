"""The Wald tests of groups of coefficients and the viscous powers they drop."""

from __future__ import annotations

import numpy as np
import pytest

from sparsefric.simulate import EXAMPLE_TRUTH
from sparsefric.steps.powers import drop_powers, dropped_note, undetermined_powers
from sparsefric.uncertainty.wald import wald_tests

from .noise import ar1
from .test_uncertainty import prepared_with_noise


@pytest.fixture(scope="module")
def data() -> list:
    """Two records of EXAMPLE_TRUTH (9 q̇ + 0.8 q̇³ N·m) at up to 0.5 and 1 rad/s, with 0.3 N·m
    of correlated torque noise."""
    return prepared_with_noise(EXAMPLE_TRUTH, ar1(np.random.default_rng(5), 8000, 0.9, 0.3))


def _with_viscous(**powers: float):
    return EXAMPLE_TRUTH.with_(viscous=tuple((int(p[1:]), c) for p, c in powers.items()))


def test_a_real_rise_rejects_zero_and_a_power_at_noise_level_does_not(data):
    (w3, critical), = wald_tests(EXAMPLE_TRUTH, data, [["viscous:3"]], 0.95)
    assert w3 > 3 * critical  # 0.8 q̇³: 0.8 N·m at 1 rad/s against 0.3 N·m of noise
    assert 3.84 < critical < 6  # χ²₁'s 95 % quantile, widened by the fixed-b ratio
    padded = _with_viscous(c1=9.0, c3=0.8, c5=0.01)  # 0.01 N·m at 1 rad/s
    (w_pair, pair), (w5, one) = wald_tests(padded, data, [["viscous:3", "viscous:5"],
                                                         ["viscous:5"]], 0.95)
    assert w_pair > pair and w5 < 0.01 * one
    assert pair > one  # two degrees of freedom


def test_the_group_is_judged_as_a_whole(data):
    """Split between two collinear columns, each half of the rise holds 0; the pair does not."""
    split = _with_viscous(c1=9.0, c3=0.4, c5=0.4)
    (w_pair, pair), (w3, one), (w5, _) = wald_tests(
        split, data, [["viscous:3", "viscous:5"], ["viscous:3"], ["viscous:5"]], 0.95)
    assert w_pair > 3 * pair and w3 < one and w5 < one


def test_noise_free_data_determine_every_coefficient():
    """Zero residuals give a zero covariance: that is a coefficient known exactly, not one the
    data leave open (a pseudo-inverse alone would read W = 0 and drop it)."""
    clean = prepared_with_noise(EXAMPLE_TRUTH, np.zeros(8000))
    assert wald_tests(EXAMPLE_TRUTH, clean, [["viscous:3"]], 0.95)[0][0] == np.inf
    assert undetermined_powers(EXAMPLE_TRUTH, clean) == []


def test_names_and_data_the_tests_cannot_use_are_refused(data):
    with pytest.raises(ValueError, match="viscous:7: not parameters of the model"):
        wald_tests(EXAMPLE_TRUTH, data, [["viscous:7"]], 0.95)
    with pytest.raises(ValueError, match="need prepared records"):
        wald_tests(EXAMPLE_TRUTH, [], [["viscous:3"]], 0.95)


def test_powers_are_dropped_as_a_group_or_the_highest_alone(data):
    assert undetermined_powers(EXAMPLE_TRUTH, data) == []
    assert undetermined_powers(_with_viscous(c1=9.0, c3=0.8, c5=0.01), data) == [(5,)]
    # q̇² and q̇⁴ at noise level: the group first, then the highest alone
    assert undetermined_powers(_with_viscous(c1=9.0, c2=0.01, c4=-0.01), data) == [(2, 4), (4,)]
    assert undetermined_powers(_with_viscous(c1=9.0), data) == []


def test_drop_powers_refits_until_the_data_determine_what_is_left(data):
    def without(model, drop):
        return model.with_(viscous=tuple((p, c) for p, c in model.viscous if p not in drop))

    padded = _with_viscous(c1=9.0, c3=0.8, c5=0.0)
    model, dropped = drop_powers(padded, lambda m: m, without, data)
    assert dropped == (5,) and model.viscous == EXAMPLE_TRUTH.viscous
    assert drop_powers(padded, lambda m: m, lambda m, d: None, data) == (padded, ())


def test_a_group_whose_refit_is_refused_gives_way_to_the_highest_power_alone(data):
    tried = []

    def without(model, drop):
        tried.append(drop)
        if len(drop) > 1:
            return None  # e.g. the refit without both is inadmissible
        return model.with_(viscous=tuple((p, c) for p, c in model.viscous if p not in drop))

    noise = _with_viscous(c1=9.0, c2=0.01, c4=-0.01)
    model, dropped = drop_powers(noise, lambda m: m, without, data)
    assert tried[:2] == [(2, 4), (4,)] and dropped[0] == 4
    assert 4 not in dict(model.viscous)


def test_the_note_names_the_powers_dropped():
    assert dropped_note(()) == ""
    assert "q̇^2, q̇^4 dropped" in dropped_note((4, 2)) and "95%" in dropped_note((2,))
    assert dropped_note((3,), "the LuGre model's ").startswith("; the LuGre model's viscous")
