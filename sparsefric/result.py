"""The outcome of one identification, as the report, the notebook display, CLI and batch read it.

:class:`IdentificationResult` holds the models (the result, the static first approximation and,
when the static model was kept, the LuGre one beside it), the step-1 selection, the LuGre runs and
refinement rounds, every warning as a :class:`~sparsefric.data_checks.Finding`, and the
:class:`~sparsefric.preprocessing.Preprocessor` that prepares new records exactly as the training
data were, so that scores of test data are comparable.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from sparsefric.data import Trajectory
from sparsefric.data_checks import Finding, check_units, named
from sparsefric.feature_library import FeatureLibrary
from sparsefric.model import JointModel
from sparsefric.preprocessing import Prepared, Preprocessor
from sparsefric.selection import SweepResult
from sparsefric.steps.iterations import IterationResult
from sparsefric.steps.refinement import Refinement

#: Code of the finding that the test records leave the model's validity range
#: (:meth:`IdentificationResult.check_test`).
OUTSIDE_VALIDITY = "test_outside_validity"


@dataclass
class LuGreStage:
    """Steps 2–3: the runs from every σ0 start and the refinement rounds.

    Attributes
    ----------
    sigma0_starts : tuple of float
        Initial σ0 [N·m/rad or N/m] of the runs.
    runs : list of IterationResult
        One per start.
    refinement : Refinement
        The kept run (``refinement.best``) and the rounds that led to it.
    """

    sigma0_starts: tuple[float, ...]
    runs: list[IterationResult]
    refinement: Refinement

    @property
    def best(self) -> IterationResult:
        """The run the model comes from."""
        return self.refinement.best

    @property
    def history(self) -> pd.DataFrame:
        """The outer-loop rows of every start, then of every accepted refinement round."""
        stages = [("σ0 start", r) for r in self.runs] + [
            (f"refinement {i}", r) for i, r in enumerate(self.refinement.runs, start=1)]
        return pd.DataFrame([{"stage": stage, "sigma0_init": r.sigma0_init, **row}
                             for stage, r in stages for row in r.history])


@dataclass
class IdentificationResult:
    """Everything one identification produced.

    Attributes
    ----------
    model : JointModel
        The identified joint (``model.json``): the LuGre model, or the static one when the
        LuGre model does not predict better or cannot be identified.
    static_model : JointModel
        Step 1's static model (``static_model.json``).
    lugre_model : JointModel, optional
        The LuGre model, also when ``model`` is the static one (``lugre_model.json``).
    library : FeatureLibrary
        Step 1's candidates.
    sweep : SweepResult
        Step 1's λ sweep and the selected solution.
    window : float
        Pre-sliding window of the static fits, a fraction of each trajectory's position span.
    findings : list of Finding
        Every warning, with its code (loading notes, data checks, checks of the fit).
    collinear : list of (str, str, float)
        Candidate columns the data cannot tell apart, with |cosine|.
    preprocessor : Preprocessor
        How the records were (and new records are) differentiated.
    preprocessing : DataFrame
        The differentiation settings of every training record: method, κ and how it was chosen.
    lugre : LuGreStage, optional
        Steps 2–3 (None for a static identification).
    converged : bool
        Whether the kept LuGre run converged (True for a static identification).
    held_out : list of str
        Names of the blocks of the training records held out for validation when none was
        given (``name[start:stop]``, sample ranges); empty otherwise.
    convergence_reason : str
        Why the iterations stopped, or why there were none.
    cve : DataFrame
        The constant-velocity friction points of the fit's records that the model was checked
        against (:func:`sparsefric.steps.checks.cve_of`; a record with held-out blocks whole).
    validation_misses : list of str
        The validation records (held-out blocks) whose constant-velocity friction the LuGre
        model fitted on the training records alone missed
        (:func:`~sparsefric.steps.checks.cve_misses`), before its refits: a refit may meet
        them, and the miss still says the training records lack a regime.
    """

    model: JointModel
    static_model: JointModel
    library: FeatureLibrary
    sweep: SweepResult
    window: float
    preprocessor: Preprocessor
    preprocessing: pd.DataFrame
    findings: list[Finding] = field(default_factory=list)
    collinear: list[tuple[str, str, float]] = field(default_factory=list)
    lugre_model: JointModel | None = None
    lugre: LuGreStage | None = None
    converged: bool = True
    convergence_reason: str = "static model only"
    held_out: list[str] = field(default_factory=list)
    cve: pd.DataFrame = field(default_factory=pd.DataFrame)
    validation_misses: list[str] = field(default_factory=list)

    # ------------------------------------------------------------------ views
    @property
    def warnings(self) -> list[str]:
        """The warning messages, in the order they arose."""
        return [f.message for f in self.findings]

    @property
    def selection(self) -> pd.DataFrame:
        """Step 1's λ sweep, one row per λ."""
        return self.sweep.table

    @property
    def terms(self) -> pd.DataFrame:
        """Every step-1 candidate with its coefficient, unit and whether it was selected."""
        best = self.sweep.best
        return pd.DataFrame([{"term": t.name, "kind": t.kind, "coefficient": c, "unit": t.unit,
                              "active": bool(a)}
                             for t, c, a in zip(self.library.terms(), best.coef, best.support,
                                                strict=True)])

    @property
    def final_terms(self) -> pd.DataFrame:
        """Every candidate with its coefficient in the final model (``model``) beside step 1's.

        Returns
        -------
        DataFrame
            term, kind, unit, coefficient and active (the final model: after the LuGre
            iterations and any refinement, or the static model when it was kept),
            step1_coefficient and step1_active (the λ sweep of step 1 at the selected λ, the
            selected row of :attr:`selection`: fitted on at most
            :data:`~sparsefric.selection.MAX_ROWS` of the training samples), then
            static_coefficient (``static_model``, step 1's result: the selected terms refitted
            on every sliding sample, of the whole records where blocks were held out and that
            predicts them better). Coefficients in the unit of their term. A term of the final
            model outside the candidate list (a Stribeck exponent off the grid) is appended as
            a row of its own.
        """
        step1 = self.terms.rename(columns={"coefficient": "step1_coefficient",
                                           "active": "step1_active"})
        final, static = (_model_coefficients(m) for m in (self.model, self.static_model))
        keys = [(t.kind, float(t.param)) for t in self.library.terms()]
        coef = [final.pop(key, 0.0) for key in keys]
        step1 = step1.assign(coefficient=coef, active=[c != 0 for c in coef],
                             static_coefficient=[static.get(key, 0.0) for key in keys])[
            ["term", "kind", "unit", "coefficient", "active", "step1_coefficient", "step1_active",
             "static_coefficient"]]
        extra = [{"term": _term_name(kind, param), "kind": kind, "unit": "", "coefficient": c,
                  "active": c != 0, "step1_coefficient": 0.0, "step1_active": False,
                  "static_coefficient": 0.0}
                 for (kind, param), c in final.items() if c != 0]
        return pd.concat([step1, pd.DataFrame(extra, columns=step1.columns)],
                         ignore_index=True) if extra else step1

    @property
    def history(self) -> pd.DataFrame:
        """Outer-loop rows of every σ0 start and refinement round (empty if static)."""
        return self.lugre.history if self.lugre is not None else pd.DataFrame()

    @property
    def winning_history(self) -> pd.DataFrame:
        """The rows of the kept run's σ0 start (and of the refinement rounds from it)."""
        hist = self.history
        if hist.empty or self.lugre is None:
            return hist
        return hist[hist["sigma0_init"] == self.lugre.best.sigma0_init]

    @property
    def refined(self) -> bool:
        """Whether the refinement replaced the first LuGre model."""
        return self.lugre is not None and self.lugre.refinement.refined

    @property
    def xi_u(self) -> float:
        """ξ_u of the kept run's last outer iteration (NaN if static)."""
        if self.lugre is None or not self.lugre.best.history:
            return float("nan")
        return float(self.lugre.best.history[-1]["xi_u"])

    def map_models(self, change: Callable[[JointModel], JointModel]) -> None:
        """Replace the static, the LuGre and the returned model by ``change(model)``, once per
        distinct model: models that were one object stay one."""
        models = (self.static_model, self.lugre_model, self.model)
        new = {id(m): change(m) for m in models if m is not None}
        self.static_model, self.lugre_model, self.model = (
            None if m is None else new[id(m)] for m in models)

    # ------------------------------------------------------------------ evaluation
    def prepare(self, trajectories: Sequence[Trajectory]) -> Prepared:
        """``trajectories`` differentiated as the training data were (fitted sets are cached)."""
        return self.preprocessor.prepare(trajectories)

    def predict(self, trajectories: Sequence[Trajectory],
                model: JointModel | None = None) -> list[np.ndarray]:
        """τ̂ [N·m] of each trajectory by ``model`` (default: the identified one)."""
        return self.prepare(trajectories).torque(model or self.model)

    def check_test(self, trajectories: Sequence[Trajectory]) -> None:
        """Add the finding :data:`OUTSIDE_VALIDITY` where the test ``trajectories``, prepared
        as the training data were, leave the model's validity range: their errors then
        measure an extrapolation; and the unit checks of ``predict``
        (:func:`~sparsefric.data_checks.check_units`). The messages are ``predict``'s, after
        "test data: "; a result checked twice on the same records warns once. The prepared
        records are kept, so that the report scoring them does not differentiate them again."""
        prep = self.preprocessor.prepare(trajectories, remember=True)
        found = named(check_units(prep, self.model.axis), "test data")
        if text := self.model.outside_message(prep.signals.q, prep.signals.qd):
            found.append(Finding("warning", OUTSIDE_VALIDITY, f"test data: {text}"))
        self.findings += [f for f in found if f not in self.findings]

    def relative_error(self, trajectories: Sequence[Trajectory],
                       model: JointModel | None = None) -> float:
        """‖τ − τ̂‖/‖τ‖ over all samples of ``trajectories``, τ the measured torque."""
        return self.prepare(trajectories).relative_error(model or self.model)


def _model_coefficients(model: JointModel) -> dict[tuple[str, float], float]:
    """The coefficient of each candidate kind and parameter (power p, exponent δ) in a model."""
    out = {("inertia", 0.0): model.inertia, ("offset", 0.0): model.offset,
           ("coulomb", 0.0): model.coulomb}
    if model.axis == "revolute":
        out[("gravity_cos", 0.0)] = model.gravity_cos
        out[("gravity_sin", 0.0)] = model.gravity_sin
    out.update({("viscous", float(p)): c for p, c in model.viscous})
    out.update({("stribeck", float(d)): a for d, a in model.stribeck})
    return out


def _term_name(kind: str, param: float) -> str:
    """The plain-text name of a term outside the candidate list."""
    if kind == "stribeck":
        return f"sign(qd)*exp(-|qd/Ws|^{param:g})"
    return f"qd^{param:g}" if kind == "viscous" else kind
