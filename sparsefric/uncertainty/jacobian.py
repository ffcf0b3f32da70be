"""The model's simulated torque along the prepared records and its Jacobian in the parameters:
exact columns for the terms the torque is linear in, central differences of the simulated
friction (bristle state integrated along every record) for the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from sparsefric.differentiation import sample_average, torque_average
from sparsefric.model import JointModel
from sparsefric.preprocessing import Prepared
from sparsefric.uncertainty.parameters import (
    from_linear,
    log_mask,
    parameter_values,
    to_linear,
    with_parameters,
)

__all__ = [
    "central_differences",
    "FD_STEP",
    "fd_steps",
    "friction_torque",
    "model_torque",
    "Records",
    "torque_jacobian",
]


#: Relative finite-difference step of the Jacobian (central differences).
FD_STEP = 1e-5


@dataclass(frozen=True)
class Records:
    """Samples of several prepared sets, stacked, with the slice and period of each record.

    Attributes
    ----------
    q, qd, qdd : ndarray
        Denoised position [rad | m], velocity [rad/s | m/s], acceleration [rad/s² | m/s²].
    tau : ndarray
        Torque [N·m | N] the residuals are taken of.
    bounds : tuple of (int, int)
        Slice of each record.
    dt : tuple of float
        Sample period [s] of each record.
    averaged : bool
        Residuals of the sample-averaged equation: ``tau`` and every term of τ̂ but I q̈
        averaged like the q̈ of a second difference (:meth:`average`), as the final
        coefficients were fitted (:attr:`sparsefric.steps.iterations.FrictionData.averaged`).
    held : bool
        There ``tau`` is a command held until the next sample, averaged by
        :func:`~sparsefric.differentiation.held_average` (``Prepared.torque_held``).
    """

    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    bounds: tuple[tuple[int, int], ...]
    dt: tuple[float, ...]
    averaged: bool = False
    held: bool = False

    @classmethod
    def of(cls, data: Sequence[Prepared], torque: str = "denoised") -> Records:
        """Stack ``data``; ``torque`` = ``denoised`` (``Prepared.tau``, what the selection
        regressed) or ``measured`` (``Prepared.tau_raw``, averaged where q̈ is a second
        difference of positions: what the final coefficients regressed)."""
        bounds, start = [], 0
        for p in data:
            bounds += [(start + a, start + b) for a, b in p.bounds]
            start += len(p)
        cat = np.concatenate
        tau = [p.tau if torque == "denoised" else p.tau_raw for p in data]
        out = cls(cat([p.signals.q for p in data]), cat([p.signals.qd for p in data]),
                  cat([p.signals.qdd for p in data]), cat(tau), tuple(bounds),
                  tuple(float(h) for p in data for h in p.dt))
        if torque == "measured" and all(p.sampled_acceleration for p in data):
            held = all(p.torque_held for p in data)
            return replace(out, averaged=True, held=held).with_torque(out.tau)
        return out

    def average(self, x: np.ndarray) -> np.ndarray:
        """``x`` (samples along axis 0) averaged as the residuals need (identity unless
        :attr:`averaged`)."""
        return sample_average(x, self.bounds) if self.averaged else x

    def with_torque(self, tau: np.ndarray) -> Records:
        """The same records with the torque ``tau`` [N·m] (averaged alike: a held command's
        average where :attr:`held`)."""
        tau = np.asarray(tau, dtype=float)
        if self.averaged:
            tau = torque_average(tau, self.bounds, self.held)
        return replace(self, tau=tau)

    def __len__(self) -> int:
        return len(self.tau)


def friction_torque(model: JointModel, rec: Records, substeps: int = 1) -> np.ndarray:
    """τ_f [N·m | N] of ``model`` along every record (z integrated per record from the default
    start of :func:`sparsefric.lugre.integrate_z`, in ``substeps`` parts per interval)."""
    return np.concatenate([model.friction_torque(rec.qd[a:b], h, outside="ignore",
                                                 substeps=substeps)
                           for (a, b), h in zip(rec.bounds, rec.dt, strict=True)])


def model_torque(model: JointModel, rec: Records, substeps: int = 1) -> np.ndarray:
    """τ̂ = I q̈ + a_c cos q + a_s sin q + o + τ_f [N·m | N] along every record (all but I q̈
    averaged where ``rec`` is; z in ``substeps`` parts per interval)."""
    inertial = model.inertia * rec.qdd
    rest = (model.rigid_body_torque(rec.q, rec.qdd) - inertial
            + friction_torque(model, rec, substeps))
    return inertial + rec.average(rest)


def _linear_column(name: str, rec: Records) -> np.ndarray | None:
    """∂τ̂/∂θ of a parameter τ̂ is linear in and that does not act through z; else None."""
    if name == "inertia":
        return rec.qdd
    if name == "gravity_cos":
        return rec.average(np.cos(rec.q))
    if name == "gravity_sin":
        return rec.average(np.sin(rec.q))
    if name == "offset":
        return np.ones_like(rec.q)
    if name.startswith("viscous:"):
        return rec.average(rec.qd ** int(name.split(":")[1]))
    return None


def fd_steps(names: Sequence[str], theta: np.ndarray, scale: float) -> np.ndarray:
    """Central-difference steps in the linearisation coordinates: :data:`FD_STEP` in ln θ for
    :data:`LOG_PARAMETERS`, :data:`FD_STEP`·max(|θ|, 10⁻³·``scale``) otherwise (``scale`` a
    typical value [N·m], e.g. g(0))."""
    log = log_mask(names)
    floor = 1e-3 * max(abs(scale), 1e-12)
    return np.where(log, FD_STEP, FD_STEP * np.maximum(np.abs(theta), floor))


def central_differences(f: Callable[[np.ndarray], np.ndarray], theta: np.ndarray,
                        steps: np.ndarray, columns: Sequence[int]) -> np.ndarray:
    """(f(θ + h_j e_j) − f(θ − h_j e_j))/(2 h_j) for each j in ``columns``, as columns."""
    out = []
    for j in columns:
        e = np.zeros_like(theta)
        e[j] = steps[j]
        out.append((f(theta + e) - f(theta - e)) / (2.0 * steps[j]))
    return np.column_stack(out) if out else np.zeros((0, 0))


def torque_jacobian(model: JointModel, rec: Records, names: Sequence[str]
                    ) -> tuple[np.ndarray, np.ndarray]:
    """τ̂ and J = ∂τ̂/∂θ [N·m per unit of θ] along every record.

    θ are the parameters ``names`` in linearisation coordinates (ln Ω_s, ln σ0). Rigid-body and
    viscous columns are exact; the Coulomb level, Stribeck amplitudes, ln Ω_s, ln σ0 and σ1 act
    through g(q̇) and the bristle state, and are central differences of the simulated friction.
    """
    theta = to_linear(names, parameter_values(model, names))
    J = np.empty((len(rec), len(names)))
    numeric = []
    for j, name in enumerate(names):
        col = _linear_column(name, rec)
        if col is None:
            numeric.append(j)
        else:
            J[:, j] = col

    dry = model.with_(viscous=())  # the viscous columns are exact: leave them out here

    def friction(t: np.ndarray) -> np.ndarray:
        return rec.average(friction_torque(with_parameters(dry, names, from_linear(names, t)),
                                           rec))

    if numeric:
        J[:, numeric] = central_differences(friction, theta, fd_steps(names, theta, model.g0),
                                            numeric)
    return model_torque(model, rec), J
