"""One vocabulary of options, shared by the estimator, the command line and batch manifests.

Every choice an identification takes is spelled once here; :class:`~sparsefric.estimator.SparseFric`
checks its parameters with :func:`check_choice` and :func:`check_positive`, the CLI offers the
same tuples as ``choices`` and the batch manifest parses its cells with the same parsers. Library
code names an option by its Python parameter (``offset``, ``angle_unit``); :func:`mention` writes
such a reference so that the CLI can show the matching flag instead (:func:`as_flags`).

This module imports nothing heavy: the CLI reads it at start-up.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from sparsefric.errors import OptionError

if TYPE_CHECKING:
    from sparsefric.data import Trajectory

#: Joint axes: a revolute joint [rad, N·m] or a prismatic axis [m, N].
AXES: tuple[str, ...] = ("revolute", "prismatic")
#: s(q̇) of the friction model: A = sign(q̇), B = tanh(K q̇).
SIGN_MODELS: tuple[str, ...] = ("A", "B")
#: Named candidate libraries of step 1 (see :func:`sparsefric.feature_library.static_library`).
LIBRARIES: tuple[str, ...] = ("full", "coulomb-viscous", "coulomb-viscous-offset", "stribeck")
#: How q̇ and q̈ are obtained (see :func:`sparsefric.differentiation.differentiate`).
DIFFERENTIATION: tuple[str, ...] = ("tv", "butterworth", "savgol", "given")
#: How the logged torque relates to the motion between samples: a sample of a torque that
#: changes between samples (a sensor, or a command logged slower than the controller runs), or
#: a command held until the next sample (logged at the control rate).
TORQUE_TIMINGS: tuple[str, ...] = ("instant", "hold")
#: Identification methods of ``identify --method``: sparsefric, then the baselines.
METHODS: tuple[str, ...] = ("sparsefric", "idim-ls", "output-error", "two-step")
#: How sure an identified model is: no intervals, the asymptotic (HAC) ones, or a block bootstrap.
UNCERTAINTY: tuple[str, ...] = ("none", "fast", "bootstrap")
#: Bootstrap resamples of ``uncertainty="bootstrap"`` (``resamples``): by default, and the
#: fewest it takes. 0.95 percentile ends of fewer than 10 resamples are their extremes; 50–100
#: give rough ends, 200 or more stable ones.
DEFAULT_RESAMPLES = 100
MIN_RESAMPLES = 10
#: What a model does with inputs beyond the range of its identification data.
OUTSIDE: tuple[str, ...] = ("warn", "clamp", "ignore")
#: Option sets of an identification (see :mod:`sparsefric.recipes`): sparsefric's defaults, or
#: the algorithm as Mahmoudkhani et al. (2023) publish it.
RECIPES: tuple[str, ...] = ("sparsefric", "paper")
#: Samples AICc scores step 1 on: training and validation sliding samples, or validation alone
#: (the paper).
AIC_DATA: tuple[str, ...] = ("training+validation", "validation")
#: Where AICc's correction 2(k+1)(k+2)/(m−k−2) is not positive (k ≥ m − 2): ``guarded`` scores
#: the model +∞ (never selected), ``literal`` evaluates the formula as printed (negative for
#: k > m − 2; +∞ only at k = m − 2, where it divides by zero).
AIC_DOMAINS: tuple[str, ...] = ("guarded", "literal")
#: What an inner loop returns: ``best`` the σ0, σ1 with which the lowest-error fit was made (its
#: eq. 18–19 update is kept only if the next fit lowers E_τ), ``paper`` the eq. 18–19 update of
#: the lowest-error fit, with σ1 = σ0,new ξ_u̇; ``search`` the lowest-error fit where that walk
#: ends, found by a line search in σ0 instead of walking there (``DESIGN.md`` §47).
INNER_RULES: tuple[str, ...] = ("best", "paper", "search")
#: When the outer loop stops: σ0 and g(q̇) settled (``sigma0+g``), or σ0 alone (the paper).
OUTER_STOPS: tuple[str, ...] = ("sigma0+g", "sigma0")
#: How SR3–Newton moves Ω_s between SR3 solves: Newton steps with SR3's coefficients held fixed
#: (``newton``, the paper and the default), or the minimum of the variable-projection profile on
#: SR3's support near Ω_s (``profile``); ``DESIGN.md`` §28.
OMEGA_STEPS: tuple[str, ...] = ("newton", "profile")
#: Units of a position column.
ANGLE_UNITS: tuple[str, ...] = ("rad", "deg")
#: |Robust z-score| of a friction parameter above which batch flags a joint.
DEFAULT_OUTLIER_Z = 3.5
#: Ratio to the fleet's median (or its inverse) from which batch flags a friction parameter: a
#: break-away 1.5× the others' is flagged even where the joints scatter too much for z-scores.
DEFAULT_OUTLIER_RATIO = 1.4


def angle_unit_conflict(angle_unit: str | None, axis: str) -> str | None:
    """Why ``angle_unit`` cannot go with ``axis`` (None if it can): degrees are an angle, and a
    prismatic axis has its positions in metres."""
    if angle_unit == "deg" and axis != "revolute":
        return "deg applies to a revolute joint only"
    return None


#: Lowest Butterworth cutoff (``cutoff_hz``) for a record lasting T [s], in multiples of 1/T.
#: The slowest motion a record can hold, one cycle over its length, has its fundamental at
#: 1/T; the zero-phase 4th-order filter (power gain 1/(1 + (f/f_c)⁸)) keeps 99.6 % of it from
#: a cutoff twice as high. Lower, the filter takes away the moves, not their noise: q̇ and q̈
#: keep none of them, and the fit's warnings blame the data.
MIN_CUTOFF_CYCLES = 2.0


def nyquist_conflict(cutoff_hz: float, dt: float) -> str | None:
    """Why the cutoff ``cutoff_hz`` [Hz] cannot filter samples ``dt`` [s] apart (None if it
    can): it is not below their Nyquist frequency 1/(2 dt)."""
    nyquist = 0.5 / dt
    if cutoff_hz < nyquist:
        return None
    return f"{cutoff_hz:g} is not below the Nyquist frequency {nyquist:g} Hz"


def check_cutoff(cutoff_hz: float | None, records: Iterable[Trajectory]) -> None:
    """Refuse the Butterworth cutoff ``cutoff_hz`` [Hz] (:class:`OptionError`) where it cannot
    differentiate ``records``, naming the record that bounds it; no cutoff given, or no record,
    passes. The cutoff must lie below the Nyquist frequency 1/(2 dt) of the most coarsely
    sampled record (:func:`nyquist_conflict`) and at or above :data:`MIN_CUTOFF_CYCLES`/T of
    the shortest, T its duration [s]."""
    records = list(records)
    if cutoff_hz is None or not records:
        return
    coarsest = min(records, key=lambda r: (0.5 / r.dt, r.name))
    duration, shortest = min((float(r.t[-1] - r.t[0]), r.name) for r in records)
    lowest = MIN_CUTOFF_CYCLES / duration
    if why := nyquist_conflict(cutoff_hz, coarsest.dt):
        raise OptionError("cutoff_hz", f"{why} of {coarsest.name}")
    if cutoff_hz < lowest:
        raise OptionError("cutoff_hz", (
            f"{cutoff_hz:g} is below {lowest:.3g} Hz, {MIN_CUTOFF_CYCLES:g}/T of {shortest} "
            f"(T = {duration:.4g} s): the filter would take away its moves, not only their "
            "noise"))


#: Largest |``torque_delay``| as a share of the shortest record's duration: the shift drops the
#: samples it takes beyond a record's end, and no drive lags its torque by a tenth of a record.
MAX_DELAY_SHARE = 0.1


def check_torque_delay(delay: object, records: Iterable[Trajectory] = ()) -> float:
    """``delay`` [s] (``torque_delay``, how late the torque column is against the position) as
    a float, else :class:`OptionError`: a finite number, of magnitude below
    :data:`MAX_DELAY_SHARE` of the duration T [s] of the shortest of ``records``, naming it
    (:func:`~sparsefric.data.align_torque` drops the |delay|/h samples the shift takes beyond a
    record's end). Without records the number alone is checked. ``records`` are the records
    as given, whole: a piece cut at their jumps that the shift would leave too short is left
    out as they are prepared (:func:`~sparsefric.preprocessing.aligned_pieces`)."""
    if not _finite(delay):
        raise OptionError("torque_delay", f"must be a finite number of seconds, got {delay!r}")
    value = float(delay)
    records = list(records)
    if records:
        duration, shortest = min((float(r.t[-1] - r.t[0]), r.name) for r in records)
        if not abs(value) < MAX_DELAY_SHARE * duration:
            raise OptionError("torque_delay", (
                f"{value:g} s is not below {MAX_DELAY_SHARE:g} of the duration of {shortest} "
                f"({duration:.4g} s): a drive's delay is a few sample periods, in seconds "
                "(3 ms is 0.003)"))
    return value


def check_records(cutoff_hz: float | None, torque_delay: object,
                  records: Iterable[Trajectory]) -> None:
    """Refuse (:class:`OptionError`) the options that do not suit ``records``, all the records
    of a fit (training, validation, test), before any work: the Butterworth cutoff
    ``cutoff_hz`` [Hz] (:func:`check_cutoff`) and the ``torque_delay`` [s]
    (:func:`check_torque_delay`). The estimator, the command line and batch manifests check
    their records by this one rule."""
    records = list(records)
    check_cutoff(cutoff_hz, records)
    check_torque_delay(torque_delay, records)


def _finite(value: object) -> bool:
    """Whether ``value`` is a finite real number: a Python or numpy integer or float (any
    :class:`numbers.Real`), but not a bool, which is no number here."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and \
        math.isfinite(value)


def check_finite(parameter: str, value: object) -> float:
    """``value`` as a float if it is a finite real number, else :class:`OptionError`."""
    if not _finite(value):
        raise OptionError(parameter, f"must be a finite number, got {value!r}")
    return float(value)


def check_choice(parameter: str, value: object, choices: tuple[str, ...]) -> str:
    """``value`` if it is one of ``choices``, else :class:`OptionError` naming ``parameter``."""
    if value not in choices:
        raise OptionError(parameter, f"must be one of {', '.join(choices)}, got {value!r}")
    return str(value)


def check_positive(parameter: str, value: object) -> float:
    """``value`` as a finite number > 0, else :class:`OptionError` (integers:
    :func:`check_integer`)."""
    if not (_finite(value) and value > 0):
        raise OptionError(parameter, f"must be a finite number > 0, got {value!r}")
    return float(value)


def check_integer(parameter: str, value: object, minimum: float = 0) -> int:
    """``value`` as an integer ≥ ``minimum``, else :class:`OptionError`."""
    if not (_finite(value) and float(value) == int(value) and value >= minimum):
        raise OptionError(parameter, f"must be an integer of at least {minimum:g}, got {value!r}")
    return int(value)


def check_flag(parameter: str, value: object) -> bool:
    """``value`` as a bool: True or False (numpy's too), else :class:`OptionError` — never
    ``bool(value)``, which reads the string "False" as True."""
    numpy_bool = type(value).__module__ == "numpy" and type(value).__name__ in ("bool", "bool_")
    if not (isinstance(value, bool) or numpy_bool):  # numpy stays unimported for --help
        raise OptionError(parameter, f"must be True or False, got {value!r}")
    return bool(value)


def check_exponents(parameter: str, values: object) -> tuple[float, ...]:
    """Distinct finite positive numbers (Stribeck exponents δ) as a tuple, else
    :class:`OptionError`."""
    items = check_positive_tuple(parameter, values)
    if repeated := sorted({d for d in items if items.count(d) > 1}):
        raise OptionError(parameter, f"holds {repeated[0]:g} more than once")
    return items


def check_fraction(parameter: str, value: object, maximum: float = 1.0) -> float:
    """``value`` as a number in [0, ``maximum``], else :class:`OptionError`."""
    if not (_finite(value) and 0.0 <= value <= maximum):
        raise OptionError(parameter, f"must be a number from 0 to {maximum:g}, got {value!r}")
    return float(value)


def check_positive_tuple(parameter: str, values: object) -> tuple[float, ...]:
    """A non-empty sequence of finite positive numbers as a tuple, else :class:`OptionError`."""
    try:
        items = tuple(values)  # type: ignore[arg-type]
    except TypeError:
        raise OptionError(parameter, f"must be a sequence of positive numbers, got {values!r}"
                          ) from None
    if not items:
        raise OptionError(parameter, "must hold at least one value")
    return tuple(check_positive(parameter, v) for v in items)


# ---------------------------------------------------------------------------- text parsers
def _float(text: str) -> float:
    """``float(text)``; ``ValueError`` naming the text otherwise."""
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"expected a number, got {text!r}") from None


def parse_positive(text: str) -> float:
    """A positive finite number from text; ``ValueError`` with the reason otherwise."""
    value = _float(text)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"expected a positive number, got {text!r}")
    return value


def parse_number(text: str) -> float:
    """A finite number of either sign from text; ``ValueError`` with the reason otherwise."""
    value = _float(text)
    if not math.isfinite(value):
        raise ValueError(f"expected a finite number, got {text!r}")
    return value


#: Largest share of the training samples held out for validation (``validation_share``): half,
#: so that the training part keeps the larger share.
HOLD_OUT_MAX = 0.5


def integer_parser(minimum: int) -> Callable[[str], int]:
    """A parser of integers ≥ ``minimum`` written in digits (``ValueError`` with the reason
    otherwise)."""
    def parse_integer(text: str) -> int:
        if not (text.isascii() and text.isdigit() and int(text) >= minimum):
            raise ValueError(f"expected an integer of at least {minimum}, got {text!r}")
        return int(text)
    return parse_integer


def parse_share(text: str) -> float:
    """A held-out share from 0 to :data:`HOLD_OUT_MAX` from text; ``ValueError`` with the reason
    otherwise (the words of :func:`check_fraction`)."""
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"expected a number, got {text!r}") from None
    if not 0.0 <= value <= HOLD_OUT_MAX:
        raise ValueError(f"must be a number from 0 to {HOLD_OUT_MAX:g}, got {text!r}")
    return value


def parse_positive_list(text: str) -> tuple[float, ...]:
    """Positive numbers separated by commas, semicolons or spaces; ``ValueError`` otherwise."""
    parts = [p for p in re.split(r"[;,\s]+", text) if p]
    if not parts:
        raise ValueError(f"expected positive numbers separated by commas, got {text!r}")
    return tuple(parse_positive(p) for p in parts)


def parse_bool(text: str) -> bool:
    """true/yes/1/on or false/no/0/off (any case); ``ValueError`` otherwise."""
    low = text.strip().lower()
    if low in ("true", "yes", "1", "y", "on"):
        return True
    if low in ("false", "no", "0", "n", "off"):
        return False
    raise ValueError(f"expected true or false, got {text!r}")


# ---------------------------------------------------------------------------- mentions
def mention(parameter: str, value: object = True) -> str:
    """How a message refers to an option: ```parameter=value``` (backquoted).

    The CLI rewrites these to flags with :func:`as_flags`, so one message serves Python and
    command-line users.
    """
    return f"`{parameter}={value!r}`"


_MENTION = re.compile(r"`([a-z_0-9]+)=([^`]*)`")


def flag(parameter: str) -> str:
    """The command-line flag of a parameter: ``aic_parts`` → ``--aic-parts``."""
    return "--" + parameter.replace("_", "-")


def as_flags(message: str) -> str:
    """``message`` with every :func:`mention` written as its command-line flag.

    ```offset=True``` → ``--offset``; ```library='stribeck'``` → ``--library stribeck``.
    """
    def rewrite(m: re.Match) -> str:
        name, value = m.group(1), m.group(2)
        if value == "True":
            return flag(name)
        return f"{flag(name)} {value.strip(chr(39)).strip(chr(34))}"

    return _MENTION.sub(rewrite, message)
