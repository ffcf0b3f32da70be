"""What an uncertainty estimate returns (:class:`ParameterUncertainty`, the ``uncertainty``
section of ``model.json``), the range of the identification data (the ``validity`` section),
and the intervals as the report shows them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from sparsefric.model import JointModel, StaticBand, Uncertainty
from sparsefric.preprocessing import Prepared
from sparsefric.uncertainty.parameters import DERIVED, derived_values, parameter_values, unit_of
from sparsefric.validity import ValidityRange

__all__ = [
    "interval_table",
    "LABELS",
    "METHODS",
    "ParameterUncertainty",
    "validity_range",
]


#: The methods, and the name of each in the model file's ``uncertainty.method``.
METHODS = {"fast": "asymptotic", "bootstrap": "bootstrap"}


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
        torque, the lighter-smoothed angle and z integrated in parts (0 for a static model,
        which has no z) minus the estimate (:func:`optimum_step`) [unit],
        ``structure_shift``, the largest move of the estimate under other structures the data
        support (:func:`structure_shifts`) [unit], ``static_shift``, |step 1's inertia − the
        LuGre model's| (:func:`static_estimates`; from :func:`result_fast`) [unit],
        ``timing_shift``, how far the torque timing's bias moves σ1's lower end
        (:func:`timing_bias`) [unit], and
        ``extrapolation_shift``, the model's rise of an extrapolated break-away below the
        slowest steady speed (:func:`extrapolation_shifts`) [unit], and ``hidden_rise``, the
        largest rise below it that the records leave possible (:func:`hidden_rise_bound`; 0
        where the row is open above or not extrapolated) [unit]; ``unresolved`` (fast, and
        bootstrap from its hull with the fast intervals): σ0 and σ1 rows opened because the
        pre-sliding deflection is below the position resolution (:func:`open_unresolved`) or
        the identification found them not identified (:func:`open_unidentified`);
        ``extrapolated`` (likewise): the break-away and g(0) rows opened above (or raised by
        ``hidden_rise``) because the break-away is extrapolated, the f_c row opened below
        because f_c is (:func:`extrapolation_shifts`).
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
    random_state : int, optional
        Bootstrap only: seed of the block draws.
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
        What the estimate found beyond its table: an ``extrapolated`` break-away or a
        ``coulomb_extrapolated`` f_c that only Ω_s's interval shows
        (:func:`interval_findings`); :func:`uncertainty_findings` reports them.
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
    random_state: int | None = None
    lugre_share: float | None = None
    lags: tuple[int, ...] = ()
    covariance: np.ndarray | None = field(default=None, repr=False)
    critical: float | None = None
    findings: list = field(default_factory=list)

    @property
    def drawn(self) -> int | None:
        """Bootstrap only: the resamples drawn, those that could not be identified included
        (None for the fast method)."""
        return None if self.resamples is None else self.resamples + self.failed

    def interval(self, name: str) -> tuple[float, float]:
        """(lower, upper) of parameter or derived quantity ``name`` [its unit]."""
        row = self.table.loc[self.table.name == name]
        if row.empty:
            raise KeyError(f"no interval for {name!r}")
        return float(row.lower.iloc[0]), float(row.upper.iloc[0])

    def to_model(self) -> Uncertainty:
        """The model file's :class:`~sparsefric.model.Uncertainty` (intervals with a NaN end
        and non-finite band points are left out; an infinite end stays, open), with the
        resamples drawn, failed ones included: with ``random_state`` they repeat the
        bootstrap."""
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
                           intervals=intervals, resamples=self.drawn,
                           random_state=self.random_state, inclusion=inclusion,
                           static_curve=band if ok.any() else None)

    def to_dict(self) -> dict:
        """The ``uncertainty`` object of ``model.json`` (format ``sparsefric-model/2``)."""
        return self.to_model().to_dict()


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
        rows.append([_label(name), name, unit_of(name, model.axis), value, lo, hi, half])
    return pd.DataFrame(rows, columns=columns)
