"""Recipes for simulated data sets: the main paper's experiment as a set of trajectories.

:func:`paper_experiment` reproduces the structure of Mahmoudkhani et al. 2023, §5.2: closed-loop
trapezoidal back-and-forth moves at several target velocities, split into training, validation and
test trajectories. It is used by ``sparsefric simulate``, ``experiments/make_example.py`` and the
benchmarks, so that every simulated data set is made the same way.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from sparsefric.data import Trajectory, save_trajectory
from sparsefric.model import JointModel
from sparsefric.simulate.joint import Controller, Sensors, simulate_moves

#: The joint of ``data/example``: a Stribeck curve with a visible peak and odd viscous powers, as
#: the main paper found for its robot joint.
EXAMPLE_TRUTH = JointModel(
    axis="revolute",
    inertia=1.5,  # kg·m²
    gravity_cos=25.0,  # N·m
    gravity_sin=-6.0,  # N·m
    kind="lugre",
    coulomb=18.0,  # N·m
    stribeck_velocity=0.08,  # rad/s
    stribeck=((1.5, 7.0),),  # δ, amplitude f_s − f_c [N·m]
    viscous=((1, 9.0), (3, 0.8)),  # N·m·s/rad, N·m·s³/rad³
    sigma0=1.5e4,  # N·m/rad
    sigma1=60.0,  # N·m·s/rad
    extra={"provenance": "experiments/make_example.py"},
)
#: 20-bit encoder with 5 µrad noise, 0.3 N·m torque noise.
EXAMPLE_SENSORS = Sensors(position_noise=5e-6, torque_noise=0.3, seed=2023)

#: Target velocities [rad/s] of the paper's training, validation and test sets.
PAPER_SPLIT = {"train": (0.127, 2.13), "validate": (0.03, 1.75), "test": (0.81, 1.4)}


@dataclass(frozen=True)
class MoveSpec:
    """One back-and-forth trajectory: target velocity [rad/s] and the geometry of the moves.

    ``scale`` multiplies every length of the geometry (range, accelerations, the 0.5 rad/s that
    separates slow from fast moves) for a joint whose velocities are scaled the same way — e.g.
    0.1 for a linear axis in m/s — so that the timing of the moves (acceleration phases, passes)
    stays that of the paper's experiment.
    """

    velocity: float
    q_low: float = -0.6
    q_high: float = 0.8
    max_pass_s: float = 7.0
    slow_acceleration: float = 4.0
    fast_acceleration: float = 8.0
    scale: float = 1.0

    def geometry(self) -> tuple[float, float, float, int]:
        """(q_low [rad], q_high [rad], acceleration [rad/s²], cycles) for this velocity.

        Slow moves are shortened so that one pass lasts at most ``max_pass_s``; fast moves are
        repeated so that every trajectory has comparable duration.
        """
        k = self.scale
        span = min(k * (self.q_high - self.q_low), self.velocity * self.max_pass_s)
        fast = self.velocity >= 0.5 * k
        acc = k * (self.fast_acceleration if fast else self.slow_acceleration)
        return k * self.q_low, k * self.q_low + span, acc, 2 if fast else 1


def paper_experiment(model: JointModel, split: dict[str, tuple[float, ...]] = PAPER_SPLIT, *,
                     sensors: Sensors = Sensors(), controller: Controller = Controller(),
                     substeps: int = 10, scale: float = 1.0) -> dict[str, list[Trajectory]]:
    """Simulate every trajectory of ``split``; returns ``{"train": [...], ...}``.

    ``scale``: the :class:`MoveSpec` length scale (1 for the paper's revolute joint; pass the
    same factor the velocities of ``split`` were scaled by).

    Each trajectory gets its own noise seed derived from ``sensors.seed`` and its position in the
    split, so the set is reproducible and its noise independent between trajectories.
    """
    out: dict[str, list[Trajectory]] = {}
    for i, (role, velocities) in enumerate(split.items()):
        out[role] = []
        for j, v in enumerate(velocities):
            q_low, q_high, acc, cycles = MoveSpec(v, scale=scale).geometry()
            seeded = Sensors(sensors.encoder_resolution, sensors.position_noise,
                             sensors.torque_noise, sensors.seed * 1000 + 10 * i + j)
            out[role].append(simulate_moves(
                model, q_low, q_high, v, acc, cycles=cycles, controller=controller,
                sensors=seeded, substeps=substeps, name=move_name(role, v)))
    return out


def move_name(role: str, velocity: float) -> str:
    """The name of the trajectory (and file) of the moves at ``velocity`` [rad/s] of a role:
    ``train_v0p127``; velocities alike in their first 6 significant digits share it."""
    return f"{role}_v{velocity:g}".replace(".", "p")


def write_experiment(model: JointModel, trajectories: dict[str, list[Trajectory]],
                     out_dir: str | os.PathLike) -> list[Path]:
    """Write ``truth.json`` and one CSV per trajectory (``ROLE_vX.csv``); return the CSV paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save(out / "truth.json")
    paths = []
    for trajs in trajectories.values():
        for traj in trajs:
            path = out / f"{traj.name}.csv"
            save_trajectory(path, traj)
            paths.append(path)
    return paths
