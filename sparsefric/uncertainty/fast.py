"""The ``fast`` method: a HAC sandwich covariance of the prediction-error estimator, the
Gauss–Newton steps to the optima that bracket the preprocessing's biases, and the delta method
for the derived quantities (see :mod:`sparsefric.uncertainty`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from sparsefric.differentiation import spaced_windows
from sparsefric.hac import LONG_RECORD, critical_value, sandwich
from sparsefric.model import JointModel, units
from sparsefric.preprocessing import Prepared, prepare
from sparsefric.steps import checks
from sparsefric.threads import in_parallel
from sparsefric.uncertainty.hidden import hidden_rise_bound
from sparsefric.uncertainty.jacobian import (
    Records,
    central_differences,
    fd_steps,
    model_torque,
    torque_jacobian,
)
from sparsefric.uncertainty.parameters import (
    DERIVED,
    derived_values,
    from_linear,
    log_mask,
    parameter_names,
    parameter_values,
    speed_range,
    static_velocity_grid,
    to_linear,
    unit_of,
    with_parameters,
)
from sparsefric.uncertainty.result import ParameterUncertainty
from sparsefric.uncertainty.shifts import (
    clip_at_zero,
    extrapolation_shifts,
    interval_findings,
    open_unidentified,
    open_unresolved,
    reach,
    static_estimates,
    steady_speeds,
    structure_shifts,
    structure_sweep,
    timing_bias,
    widen,
)

__all__ = [
    "ANGLE_WINDOW",
    "fast_uncertainty",
    "GAPS",
    "INTEGRATION_SUBSTEPS",
    "LIGHTER_SMOOTHING",
    "lighter_smoothing",
    "optimum_step",
    "result_fast",
]


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
    theta = to_linear(names, parameter_values(model, names))
    sse = float(residual @ residual)
    log = log_mask(names)
    for _ in range(halvings + 1):
        values = from_linear(names, theta + step)
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
    value = from_linear(names, theta)
    log = log_mask(names)
    gaps = {col: from_linear(names, theta + step) - value
            for col, step in zip(GAPS, steps, strict=True)}
    return pd.DataFrame({
        "name": list(names), "kind": "parameter", "unit": [unit_of(n, axis) for n in names],
        "estimate": value, "std": np.where(log, value * sd, sd),
        "lower": from_linear(names, lo), "upper": from_linear(names, hi), **gaps})


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
    integrated in :data:`INTEGRATION_SUBSTEPS` parts per interval (J kept; a zero step for a
    static model), one row each (the order of :data:`GAPS`); with the measured records, τ̂ and
    J on them."""
    rec = Records.of(data, "measured")
    tau_hat, J = torque_jacobian(model, rec, names)
    denoised = rec.with_torque(Records.of(data).tau)
    long = any(len(piece) > LONG_RECORD for p in data for piece in p.pieces)

    def angle_steps() -> list[np.ndarray]:
        lighter = lighter_smoothing(data, windows=long)
        if not lighter:
            return []
        if not long:
            return [_records_step(model, lighter, names)]
        same = lighter_smoothing(data, 1.0, windows=True)
        return [_records_step(model, lighter, names), _records_step(model, same, names)]

    # four independent fits (TV differentiation, z integration and LAPACK release the GIL)
    tasks = [lambda: optimum_step(model, rec, names, J, rec.tau - tau_hat),
             lambda: optimum_step(model, denoised, names, J, denoised.tau - tau_hat),
             angle_steps, lambda: _integration_step(model, rec, names, J)]
    measured, smoothed, angle, integration = in_parallel(lambda task: task(), tasks)
    if not angle:
        angle = np.zeros(len(names))
    elif long:
        # the differentiation's share on the windows, which the original weight
        # re-differentiates too (their own scatter and end effects cancel), from the optimum
        angle = measured + angle[0] - angle[1]
    else:
        angle = angle[0]
    steps = [measured, smoothed, angle, integration]
    return np.array(steps), rec, tau_hat, J


def _integration_step(model: JointModel, rec: Records, names: Sequence[str], J: np.ndarray
                      ) -> np.ndarray:
    """:func:`optimum_step` of the measured torque ``rec`` with z integrated in
    :data:`INTEGRATION_SUBSTEPS` parts per interval; a zero step for a static model, which has
    no z: its friction is the same however the interval is cut, so that step would be the
    measured torque's own, reported as if the bristle's sampling moved the estimate."""
    if model.kind != "lugre":
        return np.zeros(len(names))
    parts = INTEGRATION_SUBSTEPS
    return optimum_step(model, rec, names, J, rec.tau - model_torque(model, rec, parts),
                        substeps=parts)


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
    steady speed (:func:`extrapolation_shifts`; the rise in the ``extrapolation_shift``
    column) and up by the largest rise below it that the records' transients leave possible,
    with its knee no lower than the angle resolves (:func:`hidden_rise_bound`; the
    ``hidden_rise`` column), open above where there is no such bound. σ1's interval reaches
    below by the bias a held torque taken as instantaneous allows, max(hσ0/2, 0.13 σ̂1),
    which no re-differentiation of these data shows (:func:`timing_bias`; the
    ``timing_shift`` column). Where the
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
        ``structure_shift``, ``extrapolation_shift``, ``hidden_rise``, ``timing_shift`` and
        ``unresolved``; with the covariance, the lag windows and the critical value.
    """
    base = model.with_(validity=None, uncertainty=None)
    names = parameter_names(base)
    steps, rec, tau_hat, J = _optimum_steps(base, data, names)
    residual = rec.tau - tau_hat
    cov, lags = sandwich(J, residual, rec.bounds, factor)
    c = critical_value(level, sum(lags) / len(rec))
    v_min, v_max = speed_range(data)
    grid = static_velocity_grid(v_max, v_min) if velocity is None else np.asarray(velocity)
    theta = to_linear(names, parameter_values(base, names))
    params = _parameter_rows(names, theta, steps, np.sqrt(np.diag(cov)), c, base.axis)
    derived, sd, optima = _delta_method(base, names, cov, steps, grid, v_max)
    lower, upper = _intervals(derived, optima, sd, c)
    k = len(DERIVED)
    rows = pd.DataFrame({"name": list(DERIVED), "kind": "derived",
                         "unit": units(base.axis)["tau"], "estimate": derived[:k],
                         "std": sd[:k], "lower": lower[:k], "upper": upper[:k],
                         **{col: optima[i, :k] - derived[:k] for i, col in enumerate(GAPS)}})
    speeds = steady_speeds(data, base)
    omega = _ends(params, "stribeck_velocity")
    extrapolated = extrapolation_shifts(base, data, omega[0], speeds, omega[1])
    extrapolated, hidden = _hidden_rise(base, data, rec, J, residual, c, speeds, omega[0],
                                        extrapolated)
    table = widen(widen(widen(pd.concat([params, rows], ignore_index=True), shifts or {}),
                        extrapolated, "extrapolation_shift"), hidden, "hidden_rise")
    table = widen(table, timing_bias(base, data), "timing_shift")
    table["extrapolated"] = table["name"].isin(list(extrapolated))
    table = open_unresolved(clip_at_zero(table), base,
                            checks.median_position_noise(data[0]))
    return ParameterUncertainty("fast", level, table, grid, derived[k:], lower[k:], upper[k:],
                                lags=lags, covariance=cov, critical=c,
                                findings=interval_findings(base, data, speeds, omega))


def _hidden_rise(model: JointModel, data: Sequence[Prepared], rec: Records,  # noqa: PLR0913
                 J: np.ndarray, residual: np.ndarray, c: float, speeds: np.ndarray,
                 omega_low: float | None, extrapolated: dict[str, np.ndarray]
                 ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """``extrapolated`` and the shifts of the ``hidden_rise`` column: where the break-away is
    extrapolated below the steady ``speeds`` (:func:`~sparsefric.steps.checks.reach`) and the
    records rule out a rise there above some height U (:func:`hidden_rise_bound`), the open
    tops of the break-away and g(0) closed in the first and [0, U] for both in the second
    (``DESIGN.md`` §109); else ``extrapolated`` as it is and no shifts."""
    if not (len(speeds) and checks.reach(model, speeds, omega_low)):
        return extrapolated, {}
    top = hidden_rise_bound(model, data, rec, J, residual, c, float(np.min(np.abs(speeds))))
    if not np.isfinite(top):
        return extrapolated, {}
    names = ("breakaway", "g0")
    closed = {name: np.array([extrapolated[name][0], 0.0]) for name in names}
    return {**extrapolated, **closed}, {name: np.array([0.0, top]) for name in names}


def _ends(params: pd.DataFrame, name: str) -> tuple[float | None, float | None]:
    """The ends of parameter ``name``'s interval: the lower where finite and positive, the
    upper where positive (+∞ where open); None where not."""
    row = params.loc[params["name"] == name, ["lower", "upper"]].to_numpy(float)
    if not len(row):
        return None, None
    lower, upper = row[0]
    return (float(lower) if np.isfinite(lower) and lower > 0 else None,
            float(upper) if upper > 0 else None)


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


def _delta_method(model: JointModel, names: Sequence[str], cov: np.ndarray, steps: np.ndarray,
                  velocity: np.ndarray, v_max: float
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Derived values (:func:`derived_values`) at the estimate, their standard deviations
    √(∇f Cov ∇fᵀ), and their values at the optima θ̂ + ``steps`` (one row each)."""
    theta = to_linear(names, parameter_values(model, names))

    def f(t: np.ndarray) -> np.ndarray:
        return derived_values(with_parameters(model, names, from_linear(names, t)),
                              velocity, v_max)

    G = central_differences(f, theta, fd_steps(names, theta, model.g0), range(len(names)))
    var = np.einsum("ij,jk,ik->i", G, cov, G)
    return f(theta), np.sqrt(np.maximum(var, 0.0)), np.array([f(theta + s) for s in steps])
