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
