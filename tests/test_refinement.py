"""The refinement's rounds: where they start, when they stop, what they keep."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from sparsefric import SparseFric
from sparsefric.simulate import EXAMPLE_TRUTH, Sensors, paper_experiment
from sparsefric.steps import refinement
from sparsefric.steps.iterations import IterationResult, IterationSettings, Structure


def _structure(*deltas: float) -> Structure:
    return Structure((1,), deltas, 0.0, "revolute")


def _scripted(monkeypatch, rounds: list[tuple[Structure, float, bool]]) -> list:
    """Make each round return the next (structure, check error, admissible) of ``rounds``;
    returns the list of the runs each round started from."""
    started_from = []
    script = iter(rounds)

    def fake_round(previous, *_args):
        started_from.append(previous)
        new, error, admissible = next(script)
        return f"table {len(started_from)}", new, IterationResult(
            params=None, error=error, violations=() if admissible else ("σ1 < 0",))

    monkeypatch.setattr(refinement, "_round", fake_round)
    monkeypatch.setattr(refinement, "run_error", lambda run, _check: run.error)
    return started_from


def _refine(monkeypatch, patience: int, start: IterationResult):
    monkeypatch.setattr(refinement, "PATIENCE", patience)
    # the rounds alone: the merge of the kept model's rises is tested on its own below
    monkeypatch.setattr(refinement, "merge_rises", lambda out, *_args: out)
    return refinement.refine(start, _structure(0.5), _structure(0.5, 1.0, 1.5), None, None,
                             validate=None, settings=IterationSettings(), rule=None,
                             tau_norm=1.0)


def test_a_round_that_predicts_worse_still_leads_the_next(monkeypatch):
    """δ = 0.5 → (0.5, 1.0) predicts worse, but from its columns the next round reaches 1.5,
    which predicts better than the start: that is kept, and the rounds stop where the
    structure repeats."""
    start = IterationResult(params=None, error=10.0)
    started_from = _scripted(monkeypatch, [(_structure(0.5, 1.0), 12.0, True),
                                           (_structure(1.5), 8.0, True),
                                           (_structure(1.5), 8.5, True)])
    out = _refine(monkeypatch, 1, start)
    assert started_from[0] is start and started_from[1].error == 12.0  # the rejected round
    assert started_from[2] is out.best and out.best.error == 8.0
    assert out.runs == [out.best] and out.table == "table 2"


def test_without_patience_the_first_worse_round_ends_the_refinement(monkeypatch):
    start = IterationResult(params=None, error=10.0)
    started_from = _scripted(monkeypatch, [(_structure(0.5, 1.0), 12.0, True),
                                           (_structure(1.5), 8.0, True)])
    out = _refine(monkeypatch, 0, start)
    assert len(started_from) == 1 and out.best is start and not out.refined
    assert out.table == "table 1"  # the sweep that was tried is shown


@pytest.mark.parametrize("rounds", [
    [(_structure(0.5, 1.0), 12.0, True), (_structure(1.0), 11.0, True),
     (_structure(1.5), 8.0, True)],  # two worse in a row
    [(_structure(0.5, 1.0), 8.0, False), (_structure(1.5), 7.0, True)],  # inadmissible
])
def test_two_worse_rounds_or_an_inadmissible_one_stop_the_refinement(monkeypatch, rounds):
    start = IterationResult(params=None, error=10.0)
    started_from = _scripted(monkeypatch, rounds)
    out = _refine(monkeypatch, 1, start)
    assert len(started_from) == len(rounds) - 1 and out.best is start


def test_a_round_that_predicts_alike_is_kept_where_it_meets_the_steady_levels():
    """Within TIE_ERROR of the kept run's prediction error, the round whose static curve meets
    the constant-velocity levels clearly better replaces it; one that predicts worse does not."""
    from sparsefric.lugre import direction_mean_curve
    from sparsefric.selection import SteadyLevels

    truth = EXAMPLE_TRUTH.friction
    off = EXAMPLE_TRUTH.with_(coulomb=1.02 * EXAMPLE_TRUTH.coulomb).friction
    v = np.array([0.03, 0.127, 1.75])
    levels = SteadyLevels(v, direction_mean_curve(v, truth), np.full(3, 0.05), 3)
    kept, run = IterationResult(params=off, error=1.0), IterationResult(params=truth, error=1.0)
    alike = 10.0 * (1 + 0.5 * refinement.TIE_ERROR)
    assert refinement._improves(run, alike, 10.0, kept, levels)
    assert not refinement._improves(run, alike, 10.0, kept, None)
    assert not refinement._improves(run, 10.0 * (1 + 2 * refinement.TIE_ERROR), 10.0, kept,
                                    levels)
    assert not refinement._improves(kept, alike, 10.0, run, levels)  # meets them worse


def _rises(*deltas: float, error: float, admissible: bool = True) -> IterationResult:
    params = replace(EXAMPLE_TRUTH.friction, deltas=np.array(deltas),
                     amplitudes=np.full(len(deltas), 1.0))
    return IterationResult(params=params, error=error,
                           violations=() if admissible else ("σ1 < 0",))


def test_a_pair_of_rises_gives_way_to_the_one_rise_that_predicts_better(monkeypatch):
    """The kept model's two rises are re-iterated as one of each exponent of the pool: the
    admissible run that predicts best replaces the model where it predicts better (an
    inadmissible one that predicts better still is passed over), with the merge in the run's
    reason; where none predicts better, or the model has one rise, nothing changes."""
    monkeypatch.setattr(refinement, "run_error", lambda run, _check: run.error)
    pool = _structure(0.5, 1.0, 2.75, 4.0)

    def merge(kept: IterationResult, singles: list[IterationResult]) -> refinement.Refinement:
        calls = []
        monkeypatch.setattr(refinement, "_single_rises",
                            lambda best, *_args: calls.append(best) or singles)
        out = refinement.merge_rises(refinement.Refinement(kept), pool, None, None,
                                     IterationSettings(), 1.0)
        assert calls == ([kept] if len(kept.params.deltas) > 1 else [])
        return out

    pair = _rises(0.5, 4.0, error=10.0)
    out = merge(pair, [_rises(1.0, error=12.0), _rises(2.75, error=9.0),
                       _rises(4.0, error=8.0, admissible=False)])
    assert out.best.params.deltas.tolist() == [2.75] and out.merged == 2.75
    assert out.runs == [out.best] and out.refined
    assert out.best.reason.endswith("the 2 Stribeck terms merged into one (δ = 2.75), "
                                    "which predicts better")
    out = merge(_rises(0.5, 4.0, error=10.0), [_rises(2.75, error=10.5)])
    assert out.best.params.deltas.tolist() == [0.5, 4.0] and out.merged is None
    assert not out.refined
    single = _rises(1.5, error=10.0)
    assert merge(single, [_rises(2.75, error=1.0)]).best is single


@pytest.mark.slow
def test_the_noisy_benchmark_joint_reaches_the_true_stribeck_shape():
    """The benchmark joint noise-0.5 % (`benchmarks/run.py`): step 1 takes δ = 0.5; its first
    round reaches δ = (0.5, 4) and the next predicts worse. With no patience the refinement
    stopped there, the break-away +10.5 % and the static curve 0.8 % off; one round further it
    reaches the truth's δ = 1.5 (``DESIGN.md`` §69)."""
    noise = 0.005 * 83.7  # 0.5 % of the paper experiment's peak torque [N·m]
    data = paper_experiment(EXAMPLE_TRUTH, sensors=Sensors(position_noise=5e-6,
                                                            torque_noise=noise, seed=7))
    est = SparseFric().fit(data["train"], validate=data["validate"])
    assert [d for d, _ in est.model_.stribeck] == [1.5]
    assert est.model_.breakaway_torque(v_max=2.0) == pytest.approx(
        EXAMPLE_TRUTH.breakaway_torque(v_max=2.0), rel=0.02)
    v = np.geomspace(0.02, 2.1, 200)
    ref = EXAMPLE_TRUTH.static_friction(v)
    assert np.sqrt(np.mean((est.model_.static_friction(v) / ref - 1) ** 2)) < 0.005
