"""The identification: steps 0–3 composed, from trajectories and the estimator's parameters.

>>> result, intervals = fit_joint(train_trajectories, validation_trajectories,
...                                settings({"axis": "prismatic"}))

:func:`settings` checks the parameters (:data:`DEFAULTS` for those left out); :func:`identify`
composes the steps, each of which has its own module: differentiation
(:mod:`sparsefric.preprocessing`), the static structure (:mod:`sparsefric.steps.static`), the
LuGre iterations (:mod:`sparsefric.steps.iterations`), the re-selection with the dynamic columns
(:mod:`sparsefric.steps.refinement`) and the checks of the data and of the fit
(:mod:`sparsefric.diagnostics`), and :func:`fit_joint` adds the intervals. The scikit-learn
estimator on top is :class:`sparsefric.estimator.SparseFric`; the command line and the batch
workers call :func:`fit_joint` directly, without importing scikit-learn (≈ 0.3 s of
start-up).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits
from tqdm import tqdm  # console bars: tqdm.auto warns in Jupyter without ipywidgets

from sparsefric import __version__
from sparsefric.data import Trajectory
from sparsefric.data_checks import (
    Finding,
    check_units,
    diagnose_prepared,
    errors,
    forces_static,
    named,
    speed_range_of,
)
from sparsefric.diagnostics import (
    check_collinearity,
    check_inertia,
    check_offset,
    check_torque_timing,
)
from sparsefric.errors import OptionError, SparsefricError
from sparsefric.feature_library import DEFAULT_DELTAS, FeatureLibrary, static_library
from sparsefric.hac import paired_gain
from sparsefric.lugre import FrictionParams, direction_mean_curve
from sparsefric.model import JointModel, units
from sparsefric.optimizers.sr3 import G0_LIMIT
from sparsefric.options import (
    AIC_DATA,
    AIC_DOMAINS,
    AXES,
    DEFAULT_RESAMPLES,
    DIFFERENTIATION,
    HOLD_OUT_MAX,
    INNER_RULES,
    LIBRARIES,
    MIN_RESAMPLES,
    OMEGA_STEPS,
    OUTER_STOPS,
    SIGN_MODELS,
    TORQUE_TIMINGS,
    UNCERTAINTY,
    check_choice,
    check_exponents,
    check_flag,
    check_fraction,
    check_integer,
    check_positive,
    check_positive_tuple,
    check_torque_delay,
)
from sparsefric.preprocessing import Prepared, Preprocessor
from sparsefric.recipes import DEFAULT_OMEGA_STARTS, resolve
from sparsefric.result import IdentificationResult, LuGreStage
from sparsefric.segments import hold_out
from sparsefric.selection import DEFAULT_RULE, SelectionRule, SteadyLevels
from sparsefric.steps import checks
from sparsefric.steps.iterations import (
    DEFAULT_SIGMA0_STARTS,
    FrictionData,
    IterationResult,
    IterationSettings,
    Structure,
    default_sigma0_starts,
    multistart,
    run_iterations,
    run_residual,
    select_run,
)
from sparsefric.steps.powers import drop_powers, dropped_note
from sparsefric.steps.prediction import on_grid, prediction_fit, start_refit
from sparsefric.steps.refinement import Refinement, candidates, refine
from sparsefric.steps.static import (
    RIGID_KINDS,
    StaticFit,
    StaticTerms,
    first_outer,
    fit_static,
    refit_terms,
)
from sparsefric.threads import ahead
from sparsefric.uncertainty import ParameterUncertainty, with_uncertainty
from sparsefric.validation import relative_error

__all__ = ["DEFAULTS", "DEFAULT_OMEGA_STARTS", "DEFAULT_SIGMA0_STARTS", "Settings",
           "default_sigma0_starts", "fit_joint", "identify", "settings"]



@dataclass(frozen=True)
class Settings:
    """The estimator's parameters, checked, as the steps read them (see :class:`SparseFric`)."""

    axis: str
    sign_model: str
    tanh_k: float  #: K [s/rad] of s = tanh(K q̇); 0 for model A's sign(q̇)
    library_name: str
    n_viscous: int
    deltas: tuple[float, ...]
    offset: bool
    omega_starts: tuple[float, ...]
    thresholds: np.ndarray | None
    aic_parts: int | None
    sigma0_starts: tuple[float, ...] | None
    static_only: bool
    preprocessor: Preprocessor
    iterations: IterationSettings
    refine: bool
    max_refinements: int
    pool_validation: bool = False
    validation_share: float = 0.0
    recipe: str = "sparsefric"
    sliding_window: bool = True
    aic_data: str = "training+validation"
    rule: SelectionRule = DEFAULT_RULE
    #: the friction candidates cut to the Coulomb level: the data slide at one speed (§59)
    coulomb_only: bool = False
    uncertainty: str = "fast"  #: the intervals' method (:data:`~sparsefric.options.UNCERTAINTY`)
    resamples: int = DEFAULT_RESAMPLES  #: the bootstrap's resamples
    random_state: int = 0  #: the seed of the bootstrap's block draws
    progress: bool = False  #: progress bars on stderr
    #: the warnings of the fitted model's checks, off in the bootstrap's refits, which keep no
    #: findings (the torque-timing scan alone costs ~1 s on a 200k-sample record)
    model_warnings: bool = True

    def library(self, offset: bool | None = None) -> FeatureLibrary:
        """The step-1 library; ``offset`` overrides the choice of an offset column."""
        library = static_library(self.axis, name=self.library_name, n_viscous=self.n_viscous,
                                 deltas=self.deltas, tanh_k=self.tanh_k,
                                 offset=self.offset if offset is None else offset)
        if not self.coulomb_only:
            return library
        return library.select([t.kind not in ("viscous", "stribeck")
                               for t in library.terms()])


#: The estimator's parameters with their defaults, by name (their meaning: the docstring of
#: :class:`~sparsefric.estimator.SparseFric`, whose keyword defaults are these).
DEFAULTS: dict[str, Any] = {
    "axis": "revolute", "model": "A", "tanh_k": 150.0, "library": "full", "n_viscous": 5,
    "deltas": DEFAULT_DELTAS, "offset": False, "nu": 0.01, "thresholds": None,
    "aic_parts": None, "omega_starts": None, "sigma0_starts": None, "static_only": False,
    "differentiation": "tv", "regularization": None, "cutoff_hz": None,
    "presliding_distance": None, "max_outer": 30, "max_inner": 50, "tol": 1e-3, "refine": None,
    "max_refinements": 5, "refit_rigid": None, "pool_validation": False,
    "validation_share": None, "uncertainty": "fast", "resamples": DEFAULT_RESAMPLES,
    "random_state": 0, "progress": False, "recipe": "sparsefric",
    "polish": None, "sliding_window": None, "scale_columns": None, "lambdas": None,
    "aic_data": None, "aic_domain": None, "inner_rule": None, "outer_stop": None,
    "tv_weight": None, "omega_step": None, "torque_timing": "instant", "torque_delay": 0.0,
}


def settings(params: Mapping[str, Any]) -> Settings:
    """The estimator's parameters ``params`` (:data:`DEFAULTS` for those left out), checked
    (:class:`~sparsefric.errors.OptionError` names the bad one), with the options left at None
    taken from the recipe (:func:`sparsefric.recipes.resolve`).
    """
    if unknown := sorted(set(params) - set(DEFAULTS)):
        raise OptionError(unknown[0], "is not a parameter of the identification")
    given = {**DEFAULTS, **params}
    p = resolve(given["recipe"], given)
    sign = check_choice("model", p["model"], SIGN_MODELS)
    optional = {name: None if p[name] is None else check_positive(name, p[name])
                for name in ("regularization", "cutoff_hz", "presliding_distance",
                             "tv_weight")}
    if optional["tv_weight"] is not None and optional["regularization"] is not None:
        raise OptionError("tv_weight", "and regularization both set the TV weight: "
                                       "give one of them")
    nu = check_positive("nu", p["nu"])
    return Settings(
        axis=check_choice("axis", p["axis"], AXES), sign_model=sign,
        tanh_k=check_positive("tanh_k", p["tanh_k"]) if sign == "B" else 0.0,
        library_name=check_choice("library", p["library"], LIBRARIES),
        n_viscous=check_integer("n_viscous", p["n_viscous"], 1),
        deltas=check_exponents("deltas", p["deltas"]), offset=check_flag("offset", p["offset"]),
        omega_starts=check_positive_tuple("omega_starts", p["omega_starts"]),
        thresholds=_thresholds(p["thresholds"], p["lambdas"], nu),
        aic_parts=None if p["aic_parts"] is None else check_integer(
            "aic_parts", p["aic_parts"], 10),
        sigma0_starts=None if p["sigma0_starts"] is None else check_positive_tuple(
            "sigma0_starts", p["sigma0_starts"]),
        static_only=check_flag("static_only", p["static_only"]),
        preprocessor=Preprocessor(
            check_choice("differentiation", p["differentiation"], DIFFERENTIATION),
            **optional, torque_timing=check_choice("torque_timing", p["torque_timing"],
                                                   TORQUE_TIMINGS),
            torque_delay=check_torque_delay(p["torque_delay"])),
        iterations=IterationSettings(
            nu=nu, max_outer=check_integer("max_outer", p["max_outer"], 1),
            max_inner=check_integer("max_inner", p["max_inner"], 1),
            tol=check_positive("tol", p["tol"]),
            refit_rigid=check_flag("refit_rigid", p["refit_rigid"]),
            polish=check_flag("polish", p["polish"]),
            inner_rule=check_choice("inner_rule", p["inner_rule"], INNER_RULES),
            omega_step=check_choice("omega_step", p["omega_step"], OMEGA_STEPS),
            g_tol=IterationSettings.g_tol if check_choice(
                "outer_stop", p["outer_stop"], OUTER_STOPS) == "sigma0+g" else np.inf),
        refine=check_flag("refine", p["refine"]),
        max_refinements=check_integer("max_refinements", p["max_refinements"], 1),
        pool_validation=check_flag("pool_validation", p["pool_validation"]),
        recipe=p["recipe"],
        validation_share=check_fraction("validation_share", p["validation_share"],
                                        HOLD_OUT_MAX),
        sliding_window=check_flag("sliding_window", p["sliding_window"]),
        aic_data=check_choice("aic_data", p["aic_data"], AIC_DATA),
        rule=SelectionRule(p["aic_parts"], check_choice(
            "aic_domain", p["aic_domain"], AIC_DOMAINS) == "literal",
            check_flag("scale_columns", p["scale_columns"]), p["omega_step"]),
        uncertainty=check_choice("uncertainty", p["uncertainty"], UNCERTAINTY),
        resamples=check_integer("resamples", p["resamples"], MIN_RESAMPLES),
        random_state=check_integer("random_state", p["random_state"]),
        progress=check_flag("progress", p["progress"]))


def fit_joint(train: list[Trajectory], validate: list[Trajectory] | None, s: Settings
              ) -> tuple[IdentificationResult, ParameterUncertainty | None]:
    """Identify the joint from ``train`` (and ``validate``) with the checked parameters ``s``
    (:func:`settings`): :func:`identify` and the intervals of
    :func:`~sparsefric.uncertainty.with_uncertainty`, which it also records on the result.

    What :meth:`SparseFric.fit <sparsefric.estimator.SparseFric.fit>` does after converting its
    inputs to trajectories; the command line and the batch workers call it directly.
    """
    n_starts = len(s.sigma0_starts or DEFAULT_SIGMA0_STARTS)
    steps = 2 if s.static_only else 2 + n_starts + int(s.refine)
    # The regressions are many small BLAS calls: threads only add contention.
    with threadpool_limits(1), tqdm(total=steps, disable=not s.progress, leave=False,
                                    unit="step", desc="differentiation") as bar:
        def advance(description: str) -> None:
            bar.update()
            bar.set_description(description)

        result = identify(train, validate, s, advance)
    bootstrap = {"resamples": s.resamples, "seed": s.random_state} \
        if s.uncertainty == "bootstrap" else {}
    unc = with_uncertainty(result, train, validate, s, s.uncertainty, progress=s.progress,
                           **bootstrap)
    return result, unc


def _thresholds(thresholds: object, lambdas: object, nu: float) -> np.ndarray | None:
    """The sweep's thresholds: as given, or √(2νλ) of the λ grid ``lambdas``; None: automatic."""
    if thresholds is not None and lambdas is not None:
        raise OptionError("lambdas", "and thresholds both set the sweep's grid: give one of them")
    if lambdas is not None:
        return np.sqrt(2 * nu * np.asarray(check_positive_tuple("lambdas", lambdas)))
    if thresholds is not None:
        return np.asarray(check_positive_tuple("thresholds", thresholds), dtype=float)
    return None


# ---------------------------------------------------------------------- the composition
def identify(train: list[Trajectory], validate: list[Trajectory] | None, s: Settings,
             progress: Callable[[str], None] = lambda description: None
             ) -> IdentificationResult:
    """Steps 0–3 on the training (and validation) trajectories with the settings ``s``.

    ``progress(description)`` is called as each step finishes, with the next step's name.

    Where validation records are given and the model misses the constant-velocity friction
    of any record (:func:`~sparsefric.steps.checks.cve_misses`), the identification runs
    again with the validation records fitted, and that model is kept if it misses fewer
    constant-velocity levels of all the records: a missed validation record shows a regime
    the training records do not (``DESIGN.md`` §70), and a missed training level a term the
    training records alone could not tell from the ones kept (§91). So too where the LuGre
    model fitted on the training records alone, before its refits, missed a validation
    record (or held-out block) that the model returned meets
    (:attr:`~sparsefric.result.IdentificationResult.validation_misses`): a refit, on every
    record above all, can meet a level by bending the kept structure towards it, and the
    identification with the validation records fitted is kept if it misses no more levels
    (§115). Where that second identification ends in an error (an inadmissible
    model), the first stands with its warnings.
    """
    result = _identify(train, validate, s, progress)
    if any(f.code == "validation_pooled" for f in result.findings):
        return result
    miss = checks.cve_misses(result.model, result.cve)
    missed = _missed_records(result.cve, miss) if validate else []
    refitted = not missed and bool(result.validation_misses)
    if refitted:
        missed = result.validation_misses
    if not missed:
        return result
    try:
        pooled = _identify(train, validate, s, lambda description: None, pool=True)
    except SparsefricError:
        # a try to do better, not the identification asked for: fixed-seed zoo joint 26 with
        # other sensor noise, static only, was refused whole because the pooled fit had no
        # dry friction left, though the training model was admissible (f_c within 2 %)
        return result
    before, after = int(miss.sum()), int(checks.cve_misses(pooled.model, pooled.cve).sum())
    if not (after < before or refitted and after <= before):
        return result
    pooled.findings.append(Finding("warning", "validation_pooled",
                                   _pooled_message(missed, before, after, refitted)))
    return pooled


def _pooled_message(missed: list[str], before: int, after: int, refitted: bool) -> str:
    """The warning of a model identified with the validation records fitted: the ``missed``
    records, the levels of all records missed ``before`` and ``after``; ``refitted``: the
    records were missed by the training fit alone, before its refits (on the training records
    or on every record), and ``before`` counts the refitted model's misses."""
    records = f"record{'s' * (len(missed) > 1)} {', '.join(missed)}"
    levels = f"{before} speed level{'s' * (before != 1)} of all records"
    told = (f"alone missed the constant-velocity friction of {records}, and the model "
            f"refitted from it misses {levels}" if refitted
            else f"missed the constant-velocity friction of {records} ({levels} missed)")
    return (f"the model fitted on the training records {told}; fitted with the validation "
            f"records too, it misses {after}: AICc scores the union in-sample, so judge the "
            "model on test data")


def _missed_records(cve: pd.DataFrame, miss: np.ndarray) -> list[str]:
    """The records (pieces of them, where cut at jumps) of the CVE rows ``miss`` marks."""
    return sorted(set(cve["trajectory"].astype(str)[miss]))


def _identify(train: list[Trajectory], validate: list[Trajectory] | None, s: Settings,
              progress: Callable[[str], None], pool: bool = False) -> IdentificationResult:
    """:func:`identify` once; ``pool``: fit the validation records with the training ones."""
    original, given = train, validate or []
    whole, held_out = None, []
    if not validate and s.validation_share > 0:
        whole, train, validate = _prepare_held_out(train, s.validation_share, s.preprocessor)
        held_out = [tr.name for tr in validate]
    prep = s.preprocessor.prepare(train, remember=True)
    findings = _data_findings(prep, s.library(), s.axis, whole)
    val = s.preprocessor.prepare(validate, remember=True) if validate else None
    if given:
        findings += _validation_units(val, s.axis)
    findings = speed_range_with(findings, prep, val, s.axis)
    slower = _slower_validation(prep, val) if s.pool_validation and val is not None else None
    if val is not None and (pool or slower is not None):
        if slower is not None:
            findings.append(slower)
        prep = whole if whole is not None else prep.join(val)
        val = None
    s, findings = _one_speed(s, prep, findings)
    library = s.library()
    progress("step 1: λ sweep")
    static = fit_static(prep, val, library, omega_starts=s.omega_starts,
                        nu=s.iterations.nu, thresholds=s.thresholds, rule=s.rule,
                        sliding_window=s.sliding_window, aic_data=s.aic_data)
    if held_out and val is not None:
        static.sweep.validation_source = _held_out_source(static.sweep.validation_source,
                                                          len(held_out), s.validation_share)
    progress("steps 2–3: LuGre iterations")
    static_model = static.terms.joint_model(s.axis, s.tanh_k).with_(
        extra=_provenance(static, s))
    result = IdentificationResult(static_model, static_model, library, static.sweep,
                                  static.window, s.preprocessor, pd.DataFrame(prep.params))
    result.held_out = held_out
    result.findings = [Finding("warning", "loading", note)
                        for tr in [*original, *given] for note in tr.notes] + findings
    result.findings += [Finding("warning", "loading", note)  # records cut, κ at a grid end
                        for part in (prep, val) if part is not None for note in part.notes]
    result.findings += _fit_findings(result, static, prep, s)
    # a record with held-out blocks is checked whole: its steady moves pair forward and
    # backward within it, not within the parts the blocks cut it into
    checked = [whole] if whole is not None else [p for p in (prep, val) if p is not None]
    fitted = None
    if s.static_only or forces_static(findings):
        if not s.static_only:
            result.convergence_reason = "static model only: the data cannot identify σ0, σ1"
    else:
        fitted = _fit_lugre(result, static, prep, val, s, progress, whole, checked)
    if whole is not None:
        _refit_static_whole(result, static, whole, s)
    if fitted is None:
        _keep_dry_level(result, static, prep, s, checks.fastest_speed(checked, 0.999))
    _check_model(result, checked, fitted, s.model_warnings,
                 (s.deltas, static.theta_bounds))
    return result


def _validation_units(val: Prepared, axis: str) -> list[Finding]:
    """:func:`~sparsefric.data_checks.check_units` of the validation files, each finding led
    by "validation data"; an error is raised.

    Their speeds choose the structure and join the final refits, and the training checks do
    not see them: data/example's validation records in degrees, or in counts of a 2^17-count
    encoder, ran with no unit warning, and the models missed the steady friction of every
    training level (−46 % at 2.13 rad/s)."""
    used = any(p.get("method") == "given" for p in val.params)
    found = named(check_units(val, axis, given=used), "validation data")
    if bad := errors(found):
        raise SparsefricError(bad[0].message)
    return found


def _held_out_source(source: str, blocks: int, share: float) -> str:
    """The data AICc scored, ``source`` (``"training + validation"``, or ``"validation"``
    alone under ``aic_data="validation"``), with the validation data named as the ``blocks``
    held out of the training records, ``share`` [-] of their samples: no validation file was
    given."""
    return source.replace("validation", f"held-out ({blocks} blocks, {100 * share:.0f} % of "
                                        "the samples)")


def speed_range_with(findings: list[Finding], prep: Prepared, val: Prepared | None,
                     axis: str) -> list[Finding]:
    """``findings`` with the training records' ``narrow_velocity_range`` judged again on the
    training and validation records together (:func:`~sparsefric.data_checks.speed_range_of`:
    their speeds and steady levels).

    The validation records choose the structure and join the final refits, so a Stribeck rise
    they reach can be identified. On zoo seeds 2024 and 2059559733 the training speeds alone
    drew the warning that "a Stribeck term cannot be identified" on 25 joints; with the
    validation records' speeds 13 lose it, and on 7 of their 10 joints that reach the Stribeck
    region the break-away is within 2.1 % (``DESIGN.md`` §121). Where the union is still
    narrow, the finding names its range.
    """
    if val is None or not any(f.code == "narrow_velocity_range" for f in findings):
        return findings
    union = speed_range_of(prep.join(val), units(axis)["qd"])
    narrow = [f for f in union if f.code == "narrow_velocity_range"]
    return [g for f in findings for g in (narrow if f.code == "narrow_velocity_range" else [f])]


def _one_speed(s: Settings, prep: Prepared, findings: list[Finding]
               ) -> tuple[Settings, list[Finding]]:
    """``s`` with the Coulomb level as the only friction candidate where the data to fit slide
    at one speed (finding ``one_speed_level``), and the findings (that one dropped where pooled
    validation records brought other speeds).

    At one speed v, f_c sign(q̇), c₁q̇ and a Stribeck term are the same column up to scale; the
    ramps to and from it, a few percent of the samples, then decide how the level is split.
    On a 0.03 rad/s record of the 52k-sample joint of ``benchmarks/bench_core.py`` (truth f_c
    18 N·m, friction 23.8 N·m at that speed) the sweep kept 839 q̇ − 3.8e4 q̇³ − 1.3e6 q̇⁴ and no
    Coulomb level, g ≡ 0, which the admissibility check rejected with an error (``DESIGN.md``
    §59)."""
    if not any(f.code == "one_speed_level" for f in speed_range_of(prep)):
        return s, [f for f in findings if f.code != "one_speed_level"]
    return replace(s, coulomb_only=True), findings


def _prepare_held_out(train: list[Trajectory], share: float, preprocessor: Preprocessor
                      ) -> tuple[Prepared | None, list[Trajectory], list[Trajectory]]:
    """Training records given without validation data, prepared whole, and the training parts
    and validation blocks :func:`~sparsefric.segments.hold_out` cuts from its records, each
    set remembered as cuts of it (:meth:`Prepared.cut`): each record is differentiated once.

    The blocks are cut from the prepared records, not from those given: they are split at
    their jumps, and the torque alignment (``torque_delay``) drops samples at their ends.

    Returns
    -------
    whole : Prepared or None
        The records prepared whole; None where no block was held out.
    train, validate : list of Trajectory
        The training parts and the blocks; ``train`` itself and none where no block was held
        out (the records given are then the training set).
    """
    whole = preprocessor.prepare(train, remember=True)
    held = hold_out(whole.pieces, share)
    if not held.validate:
        return None, train, []
    preprocessor.remember(held.train, whole.cut(held.train_parts, held.train, whole.notes))
    preprocessor.remember(held.validate, whole.cut(held.validate_parts, held.validate))
    return whole, held.train, held.validate


def _refit_static_whole(result: IdentificationResult, static: StaticFit, whole: Prepared,
                        s: Settings) -> None:
    """The static model refitted, terms fixed, on the whole records (held-out blocks
    included), after the blocks have chosen the terms and scored it against the LuGre model.
    It stays on the denoised torque: without the bristle its fit on the sliding samples moved
    the rigid body the wrong way on the measured one (data/example: a_s −1.4 → −2.1 %).

    The refit is not taken where it predicts the whole records (every sample, stops
    included) worse than the model it refits. The sliding samples leave the speeds below the
    slowest of them open, and a Stribeck term may turn into a spike there: on two pieces of
    data/example with the blocks held out, Ω_s 0.18 → 0.087 rad/s and g(0) 19 → 123 N·m, a
    relative error of 1.08 over the training records (``DESIGN.md`` §56)."""
    terms = refit_terms(static, whole, s.iterations.nu)
    model = terms.joint_model(s.axis, s.tanh_k).with_(extra=_provenance(static, s))
    if whole.relative_error(model) > whole.relative_error(result.static_model):
        return
    if result.model is result.static_model:
        result.model = model
    result.static_model = model


def _keep_dry_level(result: IdentificationResult, static: StaticFit, prep: Prepared,
                    s: Settings, speed_max: float) -> None:
    """A static model to return with no dry friction left within the recorded speeds
    [rad/s], with the Coulomb column added to its terms, as the LuGre steps add it
    (:func:`~sparsefric.steps.static.first_outer`; finding ``coulomb_added``).

    Over two steady speeds a Stribeck term and c₁q̇ fit both levels exactly, and step 1 may
    select them without the Coulomb level: its rise then decays to g(q̇) = 0 below the fastest
    speed, which the admissibility check refuses with an error. Fixed-seed zoo joint 26 with
    other sensor noise (static only, trained at 0.127 and 2.13 rad/s) kept 2.97 N·m
    e^(−|q̇/0.167|^3.75) + 5.09 q̇ for the truth's 2.44 + 1.19 e^(−|q̇/0.052|^2.2) + 2.21 q̇ +
    0.42 q̇³ N·m, and the identification ended in that error. Kept only where the refit is
    admissible, so that a cause the data show (a move in one direction) still ends in the
    error that names it."""
    model, lost = result.model, checks.dry_level_lost(result.model, speed_max)
    if model is not result.static_model or lost is None:
        return
    terms = first_outer(static, prep, s.iterations.nu)
    added = terms.joint_model(s.axis, s.tanh_k).with_(extra=_provenance(static, s))
    if errors(checks.admissibility(added, speed_max)):
        return
    u = units(s.axis)
    result.model = result.static_model = added
    result.findings.append(Finding(
        "warning", "coulomb_added",
        f"the selected static model has no dry friction left at {lost:.4g} {u['qd']} (no "
        f"Coulomb level, its Stribeck terms decayed): a Coulomb level of {added.coulomb:.4g} "
        f"{u['tau']} was added to its terms and refitted; the records' speeds may not separate "
        "it from the other terms (see the constant-velocity points)"))


#: Validation records whose slowest steady speed is below this fraction of the training records'
#: are fitted with them: they hold a low-speed regime no model fitted on training can describe.
POOL_SPEED_RATIO = 0.5


def _slower_validation(prep: Prepared, val: Prepared) -> Finding | None:
    """A finding when the validation records slide steadily at speeds well below every
    training record (their information is then fitted, not only scored: ``DESIGN.md`` §24)."""
    train_slow = checks.slowest_steady_speed(checks.cve_of([prep]))
    val_slow = checks.slowest_steady_speed(checks.cve_of([val]))
    if not val_slow < POOL_SPEED_RATIO * train_slow:
        return None
    return Finding("warning", "validation_pooled",
                   f"the validation records slide steadily at {val_slow:.3g}, far below the "
                   f"slowest training speed {train_slow:.3g}: the low-speed (Stribeck) regime "
                   "they show is fitted with the training data and AICc scores the union "
                   "in-sample, so judge the model on test data")


def _check_model(result: IdentificationResult, prepared: list[Prepared],
                 fitted: tuple[IterationResult, FrictionData] | None, warn: bool,
                 ranges: tuple[Sequence[float], tuple[float, float]]) -> None:
    """The checks of :mod:`sparsefric.steps.checks` on the model to return; a LuGre model that
    is inadmissible gives way to the static one, an inadmissible static model is an error.
    Where neither is admissible, a fitted inertia below zero is first held at 0
    (:func:`_hold_inertia`). ``warn`` False: the checks that only add findings are skipped
    (the model and its CVE points are the same). ``ranges``: the library's Stribeck exponents
    and the bounds of ln Ω_s, where a parameter at an end is reported as such
    (:func:`~sparsefric.steps.checks.at_bounds`)."""
    speed_max = checks.fastest_speed(prepared, 0.999)
    if not any(not errors(checks.admissibility(m, speed_max))
               for m in (result.model, result.static_model)):
        _hold_inertia(result)
    admissibility = checks.admissibility(result.model, speed_max)
    if errors(admissibility) and result.model is not result.static_model:
        result.model = result.static_model
        result.findings.append(Finding(
            "warning", "lugre_inadmissible",
            f"{errors(admissibility)[0].message.replace('identified model', 'LuGre model')}, "
            "so model.json holds the static model and lugre_model.json the LuGre one"))
        admissibility = checks.admissibility(result.model, speed_max)
    if errors(admissibility):
        raise SparsefricError(_with_causes(errors(admissibility)[0].message, result.findings))
    model = result.model
    if bounded := _at_zero(model):
        result.convergence_reason += (f"; {' and '.join(bounded)} at the bound 0, which these "
                                      "data leave open (see the warnings)")
    at_end = checks.at_bounds(model, *ranges)
    if at_end:
        result.convergence_reason += (f"; {' and '.join(name for name, _ in at_end)} at the "
                                      "end of the range the fit may give "
                                      f"{'them' if len(at_end) > 1 else 'it'} (see the warnings)")
    cve = result.cve = checks.cve_of(prepared, model)
    if not warn:
        return
    found = (admissibility + [finding for _, finding in at_end] + checks.consistency(model, cve)
             + checks.reach(model, checks.steady_speeds(cve))
             + checks.unsettled(model, prepared, cve)
             + (checks.coulomb_reach(model, checks.fastest_speed(prepared))
                or checks.coulomb_levels(model, checks.steady_speeds(cve))))
    if model.kind == "lugre" and fitted is not None:
        found += checks.identifiability(*fitted)
        found += checks.resolution(model, checks.median_position_noise(prepared[0]))
        found += checks.damping_resolution(model, max(h for p in prepared for h in p.dt))
        found += check_torque_timing(model, prepared, result.preprocessor.torque_delay)
        if not any(f.code == "inertia_at_zero" for f in result.findings):  # said so
            found += checks.inertia_agreement(result.static_model, model)
    result.findings += found


#: Findings on the data that explain an inadmissible model: named with the error.
INADMISSIBLE_CAUSES = ("one_direction",)


def _with_causes(message: str, findings: list[Finding]) -> str:
    """``message`` (an inadmissible model) with the findings on the data that explain it.

    Motion in one direction leaves the Coulomb level to gravity or an offset, and a friction
    curve fitted on it can oppose the motion nowhere: a 1000-sample cut of one move of
    data/example (0 to +2.1 rad/s) ended in "the friction curve drives the joint at
    −2.142 rad/s" alone, though the warning that names the cause had been found."""
    causes = [f.message for f in findings if f.code in INADMISSIBLE_CAUSES]
    return "; ".join([message, *(f"the data explain it: {c}" for c in causes)])


def _at_zero(model: JointModel) -> list[str]:
    """The parameters of ``model`` that its fit holds at their lower bound 0: the inertia
    (:func:`_hold_inertia`) and, of a LuGre model, whose fits always keep the Coulomb column,
    f_c and σ1 (sign constraints; a static model's f_c of 0 is a term left out). Such a model
    has converged to the edge of what it may be, and is not reported as plainly converged."""
    values = {"I": model.inertia}
    if model.kind == "lugre":
        values.update({"f_c": model.coulomb, "σ1": model.sigma1})
    return [name for name, value in values.items() if value == 0]


def _hold_inertia(result: IdentificationResult) -> None:
    """The models whose fitted inertia fell below zero, with it held at its bound 0 and the
    friction as fitted (finding ``inertia_at_zero``; ``DESIGN.md`` §88).

    Where the moves barely accelerate the joint, I q̈ is within the noise and the inertia
    comes out of either sign; below zero in both the LuGre and the static model, the
    identification was refused whole, friction and all. On a
    zoo joint trained at 0.0059 and 0.024 m/s (ramps shorter than a sample at 1 kHz) the
    LuGre fit had f_c, c₁ and σ0 within 0.1, 5 and 0.2 % of the truth and the inertia at
    −0.024 kg (truth +0.038): the fit's optimum over I ≥ 0 lies on the bound, and I q̈ is too
    small there for the other coefficients to move with it.
    """
    below = [m.inertia for m in (result.model, result.static_model) if m.inertia < 0]
    if not below:
        return
    fitted = below[0]  # the returned model's, else the static one it gives way to
    result.map_models(lambda m: m.with_(inertia=0.0) if m.inertia < 0 else m)
    u = units(result.model.axis)["inertia"]
    result.findings.append(Finding(
        "warning", "inertia_at_zero",
        f"the inertia came out below zero ({fitted:.4g} {u}): the moves barely accelerate the "
        "joint, so these data do not identify it, and the model holds it at 0; the friction "
        "stands, but take the inertia from a design value or record harder accelerations"))


def _data_findings(prep: Prepared, library: FeatureLibrary, axis: str,
                   whole: Prepared | None = None) -> list[Finding]:
    """The data checks that apply to ``library``; an error finding is raised. ``whole``: the
    records ``prep``'s training parts were cut from (:func:`_prepare_held_out`)."""
    has_stribeck = any(t.kind == "stribeck" for t in library.terms())
    findings = [f for f in diagnose_prepared(prep, axis=axis, whole=whole)
                if has_stribeck or f.code != "narrow_velocity_range"]
    if bad := errors(findings):
        raise SparsefricError(bad[0].message)
    return findings


def _fit_findings(result: IdentificationResult, static: StaticFit, prep: Prepared,
                  s: Settings) -> list[Finding]:
    """Checks of the static fit: collinear columns, the inertia (an error is raised), an offset
    the library lacks."""
    x_fit, tau_fit = prep.subset(static.sliding)
    collinear, result.collinear = check_collinearity(static.library, static.sweep.best, x_fit,
                                                     tau_fit)
    power = float(np.mean(tau_fit * x_fit.qd))  # [W]: friction's is positive, see check_inertia
    inertia = check_inertia(result.static_model, float(np.median(np.abs(x_fit.qd))), power)
    if bad := errors(inertia):
        raise SparsefricError(bad[0].message)
    out = collinear + inertia
    if s.axis == "revolute" and not any(t.kind == "offset" for t in static.library.terms()):
        best = static.sweep.best
        n_rigid = sum(t.kind in RIGID_KINDS for t in static.library.terms())
        support = np.r_[best.support[:n_rigid], True, best.support[n_rigid:]]
        out += check_offset(s.library(offset=True), support, best.theta, x_fit, tau_fit,
                            s.iterations.nu)
    return out


def _fit_lugre(result: IdentificationResult, static: StaticFit, prep: Prepared,  # noqa: PLR0913
               val: Prepared | None, s: Settings, progress: Callable[[str], None],
               whole: Prepared | None, checked: list[Prepared]
               ) -> tuple[IterationResult, FrictionData] | None:
    """Steps 2–3 from the static fit; fills ``result`` (the static model stays where they
    cannot run or the LuGre model does not predict better). ``whole``: the training records
    with their held-out blocks, on which the kept LuGre model is refitted; ``checked``: the
    records the model is checked on, which test its viscous powers. Returns the run kept and
    its training data (None where the iterations could not run)."""
    first = first_outer(static, prep, s.iterations.nu)
    if not first.g0 > 0:
        result.convergence_reason = "static model only: no positive Coulomb level"
        result.findings.append(Finding(
            "warning", "no_coulomb_level",
            "the static fit has no positive Coulomb level f_c + ΣA, so the LuGre bristle "
            "model (z_ss = g(q̇)/σ0) is undefined: model.json holds the static model"))
        return None
    rigid = first.joint_model(s.axis, s.tanh_k).with_(coulomb=0.0, stribeck=(), viscous=())
    frame = RigidFrame.of(static, first)
    data = frame.data(prep, static.theta_bounds)
    structure = Structure(tuple(p for p, _ in first.viscous),
                          tuple(d for d, _ in first.stribeck), s.tanh_k, s.axis)
    tau_norm = float(np.linalg.norm(prep.tau))
    starts = s.sigma0_starts or default_sigma0_starts(first.g0, s.axis)
    runs = multistart([first.friction_params(s0, s.tanh_k) for s0 in starts], structure, data,
                      s.iterations, tau_norm, lambda i: progress(
                          "refinement" if i == len(starts) - 1 else "steps 2–3: LuGre iterations"))
    check = frame.data(val, static.theta_bounds) if val is not None else None
    chosen = select_run(runs, check)
    levels = checks.steady_levels(checks.cve_of(
        checked,
        _lugre_model(rigid.with_(**frame.coefficients(chosen.rigid)), chosen, static, s,
                     False))) if s.refine else None
    refinement = _refine(chosen, structure, data, check, static.library, s, tau_norm, levels)
    result.lugre = LuGreStage(tuple(starts), runs, refinement)

    def model_of(run: IterationResult) -> JointModel:
        return _lugre_model(rigid.with_(**frame.coefficients(run.rigid)), run, static, s,
                            refinement.refined)

    # where step 1 found no inertia in these data, its sign cannot refuse a drop
    signed = not any(f.code == "negative_inertia" for f in result.findings)
    best, dropped = drop_powers(refinement.best, model_of, lambda run, drop: _reiterate(
        run, _without_powers(run.params, drop), data, frame, s, signed), checked)
    result.lugre_model = result.model = model_of(best)
    _keep_static_if_better(result, whole or val or prep)
    lugre = result.model is result.lugre_model
    refit = partial(_refit_measured, best, whole or prep, frame, static.theta_bounds, s,
                    whole is not None)
    needed = lugre and (whole is not None or prep.torque_denoised)
    # where the prediction fit is not taken the refit is needed: on long records it runs
    # alongside, on a thread of its own, with the same results as one after the other
    with ahead(refit, needed and len(whole or prep) >= OVERLAP_SAMPLES) as refitted:
        levels = Anchors.of(model_of(best), prep, val, checked) \
            if lugre and val is not None else None
        if levels is not None:
            result.validation_misses = levels.misses
        fitted = _fit_prediction(best, prep, val, whole, frame, static.theta_bounds, s,
                                 levels) if levels is not None else None
        if fitted is not None:
            best, data = fitted
        elif needed:
            best, data = refitted()
    # the refit's run has a reason of its own; where the static model is returned, the reason
    # (the LuGre run's) says whose powers went
    best.reason += dropped_note(dropped, "" if lugre else "the LuGre model's ")
    result.lugre_model = model_of(best)
    if lugre:
        result.model = result.lugre_model
    result.converged, result.convergence_reason = best.converged, best.reason
    return best, data


#: Standard errors by which the prediction-error fit must predict the validation torque better
#: than the iterations' model (:func:`~sparsefric.hac.paired_gain`) to replace it: the
#: one-standard-error rule of cross-validation. Where the records leave a shape open, the fit
#: moves along it for a gain of a few parts in 10⁴ (zoo 1579784190/8: the rise between its
#: 0.06 and 2.1 rad/s levels turned into a knee at δ 4 for 0.1 %, 0.17 standard errors, and
#: the static curve went 0.85 → 6.8 % off).
PREDICTION_GAIN = 1.0


#: Samples from which the final refit runs alongside the prediction-error fit
#: (:func:`_fit_lugre`). On long records the z integrations and solves, which release the GIL,
#: dominate and the two overlap (the 1M-sample scaling fit −9 %, 200k −11 %); on shorter ones
#: the iterations' Python loops hold it, and the zoo's joints (15–80k samples) took 3 % longer
#: (``DESIGN.md`` §110).
OVERLAP_SAMPLES = 150_000


@dataclass(frozen=True)
class Anchors:
    """The constant-velocity levels the prediction-error fit holds the static curve to
    (:func:`~sparsefric.steps.prediction.prediction_fit`'s ``steady``), and the validation
    records whose levels the model fitted on the training records alone misses.

    Attributes
    ----------
    train : SteadyLevels
        The training records' levels, for the fit on them alone.
    every : SteadyLevels
        Every record's levels, for the refit on every record.
    strays : list of str
        Validation records (or held-out blocks) whose levels the training model misses beyond
        their scatter and by more than :data:`~sparsefric.steps.checks.CVE_WARN_TOLERANCE`:
        they are refitted on every record even where the gate refuses the training fit.
    misses : list of str
        Those it misses by :data:`~sparsefric.steps.checks.CVE_TOLERANCE`
        (:attr:`IdentificationResult.validation_misses`).
    """

    train: SteadyLevels
    every: SteadyLevels
    strays: list[str]
    misses: list[str]

    @classmethod
    def of(cls, model: JointModel, prep: Prepared, val: Prepared, every: list[Prepared]
           ) -> Anchors:
        """The levels of ``model`` (the kept run's) on the training records ``prep``, the
        validation records ``val`` and ``every`` record given (the whole records where blocks
        were held out: the blocks are parts of them, and their levels count once), each net of
        its inertia force, well settled (:func:`~sparsefric.steps.checks.settled_levels`)."""
        held = checks.cve_of([val], model)

        def missed(tolerance: float) -> list[str]:
            return _missed_records(held, checks.cve_misses(model, held, tolerance))

        return cls(checks.settled_levels([prep], model),
                   checks.settled_levels(every, model),
                   missed(checks.CVE_WARN_TOLERANCE), missed(checks.CVE_TOLERANCE))


def _fit_prediction(best: IterationResult, prep: Prepared, val: Prepared,  # noqa: PLR0913
                    whole: Prepared | None, frame: RigidFrame,
                    theta_bounds: tuple[float, float] | None, s: Settings, levels: Anchors
                    ) -> tuple[IterationResult, FrictionData] | None:
    """The kept run with its nonlinear parameters at the minimum of the prediction error
    (:func:`~sparsefric.steps.prediction.prediction_fit`, the static curve held to the steady
    ``levels``), where that predicts the validation data ``val`` (the held-out blocks where no
    validation file was given) better by :data:`PREDICTION_GAIN` standard errors than the run
    with only its linear parameters refitted (:func:`~sparsefric.steps.prediction.start_refit`),
    both on the measured torque of the training data ``prep``. Then it is fitted again on every
    record given, training and validation (the whole records, ``whole``, where blocks were held
    out): scikit-learn's refit, so that what the validation records show of the friction is
    fitted once they have chosen; and once more with its exponents held at the library's
    nearest (:func:`~sparsefric.steps.prediction.on_grid`). Where the gate refuses the training
    fit but the kept run misses a validation record's steady level (``levels.strays``), the
    refit on every record starts from the kept run: the validation records show friction the
    training ones do not, and a fit that sees them is owed (``DESIGN.md`` §115). None where
    neither holds, or the refit is inadmissible or puts the inertia at or below zero
    (``DESIGN.md`` §101).

    The gate judges the training fit with δ free; the model returned, fitted on every record
    with δ on the grid, is judged only for admissibility: the validation records are in its
    fit, and no records are left to judge it on but the test's."""
    train = frame.data(prep.measured(), theta_bounds, averaged=True)
    norm = float(np.linalg.norm(train.tau))
    first = prediction_fit(best, train, s.deltas, s.iterations.refit_rigid, norm,
                           steady=levels.train)
    gate = _prediction_gate(best, first, frame.data(val.measured(), theta_bounds), train,
                            frame, s, norm)
    if gate is None and not levels.strays:
        return None
    every, records = (whole, "the whole records (held-out blocks included)") \
        if whole is not None else (prep.join(val), "the training and validation records")
    data = frame.data(every.measured(), theta_bounds, averaged=True)
    norm = float(np.linalg.norm(data.tau))
    run = prediction_fit(first if gate is not None else best, data, s.deltas,
                         s.iterations.refit_rigid, norm, steady=levels.every)
    gridded = replace(run, params=on_grid(run.params, s.deltas))
    run = prediction_fit(gridded, data, None, s.iterations.refit_rigid, norm,
                         steady=levels.every)
    if run is gridded or not frame.accepts(run) or gate is None and not _nearer(run, best,
                                                                               levels.every):
        return None
    run.fitted_on = records
    why = (f"fitted on the training records alone, that minimum predicts the validation "
           f"torque {100 * gate[0]:.2g} % better, {gate[1]:.1f} standard errors"
           if gate is not None else "the model fitted on the training records alone misses "
           f"the constant-velocity friction of {', '.join(levels.strays)}")
    run.reason += (f"; refitted on the measured torque of {records} with its nonlinear "
                   f"parameters at the minimum of the prediction error ({why}) and its "
                   "exponents on the library's grid")
    return run, data.with_rigid(run.rigid)


def _nearer(run: IterationResult, start: IterationResult, levels: SteadyLevels) -> bool:
    """Whether ``run``'s static curve meets the steady ``levels`` more closely (χ²,
    :meth:`~sparsefric.selection.SteadyLevels.misfit`) than ``start``'s and misses none that
    ``start``'s meets (:meth:`~sparsefric.selection.SteadyLevels.missed` by
    :data:`~sparsefric.steps.checks.CVE_WARN_TOLERANCE`). A refit owed to a missed level is
    taken only so: where the kept structure meets it only by losing another, it lacks a term,
    and the identification with the validation records fitted is due instead (``DESIGN.md``
    §115; data/example under the paper recipe, no Stribeck term: the refit took the
    0.03 rad/s level from 20 % to 11.7 % off, and the 0.127 rad/s one from 0.3 to 9.4 %)."""
    new, old = (direction_mean_curve(levels.velocity, r.params) for r in (run, start))
    tolerance = checks.CVE_WARN_TOLERANCE
    lost = levels.missed(new, tolerance) & ~levels.missed(old, tolerance)
    return levels.misfit(new) < levels.misfit(old) and not lost.any()


def _prediction_gate(best: IterationResult, first: IterationResult, check: FrictionData,  # noqa: PLR0913
                     train: FrictionData, frame: RigidFrame, s: Settings, norm: float
                     ) -> tuple[float, float] | None:
    """(relative gain [-], standard errors) by which the prediction-error fit on the training
    records, ``first``, predicts the validation data ``check`` better than ``best`` with its
    linear parameters refitted on ``train``; None where ``first`` is no fit, is inadmissible
    or gains less than :data:`PREDICTION_GAIN` standard errors."""
    if first is best or not frame.accepts(first):
        return None
    reference = start_refit(best, train, s.iterations.refit_rigid, norm)
    before, after = run_residual(reference, check), run_residual(first, check)
    z = paired_gain(before, after)
    if not z > PREDICTION_GAIN:
        return None
    return 1.0 - float(np.linalg.norm(after) / np.linalg.norm(before)), z


def _refit(best: IterationResult, data: FrictionData, frame: RigidFrame, s: Settings,
           whole: bool) -> tuple[IterationResult, FrictionData]:
    """The kept run refitted, structure fixed, on ``data``: the measured torque (of the whole
    records where ``whole``). The run itself where the refit is inadmissible or puts the
    inertia at or below zero (``frame``: the rigid terms).

    The denoised torque chose λ, the structure and the σ0 start: AICc needs residuals without
    the white noise. Its coefficients are biased, though: the torque's TV fit rounds the steps
    of I·q̈ that the angle's keeps, which put the inertia 2–28 % low on zoo joints; noise in
    the regressed torque biases no least squares (``DESIGN.md`` §33). The measured torque is
    logged at instants while q̈ from positions averages over ±h: ``data`` fit the
    sample-averaged equation (:attr:`FrictionData.averaged`, §35). Where blocks were held
    out to choose, their samples now fit too (scikit-learn's refit; §26).
    """
    run = _reiterate(best, best.params, data, frame, s)
    data = data.with_rigid(best.rigid)
    if run is None:
        return best, data
    run.reason += "; refitted on the measured torque"
    if whole:
        run.fitted_on = "the whole records (held-out blocks included)"
        run.reason += f" of {run.fitted_on}"
    return run, data


def _refit_measured(best: IterationResult, records: Prepared, frame: RigidFrame,  # noqa: PLR0913
                    theta_bounds: tuple[float, float], s: Settings, whole: bool
                    ) -> tuple[IterationResult, FrictionData]:
    """:func:`_refit` on the measured torque of ``records`` (sample-averaged)."""
    final = frame.data(records.measured(), theta_bounds, averaged=True)
    return _refit(best, final, frame, s, whole)


def _reiterate(run: IterationResult, start: FrictionParams, data: FrictionData,  # noqa: PLR0913
               frame: RigidFrame, s: Settings, signed: bool = True) -> IterationResult | None:
    """The iterations from ``start`` (``run``'s friction, or part of it) on ``data`` with
    ``run``'s rigid body: the run that may replace ``run`` (``frame.accepts``; without
    ``signed``, admissible whatever the sign of its inertia), with its σ0 start, else None.

    ``signed`` False is for dropping viscous powers the data do not determine where step 1
    found the inertia negative: the denoised torque then holds no inertia to judge by.
    Seed 1925677199's joint 22 (one file at 0.035–0.24 rad/s, truth 0.39 kg·m²) kept
    0.0013 q̇ − 0.69 q̇³ + 139 q̇⁵ (Wald W = 0.05, critical 6.6) because the run without them
    had an inertia of −0.003 against its 0.018; the refit on the measured torque then made
    them 2.2 q̇ − 64 q̇³ + 843 q̇⁵ and the test error at 1.6 rad/s 1450 × the truth's
    (``DESIGN.md`` §117)."""
    structure = Structure(tuple(int(x) for x in start.powers),
                          tuple(float(d) for d in start.deltas), s.tanh_k, s.axis)
    data = data.with_rigid(run.rigid)
    new = run_iterations(start, structure, data, s.iterations, float(np.linalg.norm(data.tau)))
    if not (frame.accepts(new) if signed else new.admissible):
        return None
    new.sigma0_init = run.sigma0_init
    return new


def _without_powers(p: FrictionParams, drop: tuple[int, ...]) -> FrictionParams:
    """``p`` without the viscous powers ``drop``."""
    keep = ~np.isin(p.powers, drop)
    return replace(p, powers=p.powers[keep], coefficients=p.coefficients[keep])


@dataclass(frozen=True)
class RigidFrame:
    """The rigid-body terms step 1 kept, which the LuGre iterations re-estimate.

    Attributes
    ----------
    library : FeatureLibrary
        Their columns (q̈, cos q, sin q, 1 of the selected kinds).
    kinds : tuple of str
        Their kinds, the :class:`~sparsefric.model.JointModel` fields they set.
    start : ndarray
        Step 2's first outer iteration's coefficients, the start.
    """

    library: FeatureLibrary
    kinds: tuple[str, ...]
    start: np.ndarray

    @classmethod
    def of(cls, static: StaticFit, first: StaticTerms) -> RigidFrame:
        """The rigid terms of ``first`` (the static fit's refit) in library order."""
        mask = [t.kind in first.rigid for t in static.library.terms()]
        library = static.library.select(mask)
        kinds = tuple(t.kind for t in library.terms())
        return cls(library, kinds, np.array([first.rigid[k] for k in kinds]))

    def data(self, prep: Prepared, theta_bounds: tuple[float, float],
             averaged: bool = False) -> FrictionData:
        """The iterations' data of ``prep``: τ [N·m], the rigid columns, Ω_s bounds and the
        plausible g(0) (:data:`~sparsefric.optimizers.sr3.G0_LIMIT`, the bound of step 1's refits,
        × the 99.9th percentile of |τ_c|). ``averaged``: the inner least squares fit the
        sample-averaged equation where ``prep``'s q̈ is a second difference of positions
        (:attr:`FrictionData.averaged`)."""
        x = prep.signals
        columns = self.library.evaluate(x, 0.0)[0]
        tau_c = prep.tau - columns @ self.start
        limit = G0_LIMIT * float(np.quantile(np.abs(tau_c), 0.999))
        mask = tuple(k != "inertia" for k in self.kinds) \
            if averaged and prep.sampled_acceleration else None
        return FrictionData(x, prep.tau, prep.bounds, prep.dt, columns, self.start,
                            theta_bounds, limit, mask, prep.torque_held)

    def accepts(self, run: IterationResult) -> bool:
        """Whether ``run`` may replace the model it was iterated from: admissible, with an
        inertia (where the frame has one) above 0."""
        return run.admissible and self.coefficients(run.rigid).get("inertia", 1.0) > 0

    def coefficients(self, rigid: np.ndarray | None) -> dict[str, float]:
        """``JointModel`` fields of the coefficients ``rigid`` (the start where None)."""
        values = self.start if rigid is None else rigid
        return {k: float(v) for k, v in zip(self.kinds, values, strict=True)}


def _refine(best: IterationResult, structure: Structure, data: FrictionData,  # noqa: PLR0913
            check: FrictionData | None, library: FeatureLibrary, s: Settings,
            tau_norm: float, levels: SteadyLevels | None) -> Refinement:
    """The refinement rounds of ``best``; ``levels``: the CVE points of every record, which
    break the ties of AICc in the rounds' sweeps (``DESIGN.md`` §89; measured only where the
    settings refine)."""
    if not s.refine:
        return Refinement(best)
    return refine(best, structure, candidates(library, s.tanh_k, s.axis), data,
                  check or data, validate=check, settings=s.iterations,
                  # its automatic grid is in N·m RMS: always on scaled columns
                  rule=replace(s.rule, scaled=True), tau_norm=tau_norm,
                  max_rounds=s.max_refinements, steady=levels)


def _lugre_model(rigid: JointModel, run: IterationResult, static: StaticFit, s: Settings,
                 refined: bool) -> JointModel:
    """The LuGre :class:`JointModel` of ``run`` on ``rigid`` (its re-estimated rigid body)."""
    p = run.params
    return rigid.with_(
        kind="lugre", coulomb=p.coulomb, stribeck_velocity=p.stribeck_velocity,
        # a Stribeck amplitude the sign constraint set to 0 is no term of the model
        stribeck=tuple((float(d), float(a)) for d, a in zip(p.deltas, p.amplitudes,
                                                            strict=True) if a != 0),
        viscous=tuple(zip(map(int, p.powers), map(float, p.coefficients), strict=True)),
        sigma0=float(p.sigma0), sigma1=float(p.sigma1),
        extra=_provenance(static, s, run, refined))


def _keep_static_if_better(result: IdentificationResult, check: Prepared) -> None:
    """Keep the static model when the LuGre model predicts the check data no better.

    The LuGre model has two more parameters; if it does not predict the validation (else
    training) torque better, its pre-sliding dynamics are not identifiable from the data and
    the simpler model is the one to use (``DESIGN.md`` §10). Where blocks were held out of the
    records, the check data are the whole records: each block is simulated from its own
    start, and one that starts at rest starts with the bristle state unknown (``DESIGN.md``
    §61).
    """
    tau = check.tau_raw
    err = {name: relative_error(tau, np.concatenate(check.torque(m)))
           for name, m in (("dynamic", result.model), ("static", result.static_model))}
    if err["dynamic"] >= err["static"]:
        result.model = result.static_model
        result.findings.append(Finding(
            "warning", "lugre_not_better",
            f"the LuGre model predicts the {result.sweep.validation_source} torque no better "
            f"than the static model ({err['dynamic']:.4f} vs {err['static']:.4f} relative "
            "RMS), so model.json holds the static model and lugre_model.json the LuGre one: "
            "the pre-sliding dynamics are not identifiable from these data"))


def _provenance(static: StaticFit, s: Settings, run: IterationResult | None = None,
                refined: bool = False) -> dict:
    """Extra model-file keys: how the model was made (no timestamp: outputs are
    reproducible byte for byte; the CLI adds ``created``)."""
    library = s.library_name + (", Coulomb level only (one speed)" if s.coulomb_only else "")
    pre = s.preprocessor
    fit = {"model": s.sign_model, "library": library, "window": static.window,
           "differentiation": {"method": pre.method, "regularization": pre.regularization,
                               "cutoff_hz": pre.cutoff_hz},
           "torque_timing": pre.torque_timing, "torque_delay": pre.torque_delay,
           "validation": static.sweep.validation_source,
           "selected_threshold": float(static.sweep.table.threshold[static.sweep.selected])}
    if run is not None:
        fit.update(converged=run.converged, reason=run.reason, sigma0_init=run.sigma0_init,
                   train_error_rel=run.error, refined=refined)
        if run.fitted_on:
            fit["fitted_on"] = run.fitted_on
    return {"software": f"sparsefric {__version__}", "fit": fit}

