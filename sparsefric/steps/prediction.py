r"""The LuGre model's nonlinear parameters at the minimum of its prediction error.

Not in the paper (``DESIGN.md`` §101). The outer/inner iterations (:mod:`.iterations`) end at a
fixed point of their alternation: g(q̇) refitted with z held from the last model, σ0 moved by
σ0 ξ_u with g held. That fixed point is not the minimum of the torque error of the model whose
z it integrates, and the Stribeck exponent δ comes from a grid chosen by sweeps on those frozen
columns. On zoo joints whose rise the records show only in their transients the difference is
the break-away: 2024/9 (truth δ 1.61) left the iterations at δ 3.25 with the break-away −13 %,
and its training and validation torque is fitted 12 % better (RMS) at δ 1.23, break-away −2 %.

Here every nonlinear parameter, φ = (ln f_c, ln A_i, ln Ω_s, ln δ_i, ln σ0), moves to the
minimum of

    ‖r(φ)‖² / s² + ‖φ − φ₀‖² / w² + Σ_k ((F(v_k; φ) − F_k) / e_k)²,

r the residual of the least squares that refits the linear parameters at φ (σ1, the viscous
coefficients and the rigid body, under the constraints of the inner loop:
:class:`~sparsefric.steps.iterations.LinearRefit`, variable projection; z integrated from φ
along every record, the sample-averaged equation where the data are averaged), s² the mean
square of r at the start times its integrated correlation time
(:func:`~sparsefric.hac.correlation_time`: the residuals of one record are not independent
samples), φ₀ the start and w = :data:`PRIOR_WIDTH`. The second term is a prior: moving a
parameter by a factor e costs what the fit gains by one effective residual variance, so it
keeps a parameter the data leave free (a rise below the slowest steady speed, a σ0 beyond what
the transients resolve) near where the iterations put it. The third term, where steady levels
are given (:class:`~sparsefric.selection.SteadyLevels`: F_k the friction measured at the
constant speed v_k, e_k its standard error with a 0.5 % floor), holds the static curve F(v; φ),
the mean of both directions (:func:`~sparsefric.lugre.direction_mean_curve`), to what the
steady moves measure without a model: a few rows among tens of thousands, they weigh where
the transients leave the curve free and the residual's whiteness would trade it for a better
fit of the ramps (``DESIGN.md`` §115). The solver is
``scipy.optimize.least_squares`` (trust-region reflective, finite-difference Jacobian) within
bounds: Ω_s within what the sliding samples resolve, δ within the library's exponents, f_c and
each A_i below the data's plausible g(0) (their sum is not bounded: a result above it is
inadmissible, :func:`~sparsefric.steps.iterations.violations`, and the identification refuses
it rather than return a model pressed against the bound). The identification takes the result
only where it predicts the validation data better than the iterations' model
(``identify._fit_prediction``), and then holds δ at the library's exponent nearest to it
(:func:`on_grid`): the intervals, the bootstrap's resamples and the inclusion frequencies name a
Stribeck term by its exponent.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy.optimize import least_squares

from sparsefric.hac import correlation_time
from sparsefric.lugre import FrictionParams, direction_mean_curve, stribeck_g
from sparsefric.selection import SteadyLevels
from sparsefric.steps.iterations import (
    FrictionData,
    IterationResult,
    LinearRefit,
    prediction_error,
    violations,
)
from sparsefric.threads import in_parallel

#: Prior width w [ln units] of every nonlinear parameter about the start: a factor e is one
#: standard deviation.
PRIOR_WIDTH = 1.0
#: Largest number of evaluations of the residual the solver may make, finite-difference
#: Jacobians aside (``least_squares``'s ``max_nfev``).
MAX_STEPS = 30
#: Largest factor by which σ0 may move.
SIGMA0_REACH = 1e3
#: Distance [ln units] kept from the lower bound of Ω_s, on which a run is implausible
#: (:func:`~sparsefric.steps.iterations.violations` flags 0.01).
OMEGA_MARGIN = 0.02


@dataclass(frozen=True)
class Layout:
    """Which parameters φ holds: the Stribeck terms with A_i > 0 (the others stay at 0: no
    term), and whether their exponents δ_i move."""

    on: np.ndarray
    free_deltas: bool

    @classmethod
    def of(cls, params: FrictionParams, deltas: Sequence[float] | None) -> Layout:
        """The layout of ``params`` with the library's exponents ``deltas``: δ moves where the
        library offers more than one (None: δ held)."""
        free = deltas is not None and len(set(deltas)) > 1
        return cls(np.asarray(params.amplitudes, dtype=float) > 0, free)

    @property
    def k(self) -> int:
        """Number of Stribeck terms in φ."""
        return int(self.on.sum())

    def pack(self, params: FrictionParams) -> np.ndarray:
        """φ = [ln f_c, ln A_i…, ln Ω_s, (ln δ_i…), ln σ0] (no Ω_s without a term)."""
        on = self.on
        phi = [math.log(params.coulomb), *np.log(params.amplitudes[on])]
        if self.k:
            phi.append(math.log(params.stribeck_velocity))
        if self.free_deltas:
            phi += list(np.log(params.deltas[on]))
        phi.append(math.log(params.sigma0))
        return np.array(phi, dtype=float)

    def unpack(self, phi: np.ndarray, params: FrictionParams) -> FrictionParams:
        """``params`` with the nonlinear parameters φ (:meth:`pack`)."""
        k, on = self.k, self.on
        amplitudes, deltas = params.amplitudes.copy(), params.deltas.copy()
        amplitudes[on] = np.exp(phi[1:1 + k])
        omega = float(np.exp(phi[1 + k])) if k else params.stribeck_velocity
        if self.free_deltas:
            deltas[on] = np.exp(phi[2 + k:2 + 2 * k])
        return replace(params, coulomb=float(np.exp(phi[0])), amplitudes=amplitudes,
                       stribeck_velocity=omega, deltas=deltas, sigma0=float(np.exp(phi[-1])))

    def bounds(self, params: FrictionParams, data: FrictionData,
               deltas: Sequence[float] | None) -> tuple[np.ndarray, np.ndarray]:
        """Bounds on φ: f_c and each A_i between 10⁻⁶ of g(0) and the data's plausible g(0)
        (:attr:`FrictionData.g0_limit`; not their sum, see the module doc), Ω_s within
        :attr:`FrictionData.theta_bounds` (kept :data:`OMEGA_MARGIN` above the lower one), δ
        within the library's exponents ``deltas``, σ0 within a factor :data:`SIGMA0_REACH`."""
        k = self.k
        g0 = float(params.coulomb + params.amplitudes.sum())
        top = math.log(data.g0_limit) if math.isfinite(data.g0_limit) else math.inf
        lo, hi = [math.log(1e-6 * g0)] * (1 + k), [top] * (1 + k)
        if k:
            theta = data.theta_bounds or (-math.inf, math.inf)
            lo.append(theta[0] + OMEGA_MARGIN)
            hi.append(theta[1])
        if self.free_deltas and deltas is not None:
            lo += [math.log(min(deltas))] * k
            hi += [math.log(max(deltas))] * k
        s0 = math.log(params.sigma0)
        lo.append(s0 - math.log(SIGMA0_REACH))
        hi.append(s0 + math.log(SIGMA0_REACH))
        return np.array(lo), np.array(hi)


class _PerThread:
    """One :class:`LinearRefit` per thread: each call overwrites its design matrix, so the
    finite-difference steps that run side by side need their own."""

    def __init__(self, powers: Sequence[int], data: FrictionData, refit_rigid: bool):
        self.args, self.local = (powers, data, refit_rigid), threading.local()

    def get(self) -> LinearRefit:
        refit = getattr(self.local, "refit", None)
        if refit is None:
            refit = self.local.refit = LinearRefit(*self.args)
        return refit


def _thread_map(fn: Callable, items: Iterable) -> list:
    """``least_squares``'s ``workers``: the Jacobian's finite-difference steps on threads."""
    return list(in_parallel(fn, items))


def _evaluate(phi: np.ndarray, layout: Layout, start: FrictionParams, refit: LinearRefit
              ) -> tuple[np.ndarray, FrictionParams, np.ndarray | None]:
    """The least-squares residual [N·m] at φ (non-finite where g(q̇) ≤ 0 somewhere), the
    model with its linear parameters refitted and its rigid-body coefficients."""
    trial = layout.unpack(phi, start)
    g = stribeck_g(refit.data.x.qd, trial)
    if not np.all(g > 0):
        return np.full(len(refit.data.tau), np.inf), trial, refit.data.rigid
    fitted, _, rigid, r = refit(trial, g)
    return r, fitted, rigid


def _scored(run: IterationResult, params: FrictionParams, rigid: np.ndarray | None,
            data: FrictionData, tau_norm: float) -> IterationResult:
    """``run`` with the model ``params`` and rigid body ``rigid``: its prediction error on
    ``data`` (scaled by ``tau_norm`` [N·m]) and its violations, checked as the iterations'
    are."""
    error = prediction_error(params, data.with_rigid(rigid))
    return replace(run, params=params, error=error / tau_norm, rigid=rigid,
                   violations=violations(params, data, error))


def start_refit(run: IterationResult, data: FrictionData, refit_rigid: bool = True,
                tau_norm: float = 1.0) -> IterationResult:
    """``run``'s model with its linear parameters (σ1, viscous, rigid body) refitted on
    ``data`` and its nonlinear ones as they are: where :func:`prediction_fit` starts, and what
    its result is to be compared with (the refit alone moves the inertia where ``data`` hold
    the measured torque and ``run`` was fitted on the denoised one, ``DESIGN.md`` §33).

    ``tau_norm`` [N·m] scales the error of the result."""
    data = data.with_rigid(run.rigid)
    refit = LinearRefit(run.params.powers, data, refit_rigid)
    params, _, rigid, _ = refit(run.params)
    return _scored(run, params, rigid, data, tau_norm)


def prediction_fit(run: IterationResult, data: FrictionData,  # noqa: PLR0913
                   deltas: Sequence[float] | None, refit_rigid: bool = True,
                   tau_norm: float = 1.0, max_steps: int = MAX_STEPS,
                   steady: SteadyLevels | None = None) -> IterationResult:
    """``run``'s model with every nonlinear parameter at the minimum of the regularised
    prediction error on ``data`` (see the module doc), its structure kept.

    Parameters
    ----------
    run : IterationResult
        The start: the iterations' model and its rigid-body coefficients.
    data : FrictionData
        The records to fit (the measured torque, averaged where the data are).
    deltas : sequence of float, optional
        The library's Stribeck exponents [-]: δ moves within their range, and not at all where
        there is only one or where None.
    refit_rigid : bool
        Refit the rigid body with the friction's linear parameters at every φ.
    tau_norm : float
        [N·m] by which the error of the result is scaled (‖τ‖ of ``data``).
    max_steps : int
        Largest number of residual evaluations the solver makes, finite-difference Jacobians
        aside (:data:`MAX_STEPS`).
    steady : SteadyLevels, optional
        Constant-velocity levels [rad/s | m/s, N·m | N] the static curve is held to (the
        module doc's third term); none where None.

    Returns
    -------
    IterationResult
        The model, its prediction error ‖τ_c − τ̂_f‖ / ``tau_norm`` on ``data``, its rigid
        body and its violations (checked as the iterations' are); ``converged``, ``reason``
        and ``sigma0_init`` those of ``run``. ``run`` itself where the start has no Coulomb
        level or no σ0, ``data`` no plausible g(0) or no torque, or the start's residual is
        not finite or is zero.
    """
    data = data.with_rigid(run.rigid)
    start = run.params
    if not (start.coulomb > 0 and start.sigma0 > 0 and data.g0_limit > 0 and tau_norm > 0):
        return run
    layout = Layout.of(start, deltas)
    refits = _PerThread(start.powers, data, refit_rigid)
    refit = refits.get()
    lo, hi = layout.bounds(start, data, deltas)
    phi0 = np.clip(layout.pack(start), lo + 1e-9, hi - 1e-9)
    r0 = _evaluate(phi0, layout, start, refit)[0]
    scale = math.sqrt(float(np.mean(r0 ** 2)) * float(correlation_time(r0))) \
        if np.all(np.isfinite(r0)) else math.nan
    if not scale > 0:
        return run

    def cost(phi: np.ndarray) -> np.ndarray:
        r, params, _ = _evaluate(phi, layout, start, refits.get())
        rows = [np.where(np.isfinite(r), r, 1e6 * scale) / scale, (phi - phi0) / PRIOR_WIDTH]
        if steady is not None and len(steady.velocity):
            rows.append(steady.residuals(direction_mean_curve(steady.velocity, params))
                        if np.all(np.isfinite(r)) else np.full(len(steady.velocity), 1e6))
        return np.concatenate(rows)

    # the Jacobian's steps are independent z integrations and solves (numba and LAPACK
    # release the GIL): scipy maps them over ``workers``, the same steps in the same order
    sol = least_squares(cost, phi0, bounds=(lo, hi), x_scale="jac", max_nfev=max_steps,
                        method="trf", workers=_thread_map)
    _, params, rigid = _evaluate(sol.x, layout, start, refit)
    return _scored(run, params, rigid, data, tau_norm)


def on_grid(params: FrictionParams, deltas: Sequence[float]) -> FrictionParams:
    """``params`` with each Stribeck exponent at the nearest of the library's ``deltas``, and
    the terms that land on one exponent merged into one (their amplitudes summed), in
    ascending order of exponent."""
    grid = np.asarray(sorted(set(float(d) for d in deltas)))
    if not len(params.deltas) or not grid.size:
        return params
    nearest = grid[np.abs(np.log(params.deltas)[:, None] - np.log(grid)[None, :]).argmin(axis=1)]
    merged = {float(d): 0.0 for d in sorted(set(nearest))}
    for d, a in zip(nearest, params.amplitudes, strict=True):
        merged[float(d)] += float(a)
    return replace(params, deltas=np.array(list(merged)),
                   amplitudes=np.array(list(merged.values())))
