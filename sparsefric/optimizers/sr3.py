r"""SR3 with the ℓ0 prox and Newton–Raphson updates of the nonlinear parameter θ = ln Ω_s.

Solves (ALGORITHM.md §2; Mahmoudkhani et al. 2023, eq. 9–12)::

    min_{ξ, W, θ}  ½‖Θ(θ) ξ − τ‖² + λ‖W‖₀ + (1/2ν)‖ξ − W‖²

by alternating (i) the SR3 iterations ξ = (ΘᵀΘ + I/ν)⁻¹(Θᵀτ + W/ν), W = prox_ℓ0(ξ) until W is
stable, with (ii) Newton–Raphson on θ for fixed ξ with the analytic gradient and Hessian

    g = Σ_k r_k (∂_θΘ ξ)_k,   H = Σ_k r_k (∂²_θΘ ξ)_k + Σ_k (∂_θΘ ξ)_k²,   r = Θξ − τ,

until θ converges; then an unbiased least-squares refit on the active columns, polished by
alternating refit and Newton (variable projection) so that ξ and θ are jointly optimal.

Columns are scaled to unit RMS before thresholding, so the threshold √(2νλ) is the RMS torque
[N·m] below which a term is dropped, independent of units; coefficients are returned in physical
units.

Why the ξ/W alternation is written here and not delegated to ``pysindy.optimizers.SR3``: it runs
inside the Newton loop of every λ and every start (thousands of solves), on the p×p normal
equations. pysindy's ``SR3.fit`` takes the n×p data, recomputes XᵀX and its Cholesky factor and
records a history per call (≈ 5 ms per fit for p = 23), and its 2.1 ``objective_history`` evaluates
the regulariser on the wrong vector. We follow pysindy's conventions — the λ ↔ threshold relation
of ``SR3.calculate_l0_weight`` and its ℓ0 prox, two one-line formulas written out here so that
the package does not import pysindy (≈ 1 s) for them — and compile the inner iterations with
numba (a sweep runs up to 10⁶ of them). pysindy is the reference of the tests: they check that
both formulas and the compiled prox equal pysindy's, and that our alternation reproduces
pysindy's SR3.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numba
import numpy as np
from scipy.optimize import minimize_scalar

from sparsefric.feature_library import FeatureLibrary
from sparsefric.optimizers.constrained import (
    satisfied,
    shape_constraints,
    sign_shape_lstsq,
    small_lstsq,
    speed_grid,
)
from sparsefric.signals import Signals

#: Kinds of coefficients constrained to be ≥ 0: f_c, the Stribeck amplitudes A_i (f_s ≥ f_c ≥ 0,
#: as the main paper requires) and σ1 (the coefficient of ż in the LuGre steps).
NONNEG_KINDS = ("coulomb", "stribeck", "zdot")
#: A dry-friction level g(0) = f_c + Σ A_i above this multiple of the largest |τ| fitted is no
#: friction the joint has: every move from rest breaks it away, so the motor applied about g(0).
G0_LIMIT = 1.5


def l0_weight(threshold: float, nu: float) -> float:
    """λ whose ℓ0 prox thresholds at ``threshold``: λ = threshold²/(2ν) (pysindy's convention,
    ``SR3.calculate_l0_weight``; Champion et al. 2020, appendix S1)."""
    return float(float(threshold) ** 2 / (2 * float(nu)))


def prox_l0(xi: np.ndarray, weight: float) -> np.ndarray:
    """Prox of ``weight``·‖·‖₀: hard threshold at √(2·weight) (pysindy's ``get_prox("l0")``)."""
    return xi * (np.abs(xi) > np.sqrt(2 * weight))


def prox_l0_nonneg(xi: np.ndarray, lam_nu: float, nonneg: np.ndarray | None,
                   keep: np.ndarray | None = None) -> np.ndarray:
    """Prox of λ‖W‖₀ plus the indicator of W ≥ 0 on the ``nonneg`` coordinates.

    Per coordinate: pysindy's hard threshold at √(2νλ), except on ``keep`` coordinates, which are
    not penalised; a constrained coordinate that is negative goes to 0 (the prox of ℓ0 + ι_{w≥0}
    is exactly this). :func:`_sr3_iterate` compiles the same rule; a test checks the two agree.
    """
    W = prox_l0(xi, float(lam_nu))
    if keep is not None:
        W[keep] = xi[keep]
    if nonneg is not None:
        W[nonneg & (W < 0)] = 0.0
    return W


@numba.njit(cache=True, nogil=True)
def _sr3_iterate(A_inv, b, nu, cut, W, nonneg, keep, tried, n_tried, max_iter):
    """Plain SR3 iterations until the support of W repeats (and was not tried) or ``max_iter``.

    ξ = A⁻¹(b + W/ν), W = prox(ξ) with the hard threshold ``cut`` = √(2νλ). Compiled because a
    sweep runs 10⁵–10⁶ of these p-sized steps and, in Python, each costs ~10 µs of overhead
    (≈ 13 s of a 17 s sweep on sliding-only data, where the iteration contracts slowly).
    Returns ``(xi, W, iterations, repeated)``.
    """
    p = b.shape[0]
    xi = W.copy()
    for it in range(1, max_iter + 1):
        xi = A_inv @ (b + W / nu)
        W_new = np.empty(p)
        same = True
        for i in range(p):
            w = xi[i] if (keep[i] or abs(xi[i]) > cut) else 0.0
            if nonneg[i] and w < 0.0:
                w = 0.0
            W_new[i] = w
            same = same and ((w != 0.0) == (W[i] != 0.0))
        if same:
            fresh = True
            for t in range(n_tried):
                match = True
                for i in range(p):
                    if tried[t, i] != (W_new[i] != 0.0):
                        match = False
                        break
                if match:
                    fresh = False
                    break
            if fresh:
                return xi, W_new, it, True
        W = W_new
    return xi, W, max_iter, False


def sr3_gram(G: np.ndarray, b: np.ndarray, threshold: float, nu: float,
             W0: np.ndarray | None = None, max_iter: int = 2000,
             nonneg: np.ndarray | None = None,
             keep: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, int]:
    """SR3 iterations on the normal equations (G = ΘᵀΘ, b = Θᵀτ).

    ξ = (G + I/ν)⁻¹(b + W/ν), W = prox_ℓ0(ξ). Once the support S of W repeats, the iteration is
    linear and its fixed point solves (G + (I − P_S)/ν) ξ = b exactly; we jump to it and stop if
    the prox keeps S (a fixed point of SR3), else iterate on. Collinear candidate columns make the
    plain iteration contract slowly (rate → 1 as eigenvalues of G ≪ 1/ν), so the jump saves
    hundreds of iterations per solve. ``nonneg`` marks coefficients constrained to be ≥ 0
    (Coulomb level and Stribeck amplitudes: f_s ≥ f_c ≥ 0, as the main paper requires).

    Returns ``(xi, W, n_iter)``: relaxed coefficients, sparse ones and the iteration count.
    """
    p = b.shape[0]
    A_inv = np.linalg.inv(G + np.eye(p) / nu)
    lam_nu = float(l0_weight(threshold, nu) * nu)
    cut = float(np.sqrt(2.0 * lam_nu))
    nonneg = np.zeros(p, bool) if nonneg is None else np.asarray(nonneg, dtype=bool)
    keep = np.zeros(p, bool) if keep is None else np.asarray(keep, dtype=bool)
    W = np.zeros(p) if W0 is None else np.asarray(W0, dtype=float).copy()
    tried = np.zeros((0, p), dtype=np.bool_)
    used = 0
    while used < max_iter:
        xi, W, n, repeated = _sr3_iterate(A_inv, b, float(nu), cut, W, nonneg, keep, tried,
                                          tried.shape[0], max_iter - used)
        used += n
        if not repeated:
            break
        support = W != 0
        tried = np.vstack([tried, support[None, :]])
        off = np.diag((~support).astype(float)) / nu
        xi_fixed = small_lstsq(G + off, b, 1e-14) if support.any() else xi
        W_fixed = prox_l0_nonneg(xi_fixed, lam_nu, nonneg, keep)
        if np.array_equal(W_fixed != 0, support):
            return xi_fixed, W_fixed, used
    return xi, W, max_iter


@dataclass(frozen=True)
class _SupportPart:
    """A support's columns in :meth:`GramCache.normal_equations`: the θ-dependent ones, where
    the θ-independent (fixed) ones sit within the support, the four blocks of Θ_SᵀΘ_S as index
    tuples, the fixed block itself and the fixed columns Θ_F (n, p_F) of the support."""

    nl: np.ndarray
    at_fixed: np.ndarray
    ff: tuple
    nf: tuple
    fn: tuple
    nn: tuple
    G_fixed: np.ndarray
    b_fixed: np.ndarray
    F_fixed: np.ndarray


class GramCache:
    """Normal equations of the unit-RMS-scaled library at θ, cached by θ (``scaled=False``:
    of the library as it is).

    The θ-independent columns (rigid body, viscous, Coulomb) are evaluated once, with their
    block of ΘᵀΘ; each θ then costs only the Stribeck columns and their cross products. Starting
    values of θ repeat for every λ, and runs with the same support follow the same θ path, so
    most evaluations are served from the store.
    """

    def __init__(self, library: FeatureLibrary, signals: Signals, tau: np.ndarray,
                 keep_kinds: tuple[str, ...] = (),
                 theta_bounds: tuple[float, float] | None = None, scaled: bool = True):
        self.library, self.signals, self.tau = library, signals, np.asarray(tau, dtype=float)
        #: scale the columns to unit RMS (False: the threshold acts on physical coefficients,
        #: as in the paper, and λ depends on the units)
        self.scaled = scaled
        terms = library.terms()
        self.keep = np.array([t.kind in keep_kinds for t in terms], dtype=bool)
        self.nonlinear = np.array([t.nonlinear for t in terms], dtype=bool)
        self.nonneg = np.array([t.kind in NONNEG_KINDS for t in terms], dtype=bool)
        #: C ξ ≥ 0: the viscous part non-decreasing over the shape grid (physical units)
        self.shape = shape_constraints(len(terms), {i: int(t.param) for i, t in enumerate(terms)
                                                    if t.kind == "viscous"},
                                       speed_grid(signals.qd))
        self.tau_sq = float(self.tau @ self.tau)
        #: the Coulomb and Stribeck columns, whose coefficients sum to g(0)
        self.dry = np.array([t.kind in ("coulomb", "stribeck") for t in terms], dtype=bool)
        #: largest plausible g(0) [N·m] (:meth:`SR3Newton._profile`)
        self.g0_limit = G0_LIMIT * float(np.abs(self.tau).max(initial=0.0))
        self._store: dict[float, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._sub: dict[bytes, FeatureLibrary] = {}
        self._parts: dict[bytes, _SupportPart] = {}
        #: profile values by (support, shape constraints or not, θ): the searches of the
        #: multi-start and of the refits revisit a fifth of their points (joint51's fit: 4,309
        #: evaluations, 3,482 distinct)
        self.profiles: dict[tuple[bytes, bool, float], float] = {}
        fixed = ~self.nonlinear
        #: Θ of the θ-independent columns, (n, p_fixed)
        self.fixed_columns = library.select(fixed).evaluate(signals, 0.0)[0] if fixed.any() \
            else np.zeros((len(self.tau), 0))
        F = self.fixed_columns
        self._fixed_block = (F.T @ F, F.T @ self.tau)
        #: bounds on θ = ln Ω_s; default: what the velocities of ``signals`` resolve
        self.theta_bounds = data_theta_bounds(signals.qd) if theta_bounds is None \
            else theta_bounds

    def sub_library(self, mask: np.ndarray) -> FeatureLibrary:
        """``library.select(mask)``, memoised (Newton asks for the same few supports often)."""
        key = np.asarray(mask, dtype=bool).tobytes()
        if key not in self._sub:
            self._sub[key] = self.library.select(mask)
        return self._sub[key]

    def normal_equations(self, support: np.ndarray, theta: float) -> tuple[np.ndarray, np.ndarray]:
        """Unscaled Θ_SᵀΘ_S and Θ_Sᵀτ of the ``support`` columns at θ."""
        part = self._part(np.asarray(support, dtype=bool))
        k = len(part.at_fixed)
        G, b = np.empty((k, k)), np.empty(k)
        G[part.ff] = part.G_fixed
        b[part.at_fixed] = part.b_fixed
        if part.nl.any():
            S = self.sub_library(part.nl).evaluate(self.signals, theta)[0]
            cross = S.T @ part.F_fixed
            G[part.nf] = cross
            G[part.fn] = cross.T
            G[part.nn] = S.T @ S
            b[~part.at_fixed] = S.T @ self.tau
        return G, b

    def _part(self, support: np.ndarray) -> _SupportPart:
        """The index sets and θ-independent blocks of ``support``, memoised: the Brent and
        Newton searches build the normal equations of the same few supports thousands of
        times (a sweep on data/example: 8,800 builds)."""
        key = support.tobytes()
        if key not in self._parts:
            fixed = support[~self.nonlinear]
            at = (~self.nonlinear)[support]  # positions of fixed columns within the support
            self._parts[key] = _SupportPart(
                support & self.nonlinear, at, np.ix_(at, at), np.ix_(~at, at),
                np.ix_(at, ~at), np.ix_(~at, ~at), self._fixed_block[0][np.ix_(fixed, fixed)],
                self._fixed_block[1][fixed], self.fixed_columns[:, fixed])
        return self._parts[key]

    def fixed_residual(self, coef: np.ndarray) -> np.ndarray:
        """Θ_fixed ξ_fixed − τ [N·m] for physical coefficients ``coef`` of the whole library."""
        return self.fixed_columns @ coef[~self.nonlinear] - self.tau

    def at(self, theta: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(G, b, scale)``: G = ΘₛᵀΘₛ, b = Θₛᵀτ with Θₛ = Θ/scale column-wise."""
        key = float(theta) if self.nonlinear.any() else 0.0
        if key not in self._store:
            G, b = self.normal_equations(np.ones(len(self.nonlinear), bool), key)
            scale = np.sqrt(np.diag(G) / len(self.tau))
            scale[~(scale > 1e-12 * max(1.0, scale.max(initial=0.0)))] = 1.0
            if not self.scaled:
                scale = np.ones_like(scale)
            self._store[key] = (G / np.outer(scale, scale), b / scale, scale)
        return self._store[key]


def newton_terms(library: FeatureLibrary, signals: Signals, residual_fixed: np.ndarray,
                 xi: np.ndarray, theta: float) -> tuple[float, float, float]:
    """Objective f = ½‖r‖², gradient g and Hessian H in θ (ALGORITHM.md §2).

    ``library`` holds the θ-dependent columns with coefficients ``xi`` [physical units];
    ``residual_fixed`` is the θ-independent part of the residual r = Θξ − τ.
    """
    v0, d1, d2 = library.combine(signals, theta, xi, 2)
    r = residual_fixed + v0
    return 0.5 * float(r @ r), float(r @ d1), float(r @ d2 + d1 @ d1)


def newton_theta(library: FeatureLibrary, signals: Signals, residual_fixed: np.ndarray,
                 xi: np.ndarray, theta: float, bounds: tuple[float, float],
                 max_iter: int = 30, tol: float = 1e-7, max_step: float = 1.0) -> float:
    """Minimise ½‖r(θ)‖² over θ for fixed ξ by damped Newton–Raphson.

    Where H ≤ 0 the Gauss–Newton curvature ‖∂_θΘξ‖² is used; steps are limited to
    ``max_step`` (a factor e in Ω_s), kept inside ``bounds`` and halved until f decreases.
    """
    def objective(th: float) -> float:
        r = residual_fixed + library.combine(signals, th, xi)[0]
        return 0.5 * float(r @ r)

    for _ in range(max_iter):
        f, g, H = newton_terms(library, signals, residual_fixed, xi, theta)
        if g == 0.0:
            break
        curvature = H if H > 0 else max(newton_gn(library, signals, xi, theta), 1e-300)
        step = float(np.clip(-g / curvature, -max_step, max_step))
        for _ in range(40):
            trial = float(np.clip(theta + step, *bounds))
            if objective(trial) <= f:
                break
            step *= 0.5
        else:
            break
        moved = trial - theta
        theta = trial
        if abs(moved) < tol:
            break
    return theta


def newton_gn(library: FeatureLibrary, signals: Signals, xi: np.ndarray, theta: float) -> float:
    """Gauss–Newton curvature ‖∂_θΘ ξ‖²."""
    d1 = library.combine(signals, theta, xi, 1)[1]
    return float(d1 @ d1)


@dataclass(frozen=True)
class SR3Result:
    """Outcome of one SR3–Newton solve.

    Attributes
    ----------
    coef : ndarray
        Coefficients in physical units, zero off the support.
    support : ndarray of bool
        Active columns.
    theta : float
        ln Ω_s at the solution.
    error : float
        E_τ = ‖Θξ − τ‖ [N·m] of the refitted model on the fitting data.
    n_outer : int
        SR3/Newton alternations used.
    converged : bool
        Whether θ converged within ``max_outer``.
    """

    coef: np.ndarray
    support: np.ndarray
    theta: float
    error: float
    n_outer: int
    converged: bool

    @property
    def omega(self) -> float:
        """Ω_s = e^θ [rad/s]."""
        return float(np.exp(self.theta))


class SR3Newton:
    """SR3 (ℓ0) with Newton updates of θ = ln Ω_s and an unbiased refit.

    Parameters
    ----------
    threshold : float
        RMS torque [N·m] below which a scaled coefficient is set to zero; λ = threshold²/(2ν).
        0 gives the relaxed least squares of the paper's steps 2 and 3.
    nu : float
        Relaxation ν (the paper: 0.01).
    max_outer : int
        Maximum SR3/Newton alternations.
    tol_theta : float
        Convergence tolerance on θ (relative tolerance on Ω_s).
    theta_bounds : (float, float), optional
        Bounds on θ; default :func:`data_theta_bounds` of the fitted velocities.
    omega_step : {"newton", "profile"}
        How θ moves between SR3 solves (:data:`~sparsefric.options.OMEGA_STEPS`).
        ``"newton"`` (the paper; the default): damped Newton on ½‖Θ(θ)W − τ‖² with SR3's
        coefficients W held fixed. ``"profile"``: the minimum, within a factor e, of the
        variable-projection profile φ(θ) = min_ξ ‖Θ_S(θ)ξ − τ‖² on SR3's support S
        (:meth:`_profile_step`, ``DESIGN.md`` §28). With W fixed, a Stribeck amplitude that SR3
        set too large (collinear columns) is answered by a smaller Ω_s, which SR3 answers by a
        larger amplitude: on zoo joint 16 Ω_s walked from 0.35 to the lower bound 0.009 rad/s
        and the Stribeck and viscous terms were lost (training error 188 against 112 at the
        profile's minimum near the true 0.35); the profile step keeps them, but on other joints
        its better training optimum is the wrong physics, so it is not the default.
    """

    def __init__(self, threshold: float = 0.0, nu: float = 0.01, max_outer: int = 15,
                 tol_theta: float = 1e-6, theta_bounds: tuple[float, float] | None = None,
                 omega_step: str = "newton"):
        self.threshold = threshold
        self.nu = nu
        self.max_outer = max_outer
        self.tol_theta = tol_theta
        self.theta_bounds = theta_bounds
        self.omega_step = omega_step

    def fit(self, cache: GramCache, theta0: float, W0: np.ndarray | None = None,
            memo: dict | None = None) -> SR3Result:
        """Solve from θ₀ (and scaled W₀) on the data held by ``cache``.

        ``memo`` (shared by the starts of a multi-start) maps an iterate (support, θ to 10⁻⁶) to
        the result a previous start reached from it; a start that lands on a known iterate stops
        there with that result, since the rest of its path would repeat the other start's.
        """
        theta = float(np.clip(theta0, *self._bounds(cache)))
        W = W0
        converged = False
        outer = 0
        seen: set[tuple[bytes, float]] = set()
        path: list[tuple[bytes, float]] = []
        for outer in range(1, self.max_outer + 1):  # noqa: B007
            G, b, scale = cache.at(theta)
            _, W, _ = sr3_gram(G, b, self.threshold, self.nu, W, nonneg=cache.nonneg,
                               keep=cache.keep)
            support = W != 0
            if not (support & cache.nonlinear).any():
                converged = True
                break
            new = self._profile_step(cache, support, theta) if self.omega_step == "profile" \
                else self._newton(cache, support, W / scale, theta, max_newton=3, tol=1e-4)
            # Converged when θ stops moving, or when the same support returns to the same θ
            # (to 1e-4): the alternation then repeats itself and the refit below finishes it.
            state = (support.tobytes(), round(new, 4))
            converged = abs(new - theta) < self.tol_theta or state in seen
            seen.add(state)
            path.append((support.tobytes(), round(new, 6)))
            if memo is not None and path[-1] in memo:
                return memo[path[-1]]
            theta = new
            if converged:
                break
        coef, theta = self.refit_support(cache, W != 0, theta)
        result = SR3Result(coef, coef != 0, theta, self.fit_error(cache, coef, theta), outer,
                           converged)
        if memo is not None:
            memo.update(dict.fromkeys(path, result))
        return result

    def _newton(self, cache: GramCache, support: np.ndarray, xi: np.ndarray, theta: float,
                max_newton: int = 30, tol: float = 1e-7) -> float:
        nl = support & cache.nonlinear
        r_fixed = cache.fixed_residual(np.where(support, xi, 0.0))
        return newton_theta(cache.sub_library(nl), cache.signals, r_fixed, xi[nl], theta,
                            self._bounds(cache), max_iter=max_newton, tol=tol)

    def refit_support(self, cache: GramCache, support: np.ndarray,
                      theta: float) -> tuple[np.ndarray, float]:
        """Least squares on the support, jointly optimal in θ.

        Minimises the variable-projection profile φ(θ) = min_ξ ‖Θ_S(θ)ξ − τ‖² by bounded
        Brent search within a factor e of the SR3–Newton θ (the profile is smooth there and
        Newton's fixed-ξ iterates converge slowly when columns are collinear). If g(0) = f_c + ΣA
        still exceeds ``cache.g0_limit`` there, the Stribeck columns leave the support.
        """
        nl = support & cache.nonlinear
        if nl.any():
            # with the profile steps, the shape constraints enter only the final least squares:
            # their QP took ~55 ms a call on zoo joints whose supports bind, ~20 calls a search
            profile = self._profile(cache, support, shape=self.omega_step == "newton")
            theta = self._brent(profile, theta, self._bounds(cache))
            if self.omega_step == "newton" and self._binds(cache, support, theta):
                # SR3–Newton moved θ with unconstrained coefficients: where the constraints
                # bind, the constrained optimum may lie elsewhere (zoo joint 5: static curve
                # 21 → 2 %); taken only if clearly better, so that a flat profile keeps θ.
                # (The profile steps already descended the profile; with them this global
                # scan bound on most supports of zoo joint 31, at ~50 ms a QP: 15+ minutes.)
                grid = np.linspace(*self._bounds(cache), 12)
                values = [profile(th) for th in grid]
                if min(values) < profile(theta) - 0.01 * abs(profile(theta)):
                    theta = self._brent(profile, float(grid[np.argmin(values)]),
                                        self._bounds(cache))
        coef = lsq_on_support(cache, support, theta)
        if nl.any() and coef[cache.dry].sum() > cache.g0_limit:
            # no Ω_s within reach gives a dry level the motor could have overcome (the profile
            # is +∞ there): the Stribeck columns are spikes on the slowest samples, fitting
            # their noise (a zoo joint: A = 9376 N where the torque never exceeds 20 N)
            support = support & ~cache.nonlinear
            coef = lsq_on_support(cache, support, theta)
        return coef, theta

    def scan_theta(self, cache: GramCache, support: np.ndarray, theta: float,
                   n: int = 12) -> float:
        """θ among ``theta`` and ``n`` points evenly spaced over the bounds where the profile on
        ``support`` (sign constraints only) is lowest: a start for :meth:`refit_support` where
        the support's own θ is unknown (a Stribeck exponent exchanged for another: δ = 0.5
        and δ = 4 fit the same friction with Ω_s a decade apart). The points are at most a
        factor e apart on the usual bounds, the reach of the Brent search that follows."""
        profile = self._profile(cache, support, shape=False)
        grid = np.r_[theta, self.theta_grid(cache, n)]
        return float(grid[int(np.argmin([profile(th) for th in grid]))])

    def theta_grid(self, cache: GramCache, n: int = 12) -> np.ndarray:
        """``n`` values of θ = ln Ω_s evenly spaced over the bounds (:meth:`scan_theta`)."""
        return np.linspace(*self._bounds(cache), n)

    @staticmethod
    def _profile(cache: GramCache, support: np.ndarray,
                 shape: bool = True) -> Callable[[float], float]:
        """φ(θ) − ‖τ‖² = min_ξ ‖Θ_S(θ)ξ − τ‖² − ‖τ‖² under the sign constraints and, with
        ``shape``, the shape constraints.

        +∞ where g(0) would exceed ``cache.g0_limit``: there a Stribeck column is a spike on the
        few slowest samples (e^{−|q̇/Ω_s|^δ} ≈ 1e-160 elsewhere) and its amplitude fits their
        noise, not a friction level the joint could have (a batch test's joint: A = 4.6e161).
        """
        dry = cache.dry[support]
        rows = cache.shape[:, support] if shape else cache.shape[:0, support]
        key = support.tobytes(), bool(shape)

        def profile(th: float) -> float:
            at = (*key, float(th))
            if at not in cache.profiles:
                G, b = cache.normal_equations(support, th)
                coef = sign_shape_lstsq(G, b, cache.nonneg[support], rows)
                cache.profiles[at] = np.inf if coef[dry].sum() > cache.g0_limit \
                    else float(coef @ G @ coef - 2 * b @ coef)
            return cache.profiles[at]
        return profile

    def _profile_step(self, cache: GramCache, support: np.ndarray, theta: float) -> float:
        """θ minimising the profile on ``support`` within a factor e of θ (Brent): a descent
        step on the profile that, like Newton's, stays near the start, so that the starts of a
        multi-start still explore different minima. The profile of the step has the sign
        constraints only: with the shape constraints each of its ~20 evaluations may solve a
        QP, which made one zoo joint's step 1 take over 15 minutes; :meth:`refit_support` applies
        them."""
        return self._brent(self._profile(cache, support, shape=False), theta,
                           self._bounds(cache))

    @staticmethod
    def _brent(profile, theta: float, bounds: tuple[float, float]) -> float:
        """Bounded Brent search of ``profile`` within a factor e of θ (kept if not better)."""
        lo, hi = max(theta - 1.0, bounds[0]), min(theta + 1.0, bounds[1])
        with np.errstate(invalid="ignore"):  # a +∞ profile makes the parabola NaN: golden step
            best = minimize_scalar(profile, bounds=(lo, hi), method="bounded",
                                   options={"xatol": 1e-4})
        return float(best.x) if best.fun <= profile(theta) else theta

    @staticmethod
    def _binds(cache: GramCache, support: np.ndarray, theta: float) -> bool:
        """Whether the shape constraints change the least squares on ``support`` at θ."""
        G, b = cache.normal_equations(support, theta)
        free = small_lstsq(G, b, 1e-13)
        return not satisfied(cache.shape[:, support], free)

    def _bounds(self, cache: GramCache) -> tuple[float, float]:
        return self.theta_bounds if self.theta_bounds is not None else cache.theta_bounds

    @staticmethod
    def fit_error(cache: GramCache, coef: np.ndarray, theta: float) -> float:
        """E_τ = ‖Θ(θ)ξ − τ‖ [N·m] of physical coefficients ``coef`` on the cache's samples."""
        G, b, scale = cache.at(theta)
        xs = coef * scale
        return float(np.sqrt(max(xs @ G @ xs - 2 * b @ xs + cache.tau_sq, 0.0)))


def data_theta_bounds(qd: np.ndarray) -> tuple[float, float]:
    """Bounds on θ = ln Ω_s [ln(rad/s)] within which the data can see a Stribeck term.

    Ω_s from 1/10 of the slowest moving speeds (1st percentile of |q̇| > 0) to 10× the fastest.
    Below, every column e^{−|q̇/Ω_s|^δ} is < e^{−3} on 99 % of the samples and far smaller on
    most: scaled to unit RMS it becomes a spike on the few slowest samples and fits their noise.
    On samples with |q̇| > 0.01 rad/s, SR3–Newton drifted down there (Ω_s → 2e-4 rad/s) for 15
    alternations at half the thresholds of a sweep. Above, the columns are constant in sign(q̇)
    and duplicate the Coulomb column.
    """
    speed = np.abs(np.asarray(qd, dtype=float))
    moving = speed[speed > 0]
    if moving.size == 0:
        return (-12.0, 5.0)
    return (float(np.log(np.quantile(moving, 0.01) / 10)), float(np.log(10 * moving.max())))


def lsq_on_support(cache: GramCache, support: np.ndarray, theta: float) -> np.ndarray:
    """Unbiased least-squares coefficients [physical units] on the active columns.

    A sign-constrained coefficient (``cache.nonneg``) that comes out negative is eliminated and
    the rest refitted, as the ℓ0 + sign prox of the SR3 iterations would. If the viscous part
    then falls with speed somewhere on the shape grid (``cache.shape``), the coefficients are
    the least squares subject to both the shape and the sign constraints
    (:func:`~sparsefric.optimizers.constrained.sign_shape_lstsq`).
    """
    G, b, scale = cache.at(theta)
    s = np.asarray(support, dtype=bool)
    coef = np.zeros(b.shape[0])
    if s.any():
        coef[s] = sign_shape_lstsq(G[np.ix_(s, s)], b[s], cache.nonneg[s],
                                   cache.shape[:, s] / scale[s]) / scale[s]
    return coef
