r"""Step 1: the static structure by SR3 with Newton updates of Ω_s and AICc (ALGORITHM.md §2).

On the samples where the joint slides (farther from every stop than the pre-sliding window of
:func:`sparsefric.preprocessing.choose_window`), the candidate library is swept over λ by
:func:`sparsefric.selection.sweep`; the model AICc selects is refitted with λ = 0 on every
sliding sample. The rigid-body columns (q̈, cos q, sin q, offset) are never thresholded: every
joint has inertia, and gravity and offset belong to the equation of motion, so sparse regression
selects among the friction terms only.

AICc scores training and validation sliding samples together (``DESIGN.md`` §15): the paper
scores the validation samples alone, which fails where the validation moves reach a regime the
training moves do not.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sparsefric.errors import SparsefricError
from sparsefric.feature_library import FeatureLibrary
from sparsefric.lugre import FrictionParams
from sparsefric.model import JointModel
from sparsefric.optimizers.sr3 import GramCache, SR3Newton, SR3Result, data_theta_bounds
from sparsefric.options import mention
from sparsefric.preprocessing import Prepared, choose_window
from sparsefric.selection import DEFAULT_RULE, SelectionRule, SweepResult, sweep, thin
from sparsefric.signals import Signals, concat_signals

#: The rigid-body terms: never thresholded, and frozen after step 2's first outer iteration.
RIGID_KINDS = ("inertia", "gravity_cos", "gravity_sin", "offset")
#: Fewest sliding training samples with which friction is worth identifying.
MIN_SLIDING_SAMPLES = 20


@dataclass(frozen=True)
class StaticTerms:
    """The columns of a static solution, by meaning (SI units).

    Attributes
    ----------
    rigid : dict
        ``inertia`` [kg·m²], ``gravity_cos``, ``gravity_sin``, ``offset`` [N·m] where active.
    viscous : tuple of (p, c_p)
        Viscous powers and coefficients [N·m·(s/rad)^p].
    coulomb : float
        f_c [N·m].
    stribeck : tuple of (δ, A)
        Stribeck exponents and amplitudes [N·m].
    omega : float
        Ω_s [rad/s].
    """

    rigid: dict[str, float]
    viscous: tuple[tuple[int, float], ...]
    coulomb: float
    stribeck: tuple[tuple[float, float], ...]
    omega: float

    @classmethod
    def from_solution(cls, library: FeatureLibrary, res: SR3Result) -> StaticTerms:
        """Sort the non-zero coefficients of ``res`` by the kind of their column."""
        rigid: dict[str, float] = {}
        viscous, stribeck, coulomb = [], [], 0.0
        for term, c in zip(library.terms(), res.coef, strict=True):
            if c == 0.0:
                continue
            if term.kind in RIGID_KINDS:
                rigid[term.kind] = float(c)
            elif term.kind == "viscous":
                viscous.append((int(term.param), float(c)))
            elif term.kind == "coulomb":
                coulomb = float(c)
            elif term.kind == "stribeck":
                stribeck.append((float(term.param), float(c)))
        return cls(rigid, tuple(viscous), coulomb, tuple(stribeck), res.omega)

    @property
    def g0(self) -> float:
        """g(0⁺) = f_c + ΣA [N·m or N]."""
        return self.coulomb + sum(a for _, a in self.stribeck)

    def joint_model(self, axis: str, tanh_k: float) -> JointModel:
        """The static :class:`~sparsefric.model.JointModel` of these terms."""
        r = self.rigid
        return JointModel(axis=axis, inertia=r.get("inertia", 0.0),
                          gravity_cos=r.get("gravity_cos", 0.0),
                          gravity_sin=r.get("gravity_sin", 0.0), offset=r.get("offset", 0.0),
                          kind="static", tanh_k=tanh_k, coulomb=self.coulomb,
                          stribeck_velocity=self.omega, stribeck=self.stribeck,
                          viscous=self.viscous)

    def friction_params(self, sigma0: float, tanh_k: float) -> FrictionParams:
        """LuGre parameters with this g(q̇) and τ_v, bristle stiffness ``sigma0``, σ1 = 0."""
        return FrictionParams(
            self.coulomb, self.omega, np.array([d for d, _ in self.stribeck]),
            np.array([a for _, a in self.stribeck]),
            np.array([float(p) for p, _ in self.viscous]),
            np.array([c for _, c in self.viscous]), float(sigma0), 0.0, tanh_k)


@dataclass
class StaticFit:
    """Step 1's outcome.

    Attributes
    ----------
    sweep : SweepResult
        The λ sweep and the model AICc selected.
    library : FeatureLibrary
        The candidates.
    window : float
        Pre-sliding window, a fraction of each trajectory's position span.
    sliding : ndarray of bool
        The training samples the static fits use.
    terms : StaticTerms
        The selected model refitted with λ = 0 on every sliding sample.
    theta_bounds : (float, float)
        Bounds on θ = ln Ω_s [ln(rad/s)] that the sliding samples resolve
        (:func:`~sparsefric.optimizers.sr3.data_theta_bounds`). The LuGre steps keep them: with
        every sample in their columns, the stops would let Ω_s fall to the differentiation
        noise.
    """

    sweep: SweepResult
    library: FeatureLibrary
    window: float
    sliding: np.ndarray
    terms: StaticTerms
    theta_bounds: tuple[float, float]


def scoring_data(x_fit: Signals, tau_fit: np.ndarray, val: Prepared | None,
                 window: float, pooled: bool = True) -> tuple[Signals, np.ndarray] | None:
    """The samples AICc scores step 1 on: training and validation sliding samples together
    (each thinned like the sweep), or with ``pooled=False`` the validation samples alone (the
    paper); None without validation data (training only)."""
    if val is None:
        return None
    parts = [thin(*val.subset(val.sliding_mask(window)))]
    if pooled:
        parts.insert(0, thin(x_fit, tau_fit))
    return concat_signals([x for x, _ in parts]), np.concatenate([t for _, t in parts])


def refit(library: FeatureLibrary, support: np.ndarray, x: Signals, tau: np.ndarray,
          theta: float, nu: float) -> StaticTerms:
    """λ = 0 on the ``support`` columns with every given sample, Ω_s started at e^θ."""
    sub = library.select(support)
    res = SR3Newton(threshold=0.0, nu=nu).fit(GramCache(sub, x, tau), theta)
    return StaticTerms.from_solution(sub, res)


def _no_sliding_message(prep: Prepared) -> str:
    """Why step 1 has almost no sliding samples: the user's pre-sliding distance [rad or m]
    where one was given (a distance beyond the moves leaves nothing), else the data."""
    if prep.presliding_distance is not None:
        return (f"{mention('presliding_distance', f'{prep.presliding_distance:g}')} leaves "
                "almost no sliding samples: the joint never moves that far from its stops "
                f"(at most {float(np.max(prep.stop_distance, initial=0.0)):.3g}, in the "
                "position's unit); "
                "give a smaller distance or leave it to the default")
    return ("the training data have almost no sliding motion: the joint never moves far "
            "enough from its stops to identify friction")


def fit_static(prep: Prepared, val: Prepared | None, library: FeatureLibrary, *,
               omega_starts: tuple[float, ...], nu: float, thresholds: np.ndarray | None,
               rule: SelectionRule = DEFAULT_RULE, sliding_window: bool = True,
               aic_data: str = "training+validation") -> StaticFit:
    """Step 1 on the training set ``prep`` (``val`` joins the AICc scoring).

    ``sliding_window=False`` fits every moving sample (window 0, the paper); ``aic_data`` is
    ``"validation"`` to score AICc on the validation samples alone (the paper).
    """
    rigid = [t.kind in RIGID_KINDS for t in library.terms()]
    window = choose_window(prep, library.select(rigid).evaluate(prep.signals, 0.0)[0]) \
        if sliding_window else 0.0
    sliding = prep.sliding_mask(window)
    if sliding.sum() < MIN_SLIDING_SAMPLES:
        raise SparsefricError(_no_sliding_message(prep))
    x_fit, tau_fit = prep.subset(sliding)
    pooled = aic_data == "training+validation"
    result = sweep(library, x_fit, tau_fit,
                   validate=scoring_data(x_fit, tau_fit, val, window, pooled),
                   omega_starts=omega_starts, nu=nu, thresholds=thresholds, rule=rule,
                   keep_kinds=RIGID_KINDS)
    if val is not None and pooled:
        result.validation_source = "training + validation"
    terms = refit(library, result.best.support, x_fit, tau_fit, result.best.theta, nu)
    return StaticFit(result, library, window, sliding, terms, data_theta_bounds(x_fit.qd))


def refit_terms(fit: StaticFit, prep: Prepared, nu: float) -> StaticTerms:
    """The terms step 1 selected, refitted on the sliding samples of ``prep`` (same window):
    the whole records once held-out blocks have chosen them (``DESIGN.md`` §26)."""
    x_fit, tau_fit = prep.subset(prep.sliding_mask(fit.window))
    best = fit.sweep.best
    return refit(fit.library, best.support, x_fit, tau_fit, best.theta, nu)


def first_outer(fit: StaticFit, prep: Prepared, nu: float) -> StaticTerms:
    """Outer iteration 1 of step 2: λ = 0 on the selected columns with ż = 0.

    The Coulomb column joins the selection: g(q̇) must keep a positive level in the LuGre steps
    (``DESIGN.md`` §8). When step 1 already selected it, this is the static refit itself.
    """
    coulomb = np.array([t.kind == "coulomb" for t in fit.library.terms()])
    support = fit.sweep.best.support
    if (support & coulomb).any():
        return fit.terms
    return refit(fit.library, support | coulomb, *prep.subset(fit.sliding),
                 fit.sweep.best.theta, nu)
