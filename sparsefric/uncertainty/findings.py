"""Warnings about what the intervals show the data do not determine: intervals too wide to rule
out a gross error (with what moves the estimate), unstable terms and exponents of the
bootstrap, too few LuGre resamples, failed resamples.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sparsefric.data_checks import Finding
from sparsefric.tables import fmt
from sparsefric.uncertainty.fast import INTEGRATION_SUBSTEPS
from sparsefric.uncertainty.inclusion import FAMILIES
from sparsefric.uncertainty.result import ParameterUncertainty

__all__ = [
    "CHECKED",
    "GAP_CAUSES",
    "PRECISION",
    "SHIFT_CAUSES",
    "uncertainty_findings",
    "UNSETTLED",
    "UNSTABLE",
    "WIDE",
]


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

    * the estimate's own ``findings``: an ``extrapolated`` break-away or a
      ``coulomb_extrapolated`` f_c that only Ω_s's interval shows (:func:`interval_findings`);
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
    if unc.drawn and unc.failed > 0.1 * unc.drawn:
        out.append(Finding("warning", "bootstrap_failures",
                           f"{unc.failed} of {unc.drawn} bootstrap resamples could not be "
                           "identified; the intervals rest on the others"))
    return out


def _too_wide(row) -> bool:
    """Whether the interval allows a relative error beyond the parameter's precision p:
    θ̂ is off by more than p when the truth is below θ̂/(1 + p) or above θ̂/(1 − p). An
    extrapolated break-away is open above (or reaches up by the largest rise below the data
    that the records allow, :func:`~sparsefric.uncertainty.hidden.hidden_rise_bound`), an
    extrapolated f_c below, which the
    ``extrapolated``, ``coulomb_extrapolated`` and ``coulomb_unseparated`` warnings name: only
    the other end is judged (f_c's without the raise those warnings name)."""
    p = _precision(row.name)
    if getattr(row, "extrapolated", False) and row.estimate > 0:
        if row.name in ("breakaway", "g0"):  # open above, or up to the rise the records allow
            return np.isfinite(row.lower) and row.lower < row.estimate / (1 + p)
        # f_c: open below (to 0), and raised by what the warning names
        return row.upper - getattr(row, "extrapolation_shift", 0.0) > row.estimate / (1 - p)
    if not (np.isfinite(row.lower) and np.isfinite(row.upper)):
        return True
    if row.estimate <= 0:
        return row.upper - row.lower > 2 * p * abs(row.estimate)
    return row.lower < row.estimate / (1 + p) or row.upper > row.estimate / (1 - p)


def _wide(row, level: float) -> Finding:
    if np.isnan(row.lower) or np.isnan(row.upper):  # a singular covariance: no interval at all
        return Finding("warning", "wide_interval",
                       f"{CHECKED[row.name]} is not determined by these data: around "
                       f"{row.estimate:.4g} {row.unit} no {level:.0%} interval can be computed, "
                       "as they do not separate it from the other terms of the model")
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
