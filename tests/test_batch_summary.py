"""The batch summary from joint results (no identification): outlier flags that catch a
break-away 1.5× the fleet's, the figures of the fleet, percentages, kept joints."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from sparsefric.batch import JointResult
from sparsefric.fleet import (
    count_text,
    flag_reasons,
    ratio_to_others,
    robust_z,
    summary_table,
    write_summary,
)
from sparsefric.model import JointModel

from .conftest import EXAMPLE


def _joint(name: str, coulomb: float, sigma0: float = 1.5e4, earlier: bool = False,
           seconds: float = 12.0) -> JointResult:
    truth = JointModel.load(EXAMPLE / "truth.json")
    model = truth.with_(coulomb=coulomb, sigma0=sigma0)
    summary = {"model": model.to_dict(), "converged": True,
               "terms": [{"term": "qdd", "active": True}],
               "data": {"train": [{"name": "x.csv", "samples": 100, "dt": 1e-3,
                                   "max_abs_qd": 2.0}]},
               "metrics": [{"dataset": "train", "model": "dynamic", "n": 100, "rms": 0.3,
                            "relative_rms": 0.03}]}
    return JointResult(name, "ok", summary=summary, seconds=seconds, earlier=earlier)


def test_ratio_to_the_other_joints():
    r = ratio_to_others(np.array([10.0, 12.0, 15.0, np.nan]))
    assert r[2] == pytest.approx(15 / 11) and math.isnan(r[3])
    assert np.all(np.isnan(ratio_to_others(np.array([1.0, 1.5]))))


def test_a_break_away_one_and_a_half_times_the_fleets_is_flagged():
    """Four joints that scatter by ±12 % and one whose break-away is 1.5× their median: flagged
    by its ratio to the others' median, whatever the z-score (which depends on the scatter)."""
    coulombs = [16.0, 18.0, 20.5, 17.0]
    fleet = [_joint(f"j{i}", c) for i, c in enumerate(coulombs)]
    med = np.median([c + 7.0 for c in coulombs])  # break-away = f_c + A (A = 7 N·m)
    odd = _joint("odd", 1.5 * med - 7.0)
    table = summary_table([*fleet, odd]).set_index("joint")
    assert table.loc["odd", "ratio_breakaway"] == pytest.approx(1.5, rel=0.05)
    assert "breakaway" in table.loc["odd", "flagged"].split(";")
    assert "break-away torque 1.5× the others' median" in flag_reasons(table.loc["odd"])
    assert (table.drop(index="odd")["flagged"] == "").all()


def test_summary_page_draws_the_fleet_and_shows_percentages(tmp_path):
    results = [_joint("a", 18.0, earlier=True, seconds=31.5), _joint("b", 17.0),
               _joint("c", 19.0), _joint("d", 30.0),
               JointResult("broken", "failed", "x.csv: no column 'tau'")]
    table = summary_table(results)
    assert list(table["run"]) == ["earlier", "this", "this", "this", "this"]
    assert count_text(table) == "1 failed, 4 ok (1 kept from an earlier run)"
    write_summary(table, tmp_path)
    page = (tmp_path / "summary.html").read_text(encoding="utf-8")
    ids = re.findall(r'<svg class="figure" id="([^"]+)"', page)
    assert ids == ["fig-fleet-friction-revolute", "fig-fleet-strips-revolute"]
    strips = page[page.index('id="fig-fleet-strips-revolute"'):]
    assert "stands out" in strips and "break-away torque [N·m]" in strips
    assert "<th>train ‖τ − τ̂‖/‖τ‖ [%]</th>" in page and "<td>3</td>" in page
    assert '<div class="scroll"><table>' in page
    csv = (tmp_path / "summary.csv").read_text()
    assert "_model" not in csv and "31.5" in csv


def test_two_joints_apart_by_half_are_not_judged_without_a_fleet():
    table = summary_table([_joint("a", 18.0), _joint("b", 30.0)])
    assert (table["flagged"] == "").all() and table["ratio_breakaway"].isna().all()


def test_joints_that_agree_exactly_give_no_runaway_z_score():
    """Four joints identified from the same data (equal to rounding) and a fifth 16 % above:
    the spread is floored at 1 % of the median, so the z-score stays a few units (not 1e12),
    and a difference of 0.1 % is not an outlier at all."""
    same = 21.162261273556872 * (1 + np.array([0.0, 1e-15, -1e-15, 2e-15]))
    for odd in (1.16, 0.84):
        z = robust_z(np.append(same, odd * same[0]))
        assert 3.5 < abs(z[4]) < 6 and np.sign(z[4]) == np.sign(odd - 1)
        assert np.all(np.abs(z[:4]) < 1e-6)
    z = robust_z(np.append(same, 1.001 * same[0]))
    assert abs(z[4]) < 0.2
    z = robust_z(np.append(np.full(4, 21.0), 21.021))  # exactly equal: the mean-deviation case
    assert abs(z[4]) < 0.2


def test_a_fleet_that_agrees_flags_no_one_for_a_tiny_difference():
    fleet = [_joint(f"j{i}", 18.0) for i in range(4)]
    table = summary_table([*fleet, _joint("odd", 18.0 * 1.002)]).set_index("joint")
    assert abs(table.loc["odd", "z_coulomb"]) < 0.5
    assert (table["flagged"] == "").all()
    z = robust_z(np.array([10.0, 10.5, 9.8, 10.2, 30.0]))  # a scattered fleet: MAD 0.3 rules
    assert z[4] == pytest.approx(0.6745 * 19.8 / 0.3, rel=1e-9)
