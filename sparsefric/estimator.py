"""The scikit-learn estimator: :func:`sparsefric.identify.fit_joint` behind ``fit``/``predict``.

>>> est = SparseFric().fit(train_trajectories, validate=validation_trajectories)
>>> est.model_            # JointModel, friction.kind = "lugre"
>>> est.terms_            # every candidate with coefficient, unit and whether it is active
>>> est.selection_        # the λ sweep (DataFrame, one row per λ)
>>> est.history_          # outer-loop history of every σ0 start and refinement round
>>> est.result_           # everything else: IdentificationResult

Parameters are set in ``__init__`` and checked in ``fit``, learned attributes end in ``_``, as
scikit-learn's contract wants; ``fit`` also takes what a notebook holds (DataFrames, arrays:
:mod:`sparsefric.frames`). The parameter defaults live in :data:`sparsefric.identify.DEFAULTS`.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.metrics import r2_score
from sklearn.utils import Tags
from sklearn.utils.validation import check_is_fitted

from sparsefric.display import results_html, unfitted_html
from sparsefric.errors import FitWarning, user_stacklevel
from sparsefric.frames import (
    TrajectoryInput,
    as_trajectories,
    optional_trajectories,
    refuse_repeats,
)
from sparsefric.identify import DEFAULTS, Settings, fit_joint, settings
from sparsefric.model import JointModel
from sparsefric.options import check_records
from sparsefric.preprocessing import per_row
from sparsefric.segments import MIN_PIECE
from sparsefric.simulate import free_run
from sparsefric.validity import OutsideValidityWarning, ValidityRange

__all__ = ["SparseFric"]


class SparseFric(RegressorMixin, BaseEstimator):
    """Identify inertia, gravity and LuGre friction of one joint (Mahmoudkhani et al. 2023).

    Parameters
    ----------
    recipe : {"sparsefric", "paper"}
        Defaults of the options left at None below (:mod:`sparsefric.recipes`): sparsefric's,
        or the algorithm as the paper publishes it.
    axis : {"revolute", "prismatic"}
    model : {"A", "B"}
        A: s(q̇) = sign(q̇); B: s(q̇) = tanh(K q̇).
    tanh_k : float
        K [s/rad] of model B (the paper: 150).
    library : str
        Named candidate library (``full``, ``coulomb-viscous``, ``coulomb-viscous-offset``,
        ``stribeck``); see :func:`sparsefric.feature_library.static_library`.
    n_viscous : int
        Highest viscous power of the full library.
    deltas : tuple of float
        Stribeck exponents of the library.
    offset : bool
        Add a constant torque offset to a revolute joint.
    nu : float
        SR3 relaxation ν.
    thresholds : array, optional
        Thresholds [N·m RMS] of the λ sweep (default: automatic).
    lambdas : tuple of float or "auto", optional
        The λ grid instead, threshold √(2νλ) (paper recipe: 1 … 1e5; "auto": the automatic
        thresholds).
    scale_columns : bool, optional
        Threshold the coefficients of unit-RMS columns (sparsefric), or the physical ones, so
        that λ means what it means in the paper (paper).
    aic_parts : int or "auto", optional
        m of AICc (sparsefric, "auto": max(10, 4(p + 2)); paper: 10).
    aic_data : {"training+validation", "validation"}, optional
        Samples AICc scores step 1 on (sparsefric: both; paper: validation).
    aic_domain : {"guarded", "literal"}, optional
        AICc where m − k − 2 < 0: +∞ (sparsefric) or eq. 22 as printed (paper).
    omega_starts : tuple of float, optional
        Multi-start values of Ω_s [rad/s] (sparsefric: 0.002 … 0.2; paper: 0.01).
    sigma0_starts : tuple of float or "auto", optional
        Multi-start values of σ0 [N·m/rad or N/m]; sparsefric and "auto":
        :func:`~sparsefric.steps.iterations.default_sigma0_starts` of the step-1 g(0) (the
        paper's 1e3 … 1e5 for a 25 N·m joint); paper: 1e3 … 1e5.
    static_only : bool
        Stop after step 1.
    differentiation : str
        ``tv`` (default), ``butterworth``, ``savgol`` or ``given``.
    regularization : float, optional
        TV regularisation (dimensionless κ; default: chosen automatically).
    cutoff_hz : float, optional
        Butterworth cutoff [Hz].
    torque_timing : {"instant", "hold"}
        How the logged torque relates to the motion between samples: ``instant`` (default), a
        sample of a torque that changes between samples (a sensor; a command logged slower
        than the controller updates it); ``hold``, the command applied until the next sample
        (logged at the control rate, as the simulator's). It sets how the final coefficients
        average τ against the q̈ of a second difference: a held torque taken as instantaneous
        puts σ1 hσ0/2 high, +6 to +12 % on the simulated benchmark joints; ``hold`` on a
        torque logged slower than its controller puts it 40 % low (``DESIGN.md`` §68).
    torque_delay : float
        How late [s] the torque column is against the position (default 0); negative where
        the torque is early, as a logged current command is, which the drive applies a few
        cycles later. Every record's torque, in ``fit`` and in the predictions, is aligned
        with its position, τ(t + torque_delay) interpolated between samples, and the samples
        the shift takes beyond a record's end are dropped
        (:func:`~sparsefric.data.align_torque`); its magnitude must be below a tenth of the
        shortest record's duration. A lead L left in the data puts σ1 high by L σ0: the fit
        warns ``torque_delay`` with the value to give here (``DESIGN.md`` §97).
    tv_weight : float or "auto", optional
        TV weight in the paper's units, TVRegDiff's α (paper: 1000; "auto": κ chosen from the
        data); replaces ``regularization`` (:func:`sparsefric.preprocessing.tvregdiff_kappa`).
    presliding_distance : float, optional
        Travelled distance [rad] from stops and reversals below which samples are left out of
        the static fits (default: chosen from the data, see
        :func:`sparsefric.preprocessing.choose_window`).
    sliding_window : bool, optional
        Choose such a window from the data (sparsefric), or fit every moving sample (paper).
    max_outer, max_inner : int
        Iteration limits of the LuGre loops.
    tol : float
        Relative convergence tolerance on σ0.
    refine : bool, optional
        After the iterations, re-select the friction terms with the dynamic columns and keep the
        result if it predicts better (:mod:`sparsefric.steps.refinement`; paper: False).
    polish : bool, optional
        Finish each LuGre run with a 1-D search of σ0 (``DESIGN.md`` §14; paper: False).
    inner_rule : {"best", "paper", "search"}, optional
        What an inner loop returns (``DESIGN.md`` §27): ``search`` (sparsefric's default) finds
        by a line search where the walk σ0 ← σ0 ξ_u of ``best`` ends (§47, §69).
    outer_stop : {"sigma0+g", "sigma0"}, optional
        Stop the outer loop when σ0 and g(q̇) settle, or σ0 alone (paper).
    omega_step : {"newton", "profile"}, optional
        How Ω_s moves between SR3 solves in the sweeps and step 2: by Newton steps with the
        coefficients held fixed (both recipes), or to the minimum of the variable-projection
        profile on SR3's support near it (an option: better where Newton drifts, worse where
        two speed levels leave the physics open; ``DESIGN.md`` §28).
    max_refinements : int
        Most rounds of that re-selection.
    refit_rigid : bool, optional
        Re-estimate the rigid body (I, gravity, offset) with the friction in every LuGre inner
        loop, on every sample (sparsefric); False keeps step 1's values (paper).
    pool_validation : bool
        Fit validation records that slide far slower than every training record together with
        the training data (AICc then scores in-sample). Off by default: on data/example it gives
        δ = 4 for 1.5 (``DESIGN.md`` §24); the model's curve is checked against those records'
        constant-velocity friction either way.
    validation_share : float, optional
        Without validation data, this share of the training samples is held out for validation
        in contiguous blocks cut at rests (:func:`sparsefric.segments.hold_out`), so that AICc
        and the choice among σ0 starts score data the fit has not seen; 0 scores in-sample
        (recipe default: 0.2; the paper: 0).
    uncertainty : {"fast", "bootstrap", "none"}
        Intervals of the identified parameters (:mod:`sparsefric.uncertainty`): ``fast``
        (default) a HAC sandwich covariance, fractions of a second; ``bootstrap`` a block
        bootstrap rerunning the whole identification ``resamples`` times on the available
        cores, with term inclusion frequencies; ``none`` no intervals.
    resamples : int
        Block resamples of the bootstrap, at least 10 (default 100: rough ends of the 0.95
        intervals; 200 or more give stable ones, at as many identifications). The other
        methods ignore it.
    random_state : int
        Seed (≥ 0) of the bootstrap's block draws: the same seed gives the same intervals,
        another one shows how much they move with the draws. The other methods ignore it.
    progress : bool
        Show a progress bar of the steps on stderr.

    Attributes
    ----------
    result_ : IdentificationResult
        Everything the fit produced; the attributes below are views of it.
    uncertainty_ : ParameterUncertainty or None
        The intervals (None with ``uncertainty="none"``); also in ``model_.uncertainty``.
    """

    # One parameter per option, as scikit-learn's estimator contract wants.
    def __init__(self, *, axis: str = DEFAULTS["axis"],  # noqa: PLR0913
                 model: str = DEFAULTS["model"],
                 tanh_k: float = DEFAULTS["tanh_k"], library: str = DEFAULTS["library"],
                 n_viscous: int = DEFAULTS["n_viscous"],
                 deltas: tuple[float, ...] = DEFAULTS["deltas"], offset: bool = DEFAULTS["offset"],
                 nu: float = DEFAULTS["nu"],
                 thresholds: np.ndarray | None = DEFAULTS["thresholds"],
                 aic_parts: int | None = DEFAULTS["aic_parts"],
                 omega_starts: tuple[float, ...] | None = DEFAULTS["omega_starts"],
                 sigma0_starts: tuple[float, ...] | None = DEFAULTS["sigma0_starts"],
                 static_only: bool = DEFAULTS["static_only"],
                 differentiation: str = DEFAULTS["differentiation"],
                 regularization: float | None = DEFAULTS["regularization"],
                 cutoff_hz: float | None = DEFAULTS["cutoff_hz"],
                 presliding_distance: float | None = DEFAULTS["presliding_distance"],
                 max_outer: int = DEFAULTS["max_outer"], max_inner: int = DEFAULTS["max_inner"],
                 tol: float = DEFAULTS["tol"], refine: bool | None = DEFAULTS["refine"],
                 max_refinements: int = DEFAULTS["max_refinements"],
                 refit_rigid: bool | None = DEFAULTS["refit_rigid"],
                 pool_validation: bool = DEFAULTS["pool_validation"],
                 validation_share: float | None = DEFAULTS["validation_share"],
                 uncertainty: str = DEFAULTS["uncertainty"],
                 resamples: int = DEFAULTS["resamples"],
                 random_state: int = DEFAULTS["random_state"],
                 progress: bool = DEFAULTS["progress"],
                 recipe: str = DEFAULTS["recipe"], polish: bool | None = DEFAULTS["polish"],
                 sliding_window: bool | None = DEFAULTS["sliding_window"],
                 scale_columns: bool | None = DEFAULTS["scale_columns"],
                 lambdas: tuple[float, ...] | None = DEFAULTS["lambdas"],
                 aic_data: str | None = DEFAULTS["aic_data"],
                 aic_domain: str | None = DEFAULTS["aic_domain"],
                 inner_rule: str | None = DEFAULTS["inner_rule"],
                 outer_stop: str | None = DEFAULTS["outer_stop"],
                 tv_weight: float | None = DEFAULTS["tv_weight"],
                 omega_step: str | None = DEFAULTS["omega_step"],
                 torque_timing: str = DEFAULTS["torque_timing"],
                 torque_delay: float = DEFAULTS["torque_delay"]):
        self.recipe = recipe
        self.torque_timing = torque_timing
        self.torque_delay = torque_delay
        self.omega_step = omega_step
        self.polish = polish
        self.sliding_window = sliding_window
        self.scale_columns = scale_columns
        self.lambdas = lambdas
        self.aic_data = aic_data
        self.aic_domain = aic_domain
        self.inner_rule = inner_rule
        self.outer_stop = outer_stop
        self.tv_weight = tv_weight
        self.axis = axis
        self.model = model
        self.tanh_k = tanh_k
        self.library = library
        self.n_viscous = n_viscous
        self.deltas = deltas
        self.offset = offset
        self.nu = nu
        self.thresholds = thresholds
        self.aic_parts = aic_parts
        self.omega_starts = omega_starts
        self.sigma0_starts = sigma0_starts
        self.static_only = static_only
        self.differentiation = differentiation
        self.regularization = regularization
        self.cutoff_hz = cutoff_hz
        self.presliding_distance = presliding_distance
        self.max_outer = max_outer
        self.max_inner = max_inner
        self.tol = tol
        self.refine = refine
        self.max_refinements = max_refinements
        self.refit_rigid = refit_rigid
        self.pool_validation = pool_validation
        self.validation_share = validation_share
        self.uncertainty = uncertainty
        self.resamples = resamples
        self.random_state = random_state
        self.progress = progress

    # ------------------------------------------------------------------ parameters
    def settings(self) -> Settings:
        """The parameters, checked (:func:`sparsefric.identify.settings`)."""
        return settings(self.get_params(deep=False))

    # ------------------------------------------------------------------ fit
    def fit(self, X: TrajectoryInput, y: ArrayLike | None = None, *,
            validate: TrajectoryInput | None = None) -> SparseFric:
        """Identify the joint from training trajectories (and validation ones for AICc).

        Parameters
        ----------
        X : DataFrame, list of DataFrames or Trajectories, or 2-D array
            Training records: time t [s], position q [rad | m], torque tau [N·m | N] (see
            :mod:`sparsefric.frames`; a ``trajectory`` column splits a DataFrame).
        y : array-like, optional
            Measured torque [N·m | N] per row of ``X``, where ``X`` has no ``tau`` column.
        validate : same types as X, optional
            Validation records: AICc selects λ on them (default: on the training data).

        Returns
        -------
        SparseFric
            ``self``, fitted.
        """
        s = self.settings()  # a bad option is named before the data are read
        train = as_trajectories(X, y)
        val = optional_trajectories(validate, "validate")
        refuse_repeats(train, "X")
        refuse_repeats(val or [], "validate")
        check_records(s.preprocessor.cutoff_hz, s.preprocessor.torque_delay,
                      [*train, *(val or ())])
        self.result_, self.uncertainty_ = fit_joint(train, val, s)
        for message in self.result_.warnings:  # where a notebook shows them, as the CLI prints
            warnings.warn(message, FitWarning, stacklevel=2)
        return self

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "result_")

    def __sklearn_tags__(self) -> Tags:
        tags = super().__sklearn_tags__()
        tags.target_tags.required = False  # the torque may be a column of X
        return tags

    # ------------------------------------------------------------------ results
    @property
    def model_(self) -> JointModel:
        """The identified joint model."""
        return self.result_.model

    @property
    def static_model_(self) -> JointModel:
        """Step 1's static model."""
        return self.result_.static_model

    @property
    def lugre_model_(self) -> JointModel | None:
        """The LuGre model (also when the static one was kept as the result)."""
        return self.result_.lugre_model

    @property
    def terms_(self) -> pd.DataFrame:
        """Every candidate with its coefficient in :attr:`model_` and whether the model has it
        (``coefficient``, ``active``), step 1's beside them (``step1_coefficient``,
        ``step1_active``, ``static_coefficient``): the table terms.csv holds
        (:attr:`~sparsefric.result.IdentificationResult.final_terms`)."""
        return self.result_.final_terms

    @property
    def selection_(self) -> pd.DataFrame:
        """The λ sweep, one row per λ."""
        return self.result_.selection

    @property
    def history_(self) -> pd.DataFrame:
        """Outer-loop history of every σ0 start and refinement round."""
        return self.result_.history

    @property
    def validity_(self) -> ValidityRange:
        """Velocities, positions and torques of the data the model was identified on."""
        return self.result_.model.validity

    @property
    def warnings_(self) -> list[str]:
        """Everything the data or the fit leave uncertain, one message each."""
        return self.result_.warnings

    @property
    def converged_(self) -> bool:
        """Whether the kept LuGre run converged."""
        return self.result_.converged

    @property
    def convergence_reason_(self) -> str:
        """Why the iterations stopped."""
        return self.result_.convergence_reason

    def predict(self, X: TrajectoryInput, *, model: JointModel | None = None) -> np.ndarray:
        """Predicted torque τ̂ [N·m | N] of every row of ``X``, trajectories concatenated.

        ``X`` as in :meth:`fit` (its torque, if any, is not used); the records are
        differentiated as the training data were, and a value is predicted for every row:
        ``torque_delay`` moves the measured torque, which a prediction does not use. Rows of a
        piece between jumps too short to differentiate are NaN (with a warning). Samples of
        a jittering clock are first placed on it (:func:`~sparsefric.data.clock_slots`),
        dropped ones filled: such a record gets a value per sample of its clock. ``model``
        replaces the identified model.
        """
        return np.concatenate(self.predict_trajectories(X, model=model))

    def predict_trajectories(self, X: TrajectoryInput, *,
                             model: JointModel | None = None) -> list[np.ndarray]:
        """Predicted torque τ̂ [N·m | N] of each trajectory of ``X``, one array each, a value
        per row (:meth:`predict`): NaN, with a warning, at the rows of a piece between jumps
        of the time or the position too short to differentiate (fewer than
        :data:`~sparsefric.segments.MIN_PIECE` samples)."""
        check_is_fitted(self)
        trajectories = as_trajectories(X, torque=False)
        prep = self.result_.preprocessor.motion().prepare(trajectories)
        tau_hat, missing = per_row(prep.torque(model or self.model_), trajectories)
        if missing:
            where = ", ".join(t.name for t, v in zip(trajectories, tau_hat, strict=True)
                              if np.isnan(v).any())
            warnings.warn(f"{missing} of the {sum(map(len, trajectories))} rows are not "
                          f"predicted (NaN): in {where}, pieces between jumps of the time or "
                          f"the position shorter than {MIN_PIECE} samples, too short to "
                          "differentiate, or stretches with the drive off (the torque exactly "
                          "0 at rest)", UserWarning, stacklevel=user_stacklevel())
        return tau_hat

    def relative_error(self, X: TrajectoryInput, model: JointModel | None = None, *,
                       y: ArrayLike | None = None) -> float:
        """‖τ − τ̂‖/‖τ‖ [-] over all samples of ``X`` by ``model`` (default: the identified
        one), τ the measured torque (``y`` if given), aligned with ``torque_delay`` as the
        training data were (the samples the shift drops at a record's end are not scored)."""
        check_is_fitted(self)
        return self.result_.relative_error(as_trajectories(X, y), model)

    def score(self, X: TrajectoryInput, y: ArrayLike | None = None,
              sample_weight: ArrayLike | None = None) -> float:
        """Coefficient of determination R² [-] of the torque prediction.

        τ is ``y`` or the torque of ``X`` (scikit-learn's convention: 1 is a perfect
        prediction, 0 that of the mean torque), prepared as the training data were: aligned
        with ``torque_delay``, which drops the samples the shift takes beyond each record's
        end (a pause in a record makes it several records). ``sample_weight`` weighs these
        aligned samples, one weight each: fewer than the rows of ``X`` where the delay is not
        0.
        """
        check_is_fitted(self)
        prep = self.result_.prepare(as_trajectories(X, y))
        return float(r2_score(prep.tau_raw, np.concatenate(prep.torque(self.model_)),
                              sample_weight=sample_weight))

    def equations(self, precision: int = 3, *, unicode: bool = True) -> list[str]:
        """The identified model as equations with units (:meth:`JointModel.equations
        <sparsefric.model.JointModel.equations>`); ``unicode=False`` for ASCII."""
        check_is_fitted(self)
        return self.model_.equations(precision, unicode=unicode)

    def print_model(self, precision: int = 3, *, unicode: bool = True) -> None:
        """Print :meth:`equations`, one per line."""
        print("\n".join(self.equations(precision, unicode=unicode)))

    def simulate(self, tau: np.ndarray, q0: float, qd0: float = 0.0, dt: float = 1e-3,
                 substeps: int = 10) -> tuple[np.ndarray, np.ndarray]:
        """Free run of the identified equation of motion driven by ``tau`` [N·m].

        Returns q [rad] and q̇ [rad/s] at the samples of ``tau`` (period ``dt`` [s]). A run that
        leaves the model's validity range gives an
        :class:`~sparsefric.validity.OutsideValidityWarning`.
        """
        check_is_fitted(self)
        q, qd = free_run(self.model_, tau, q0, qd0, dt=dt, substeps=substeps)
        if message := self.model_.outside_message(q, qd):
            warnings.warn(message, OutsideValidityWarning, stacklevel=2)
        return q, qd

    def _repr_html_(self) -> str:
        """Jupyter display: the result's tables, or the options of an unfitted estimator."""
        if hasattr(self, "result_"):
            return results_html(self.result_)
        return unfitted_html(self.get_params())

    def _repr_mimebundle_(self, **kwargs) -> dict[str, str]:
        # scikit-learn's estimator diagram would take precedence over _repr_html_ in Jupyter
        return {"text/plain": repr(self), "text/html": self._repr_html_()}
