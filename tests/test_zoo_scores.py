"""The zoo's scores: which failures count as named by a warning."""

from __future__ import annotations

import pytest

from .conftest import zoo as load_zoo


@pytest.fixture(scope="module")
def zoo():
    return load_zoo()


def test_a_failure_is_named_only_by_a_warning_that_mentions_it(zoo):
    errors = {"static": 1.0, "breakaway": -12.0, "I": 30.0, "sigma0": 80.0, "test_ratio": 1.0}
    ok = zoo.passes(errors, reached=True)
    assert ok == {"static": True, "I": False, "sigma0": False, "breakaway": False, "test": True}
    warnings = ["the inertia is poorly determined by these data: 95% interval [1, 3] kg·m²",
                "the pre-sliding deflection g(0)/σ0 is only 0.8 encoder steps"]
    assert zoo.unnamed_failures(ok, warnings) == ["breakaway"]
    assert zoo.unnamed_failures(ok, []) == ["breakaway", "I", "sigma0"]
    # an unreached Stribeck region does not fail the break-away criterion
    assert zoo.unnamed_failures(zoo.passes(errors, reached=False), warnings) == []


def test_pass_rates_count_failed_joints_whose_every_failure_is_named(zoo):
    base = {"method": "sparsefric", "error": "", "reached": True, "wall_s": 1.0,
            "silent": [], **{f"ok_{k}": True for k in ("static", "breakaway", "I", "sigma0",
                                                        "test")}}
    rows = [{**base, "joint": 0, "pass": True, "unnamed": []},
            {**base, "joint": 1, "pass": False, "ok_I": False, "unnamed": []},
            {**base, "joint": 2, "pass": False, "ok_I": False, "unnamed": ["I"]}]
    table = zoo.pass_rates(rows).iloc[0]
    assert table["pass"] == "1/3" and table["failed, every failure named"] == 1


def test_a_coulomb_error_beyond_half_is_a_catastrophe_a_warning_must_name(zoo):
    errors = {"I": 1.0, "f_c": 51.4, "sigma0": 0.1, "sigma1": 385.0, "static": 0.5,
              "breakaway": -0.2}
    assert zoo.catastrophes(errors, list(zoo.CATASTROPHE)) == ["f_c", "sigma1"]
    assert zoo.named("f_c", ["the Coulomb level f_c = 6.156 N·m is extrapolated: …"])
    assert not zoo.named("f_c", ["the Stribeck velocity Ω_s is poorly determined"])


def test_inclusion_scoring_counts_true_terms_the_data_reach_and_spurious_ones(zoo):
    """Fixed-seed joint 2: viscous q̇ and q̇³, Coulomb, no Stribeck rise. A true term is scored
    where its torque at the fastest speed exceeds the noise; a rise of any exponent is
    spurious; single exponents and viscous powers p ≥ 2 are left to their family rows."""
    import importlib

    import pandas as pd

    coverage = importlib.import_module("interval_coverage")
    spec = zoo.draw_joint(2024, 2)
    data = zoo.simulate_joint(spec)
    faster = ["faster-than-linear viscous term, any power",
              "2 faster-than-linear viscous terms, any power"]
    inclusion = pd.DataFrame({
        "term": ["qd", "qd^3", "qd^5", "sign(qd)", "sign(qd)*exp(-|qd/Ws|^1)",
                 "Stribeck rise, any delta", *faster],
        "kind": ["viscous", "viscous", "viscous", "coulomb", "stribeck", "stribeck_family",
                 "viscous_family", "viscous_family"],
        "final": [1.0, 0.55, 0.45, 1.0, 0.3, 0.3, 0.85, 0.3]})
    rows = pd.DataFrame(coverage.inclusion_rows(spec, data, inclusion)).set_index("term")
    # q̇³ and q̇⁵ share the resamples: scored as the family (the truth has one power p ≥ 2)
    assert list(rows.index) == ["qd", "sign(qd)", "Stribeck rise, any delta", *faster]
    assert rows.true.tolist() == [True, True, False, True, False]
    assert rows.loc["qd", "reached"] and rows.loc["sign(qd)", "reached"]
    assert rows.loc[faster[0], "reached"]
    text = coverage.inclusion_summary(rows.reset_index())
    assert "kept by ≥ 90% of the resamples: 2 of 3" in text and f"2:{faster[0]} 0.85" in text
    assert "no spurious term above 20%: 0 of 1" in text and f"2:{faster[1]} 0.30" in text
    assert "2:Stribeck rise, any delta 0.30" in text
