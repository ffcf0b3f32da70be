"""What the data cannot identify: checks of recorded data that need no fit.

Each check is a pure function of the prepared arrays (q [rad], q̇ [rad/s], τ [N·m], the slice
of each trajectory, the sampling periods [s]) and returns :class:`Finding` objects: ``"error"``
when the data cannot give a meaningful model at all, ``"warning"`` when a part of it is
unidentifiable and the user should know (or the estimator should fall back, see
:data:`STATIC_ONLY_CODES`). Every warning the estimator gives is a finding with a stable code;
the checks of a fitted model are in :mod:`sparsefric.diagnostics`. Numpy only, so that
``predict`` runs the unit checks without importing the solver.

>>> findings = diagnose_prepared(prep)           # prep = sparsefric.preprocessing.prepare(...)
>>> [f.code for f in findings]
['no_presliding', 'narrow_velocity_range']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from sparsefric.options import mention
from sparsefric.regimes import runs

if TYPE_CHECKING:
    from sparsefric.data import Trajectory
    from sparsefric.preprocessing import Prepared


#: Finding codes after which the LuGre steps (σ0, σ1) should be skipped: fit a static model.
STATIC_ONLY_CODES = frozenset({"no_presliding"})
#: Speed below which the joint counts as stopped, as a fraction of the 99th-percentile speed.
STOP_FRACTION = 1e-3
#: Speed above which the joint counts as moving (for directions and the speed range).
MOVE_FRACTION = 1e-2
#: Smallest ratio of high to low moving speed (95th / 5th percentile) for a Stribeck term.
MIN_SPEED_RATIO = 10.0
#: Below this ratio the joint slides at one speed: its friction there is one level.
ONE_LEVEL_RATIO = 1.5
#: Findings of :func:`check_speed_range`.
SPEED_RANGE_CODES = frozenset({"narrow_velocity_range", "one_speed_level"})
#: Smallest share of samples sitting exactly on the largest or smallest torque to call it clipped.
CLIP_FRACTION = 0.01
#: Fewest consecutive samples at the extreme value that make a flat top.
CLIP_RUN = 3


@dataclass(frozen=True)
class Finding:
    """One diagnosis of the training data.

    Attributes
    ----------
    level : {"warning", "error"}
        ``error``: no meaningful model can be identified; ``warning``: part of it cannot.
    code : str
        Stable identifier (``zero_torque``, ``no_presliding``, …) for programs and tests.
    message : str
        One line in the user's terms: what was seen and what to do.
    """

    level: Literal["warning", "error"]
    code: str
    message: str


def diagnose(q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, tau: np.ndarray,
             bounds: Sequence[tuple[int, int]] | None = None, *,
             axis: str = "revolute") -> list[Finding]:
    """Every check on the stacked training data, errors first.

    Parameters
    ----------
    q, qd, qdd : ndarray
        Position [rad], velocity [rad/s] and acceleration [rad/s²] of all training samples.
    tau : ndarray
        Measured torque [N·m] (raw, so that clipping shows as flat tops).
    bounds : list of (start, stop), optional
        Slice of each trajectory in the stacked arrays (default: one trajectory).
    axis : {"revolute", "prismatic"}
        The unit check of the position: degrees for a revolute axis, millimetres for a
        prismatic one.

    Returns
    -------
    list of Finding
    """
    q, qd, tau = (np.asarray(x, dtype=float) for x in (q, qd, tau))
    if not (len(q) == len(qd) == len(np.asarray(qdd)) == len(tau)) or len(q) == 0:
        raise ValueError("q, qd, qdd and tau must be non-empty and of one length")
    bounds = list(bounds) if bounds is not None else [(0, len(q))]
    length, force = ("m", "N") if axis == "prismatic" else ("rad", "N·m")
    found = [*check_torque(tau, force), *check_clipping(tau, force),
             *check_presliding(qd, bounds), *check_directions(qd),
             *check_speed_range(qd, f"{length}/s")]
    found += check_degrees(q, qd) if axis == "revolute" else check_millimetres(q, qd)
    return sorted(found, key=lambda f: f.level != "error")


def diagnose_prepared(prep: Prepared, *, axis: str = "revolute",
                      whole: Prepared | None = None) -> list[Finding]:
    """:func:`diagnose` on a :class:`~sparsefric.preprocessing.Prepared` training set,
    :func:`check_motion`, :func:`check_counts` and :func:`check_given_derivatives` of its
    records, :func:`check_denoising` of its torque and :func:`check_sampling` of its periods.

    ``whole``: the records as given, where ``prep`` holds the training parts cut from them
    (blocks held out for validation); their motion is judged whole, and named as given.
    """
    x = prep.signals
    length = "m" if axis == "prismatic" else "rad"
    found = diagnose(x.q, x.qd, x.qdd, prep.tau_raw, prep.bounds, axis=axis)
    if any(f.code in SPEED_RANGE_CODES for f in found):  # judged again with the steady levels
        found = [f for f in found if f.code not in SPEED_RANGE_CODES]
        found += speed_range_of(prep, f"{length}/s")
    given = prep if whole is None else whole
    found += check_motion(given.pieces, given.signals.qd, given.bounds, length)
    found += check_counts(given.pieces, length)
    found += check_denoising(prep.tau_raw, prep.tau, "N" if axis == "prismatic" else "N·m",
                             _user_cutoff(prep.params))
    found += check_sampling(prep.dt)
    found += check_given_derivatives(given.pieces, axis,
                                     used=any(p.get("method") == "given" for p in prep.params))
    return sorted(found, key=lambda f: f.level != "error")


def check_units(prep: Prepared, axis: str = "revolute", *, given: bool = False
                ) -> list[Finding]:
    """The checks that read a unit mistake in the records of ``prep``: a time column in ms
    (:func:`check_sampling`), degrees read as rad or mm read as m (:func:`check_degrees`,
    :func:`check_millimetres`), encoder counts read as either (:func:`check_counts`), and
    velocity or acceleration columns that are not the position's derivatives
    (:func:`check_given_derivatives`, an error where ``given``: they are used as they are).

    For the records a model meets besides its training ones (validation, test, predict),
    whose units the training checks do not see."""
    x = prep.signals
    position = check_degrees(x.q, x.qd) if axis == "revolute" else check_millimetres(x.q, x.qd)
    return (check_sampling(prep.dt) + position
            + check_counts(prep.pieces, "m" if axis == "prismatic" else "rad")
            + check_given_derivatives(prep.pieces, axis, used=given))


def named(findings: Sequence[Finding], what: str) -> list[Finding]:
    """``findings`` with each message led by ``what`` (``"test data"``): which records it is
    about."""
    return [Finding(f.level, f.code, f"{what}: {f.message}") for f in findings]


#: Share of the torque RMS the denoising may remove before the record is suspect.
MAX_DENOISED_SHARE = 0.3


def _user_cutoff(params: Sequence[dict]) -> float | None:
    """The Butterworth cutoff [Hz] the user gave the differentiation of the records whose
    settings are ``params`` (:attr:`Prepared.params <sparsefric.preprocessing.Prepared>`)."""
    return next((p["cutoff_hz"] for p in params
                 if p.get("method") == "butterworth" and p.get("rule") == "user"), None)


def check_denoising(tau_raw: np.ndarray, tau: np.ndarray, unit: str = "N·m",
                    cutoff_hz: float | None = None) -> list[Finding]:
    """Denoising that removed much of the torque: the record is mostly faster than the motion,
    or the user's Butterworth cutoff ``cutoff_hz`` [Hz] lies within the motion's own content.

    ``tau_raw`` measured, ``tau`` denoised [N·m]. The rigid body and friction explain the torque
    at the time scale of the motion; when more than :data:`MAX_DENOISED_SHARE` of its RMS is
    faster than that (a position loop limit-cycling on a coarse encoder, structural vibration,
    a noisy current signal), every parameter rests on a small remainder (``DESIGN.md`` §19).
    """
    tau_raw, tau = np.asarray(tau_raw, dtype=float), np.asarray(tau, dtype=float)
    total = float(np.sqrt(np.mean(tau_raw**2)))
    removed = float(np.sqrt(np.mean((tau_raw - tau) ** 2)))
    if not (total > 0 and removed > MAX_DENOISED_SHARE * total):
        return []
    if cutoff_hz is not None:
        return [Finding("warning", "cutoff_within_motion",
                        f"the Butterworth filter at {mention('cutoff_hz', cutoff_hz)} Hz "
                        f"removed {removed:.3g} {unit} RMS, {100 * removed / total:.0f} % of the "
                        "torque: the cutoff lies within the motion's own content and takes "
                        "part of it away; raise the cutoff")]
    return [Finding("warning", "torque_mostly_noise",
                    f"the torque denoising removed {removed:.3g} {unit} RMS, "
                    f"{100 * removed / total:.0f} % of the torque: the record is dominated by "
                    "content faster than the motion (vibration, a hunting position loop, a noisy "
                    "current signal) and the identified parameters are uncertain")]


#: Longest sampling period [s] that resolves the bristle dynamics (time constants of ms).
MAX_PERIOD_S = 0.02
#: Shortest sampling period [s] of a joint's logger (100 kHz, beyond current loops).
MIN_PERIOD_S = 1e-5


def check_sampling(periods: Sequence[float]) -> list[Finding]:
    """A sampling period [s] too long for friction dynamics, often a time column in ms, or
    shorter than any logger's, a time column in s declared as ms or µs.

    The pre-sliding transition lasts milliseconds (z_ss/|q̇| at the speeds of a reversal), so
    records for LuGre are sampled at hundreds of Hz or more. A time column in milliseconds
    read as seconds passes every check of the file (a uniform 1 s period) and yields a model
    1000× slow: inertia ×1e6, viscous ×1e3, with no error.
    """
    slowest = max(periods, default=0.0)
    fastest = min(periods, default=MIN_PERIOD_S)
    if fastest < MIN_PERIOD_S:
        return [Finding("warning", "fast_sampling",
                        f"the sampling period is {fastest:.4g} s, shorter than any joint's "
                        f"logger (at least {MIN_PERIOD_S:g} s): is the time column in the unit "
                        "given? (seconds read as ms make every speed 1000× too large; a sample "
                        "rate is given in Hz)")]
    if slowest <= MAX_PERIOD_S:
        return []
    return [Finding("warning", "slow_sampling",
                    f"the sampling period is {slowest:.4g} s, too long to resolve the bristle "
                    f"dynamics (at most {MAX_PERIOD_S:g} s): is the time column in seconds? "
                    "(a column in ms makes every speed 1000× too small; a sample rate is given in "
                    "Hz)")]


def forces_static(findings: Sequence[Finding]) -> bool:
    """Whether the findings leave σ0, σ1 unidentifiable (fit the static model only)."""
    return any(f.code in STATIC_ONLY_CODES for f in findings)


def errors(findings: Sequence[Finding]) -> list[Finding]:
    """The findings of level ``error``."""
    return [f for f in findings if f.level == "error"]


# ---------------------------------------------------------------------------- torque
def check_torque(tau: np.ndarray, unit: str = "N·m") -> list[Finding]:
    """All-zero or constant torque: nothing about the joint was recorded."""
    if np.all(tau == 0.0):
        return [Finding("error", "zero_torque", "the torque is zero in every sample: check the "
                        f"torque column ({mention('torque', 'NAME')}) and that the drive's "
                        "current was logged")]
    scale = max(float(np.max(np.abs(tau))), 1e-300)
    if float(np.ptp(tau)) <= 1e-9 * scale:
        return [Finding("error", "constant_torque", f"the torque is constant at "
                        f"{tau[0]:.6g} {unit}: check the torque column "
                        f"({mention('torque', 'NAME')})")]
    return []


def _longest_run(mask: np.ndarray) -> int:
    """Length of the longest run of True in ``mask``."""
    return max((b - a for a, b in runs(mask)), default=0)


def check_clipping(tau: np.ndarray, unit: str = "N·m") -> list[Finding]:
    """Flat tops: many samples, in runs, exactly at the largest or smallest torque."""
    out = []
    for label, value in (("largest", float(np.max(tau))), ("smallest", float(np.min(tau)))):
        at = tau == value
        count = int(at.sum())
        if count >= max(CLIP_RUN, CLIP_FRACTION * len(tau)) and _longest_run(at) >= CLIP_RUN:
            out.append(Finding(
                "warning", "torque_clipped",
                f"{count} samples ({100 * count / len(tau):.1f} %) sit exactly at the {label} "
                f"torque {value:.6g} {unit}: the torque looks saturated or clipped there, which "
                "biases the friction fit; record with a larger range or cut those parts"))
    return out


# ---------------------------------------------------------------------------- velocity
#: Fewest position steps σ̂√12 (an encoder count, or the noise's equivalent) that a record must
#: span to show motion. Noise alone spans about 2.3 over thousands of samples (±3.5σ̂) and a
#: holding drive drifts a few counts; the slowest useful record spans thousands (0.5 rad at
#: 20 bits: 8·10⁴), the pre-sliding record of ``simulate --presliding`` 22.
MIN_TRAVEL_STEPS = 10.0


def check_motion(records: Sequence[Trajectory], qd: np.ndarray,
                 bounds: Sequence[tuple[int, int]], unit: str = "rad") -> list[Finding]:
    """No record moves beyond its position resolution: the joint stood still (held, or
    drifting a few encoder counts), nothing slid, and every friction parameter would be fitted
    to noise.

    ``records`` are the measured trajectories [rad or m] of the slices ``bounds`` of the
    denoised speed ``qd`` [rad/s or m/s]. The error names the record that spans the most
    (:func:`position_travel`), when it spans fewer than :data:`MIN_TRAVEL_STEPS`. One still
    record beside moving ones is no error: a held or pre-sliding record adds to them.
    """
    if not records:
        return []
    travel = [position_travel(r.q) for r in records]
    counts = [span / step if step > 0 else np.inf for span, step in travel]
    i = int(np.argmax(counts))
    if counts[i] >= MIN_TRAVEL_STEPS:
        return []
    (span, step), (a, b) = travel[i], bounds[i]
    head = (f"{records[i].name}: the joint barely moves: its position spans" if len(records) == 1
            else f"the joint barely moves in all {len(records)} training records: the widest, "
                 f"{records[i].name}, spans")
    return [Finding("error", "no_motion",
                    f"{head} {span:.3g} {unit}, {counts[i]:.1f} steps of its resolution "
                    f"{step:.2g} {unit} (an encoder count or the noise), at speeds within the "
                    f"noise (at most {float(np.max(np.abs(qd[a:b]))):.2g} {unit}/s): there is no "
                    "motion to identify friction from; record the joint moving back and forth "
                    "(at several speeds, with stops or reversals)")]


def position_travel(q: np.ndarray) -> tuple[float, float]:
    """The span max q − min q of a measured position [rad or m] and its resolution σ̂√12, σ̂
    the noise of the position or the rounding of its encoder count
    (:func:`~sparsefric.differentiation.trend_filter.measurement_noise_std`; a count Δ has
    σ̂ = Δ/√12)."""
    # imported here, where the records are differentiated already: the module stays
    # numpy-only for the unit checks of predict
    from sparsefric.differentiation.trend_filter import measurement_noise_std

    return float(np.ptp(q)), float(np.sqrt(12.0) * measurement_noise_std(q))


def _speed_levels(qd: np.ndarray) -> tuple[float, float]:
    """Stop and moving speed thresholds [rad/s] from the 99th-percentile speed."""
    top = float(np.percentile(np.abs(qd), 99))
    return STOP_FRACTION * top, MOVE_FRACTION * top


def check_presliding(qd: np.ndarray, bounds: Sequence[tuple[int, int]]) -> list[Finding]:
    """No stop and no reversal in any trajectory: the bristle (pre-sliding) regime is unexcited."""
    v_stop, v_move = _speed_levels(qd)
    for a, b in bounds:
        v = qd[a:b]
        moving = v[np.abs(v) > v_move]
        if np.any(np.abs(v) <= v_stop) or (moving.size and np.ptp(np.sign(moving)) > 0):
            return []
    return [Finding("warning", "no_presliding",
                    "the joint never stops or reverses: the pre-sliding parameters σ0, σ1 cannot "
                    "be identified; fitting the static model only (record moves with stops or "
                    "reversals for LuGre)")]


def check_directions(qd: np.ndarray) -> list[Finding]:
    """Motion in one direction only: Coulomb friction is confounded with a constant torque."""
    _, v_move = _speed_levels(qd)
    moving = qd[np.abs(qd) > v_move]
    if moving.size == 0 or (np.any(moving > 0) and np.any(moving < 0)):
        return []
    way = "positive" if moving[0] > 0 else "negative"
    return [Finding("warning", "one_direction",
                    f"the joint moves in the {way} direction only: Coulomb friction cannot be "
                    "told apart from gravity or an offset, and the model holds for that direction "
                    "only; record moves both ways")]


def check_speed_range(qd: np.ndarray, unit: str = "rad/s",
                      levels: np.ndarray | None = None) -> list[Finding]:
    """Moving speeds within less than a decade: the Stribeck curve is not resolved, and σ1,
    fitted on the reversals that pass through the unresolved low speeds, is biased by it (off by
    more than 50 % on 9 of the 16 zoo joints with this warning, seed 2024 and one drawn at run
    time, ``benchmarks/zoo.py``). Within :data:`ONE_LEVEL_RATIO` the joint slides at one speed,
    and any two of f_c sign(q̇), c₁q̇ and a Stribeck term trade off freely (``DESIGN.md`` §59).

    The range is the 5th–95th percentile of the speeds [rad/s or m/s] above
    :data:`MOVE_FRACTION` of the top one, widened to the steady speed ``levels`` where given
    (the records' constant-velocity points): a steady move slower than 1 % of the fastest
    counts in no percentile (``DESIGN.md`` §122)."""
    _, v_move = _speed_levels(qd)
    speed = np.abs(qd[np.abs(qd) > v_move])
    if speed.size < 2:
        return []
    low, high = (float(v) for v in np.percentile(speed, [5, 95]))
    if levels is not None and len(levels):
        low, high = min(low, float(np.min(levels))), max(high, float(np.max(levels)))
    if high >= MIN_SPEED_RATIO * low:
        return []
    if high < ONE_LEVEL_RATIO * low:
        return [Finding("warning", "one_speed_level",
                        f"the joint slides at one speed only ({low:.3g}–{high:.3g} {unit}): a "
                        "viscous slope or a Stribeck rise cannot be told from the Coulomb level "
                        "there, so the friction is fitted as that level alone, valid near that "
                        "speed; add moves at other speeds")]
    return [Finding("warning", "narrow_velocity_range",
                    f"the joint moves at {low:.3g}–{high:.3g} {unit} only (ratio {high / low:.1f}, "
                    f"at least {MIN_SPEED_RATIO:g} is needed): a Stribeck term cannot be "
                    "identified, and the bristle damping σ1, which acts in the reversals through "
                    "the unrecorded low speeds, absorbs what the model misses there; add slower "
                    "and faster moves or use "
                    f"{mention('library', 'coulomb-viscous')}")]


def speed_range_of(prep: Prepared, unit: str = "rad/s") -> list[Finding]:
    """:func:`check_speed_range` of the records of ``prep``, the range widened to their steady
    speed levels where the speeds alone draw a finding.

    The levels are the constant-velocity points the break-away and consistency checks use
    (:func:`~sparsefric.steps.checks.cve_of`). A steady move slower than 1 % of the fastest
    counts in no speed percentile: on zoo seed 1130196894, joint 11, a 0.0016 m/s validation
    record beside 0.044 and 0.19 m/s training records (ratio 120) drew the warning that the joint
    "moves at 0.0251–0.191 m/s only", while the break-away warning of the same report named
    0.00159 m/s the slowest steady level (``DESIGN.md`` §122).
    """
    found = check_speed_range(prep.signals.qd, unit)
    if not found:
        return found
    # imported here: the module stays numpy-only for the unit checks of predict
    from sparsefric.steps.checks import cve_of, steady_speeds

    return check_speed_range(prep.signals.qd, unit, steady_speeds(cve_of([prep])))


# ---------------------------------------------------------------------------- units
def check_degrees(q: np.ndarray, qd: np.ndarray) -> list[Finding]:
    """Position spanning many turns but within ±360 at joint speeds of tens of rad/s: degrees."""
    span = float(np.ptp(q))
    peak = float(np.max(np.abs(q)))
    speed = float(np.percentile(np.abs(qd), 99))
    if span > 4 * 2 * np.pi and peak <= 400.0 and speed >= 10.0:
        return [Finding("warning", "angle_in_degrees",
                        f"the position spans {span:.4g} rad ({span / (2 * np.pi):.1f} turns) "
                        f"within ±{peak:.4g} at speeds up to {speed:.3g} rad/s: it looks like "
                        f"degrees; use {mention('angle_unit', 'deg')}, which reads every "
                        "file in degrees")]
    return []


#: Span [rad or m] a position of whole numbers must reach to be read as encoder counts: a real
#: encoder's step is far below 1 rad (six counts a turn) and 1 m, so whole numbers over such a
#: span are counts, or whole degrees or micrometres, read as rad or m.
MIN_COUNT_SPAN = 100.0


def check_counts(records: Sequence[Trajectory], unit: str = "rad") -> list[Finding]:
    """Measured positions [``unit``] of ``records`` that are whole numbers only and span at
    least :data:`MIN_COUNT_SPAN`: encoder counts read as rad (or m).

    Drives log the position in counts more often than in rad. The data/example joint logged
    in counts of a 2^17-count encoder went through with no unit warning (the degree check
    reads ±400 at most as degrees): its speeds came out 2.1e4 × too high, its inertia
    7.4e-5 kg·m² (truth 1.5), the gravity terms fitted the cosine of counts, and the training
    torque error was 66 %."""
    if not records:
        return []
    q = np.concatenate([np.asarray(r.q, dtype=float) for r in records])
    span = float(np.ptp(q))
    if span < MIN_COUNT_SPAN or not np.all(q == np.round(q)):
        return []
    scale = "× 2π / the counts per turn" if unit == "rad" else "× the encoder step in m"
    return [Finding("warning", "position_in_counts",
                    f"the position holds whole numbers only, spanning {span:.6g} {unit}: it "
                    f"looks like encoder counts (or whole degrees or micrometres); convert the "
                    f"position column to {unit} ({scale}, and to the joint side of any gear) "
                    f"before identifying: read as {unit}, every speed, the gravity terms and the "
                    "inertia are off by that factor")]


#: Fastest linear axis of a machine or robot [m/s]: linear motors reach a few m/s, ball screws
#: and belts less.
MAX_LINEAR_SPEED = 10.0
#: Longest travel of a linear axis [m]: gantries and robot tracks span a few metres, rarely ten.
MAX_LINEAR_TRAVEL = 10.0


def check_millimetres(q: np.ndarray, qd: np.ndarray) -> list[Finding]:
    """Position [m] spanning more than :data:`MAX_LINEAR_TRAVEL` at speeds [m/s] beyond
    :data:`MAX_LINEAR_SPEED`: no linear axis does both, a position in mm read as m does (a
    0.25 m axis at 0.1 m/s reads as 250 m at 100 m/s)."""
    span = float(np.ptp(q))
    speed = float(np.percentile(np.abs(qd), 99))
    if span > MAX_LINEAR_TRAVEL and speed > MAX_LINEAR_SPEED:
        return [Finding("warning", "length_in_mm",
                        f"the position spans {span:.4g} m at speeds up to {speed:.3g} m/s, "
                        f"beyond any linear axis (about {MAX_LINEAR_TRAVEL:g} m of travel, "
                        f"{MAX_LINEAR_SPEED:g} m/s): it looks like millimetres; divide the "
                        "position column (and any velocity and acceleration columns) by 1000, "
                        "as a prismatic axis is read in m")]
    return []


# ---------------------------------------------------------------------------- given derivatives
#: Accepted ratio of a given velocity or acceleration column to the derivative of the position.
#: A column in the position's unit is within a few % of it (a filter's lag, the encoder's
#: quantisation, noise); a unit, a sign or a gear ratio apart it is far outside (rpm: 9.55,
#: deg/s: 57.3, mm/s: 1000, a motor-side speed: the ratio of the gear, ≥ 3 in most joints).
#: Symmetric in log (1/1.25 = 0.8); a 25 % error in the derivative moves the inertia and the
#: viscous friction as much, well beyond their intervals.
DERIVATIVE_RATIO = (0.8, 1.25)
#: Window [s] over which a given column is integrated and set against the position's change:
#: long enough that the column's noise averages out, short enough that the transients a sampled
#: acceleration misses between samples (stick-slip, reversals) weigh little. The truth columns
#: of data/example against its measured positions come within 3 % of 1 (at 50 ms within 9 %),
#: but for the acceleration at 0.03 rad/s, which the encoder's counts leave undecided.
DERIVATIVE_WINDOW_S = 0.02
#: Smallest correlation of a given column's integrals with the position's changes over the
#: windows for a ratio: a unit or a sign keeps it at ±1; noise, or a record without the
#: motion to compare (no acceleration in a block at one speed), lowers it.
MIN_DERIVATIVE_CORRELATION = 0.9
#: Ratios of a given column to the derivative that a unit explains, by axis and derivative
#: order: (ratio, what to say). Matched within 10 %.
UNIT_RATIOS: dict[tuple[str, int], tuple[tuple[float, str], ...]] = {
    ("revolute", 1): ((30 / np.pi, "rpm? 60/2π = 9.55"), (180 / np.pi, "deg/s? 180/π = 57.3"),
                      (0.5 / np.pi, "rev/s? 1/2π = 0.159"),
                      (np.pi / 180, "rad/s against a position in degrees? π/180 = 0.0175")),
    ("revolute", 2): ((180 / np.pi, "deg/s²? 180/π = 57.3"), (30 / np.pi, "rpm/s? 60/2π = 9.55"),
                      (np.pi / 180, "rad/s² against a position in degrees? π/180 = 0.0175")),
    ("prismatic", 1): ((1e3, "mm/s? 1000"), (60.0, "m/min? 60"), (6e4, "mm/min? 60000"),
                       (1e-3, "m/s against a position in mm? 1/1000")),
    ("prismatic", 2): ((1e3, "mm/s²? 1000"), (1e-3, "m/s² against a position in mm? 1/1000")),
}


def derivative_ratio(t: np.ndarray, q: np.ndarray, given: np.ndarray, order: int) -> float:
    """The least-squares ratio of ``given`` to the ``order``-th derivative (1 or 2) of the
    position ``q`` [rad or m] sampled at ``t`` [s]: 1 for a column in the position's unit, NaN
    where the record cannot tell (its changes are within the noise: a block at one speed has
    no acceleration to compare).

    ``given`` is integrated ``order`` times (trapezoids) and its ``order``-th difference over
    windows of :data:`DERIVATIVE_WINDOW_S` set against that of ``q``: q(t+w) − q(t) is the
    integral of q̇ over the window, q(t+w) − 2q(t) + q(t−w) that of q̈ weighted by a hat, so
    no derivative of the noisy position is taken. The position's differences are regressed on
    the given column's (the encoder's counts do not bias the ratio); their correlation must
    reach :data:`MIN_DERIVATIVE_CORRELATION` for a ratio. A column of zeros has ratio 0.
    """
    n = len(t)
    step = max(1, min(round(DERIVATIVE_WINDOW_S * (n - 1) / (t[-1] - t[0])), (n - 1) // 4))
    integral = np.asarray(given, dtype=float)
    change = np.asarray(q, dtype=float)
    for _ in range(order):
        integral = np.r_[0.0, np.cumsum(0.5 * (integral[1:] + integral[:-1]) * np.diff(t))]
    for _ in range(order):
        integral, change = (x[step:] - x[:-step] for x in (integral, change))
    if not integral.any():
        return 0.0
    cross, size = float(change @ integral), float(integral @ integral)
    if abs(cross) <= MIN_DERIVATIVE_CORRELATION * np.sqrt(size * float(change @ change)):
        return float("nan")
    return size / cross


def check_given_derivatives(records: Sequence[Trajectory], axis: str = "revolute",
                            used: bool = False) -> list[Finding]:
    """Given velocity and acceleration columns that are not the derivatives of the position:
    their :func:`derivative_ratio` outside :data:`DERIVATIVE_RATIO` (a unit, a sign, a gear).

    ``records`` [rad or m, by ``axis``]; ``used``: the columns are the fit's derivatives
    (``differentiation="given"``), and a column off is an error, for the model would be off by
    its ratio; otherwise a warning.
    """
    found = []
    for order, label in ((1, "velocity"), (2, "acceleration")):
        ratios = [(r, derivative_ratio(r.t, r.q, x, order)) for r in records
                  if (x := (r.qd, r.qdd)[order - 1]) is not None]
        off = [(r, ratio) for r, ratio in ratios
               if not (np.isnan(ratio) or DERIVATIVE_RATIO[0] <= ratio <= DERIVATIVE_RATIO[1])]
        if off:
            found.append(_derivative_finding(off, order, label, axis, used))
    return found


def _derivative_finding(off: Sequence[tuple[Trajectory, float]], order: int, label: str,
                        axis: str, used: bool) -> Finding:
    """The finding of the records ``off`` (with the ratio of each) whose given derivative of
    ``order`` (``label``) is not that of the position."""
    record, ratio = off[0]
    columns = record.columns
    column = getattr(columns, label) if columns is not None else None
    name = f"column '{column}'" if column else f"the given {label}"
    position = f"position column '{columns.position}'" if columns is not None else "position"
    others = f" (and {len(off) - 1} other record{'s' * (len(off) > 2)})" if len(off) > 1 else ""
    derivative = "dq/dt" if order == 1 else "d²q/dt²"
    tail = (f"{mention('differentiation', 'given')} would fit the model to it: correct the "
            f"column or differentiate the position ({mention('differentiation', 'tv')})"
            if used else "the derivatives are taken from the position instead")
    return Finding("error" if used else "warning", f"given_{label}_mismatch",
                   f"{record.name}{others}: {name} is {ratio:.3g} × {derivative} of the "
                   f"{position}: {_ratio_hint(ratio, axis, order)}; {tail}")


def _ratio_hint(ratio: float, axis: str, order: int) -> str:
    """What a ratio of a given column to the derivative of ``order`` suggests, and what to do."""
    if ratio < 0 and DERIVATIVE_RATIO[0] <= -ratio <= DERIVATIVE_RATIO[1]:
        return "the opposite sign: negate the column"
    for value, what in UNIT_RATIOS[(axis, order)] if ratio > 0 else ():
        if abs(np.log(ratio / value)) < np.log(1.1):
            return f"{what} (give it in the position's unit per s{'²' * (order - 1)})"
    return "check the column's unit, sign and gear ratio"
