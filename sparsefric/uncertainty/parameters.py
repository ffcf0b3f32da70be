"""The identified parameters of a model by their interval names, their values, the
coordinates the fast method linearises them in, and the derived quantities (break-away torque,
g(0), the static curve) whose intervals are reported beside them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import replace

import numpy as np

from sparsefric.model import JointModel, units
from sparsefric.preprocessing import Prepared

__all__ = [
    "DERIVED",
    "derived_values",
    "from_linear",
    "log_mask",
    "LOG_PARAMETERS",
    "parameter_names",
    "parameter_values",
    "speed_range",
    "static_velocity_grid",
    "to_linear",
    "unit_of",
    "with_parameters",
]


#: Parameters linearised (fast) in their logarithm: positive by construction, their intervals too.
LOG_PARAMETERS = ("stribeck_velocity", "sigma0")


#: Derived quantities of the parameter table.
DERIVED = ("breakaway", "g0")


def parameter_names(model: JointModel) -> tuple[str, ...]:
    """The identified parameters of ``model``, by their interval names in the model file.

    ``inertia``; ``gravity_cos``, ``gravity_sin`` (revolute); ``offset`` (prismatic, or a
    non-zero revolute offset); ``coulomb``; ``stribeck:<δ>`` (amplitude A of each term) and
    ``stribeck_velocity`` (if there is a term); ``viscous:<p>``; ``sigma0``, ``sigma1`` (LuGre).
    The exponents δ and the sign model are fixed (chosen, not estimated).
    """
    names = ["inertia"]
    if model.axis == "revolute":
        names += ["gravity_cos", "gravity_sin"]
    if model.axis == "prismatic" or model.offset != 0.0:
        names.append("offset")
    names.append("coulomb")
    names += [f"stribeck:{d:g}" for d, _ in model.stribeck]
    if model.stribeck:
        names.append("stribeck_velocity")
    names += [f"viscous:{p}" for p, _ in model.viscous]
    if model.kind == "lugre":
        names += ["sigma0", "sigma1"]
    return tuple(names)


def _value_map(model: JointModel) -> dict[str, float]:
    values = {"inertia": model.inertia, "gravity_cos": model.gravity_cos,
              "gravity_sin": model.gravity_sin, "offset": model.offset,
              "coulomb": model.coulomb, "stribeck_velocity": model.stribeck_velocity,
              "sigma0": model.sigma0, "sigma1": model.sigma1}
    values.update({f"stribeck:{d:g}": a for d, a in model.stribeck})
    values.update({f"viscous:{p}": c for p, c in model.viscous})
    return values


def parameter_values(model: JointModel, names: Sequence[str],
                     absent: float = 0.0) -> np.ndarray:
    """The values of parameters ``names`` of ``model`` [their units].

    A Stribeck or viscous term the model lacks has amplitude ``absent`` (0: no term); a
    Stribeck velocity without a Stribeck term, and σ0, σ1 of a static model, are NaN.
    """
    values = _value_map(model)
    out = []
    for name in names:
        if name in values and not _undefined(model, name):
            out.append(values[name])
        else:
            out.append(absent if name.startswith(("stribeck:", "viscous:")) else math.nan)
    return np.asarray(out, dtype=float)


def _undefined(model: JointModel, name: str) -> bool:
    """Whether ``name`` has no meaning for ``model`` (Ω_s without terms, σ's of a static one)."""
    if name == "stribeck_velocity":
        return not model.stribeck
    return name in ("sigma0", "sigma1") and model.kind != "lugre"


def with_parameters(model: JointModel, names: Sequence[str],
                    values: Iterable[float]) -> JointModel:
    """``model`` with parameters ``names`` set to ``values`` [their units]."""
    given = dict(zip(names, map(float, values), strict=True))
    scalars = {k: v for k, v in given.items() if ":" not in k}
    stribeck = tuple((d, given.get(f"stribeck:{d:g}", a)) for d, a in model.stribeck)
    viscous = tuple((p, given.get(f"viscous:{p}", c)) for p, c in model.viscous)
    return replace(model, stribeck=stribeck, viscous=viscous, **scalars)


def log_mask(names: Sequence[str]) -> np.ndarray:
    """Which of ``names`` are linearised in their logarithm (:data:`LOG_PARAMETERS`)."""
    return np.array([n in LOG_PARAMETERS for n in names], dtype=bool)


def to_linear(names: Sequence[str], values: np.ndarray) -> np.ndarray:
    """Natural → linearisation coordinates (ln for :data:`LOG_PARAMETERS`)."""
    log = log_mask(names)
    out = np.array(values, dtype=float)
    out[log] = np.log(out[log])
    return out


def from_linear(names: Sequence[str], theta: np.ndarray) -> np.ndarray:
    """Linearisation → natural coordinates. A Gauss–Newton trial or an interval end far out in
    ln θ gives +∞, which the callers treat as such (a rejected trial, an open interval)."""
    log = log_mask(names)
    out = np.array(theta, dtype=float)
    with np.errstate(over="ignore"):
        out[log] = np.exp(out[log])
    return out


def unit_of(name: str, axis: str) -> str:
    u = units(axis)
    base = name.split(":")[0]
    if base == "viscous":
        p = int(name.split(":")[1])
        return f"{u['tau']}·{u['vel']}" if p == 1 else f"{u['tau']}·({u['vel']})^{p}"
    return {"inertia": u["inertia"], "stribeck_velocity": u["qd"], "sigma0": u["stiff"],
            "sigma1": u["damp"]}.get(base, u["tau"])


def static_velocity_grid(v_max: float, v_min: float | None = None, n: int = 40) -> np.ndarray:
    """Velocities [rad/s | m/s] of the static-curve band: ``n`` log-spaced speeds from ``v_min``
    (default v_max/1000) to ``v_max``, both signs, ascending (2n points)."""
    v_max = float(v_max)
    lo = v_max * 1e-3 if v_min is None or not v_min > 0 else min(float(v_min), v_max)
    speeds = np.geomspace(lo, v_max, n)
    return np.r_[-speeds[::-1], speeds]


def derived_values(model: JointModel, velocity: np.ndarray, v_max: float) -> np.ndarray:
    """[break-away torque, g(0), τ_ss(velocity)…] of ``model`` [N·m | N].

    Break-away: :meth:`~sparsefric.model.JointModel.breakaway_torque` up to ``v_max``;
    g(0) = f_c + ΣA; τ_ss the static curve at ``velocity``.
    """
    return np.r_[model.breakaway_torque(v_max), model.g0,
                 model.static_friction(velocity, outside="ignore")]


def speed_range(data: Sequence[Prepared]) -> tuple[float, float]:
    """(5th percentile of the moving speeds, largest speed) of the records [rad/s | m/s]."""
    speed = np.abs(np.concatenate([p.signals.qd for p in data]))
    v_max = float(np.max(speed)) if speed.size else 1.0
    moving = speed[speed > 1e-3 * v_max]
    return (float(np.percentile(moving, 5)) if moving.size else v_max * 1e-3), max(v_max, 1e-12)
