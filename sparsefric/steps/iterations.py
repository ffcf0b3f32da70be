r"""Steps 2 and 3: the outer/inner iterations that refine g(q̇), σ0 and σ1 (ALGORITHM.md §3).

Given the static structure of step 1 and the frozen rigid-body part, with τ_c = τ − I q̈ − a_c cos q
− a_s sin q − o the friction torque [N·m]:

* inner loop (step 3): integrate ż = q̇ − σ0|q̇|z/g_e(q̇) along the measured q̇ of each trajectory;
  least squares of τ_c on [u, u̇, active viscous columns] with u = σ0 z, u̇ = σ0 ż; σ0 ← σ0 ξ_u and
  σ1 = σ0 ξ_u̇ (σ0 before the update: u̇ was built with it, so this is the fitted σ1 exactly; the
  paper's eq. 19 uses the updated σ0, identical at convergence where ξ_u = 1). Repeat while the
  training error E_τ decreases (:func:`walk_sigma0`), or find where that walk ends by a line
  search in σ0 (:func:`search_sigma0`, ``inner_rule="search"``).
* outer loop (step 2): least squares (SR3 with λ = 0) of τ_c on the active viscous columns,
  m(t)·[1, e^{−|q̇/Ω_s|^{δ_i}}] and ż, with m = s(q̇)(1 − ż/q̇) = σ0 z/g(q̇) (division-free; g of
  the previous iteration, with which z was integrated), and Newton updates of Ω_s. Gives g and τ_v.
* stop when |σ0,new − σ0,old| ≤ tol·σ0,old and g(q̇) has settled (``DESIGN.md`` §7).
* then polish σ0 (not in the paper, see :func:`polish_sigma0`): a 1-D search of the prediction
  error around the fixed point, because σ0 ← σ0 ξ_u barely moves where sliding dominates.

:func:`multistart` runs the iterations from several initial σ0 (the paper tried 1e3–1e5 N·m/rad)
and keeps the best admissible run. The Coulomb column is always kept here, even if step 1 dropped
it: g(q̇) divides the bristle dynamics and must stay positive at all speeds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np
from scipy.optimize import minimize_scalar

from sparsefric.differentiation import sample_average, torque_average
from sparsefric.feature_library import (
    FeatureLibrary,
    SignalLibrary,
    StribeckLibrary,
    ViscousLibrary,
)
from sparsefric.lugre import (
    G_FLOOR,
    FrictionParams,
    integrate_z,
    lugre_torque,
    stribeck_g,
    viscous_torque,
)
from sparsefric.optimizers.constrained import FixedColumnsLstsq, shape_constraints, speed_grid
from sparsefric.optimizers.sr3 import GramCache, SR3Newton
from sparsefric.selection import thin
from sparsefric.signals import Signals
from sparsefric.threads import in_parallel

#: Largest factor by which one inner loop's line search moves σ0 (:func:`search_sigma0`).
SEARCH_REACH = 1e3
#: Precision of that search in ln σ0 (a tenth of the outer loop's σ0 tolerance).
SEARCH_XATOL = 1e-4
#: Initial σ0 [N·m/rad] of the multi-start (the main paper's values, for its joint).
DEFAULT_SIGMA0_STARTS = (1e3, 5e3, 1e4, 5e4, 1e5)
#: Pre-sliding deflections z_ss = g(0)/σ0 [rad or m] behind the default σ0 starts. For a joint
#: with g(0) = 25 N·m (data/example, the scale of the paper's joint) they give the paper's starts
#: 1e3 … 1e5 N·m/rad, i.e. deflections of 0.25–25 mrad; a start scaled with g(0) carries that
#: physics to weaker or stronger joints. Linear guides and screws deflect 2.5–250 µm before they
#: slide, so for a prismatic axis the deflections are 100× smaller in metres (σ0 ~ 10⁵–10⁷ N/m).
PRESLIDING_DEFLECTIONS = {"revolute": tuple(25.0 / s for s in DEFAULT_SIGMA0_STARTS),
                          "prismatic": tuple(0.25 / s for s in DEFAULT_SIGMA0_STARTS)}


def default_sigma0_starts(g0: float, axis: str) -> tuple[float, ...]:
    """σ0 starts [N·m/rad or N/m] g(0)/z_ss for the :data:`PRESLIDING_DEFLECTIONS` of ``axis``.

    ``g0`` is the static break-away level f_c + Σ A_i [N·m or N] of step 1.
    """
    return tuple(float(g0) / d for d in PRESLIDING_DEFLECTIONS[axis])


@dataclass(frozen=True)
class Structure:
    """The friction terms step 1 kept: viscous powers and Stribeck exponents."""

    powers: tuple[int, ...]
    deltas: tuple[float, ...]
    tanh_k: float = 0.0
    axis: str = "revolute"  #: for the units of the coefficients


_REGRESSIONS = "_regressions"
#: Fixed-column regressions a :class:`FrictionData` keeps (one per set of viscous powers).
MAX_REGRESSIONS = 4


@dataclass(frozen=True)
class FrictionData:
    """The torque the iterations explain, along the measured motion.

    Attributes
    ----------
    x : Signals
        q [rad], q̇ [rad/s], q̈ [rad/s²] of every sample (trajectories stacked).
    tau : ndarray
        The torque to explain [N·m]: the measured τ when ``rigid_columns`` are given, else the
        friction torque itself.
    bounds : list of (start, stop)
        Slice of each trajectory (z is integrated per trajectory).
    dt : list of float
        Sample period [s] of each trajectory.
    rigid_columns : ndarray, optional
        (n, r) rigid-body columns [q̈, cos q, sin q, 1 …] of the terms step 1 kept [physical units].
    rigid : ndarray, optional
        (r,) their coefficients (I [kg·m²], a_c, a_s, offset [N·m] …).
    theta_bounds : (float, float), optional
        Bounds on θ = ln Ω_s [ln(rad/s)]: what the steadily sliding samples resolve.
    g0_limit : float
        Largest plausible g(0) = f_c + ΣA [N·m]: a multiple of the largest friction torque in
        the data (a breakaway the motor never applied cannot be seen in its torque).
    averaged : tuple of bool, optional
        The inner least squares (rigid body, σ0 z, σ1 ż, viscous) fit the sample-averaged
        equation: τ and every column averaged over ±h like the q̈ of a second difference of
        positions (:func:`~sparsefric.differentiation.sample_average`), except the rigid
        columns marked False here (q̈ itself, already that average). None: sample by sample.
    held_torque : bool
        In that equation τ is a command held until the next sample, averaged by
        :func:`~sparsefric.differentiation.held_average` (``DESIGN.md`` §68).
    """

    x: Signals
    tau: np.ndarray
    bounds: list[tuple[int, int]]
    dt: list[float]
    rigid_columns: np.ndarray | None = None
    rigid: np.ndarray | None = None
    theta_bounds: tuple[float, float] | None = None
    g0_limit: float = math.inf
    averaged: tuple[bool, ...] | None = None
    held_torque: bool = False

    @cached_property
    def tau_c(self) -> np.ndarray:
        """τ_c = τ − rigid-body torque [N·m], the friction to explain."""
        if not self.n_rigid:
            return self.tau
        return self.tau - self.rigid_columns @ self.rigid

    @cached_property
    def shape_speeds(self) -> np.ndarray:
        """The speeds [rad/s] at which τ_v must not fall (:func:`speed_grid` of q̇)."""
        return speed_grid(self.x.qd)

    @property
    def n_rigid(self) -> int:
        """Number of rigid-body columns."""
        return 0 if self.rigid is None else len(self.rigid)

    def with_rigid(self, rigid: np.ndarray | None) -> FrictionData:
        """The same data with other rigid-body coefficients (None: keep these)."""
        if rigid is None or not self.n_rigid:
            return self
        out = replace(self, rigid=np.asarray(rigid, dtype=float))
        if "shape_speeds" in self.__dict__:  # the motion is the same: keep the grid
            out.__dict__["shape_speeds"] = self.shape_speeds
        # regressions of τ on the rigid columns do not depend on the coefficients
        out.__dict__[_REGRESSIONS] = {k: v for k, v in self.__dict__.get(_REGRESSIONS, {}).items()
                                      if k[1]}
        return out

    def average(self, columns: np.ndarray) -> np.ndarray:
        """``columns`` (samples along axis 0) as the inner least squares see them: averaged
        where the data are :attr:`averaged`, else as they are."""
        return columns if self.averaged is None else sample_average(columns, self.bounds)

    def average_torque(self) -> np.ndarray:
        """τ [N·m] as the inner least squares see it: :meth:`average`, or the held command's
        average where :attr:`held_torque`."""
        if self.averaged is None:
            return self.tau
        return torque_average(self.tau, self.bounds, self.held_torque)

    def regression(self, powers: tuple[int, ...], refit_rigid: bool) -> FixedColumnsLstsq:
        """Least squares on the columns [viscous q̇^p…, (rigid…)] that every inner-loop fit and
        σ0 refit shares, and their target (:func:`_regression`); built once per set of viscous
        ``powers`` (the last :data:`MAX_REGRESSIONS` are kept)."""
        key = (powers, bool(refit_rigid and self.n_rigid))
        cache = self.__dict__.setdefault(_REGRESSIONS, {})
        if key not in cache:
            y, R = _regression(self, refit_rigid)
            while len(cache) >= MAX_REGRESSIONS:
                cache.pop(next(iter(cache)))
            cache[key] = FixedColumnsLstsq(
                np.column_stack([self.average(_viscous_columns(self.x.qd, powers)), R]), y)
        return cache[key]


@dataclass(frozen=True)
class IterationSettings:
    """Limits and tolerances of the iterations (see :func:`run_iterations`)."""

    nu: float = 0.01
    max_outer: int = 30
    max_inner: int = 50
    tol: float = 1e-3
    xi_tol: float = 0.05
    g_tol: float = 3e-3
    #: re-estimate the rigid body (I, a_c, a_s, offset) with the friction in every inner loop
    refit_rigid: bool = True
    #: finish every run with :func:`polish_sigma0` (not in the paper)
    polish: bool = True
    #: what an inner loop returns (:data:`~sparsefric.options.INNER_RULES`, ``DESIGN.md`` §27)
    inner_rule: str = "best"
    #: how Ω_s moves in step 2's regression (:data:`~sparsefric.options.OMEGA_STEPS`, §28)
    omega_step: str = "newton"


@dataclass
class IterationResult:
    """Outcome of one run of the iterations from one initial σ0.

    Attributes
    ----------
    params : FrictionParams
        The LuGre parameters of the lowest training error reached.
    error : float
        E_τ/‖τ‖ of that model's prediction on the training data.
    history : list of dict
        One row per outer iteration.
    converged : bool
    reason : str
        Why it stopped.
    sigma0_init : float
    rigid : ndarray, optional
        The rigid-body coefficients fitted with ``params`` (order of
        :attr:`FrictionData.rigid`); None where the data have none.
    violations : tuple of str
        Why the model is physically inadmissible or implausible (:func:`violations`).
    fitted_on : str
        The records the coefficients were last fitted on where they are more than the training
        records (e.g. ``"the training and validation records"``); empty otherwise.
    """

    params: FrictionParams
    error: float
    history: list[dict] = field(default_factory=list)
    converged: bool = False
    reason: str = ""
    sigma0_init: float = 0.0
    rigid: np.ndarray | None = None
    violations: tuple[str, ...] = ()
    fitted_on: str = ""

    @property
    def admissible(self) -> bool:
        """Physically admissible and plausible: no :attr:`violations`."""
        return not self.violations


def violations(params: FrictionParams, data: FrictionData, error: float) -> tuple[str, ...]:
    """What makes a LuGre model inadmissible (σ0 ≤ 0, σ1 < 0, a non-finite error) or implausible
    for the data: a g(0) far above any friction torque the data hold, or a Stribeck velocity on
    the lower bound of what the sliding samples resolve (a "Stribeck term at rest", which only
    acts on the samples at standstill and fits the stops, not the friction curve)."""
    out = []
    if not params.sigma0 > 0:
        out.append(f"σ0 = {params.sigma0:.4g} ≤ 0")
    if not params.sigma1 >= 0:
        out.append(f"σ1 = {params.sigma1:.4g} < 0 is physically inadmissible")
    if not np.isfinite(error):
        out.append("the prediction error is not finite")
    g0 = float(params.coulomb + np.sum(params.amplitudes))
    if g0 > data.g0_limit:
        out.append(f"g(0) = f_c + ΣA = {g0:.4g} exceeds {data.g0_limit:.4g}, far above the "
                   "largest friction torque in the data")
    low = None if data.theta_bounds is None else data.theta_bounds[0]
    if (low is not None and np.any(params.amplitudes > 0)
            and np.log(params.stribeck_velocity) < low + 0.01):
        out.append(f"Ω_s = {params.stribeck_velocity:.3g} sits on the lower bound of what the "
                   "sliding samples resolve")
    return tuple(out)


def integrate_all(qd: np.ndarray, bounds: list[tuple[int, int]], dt: list[float],
                  params: FrictionParams, g: np.ndarray | None = None
                  ) -> tuple[np.ndarray, np.ndarray]:
    """z [rad] and ż [rad/s] of every trajectory, each integrated on its own from the default
    start of :func:`sparsefric.lugre.integrate_z`.

    ``g``: :func:`~sparsefric.lugre.stribeck_g` of ``qd`` and ``params`` [N·m] where already
    computed (it does not change with σ0 and costs more than the integration)."""
    g = stribeck_g(qd, params) if g is None else g
    z = np.empty_like(qd)
    zd = np.empty_like(qd)
    for (a, b), h in zip(bounds, dt, strict=True):
        z[a:b], zd[a:b] = integrate_z(qd[a:b], h, params, g=g[a:b])
    return z, zd


def _shape(data: FrictionData, first_viscous: int, n_columns: int, powers: tuple[int, ...],
           nonneg: tuple[int, ...]) -> np.ndarray:
    """Constraints C ξ ≥ 0 of a regression with the viscous columns at ``first_viscous`` on:
    τ_v non-decreasing over the shape grid, and the ``nonneg`` coefficients ≥ 0."""
    return shape_constraints(n_columns, {first_viscous + i: p for i, p in enumerate(powers)},
                             data.shape_speeds, nonneg)


def _viscous_columns(qd: np.ndarray, powers: tuple[int, ...]) -> np.ndarray:
    return np.column_stack([qd**p for p in powers]) if powers else np.zeros((len(qd), 0))


def predicted_friction(params: FrictionParams, data: FrictionData,
                       z_zd: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """τ̂_f of the LuGre model integrated along each trajectory [N·m].

    ``z_zd``: z and ż of ``params`` if already integrated (:func:`integrate_all`).
    """
    x = data.x
    if z_zd is None:
        return np.concatenate([lugre_torque(x.qd[a:b], h, params)
                               for (a, b), h in zip(data.bounds, data.dt, strict=True)])
    return params.sigma0 * z_zd[0] + params.sigma1 * z_zd[1] + viscous_torque(x.qd, params)


def prediction_error(params: FrictionParams, data: FrictionData,
                     z_zd: tuple[np.ndarray, np.ndarray] | None = None) -> float:
    """‖τ_c − τ̂_f‖ of the LuGre model integrated along each trajectory [N·m]."""
    return float(np.linalg.norm(data.tau_c - predicted_friction(params, data, z_zd)))


@dataclass(frozen=True)
class InnerResult:
    """The best model of an inner loop, with its z [rad] and ż [rad/s] along the data."""

    params: FrictionParams
    error: float  #: regression error E_τ [N·m] of the fit with these z, ż
    xi_u: float  #: ξ_u of that fit
    iterations: int
    z: np.ndarray
    zd: np.ndarray
    rigid: np.ndarray | None = None  #: rigid-body coefficients of that fit


def _regression(data: FrictionData, refit_rigid: bool) -> tuple[np.ndarray, np.ndarray]:
    """(target, rigid columns) of the inner regressions: τ on the rigid columns too, or τ_c;
    averaged as :attr:`FrictionData.averaged` says."""
    tau, R = data.average_torque(), data.rigid_columns
    if data.n_rigid and data.averaged is not None:
        R = R.copy()
        keep = np.asarray(data.averaged, dtype=bool)
        R[:, keep] = data.average(R[:, keep])
    if refit_rigid and data.n_rigid:
        return tau, R
    if data.n_rigid:
        tau = tau - R @ data.rigid
    return tau, np.zeros((len(data.tau), 0))


@dataclass(frozen=True)
class InnerFit:
    """One least squares of the inner loop: σ0 [N·m/rad], E_τ [N·m], [ξ_u, ξ_u̇, viscous…
    (, rigid…)], and the z [rad], ż [rad/s] it was made with."""

    sigma0: float
    error: float
    coef: np.ndarray
    z: np.ndarray
    zd: np.ndarray


class InnerFits:
    """The inner loop's least squares at any σ0, g(q̇) fixed; remembers the lowest-error fit.

    z depends on σ0 and g only, and the fit is linear least squares, so E_τ is a function of σ0
    alone within an inner loop.
    """

    def __init__(self, params: FrictionParams, data: FrictionData, refit_rigid: bool,
                 g: np.ndarray):
        self.params, self.data, self.g = params, data, g
        self.powers = tuple(int(p) for p in params.powers)
        self.fixed = data.regression(self.powers, refit_rigid)
        self.A = self.fixed.design(2)  # [u, u̇, viscous (, rigid)]
        self.C = _shape(data, 2, self.A.shape[1], self.powers, (1,))
        self.best: InnerFit | None = None
        self.count = 0

    def __call__(self, sigma0: float) -> InnerFit:
        data, A = self.data, self.A
        z, zd = integrate_all(data.x.qd, data.bounds, data.dt,
                              replace(self.params, sigma0=sigma0), self.g)
        np.multiply(sigma0, z, out=A[:, 0])
        np.multiply(sigma0, zd, out=A[:, 1])
        if data.averaged is not None:
            A[:, :2] = data.average(A[:, :2])
        coef, err = self.fixed.solve(A, 2, self.C)
        fit = InnerFit(sigma0, err, coef, z, zd)
        self.count += 1
        if self.best is None or err < self.best.error:
            self.best = fit
        return fit

    def error_at(self, log_sigma0: float) -> float:
        """E_τ [N·m] of the fit at σ0 = exp(``log_sigma0``)."""
        return self(float(np.exp(log_sigma0))).error

    def params_of(self, fit: InnerFit) -> FrictionParams:
        """The model of ``fit``: its σ0, σ1 = σ0 ξ_u̇ and viscous coefficients."""
        n = len(self.powers)
        return replace(self.params, sigma0=fit.sigma0, sigma1=fit.sigma0 * float(fit.coef[1]),
                       coefficients=fit.coef[2:2 + n].copy())

    def rigid_of(self, fit: InnerFit) -> np.ndarray | None:
        """The rigid-body coefficients of ``fit`` (the data's own where they were not refitted)."""
        n = 2 + len(self.powers)
        return fit.coef[n:].copy() if len(fit.coef) > n else self.data.rigid


def _update(fit: InnerFit) -> float:
    """σ0 ξ_u, the eq. 18 update of ``fit`` [N·m/rad] (NaN where it is not a stiffness)."""
    sigma0 = fit.sigma0 * float(fit.coef[0])
    return sigma0 if np.isfinite(sigma0) and sigma0 > 0 else math.nan


def walk_sigma0(fits: InnerFits, sigma0: float, max_fits: int
                ) -> tuple[InnerFit, InnerFit | None]:
    """The paper's inner loop: σ0 ← σ0 ξ_u while E_τ falls. Returns the lowest-error fit and
    the fit before it, whose update led there (None for the first fit)."""
    best, before = fits(sigma0), None
    while fits.count < max_fits and math.isfinite(sigma0 := _update(best)):
        fit = fits(sigma0)
        if not fit.error < best.error:
            break
        best, before = fit, best
    return best, before


def search_sigma0(fits: InnerFits, sigma0: float, max_fits: int) -> InnerFit:
    r"""Where the walk of :func:`walk_sigma0` ends, found by a line search: the first minimum of
    E_τ(σ0) in the direction of the update σ0 ← σ0 ξ_u.

    Steps in ln σ0 of ln ξ_u (the walk's first step), doubled while E_τ falls, bracket the
    minimum; a bounded Brent search (:data:`SEARCH_XATOL`) finds it. Why: where ξ_u sits near 1
    the walk creeps (0.1–2 % per fit: on a 4-record joint whose E_τ falls all the way from
    σ0 = 833 to 1.7e4 N·m/rad, 1500 fits — 30 outer iterations capped at 50 fits each — went
    from 833 to 1172), and a walk cut off by the cap ends wherever the cap falls. The search
    moves at most a factor :data:`SEARCH_REACH` and makes at most ``max_fits`` fits.
    """
    first = fits(sigma0)
    target = _update(first)
    if not (math.isfinite(first.error) and math.isfinite(target)) or target == sigma0:
        return first
    t0 = math.log(sigma0)
    step = math.log(target) - t0
    lo, mid, e_mid, t = t0, t0, first.error, t0
    while abs(t - t0) < math.log(SEARCH_REACH) and fits.count < max_fits:
        t = t0 + step
        e = fits.error_at(t)
        if not e < e_mid:
            break
        lo, mid, e_mid = mid, t, e
        step *= 2.0
    else:
        return fits.best
    if mid == t0:
        return first
    minimize_scalar(fits.error_at, bounds=(min(lo, t), max(lo, t)), method="bounded",
                    options={"xatol": SEARCH_XATOL, "maxiter": max(1, max_fits - fits.count)})
    return fits.best


def inner_loop(params: FrictionParams, data: FrictionData, max_inner: int = 50,
               refit_rigid: bool = True, rule: str = "best",
               g: np.ndarray | None = None) -> InnerResult:
    """Step 3: integrate z, fit [u, u̇, viscous (, rigid body)], move σ0 by σ0 ← σ0 ξ_u while
    the error falls; at most ``max_inner`` fits.

    ``rule="best"`` walks (:func:`walk_sigma0`) and returns the parameters with which the
    lowest-error fit was made (its σ0; σ1 and the viscous terms of the fit before it).
    ``rule="paper"`` walks and returns the eq. 18–19 update of the lowest-error fit (σ0,new =
    σ0 ξ_u, σ1 = σ0,new ξ_u̇, its viscous terms), z integrated anew with it. ``rule="search"``
    finds where the walk ends by a line search (:func:`search_sigma0`) and returns the
    lowest-error fit's own model (σ1 = σ0 ξ_u̇).

    With ``refit_rigid`` the rigid-body columns join the least squares on every sample, with z
    integrated: the inertia is then estimated against the friction's pre-sliding transients,
    which carry most of the q̈ information (``DESIGN.md`` §24). σ1 ≥ 0 and a non-decreasing
    τ_v are constraints of the fit. ``g``: g(q̇) of ``params`` [N·m] if already computed (the
    loop changes σ0 only, so g stays).
    """
    g = stribeck_g(data.x.qd, params) if g is None else g
    fits = InnerFits(params, data, refit_rigid, g)
    if rule == "search":
        best = search_sigma0(fits, params.sigma0, max_inner)
        made_with = fits.params_of(best)
    else:
        best, before = walk_sigma0(fits, params.sigma0, max_inner)
        made_with = (params if before is None else
                     replace(fits.params_of(before), sigma0=best.sigma0))
    result = InnerResult(made_with, best.error, float(best.coef[0]), fits.count, best.z,
                         best.zd, fits.rigid_of(best))
    if rule == "paper" and math.isfinite(new := _update(best)):
        update = replace(fits.params_of(best), sigma0=new, sigma1=new * float(best.coef[1]))
        z, zd = integrate_all(data.x.qd, data.bounds, data.dt, update, g)
        result = replace(result, params=update, z=z, zd=zd)
    return result


def polish_sigma0(params: FrictionParams, data: FrictionData, span: float = 3.0,
                  max_moves: int = 4, refit_rigid: bool = True
                  ) -> tuple[FrictionParams, float, np.ndarray | None]:
    """σ0 [N·m/rad] minimising the LuGre prediction error, searched within a factor ``span`` of
    ``params`` and re-centred (at most ``max_moves`` searches) while it ends on the bracket's edge.

    Each trial σ0 is :func:`refit_at_sigma0`. Returns the best parameters, their error
    ‖τ_c − τ̂_f‖ [N·m] and rigid-body coefficients (bounded Brent search in ln σ0).

    Why: during steady sliding u = σ0 z ≈ g(q̇) whatever σ0 is, so ξ_u stays within a few per
    mille of 1 over decades of σ0 and the paper's update σ0 ← σ0 ξ_u stops near its start, while
    the prediction error, which also sees the pre-sliding transients, has a clear minimum
    (``DESIGN.md`` §14).
    """
    g = stribeck_g(data.x.qd, params)  # σ0 alone changes
    refit = LinearRefit(params.powers, data, refit_rigid)

    def fit(log_sigma0: float) -> tuple[FrictionParams, float, np.ndarray | None]:
        return refit(replace(params, sigma0=float(np.exp(log_sigma0))), g)[:3]

    centre, width = np.log(params.sigma0), np.log(span)
    for _ in range(max_moves):
        found = float(minimize_scalar(lambda ls: fit(ls)[1],
                                      bounds=(centre - width, centre + width), method="bounded",
                                      options={"xatol": 1e-3}).x)
        at_edge = abs(abs(found - centre) - width) < 0.01 * width
        centre = found
        if not at_edge:
            break
    return fit(centre)


def refit_at_sigma0(params: FrictionParams, sigma0: float, data: FrictionData,
                    refit_rigid: bool = True, g: np.ndarray | None = None
                    ) -> tuple[FrictionParams, float, np.ndarray | None]:
    """The model of ``params`` with bristle stiffness ``sigma0`` [N·m/rad]: z integrated, then σ1,
    the viscous coefficients (and, with ``refit_rigid``, the rigid body) refitted by least
    squares of τ − σ0 z on [ż, viscous columns (, rigid columns)] under the constraints of
    :func:`inner_loop`; g(q̇) kept (``g``: its values [N·m] if already computed). Returns the
    parameters, the norm [N·m] of that least squares' residual (‖τ_c − τ̂_f‖ where the data
    are not averaged) and the rigid-body coefficients."""
    refit = LinearRefit(params.powers, data, refit_rigid)
    return refit(replace(params, sigma0=float(sigma0)), g)[:3]


class LinearRefit:
    """The linear parameters of a LuGre model (σ1, the viscous coefficients ``powers`` and,
    with ``refit_rigid``, the rigid body) by the constrained least squares of
    :func:`refit_at_sigma0`, for any σ0 and g(q̇): the design matrix and the constraints are
    built once, for the many models a search evaluates."""

    def __init__(self, powers: Sequence[int], data: FrictionData, refit_rigid: bool = True):
        self.data, self.powers = data, tuple(int(p) for p in powers)
        self.fixed = data.regression(self.powers, refit_rigid)
        self.A = self.fixed.design(1)  # [ż, viscous (, rigid)]
        self.C = _shape(data, 1, self.A.shape[1], self.powers, (0,))

    def __call__(self, trial: FrictionParams, g: np.ndarray | None = None
                 ) -> tuple[FrictionParams, float, np.ndarray | None, np.ndarray]:
        """``trial`` (its σ0 and g(q̇); ``g``: the latter's values [N·m] if already computed)
        with its linear parameters refitted: the parameters, the residual norm [N·m], the
        rigid-body coefficients and the residual τ̂ − τ [N·m] itself, per sample."""
        data, A = self.data, self.A
        z, zd = integrate_all(data.x.qd, data.bounds, data.dt, trial, g)
        A[:, 0] = data.average(zd)
        y = self.fixed.y - trial.sigma0 * data.average(z)
        coef, residual = self.fixed.fit(A, 1, self.C, y)
        n = len(self.powers)
        trial = replace(trial, sigma1=float(coef[0]), coefficients=coef[1:1 + n].copy())
        rigid = coef[1 + n:].copy() if len(coef) > 1 + n else data.rigid
        return trial, float(np.linalg.norm(residual)), rigid, residual


def outer_library(structure: Structure) -> FeatureLibrary:
    """Step-2 columns: active viscous powers, m·[1, E_δ…] and ż."""
    axis = structure.axis
    return (ViscousLibrary(structure.powers, axis=axis)
            + StribeckLibrary(structure.deltas, structure.tanh_k, axis=axis)
            + SignalLibrary(["zdot"], axis=axis))


def dynamic_signals(params: FrictionParams, data: FrictionData,
                    z_zd: tuple[np.ndarray, np.ndarray] | None = None,
                    g: np.ndarray | None = None) -> Signals:
    """Signals with the step-2 multiplier m = σ0 z/g(q̇) and ż of ``params`` (integrated here
    unless given as ``z_zd``; ``g``: g(q̇) [N·m] if already computed)."""
    x = data.x
    g = stribeck_g(x.qd, params) if g is None else g
    z, zd = integrate_all(x.qd, data.bounds, data.dt, params, g) if z_zd is None else z_zd
    m = params.sigma0 * z / np.maximum(g, G_FLOOR)  # as integrate_z
    return Signals(x.q, x.qd, x.qdd, multiplier=m, extra={"zdot": zd})


def params_from_coefficients(params: FrictionParams, structure: Structure,
                             coef: np.ndarray, omega: float) -> FrictionParams:
    """Friction parameters from step-2 coefficients [viscous…, f_c, A…, σ1]."""
    n_v, n_s = len(structure.powers), len(structure.deltas)
    return replace(params, powers=np.array(structure.powers, dtype=float),
                   coefficients=coef[:n_v].copy(), coulomb=float(coef[n_v]),
                   deltas=np.array(structure.deltas, dtype=float),
                   amplitudes=coef[n_v + 1:n_v + 1 + n_s].copy(), stribeck_velocity=omega,
                   sigma1=float(coef[-1]))


def outer_fit(params: FrictionParams, structure: Structure, data: FrictionData, nu: float,
              z_zd: tuple[np.ndarray, np.ndarray] | None = None,
              g: np.ndarray | None = None, omega_step: str = "newton") -> FrictionParams:
    """Step 2: refit g(q̇), τ_v and σ1 with the ż of ``params``; Newton updates of Ω_s.

    The regression uses at most :data:`~sparsefric.selection.MAX_ROWS` rows (uniform stride,
    as the sweeps); the inner loop then refits σ0, σ1 and τ_v on every sample. ``g``: g(q̇) of
    ``params`` [N·m] if already computed; ``omega_step``: how Ω_s moves (:class:`SR3Newton`).
    """
    signals = dynamic_signals(params, data, z_zd, g)
    library = outer_library(structure)
    res = SR3Newton(threshold=0.0, nu=nu, theta_bounds=data.theta_bounds,
                    omega_step=omega_step).fit(
        GramCache(library, *thin(signals, data.tau_c)), np.log(params.stribeck_velocity))
    return params_from_coefficients(params, structure, res.coef, res.omega)


def _stop_reason(params: FrictionParams, xi_u: float, s: IterationSettings) -> tuple[bool, str]:
    """(converged, reason) of an outer loop whose σ0 and g(q̇) stopped moving."""
    if abs(xi_u - 1.0) <= s.xi_tol:
        return True, (f"σ0 and g(q̇) changed by less than {s.tol:g} and {s.g_tol:g} (relative) "
                      f"and ξ_u = {xi_u:.4f}")
    return False, (f"σ0 stalled at {params.sigma0:.4g} N·m/rad with ξ_u = {xi_u:.3f} ≠ 1: "
                   "the training error rose at every update")


def run_iterations(start: FrictionParams, structure: Structure, data: FrictionData,
                   settings: IterationSettings = IterationSettings(),
                   tau_norm: float = 1.0) -> IterationResult:
    """Outer/inner iterations from ``start`` (its σ0 is the initial value).

    Converged when σ0 changes by at most ``tol`` (relative) between outer iterations with
    |ξ_u − 1| ≤ ``xi_tol`` (the fixed point of the σ0 update) and g(q̇) at the data's speeds by
    at most ``g_tol`` (relative RMS); a σ0 that stops moving with ξ_u away from 1 is reported as
    stalled, not converged. ``tau_norm`` [N·m] scales the errors of the history and the result.
    The g condition is ours (ALGORITHM.md stops on σ0 alone; ``DESIGN.md`` §7). The rigid-body
    coefficients of ``data`` are the start; with ``settings.refit_rigid`` each inner loop
    re-estimates them.
    """
    s = settings
    params = start
    history: list[dict] = []
    best = (np.inf, start, data.rigid)
    reason = f"σ0 did not converge within {s.max_outer} outer iterations"
    converged = False
    g_old, g = None, stribeck_g(data.x.qd, params)
    for k in range(1, s.max_outer + 1):
        sigma0_old = params.sigma0
        g_change = np.inf if g_old is None else float(
            np.linalg.norm(g - g_old) / np.linalg.norm(g))
        inner = inner_loop(params, data, s.max_inner, s.refit_rigid, s.inner_rule, g)
        params, err, xi_u = inner.params, inner.error, inner.xi_u
        data = data.with_rigid(inner.rigid)
        pred = prediction_error(params, data, (inner.z, inner.zd))
        history.append(_history_row(k, err, pred, inner, g_change, tau_norm))
        if pred < best[0]:
            best = (pred, params, data.rigid)
        if not np.isfinite(err):
            reason = "the training error became non-finite"
            break
        if abs(params.sigma0 - sigma0_old) <= s.tol * sigma0_old and g_change <= s.g_tol:
            converged, reason = _stop_reason(params, xi_u, s)
            break
        params = outer_fit(params, structure, data, s.nu, (inner.z, inner.zd), g, s.omega_step)
        g_old, g = g, stribeck_g(data.x.qd, params)
        if not np.all(g > 0):
            reason = "g(q̇) became non-positive; kept the last valid model"
            break
    if s.polish:
        best, reason = _polish(best, data, s, reason, history, tau_norm)
    found = violations(best[1], data, best[0])
    if found:
        reason += "; " + "; ".join(found)
    return IterationResult(best[1], best[0] / tau_norm, history, converged, reason,
                           start.sigma0, best[2], found)


def _history_row(k: int, err: float, pred: float, inner: InnerResult, g_change: float,
                 tau_norm: float) -> dict:
    p = inner.params
    return {"outer": k, "error_rel": err / tau_norm, "prediction_error_rel": pred / tau_norm,
            "xi_u": inner.xi_u, "sigma0": p.sigma0, "sigma1": p.sigma1,
            "omega_s": p.stribeck_velocity, "coulomb": p.coulomb,
            "inner_iterations": inner.iterations, "g_change": g_change}


def _polish(best: tuple, data: FrictionData, s: IterationSettings, reason: str,
            history: list[dict], tau_norm: float) -> tuple[tuple, str]:
    """:func:`polish_sigma0` of the best model so far; kept if it predicts better."""
    polished, pred, rigid = polish_sigma0(best[1], data.with_rigid(best[2]),
                                          refit_rigid=s.refit_rigid)
    if not (pred < best[0] and (polished.sigma1 >= 0 or best[1].sigma1 < 0)):
        return best, reason
    reason += (f"; σ0 polished from {best[1].sigma0:.4g} to {polished.sigma0:.4g} by a 1-D "
               "search of the prediction error")
    history.append({**history[-1], "outer": history[-1]["outer"] + 1,
                    "prediction_error_rel": pred / tau_norm, "sigma0": polished.sigma0,
                    "sigma1": polished.sigma1, "inner_iterations": 0})
    return (pred, polished, rigid), reason


def run_residual(run: IterationResult, data: FrictionData) -> np.ndarray:
    """τ_c − τ̂_f [N·m] of ``run``'s model, with its own rigid body, on every sample of
    ``data``."""
    data = data.with_rigid(run.rigid)
    return data.tau_c - predicted_friction(run.params, data)


def run_error(run: IterationResult, data: FrictionData) -> float:
    """‖τ_c − τ̂_f‖ [N·m] of ``run``'s model, with its own rigid body, on ``data``
    (:func:`run_residual`)."""
    return float(np.linalg.norm(run_residual(run, data)))


def select_run(runs: Sequence[IterationResult],
               check: FrictionData | None = None) -> IterationResult:
    """The run to keep: lowest error among converged, admissible runs; failing that among
    admissible ones; failing that among all. The error is the prediction error on ``check``
    (the validation data) when given, else the training error: a σ0 start may reach a model
    that fits the training stops too well (``DESIGN.md`` §24)."""
    def score(r: IterationResult) -> float:
        e = r.error if check is None else run_error(r, check)
        return e if math.isfinite(e) else math.inf

    for pool in ([r for r in runs if r.converged and r.admissible],
                 [r for r in runs if r.admissible], list(runs)):
        if pool:
            return min(pool, key=score)
    raise ValueError("no runs")


def multistart(starts: Sequence[FrictionParams], structure: Structure | Sequence[Structure],
               data: FrictionData, settings: IterationSettings, tau_norm: float,
               after_run: Callable[[int], None] | None = None) -> list[IterationResult]:
    """:func:`run_iterations` from every start (one σ0 each) with ``structure``, or with
    ``structure[i]`` from start i; ``after_run(i)`` after run i.

    The runs are independent: they share only ``data`` (read-only once its lazily computed
    parts are filled in here) and run side by side (:func:`sparsefric.threads.in_parallel`).
    """
    structures = [structure] * len(starts) if isinstance(structure, Structure) else structure
    for powers in {tuple(int(p) for p in start.powers) for start in starts}:
        data.regression(powers, settings.refit_rigid)
    data.tau_c, data.shape_speeds  # noqa: B018 - computed before the threads share data

    def run(task: tuple[FrictionParams, Structure]) -> IterationResult:
        return run_iterations(*task, data, settings, tau_norm)

    runs = []
    for i, result in enumerate(in_parallel(run, list(zip(starts, structures, strict=True)))):
        runs.append(result)
        if after_run is not None:
            after_run(i)
    return runs
