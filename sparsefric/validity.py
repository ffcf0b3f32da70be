"""The range of the identification data, and what happens when a model is evaluated beyond it.

An identified model is a fit: its friction curve rests on the velocities the data covered, and a
viscous polynomial extrapolated past the fastest sample can turn the wrong way within a few
percent of speed. The model file's ``validity`` section records the range; a model evaluated
outside it warns with :class:`OutsideValidityWarning`, clamps the input to the range, or does
nothing (``outside`` = ``"warn"``, ``"clamp"``, ``"ignore"``).

Ranges::

    velocity  [min, max]   signed q̇ of all samples                          [rad/s | m/s]
    speed     [min, max]   |q̇| of the steadily sliding samples of the static fit [rad/s | m/s]
    position  [min, max]   q                                                   [rad | m]
    torque    [min, max]   τ                                                   [N·m | N]

Inputs are checked against ``velocity`` and ``position``, with a margin of :data:`MARGIN` of
each range's width: a test record of the same experiment reaches a hair past the training
record's extremes (noise, a slightly longer stroke) without the model extrapolating. ``speed``
is descriptive: below its minimum the static curve is the model's own continuation into the
Stribeck and pre-sliding regime, which the LuGre state describes dynamically, so a joint passing
through rest is no excursion. ``torque`` is the range of the measured input torque (for a
simulation that drives the joint with a torque).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, fields

import numpy as np

from sparsefric.errors import SparsefricError
from sparsefric.options import OUTSIDE

#: Share of a range's width an input may pass its ends by before it counts as outside.
MARGIN = 0.01
#: The quantities of a validity range, in file order, and the model input each one bounds.
QUANTITIES = ("velocity", "speed", "position", "torque")


class OutsideValidityWarning(UserWarning):
    """A model evaluated at a velocity or position beyond the range of its identification data."""


@dataclass(frozen=True)
class Excursion:
    """How far one input left its validity range.

    Attributes
    ----------
    quantity : str
        ``velocity`` or ``position`` (``torque`` when checked).
    low, high : float
        The validity range [unit of the quantity].
    extreme : float
        The requested value farthest outside the range.
    beyond : float
        Its distance from the range (> 0) [unit of the quantity].
    """

    quantity: str
    low: float
    high: float
    extreme: float
    beyond: float

    def describe(self, unit: str = "") -> str:
        """One phrase: the quantity, the requested extreme and the range, with the unit."""
        u = f" {unit}" if unit else ""
        return (f"{self.quantity} {self.extreme:.4g}{u} is outside the validity range "
                f"[{self.low:.4g}, {self.high:.4g}]{u}")


@dataclass(frozen=True)
class ValidityRange:
    """What the identification data covered; each range is (min, max) or None (not recorded).

    Attributes
    ----------
    velocity : tuple of float, optional
        Signed q̇ [rad/s | m/s] of all samples.
    speed : tuple of float, optional
        |q̇| [rad/s | m/s] of the steadily sliding samples the static curve rests on.
    position : tuple of float, optional
        q [rad | m].
    torque : tuple of float, optional
        τ [N·m | N].
    """

    velocity: tuple[float, float] | None = None
    speed: tuple[float, float] | None = None
    position: tuple[float, float] | None = None
    torque: tuple[float, float] | None = None

    @classmethod
    def from_samples(cls, q: np.ndarray, qd: np.ndarray, tau: np.ndarray,
                     sliding: np.ndarray | None = None) -> ValidityRange:
        """The range of the samples of an identification.

        Parameters
        ----------
        q, qd, tau : ndarray
            Position [rad | m], velocity [rad/s | m/s] and torque [N·m | N] of all samples.
        sliding : ndarray of bool, optional
            The steadily sliding samples the static fit used (default: every moving sample).
        """
        qd = np.asarray(qd, dtype=float)
        mask = np.abs(qd) > 0 if sliding is None else np.asarray(sliding, dtype=bool)
        speed = np.abs(qd[mask])
        return cls(velocity=_span(qd), speed=_span(speed) if speed.size else None,
                   position=_span(q), torque=_span(tau))

    def to_dict(self) -> dict[str, list[float]]:
        """The file's ``validity`` object (ranges not recorded are left out)."""
        return {f.name: list(getattr(self, f.name)) for f in fields(self)
                if getattr(self, f.name) is not None}

    def check(self, **values: np.ndarray | float | None) -> list[Excursion]:
        """The inputs outside their ranges, e.g. ``check(velocity=qd, position=q)``.

        An input counts as outside when it passes an end of the range by more than
        :data:`MARGIN` of the range's width. Inputs given as None and quantities without a
        recorded range are not checked.
        """
        out = []
        for name, x in values.items():
            bounds = getattr(self, name)
            if x is None or bounds is None or np.size(x) == 0:
                continue
            low, high = bounds
            lo, hi = float(np.min(x)), float(np.max(x))
            margin = MARGIN * (high - low)
            if lo < low - margin or hi > high + margin:
                extreme = lo if low - lo >= hi - high else hi
                out.append(Excursion(name, low, high, extreme,
                                     max(low - extreme, extreme - high)))
        return out

    def clamp(self, name: str, x: np.ndarray | float) -> np.ndarray | float:
        """``x`` limited to the range of quantity ``name`` (unchanged without a range)."""
        bounds = getattr(self, name)
        if bounds is None:
            return x
        clipped = np.clip(x, *bounds)
        return float(clipped) if np.ndim(clipped) == 0 else clipped


def _span(x: np.ndarray) -> tuple[float, float]:
    x = np.asarray(x, dtype=float)
    return float(np.min(x)), float(np.max(x))


def check_outside(outside: str) -> str:
    """``outside`` itself if it is one of :data:`OUTSIDE`; else a one-line error naming it."""
    if outside not in OUTSIDE:
        raise SparsefricError(f"option outside must be one of {', '.join(OUTSIDE)}, "
                              f"got {outside!r}")
    return outside


def enforce(validity: ValidityRange | None, outside: str, units: dict[str, str],
            stacklevel: int = 3, **values: np.ndarray | None) -> dict[str, np.ndarray | None]:
    """Apply the ``outside`` policy to model inputs; return them (clamped under ``"clamp"``).

    Under ``"warn"`` one :class:`OutsideValidityWarning` names every input outside its range
    (quantity, requested extreme, range, unit from ``units``), then the inputs pass unchanged.

    Parameters
    ----------
    validity : ValidityRange or None
        None: nothing to check.
    outside : {"warn", "clamp", "ignore"}
    units : dict of str to str
        Unit of each quantity, for the message.
    stacklevel : int
        Passed to :func:`warnings.warn` (3: the caller of the caller).
    **values
        Inputs by quantity (``velocity``, ``position``, ``torque``).
    """
    check_outside(outside)
    if validity is None or outside == "ignore":
        return values
    if outside == "clamp":
        return {k: None if v is None else validity.clamp(k, v) for k, v in values.items()}
    found = validity.check(**values)
    if found:
        warnings.warn(outside_message(found, units), OutsideValidityWarning,
                      stacklevel=stacklevel)
    return values


def outside_message(found: list[Excursion], units: dict[str, str]) -> str:
    """One sentence naming every excursion of ``found`` with the unit of its quantity."""
    text = "; ".join(e.describe(units.get(e.quantity, "")) for e in found)
    return f"{text} of the identification data (the model extrapolates)"
