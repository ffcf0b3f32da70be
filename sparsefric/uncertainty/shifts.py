"""Moves of the intervals that the covariance does not see: other structures the selection's
sweep supports, step 1's inertia, the torque timing's bias of σ1, the extrapolated rise below
the slowest steady speed, and bristle parameters the data do not resolve or identify; and the
clipping of quantities that cannot be negative.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from sparsefric.data_checks import Finding
from sparsefric.model import JointModel
from sparsefric.preprocessing import Prepared
from sparsefric.selection import SweepResult
from sparsefric.steps import checks

__all__ = [
    "clip_at_zero",
    "extrapolation_shifts",
    "interval_findings",
    "NONNEGATIVE",
    "open_unidentified",
    "open_unresolved",
    "reach",
    "SIGMA1_TIMING_BIAS",
    "static_estimates",
    "steady_speeds",
    "structure_shifts",
    "structure_sweep",
    "timing_bias",
    "widen",
]


#: Relative overestimate of σ1 a torque taken as instantaneous allows [-]: a command held until
#: the next sample pairs with the motion h/2 late, which pre-sliding turns into σ1 + hσ0/2
#: (``DESIGN.md`` §68). On the simulated benchmark joints σ1 comes out +6 to +12 % high, on
#: fixed-seed zoo joints whose sampling resolves the stiction resonance +0.6 to +19.5 %, none
#: low; the fast intervals held it on 77 % (§65). σ1's interval reaches σ̂1·this/(1 + this)
#: or hσ0/2 further below, whichever is more (:func:`timing_bias`), unless the torque was
#: declared held (``torque_timing="hold"``).
SIGMA1_TIMING_BIAS = 0.15


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
                         speeds: np.ndarray | None = None,
                         omega_high: float | None = None) -> dict[str, np.ndarray]:
    """[−R, +∞) [N·m] for the break-away and g(0) when the break-away is extrapolated
    (:func:`sparsefric.steps.checks.reach` on the steady speeds of ``data``), R = g(0) − s·g(v)
    the model's rise below the slowest steady speed v (0 without a Stribeck term); (−∞, +R']
    for f_c when it is (:func:`sparsefric.steps.checks.coulomb_reach`), R' what the Stribeck
    terms still add at the fastest sliding speed: the truth's may have decayed there (f_c up to
    the friction there) or decay far above it (f_c down to 0, where :func:`clip_at_zero` stops
    it; ``DESIGN.md`` §73). Where one steady level above the Stribeck region gives f_c with the
    viscous friction (:func:`~sparsefric.steps.checks.coulomb_levels`), (−∞, +R''] with R''
    the model's viscous friction at the fastest steady level: f_c is anything up to the
    friction there (§92).

    That rise is the model's shape where no record slides steadily, so the covariance says
    nothing about it. Below, the interval reaches no rise at all (§40). Above, the steady levels
    set no bound: a rise the records do not reach can be any height as far as they tell
    (:func:`~sparsefric.uncertainty.fast.fast_uncertainty` closes the top where the starts and
    stops rule one out, :func:`~sparsefric.uncertainty.hidden.hidden_rise_bound`). Closed at
    +R, the intervals of seed 2024's joints 0–29 held the true break-away on 83 %, and every
    miss was an underestimate (−8 to −47 %) by a model with no Stribeck term or a flat one
    (``DESIGN.md`` §63). Empty when the break-away rests on data. ``omega_low``,
    ``omega_high``: the ends of Ω_s's interval [rad/s], for
    :func:`~sparsefric.steps.checks.reach` and :func:`~sparsefric.steps.checks.coulomb_reach`;
    ``speeds``: the steady speeds of ``data`` where the caller has them
    (:func:`steady_speeds`). Where the records have steady moves but none long enough for the
    bristles to settle (:func:`~sparsefric.steps.checks.unsettled`), the break-away is open
    above from the
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
    if checks.coulomb_reach(model, fastest, omega_high):
        out["coulomb"] = np.array([-np.inf, checks.rise_above(model, fastest)])
    elif checks.coulomb_levels(model, speeds):
        out["coulomb"] = np.array([-np.inf, checks.viscous_above(model, np.max(np.abs(speeds)))])
    return out


def steady_speeds(data: Sequence[Prepared], model: JointModel) -> np.ndarray:
    """The CVE speed levels [rad/s | m/s] of ``data``, measured with ``model``
    (:func:`~sparsefric.steps.checks.cve_of`)."""
    return checks.steady_speeds(checks.cve_of(data, model))


def interval_findings(model: JointModel, data: Sequence[Prepared], speeds: np.ndarray,
                      omega: tuple[float | None, float | None]) -> list[Finding]:
    """The warnings that only Ω_s's interval ``omega`` = (lower, upper end) [rad/s | m/s]
    gives: an ``extrapolated`` break-away where a knee at its lower end would lie below the
    steady ``speeds`` of ``data`` (:func:`~sparsefric.steps.checks.reach`, ``DESIGN.md``
    §81), a ``coulomb_extrapolated`` f_c where one at its upper end would leave the fastest
    sliding speed inside the rise (:func:`~sparsefric.steps.checks.coulomb_reach`, §91). The
    identification, which knew the estimate alone, found them on data (f_c: and not
    unseparated from the viscous friction, :func:`~sparsefric.steps.checks.coulomb_levels`,
    which names it already)."""
    out = []
    if len(speeds) and not checks.reach(model, speeds):
        out += checks.reach(model, speeds, omega[0])
    fastest = checks.fastest_speed(data)
    if not (checks.coulomb_reach(model, fastest) or checks.coulomb_levels(model, speeds)):
        out += checks.coulomb_reach(model, fastest, omega[1])
    return out


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
    (:data:`~sparsefric.selection.EXPONENT`), the Stribeck and viscous additions
    (:data:`~sparsefric.selection.ADDED`, :data:`~sparsefric.selection.VISCOUS_ADDED`,
    :data:`~sparsefric.selection.LINEAR_ADDED`), the lowered viscous powers
    (:data:`~sparsefric.selection.LOWER_POWER`) and the Coulomb levels added
    (:data:`~sparsefric.selection.COULOMB_ADDED`), each one the selection may choose (column
    ``hierarchical``) — by ascending Δ = AICc − AICc_selected, is kept
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
    selectable = sweep.table["hierarchical"].to_numpy(bool)
    rows = np.sort(first[np.isfinite(aicc[first]) & selectable[first]])
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
