"""Checks of a fitted model: a negative inertia, a torque offset, collinear columns.

Each check returns :class:`~sparsefric.data_checks.Finding` objects, like the checks of the
data before the fit (:mod:`sparsefric.data_checks`).
"""

from __future__ import annotations

import numpy as np

from sparsefric.data_checks import Finding
from sparsefric.feature_library import FeatureLibrary
from sparsefric.hac import critical_value, sandwich
from sparsefric.model import JointModel, units
from sparsefric.optimizers.sr3 import GramCache, SR3Newton, SR3Result
from sparsefric.options import mention
from sparsefric.selection import collinear_pairs, thin
from sparsefric.signals import Signals


# ---------------------------------------------------------------------------- fitted model
def check_inertia(model: JointModel, speed: float) -> list[Finding]:
    """A static model whose inertia came out negative [kg·m² or kg].

    With no friction opposing the motion at the joint's typical sliding ``speed`` [rad/s |
    m/s] either (the sign constraints zeroed f_c + ΣA and no viscous term makes up for it),
    the torque was logged with the opposite sign of the position: an error that says so
    (before, g(q̇) = 0 ended in a division by zero deep in the LuGre integration). With
    friction, the moves did not excite the inertia: a warning. Slow moves of a heavy joint
    can leave f_c to a steep viscous polynomial with the torque the right way round (a zoo
    joint at 0.017 and 0.051 rad/s: c₁ = 870, c₃ = −5e5, c₅ = 1.3e8, ``DESIGN.md`` §74).
    """
    if model.inertia >= 0:
        return []
    text = (f"the identified inertia is negative ({model.inertia:.4g} "
            f"{units(model.axis)['inertia']})")
    if not float(model.static_friction(np.array([abs(speed)]))[0]) > 0:
        return [Finding("error", "opposite_torque_sign",
                        f"{text} and no friction opposes the motion: the torque seems to have "
                        "the opposite sign of the position (negate the torque column)")]
    return [Finding("warning", "negative_inertia",
                    f"{text}: the moves barely accelerate the joint, so the inertia is not "
                    "identifiable from these data")]


#: Offset, as a share of the torque RMS, that :func:`check_offset` reports.
OFFSET_SHARE = 0.1
#: Two-sided level of the test that the offset is not zero (:func:`check_offset`).
OFFSET_LEVEL = 0.95


def check_offset(with_offset: FeatureLibrary, support: np.ndarray, theta: float, x: Signals,
                 tau: np.ndarray, nu: float) -> list[Finding]:
    """A constant torque that gravity cannot absorb, on a revolute joint fitted without offset.

    ``with_offset`` is the step-1 library with an offset column, ``support`` the selected
    columns with the offset among them, θ = ln Ω_s of the selection; ``x``, ``tau`` [N·m] the
    sliding samples. The selected structure is refitted with the offset; it is reported when
    it is above :data:`OFFSET_SHARE` of the torque RMS and its HAC t statistic (one record,
    :func:`~sparsefric.hac.sandwich`) beyond the fixed-b critical value of
    :data:`OFFSET_LEVEL`. A current-sensor bias or a constant load otherwise leaks into a_c,
    a_s, the inertia and friction (``DESIGN.md`` §21).

    Over a short range of angles the offset column is nearly a_c cos q, and the refit puts
    into it whatever the selected friction misses along the positions: 11 of the 12 zoo
    joints without an offset that drew 11–1673 % of the torque RMS there (two seeds) stood
    within 0.4–2.5 standard errors of 0, real offsets of 12–23 % on data/example 4.8–119
    standard errors out (``DESIGN.md`` §66).
    """
    sub = with_offset.select(support)
    res = SR3Newton(threshold=0.0, nu=nu).fit(GramCache(sub, x, tau), theta)
    k = [t.kind for t in sub.terms()].index("offset")
    offset = float(res.coef[k])
    share = abs(offset) / float(np.sqrt(np.mean(tau**2)))
    if share <= OFFSET_SHARE:
        return []
    columns = sub.evaluate(x, res.theta)[0]
    cov, lags = sandwich(columns, tau - columns @ res.coef)
    sd = float(np.sqrt(max(cov[k, k], 0.0)))
    t = abs(offset) / sd if sd > 0 else np.inf
    if t < critical_value(OFFSET_LEVEL, sum(lags) / len(tau)):
        return []
    return [Finding("warning", "torque_offset",
                    f"the torque seems to carry a constant offset: refitted with an offset "
                    f"column, step 1 puts {offset:.3g} N·m ({100 * share:.0f} % of the torque "
                    f"RMS, {t:.3g} standard errors) into it; rerun with {mention('offset')}, or "
                    "the offset leaks into the inertia, gravity and friction")]


def check_collinearity(library: FeatureLibrary, best: SR3Result, x: Signals,
                       tau: np.ndarray) -> tuple[list[Finding], list[tuple[str, str, float]]]:
    """Columns the data cannot tell apart: among the selected terms of ``best``, and among the
    linear candidates (neighbouring Stribeck exponents are always alike and are left to the ℓ0
    selection, which keeps at most one of a near-duplicate pair).

    Returns the findings and the pairs (name, name, |cosine|).
    """
    cache = GramCache(library, *thin(x, tau))
    linear = np.array([not t.nonlinear for t in library.terms()])
    pairs = list(dict.fromkeys(collinear_pairs(cache, best.theta, best.support)
                               + collinear_pairs(cache, best.theta, linear)))
    return [Finding("warning", "collinear_columns",
                    f"columns {a} and {b} are nearly collinear on these data (cosine {c:.5f}): "
                    "their coefficients are not separately identifiable")
            for a, b, c in pairs], pairs
