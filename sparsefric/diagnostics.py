"""Checks of a fitted model: a negative inertia, a torque offset, collinear columns, a torque
that is early or late against the motion.

Each check returns :class:`~sparsefric.data_checks.Finding` objects, like the checks of the
data before the fit (:mod:`sparsefric.data_checks`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from sparsefric.data_checks import Finding
from sparsefric.feature_library import FeatureLibrary
from sparsefric.hac import critical_value, sandwich
from sparsefric.model import JointModel, units
from sparsefric.optimizers.sr3 import GramCache, SR3Newton, SR3Result
from sparsefric.options import mention
from sparsefric.selection import collinear_pairs, thin
from sparsefric.signals import Signals

if TYPE_CHECKING:
    from sparsefric.preprocessing import Prepared


# ---------------------------------------------------------------------------- fitted model
def check_inertia(model: JointModel, speed: float, power: float = math.nan) -> list[Finding]:
    """A static model whose inertia came out negative [kg·m² or kg].

    With no friction opposing the motion at the joint's typical sliding ``speed`` [rad/s |
    m/s] either (the sign constraints zeroed f_c + ΣA and no viscous term makes up for it), the
    mean ``power`` of the torque on the motion, mean(τ q̇) [W] over the fitted samples, tells
    why. Friction dissipates, and the inertia's and gravity's shares average out over moves
    that return, so a torque logged with the opposite sign of the position has a negative
    power: an error that says so (before, g(q̇) = 0 ended in a division by zero deep in the
    LuGre integration). A positive power means the torque is the right way round and the
    records barely slide: over moves shorter than the bristles' deflection f_c/σ0 the torque
    follows the position like a spring, which a static model fits as a negative inertia (a zoo
    joint with σ0 = 463 N·m/rad and f_c = 8.4 N·m, z_ss = 0.018 rad, trained on moves of
    0.008–0.034 rad: inertia −6.5 kg·m², ``DESIGN.md`` §102): an error that says that. With
    friction, the moves did not excite the inertia: a warning. Slow moves of a heavy joint can
    leave f_c to a steep viscous polynomial with the torque the right way round (a zoo joint at
    0.017 and 0.051 rad/s: c₁ = 870, c₃ = −5e5, c₅ = 1.3e8, ``DESIGN.md`` §74).
    """
    if model.inertia >= 0:
        return []
    text = (f"the identified inertia is negative ({model.inertia:.4g} "
            f"{units(model.axis)['inertia']})")
    if float(model.static_friction(np.array([abs(speed)]))[0]) > 0:
        return [Finding("warning", "negative_inertia",
                        f"{text}: the moves barely accelerate the joint, so the inertia is not "
                        "identifiable from these data")]
    if power > 0:
        return [Finding("error", "no_sliding",
                        f"{text} and no friction opposes the motion, though the torque does "
                        f"work on it ({power:.3g} W on average): the records barely slide, and "
                        "the torque follows the position like a spring (the bristles' "
                        "pre-sliding deflection); record moves that travel farther at a steady "
                        "speed")]
    return [Finding("error", "opposite_torque_sign",
                    f"{text} and no friction opposes the motion: the torque seems to have "
                    "the opposite sign of the position (negate the torque column)")]


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
                    "the offset leaks into the inertia, gravity and friction; friction that is "
                    "higher in one direction than in the other adds the same constant while the "
                    "joint slides, and sliding moves cannot tell the two apart")]


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


# ---------------------------------------------------------------------------- torque timing
#: Longest delay [s] between the torque and the motion that :func:`check_torque_timing` tries,
#: or :data:`DELAY_SCAN_SAMPLES` sample periods where that is longer.
DELAY_SCAN_S = 0.01
DELAY_SCAN_SAMPLES = 8
#: Share by which the squared torque error must fall at the best delay before it is reported:
#: one sample either way raises it by 5–8 % on the simulated benchmark joints, which have none.
DELAY_GAIN = 0.05
#: Share of the implied σ1 below which the delay's bias of σ1 is not reported.
DELAY_SIGMA1_SHARE = 0.1
#: Samples of a record at most that :func:`delay_errors` compares (a uniform stride beyond).
DELAY_ROWS = 100_000


def delay_errors(tau: np.ndarray, tau_hat: np.ndarray, bounds: Sequence[tuple[int, int]],
                 dt: Sequence[float], lags: np.ndarray) -> np.ndarray:
    r"""Σ_records ‖τ(t − L) − τ̂(t)‖² [N·m²] for every delay L [s] of ``lags``.

    ``tau`` is the measured torque and ``tau_hat`` the model's, of records ``bounds`` sampled
    every ``dt`` [s]; τ(t − L) is interpolated between samples. Each record contributes the
    samples that every delay keeps inside it, every k-th of a record longer than
    :data:`DELAY_ROWS`. L > 0: the measured torque is early (it shows at t what the motion
    answers at t + L).
    """
    out = np.zeros(len(lags))
    for (a, b), h in zip(bounds, dt, strict=True):
        shifts = np.asarray(lags, dtype=float) / float(h)  # in samples
        edge = int(np.ceil(np.max(np.abs(shifts), initial=0.0)))
        if b - a <= 2 * edge + 1:
            continue
        index = np.arange(b - a, dtype=float)
        inner = slice(edge, b - a - edge, -(-(b - a) // DELAY_ROWS))  # ≤ DELAY_ROWS rows
        for i, s in enumerate(shifts):
            r = np.interp(index[inner] - s, index, tau[a:b]) - tau_hat[a:b][inner]
            out[i] += float(r @ r)
    return out


def best_delay(lags: np.ndarray, errors: np.ndarray) -> float:
    """The delay [s] of the least error: the vertex of the parabola through the lowest point
    of ``errors`` over the evenly spaced ``lags`` and its neighbours (the grid point at an end)."""
    i = int(np.argmin(errors))
    if i in (0, len(lags) - 1):
        return float(lags[i])
    e0, e1, e2 = errors[i - 1:i + 2]
    curvature = e0 - 2 * e1 + e2
    step = 0.5 * (e0 - e2) / curvature if curvature > 0 else 0.0
    return float(lags[i] + step * (lags[1] - lags[0]))


def check_torque_timing(model: JointModel, prepared: Sequence[Prepared],
                        aligned: float = 0.0) -> list[Finding]:
    """The measured torque fits the model's prediction clearly better shifted in time.

    A logged current command or set-point, a filter on the torque channel, or position and
    torque sampled at different phases of a fieldbus cycle put the torque ahead of (or behind)
    the motion it drives. The LuGre fit reads the lead as bristle damping: near every reversal
    σ0 z changes as fast as σ0 ż, so σ̂1 ≈ σ1 + L σ0 (a joint with σ1 = 60 and σ0 = 1.5e4 came
    out at σ̂1 = 116 with a 3 ms lead and 149 with 5 ms, no other parameter more than 2.5 % off,
    and the test torque error at 4.4 and 5.1 % against 3.3 %, ``DESIGN.md`` §97).
    The model's torque along the records of ``prepared`` is compared with the measured torque
    shifted by up to :data:`DELAY_SCAN_S`; a best delay of at least one sample period that
    lowers the squared error by :data:`DELAY_GAIN` or more is reported where the σ1 it implies,
    σ̂1 − L σ0, is not negative and its bias L σ0 is at least :data:`DELAY_SIGMA1_SHARE` of it.
    A lead larger than σ̂1/σ0 would have raised σ̂1 by more than σ̂1, so the shift answers
    another misfit: on fixed-seed zoo joints whose bristle resonance lies above the Nyquist
    frequency (σ0 ≈ 1e7 N/m, σ1 fitted 63–91 % low) the scan found 10–14 ms "early" with L σ̂0
    2.4–23 times σ̂1, and the truth has no delay; on another, 0.34 ms late at 4 kHz moved σ1
    by 3 %. The warning gives the ``torque_delay`` [s] that aligns the torque: ``aligned``
    [s], the delay the records of ``prepared`` were aligned by already, less the lead found,
    to a tenth of the finest sample period.
    """
    if model.kind != "lugre" or not prepared:
        return []
    h = min(float(dt) for p in prepared for dt in p.dt)
    reach = max(DELAY_SCAN_S, DELAY_SCAN_SAMPLES * h)
    lags = h * np.arange(-np.ceil(reach / h), np.ceil(reach / h) + 1)
    errors = sum(delay_errors(p.tau_raw, np.concatenate(p.torque(model, outside="ignore")),
                              p.bounds, p.dt, lags) for p in prepared)
    zero = int(np.argmin(np.abs(lags)))
    lag = best_delay(lags, errors)
    gain = 1.0 - float(errors.min()) / float(errors[zero]) if errors[zero] > 0 else 0.0
    implied = model.sigma1 - lag * model.sigma0  # σ1 without the delay's bias
    if abs(lag) < 0.75 * h or gain < DELAY_GAIN or implied < 0 or \
            abs(lag) * model.sigma0 < DELAY_SIGMA1_SHARE * implied:
        return []
    early = lag > 0
    causes = ("a logged current command or set-point, which the drive applies later, or channels "
              "sampled at different times" if early else
              "a filter or a delay on the torque channel, or channels sampled at different times")
    at_end = " (the end of the scan: it may be more)" if errors.argmin() in (0, len(lags) - 1) \
        else ""
    return [Finding("warning", "torque_delay",
                    f"the measured torque is {1e3 * abs(lag):.2g} ms ({abs(lag) / h:.2g} "
                    f"samples) {'early' if early else 'late'} against the motion{at_end}: "
                    f"shifted by that, the model fits it with a {100 * gain:.0f} % smaller "
                    f"squared error; {causes} do this, and the fit reads it as bristle damping: "
                    f"σ1 = {model.sigma1:.4g} {units(model.axis)['damp']} may be "
                    f"{'too high' if early else 'too low'} by about L·σ0 = "
                    f"{abs(lag) * model.sigma0:.3g}; align the torque with the position: rerun "
                    f"with {mention('torque_delay', _rounded(aligned - lag, 0.1 * h))}")]


def _rounded(value: float, step: float) -> float:
    """``value`` rounded to the decimal place of ``step`` (a delay [s] to a tenth of a sample
    period or finer: 0.0204 s at 1 kHz, not the 0.02 that two significant digits give, which
    may be the delay applied already)."""
    return round(value, max(0, -math.floor(math.log10(step))))
