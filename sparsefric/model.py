"""The joint model and its file format ``sparsefric-model/2`` (``model.json``).

One schema serves truth files, identified models and the simulator::

    τ = I q̈ + a_c cos q + a_s sin q + o + τ_f            (prismatic: no cos/sin terms)

with τ_f the static curve s(q̇) g(q̇) + Σ c_p q̇^p (``kind`` = "static") or the LuGre torque
σ0 z + σ1 ż + Σ c_p q̇^p (``kind`` = "lugre"); see :mod:`sparsefric.lugre`. SI units throughout:
rad, rad/s, N·m (m, m/s, N for a prismatic axis).

Format 2 keeps every key of format 1 and adds two optional sections: ``validity`` (the range of
the identification data, :class:`~sparsefric.validity.ValidityRange`) and ``uncertainty``
(confidence intervals, :class:`Uncertainty`). Files of format 1 are read as format 2 (the new
sections are optional) and written back as format 2. The JSON Schema of both is
``sparsefric/model.schema.json`` (:mod:`sparsefric.schema`); this parser checks what a schema
cannot: finite numbers that fit a float, ordered ranges, equal-length arrays.
"""

from __future__ import annotations

import copy
import json
import math
import numbers
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sparsefric import lugre
from sparsefric.atomic import write_text
from sparsefric.errors import ModelFileError, OptionError
from sparsefric.tables import NOTEBOOK_STYLE, html_table
from sparsefric.validity import QUANTITIES, Excursion, ValidityRange, enforce, outside_message

#: The format the writer writes.
FORMAT = "sparsefric-model/2"
#: The formats the reader reads (format 1 lacks only the optional sections of format 2).
READABLE_FORMATS = ("sparsefric-model/1", FORMAT)
AXES = ("revolute", "prismatic")
KINDS = ("lugre", "static")
#: The file's own top-level keys; the model's ``extra`` cannot hold them.
OWN_KEYS = ("format", "axis", "rigid_body", "friction", "validity", "uncertainty")
UNCERTAINTY_METHODS = ("bootstrap", "asymptotic")
#: Names of ``uncertainty.intervals``: these, ``stribeck:<δ>`` and ``viscous:<p>``.
INTERVAL_NAMES = ("inertia", "gravity_cos", "gravity_sin", "offset", "coulomb",
                  "stribeck_velocity", "sigma0", "sigma1", "breakaway", "g0")
#: Interval names of the amplitude of one Stribeck term (by δ) and of one viscous term (by p).
INTERVAL_PATTERN = r"stribeck:[0-9]+(\.[0-9]+)?|viscous:[1-9][0-9]*"


@dataclass(frozen=True)
class StaticBand:
    """Pointwise band of the steady-state friction τ_ss(q̇).

    Attributes
    ----------
    velocity : tuple of float
        q̇ [rad/s | m/s].
    lower, upper : tuple of float
        Band limits [N·m | N] at those velocities (same length).
    """

    velocity: tuple[float, ...]
    lower: tuple[float, ...]
    upper: tuple[float, ...]


@dataclass(frozen=True)
class Uncertainty:
    """Confidence intervals of an identified model (the file's ``uncertainty`` section).

    Attributes
    ----------
    method : {"bootstrap", "asymptotic"}
    level : float
        Nominal coverage of the intervals, in (0, 1) [-].
    intervals : dict of str to (float, float)
        (lo, hi) of a parameter, in its unit: one of :data:`INTERVAL_NAMES`, ``stribeck:<δ>``
        (amplitude [N·m] of the term with that δ) or ``viscous:<p>`` (c_p [N·m·(s/rad)^p]).
        An end the data do not bound is ∓∞ (``null`` in the file: σ0 and σ1 where the
        pre-sliding deflection is below the position resolution).
    resamples : int, optional
        Number of bootstrap resamples drawn, those that could not be identified included
        (bootstrap only).
    random_state : int, optional
        Seed of the bootstrap's block draws (bootstrap only; files written before it was
        recorded have none).
    inclusion : dict of str to float
        Share of the resamples identified (not of those drawn, :attr:`resamples`) in which each
        candidate term (plain-text name, e.g. ``qd^3``) was selected, in [0, 1] [-].
    static_curve : StaticBand, optional
        Band of the steady-state friction.
    """

    method: str
    level: float
    intervals: dict[str, tuple[float, float]] = field(default_factory=dict)
    resamples: int | None = None
    random_state: int | None = None
    inclusion: dict[str, float] = field(default_factory=dict)
    static_curve: StaticBand | None = None

    def to_dict(self) -> dict[str, Any]:
        """The file's ``uncertainty`` object."""
        out: dict[str, Any] = {"method": self.method, "level": self.level}
        if self.resamples is not None:
            out["resamples"] = self.resamples
        if self.random_state is not None:
            out["random_state"] = self.random_state
        out["intervals"] = {k: [x if math.isfinite(x) else None for x in v]
                            for k, v in self.intervals.items()}
        if self.inclusion:
            out["inclusion"] = dict(self.inclusion)
        if self.static_curve is not None:
            b = self.static_curve
            out["static_curve"] = {"velocity": list(b.velocity), "lower": list(b.lower),
                                   "upper": list(b.upper)}
        return out


@dataclass(frozen=True)
class JointModel:
    """Parameters of one joint: rigid body and friction, in SI units.

    Attributes
    ----------
    axis : {"revolute", "prismatic"}
    inertia : float
        I [kg·m²] (prismatic: mass [kg]).
    gravity_cos, gravity_sin : float
        a_c, a_s [N·m] of a_c cos q + a_s sin q (0 for a prismatic axis).
    offset : float
        Constant torque offset o [N·m].
    kind : {"lugre", "static"}
    tanh_k : float
        K [s/rad] of model B's tanh(K q̇); 0 means model A's sign(q̇).
    coulomb : float
        f_c [N·m].
    stribeck_velocity : float
        Ω_s [rad/s].
    stribeck : tuple of (δ, A)
        Stribeck terms A·exp(−|q̇/Ω_s|^δ), A [N·m].
    viscous : tuple of (p, c)
        Viscous terms c·q̇^p, c [N·m·(s/rad)^p].
    sigma0, sigma1 : float
        LuGre σ0 [N·m/rad], σ1 [N·m·s/rad].
    validity : ValidityRange, optional
        Range of the identification data; evaluations beyond it warn or clamp (``outside``).
    uncertainty : Uncertainty, optional
        Confidence intervals of the parameters.
    extra : dict
        Other keys (fit statistics, provenance); kept verbatim in the file. A key of the
        file's own (:data:`OWN_KEYS`) is refused when the model is written, for it would
        replace the model's value.

    ``validity``, ``uncertainty`` and ``extra`` describe the model and take no part in equality.

    Construction checks ``axis`` and ``kind`` only (:class:`~sparsefric.errors.OptionError`):
    the fits build models whose numbers a file may not hold (a regression's negative inertia,
    which identification zeroes before it writes the model). :meth:`to_json` and :meth:`save`
    refuse a model that :meth:`load` would refuse, with the loader's message.
    """

    axis: str = "revolute"
    inertia: float = 0.0
    gravity_cos: float = 0.0
    gravity_sin: float = 0.0
    offset: float = 0.0
    kind: str = "static"
    tanh_k: float = 0.0
    coulomb: float = 0.0
    stribeck_velocity: float = 0.01
    stribeck: tuple[tuple[float, float], ...] = ()
    viscous: tuple[tuple[int, float], ...] = ()
    sigma0: float = 0.0
    sigma1: float = 0.0
    validity: ValidityRange | None = field(default=None, compare=False)
    uncertainty: Uncertainty | None = field(default=None, compare=False)
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        for name, choices in (("axis", AXES), ("kind", KINDS)):
            value = getattr(self, name)
            if value not in choices:
                raise OptionError(name, f"must be one of {', '.join(choices)}, "
                                        f"got {_short(value)}")

    # ----------------------------------------------------------------- evaluation
    @property
    def friction(self) -> lugre.FrictionParams:
        """The friction parameters packed for :mod:`sparsefric.lugre`."""
        return lugre.FrictionParams(
            coulomb=self.coulomb,
            stribeck_velocity=self.stribeck_velocity,
            deltas=np.array([d for d, _ in self.stribeck], dtype=float),
            amplitudes=np.array([a for _, a in self.stribeck], dtype=float),
            powers=np.array([p for p, _ in self.viscous], dtype=float),
            coefficients=np.array([c for _, c in self.viscous], dtype=float),
            sigma0=self.sigma0,
            sigma1=self.sigma1,
            tanh_k=self.tanh_k,
        )

    def rigid_body_torque(self, q: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        """I q̈ + a_c cos q + a_s sin q + o [N·m]."""
        q = np.asarray(q, dtype=float)
        out = self.inertia * np.asarray(qdd, dtype=float) + self.offset
        if self.axis == "revolute":
            out = out + self.gravity_cos * np.cos(q) + self.gravity_sin * np.sin(q)
        return out

    def static_friction(self, qd: float | np.ndarray, *,
                        outside: str = "warn") -> float | np.ndarray:
        """Steady-state friction τ_ss(q̇) [N·m] (the LuGre model with ż = 0).

        Parameters
        ----------
        qd : float or ndarray, shape (n,)
            Velocity [rad/s | m/s]; more dimensions raise
            :class:`~sparsefric.errors.OptionError`.
        outside : {"warn", "clamp", "ignore"}
            Velocities beyond the validity range (see :meth:`check_validity`): ``"warn"`` (one
            :class:`~sparsefric.validity.OutsideValidityWarning` per call), ``"clamp"`` (q̇
            limited to the range) or ``"ignore"``.

        Returns
        -------
        float or ndarray
            τ_ss [N·m | N]: a float for a number, an array for an array.
        """
        qd = self._admitted(outside, velocity=lugre.velocities(qd))["velocity"]
        return lugre.static_curve(qd, self.friction)

    def friction_torque(self, qd: np.ndarray, dt: float | np.ndarray,
                        z0: float | None = None, *, outside: str = "warn",
                        substeps: int = 1) -> np.ndarray:
        """Friction along a velocity record [N·m]: LuGre (z integrated, in ``substeps`` parts
        per sample interval as :func:`sparsefric.lugre.integrate_z`) or static.

        Parameters
        ----------
        qd : ndarray, shape (n,)
            Velocity [rad/s | m/s] at the samples.
        dt : float or ndarray
            Sample period [s]: a number, or one per interval (n − 1 entries, or n with the last
            unused).
        z0 : float, optional
            Initial bristle deflection [rad | m] of a LuGre model, finite; default
            :func:`sparsefric.lugre.default_start`.
        outside : {"warn", "clamp", "ignore"}
            As in :meth:`static_friction`.
        substeps : int
            As in :func:`sparsefric.lugre.integrate_z`.

        Returns
        -------
        ndarray, shape (n,)
            τ_f [N·m | N].

        Raises
        ------
        OptionError
            A ``ValueError`` naming a velocity that is not finite or a time step that is not
            positive and finite (``qd[i]``, ``dt[i]``, or ``dt`` for a number), ``dt`` of
            another length, or ``z0`` that is not finite, for either kind: the bristle state
            would turn NaN for good or run backwards (``DESIGN.md`` §96).
        """
        qd, steps = self._record(qd, dt, z0)
        return self._friction(self._admitted(outside, velocity=qd)["velocity"], steps, z0,
                              substeps)

    def torque(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, dt: float | np.ndarray,
               z0: float | None = None, *, outside: str = "warn") -> np.ndarray:
        """Inverse dynamics τ̂ = rigid body + friction [N·m] along one trajectory.

        ``outside`` as in :meth:`static_friction`, for the position and the velocity; ``qd``,
        ``dt`` and ``z0`` as in :meth:`friction_torque`, which refuses the same inputs.
        """
        qd, steps = self._record(qd, dt, z0)
        given = self._admitted(outside, position=q, velocity=qd)
        return (self.rigid_body_torque(given["position"], qdd)
                + self._friction(given["velocity"], steps, z0, 1))

    def _record(self, qd: np.ndarray, dt: float | np.ndarray, z0: float | None
                ) -> tuple[np.ndarray, np.ndarray]:
        """Velocities ``qd`` [rad/s | m/s] as a float array and the time steps ``dt`` [s], one
        per sample, as :func:`sparsefric.lugre.check_record` checks and gives them, after
        :func:`sparsefric.lugre.finite_start` of ``z0`` [rad | m] if given."""
        qd = np.atleast_1d(lugre.velocities(qd))
        n = qd.shape[0]
        steps = lugre.check_record(qd, dt, (n - 1, n), range(n - 1), units(self.axis)["qd"])
        if z0 is not None:
            lugre.finite_start(z0)
        return qd, steps

    def _friction(self, qd: np.ndarray, steps: np.ndarray, z0: float | None,
                  substeps: int) -> np.ndarray:
        """τ_f [N·m] of checked inputs (:meth:`friction_torque`), ``steps`` [s] one per
        sample."""
        if self.kind == "lugre":
            return lugre.lugre_torque(qd, steps, self.friction, z0, substeps=substeps)
        return lugre.static_curve(qd, self.friction)

    def check_validity(self, q: np.ndarray | None = None, qd: np.ndarray | None = None,
                       tau: np.ndarray | None = None) -> list[Excursion]:
        """The inputs outside the validity range, and how far (none without a range).

        Parameters
        ----------
        q, qd, tau : ndarray, optional
            Position [rad | m], velocity [rad/s | m/s] and torque [N·m | N] to check against
            the ranges ``position``, ``velocity`` and ``torque`` of :attr:`validity`.

        Returns
        -------
        list of Excursion
            One per quantity outside its range: the range, the farthest value and its distance.
        """
        if self.validity is None:
            return []
        return self.validity.check(position=q, velocity=qd, torque=tau)

    def outside_message(self, q: np.ndarray | None = None, qd: np.ndarray | None = None,
                        tau: np.ndarray | None = None) -> str | None:
        """The warning :meth:`check_validity` gives reason for, in one sentence (None if the
        inputs lie inside the range or there is none)."""
        found = self.check_validity(q, qd, tau)
        return outside_message(found, self._quantity_units()) if found else None

    def _quantity_units(self) -> dict[str, str]:
        u = units(self.axis)
        return {"velocity": u["qd"], "position": u["q"], "torque": u["tau"]}

    def _admitted(self, outside: str, **values: np.ndarray) -> dict[str, np.ndarray]:
        """Inputs after the ``outside`` policy (warning from the caller's caller)."""
        return enforce(self.validity, outside, self._quantity_units(), stacklevel=4, **values)

    @property
    def g0(self) -> float:
        """g(0⁺) = f_c + ΣA [N·m or N]: the Coulomb–Stribeck level at rest."""
        return self.coulomb + sum(a for _, a in self.stribeck)

    def breakaway_torque(self, v_max: float = 2.0) -> float:
        """Break-away torque [N·m]: the largest Coulomb–Stribeck friction s(q̇)·g(q̇) over
        0 < q̇ ≤ v_max, viscous terms excluded.

        With sign(q̇) (model A) this is g(0⁺) = f_c + ΣA, the level σ0 z must reach before the
        joint slides; with tanh(K q̇) (model B), the peak of tanh(K q̇)·g(q̇). The viscous terms
        are left out: the peak of the whole static curve can lie far above the speeds of the data
        (EMPS: a fitted −230 q̇² put it at 0.74 m/s, 124 N, against f_s ≈ 17 N).

        Parameters
        ----------
        v_max : float
            Largest speed of the search [rad/s | m/s], positive and finite (the grid starts at
            10⁻⁷ or at ``v_max`` if that is smaller).

        Raises
        ------
        OptionError
            ``v_max`` is not positive and finite.
        """
        if not 0.0 < v_max < math.inf:
            raise OptionError("v_max", "must be a positive, finite speed "
                                       f"[{units(self.axis)['qd']}], got {v_max!r}")
        v = np.geomspace(min(1e-7, v_max), v_max, 4000)
        p = self.friction
        return float(np.max(lugre.sign_function(v, p.tanh_k) * lugre.stribeck_g(v, p)))

    def parameters(self) -> list[tuple[str, str, float]]:
        """(parameter, unit, value) of every term, σ0 and σ1 for LuGre, the break-away torque
        last: the one listing the report, the notebook display and the CLI print. Ω_s only
        with a Stribeck term (without one it is a placeholder that nothing uses)."""
        u = units(self.axis)
        rows = [("I (inertia)", u["inertia"], self.inertia)]
        if self.axis == "revolute":
            rows += [("a_c (gravity cos)", u["tau"], self.gravity_cos),
                     ("a_s (gravity sin)", u["tau"], self.gravity_sin)]
        rows += [("o (offset)", u["tau"], self.offset), ("f_c (Coulomb)", u["tau"], self.coulomb)]
        if self.stribeck:
            rows += [("Ω_s (Stribeck velocity)", u["qd"], self.stribeck_velocity)]
        rows += [(f"A (Stribeck, δ = {d:g})", u["tau"], a) for d, a in self.stribeck]
        rows += [(f"c_{p} (viscous q̇^{p})",
                  f"{u['tau']}·{u['vel']}" if p == 1 else f"{u['tau']}·({u['vel']})^{p}", c)
                 for p, c in self.viscous]
        if self.kind == "lugre":
            rows += [("σ0 (bristle stiffness)", u["stiff"], self.sigma0),
                     ("σ1 (bristle damping)", u["damp"], self.sigma1)]
        return rows + [("breakaway torque", u["tau"], self.breakaway_torque())]

    @property
    def units(self) -> dict[str, str]:
        """Units of this axis by quantity (see the module function :func:`units`)."""
        return units(self.axis)

    def equations(self, precision: int = 3, *, unicode: bool = True) -> list[str]:
        """The model as equations with units (:func:`sparsefric.equations.model_equations`)."""
        from sparsefric.equations import model_equations

        return model_equations(self, precision, unicode=unicode)

    def friction_object(self, *, outside: str = "warn", z0: float = 0.0) -> lugre.LuGreFriction:
        """This joint's friction as a stateful :class:`~sparsefric.lugre.LuGreFriction` (run
        sample by sample), with its ``kind``, validity range and axis units, starting from the
        bristle deflection ``z0`` [rad | m] (finite)."""
        params = self.friction
        if self.kind == "static":
            params = replace(params, sigma0=0.0, sigma1=0.0)
        return lugre.LuGreFriction(params, validity=self.validity, outside=outside, z0=z0,
                                   velocity_unit=units(self.axis)["qd"])

    def _repr_html_(self) -> str:
        """Jupyter display: the parameters as a table (parameter, unit, value)."""
        table = html_table(["parameter", "unit", "value"], self.parameters(), digits=6)
        return (f'{NOTEBOOK_STYLE}<div class="sparsefric"><b>JointModel</b> ({self.axis}, '
                f"friction {self.kind})" + table + "</div>")

    def with_(self, **changes: Any) -> JointModel:
        """A copy with some fields changed."""
        return replace(self, **changes)

    # ----------------------------------------------------------------- file format
    def to_dict(self) -> dict[str, Any]:
        """The ``sparsefric-model/2`` dictionary (not validated: :meth:`to_json` is).

        Raises
        ------
        OptionError
            A key of ``extra`` is one of :data:`OWN_KEYS`.
        """
        own = next((k for k in self.extra if k in OWN_KEYS), None)
        if own is not None:
            raise OptionError("extra", f"must not hold {_short(own)}, a key of the model itself "
                                       f"({', '.join(OWN_KEYS)})")
        sign = {"type": "tanh", "K": self.tanh_k} if self.tanh_k > 0 else {"type": "sign"}
        out: dict[str, Any] = {
            "format": FORMAT,
            "axis": self.axis,
            "rigid_body": {
                "inertia": self.inertia,
                "gravity_cos": self.gravity_cos,
                "gravity_sin": self.gravity_sin,
                "offset": self.offset,
            },
            "friction": {
                "kind": self.kind,
                "sign": sign,
                "coulomb": self.coulomb,
                "stribeck_velocity": self.stribeck_velocity,
                "stribeck": [{"delta": d, "amplitude": a} for d, a in self.stribeck],
                "viscous": [{"power": p, "coefficient": c} for p, c in self.viscous],
                "sigma0": self.sigma0,
                "sigma1": self.sigma1,
            },
        }
        if self.validity is not None:
            out["validity"] = self.validity.to_dict()
        if self.uncertainty is not None:
            out["uncertainty"] = self.uncertainty.to_dict()
        out.update(self.extra)
        return out

    def to_json(self, source: str = "model") -> str:
        """The model file's text (floats with full precision, keys in schema order).

        Raises
        ------
        ModelFileError
            The model is one :meth:`load` would refuse (a coefficient that is not finite, a
            LuGre model with σ0 ≤ 0…): the loader's message, naming ``source`` and the key.
        """
        data = self.to_dict()
        _parse(data, source)
        return json.dumps(_finite(data), indent=2, allow_nan=False) + "\n"

    def save(self, path: str | os.PathLike) -> None:
        """Write the model file atomically; a model :meth:`load` would refuse is not written
        (:meth:`to_json`, the error naming ``path``)."""
        write_text(path, self.to_json(str(path)))

    @classmethod
    def from_dict(cls, data: Any, source: str = "model") -> JointModel:
        """Validate a ``sparsefric-model/1`` or ``/2`` dictionary; the error names the first bad
        key. The model's ``extra`` is a deep copy of the other keys, so that editing one does
        not edit the other."""
        return _parse(data, source)

    @classmethod
    def load(cls, path: str | os.PathLike) -> JointModel:
        """Read and validate a model file."""
        return _parse(read_json(path), str(path))


def read_json(path: str | os.PathLike) -> Any:
    """The JSON value of a model file; a file that cannot be read or parsed raises
    :class:`ModelFileError` naming it."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ModelFileError(f"{p}: no such model file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelFileError(f"{p}: cannot read model file "
                             f"({exc.__class__.__name__})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ModelFileError(f"{p}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
    except RecursionError:
        raise ModelFileError(f"{p}: not valid JSON (nested too deeply)") from None
    except ValueError as exc:  # e.g. an integer literal longer than Python converts
        raise ModelFileError(f"{p}: not valid JSON ({_first_line(exc)})") from None


def _first_line(exc: BaseException) -> str:
    """The first line of an exception's message, or its class name."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else exc.__class__.__name__


def _finite(obj: Any) -> Any:
    """Replace non-finite floats by None so that a model file is always valid JSON."""
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite(v) for v in obj]
    if isinstance(obj, float | np.floating):
        return float(obj) if math.isfinite(obj) else None
    if isinstance(obj, np.integer):
        return int(obj)
    return obj


def _number(obj: dict, key: str, where: str, *, positive: bool = False,
            nonneg: bool = False) -> float:
    if key not in obj:
        raise ModelFileError(f"{where}: missing key '{key}'")
    return _value(obj[key], f"key '{key}'", where, positive=positive, nonneg=nonneg)


def _value(value: Any, what: str, where: str, *, positive: bool = False,
           nonneg: bool = False) -> float:
    """``value`` as a float; ``what`` names it in the error (e.g. "key 'coulomb'").

    Any real number type is taken (numpy's ``float32``, ``int64``…: a dictionary built in
    Python); a bool is refused, though Python counts it as an integer."""
    if (isinstance(value, bool) or not isinstance(value, numbers.Real)
            or not _finite_float(value)):
        raise ModelFileError(f"{where}: {what} must be a finite number, got {_short(value)}")
    if positive and value <= 0:
        raise ModelFileError(f"{where}: {what} must be > 0, got {value!r}")
    if nonneg and value < 0:
        raise ModelFileError(f"{where}: {what} must be ≥ 0, got {value!r}")
    return float(value)


def _numbers(obj: dict, key: str, where: str) -> tuple[float, ...]:
    """A list of finite numbers."""
    return tuple(_value(v, f"key '{key}' item {i}", where)
                 for i, v in enumerate(_section(obj, key, where, list)))


def _pair(obj: dict, key: str, where: str, *, nonneg: bool = False) -> tuple[float, float]:
    """A range [min, max] with min ≤ max."""
    lo_hi = _numbers(obj, key, where)
    if len(lo_hi) != 2 or lo_hi[0] > lo_hi[1]:
        raise ModelFileError(f"{where}: key '{key}' must be [min, max] with min ≤ max, "
                             f"got {_short(obj[key])}")
    if nonneg:
        _value(lo_hi[0], f"key '{key}' min", where, nonneg=True)
    return lo_hi


def _interval(obj: dict, key: str, where: str) -> tuple[float, float]:
    """An interval [lo, hi] with lo ≤ hi; ``null`` for an open end (lo = −∞, hi = +∞)."""
    pair = _section(obj, key, where, list)
    if len(pair) != 2:
        raise ModelFileError(f"{where}: key '{key}' must be [lo, hi], got {_short(pair)}")
    lo, hi = (sign * math.inf if v is None else _value(v, f"key '{key}' item {i}", where)
              for i, (v, sign) in enumerate(zip(pair, (-1, 1), strict=True)))
    if lo > hi:
        raise ModelFileError(f"{where}: key '{key}' must be [lo, hi] with lo ≤ hi, "
                             f"got {_short(pair)}")
    return lo, hi


def _known_keys(obj: dict, allowed: tuple[str, ...], where: str) -> None:
    """Refuse a key of a format-2 section that the format does not define (a misspelling)."""
    for key in obj:
        if key not in allowed:
            raise ModelFileError(f"{where}: unknown key {_short(key)} "
                                 f"(allowed: {', '.join(allowed)})")


def _finite_float(value: numbers.Real) -> bool:
    """Whether ``value`` is finite and fits a float (JSON integers can be arbitrarily long)."""
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def _short(value: Any, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters (one line: repr escapes newlines)."""
    text = repr(value) if not isinstance(value, int) or value.bit_length() < 200 else "<huge int>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _section(obj: dict, key: str, where: str, kind: type = dict) -> Any:
    if key not in obj:
        raise ModelFileError(f"{where}: missing key '{key}'")
    if not isinstance(obj[key], kind):
        raise ModelFileError(f"{where}: key '{key}' must be a {kind.__name__}")
    return obj[key]


def _choice(obj: dict, key: str, where: str, choices: tuple[str, ...]) -> str:
    value = obj.get(key)
    if value not in choices:
        raise ModelFileError(f"{where}: key '{key}' must be one of {', '.join(choices)}, "
                             f"got {_short(value)}")
    return value


def _parse_sign(fr: dict, where: str) -> float:
    sign = _section(fr, "sign", where)
    kind = _choice(sign, "type", f"{where}.sign", ("sign", "tanh"))
    return _number(sign, "K", f"{where}.sign", positive=True) if kind == "tanh" else 0.0


def _parse_terms(fr: dict, key: str, fields: tuple[str, str], where: str) -> tuple:
    items = _section(fr, key, where, list)
    terms = []
    for i, item in enumerate(items):
        at = f"{where}.{key}[{i}]"
        if not isinstance(item, dict):
            raise ModelFileError(f"{at}: must be an object with keys {fields[0]}, {fields[1]}")
        first = _number(item, fields[0], at, positive=True)
        if key == "viscous":
            if first != int(first):
                raise ModelFileError(f"{at}: key 'power' must be a positive integer")
            first = int(first)
        terms.append((first, _number(item, fields[1], at)))
    return tuple(terms)


def _parse_validity(data: dict, where: str) -> ValidityRange | None:
    if "validity" not in data:
        return None
    section = _section(data, "validity", where)
    at = f"{where}: validity"
    _known_keys(section, QUANTITIES, at)
    return ValidityRange(**{k: _pair(section, k, at, nonneg=k == "speed")
                            for k in QUANTITIES if k in section})


def _interval_name(name: str) -> bool:
    """Whether ``name`` is a parameter of ``uncertainty.intervals``."""
    return name in INTERVAL_NAMES or re.fullmatch(INTERVAL_PATTERN, name) is not None


def _parse_band(section: dict, where: str) -> StaticBand | None:
    if "static_curve" not in section:
        return None
    band = _section(section, "static_curve", where)
    at = f"{where}.static_curve"
    _known_keys(band, ("velocity", "lower", "upper"), at)
    velocity, lower, upper = (_numbers(band, k, at) for k in ("velocity", "lower", "upper"))
    if not len(velocity) == len(lower) == len(upper):
        raise ModelFileError(f"{at}: keys 'velocity', 'lower', 'upper' must have equal lengths, "
                             f"got {len(velocity)}, {len(lower)}, {len(upper)}")
    if any(lo > hi for lo, hi in zip(lower, upper, strict=True)):
        raise ModelFileError(f"{at}: key 'lower' must not exceed key 'upper'")
    return StaticBand(velocity, lower, upper)


def _bootstrap_integer(section: dict, key: str, at: str, method: str, *,
                       required: bool) -> int | None:
    """Key ``key`` of the ``uncertainty`` section ``section`` of method ``method``: an integer
    for method bootstrap (> 0 if ``required``, else ≥ 0 and None where it is missing), refused
    for another method."""
    if method != "bootstrap":
        if key in section:
            raise ModelFileError(f"{at}: key '{key}' belongs to method bootstrap only")
        return None
    if key not in section and not required:
        return None
    value = _number(section, key, at, positive=required, nonneg=True)
    if value != int(value):
        kind = "a positive integer" if required else "an integer ≥ 0"
        raise ModelFileError(f"{at}: key '{key}' must be {kind}")
    return int(section[key])


def _parse_uncertainty(data: dict, where: str) -> Uncertainty | None:
    if "uncertainty" not in data:
        return None
    section = _section(data, "uncertainty", where)
    at = f"{where}: uncertainty"
    _known_keys(section, ("method", "level", "resamples", "random_state", "intervals",
                          "inclusion", "static_curve"), at)
    method = _choice(section, "method", at, UNCERTAINTY_METHODS)
    level = _number(section, "level", at, positive=True)
    if level >= 1:
        raise ModelFileError(f"{at}: key 'level' must be < 1, got {level!r}")
    resamples = _bootstrap_integer(section, "resamples", at, method, required=True)
    random_state = _bootstrap_integer(section, "random_state", at, method, required=False)
    intervals = _section(section, "intervals", at)
    for name in intervals:
        if not _interval_name(name):
            raise ModelFileError(f"{at}.intervals: unknown parameter {_short(name)} (allowed: "
                                 f"{', '.join(INTERVAL_NAMES)}, stribeck:<delta>, viscous:<p>)")
    inclusion = _section(section, "inclusion", at) if "inclusion" in section else {}
    frequency = {term: _value(f, f"key {_short(term)}", f"{at}.inclusion", nonneg=True)
                 for term, f in inclusion.items()}
    if any(f > 1 for f in frequency.values()):
        raise ModelFileError(f"{at}.inclusion: frequencies must lie in [0, 1]")
    return Uncertainty(method=method, level=level, resamples=resamples,
                       random_state=random_state,
                       intervals={k: _interval(intervals, k, f"{at}.intervals")
                                  for k in intervals},
                       inclusion=frequency, static_curve=_parse_band(section, at))


def _parse(data: Any, where: str) -> JointModel:
    if not isinstance(data, dict):
        raise ModelFileError(f"{where}: a model file must hold a JSON object")
    if data.get("format") not in READABLE_FORMATS:
        raise ModelFileError(f"{where}: key 'format' must be '{FORMAT}' (or the older "
                             f"'{READABLE_FORMATS[0]}'), got {_short(data.get('format'))}")
    axis = _choice(data, "axis", where, AXES)
    rb = _section(data, "rigid_body", where)
    rbw = f"{where}: rigid_body"
    fr = _section(data, "friction", where)
    frw = f"{where}: friction"
    kind = _choice(fr, "kind", frw, KINDS)
    return JointModel(
        axis=axis,
        inertia=_number(rb, "inertia", rbw, nonneg=True),
        gravity_cos=_number(rb, "gravity_cos", rbw),
        gravity_sin=_number(rb, "gravity_sin", rbw),
        offset=_number(rb, "offset", rbw),
        kind=kind,
        tanh_k=_parse_sign(fr, frw),
        coulomb=_number(fr, "coulomb", frw),
        stribeck_velocity=_number(fr, "stribeck_velocity", frw, positive=True),
        stribeck=_parse_terms(fr, "stribeck", ("delta", "amplitude"), frw),
        viscous=_parse_terms(fr, "viscous", ("power", "coefficient"), frw),
        sigma0=_number(fr, "sigma0", frw, nonneg=True, positive=kind == "lugre"),
        sigma1=_number(fr, "sigma1", frw),
        validity=_parse_validity(data, where),
        uncertainty=_parse_uncertainty(data, where),
        extra={k: copy.deepcopy(v) for k, v in data.items() if k not in OWN_KEYS},
    )


def units(axis: str) -> dict[str, str]:
    """Units of an axis: position ``q``, velocity ``qd``, torque ``tau``, ``inertia``, bristle
    ``stiff``-ness and ``damp``-ing, and ``vel`` (the inverse velocity of viscous terms)."""
    if axis == "prismatic":
        return {"q": "m", "qd": "m/s", "tau": "N", "inertia": "kg", "stiff": "N/m",
                "damp": "N·s/m", "vel": "s/m"}
    return {"q": "rad", "qd": "rad/s", "tau": "N·m", "inertia": "kg·m²", "stiff": "N·m/rad",
            "damp": "N·m·s/rad", "vel": "s/rad"}


def parameter_table(models: dict[str, JointModel]) -> pd.DataFrame:
    """Parameters of several models side by side, with units.

    Parameters
    ----------
    models : dict of str to JointModel
        Column label → model (e.g. static, dynamic, truth).

    Returns
    -------
    DataFrame
        Columns parameter, unit, then one per model (NaN where a model lacks the term).
    """
    table: dict[tuple[str, str], dict[str, float]] = {}
    for label, m in models.items():
        for name, unit, value in m.parameters():
            table.setdefault((name, unit), {})[label] = float(value)
    return pd.DataFrame([{"parameter": n, "unit": u, **v} for (n, u), v in table.items()],
                        columns=["parameter", "unit", *models])
