r"""How sure is an identified model: intervals of its parameters, of derived quantities and of the
static curve, and how often each candidate term survives a resampling of the data.

Two methods, both returning :class:`ParameterUncertainty` (whose :meth:`~ParameterUncertainty.
to_dict` is the ``uncertainty`` section of ``model.json``):

``fast`` (:func:`fast_uncertainty`, the file's method ``asymptotic``)
    Linearise the final model's simulated torque τ̂(θ) (bristle state z integrated along every
    record) in all its parameters θ and take a heteroscedasticity- and autocorrelation-consistent
    (HAC) sandwich covariance of the least-squares prediction-error estimator::

        r_t = τ_t − τ̂_t(θ̂),    J_t = ∂τ̂_t/∂θ,    u_t = J_t r_t
        B   = Σ_t J_tᵀ J_t
        S   = Σ_records Σ_{|l|≤L} (1 − |l|/(L+1)) Σ_t u_t u_{t−l}ᵀ         (Newey–West)
        Cov(θ̂) = B⁻¹ S B⁻¹

    Torque residuals of this pipeline are strongly autocorrelated (the smoothed derivatives and
    the model error move slowly), so the plain least-squares covariance σ̂² B⁻¹ is far too
    narrow; the lag window L of each record comes from the integrated autocorrelation time of
    its residuals and scores (:func:`hac.bandwidth`), and the intervals use the fixed-b critical
    value of the Bartlett kernel at b = ΣL/n (:func:`critical_value`), which accounts for the few
    effective blocks a long window leaves. Ω_s and σ0 are linearised in their logarithm;
    derived quantities (break-away torque, g(0), the static curve) by the delta method. The
    covariance is that of the prediction-error optimum θ* with the selected structure fixed;
    the pipeline's estimate θ̂ lies a Gauss–Newton step away from it (its iterations stop at a
    tolerance and fit subsets of the samples), and every interval reaches from θ̂ to θ* before
    adding ± c·sd, and to the optima of the denoised torque and of a lighter-smoothed angle
    (what the preprocessing moves) and of z integrated in parts (what the model's sampling of
    the bristle moves). The structures the selection's own sweep supports about as
    well (Akaike confidence set) widen f_c and the break-away (:func:`structure_shifts`), and
    a LuGre model's inertia reaches step 1's with the static friction (:func:`static_estimates`),
    and σ1 reaches below by the torque timing's bias (:func:`timing_bias`);
    **the rest of the structure selection's uncertainty is not included**, nor biases of the
    model class. Cost: ≈ 40 evaluations of the friction along the data and one TV solve per
    record, 0.3 s on data/example.

``bootstrap`` (:func:`bootstrap_uncertainty`)
    A moving-block bootstrap of the prepared records: each training and validation record is cut
    inside its constant-direction passes (where the joint slides steadily, so a block starts
    with the bristle at its steady state, the default start of
    :func:`sparsefric.lugre.integrate_z`) into pieces longer than the residual correlation,
    circular blocks of pieces are drawn with replacement within each record (records are
    strata: the speed design is kept) and the whole identification — step-1 selection by AICc,
    LuGre iterations, refinement — is rerun on each resample, warm-started at the estimate, on
    a process pool, seeded. Percentile intervals (widened to their copy centred by a
    reference refit of all pieces once, and to the fast method's intervals), and the inclusion
    frequency of every candidate term.
    The derivatives of the first fit are reused (``differentiation="given"``), so the
    differentiation's own variability is not resampled. Cost: R + 1 identifications on the
    available cores.

Both methods condition on the recorded excitation; neither covers a model error the data cannot
reveal.
"""

from __future__ import annotations

import math
import multiprocessing
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from tqdm import tqdm  # console bars: tqdm.auto warns in Jupyter without ipywidgets

from sparsefric.data import Trajectory
from sparsefric.diagnostics import Finding
from sparsefric.differentiation import sample_average, spaced_windows, torque_average
from sparsefric.hac import LONG_RECORD, correlation_time, critical_value, sandwich
from sparsefric.model import JointModel, StaticBand, Uncertainty, units
from sparsefric.preprocessing import Prepared, Preprocessor, prepare
from sparsefric.selection import SweepResult
from sparsefric.steps import checks
from sparsefric.tables import fmt
from sparsefric.validity import ValidityRange

__all__ = [
    "METHODS",
    "Draw",
    "ParameterUncertainty",
    "Records",
    "Target",
    "block_length",
    "bootstrap_uncertainty",
    "central_differences",
    "clip_at_zero",
    "default_workers",
    "derived_values",
    "draw_blocks",
    "draw_of",
    "estimate_uncertainty",
    "extrapolation_shifts",
    "fast_uncertainty",
    "fd_steps",
    "friction_torque",
    "hull_shift",
    "inclusion_table",
    "interval_table",
    "knee_findings",
    "lighter_smoothing",
    "model_terms",
    "model_torque",
    "open_unidentified",
    "open_unresolved",
    "optimum_step",
    "parameter_names",
    "parameter_values",
    "pass_cuts",
    "path_with_inclusion",
    "percentile_table",
    "reach",
    "record_pieces",
    "resample_tasks",
    "residual_correlation",
    "static_estimates",
    "static_velocity_grid",
    "steady_speeds",
    "stribeck_family",
    "structure_shifts",
    "timing_bias",
    "torque_jacobian",
    "uncertainty_findings",
    "validity_range",
    "viscous_family",
    "warm_settings",
    "with_fast",
    "with_parameters",
    "with_uncertainty",
]

#: The methods, and the name of each in the model file's ``uncertainty.method``.
METHODS = {"fast": "asymptotic", "bootstrap": "bootstrap"}
#: Parameters linearised (fast) in their logarithm: positive by construction, their intervals too.
LOG_PARAMETERS = ("stribeck_velocity", "sigma0")
#: Derived quantities of the parameter table.
DERIVED = ("breakaway", "g0")
#: Shortest bootstrap piece inside a pass, in integrated autocorrelation times of the residuals,
#: and in samples.
PIECE_FACTOR = 5.0
MIN_PIECE = 200
#: Relative finite-difference step of the Jacobian (central differences).
FD_STEP = 1e-5


# ---------------------------------------------------------------------------- the result
@dataclass
class ParameterUncertainty:
    """Intervals of one identified model.

    Attributes
    ----------
    method : {"fast", "bootstrap"}
    level : float
        Nominal coverage of the intervals [-], e.g. 0.95.
    table : DataFrame
        One row per parameter, then per derived quantity (``breakaway``, ``g0``): ``name`` (the
        file's interval name, e.g. ``inertia``, ``stribeck:1.5``, ``viscous:3``), ``kind``
        (``parameter`` or ``derived``), ``unit``, ``estimate``, ``std``, ``lower``, ``upper``
        (in the unit); fast only: ``gap``, ``denoised_gap``, ``angle_gap`` and
        ``integration_gap``, the prediction-error optimum of the measured torque, the denoised
        torque, the lighter-smoothed angle and z integrated in parts minus the estimate
        (:func:`optimum_step`) [unit],
        ``structure_shift``, the largest move of the estimate under other structures the data
        support (:func:`structure_shifts`) [unit], ``static_shift``, |step 1's inertia − the
        LuGre model's| (:func:`static_estimates`; from :func:`result_fast`) [unit],
        ``timing_shift``, how far the torque timing's bias moves σ1's lower end
        (:func:`timing_bias`) [unit], and
        ``extrapolation_shift``, the model's rise of an extrapolated break-away below the
        slowest steady speed (:func:`extrapolation_shifts`) [unit]; ``unresolved`` (fast, and
        bootstrap from its hull with the fast intervals): σ0 and σ1 rows opened because the
        pre-sliding deflection is below the position resolution (:func:`open_unresolved`) or
        the identification found them not identified (:func:`open_unidentified`);
        ``extrapolated`` (likewise): the break-away and g(0) rows opened above because the
        break-away is extrapolated, the f_c row opened below because f_c is
        (:func:`extrapolation_shifts`).
    velocity : ndarray
        Velocities q̇ [rad/s | m/s] of the static-curve band.
    static_estimate, static_lower, static_upper : ndarray
        τ_ss(q̇) of the model and its pointwise band [N·m | N].
    inclusion : DataFrame, optional
        Bootstrap only: one row per friction candidate of the step-1 library — ``term``
        (plain-text name), ``kind``, ``selected`` (in the model), ``step1`` (share of the
        resamples whose step-1 AICc choice kept it) and ``final`` (share whose final model has
        it) [-].
    resamples : int, optional
        Bootstrap only: resamples that produced a model.
    failed : int
        Bootstrap only: resamples whose identification raised an error.
    lugre_share : float, optional
        Bootstrap only: share of the resamples whose result was a LuGre model [-].
    lags : tuple of int
        Fast only: the Newey–West lag window L of each record [samples].
    covariance : ndarray, optional
        Fast only: covariance of the linearised parameters (``stribeck_velocity`` and ``sigma0``
        in natural logarithm), in the order of ``table``'s parameter rows.
    critical : float, optional
        Fast only: the critical value c of the intervals (:func:`critical_value`) [-].
    findings : list of Finding
        What the estimate found beyond its table: an ``extrapolated`` break-away that only
        Ω_s's interval shows (:func:`knee_findings`); :func:`uncertainty_findings` reports them.
    """

    method: str
    level: float
    table: pd.DataFrame
    velocity: np.ndarray
    static_estimate: np.ndarray
    static_lower: np.ndarray
    static_upper: np.ndarray
    inclusion: pd.DataFrame | None = None
    resamples: int | None = None
    failed: int = 0
    lugre_share: float | None = None
    lags: tuple[int, ...] = ()
    covariance: np.ndarray | None = field(default=None, repr=False)
    critical: float | None = None
    findings: list = field(default_factory=list)

    def interval(self, name: str) -> tuple[float, float]:
        """(lower, upper) of parameter or derived quantity ``name`` [its unit]."""
        row = self.table.loc[self.table.name == name]
        if row.empty:
            raise KeyError(f"no interval for {name!r}")
        return float(row.lower.iloc[0]), float(row.upper.iloc[0])

    def to_model(self) -> Uncertainty:
        """The model file's :class:`~sparsefric.model.Uncertainty` (intervals with a NaN end
        and non-finite band points are left out; an infinite end stays, open)."""
        rows = self.table[self.table.lower.notna() & self.table.upper.notna()
                          & (self.table.lower < np.inf) & (self.table.upper > -np.inf)]
        intervals = {str(n): (float(lo), float(max(lo, hi)))
                     for n, lo, hi in zip(rows.name, rows.lower, rows.upper, strict=True)}
        ok = np.isfinite(self.static_lower) & np.isfinite(self.static_upper)
        band = StaticBand(tuple(map(float, self.velocity[ok])),
                          tuple(map(float, self.static_lower[ok])),
                          tuple(map(float, np.maximum(self.static_lower, self.static_upper)[ok])))
        inclusion = {} if self.inclusion is None else {
            str(t): float(f) for t, f in zip(self.inclusion.term, self.inclusion.final,
                                             strict=True)}
        return Uncertainty(method=METHODS[self.method], level=float(self.level),
                           intervals=intervals, resamples=self.resamples, inclusion=inclusion,
                           static_curve=band if ok.any() else None)

    def to_dict(self) -> dict:
        """The ``uncertainty`` object of ``model.json`` (format ``sparsefric-model/2``)."""
        return self.to_model().to_dict()


# ---------------------------------------------------------------------------- parameters
def parameter_names(model: JointModel) -> tuple[str, ...]:
    """The identified parameters of ``model``, by their interval names in the model file.

    ``inertia``; ``gravity_cos``, ``gravity_sin`` (revolute); ``offset`` (prismatic, or a
    non-zero revolute offset); ``coulomb``; ``stribeck:<δ>`` (amplitude A of each term) and
    ``stribeck_velocity`` (if there is a term); ``viscous:<p>``; ``sigma0``, ``sigma1`` (LuGre).
    The exponents δ and the sign model are fixed (chosen, not estimated).
    """
    names = ["inertia"]
    if model.axis == "revolute":
        names += ["gravity_cos", "gravity_sin"]
    if model.axis == "prismatic" or model.offset != 0.0:
        names.append("offset")
    names.append("coulomb")
    names += [f"stribeck:{d:g}" for d, _ in model.stribeck]
    if model.stribeck:
        names.append("stribeck_velocity")
    names += [f"viscous:{p}" for p, _ in model.viscous]
    if model.kind == "lugre":
        names += ["sigma0", "sigma1"]
    return tuple(names)


def _value_map(model: JointModel) -> dict[str, float]:
    values = {"inertia": model.inertia, "gravity_cos": model.gravity_cos,
              "gravity_sin": model.gravity_sin, "offset": model.offset,
              "coulomb": model.coulomb, "stribeck_velocity": model.stribeck_velocity,
              "sigma0": model.sigma0, "sigma1": model.sigma1}
    values.update({f"stribeck:{d:g}": a for d, a in model.stribeck})
    values.update({f"viscous:{p}": c for p, c in model.viscous})
    return values


def parameter_values(model: JointModel, names: Sequence[str],
                     absent: float = 0.0) -> np.ndarray:
    """The values of parameters ``names`` of ``model`` [their units].

    A Stribeck or viscous term the model lacks has amplitude ``absent`` (0: no term); a
    Stribeck velocity without a Stribeck term, and σ0, σ1 of a static model, are NaN.
    """
    values = _value_map(model)
    out = []
    for name in names:
        if name in values and not _undefined(model, name):
            out.append(values[name])
        else:
            out.append(absent if name.startswith(("stribeck:", "viscous:")) else math.nan)
    return np.asarray(out, dtype=float)


def _undefined(model: JointModel, name: str) -> bool:
    """Whether ``name`` has no meaning for ``model`` (Ω_s without terms, σ's of a static one)."""
    if name == "stribeck_velocity":
        return not model.stribeck
    return name in ("sigma0", "sigma1") and model.kind != "lugre"


def with_parameters(model: JointModel, names: Sequence[str],
                    values: Iterable[float]) -> JointModel:
    """``model`` with parameters ``names`` set to ``values`` [their units]."""
    given = dict(zip(names, map(float, values), strict=True))
    scalars = {k: v for k, v in given.items() if ":" not in k}
    stribeck = tuple((d, given.get(f"stribeck:{d:g}", a)) for d, a in model.stribeck)
    viscous = tuple((p, given.get(f"viscous:{p}", c)) for p, c in model.viscous)
    return replace(model, stribeck=stribeck, viscous=viscous, **scalars)


def _log_mask(names: Sequence[str]) -> np.ndarray:
    """Which of ``names`` are linearised in their logarithm (:data:`LOG_PARAMETERS`)."""
    return np.array([n in LOG_PARAMETERS for n in names], dtype=bool)


def _to_linear(names: Sequence[str], values: np.ndarray) -> np.ndarray:
    """Natural → linearisation coordinates (ln for :data:`LOG_PARAMETERS`)."""
    log = _log_mask(names)
    out = np.array(values, dtype=float)
    out[log] = np.log(out[log])
    return out


def _from_linear(names: Sequence[str], theta: np.ndarray) -> np.ndarray:
    """Linearisation → natural coordinates. A Gauss–Newton trial or an interval end far out in
    ln θ gives +∞, which the callers treat as such (a rejected trial, an open interval)."""
    log = _log_mask(names)
    out = np.array(theta, dtype=float)
    with np.errstate(over="ignore"):
        out[log] = np.exp(out[log])
    return out


def _unit(name: str, axis: str) -> str:
    u = units(axis)
    base = name.split(":")[0]
    if base == "viscous":
        p = int(name.split(":")[1])
        return f"{u['tau']}·{u['vel']}" if p == 1 else f"{u['tau']}·({u['vel']})^{p}"
    return {"inertia": u["inertia"], "stribeck_velocity": u["qd"], "sigma0": u["stiff"],
            "sigma1": u["damp"]}.get(base, u["tau"])


# ---------------------------------------------------------------------------- derived quantities
def static_velocity_grid(v_max: float, v_min: float | None = None, n: int = 40) -> np.ndarray:
    """Velocities [rad/s | m/s] of the static-curve band: ``n`` log-spaced speeds from ``v_min``
    (default v_max/1000) to ``v_max``, both signs, ascending (2n points)."""
    v_max = float(v_max)
    lo = v_max * 1e-3 if v_min is None or not v_min > 0 else min(float(v_min), v_max)
    speeds = np.geomspace(lo, v_max, n)
    return np.r_[-speeds[::-1], speeds]


def derived_values(model: JointModel, velocity: np.ndarray, v_max: float) -> np.ndarray:
    """[break-away torque, g(0), τ_ss(velocity)…] of ``model`` [N·m | N].

    Break-away: :meth:`~sparsefric.model.JointModel.breakaway_torque` up to ``v_max``;
    g(0) = f_c + ΣA; τ_ss the static curve at ``velocity``.
    """
    return np.r_[model.breakaway_torque(v_max), model.g0,
                 model.static_friction(velocity, outside="ignore")]


def _speed_range(data: Sequence[Prepared]) -> tuple[float, float]:
    """(5th percentile of the moving speeds, largest speed) of the records [rad/s | m/s]."""
    speed = np.abs(np.concatenate([p.signals.qd for p in data]))
    v_max = float(np.max(speed)) if speed.size else 1.0
    moving = speed[speed > 1e-3 * v_max]
    return (float(np.percentile(moving, 5)) if moving.size else v_max * 1e-3), max(v_max, 1e-12)


# ---------------------------------------------------------------------------- records
@dataclass(frozen=True)
class Records:
    """Samples of several prepared sets, stacked, with the slice and period of each record.

    Attributes
    ----------
    q, qd, qdd : ndarray
        Denoised position [rad | m], velocity [rad/s | m/s], acceleration [rad/s² | m/s²].
    tau : ndarray
        Torque [N·m | N] the residuals are taken of.
    bounds : tuple of (int, int)
        Slice of each record.
    dt : tuple of float
        Sample period [s] of each record.
    averaged : bool
        Residuals of the sample-averaged equation: ``tau`` and every term of τ̂ but I q̈
        averaged like the q̈ of a second difference (:meth:`average`), as the final
        coefficients were fitted (:attr:`sparsefric.steps.iterations.FrictionData.averaged`).
    held : bool
        There ``tau`` is a command held until the next sample, averaged by
        :func:`~sparsefric.differentiation.held_average` (``Prepared.torque_held``).
    """

    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    bounds: tuple[tuple[int, int], ...]
    dt: tuple[float, ...]
    averaged: bool = False
    held: bool = False

    @classmethod
    def of(cls, data: Sequence[Prepared], torque: str = "denoised") -> Records:
        """Stack ``data``; ``torque`` = ``denoised`` (``Prepared.tau``, what the selection
        regressed) or ``measured`` (``Prepared.tau_raw``, averaged where q̈ is a second
        difference of positions: what the final coefficients regressed)."""
        bounds, start = [], 0
        for p in data:
            bounds += [(start + a, start + b) for a, b in p.bounds]
            start += len(p)
        cat = np.concatenate
        tau = [p.tau if torque == "denoised" else p.tau_raw for p in data]
        out = cls(cat([p.signals.q for p in data]), cat([p.signals.qd for p in data]),
                  cat([p.signals.qdd for p in data]), cat(tau), tuple(bounds),
                  tuple(float(h) for p in data for h in p.dt))
        if torque == "measured" and all(p.sampled_acceleration for p in data):
            held = all(p.torque_held for p in data)
            return replace(out, averaged=True, held=held).with_torque(out.tau)
        return out

    def average(self, x: np.ndarray) -> np.ndarray:
        """``x`` (samples along axis 0) averaged as the residuals need (identity unless
        :attr:`averaged`)."""
        return sample_average(x, self.bounds) if self.averaged else x

    def with_torque(self, tau: np.ndarray) -> Records:
        """The same records with the torque ``tau`` [N·m] (averaged alike: a held command's
        average where :attr:`held`)."""
        tau = np.asarray(tau, dtype=float)
        if self.averaged:
            tau = torque_average(tau, self.bounds, self.held)
        return replace(self, tau=tau)

    def __len__(self) -> int:
        return len(self.tau)


def friction_torque(model: JointModel, rec: Records, substeps: int = 1) -> np.ndarray:
    """τ_f [N·m | N] of ``model`` along every record (z integrated per record from the default
    start of :func:`sparsefric.lugre.integrate_z`, in ``substeps`` parts per interval)."""
    return np.concatenate([model.friction_torque(rec.qd[a:b], h, outside="ignore",
                                                 substeps=substeps)
                           for (a, b), h in zip(rec.bounds, rec.dt, strict=True)])


def model_torque(model: JointModel, rec: Records, substeps: int = 1) -> np.ndarray:
    """τ̂ = I q̈ + a_c cos q + a_s sin q + o + τ_f [N·m | N] along every record (all but I q̈
    averaged where ``rec`` is; z in ``substeps`` parts per interval)."""
    inertial = model.inertia * rec.qdd
    rest = (model.rigid_body_torque(rec.q, rec.qdd) - inertial
            + friction_torque(model, rec, substeps))
    return inertial + rec.average(rest)


# ---------------------------------------------------------------------------- Jacobian
def _linear_column(name: str, rec: Records) -> np.ndarray | None:
    """∂τ̂/∂θ of a parameter τ̂ is linear in and that does not act through z; else None."""
    if name == "inertia":
        return rec.qdd
    if name == "gravity_cos":
        return rec.average(np.cos(rec.q))
    if name == "gravity_sin":
        return rec.average(np.sin(rec.q))
    if name == "offset":
        return np.ones_like(rec.q)
    if name.startswith("viscous:"):
        return rec.average(rec.qd ** int(name.split(":")[1]))
    return None


def fd_steps(names: Sequence[str], theta: np.ndarray, scale: float) -> np.ndarray:
    """Central-difference steps in the linearisation coordinates: :data:`FD_STEP` in ln θ for
    :data:`LOG_PARAMETERS`, :data:`FD_STEP`·max(|θ|, 10⁻³·``scale``) otherwise (``scale`` a
    typical value [N·m], e.g. g(0))."""
    log = _log_mask(names)
    floor = 1e-3 * max(abs(scale), 1e-12)
    return np.where(log, FD_STEP, FD_STEP * np.maximum(np.abs(theta), floor))


def central_differences(f: Callable[[np.ndarray], np.ndarray], theta: np.ndarray,
                        steps: np.ndarray, columns: Sequence[int]) -> np.ndarray:
    """(f(θ + h_j e_j) − f(θ − h_j e_j))/(2 h_j) for each j in ``columns``, as columns."""
    out = []
    for j in columns:
        e = np.zeros_like(theta)
        e[j] = steps[j]
        out.append((f(theta + e) - f(theta - e)) / (2.0 * steps[j]))
    return np.column_stack(out) if out else np.zeros((0, 0))


def torque_jacobian(model: JointModel, rec: Records, names: Sequence[str]
                    ) -> tuple[np.ndarray, np.ndarray]:
    """τ̂ and J = ∂τ̂/∂θ [N·m per unit of θ] along every record.

    θ are the parameters ``names`` in linearisation coordinates (ln Ω_s, ln σ0). Rigid-body and
    viscous columns are exact; the Coulomb level, Stribeck amplitudes, ln Ω_s, ln σ0 and σ1 act
    through g(q̇) and the bristle state, and are central differences of the simulated friction.
    """
    theta = _to_linear(names, parameter_values(model, names))
    J = np.empty((len(rec), len(names)))
    numeric = []
    for j, name in enumerate(names):
        col = _linear_column(name, rec)
        if col is None:
            numeric.append(j)
        else:
            J[:, j] = col

    dry = model.with_(viscous=())  # the viscous columns are exact: leave them out here

    def friction(t: np.ndarray) -> np.ndarray:
        return rec.average(friction_torque(with_parameters(dry, names, _from_linear(names, t)),
                                           rec))

    if numeric:
        J[:, numeric] = central_differences(friction, theta, fd_steps(names, theta, model.g0),
                                            numeric)
    return model_torque(model, rec), J


# ---------------------------------------------------------------------------- fast method
def optimum_step(model: JointModel, rec: Records, names: Sequence[str], J: np.ndarray,
                 residual: np.ndarray, halvings: int = 4, substeps: int = 1) -> np.ndarray:
    r"""The Gauss–Newton step from the estimate towards the prediction-error optimum.

    δ = argmin ‖r − J δ‖ in linearisation coordinates, halved until the simulated torque's
    sum of squared residuals decreases (0 if it never does). The pipeline's estimate is not
    the least-squares optimum of the prediction error: its iterations stop at a tolerance and
    fit subsets of the samples. The covariance describes the scatter of that optimum, so
    :func:`fast_uncertainty` widens each interval to reach from the estimate to θ̂ + δ.
    ``substeps``: the simulated torque's z integrated in that many parts per interval
    (:func:`model_torque`).
    """
    d = np.linalg.norm(J, axis=0)
    d[d == 0] = 1.0
    step = np.linalg.lstsq(J / d, residual, rcond=None)[0] / d
    theta = _to_linear(names, parameter_values(model, names))
    sse = float(residual @ residual)
    log = _log_mask(names)
    for _ in range(halvings + 1):
        values = _from_linear(names, theta + step)
        if np.all(np.isfinite(values)) and np.all(values[log] > 0):  # no underflow of e^θ
            r = rec.tau - model_torque(with_parameters(model, names, values), rec, substeps)
            if np.all(np.isfinite(r)) and float(r @ r) < sse:
                return step
        step = 0.5 * step
    return np.zeros_like(step)


def _intervals(estimate: np.ndarray, optima: np.ndarray, sd: np.ndarray, c: float
               ) -> tuple[np.ndarray, np.ndarray]:
    """[θ̂ − r − c·sd, θ̂ + r + c·sd], r the largest distance from the estimate θ̂ to one of
    ``optima`` (one row each). How far the torque's smoothing moves the estimate bounds its
    error of either sign: the measured torque's own optimum is biased too (a little, where the
    friction columns err along the motion), in a direction the data do not tell."""
    reach = np.abs(optima - estimate).max(axis=0)
    return estimate - reach - c * sd, estimate + reach + c * sd


#: Columns of the fast table: each optimum of :func:`fast_uncertainty` minus the estimate, in
#: the order of its ``steps`` (measured torque, denoised torque, lighter-smoothed angle, z
#: integrated in parts).
GAPS = ("gap", "denoised_gap", "angle_gap", "integration_gap")
#: Parts of each sample interval in which the fourth optimum integrates z
#: (:func:`sparsefric.lugre.integrate_z`): the model's own rule holds q̇ and g at their mean over
#: an interval, which misjudges the bristle's decay where q̇ reverses or rings within it
#: (``DESIGN.md`` §48).
INTEGRATION_SUBSTEPS = 4
#: Factor on each record's TV weight κ of the angle for the third optimum: a decade less
#: smoothing (:func:`lighter_smoothing`).
LIGHTER_SMOOTHING = 0.1
#: Relative overestimate of σ1 a torque taken as instantaneous allows [-]: a command held until
#: the next sample pairs with the motion h/2 late, which pre-sliding turns into σ1 + hσ0/2
#: (``DESIGN.md`` §68). On the simulated benchmark joints σ1 comes out +6 to +12 % high, on
#: fixed-seed zoo joints whose sampling resolves the stiction resonance +0.6 to +19.5 %, none
#: low; the fast intervals held it on 77 % (§65). σ1's interval reaches σ̂1·this/(1 + this)
#: or hσ0/2 further below, whichever is more (:func:`timing_bias`), unless the torque was
#: declared held (``torque_timing="hold"``).
SIGMA1_TIMING_BIAS = 0.15
#: Records longer than :data:`LONG_RECORD` samples are re-differentiated on
#: three evenly spaced windows of this many samples (:func:`lighter_smoothing`): the TV solve
#: of a 1e6-sample record cost 2.5 s, the Jacobian on it 1.5 s.
ANGLE_WINDOW = 20_000


def _parameter_rows(names: Sequence[str], theta: np.ndarray, steps: np.ndarray,
                    sd: np.ndarray, c: float, axis: str) -> pd.DataFrame:
    """Parameter rows (natural units) from linearisation coordinates: estimate θ̂, optima
    θ̂ + δ (``steps``, one row per :data:`GAPS` column) and sd (of ln θ for
    :data:`LOG_PARAMETERS`)."""
    lo, hi = _intervals(theta, theta + steps, sd, c)
    value = _from_linear(names, theta)
    log = _log_mask(names)
    gaps = {col: _from_linear(names, theta + step) - value
            for col, step in zip(GAPS, steps, strict=True)}
    return pd.DataFrame({
        "name": list(names), "kind": "parameter", "unit": [_unit(n, axis) for n in names],
        "estimate": value, "std": np.where(log, value * sd, sd),
        "lower": _from_linear(names, lo), "upper": _from_linear(names, hi), **gaps})


def lighter_smoothing(data: Sequence[Prepared], factor: float = LIGHTER_SMOOTHING, *,
                      windows: bool = False) -> list[Prepared]:
    """Every record of ``data`` differentiated again with ``factor`` × its TV weight κ of the
    angle (the torque's weight kept); empty unless every record was TV-differentiated with
    κ > 0 (user derivatives, other filters and noise-free angles have no such weight). With
    ``windows``, a record longer than :data:`LONG_RECORD` samples is replaced by three evenly
    spaced windows of :data:`ANGLE_WINDOW` samples, each differentiated on its own."""
    out = []
    for prep in data:
        if len(prep.pieces) != len(prep.params):
            return []
        for piece, p in zip(prep.pieces, prep.params, strict=True):
            kappa = p.get("regularization", 0.0)
            if p.get("method") != "tv" or not kappa > 0:
                return []
            parts = (spaced_windows(len(piece), LONG_RECORD, ANGLE_WINDOW) if windows
                     else [slice(None)])
            out += [prepare([piece if part == slice(None) else piece.part(part)],
                            regularization=(factor * kappa, p.get("tau_regularization")))
                    for part in parts]
    return out


def _records_step(model: JointModel, data: Sequence[Prepared], names: Sequence[str]
                  ) -> np.ndarray:
    """:func:`optimum_step` of the measured torque on the prepared ``data``."""
    rec = Records.of(data, "measured")
    tau_hat, J = torque_jacobian(model, rec, names)
    return optimum_step(model, rec, names, J, rec.tau - tau_hat)


def _optimum_steps(model: JointModel, data: Sequence[Prepared], names: Sequence[str]
                   ) -> tuple[np.ndarray, Records, np.ndarray, np.ndarray]:
    """The Gauss–Newton steps (:func:`optimum_step`) to the prediction-error optima of the
    measured torque, the denoised torque, the measured torque on the angle differentiated
    with a decade less smoothing (:func:`lighter_smoothing`; a zero step where it does not
    apply; records longer than :data:`LONG_RECORD`: the measured torque's step plus the
    difference of the two weights' steps on windows) and the measured torque simulated with z
    integrated in :data:`INTEGRATION_SUBSTEPS` parts per interval (J kept), one row each (the
    order of :data:`GAPS`); with the measured records, τ̂ and J on them."""
    rec = Records.of(data, "measured")
    tau_hat, J = torque_jacobian(model, rec, names)
    denoised = rec.with_torque(Records.of(data).tau)
    steps = [optimum_step(model, r, names, J, r.tau - tau_hat) for r in (rec, denoised)]
    long = any(len(piece) > LONG_RECORD for p in data for piece in p.pieces)
    lighter = lighter_smoothing(data, windows=long)
    if not lighter:
        steps.append(np.zeros(len(names)))
    elif long:
        # the differentiation's share on the windows, which the original weight
        # re-differentiates too (their own scatter and end effects cancel), from the optimum
        same = lighter_smoothing(data, 1.0, windows=True)
        steps.append(steps[0] + _records_step(model, lighter, names)
                     - _records_step(model, same, names))
    else:
        steps.append(_records_step(model, lighter, names))
    parts = INTEGRATION_SUBSTEPS
    steps.append(optimum_step(model, rec, names, J, rec.tau - model_torque(model, rec, parts),
                              substeps=parts))
    return np.array(steps), rec, tau_hat, J


def fast_uncertainty(model: JointModel, data: Sequence[Prepared], *, level: float = 0.95,
                     factor: float = 5.0, velocity: np.ndarray | None = None,
                     shifts: Mapping[str, np.ndarray] | None = None) -> ParameterUncertainty:
    r"""Asymptotic intervals of ``model`` from a HAC sandwich covariance (the ``fast`` method).

    The simulated torque τ̂(θ) of the final model is linearised in every identified parameter
    (:func:`parameter_names`; the selected structure and the exponents δ held fixed) along all
    samples of ``data`` (:func:`torque_jacobian`), and

    .. math:: \operatorname{Cov}\hat\theta = B^{-1} S B^{-1}

    with the Newey–West long-run score sum S (:func:`hac.hac_covariance`, lag windows L from
    :func:`hac.bandwidth`). The interval of a parameter (in ln θ for Ω_s and σ0) is

    .. math:: [\hat\theta - r - c\,s,\; \hat\theta + r + c\,s], \quad
              r = \max(|\theta^*_m - \hat\theta|, |\theta^*_d - \hat\theta|,
                        |\theta^*_\kappa - \hat\theta|, |\theta^*_z - \hat\theta|)

    with s its standard deviation (residuals of the measured torque, which the final
    coefficients regress), θ*_m, θ*_d and θ*_κ the prediction-error optima one Gauss–Newton
    step away (:func:`optimum_step`) of the measured torque, of the denoised torque, and of
    the measured torque on the angle differentiated again with a tenth of each record's TV
    weight (:func:`lighter_smoothing`), and of the measured torque simulated with z
    integrated in :data:`INTEGRATION_SUBSTEPS` parts per interval (the ``gap``,
    ``denoised_gap``, ``angle_gap`` and ``integration_gap`` columns), and c the fixed-b
    critical value of ``level`` at b = ΣL/n
    (:func:`critical_value`). Derived quantities (break-away torque, g(0) = f_c + ΣA [N·m])
    and the static curve τ_ss(q̇) at ``velocity`` by the delta method, ∇f Cov ∇fᵀ, with the
    same rule.

    The optima bracket biases of the preprocessing. The TV-smoothed q̈ and the smoothed
    torque are rounded differently at the steps of the acceleration: regressing the denoised
    torque attenuates the inertia (2–28 % on zoo joints, with the true friction). The
    measured torque is regressed in the sample-averaged equation where q̈ is a second
    difference of positions (:attr:`Records.averaged`), as the final coefficients were. The
    angle's smoothing rounds the transitions where σ0 and σ1 act and q̈ steps: how far a
    decade less of it moves the optimum is the differentiation's share (``DESIGN.md`` §45).
    The distance between the optima bounds the preprocessing's effect on either side of the
    estimate.

    ``shifts`` [N·m] move named rows' intervals by how far other structures the data
    support about equally put them (:func:`structure_shifts`: the models of the selection's
    sweep within the Akaike confidence set): each interval becomes the hull of itself and its
    copies shifted by them (the ``structure_shift`` column, the largest |shift|).
    An extrapolated break-away and g(0) reach down by the model's rise below the slowest
    steady speed and are open above (:func:`extrapolation_shifts`; the rise in the
    ``extrapolation_shift`` column). σ1's interval reaches below by the bias a held torque
    taken as instantaneous allows, max(hσ0/2, 0.13 σ̂1), which no re-differentiation of these
    data shows (:func:`timing_bias`; the ``timing_shift`` column). Where the
    pre-sliding deflection is below the position resolution, σ0's and σ1's intervals are open
    above (:func:`open_unresolved`, the ``unresolved`` column).

    **Not included**: the rest of the structure selection's uncertainty (which terms) — use
    :func:`bootstrap_uncertainty` for that — and biases of the model class. About 40
    evaluations of the friction along the data and one TV solve per record (on windows of
    records above :data:`LONG_RECORD` samples): 0.3 s on data/example (0.1 s without the
    lighter-smoothed optimum), +0.4 s for a 1e6-sample record.

    Parameters
    ----------
    model : JointModel
        The identified model (LuGre or static).
    data : sequence of Prepared
        The prepared training (and validation) sets it was identified on.
    level : float
        Nominal coverage [-].
    factor : float
        Lag window in integrated autocorrelation times (:func:`hac.bandwidth`).
    velocity : ndarray, optional
        Velocities [rad/s | m/s] of the static-curve band; default
        :func:`static_velocity_grid` over the speeds of ``data``.
    shifts : mapping of str to ndarray, optional
        Shifts [unit of the row] of rows ``name`` from other supported structures.

    Returns
    -------
    ParameterUncertainty
        ``method`` = ``"fast"``; ``table`` has ``gap``, ``denoised_gap``, ``angle_gap`` and
        ``integration_gap`` columns (θ*_m − θ̂, θ*_d − θ̂, θ*_κ − θ̂, θ*_z − θ̂ [unit]),
        ``structure_shift``, ``extrapolation_shift``, ``timing_shift`` and
        ``unresolved``; with the covariance, the lag windows and the critical value.
    """
    base = model.with_(validity=None, uncertainty=None)
    names = parameter_names(base)
    steps, rec, tau_hat, J = _optimum_steps(base, data, names)
    residual = rec.tau - tau_hat
    cov, lags = sandwich(J, residual, rec.bounds, factor)
    c = critical_value(level, sum(lags) / len(rec))
    v_min, v_max = _speed_range(data)
    grid = static_velocity_grid(v_max, v_min) if velocity is None else np.asarray(velocity)
    theta = _to_linear(names, parameter_values(base, names))
    params = _parameter_rows(names, theta, steps, np.sqrt(np.diag(cov)), c, base.axis)
    derived, sd, optima = _delta_method(base, names, cov, steps, grid, v_max)
    lower, upper = _intervals(derived, optima, sd, c)
    k = len(DERIVED)
    rows = pd.DataFrame({"name": list(DERIVED), "kind": "derived",
                         "unit": units(base.axis)["tau"], "estimate": derived[:k],
                         "std": sd[:k], "lower": lower[:k], "upper": upper[:k],
                         **{col: optima[i, :k] - derived[:k] for i, col in enumerate(GAPS)}})
    speeds = steady_speeds(data, base)
    omega_low = _lower_end(params, "stribeck_velocity")
    extrapolated = extrapolation_shifts(base, data, omega_low, speeds)
    table = widen(widen(pd.concat([params, rows], ignore_index=True), shifts or {}),
                  extrapolated, "extrapolation_shift")
    table = widen(table, timing_bias(base, data), "timing_shift")
    table["extrapolated"] = table["name"].isin(list(extrapolated))
    table = open_unresolved(clip_at_zero(table), base,
                            checks.median_position_noise(data[0]))
    return ParameterUncertainty("fast", level, table, grid, derived[k:], lower[k:], upper[k:],
                                lags=lags, covariance=cov, critical=c,
                                findings=knee_findings(base, speeds, omega_low))


def _lower_end(params: pd.DataFrame, name: str) -> float | None:
    """The lower end of parameter ``name``'s interval (None without a finite positive one)."""
    lower = params.loc[params["name"] == name, "lower"].to_numpy(float)
    return float(lower[0]) if len(lower) and np.isfinite(lower[0]) and lower[0] > 0 else None


def timing_bias(model: JointModel, data: Sequence[Prepared]) -> dict[str, np.ndarray]:
    """How far above the true σ1 [N·m·s/rad | N·s/m] a held torque taken as instantaneous may
    have put σ̂1, as a shift of σ1's interval for :func:`widen`; empty without a positive σ1,
    or where every record of ``data`` was declared held (``Prepared.torque_held``).

    The shift is σ̂1·b/(1 + b), b = :data:`SIGMA1_TIMING_BIAS`, the overestimate measured on
    the simulated joints (§65), or hσ0/2 where that is more and q̈ is a second difference of
    positions (:attr:`~sparsefric.preprocessing.Prepared.sampled_acceleration`): such a q̈
    averages the acceleration over ±h, which a command held over each sample interval drives
    as (τ_{k−1} + τ_k)/2, so that the torque pairs with the motion h/2 late and pre-sliding
    turns that into σ1 + hσ0/2 (``DESIGN.md`` §68; h the longest sample period of ``data``).
    Lightly damped bristles sampled coarsely are dominated by it: a zoo joint with σ1 = 1.32,
    σ0 = 2671 N·m/rad at 1 kHz came out at σ̂1 = 2.82 (§71)."""
    if model.kind != "lugre" or not model.sigma1 > 0 or all(p.torque_held for p in data):
        return {}
    shift = float(model.sigma1) * SIGMA1_TIMING_BIAS / (1.0 + SIGMA1_TIMING_BIAS)
    if all(p.sampled_acceleration for p in data):
        h = max(float(dt) for p in data for dt in p.dt)
        shift = max(shift, 0.5 * h * float(model.sigma0))
    return {"sigma1": np.array([-shift])}


def widen(table: pd.DataFrame, shifts: Mapping[str, np.ndarray],
          column: str = "structure_shift") -> pd.DataFrame:
    """``table`` with the interval of each row named in ``shifts`` stretched to the hull of
    itself and its copies moved by each shift (an infinite shift opens that end), and the
    largest finite |shift| in ``column`` (0 where none)."""
    out = table.assign(**{column: 0.0})
    for name, d in shifts.items():
        at = out["name"] == name
        if at.any() and len(d):
            out.loc[at, "lower"] += min(0.0, float(np.min(d)))
            out.loc[at, "upper"] += max(0.0, float(np.max(d)))
            out.loc[at, column] = float(np.max(np.abs(d[np.isfinite(d)]), initial=0.0))
    return out


#: Interval names of quantities that are never negative: the fit's sign constraints (f_c, A,
#: σ1), the admissibility check (I), Ω_s and σ0 by definition, and the break-away and g(0) as
#: their sums.
NONNEGATIVE = ("inertia", "coulomb", "stribeck_velocity", "sigma0", "sigma1", "breakaway",
               "g0")


def clip_at_zero(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with the lower ends of :data:`NONNEGATIVE` quantities and Stribeck amplitudes
    (``stribeck:<δ>``) at 0 at least. The linearisation is symmetric about the estimate, and
    where it is wide its lower end falls below zero (a zoo joint's break-away: [−131.5, 580.6]
    N·m around 220.7), a value the model cannot take."""
    out = table.copy()
    at = out["name"].isin(NONNEGATIVE) | out["name"].str.startswith("stribeck:")
    out.loc[at, "lower"] = np.fmax(out.loc[at, "lower"].to_numpy(dtype=float), 0.0)
    return out


def open_unresolved(table: pd.DataFrame, model: JointModel, noise: float) -> pd.DataFrame:
    """``table`` with σ0's interval open above and σ1's open above (and reaching 0 below) where
    the pre-sliding deflection g(0)/σ0 is below
    :data:`~sparsefric.steps.checks.MIN_DEFLECTION_STEPS` position-noise steps σ̂√12 [rad]
    (``noise`` = σ̂; :func:`sparsefric.steps.checks.resolution` warns of it); column
    ``unresolved``.

    A stiffer bristle deflects less, and below the encoder's rounding every stiffer one moves
    the joint alike: the data bound σ0 from below only, and the damping of a resonance they do
    not show not at all. The linearisation does not know it: on the zoo's LuGre models with
    that warning (four seeds, 37 of 157) the finite intervals held the true σ0 on 13 and σ1 on
    18, the estimates 57–99 % low (``DESIGN.md`` §43).
    """
    out = table.assign(unresolved=False)
    if checks.deflection_steps(model, noise) >= checks.MIN_DEFLECTION_STEPS:
        return out
    return _open_bristles(out, {"sigma0", "sigma1"})


def _open_bristles(table: pd.DataFrame, names: set[str],
                   stiffness_factor: float | None = None) -> pd.DataFrame:
    """``table`` (with an ``unresolved`` column) with the rows of ``names`` (``sigma0``,
    ``sigma1``) open above and marked ``unresolved``: σ1's reaching 0 below, σ0's reaching
    σ̂0 / ``stiffness_factor`` where one is given."""
    out = table.copy()
    rows = out["name"].isin(sorted(names))
    stiffness, damping = rows & (out["name"] == "sigma0"), rows & (out["name"] == "sigma1")
    if stiffness_factor is not None:
        out.loc[stiffness, "lower"] = np.fmin(out.loc[stiffness, "lower"],
                                              out.loc[stiffness, "estimate"] / stiffness_factor)
    out.loc[damping, "lower"] = np.fmin(out.loc[damping, "lower"], 0.0)
    out.loc[rows, "upper"] = np.inf
    out.loc[rows, "unresolved"] = True
    return out


def extrapolation_shifts(model: JointModel, data: Sequence[Prepared],
                         omega_low: float | None = None,
                         speeds: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """[−R, +∞) [N·m] for the break-away and g(0) when the break-away is extrapolated
    (:func:`sparsefric.steps.checks.reach` on the steady speeds of ``data``), R = g(0) − s·g(v)
    the model's rise below the slowest steady speed v (0 without a Stribeck term); (−∞, +R']
    for f_c when it is (:func:`sparsefric.steps.checks.coulomb_reach`), R' what the Stribeck
    terms still add at the fastest sliding speed: the truth's may have decayed there (f_c up to
    the friction there) or decay far above it (f_c down to 0, where :func:`clip_at_zero` stops
    it; ``DESIGN.md`` §73).

    That rise is the model's shape where no record slides steadily, so the covariance says
    nothing about it. Below, the interval reaches no rise at all (§40). Above, the data set no
    bound: a rise the records do not reach can be any height. Closed at +R, the intervals of
    seed 2024's joints 0–29 held the true break-away on 83 %, and every miss was an
    underestimate (−8 to −47 %) by a model with no Stribeck term or a flat one (``DESIGN.md``
    §63). Empty when the break-away rests on data. ``omega_low``: the lower end of Ω_s's
    interval [rad/s], for :func:`~sparsefric.steps.checks.reach`; ``speeds``: the steady
    speeds of ``data`` where the caller has them (:func:`steady_speeds`). Where the records
    have steady moves but none long enough for the bristles to settle
    (:func:`~sparsefric.steps.checks.unsettled`), the break-away is open above from the
    estimate.
    """
    speeds = steady_speeds(data, model) if speeds is None else speeds
    out = {}
    if len(speeds) and checks.reach(model, speeds, omega_low):
        rise = checks.rise_below(model, float(np.min(np.abs(speeds)))) * model.breakaway_torque()
        out["breakaway"] = out["g0"] = np.array([-max(rise, 0.0), np.inf])
    elif checks.settles_nowhere(data, speeds):  # checks.unsettled names it
        out["breakaway"] = out["g0"] = np.array([0.0, np.inf])
    fastest = checks.fastest_speed(data)
    if checks.coulomb_reach(model, fastest):
        out["coulomb"] = np.array([-np.inf, checks.rise_above(model, fastest)])
    return out


def steady_speeds(data: Sequence[Prepared], model: JointModel) -> np.ndarray:
    """The CVE speed levels [rad/s | m/s] of ``data``, measured with ``model``
    (:func:`~sparsefric.steps.checks.cve_of`)."""
    return checks.steady_speeds(checks.cve_of(data, model))


def knee_findings(model: JointModel, speeds: np.ndarray, omega_low: float | None
                  ) -> list[Finding]:
    """The ``extrapolated`` warning that only Ω_s's interval gives
    (:func:`~sparsefric.steps.checks.reach` with ``omega_low``): the identification, which
    knew the estimate alone, found the break-away on data."""
    if not len(speeds) or checks.reach(model, speeds):
        return []
    return checks.reach(model, speeds, omega_low)


def result_fast(result, data: Sequence[Prepared], level: float,
                **options) -> ParameterUncertainty:
    """:func:`fast_uncertainty` of ``result.model`` on its prepared ``data``, with the shifts
    of the structures the sweep that chose its terms supports (:func:`structure_shifts` of
    :func:`structure_sweep`) and a LuGre model's inertia reaching step 1's
    (:func:`static_estimates`)."""
    fast = fast_uncertainty(result.model, data, level=level,
                            shifts=structure_shifts(structure_sweep(result), level), **options)
    table = reach(fast.table, static_estimates(result), "static_shift")
    return replace(fast, table=open_unidentified(table, checks.unidentified(result.findings)))


def open_unidentified(table: pd.DataFrame, names: set[str]) -> pd.DataFrame:
    """``table`` with the rows of ``names`` (``sigma0``, ``sigma1``) opened as the
    identification's ``not_identified`` finding says: a factor
    :data:`~sparsefric.steps.checks.PROFILE_FACTOR` either way leaves the prediction error
    within its noise. σ0's interval reaches σ̂0 / that factor below and is open above, σ1's
    reaches 0 and is open above (as :func:`open_unresolved`; column ``unresolved``).

    The covariance is local: on fixed-seed zoo joint 11 (σ0 9.8e6 N/m, deflection below the
    encoder's count) σ̂0 came out 1.1e5 with that warning and a finite interval [3.8e4, 3.4e5];
    the model's own deflection g(0)/σ̂0, 86 times the truth's, passed the resolution check
    (``DESIGN.md`` §75)."""
    if not table["name"].isin(sorted(names)).any():
        return table
    return _open_bristles(table, names, checks.PROFILE_FACTOR)


def static_estimates(result) -> dict[str, float]:
    """Step 1's inertia [kg·m² | kg], for the interval of a LuGre model's to reach.

    Step 1 fits the sliding samples with the static friction, the LuGre stage every sample with
    the bristle transients. Along the ramps q̈ absorbs whatever the friction model misses there,
    and which of the two misses less the data do not say where the low-speed shape is open
    (a Stribeck exponent that fits the steady levels as well): on a fresh zoo joint the two
    ended at +20 % and +11 % with the LuGre interval ±3.6 %, and no warning. Over 113 LuGre
    models of three zoo seeds, with the fast interval reaching step 1's estimate every inertia
    off by more than 2 % has an interval that says so (54 of 57 before) and coverage goes 94 →
    96 % (``DESIGN.md`` §51). Empty for a static model, or where step 1's inertia is not
    positive (``checks.inertia_agreement`` reports that).
    """
    static, model = result.static_model, result.model
    if model is static or model.kind != "lugre" or not static.inertia > 0:
        return {}
    return {"inertia": float(static.inertia)}


def reach(table: pd.DataFrame, values: Mapping[str, float], column: str) -> pd.DataFrame:
    """``table`` with the interval of each row named in ``values`` stretched to reach that
    value, and |value − estimate| in ``column`` (0 where none)."""
    out = table.assign(**{column: 0.0})
    for name, value in values.items():
        at = out["name"] == name
        out.loc[at, "lower"] = np.fmin(out.loc[at, "lower"], value)
        out.loc[at, "upper"] = np.fmax(out.loc[at, "upper"], value)
        out.loc[at, column] = np.abs(value - out.loc[at, "estimate"])
    return out


def structure_sweep(result) -> SweepResult:
    """The sweep that chose ``result.model``'s friction terms: the last accepted refinement
    round's for a refined LuGre model, else step 1's."""
    lugre = result.lugre
    if (result.model is result.lugre_model and lugre is not None
            and lugre.refinement.refined and lugre.refinement.table is not None):
        return lugre.refinement.table
    return result.sweep


def structure_shifts(sweep: SweepResult, level: float = 0.95) -> dict[str, np.ndarray]:
    r"""How far f_c and g(0) = f_c + ΣA [N·m] move between the selected model and the other
    models of the sweep that AICc does not set apart.

    Every distinct model of the sweep that chose the terms — the λ path's supports, their
    linear-viscous variants, the exchanges of Stribeck exponents
    (:data:`~sparsefric.selection.EXPONENT`) and the Stribeck and viscous additions
    (:data:`~sparsefric.selection.ADDED`, :data:`~sparsefric.selection.VISCOUS_ADDED`) — by
    ascending Δ = AICc − AICc_selected, is kept
    until the Akaike weights w ∝ e^{−Δ/2} sum to ``level`` (Burnham and Anderson's confidence
    set of models; a support the path holds over several λ counts once). The structure is a
    choice the fast intervals otherwise hold fixed, and f_c and the break-away trade off with
    it: a Stribeck term the data barely show, a viscous power, the exponent. On the zoo's 157
    LuGre models (four seeds) f_c was inside its interval on 58 % with the exponent exchanges
    alone, 70 % with every structure (median half-width 2.7 → 3.7 %); the break-away on 68 →
    71 % (6.9 → 8.6 %; ``DESIGN.md`` §38, §44). Keys ``coulomb``, ``breakaway``, ``g0``; empty
    without alternatives.
    """
    kinds = np.asarray(sweep.kinds)
    aicc = sweep.table["aicc"].to_numpy(float)
    coef = np.array([r.coef for r in sweep.results])
    if not len(kinds) or not len(coef):
        return {}
    _, first = np.unique(coef, axis=0, return_index=True)
    rows = np.sort(first[np.isfinite(aicc[first])])
    if len(rows) < 2:
        return {}
    delta = aicc[rows] - aicc[sweep.selected]
    order = np.argsort(delta)
    weight = np.exp(-0.5 * (delta[order] - delta[order][0]))
    n = int(np.searchsorted(np.cumsum(weight) / weight.sum(), level)) + 1
    kept = coef[rows[order[:n]]]
    base = coef[sweep.selected]
    coulomb, dry = kinds == "coulomb", np.isin(kinds, ("coulomb", "stribeck"))
    fc = kept[:, coulomb].sum(axis=1) - base[coulomb].sum()
    g0 = kept[:, dry].sum(axis=1) - base[dry].sum()
    return {"coulomb": fc, "breakaway": g0, "g0": g0}


def _delta_method(model: JointModel, names: Sequence[str], cov: np.ndarray, steps: np.ndarray,
                  velocity: np.ndarray, v_max: float
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Derived values (:func:`derived_values`) at the estimate, their standard deviations
    √(∇f Cov ∇fᵀ), and their values at the optima θ̂ + ``steps`` (one row each)."""
    theta = _to_linear(names, parameter_values(model, names))

    def f(t: np.ndarray) -> np.ndarray:
        return derived_values(with_parameters(model, names, _from_linear(names, t)),
                              velocity, v_max)

    G = central_differences(f, theta, fd_steps(names, theta, model.g0), range(len(names)))
    var = np.einsum("ij,jk,ik->i", G, cov, G)
    return f(theta), np.sqrt(np.maximum(var, 0.0)), np.array([f(theta + s) for s in steps])


# ---------------------------------------------------------------------------- block bootstrap
def pass_cuts(q: np.ndarray, qd: np.ndarray, stop_distance: np.ndarray,
              min_samples: int | None = None, min_travel: float = 0.1) -> np.ndarray:
    """Indices where one record may be cut: inside its constant-direction passes.

    A pass is a run of samples moving one way (travelled distance to the nearest stop or
    reversal > 0) whose middle lies at least ``min_travel`` times the record's largest such
    distance from both ends (creep at rest and short corrections are no passes). Each pass is
    cut at k points equally spaced in travelled distance — its middle for k = 1 — with k as
    large as keeps the pieces of the pass at least ``min_samples`` long (at most 7; 1 if
    ``min_samples`` is None). There the
    joint slides steadily and the bristle state is at its steady state, the default start of
    :func:`sparsefric.lugre.integrate_z` for a record that starts moving.

    Parameters
    ----------
    q : ndarray
        Position [rad | m].
    qd : ndarray
        Velocity [rad/s | m/s].
    stop_distance : ndarray
        Travelled distance [rad | m] to the nearest stop or reversal (``Prepared.stop_distance``).
    min_samples : int, optional
        Shortest piece inside a pass [samples]; None: one cut per pass, in its middle.
    min_travel : float
        Shortest pass kept, as a fraction of the longest [-].
    """
    direction = np.where(stop_distance > 0, np.sign(qd), 0.0)
    starts = np.flatnonzero(np.r_[True, direction[1:] != direction[:-1]])
    ends = np.r_[starts[1:], len(qd)]
    passes = [(a, b) for a, b in zip(starts, ends, strict=True) if direction[a] != 0]
    peaks = np.array([stop_distance[a:b].max() for a, b in passes])
    travelled = np.cumsum(np.abs(np.diff(q, prepend=q[0])))
    cuts = []
    for (a, b), peak in zip(passes, peaks, strict=True):
        if peak < min_travel * peaks.max():
            continue
        k = 1 if min_samples is None else int(np.clip((b - a) // max(min_samples, 1) - 1, 1, 7))
        s = travelled[a:b] - travelled[a]
        cuts += [a + int(np.searchsorted(s, s[-1] * j / (k + 1))) for j in range(1, k + 1)]
    return np.array(cuts, dtype=int)


def record_pieces(prep: Prepared, min_samples: int | None = None) -> list[np.ndarray]:
    """Boundaries of the pieces of every record of ``prep`` (record-relative indices): the
    record's start, its cuts (:func:`pass_cuts`) and its end."""
    out = []
    x = prep.signals
    for a, b in prep.bounds:
        cut = pass_cuts(x.q[a:b], x.qd[a:b], prep.stop_distance[a:b], min_samples)
        out.append(np.unique(np.r_[0, cut[(cut > 0) & (cut < b - a)], b - a]))
    return out


def draw_blocks(edges: np.ndarray, block: int, rng: np.random.Generator
                ) -> list[tuple[int, int]]:
    """One circular moving-block resample of a record cut at ``edges`` (piece boundaries).

    ⌈P/``block``⌉ blocks of ``block`` consecutive pieces are drawn with replacement among the
    P blocks that start at each of the P pieces, wrapping from the last piece to the first, so
    that every piece is equally likely (an ordinary moving-block draw under-weights the pieces
    at the ends of a record, which here hold its start from and end at rest). A resample has
    the record's number of pieces (rounded up to whole blocks).

    Returns
    -------
    list of (int, int)
        Record-relative sample slices; contiguous pieces of a block form one slice, a block
        that wraps gives two.
    """
    n_pieces = len(edges) - 1
    out = []
    for s in rng.integers(0, n_pieces, size=math.ceil(n_pieces / block)):
        first = np.arange(s, s + block) % n_pieces
        wrap = int(np.argmax(np.diff(first) < 0)) + 1 if np.any(np.diff(first) < 0) else block
        for part in (first[:wrap], first[wrap:]):
            if part.size:
                out.append((int(edges[part[0]]), int(edges[part[-1] + 1])))
    return out


def residual_correlation(data: Sequence[Prepared], residual: np.ndarray) -> float:
    """The largest integrated autocorrelation time (:func:`correlation_time`) of the residuals
    ``residual`` [N·m] of one record of the stacked ``data`` [samples]."""
    taus, start = [1.0], 0
    for p in data:
        taus += [correlation_time(residual[start + a:start + b]) for a, b in p.bounds]
        start += len(p)
    return float(max(taus))


def block_length(pieces: Sequence[np.ndarray], correlation: float, factor: float = 5.0) -> int:
    """Pieces per bootstrap block: 1, or as many as span ``factor`` residual correlation times
    ``correlation`` [samples] at the median piece length."""
    lengths = np.concatenate([np.diff(e) for e in pieces]) if len(pieces) else np.ones(1)
    return max(1, math.ceil(factor * correlation / max(float(np.median(lengths)), 1.0)))


@dataclass(frozen=True)
class Target:
    """What each bootstrap fit reports: the original model's parameters and kind, and the grid
    of the static-curve band.

    Attributes
    ----------
    names : tuple of str
        Parameters (:func:`parameter_names` of the original model).
    kind : {"lugre", "static"}
        The original model's friction kind; a resample reports its model of that kind.
    velocity : ndarray
        Velocities [rad/s | m/s] of the static-curve band.
    v_max : float
        Largest speed of the break-away search [rad/s | m/s].
    """

    names: tuple[str, ...]
    kind: str
    velocity: np.ndarray
    v_max: float


@dataclass(frozen=True)
class Draw:
    """The outcome of one resample: parameter and derived values (NaN where undefined), the
    terms of the step-1 choice and of the final model, and the kind of the result."""

    values: np.ndarray
    derived: np.ndarray
    step1: frozenset[str]
    final: frozenset[str]
    kind: str


def model_terms(model: JointModel, terms: Sequence) -> frozenset[str]:
    """Plain-text names of the step-1 candidates (``terms``: :class:`~sparsefric.
    feature_library.Term`) that ``model``'s friction contains."""
    have = {("viscous", float(p)) for p, c in model.viscous if c != 0}
    have |= {("stribeck", float(d)) for d, a in model.stribeck if a != 0}
    if model.coulomb != 0 or model.kind == "lugre":
        have.add(("coulomb", 0.0))
    return frozenset(t.name for t in terms if (t.kind, float(t.param)) in have)


def draw_of(result, target: Target) -> Draw:
    """Summarise one :class:`~sparsefric.result.IdentificationResult` for the bootstrap.

    The parameters come from its model of the original kind: the LuGre model (also when the
    static one was kept as the result) or the step-1 static model; NaN if it has none.
    """
    model = result.lugre_model if target.kind == "lugre" else result.static_model
    terms = result.library.terms()
    step1 = frozenset(t.name for t, a in zip(terms, result.sweep.best.support, strict=True)
                      if a and t.kind in ("viscous", "coulomb", "stribeck"))
    if model is None:
        nan = np.full(len(target.names), math.nan)
        return Draw(nan, np.full(len(DERIVED) + len(target.velocity), math.nan), step1,
                    frozenset(), result.model.kind)
    model = model.with_(validity=None)
    return Draw(parameter_values(model, target.names),
                derived_values(model, target.velocity, target.v_max), step1,
                model_terms(model, terms), result.model.kind)


#: Arrays of the prepared records, the warm-started settings and the target, in each worker.
_STATE: dict = {}


def _init_worker(state: dict) -> None:
    _STATE.clear()
    _STATE.update(state)


def _block_trajectories(rec: Records, names: Sequence[str],
                        blocks: Sequence[tuple[int, int, int]]) -> list[Trajectory]:
    """Trajectories of the blocks (record index, start, stop) of ``rec``, with its prepared
    derivatives and denoised torque (read by ``differentiation="given"``)."""
    out = []
    for i, a, b in blocks:
        r0 = rec.bounds[i][0]
        sl = slice(r0 + a, r0 + b)
        out.append(Trajectory(t=np.arange(b - a) * rec.dt[i], q=rec.q[sl], tau=rec.tau[sl],
                              qd=rec.qd[sl], qdd=rec.qdd[sl], name=f"{names[i]}[{a}:{b}]"))
    return out


def _run_resample(task: tuple[list, list]) -> Draw | str:
    """Identify one resample (in a worker): a :class:`Draw`, or the error message."""
    from threadpoolctl import threadpool_limits

    from sparsefric.errors import SparsefricError
    from sparsefric.identify import identify

    s = _STATE
    train = _block_trajectories(s["train"], s["train_names"], task[0])
    val = _block_trajectories(s["validate"], s["validate_names"], task[1]) if task[1] else None
    try:
        with threadpool_limits(1):
            return draw_of(identify(train, val, s["settings"]), s["target"])
    except (SparsefricError, ValueError, np.linalg.LinAlgError) as exc:
        return f"{exc.__class__.__name__}: {exc}"


def resample_tasks(pieces: Sequence[Sequence[np.ndarray]], block: int, resamples: int,
                   seed: int) -> list[tuple[list, ...]]:
    """The blocks of every resample: per role (e.g. training, validation), a list of (record,
    start, stop). Resample k draws from its own generator spawned from ``seed``, so it does not
    depend on how many resamples or workers there are."""
    tasks = []
    for ss in np.random.SeedSequence(seed).spawn(resamples):
        rng = np.random.default_rng(ss)
        tasks.append(tuple([(i, a, b) for i, edges in enumerate(role)
                            for a, b in draw_blocks(edges, block, rng)] for role in pieces))
    return tasks


def default_workers() -> int:
    """The cores this process may run on (1 in a daemonic worker, which cannot start
    processes)."""
    if multiprocessing.current_process().daemon:
        return 1
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _execute(tasks: list, state: dict, workers: int,
             progress: Callable[[int, int], None] | None) -> list[Draw | str]:
    """Run :func:`_run_resample` on every task, in order, on ``workers`` processes (1: here)."""
    out: list[Draw | str] = []
    if workers <= 1:
        _init_worker(state)
        results: Iterable = map(_run_resample, tasks)
        for r in results:
            out.append(r)
            if progress:
                progress(len(out), len(tasks))
        return out
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_init_worker,
                             initargs=(state,)) as pool:
        for r in pool.map(_run_resample, tasks):
            out.append(r)
            if progress:
                progress(len(out), len(tasks))
    return out


def warm_settings(settings, model: JointModel, static_model: JointModel,
                  presliding_distance: float | None = None):
    """``settings`` (:class:`~sparsefric.identify.Settings`) for refits on prepared blocks.

    Derivatives as given (the blocks carry the first fit's), the Ω_s starts of ``settings`` plus
    Ω_s of the step-1 and of the final model, and one σ0 start: the one the kept run of the
    first fit started from (``model.extra["fit"]["sigma0_init"]``; all of ``settings``'s if the
    model does not record it). Starting at the final σ0 instead is no warm start: the
    iterations from the step-1 model do not return to it.

    ``presliding_distance`` [rad | m] fixes which samples the static fits use, unless the
    settings fix it already. Left to the default rule — a fraction of each trajectory's
    position span — the samples near stops that the static fit sees would change with the
    cutting into blocks (whose spans are shorter), and with them the rigid body: on a simple
    joint, cutting the records without resampling moved I by −0.8 % to −2.8 %.
    """
    omegas = {float(m.stribeck_velocity) for m in (static_model, model) if m.stribeck}
    init = model.extra.get("fit", {}).get("sigma0_init")
    sigma0 = (float(init),) if isinstance(init, int | float) and init > 0 else \
        settings.sigma0_starts
    fixed = settings.preprocessor.presliding_distance
    pre = Preprocessor("given", presliding_distance=fixed if fixed is not None
                       else presliding_distance)
    return replace(settings, preprocessor=pre,
                   omega_starts=tuple(sorted(omegas | set(settings.omega_starts))),
                   sigma0_starts=sigma0)


def percentile_table(model: JointModel, target: Target, values: np.ndarray,
                     derived: np.ndarray, level: float) -> pd.DataFrame:
    """Parameter and derived rows: the estimate of ``model``, the bootstrap standard deviation
    and the percentile interval of ``level`` (NaN resamples ignored).

    ``values`` (R, p) and ``derived`` (R, 2 + …) are the resamples' parameters and derived
    quantities.
    """
    estimate = np.r_[parameter_values(model, target.names),
                     derived_values(model, target.velocity, target.v_max)[:len(DERIVED)]]
    x = np.column_stack([values, derived[:, :len(DERIVED)]])
    lo, hi = _percentiles(x, level)
    std = _nanstd(x)
    kinds = ["parameter"] * len(target.names) + ["derived"] * len(DERIVED)
    names = [*target.names, *DERIVED]
    return pd.DataFrame({"name": names, "kind": kinds,
                         "unit": [_unit(n, model.axis) for n in names], "estimate": estimate,
                         "std": std, "lower": lo, "upper": hi})


def _percentiles(x: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Columnwise (100·(1 − level)/2, 100·(1 + level)/2) percentiles, NaN ignored."""
    q = 50.0 * (1.0 - level)
    finite = np.isfinite(x).any(axis=0)
    lo = np.full(x.shape[1], math.nan)
    hi = np.full(x.shape[1], math.nan)
    if finite.any():
        lo[finite], hi[finite] = np.nanpercentile(x[:, finite], [q, 100.0 - q], axis=0)
    return lo, hi


def _nanstd(x: np.ndarray) -> np.ndarray:
    count = np.isfinite(x).sum(axis=0)
    out = np.full(x.shape[1], math.nan)
    ok = count > 1
    out[ok] = np.nanstd(x[:, ok], axis=0, ddof=1)
    return out


def inclusion_table(terms: Sequence, model: JointModel, draws: Sequence[Draw]) -> pd.DataFrame:
    """Inclusion frequency of every friction candidate (``terms``) over ``draws``: in the step-1
    AICc choice and in the final model; ``selected``: in ``model``; ``family``: the kind of the
    family rows that judge the candidate ('' for none).

    Below the candidates, the rows of each family of nearly collinear candidates
    (:data:`FAMILIES`): the share of draws with at least k members of any exponent or power,
    for k = 1 up to the most that the model or a draw has. The resamples split one Stribeck
    rise between neighbouring exponents, and a faster-than-linear viscous rise between q̇²…q̇⁵
    (over one speed range q̇³ and q̇⁵ correlate to 0.98); whether there is such a rise at all
    is the family's row."""
    friction = [t for t in terms if t.kind in ("viscous", "coulomb", "stribeck")]
    chosen = model_terms(model, friction)
    n = max(len(draws), 1)
    table = pd.DataFrame({
        "term": [t.name for t in friction], "kind": [t.kind for t in friction],
        "selected": [t.name in chosen for t in friction],
        "step1": [sum(t.name in d.step1 for d in draws) / n for t in friction],
        "final": [sum(t.name in d.final for d in draws) / n for t in friction],
        "family": [next((kind for kind, (member, _) in FAMILIES.items() if member(t)), "")
                   for t in friction]})
    rows = [table]
    for kind, (_, name) in FAMILIES.items():
        members = frozenset(table.term[table.family == kind])
        if not members:
            continue
        count = {part: [len(getattr(d, part) & members) for d in draws]
                 for part in ("step1", "final")}
        most = max([1, len(chosen & members), *count["step1"], *count["final"]])
        ks = range(1, most + 1)
        rows.append(pd.DataFrame({
            "term": [name(k) for k in ks], "kind": kind,
            "selected": [len(chosen & members) >= k for k in ks],
            **{part: [sum(c >= k for c in count[part]) / n for k in ks]
               for part in ("step1", "final")}, "family": ""}))
    return pd.concat(rows, ignore_index=True)


def stribeck_family(k: int) -> str:
    """Plain-text name of the inclusion row "at least ``k`` Stribeck terms, any exponent"."""
    return "Stribeck rise, any delta" if k == 1 else f"{k} Stribeck rises, any delta"


def viscous_family(k: int) -> str:
    """Plain-text name of the inclusion row "at least ``k`` viscous powers q̇ᵖ, p ≥ 2"."""
    return ("faster-than-linear viscous term, any power" if k == 1
            else f"{k} faster-than-linear viscous terms, any power")


#: Families of candidates the resamples share out (:func:`inclusion_table`): kind of their rows
#: → (whether a candidate term is a member, the row's name for "at least k members").
FAMILIES = {
    "stribeck_family": (lambda t: t.kind == "stribeck", stribeck_family),
    "viscous_family": (lambda t: t.kind == "viscous" and int(t.param) >= 2, viscous_family),
}


def bootstrap_uncertainty(result, train: Sequence[Trajectory],  # noqa: PLR0913
                          validate: Sequence[Trajectory] | None, settings, *,
                          resamples: int = 100, level: float = 0.95, seed: int = 0,
                          workers: int | None = None, block: int | None = None,
                          progress: Callable[[int, int], None] | None = None
                          ) -> ParameterUncertainty:
    """Moving-block bootstrap of the whole identification (the ``bootstrap`` method).

    Each training and validation record of the fit is cut inside its passes, where the joint
    slides steadily, into pieces of at least :data:`PIECE_FACTOR` integrated autocorrelation
    times of the model's residuals and :data:`MIN_PIECE` samples (:func:`record_pieces`); a
    resample draws circular blocks of ``block`` consecutive pieces with replacement within
    each record (:func:`draw_blocks`; records are strata, so the speed design is kept), each
    block a trajectory of its own, and reruns :func:`sparsefric.identify.identify` on them —
    step-1 selection, LuGre iterations, refinement — with the prepared derivatives and warm
    starts (:func:`warm_settings`). Intervals are the percentiles (1 ∓ ``level``)/2 of the
    resamples' parameters (a term a resample drops counts as amplitude 0), of the break-away
    torque, g(0) and, pointwise, the static curve; the inclusion frequencies of every friction
    candidate sit beside the step-1 AICc path. The cutting into blocks and the fixed pre-sliding
    distance of the refits (:func:`warm_settings`) change the estimator a little: the
    intervals span themselves and their copy shifted by the estimate minus a reference refit
    of all pieces once (the ``reference`` column), the bootstrap world's counterpart of the
    estimate (:func:`hull_shift`); the resamples carry one torque, the denoised one, so the
    shift also carries the difference the final refit on the measured torque makes
    (``DESIGN.md`` §33, §41). This covers the
    uncertainty of the structure, not the variability of the differentiation (done once) or a
    bias common to all resamples: each interval is finally the hull of its own and the fast
    method's (:func:`with_fast`), which brackets what the preprocessing moves.

    Parameters
    ----------
    result : IdentificationResult
        The fit to assess.
    train, validate : sequence of Trajectory
        The trajectories it was fitted on (prepared sets are taken from its cache).
    settings : Settings
        The settings of the fit (``SparseFric(...).settings()``).
    resamples : int
        Number of resamples R (≥ 2; percentile intervals of level 0.95 want R ≥ 200 for
        stable ends, 50–100 give rough ones).
    level : float
        Nominal coverage [-].
    seed : int
        Seed of the block draws.
    workers : int, optional
        Processes (default: the available cores; 1 runs here).
    block : int, optional
        Pieces per block (default :func:`block_length`: 1, or more if a piece is shorter than
        the residual correlation).
    progress : callable, optional
        ``progress(done, total)`` after each resample.

    Returns
    -------
    ParameterUncertainty
        ``method`` = ``"bootstrap"``, with ``inclusion``, ``resamples`` (successful fits),
        ``failed`` and ``lugre_share``; ``table`` has a ``reference`` column. R + 1 fits.
    """
    data = [result.prepare(train)] + ([result.prepare(validate)] if validate else [])
    model = result.model.with_(validity=None, uncertainty=None)
    v_min, v_max = _speed_range(data)
    target = Target(parameter_names(model), model.kind, static_velocity_grid(v_max, v_min),
                    v_max)
    rec = Records.of(data)
    tau_c = residual_correlation(data, rec.tau - model_torque(model, rec))
    shortest = max(MIN_PIECE, math.ceil(PIECE_FACTOR * tau_c))
    pieces = [record_pieces(p, shortest) for p in data]
    block = block or block_length([e for role in pieces for e in role], tau_c)
    whole = tuple([(i, int(e[k]), int(e[k + 1])) for i, e in enumerate(role)
                   for k in range(len(e) - 1)] for role in pieces)
    tasks = [whole, *resample_tasks(pieces, block, resamples, seed)]
    warm = warm_settings(settings, result.lugre_model or model, result.static_model,
                         result.window * float(np.mean(data[0].span)))
    state = {"settings": warm, "target": target,
             "train": Records.of(data[:1]), "train_names": data[0].names,
             "validate": Records.of(data[1:]) if validate else None,
             "validate_names": data[1].names if validate else []}
    outcomes = _execute([(t[0], t[1] if validate else []) for t in tasks], state,
                        workers or default_workers(), progress)
    boot = _summary(model, target, outcomes[0], outcomes[1:], level, result.library.terms())
    return with_fast(boot, result_fast(result, data, level, velocity=target.velocity))


def with_fast(boot: ParameterUncertainty, fast: ParameterUncertainty) -> ParameterUncertainty:
    """``boot`` with every interval (rows of both tables, and the static band pointwise) the
    hull of its own and ``fast``'s on the same velocities.

    The resamples spread the structure selection but share the first fit's derivatives and
    torque smoothing; the fast method brackets what those move (its two optima) and the
    structures of the selection's sweep the data support, not the rest of the selection. Each
    misses what the other holds: on 28 fixed-seed zoo joints the bootstrap alone held I, f_c,
    the break-away, σ0, σ1 on 23, 23, 21, 14, 13, the fast method on 27, 16, 21, 16, 16, the
    hull on 27, 25, 25, 20, 20 (``DESIGN.md`` §41)."""
    table = boot.table.copy()
    other = fast.table.set_index("name")
    both = table["name"].isin(other.index)
    names = table.loc[both, "name"]
    table.loc[both, "lower"] = np.fmin(table.loc[both, "lower"].to_numpy(),
                                       other.loc[names, "lower"].to_numpy())
    table.loc[both, "upper"] = np.fmax(table.loc[both, "upper"].to_numpy(),
                                       other.loc[names, "upper"].to_numpy())
    for flag in ("unresolved", "extrapolated"):
        if flag in other:
            table[flag] = table["name"].map(other[flag]).fillna(False).astype(bool)
    return replace(boot, table=table,
                   static_lower=np.fmin(boot.static_lower, fast.static_lower),
                   static_upper=np.fmax(boot.static_upper, fast.static_upper),
                   findings=[*boot.findings, *fast.findings])


def _summary(model: JointModel, target: Target, reference: Draw | str,
             outcomes: Sequence[Draw | str], level: float, terms: Sequence
             ) -> ParameterUncertainty:
    """The bootstrap result from the resamples' draws, widened to their copy shifted by the
    estimate minus the ``reference`` fit (of all pieces once) where it has a value."""
    draws = [d for d in outcomes if isinstance(d, Draw)]
    k = len(DERIVED)
    values = np.array([d.values for d in draws]).reshape(len(draws), len(target.names))
    derived = np.array([d.derived for d in draws]).reshape(len(draws), k + len(target.velocity))
    table = percentile_table(model, target, values, derived, level)
    estimate = derived_values(model, target.velocity, target.v_max)
    lo, hi = _percentiles(derived[:, k:], level)
    if isinstance(reference, Draw):
        table["reference"] = np.r_[reference.values, reference.derived[:k]]
        table["lower"], table["upper"] = hull_shift(
            table.lower.to_numpy(), table.upper.to_numpy(),
            np.nan_to_num(table.estimate - table.reference))
        lo, hi = hull_shift(lo, hi, np.nan_to_num(estimate[k:] - reference.derived[k:]))
    return ParameterUncertainty(
        "bootstrap", level, table, target.velocity, estimate[k:], lo, hi,
        inclusion=inclusion_table(terms, model, draws), resamples=len(draws),
        failed=len(outcomes) - len(draws),
        lugre_share=sum(d.kind == "lugre" for d in draws) / max(len(draws), 1))


def hull_shift(lower: np.ndarray, upper: np.ndarray,
               shift: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The hull of the intervals [lower, upper] and [lower + shift, upper + shift].

    The bootstrap's percentiles describe the resamples' estimator (blocks, the denoised torque);
    ``shift`` = estimate − reference carries them to the estimate's. Which of the two carries
    the smaller bias the data cannot say — the same question as the fast method's two optima —
    so the interval keeps both: on 28 fixed-seed zoo joints the shifted intervals held the
    true inertia on 16 (on well-determined joints it lay between the reference and the
    estimate, 0.5–1 % from the estimate), their hull on 23 (``DESIGN.md`` §41)."""
    return lower + np.minimum(shift, 0.0), upper + np.maximum(shift, 0.0)


def path_with_inclusion(selection: pd.DataFrame, unc: ParameterUncertainty) -> pd.DataFrame:
    """The step-1 AICc path (``IdentificationResult.selection``: one row per λ, one column per
    candidate term) with two more rows, ``inclusion (step 1)`` and ``inclusion (final)``: the
    bootstrap inclusion frequency [-] of each term, under its column (other columns empty).
    Without inclusion frequencies (the fast method) the path is returned unchanged."""
    if unc.inclusion is None:
        return selection
    freq = unc.inclusion.set_index("term")
    rows = pd.DataFrame([freq.step1.to_dict(), freq.final.to_dict()],
                        index=["inclusion (step 1)", "inclusion (final)"])
    return pd.concat([selection, rows.reindex(columns=selection.columns)])


def validity_range(data: Sequence[Prepared], window: float) -> ValidityRange:
    """The range of the identification data for the model file's ``validity`` section.

    Velocity, position and (measured) torque of every sample of ``data``; speed of the samples
    the static fits rest on, ``Prepared.sliding_mask(window)`` with ``window`` the fit's
    pre-sliding window (``IdentificationResult.window``) [see
    :meth:`~sparsefric.validity.ValidityRange.from_samples`].
    """
    cat = np.concatenate
    sliding = cat([p.sliding_mask(window) & (np.abs(p.signals.qd) > 0) for p in data])
    return ValidityRange.from_samples(cat([p.signals.q for p in data]),
                                      cat([p.signals.qd for p in data]),
                                      cat([p.tau_raw for p in data]), sliding=sliding)


#: Readable names of the intervals of :data:`sparsefric.model.INTERVAL_NAMES`, as the report's
#: parameter table writes them.
LABELS = {"inertia": "I (inertia)", "gravity_cos": "a_c (gravity cos)",
          "gravity_sin": "a_s (gravity sin)", "offset": "o (offset)",
          "coulomb": "f_c (Coulomb)", "stribeck_velocity": "Ω_s (Stribeck velocity)",
          "sigma0": "σ0 (bristle stiffness)", "sigma1": "σ1 (bristle damping)",
          "breakaway": "break-away torque", "g0": "g(0) = f_c + ΣA"}


def _label(name: str) -> str:
    kind, _, value = name.partition(":")
    if kind == "stribeck":
        return f"A (Stribeck, δ = {value})"
    if kind == "viscous":
        return f"c_{value} (viscous q̇^{value})"
    return LABELS.get(name, name)


def interval_table(model: JointModel) -> pd.DataFrame:
    """The intervals of ``model.uncertainty`` beside the model's values, for display.

    The break-away torque is taken up to the fastest speed of the validity range, as the
    intervals' (2 rad/s without a range).

    Returns
    -------
    DataFrame
        One row per interval: ``parameter`` (readable name), ``name`` (the file's), ``unit``,
        ``estimate``, ``lower``, ``upper`` [unit] and ``±`` (half-width over |estimate|)
        [%]; no rows without intervals.
    """
    columns = ["parameter", "name", "unit", "estimate", "lower", "upper", "± [%]"]
    unc = model.uncertainty
    if unc is None or not unc.intervals:
        return pd.DataFrame(columns=columns)
    v = model.validity.velocity if model.validity is not None else None
    v_max = max(abs(v[0]), abs(v[1])) if v else 2.0
    derived = dict(zip(DERIVED, derived_values(model, np.empty(0), v_max), strict=True))
    rows = []
    for name, (lo, hi) in unc.intervals.items():
        value = derived[name] if name in derived else float(parameter_values(model, [name])[0])
        half = round(50.0 * (hi - lo) / abs(value), 2) if value else math.nan
        rows.append([_label(name), name, _unit(name, model.axis), value, lo, hi, half])
    return pd.DataFrame(rows, columns=columns)


# ---------------------------------------------------------------------------- entry point, findings
def estimate_uncertainty(result, train: Sequence[Trajectory],
                         validate: Sequence[Trajectory] | None = None, settings=None, *,
                         method: str = "fast", level: float = 0.95,
                         **options) -> ParameterUncertainty | None:
    """Intervals of ``result.model`` by ``method`` (``"none"``, ``"fast"``, ``"bootstrap"``).

    ``fast``: :func:`fast_uncertainty` on the prepared training and validation sets (from the
    result's cache); ``bootstrap``: :func:`bootstrap_uncertainty` (needs ``settings``).
    ``options`` go to the method's function. ``"none"`` returns None.
    """
    if method == "none":
        return None
    if method == "fast":
        data = [result.prepare(train)] + ([result.prepare(validate)] if validate else [])
        return result_fast(result, data, level, **options)
    if method == "bootstrap":
        if settings is None:
            raise ValueError("the bootstrap reruns the identification: pass its settings")
        return bootstrap_uncertainty(result, train, validate, settings, level=level, **options)
    raise ValueError(f"unknown uncertainty method {method!r}; choose none, fast or bootstrap")


def with_uncertainty(result, train: Sequence[Trajectory],
                     validate: Sequence[Trajectory] | None, settings, method: str = "fast", *,
                     progress: bool = False, **options) -> ParameterUncertainty | None:
    """Record on ``result`` the range of its data and the intervals of its model.

    Every model of ``result`` (the result, the static and the LuGre one) gets the
    :func:`validity_range` of the prepared training and validation data; ``result.model``
    also the intervals of :func:`estimate_uncertainty` by ``method`` (``"none"``: none), whose
    :func:`uncertainty_findings` join ``result.findings``. Models that were one object stay one.

    Parameters
    ----------
    result : IdentificationResult
        A fit, changed in place.
    train, validate : sequence of Trajectory
        The trajectories it was fitted on.
    settings : Settings
        The settings of the fit (the bootstrap reruns it).
    method : {"none", "fast", "bootstrap"}
    progress : bool
        Show a progress bar of the bootstrap's fits on stderr.
    **options
        Passed to the method's function (``level``, ``resamples``, ``workers``…).

    Returns
    -------
    ParameterUncertainty or None
        The intervals (None for ``"none"``).
    """
    data = [result.prepare(train)] + ([result.prepare(validate)] if validate else [])
    validity = validity_range(data, result.window)
    with tqdm(disable=not (progress and method == "bootstrap"), leave=False, unit="fit",
              desc="bootstrap") as bar:
        if method == "bootstrap":
            options.setdefault("progress", _advance(bar))
        unc = estimate_uncertainty(result, train, validate, settings, method=method, **options)
    new = {id(m): m.with_(validity=validity)
           for m in (result.static_model, result.lugre_model) if m is not None}
    new[id(result.model)] = result.model.with_(
        validity=validity, uncertainty=None if unc is None else unc.to_model())
    result.static_model = new[id(result.static_model)]
    if result.lugre_model is not None:
        result.lugre_model = new[id(result.lugre_model)]
    result.model = new[id(result.model)]
    if unc is not None:
        result.findings += uncertainty_findings(unc)
    return unc


def _advance(bar: tqdm) -> Callable[[int, int], None]:
    """``progress(done, total)`` that moves ``bar`` to ``done`` of ``total``."""
    def progress(done: int, total: int) -> None:
        bar.total = total
        bar.update(done - bar.n)
    return progress


#: Parameters whose interval is checked for usefulness, with their names in messages.
CHECKED = {"inertia": "the inertia", "coulomb": "the Coulomb level f_c",
           "breakaway": "the break-away torque", "sigma0": "the bristle stiffness σ0",
           "sigma1": "the bristle damping σ1", "stribeck_velocity": "the Stribeck velocity Ω_s"}
#: Relative error a checked parameter's interval must rule out, |θ − θ̂|/θ: 50 % (the bound of a
#: gross error), and 5 % for the inertia, which a feedforward uses directly and which a good
#: excitation determines to well under 1 %.
PRECISION = {"inertia": 0.05}
WIDE = 0.5
#: Inclusion frequency below which a selected term (above which an unselected one) is unstable.
UNSTABLE = 0.5


def uncertainty_findings(unc: ParameterUncertainty) -> list[Finding]:
    """Warnings about what the intervals show the data do not determine.

    * the estimate's own ``findings``: an ``extrapolated`` break-away that only Ω_s's interval
      shows (:func:`knee_findings`);
    * ``wide_interval``: a checked parameter (:data:`CHECKED`) whose interval does not rule out
      an estimate off by more than its precision p (:data:`PRECISION`, else :data:`WIDE`) of
      the true value: lower < θ̂/(1 + p) or upper > θ̂/(1 − p), or an interval not finite —
      except σ0 and σ1 opened by :func:`open_unresolved` or :func:`open_unidentified`, which
      the identification's ``presliding_below_resolution`` or ``not_identified`` warning
      names, and the open top of an extrapolated
      break-away, which its ``extrapolated`` warning names;
    * ``unstable_term`` (bootstrap): a term of the model kept by fewer than :data:`UNSTABLE`
      of the resamples, or a term left out kept by more; for the Stribeck terms and the
      viscous powers p ≥ 2, whose neighbours share the resamples, the rise of any exponent or
      power (the family rows of :func:`inclusion_table`);
    * ``unstable_exponent``, ``unstable_power`` (bootstrap): the resamples keep the model's
      Stribeck rise (its faster-than-linear viscous rise), but fewer than :data:`UNSTABLE` of
      them its exponent (its power);
    * ``lugre_unstable`` (bootstrap): the result is a LuGre model, but fewer than half of the
      resamples' results are;
    * ``bootstrap_failures`` (bootstrap): more than 10 % of the resamples could not be fitted.
    """
    out = list(unc.findings)
    out += [_wide(row, unc.level) for row in unc.table.itertuples()
            if row.name in CHECKED and _too_wide(row) and not getattr(row, "unresolved", False)]
    if unc.inclusion is not None:
        out += [_unstable(row) for row in unc.inclusion.itertuples()
                if not row.family and row.selected != (row.final >= UNSTABLE)]
        out += _unsettled_members(unc.inclusion)
    if unc.lugre_share is not None and unc.lugre_share < 0.5 and "sigma0" in set(unc.table.name):
        out.append(Finding("warning", "lugre_unstable",
                           f"only {unc.lugre_share:.0%} of the bootstrap resamples give a LuGre "
                           "model that predicts better than the static one: σ0 and σ1 rest on "
                           "little evidence"))
    total = (unc.resamples or 0) + unc.failed
    if total and unc.failed > 0.1 * total:
        out.append(Finding("warning", "bootstrap_failures",
                           f"{unc.failed} of {total} bootstrap resamples could not be identified; "
                           "the intervals rest on the others"))
    return out


def _too_wide(row) -> bool:
    """Whether the interval allows a relative error beyond the parameter's precision p:
    θ̂ is off by more than p when the truth is below θ̂/(1 + p) or above θ̂/(1 − p). An
    extrapolated break-away is open above, an extrapolated f_c below, which the
    ``extrapolated`` and ``coulomb_extrapolated`` warnings name: only the other end is
    judged."""
    p = _precision(row.name)
    if getattr(row, "extrapolated", False) and row.estimate > 0:
        if not np.isfinite(row.upper):  # break-away, g(0): open above
            return np.isfinite(row.lower) and row.lower < row.estimate / (1 + p)
        return row.upper > row.estimate / (1 - p)  # f_c: open below (to 0)
    if not (np.isfinite(row.lower) and np.isfinite(row.upper)):
        return True
    if row.estimate <= 0:
        return row.upper - row.lower > 2 * p * abs(row.estimate)
    return row.lower < row.estimate / (1 + p) or row.upper > row.estimate / (1 - p)


def _wide(row, level: float) -> Finding:
    return Finding("warning", "wide_interval",
                   f"{CHECKED[row.name]} is poorly determined by these data: {level:.0%} "
                   f"interval [{fmt(row.lower, 4)}, {fmt(row.upper, 4)}] {row.unit} around "
                   f"{row.estimate:.4g}, which allows an error above {_precision(row.name):.0%}"
                   + _gap_clauses(row) + _shift_clauses(row)
                   + _extrapolation_clause(row))


#: What moves the estimate by each shift column, for the wide-interval warning: the clause
#: (``{shift}`` and ``{unit}`` filled in) where the shift exceeds the precision.
SHIFT_CAUSES = {
    "structure_shift": "other friction terms or Stribeck exponents that fit these data about as "
                       "well move it by up to {shift} {unit}",
    "static_shift": "step 1's fit with the static friction on the sliding samples moves it by "
                    "{shift} {unit}: the friction model's transients move it",
}


def _shift_clauses(row) -> str:
    """Why, where other structures the data support (:func:`structure_shifts`) or step 1's
    fit (:func:`static_estimates`) move the estimate by more than the precision (fast
    intervals only)."""
    out = ""
    for column, cause in SHIFT_CAUSES.items():
        shift = getattr(row, column, 0.0)
        if np.isfinite(shift) and shift > _precision(row.name) * abs(row.estimate):
            out += "; " + cause.format(shift=f"{shift:.3g}", unit=row.unit)
    return out


def _extrapolation_clause(row) -> str:
    """Why, where the interval spans the model's rise below the slowest steady speed (fast
    intervals only)."""
    rise = getattr(row, "extrapolation_shift", 0.0)
    if not (np.isfinite(rise) and rise > 0):
        return ""
    return (f"; {rise:.3g} {row.unit} of it is the model's rise below the slowest steady "
            "speed, where no record shows it")


def _moved_beyond(row, column: str) -> float | None:
    """θ̂ + the row's ``column`` gap where that optimum alone is off by more than the
    precision, else None."""
    moved = row.estimate + getattr(row, column, np.nan)
    p = _precision(row.name)
    if (not np.isfinite(moved) or row.estimate <= 0
            or row.estimate / (1 + p) <= moved <= row.estimate / (1 - p)):
        return None
    return moved


#: What moved the estimate to each optimum but the measured torque's, by :data:`GAPS` column:
#: the clause's condition and its cause, for the wide-interval warning.
GAP_CAUSES = {
    "denoised_gap": ("fitted to the denoised instead of the measured torque",
                     "the torque smoothing moves it"),
    "angle_gap": ("on the angle differentiated with a tenth of the smoothing",
                  "the differentiation moves it"),
    "integration_gap": (f"with z integrated in {INTEGRATION_SUBSTEPS} parts per sample interval",
                        "the model's sampling of the bristle moves it"),
}


def _gap_clauses(row) -> str:
    """Why, where the optimum of the denoised torque, the lighter-smoothed angle or z
    integrated in parts alone is off by more than the precision: the preprocessing or the
    model's sampling moves the estimate (fast intervals only)."""
    return "".join(f"; {condition} it is {moved:.4g}: {cause}"
                   for column, (condition, cause) in GAP_CAUSES.items()
                   if (moved := _moved_beyond(row, column)) is not None)


def _precision(name: str) -> float:
    """The relative error the interval of parameter ``name`` must rule out [-]."""
    return PRECISION.get(name, WIDE)


def _unstable(row) -> Finding:
    term = f"the term {row.term}"
    if row.kind in FAMILIES:
        term = ("a " if row.term[0].isalpha() else "") + row.term.replace(
            ", any delta", " of any exponent").replace(", any power", " of any power")
    if row.selected:
        text = (f"{term} is in the model but survives only {row.final:.0%} of the bootstrap "
                "resamples")
    else:
        text = (f"{term} is not in the model but {row.final:.0%} of the bootstrap resamples "
                "select it")
    return Finding("warning", "unstable_term", text + ": the data do not settle the structure")


#: Per family of :data:`FAMILIES`: the finding's code, what the members differ in, and what the
#: data then leave open.
UNSETTLED = {
    "stribeck_family": ("unstable_exponent", "exponents",
                        "the shape of the Stribeck rise open; the intervals of the break-away "
                        "and the static curve include it"),
    "viscous_family": ("unstable_power", "powers",
                       "open which power describes the viscous rise; the static curve's band "
                       "includes it"),
}


def _unsettled_members(inclusion: pd.DataFrame) -> list[Finding]:
    """``unstable_exponent`` / ``unstable_power`` findings: a member of a family (a Stribeck
    term, a viscous power p ≥ 2) in the model that fewer than :data:`UNSTABLE` of the
    resamples keep, where most keep a member (the family's first row): the data leave the
    shape open, not whether there is such a rise."""
    out = []
    for kind, (code, differ, open_) in UNSETTLED.items():
        family = inclusion[inclusion.kind == kind]
        if family.empty or family.final.iloc[0] < UNSTABLE:
            continue
        members = inclusion[inclusion.family == kind].sort_values("final", ascending=False)
        for row in members[members.selected & (members.final < UNSTABLE)].itertuples():
            other = members[members.term != row.term].iloc[0]
            out.append(Finding(
                "warning", code,
                f"the term {row.term} is kept by only {row.final:.0%} of the bootstrap "
                f"resamples, which give the rise other {differ} ({other.term}: "
                f"{other.final:.0%}): the data leave {open_}"))
    return out
