r"""Refinement: re-select the friction terms with the dynamic columns, iterate, repeat.

Not in the paper (``DESIGN.md`` §9). Step 1 sees the Stribeck region only where the joint slides
steadily, which robot moves rarely do at low speed; the transitions the static fit had to leave
out are explained by the LuGre columns m = σ0 z/g. With the converged z, the SR3 sweep and AICc of
:func:`sparsefric.selection.sweep` run over every friction candidate of the library (Ω_s started
at the converged value and a factor 3 either side); if the model so selected predicts the
validation data (else the training data) better after its own iterations, it replaces the
previous one. The columns carry the z of the previous model, whose g(q̇) still has the shape
step 1 gave it, so one round moves only part of the way; rounds repeat until the structure
repeats, :data:`PATIENCE` + 1 rounds in a row do not predict better, or ``max_rounds`` rounds.
Each round starts from the round before, kept or not; the best-predicting model is kept.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from sparsefric.feature_library import FeatureLibrary
from sparsefric.lugre import direction_mean_curve
from sparsefric.selection import STEADY_MARGIN, SelectionRule, SteadyLevels, SweepResult, sweep
from sparsefric.steps.iterations import (
    FrictionData,
    IterationResult,
    IterationSettings,
    Structure,
    dynamic_signals,
    multistart,
    outer_library,
    params_from_coefficients,
    run_error,
    run_iterations,
)

#: Rounds in a row that may predict no better before the refinement stops. A round that does
#: not predict better still carries its structure's g(q̇) into the columns of the next, which
#: can then reach a better structure: on the benchmark joint noise-0.5 % the path from step 1's
#: δ = 0.5 runs through δ = (0.5, 2), worse, to (1.0, 1.5) and the truth's δ = 1.5, where with
#: no patience it stopped at δ = (0.5, 4) and the break-away +10.5 % (``DESIGN.md`` §69).
PATIENCE = 1


@dataclass
class Refinement:
    """What the refinement did.

    Attributes
    ----------
    best : IterationResult
        The model kept (the input run if no round predicted better).
    table : SweepResult, optional
        The sweep of the last accepted round, else of the round that was tried.
    runs : list of IterationResult
        The iterations of every accepted round, in order (and last the merged model's).
    merged : float, optional
        The exponent δ of the one Stribeck term into which the rounds' terms were merged
        (:func:`merge_rises`); None where they were not.
    """

    best: IterationResult
    table: SweepResult | None = None
    runs: list[IterationResult] = field(default_factory=list)
    merged: float | None = None

    @property
    def refined(self) -> bool:
        """Whether a round replaced the first LuGre model."""
        return bool(self.runs)


def candidates(library: FeatureLibrary, tanh_k: float, axis: str) -> Structure:
    """Every friction candidate of the step-1 library as a :class:`Structure`."""
    terms = library.terms()
    return Structure(tuple(int(t.param) for t in terms if t.kind == "viscous"),
                     tuple(t.param for t in terms if t.kind == "stribeck"), tanh_k, axis)


def refine(best: IterationResult, structure: Structure, pool: Structure,  # noqa: PLR0913
           train: FrictionData, check: FrictionData, *, validate: FrictionData | None,
           settings: IterationSettings, rule: SelectionRule, tau_norm: float, max_rounds: int = 5,
           steady: SteadyLevels | None = None) -> Refinement:
    """Rounds of re-selection from the run ``best`` of ``structure``.

    ``pool`` holds every candidate; ``train`` the training friction torque; ``check`` the data a
    round must predict better (validation, else training); ``validate`` the validation data that
    join the AICc scoring; ``rule`` the scaling and AICc of the sweeps; ``steady`` the records'
    constant-velocity levels, which break the sweeps' ties of AICc. An inadmissible model
    stops the refinement at once, :data:`PATIENCE` + 1 rounds in a row that predict no better
    too.
    """
    out = Refinement(best)
    if pool == structure:
        return out
    before = run_error(best, check)
    current, misses = best, 0
    for _ in range(max_rounds):
        table, new, run = _round(current, pool, train, validate, settings, rule, tau_norm,
                                 steady)
        after = run_error(run, check)
        if _improves(run, after, before, out.best, steady):
            run.sigma0_init = out.best.sigma0_init
            out.best, out.table, misses = run, table, 0
            out.runs.append(run)
            before = after
        else:
            if out.table is None:  # nothing kept: show the sweep that was tried
                out.table = table
            misses += 1
            if misses > PATIENCE or not run.admissible:
                break
        if new == structure:
            break
        structure, current = new, run
    return merge_rises(out, pool, train, check, settings, tau_norm, steady)


def merge_rises(out: Refinement, pool: Structure, train: FrictionData, check: FrictionData,
                settings: IterationSettings, tau_norm: float,
                steady: SteadyLevels | None = None) -> Refinement:
    """``out`` with the Stribeck terms of its model merged into one, where that predicts
    ``check`` better (:func:`_improves`).

    A model with two or more Stribeck terms is re-iterated with one term instead, of each
    exponent δ of ``pool`` (amplitude the sum, Ω_s and the rest of the model as they were);
    the best-predicting admissible run replaces the model if it improves on it.

    The rounds judge only the structure their sweep selects, and the sweep's columns carry the
    bristle state z of the previous model: a pair of rises, the flattest δ = 0.5 with a steep
    one, then fits better than any single rise, whose columns were built with the pair's z.
    Such pairs came out on 20 zoo fits of one-rise truths (seven seeds, 280 joints), 15 with
    δ = 0.5, and their break-away torques ran high (median +7.8 %): the flat rise keeps rising
    below the slowest steady speed. Re-iterated with its own z, the single rise predicts the
    validation records better on some of them: a run-time zoo joint (truth δ 2.72) came out
    with δ = (0.5, 4) and the break-away +8.6 %; merged into δ = 2.75 it predicts the
    validation torque 8 % better and the break-away is +1.4 % (``DESIGN.md`` §93).
    """
    best = out.best
    if len(best.params.deltas) < 2:
        return out
    runs = [r for r in _single_rises(best, pool, train, settings, tau_norm) if r.admissible]
    if not runs:
        return out
    errors = [run_error(r, check) for r in runs]
    i = min(range(len(runs)), key=lambda k: errors[k] if math.isfinite(errors[k]) else math.inf)
    run = runs[i]
    if not _improves(run, errors[i], run_error(best, check), best, steady):
        return out
    delta = float(run.params.deltas[0])
    run.sigma0_init = best.sigma0_init
    run.reason += (f"; the {len(best.params.deltas)} Stribeck terms merged into one "
                   f"(δ = {delta:g}), which predicts better")
    out.best, out.merged = run, delta
    out.runs.append(run)
    return out


def _single_rises(best: IterationResult, pool: Structure, train: FrictionData,
                  settings: IterationSettings, tau_norm: float) -> list[IterationResult]:
    """The iterations of ``best``'s model with one Stribeck term of each exponent of ``pool``
    (amplitude the sum of its terms'), side by side on threads."""
    p = best.params
    powers = tuple(int(x) for x in p.powers)
    starts = [replace(p, deltas=np.array([d]), amplitudes=np.array([p.amplitudes.sum()]))
              for d in pool.deltas]
    structures = [Structure(powers, (d,), pool.tanh_k, pool.axis) for d in pool.deltas]
    return multistart(starts, structures, train.with_rigid(best.rigid), settings, tau_norm)


#: Relative difference of two rounds' prediction errors within which they predict alike: the
#: transients dominate the error, and a static curve that meets the steady levels moves it by
#: less (``DESIGN.md`` §89: a missing 0.13 q̇ changed it by 0.05 %).
TIE_ERROR = 1e-3


def _improves(run: IterationResult, after: float, before: float, kept: IterationResult,
              steady: SteadyLevels | None) -> bool:
    """Whether the admissible ``run`` replaces ``kept``: its prediction error ``after`` is
    lower than ``before``, or within :data:`TIE_ERROR` of it with a static curve that meets
    the ``steady`` levels better by :data:`~sparsefric.selection.STEADY_MARGIN` in χ²."""
    if not run.admissible:
        return False
    if after < before:
        return True
    if steady is None or not after < before * (1.0 + TIE_ERROR):
        return False
    misfit = [steady.misfit(direction_mean_curve(steady.velocity, r.params)) for r in (run, kept)]
    return misfit[0] < misfit[1] - STEADY_MARGIN


def _round(previous: IterationResult, pool: Structure, train: FrictionData,
           validate: FrictionData | None, settings: IterationSettings, rule: SelectionRule,
           tau_norm: float, steady: SteadyLevels | None = None
           ) -> tuple[SweepResult, Structure, IterationResult]:
    """One refinement round from the run ``previous``: the sweep, its structure and iterations.

    Ω_s stays within what the training sliding samples resolve (``train.theta_bounds``): with
    every sample in the columns, the stops would let it fall to the differentiation noise.
    """
    p = previous.params
    train = train.with_rigid(previous.rigid)
    x = dynamic_signals(p, train)
    scored = None
    if validate is not None:
        validate = validate.with_rigid(previous.rigid)
        scored = (dynamic_signals(p, validate), validate.tau_c)
    table = sweep(outer_library(pool), x, train.tau_c, validate=scored,
                  omega_starts=(p.stribeck_velocity / 3, p.stribeck_velocity,
                                3 * p.stribeck_velocity),
                  nu=settings.nu, rule=rule, keep_kinds=("coulomb", "zdot"),
                  theta_bounds=train.theta_bounds, steady=steady)
    chosen = table.best
    n_v = len(pool.powers)
    keep = chosen.support.copy()
    keep[n_v] = True  # the Coulomb level stays (g > 0)
    new = Structure(tuple(pw for pw, k in zip(pool.powers, keep[:n_v], strict=True) if k),
                    tuple(d for d, k in zip(pool.deltas, keep[n_v + 1:-1], strict=True) if k),
                    pool.tanh_k, pool.axis)
    coef = np.r_[chosen.coef[:n_v][keep[:n_v]], chosen.coef[n_v],
                 chosen.coef[n_v + 1:-1][keep[n_v + 1:-1]], p.sigma1]
    start = params_from_coefficients(p, new, coef, chosen.omega)
    return table, new, run_iterations(start, new, train, settings, tau_norm)
