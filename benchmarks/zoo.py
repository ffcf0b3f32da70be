"""A zoo of simulated joints drawn over wide ranges; sparsefric and the baselines scored on each.

Run:  python benchmarks/zoo.py                     (seed 2024, 40 joints, sparsefric only:
                                                    ~7.5 min on one core; with oe ~3× that)
      python benchmarks/zoo.py --fresh             (a new seed, printed; rerun it with --seed)
      python benchmarks/zoo.py --noise-seed 1      (the same joints with other sensor noise)
      python benchmarks/zoo.py --methods sparsefric,oe,idim --joints 3,7 --out benchmarks/out/zoo
      python benchmarks/zoo.py --methods sparsefric,idim --results   (and its section of
                                                    benchmarks/RESULTS.md, per seed kind)
      python benchmarks/zoo.py --methods sparsefric,oracle   (which failures the data allow)

Every other simulated joint of ``benchmarks/`` is a variant of data/example's truth. Here joint
``i`` of seed ``s`` is drawn from its own generator ``default_rng([s, i])``, so it does not
depend on how many joints are drawn, nor on which ones run:

* axis: revolute, every fourth joint prismatic (lengths, speeds and accelerations × 0.1, as
  ``benchmarks/run.py``'s PRISMATIC; encoder steps and pre-sliding deflections in µm);
* inertia I log-uniform 0.01–50 kg·m² (kg); Coulomb level f_c around 12·(I/1.5)^0.4 N·m with a
  log-normal scatter (×/÷ 2.2), clipped to 0.5–100: heavier joints rub harder;
* 0, 1 or 2 Stribeck terms (15, 60, 25 %), f_s/f_c uniform 1.05–2.5, one Ω_s log-uniform
  0.005–0.5 rad/s, δ uniform 0.5–3 (two terms: one δ ≤ 1.25, one ≥ 1.75);
* viscous c1 (c1·2 rad/s = 0.05–2 f_c), with 30 % an odd c3 and 15 % a mixed series c1, c2, c3
  (|c2|·2 rad/s ≤ 0.25 c1, so the curve keeps its sign both ways);
* σ0 = g(0)/z_ss with the pre-sliding deflection z_ss log-uniform 0.05–20 mrad (prismatic
  2–200 µm), clipped to 1e2–1e6 N·m/rad (prismatic 1e3–1e8 N/m); σ1 = 2ζ√(σ0 I) with the
  bristle damping ratio ζ log-uniform 0.05–3;
* gravity (revolute, 80 %): |(a_c, a_s)| = g(0)·(0.3–5), any direction; prismatic: an offset
  up to ±0.3 g(0);
* torque noise 0.3–5 % of the peak torque of the reference moves; logging at 250, 500, 1000,
  2000 or 4000 Hz; a 12–24 bit encoder (prismatic: steps 1e-8–1e-5 m) with Gaussian position
  noise of 0.05–1 count before rounding;
* the recording design cycles over (a) the paper's split (train 0.127/2.13, validate 0.03/1.75,
  test 0.81/1.4 rad/s), (b) a practitioner's random speed set (4–7 log-spread speeds in
  0.01–0.15 … 0.8–2.5 rad/s, rounded to two digits, dealt to train/validate/test), (c) one
  continuous file with moves at 3–5 speeds (ONE training trajectory; a validation file or none;
  test files), and every tenth joint (d) one file concatenating 2–4 separate records with jumps
  of 0.2–2 rad in q between them.

Moves are ``MoveSpec``'s trapezoidal back-and-forth moves (accelerations scaled with g(0)/I,
4–30 rad/s², ramps ≥ 50 ms) in a PD loop with the true rigid body as feed-forward, closed on a
fine motor-side encoder (the logged joint encoder can be far coarser), simulated at 1 kHz (or at
the logging rate above it) with sub-steps that resolve the bristle resonance √(σ0/I) and its
damping, and logged every k-th control sample. The loop bandwidth (15–25 Hz) keeps the static
lag g(0)/k_p small; friction whose Stribeck slope at a steady speed would cancel the loop's
damping (stick-slip) is redrawn. Pass durations and dwells are shortened so that a joint's
records hold at most 80 k samples and 80 s.

Methods: ``sparsefric`` (``SparseFric(axis).fit(train, validate=val)``, defaults),
``idim`` (IDIM-LS as in run.py: Coulomb + q̇ + q̇³, Butterworth above the bristle resonance,
rows below 0.05 rad/s or half the slowest training speed dropped), ``oe`` (output-error
LuGre ×5 from ``default_sigma0_starts`` of the IDIM-LS level, as run.py's "OE-LuGre ×5") and
``oracle``: the output-error fit of every parameter of the truth's own structure (its Stribeck
terms with δ free, its viscous powers) on the training and validation records together,
started AT the truth, with sparsefric's TV-differentiated signals and the measured torque, by
the sample-averaged equation of sparsefric's final refit (``output_error_lugre(…,
differentiation="tv-averaged", complete_start=False)``, at most :data:`ORACLE_MAX_NFEV` solver
steps; the instantaneous torque on the TV q̈ would put I ~3 % high at 250 Hz, DESIGN.md §35):
the optimum of the prediction error nearest the truth on the data as the pipeline sees them.
Where the oracle fails a criterion, these data do not determine that figure to that
tolerance, whatever the method; where sparsefric fails one the oracle passes, the fault is
the tool's. With both run, ``zoo.md`` has a section "Against the
oracle": per joint the criteria each fails, and sparsefric's pass count among the reaching
joints where the oracle passes. Every model, the truth included, is scored on the same
TV-differentiated test data (``Preprocessor().prepare(test).relative_error(m)``).

Scores per joint and method (signed errors in % of the truth):
static curve RMS % over the recorded sliding speeds (200 log-spaced speeds each way between the
slowest and the fastest steady speed of the training and validation moves); break-away error
(``breakaway_torque(v_max=1.2 × the fastest steady speed)``); I, σ0, σ1 errors; test error ÷ the
truth's; wall time; sparsefric's warnings. A joint "reaches the Stribeck region" when its true
velocity slides (bristle within 10 % of its steady deflection) at 0 < |q̇| ≤ 2 Ω_s for at least
0.5 s in training or validation. Pass: static ≤ 3 %, break-away ≤ 5 % (where the Stribeck region
is reached), I ≤ 2 %, σ0 ≤ 25 %, test ≤ 1.1 × the truth's. A *silent catastrophe* is an error
beyond :data:`CATASTROPHE` (I, f_c, σ0, σ1, static curve > 50 %, break-away > 25 %) that no warning
names (see :data:`NAMES`: a warning counts if it matches the item's pattern, so the count is a
lower bound); baselines and the oracle print no warnings, and items their model class lacks are
not checked. A failed joint has *every failure named* when each of its failed criteria other
than the test ratio (which needs the truth) is named by a warning the same way: the user was told
which figure not to trust.

Outputs in ``--out`` (git-ignored): ``joint_NNN.json`` (drawn joint, fitted model dicts, scores,
warnings, sparsefric's differentiation and multi-start details), ``zoo.csv`` (one row per joint
and method) and ``zoo.md`` (the tables printed at the end).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd
from run import RESULTS, machine, md_table, replace_section, warm_up

from sparsefric.atomic import write_text
from sparsefric.baselines import idim_ls, output_error_lugre, output_error_multistart
from sparsefric.data import Trajectory
from sparsefric.estimator import SparseFric
from sparsefric.identify import default_sigma0_starts
from sparsefric.model import JointModel
from sparsefric.preprocessing import Prepared, Preprocessor
from sparsefric.simulate import (
    PAPER_SPLIT,
    Controller,
    MoveSpec,
    Sensors,
    simulate,
    trapezoid_moves,
)

DEFAULT_SEED = 2024
OUT = Path(__file__).resolve().parent / "out" / "zoo"
METHODS = ("sparsefric", "oe", "idim", "oracle")
#: The oracle's signals and equation (``output_error_lugre``'s ``differentiation``).
ORACLE_DIFFERENTIATION = "tv-averaged"
#: Largest number of solver steps of the oracle (each costs a Jacobian, one residual per parameter).
ORACLE_MAX_NFEV = 100
PRISMATIC_SCALE = 0.1
#: Largest number of logged samples and duration [s] of one joint's records (all roles).
MAX_SAMPLES = 80_000
MAX_DURATION_S = 80.0
#: Logging rates [Hz]; the control loop runs at max(1 kHz, logging rate).
LOG_RATES_HZ = (250, 500, 1000, 2000, 4000)
#: Recording designs by joint index: (a) paper, (b) random, (c) single, (d) jumps.
DESIGNS = ("paper", "random", "single", "paper", "random", "single", "paper", "random", "single",
           "jumps")
#: Encoder step [rad or m] the PD loop reads (a motor encoder behind a gear).
LOOP_STEP = {"revolute": 2 * np.pi / 2**24, "prismatic": 1e-9}
#: Shortest acceleration ramp [s] of a move.
MIN_RAMP_S = 0.05
#: Largest sub-step [s] as a fraction of the bristle time scale 1/(ω_b·max(1, 2ζ)).
SUBSTEP_FRACTION = 0.2
MAX_SUBSTEPS = 2000
#: Pass criteria: |error| in % (test: ratio to the truth's test error).
PASS = {"static": 3.0, "breakaway": 5.0, "I": 2.0, "sigma0": 25.0, "test": 1.1}
#: Errors [%] beyond which a result is a catastrophe.
CATASTROPHE = {"I": 50.0, "f_c": 50.0, "sigma0": 50.0, "sigma1": 50.0, "static": 50.0,
               "breakaway": 25.0}
#: Pass criteria a warning can name (the test ratio needs the truth).
NAMED_CRITERIA = ("static", "breakaway", "I", "sigma0")
#: What a warning must mention (case-insensitive) to name each catastrophe or failed criterion.
NAMES = {
    "I": r"inertia",
    "f_c": r"coulomb|f_c",
    "sigma0": r"σ0|sigma0|pre-?sliding|bristle|lugre",
    "sigma1": r"σ1|sigma1|pre-?sliding|bristle|lugre|inadmissible",
    "static": r"static curve|stribeck|coulomb|friction curve|velocity range|speed range|"
              r"extrapolat",
    "breakaway": r"break-?away|stribeck|coulomb|velocity range|speed range",
}


# ---------------------------------------------------------------------------- the drawn joint
@dataclass(frozen=True)
class Record:
    """One recorded file: back-and-forth moves at ``velocities`` [rad/s or m/s].

    ``offsets`` [rad, × scale for prismatic] shift each move's range; ``joined`` records are
    simulated move by move and concatenated (q jumps between them), the others run as one
    continuous reference.
    """

    name: str
    velocities: tuple[float, ...]
    offsets: tuple[float, ...]
    joined: bool = False


@dataclass(frozen=True)
class JointSpec:
    """Everything drawn for one joint: truth, sensors, rates and recording design."""

    index: int
    seed: int
    truth: JointModel
    design: str
    records: dict[str, tuple[Record, ...]]
    log_hz: int
    encoder_step: float  #: [rad or m]
    position_noise: float  #: [rad or m]
    noise_fraction: float  #: torque noise / peak torque
    torque_noise: float  #: [N·m or N]
    acceleration: float  #: fast-move acceleration [rad/s² or m/s²] (slow moves: half)
    bandwidth_hz: float
    substeps: int
    max_pass_s: float
    dwell_s: float
    sensor_seed: int
    deflection: float  #: drawn pre-sliding deflection z_ss [rad or m]
    zeta: float  #: drawn bristle damping ratio
    redraws: int = 0  #: friction redraws against stick-slip

    @property
    def scale(self) -> float:
        """Length scale of the moves (0.1 for prismatic axes)."""
        return PRISMATIC_SCALE if self.truth.axis == "prismatic" else 1.0

    @property
    def control_period(self) -> float:
        """Control (simulation) period [s]."""
        return 1.0 / max(1000, self.log_hz)

    @property
    def log_every(self) -> int:
        """Control samples per logged sample."""
        return max(1, round(1000 / self.log_hz))

    def controller(self) -> Controller:
        """The PD loop of the joint."""
        return Controller(period=self.control_period, bandwidth_hz=self.bandwidth_hz)

    def summary(self) -> dict[str, object]:
        """One flat row describing the joint (for tables)."""
        m = self.truth
        return {"joint": self.index, "axis": m.axis[:3], "design": self.design,
                "I": m.inertia, "f_c": m.coulomb, "f_s/f_c": m.g0 / m.coulomb,
                "Ω_s": m.stribeck_velocity if m.stribeck else float("nan"),
                "δ": "/".join(f"{d:.2g}" for d, _ in m.stribeck) or "–",
                "viscous": "".join(f"c{p}" for p, _ in m.viscous),
                "σ0": m.sigma0, "ζ": self.zeta, "noise %": 100 * self.noise_fraction,
                "Hz": self.log_hz, "enc": _encoder_label(self)}


def _encoder_label(spec: JointSpec) -> str:
    if spec.truth.axis == "prismatic":
        return f"{spec.encoder_step:.0e} m"
    return f"{np.log2(2 * np.pi / spec.encoder_step):.0f} bit"


def _loguniform(rng: np.random.Generator, lo: float, hi: float) -> float:
    return float(np.exp(rng.uniform(np.log(lo), np.log(hi))))


def _round2(v: float) -> float:
    """``v`` rounded to two significant digits (a practitioner's speed)."""
    return float(f"{v:.2g}")


def draw_stribeck(rng: np.random.Generator, fc: float, k: float
                  ) -> tuple[float, tuple[tuple[float, float], ...]]:
    """Ω_s [rad/s × k] and the Stribeck terms ((δ, A [N·m]), …) of a joint with Coulomb ``fc``."""
    n = int(rng.choice(3, p=[0.15, 0.6, 0.25]))
    omega = k * _loguniform(rng, 0.005, 0.5)
    amplitude = (rng.uniform(1.05, 2.5) - 1.0) * fc
    if n == 0:
        return omega, ()
    if n == 1:
        return omega, ((round(rng.uniform(0.5, 3.0), 2), amplitude),)
    share = rng.uniform(0.3, 0.7)
    return omega, ((round(rng.uniform(0.5, 1.25), 2), share * amplitude),
                   (round(rng.uniform(1.75, 3.0), 2), (1 - share) * amplitude))


def draw_viscous(rng: np.random.Generator, fc: float, k: float) -> tuple[tuple[int, float], ...]:
    """Viscous terms ((p, c_p), …): c1, an odd series c1, c3, or a mixed one c1, c2, c3."""
    v_ref = 2.0 * k
    c1 = _loguniform(rng, 0.05, 2.0) * fc / v_ref
    kind = rng.choice(["c1", "odd", "mixed"], p=[0.55, 0.3, 0.15])
    c3 = _loguniform(rng, 0.1, 1.0) * c1 / v_ref**2
    c2 = rng.choice([-1.0, 1.0]) * _loguniform(rng, 0.05, 0.25) * c1 / v_ref
    return {"c1": ((1, c1),), "odd": ((1, c1), (3, c3)),
            "mixed": ((1, c1), (2, c2), (3, c3))}[str(kind)]


def bristle(g0: float, inertia: float, axis: str, deflection: float, zeta: float
            ) -> tuple[float, float]:
    """σ0 = g(0)/z_ss [N·m/rad or N/m] (clipped to the axis's range) and σ1 = 2ζ√(σ0 I)."""
    bounds = (1e3, 1e8) if axis == "prismatic" else (1e2, 1e6)
    sigma0 = float(np.clip(g0 / deflection, *bounds))
    return sigma0, float(2.0 * zeta * np.sqrt(sigma0 * inertia))


def draw_bristle(rng: np.random.Generator, axis: str) -> tuple[float, float]:
    """Pre-sliding deflection z_ss [rad or m] and bristle damping ratio ζ."""
    deflection = (_loguniform(rng, 2e-6, 2e-4) if axis == "prismatic"
                  else _loguniform(rng, 5e-5, 2e-2))
    return deflection, _loguniform(rng, 0.05, 3.0)


def draw_rigid(rng: np.random.Generator, axis: str, g0: float) -> dict[str, float]:
    """Gravity a_c, a_s [N·m] (revolute, 80 %) or the offset o [N] (prismatic)."""
    if axis == "prismatic":
        return {"offset": rng.uniform(-0.3, 0.3) * g0}
    size = _loguniform(rng, 0.3, 5.0) * g0 if rng.uniform() < 0.8 else 0.0
    angle = rng.uniform(0, 2 * np.pi)
    return {"gravity_cos": size * np.cos(angle), "gravity_sin": size * np.sin(angle)}


def draw_truth(rng: np.random.Generator, axis: str) -> tuple[JointModel, float, float]:
    """The true joint, its drawn pre-sliding deflection and bristle damping ratio."""
    k = PRISMATIC_SCALE if axis == "prismatic" else 1.0
    inertia = _loguniform(rng, 0.01, 50.0)
    fc = float(np.clip(12.0 * (inertia / 1.5) ** 0.4 * 10 ** rng.normal(0, 0.35), 0.5, 100.0))
    omega, stribeck = draw_stribeck(rng, fc, k)
    g0 = fc + sum(a for _, a in stribeck)
    deflection, zeta = draw_bristle(rng, axis)
    sigma0, sigma1 = bristle(g0, inertia, axis, deflection, zeta)
    truth = JointModel(axis=axis, inertia=inertia, kind="lugre", coulomb=fc,
                       stribeck_velocity=omega, stribeck=stribeck,
                       viscous=draw_viscous(rng, fc, k), sigma0=sigma0, sigma1=sigma1,
                       extra={"provenance": "benchmarks/zoo.py"}, **draw_rigid(rng, axis, g0))
    return truth, deflection, zeta


def _speeds(rng: np.random.Generator, n: int, k: float) -> list[float]:
    """``n`` log-spread, jittered, two-digit speeds between a slow and a fast limit [× k]."""
    lo, hi = _loguniform(rng, 0.01, 0.15), _loguniform(rng, 0.8, 2.5)
    grid = np.geomspace(lo, hi, n) * np.exp(rng.uniform(-0.15, 0.15, n))
    return [k * _round2(v) for v in grid]


def _files(role: str, velocities: Sequence[float]) -> tuple[Record, ...]:
    """One file per velocity."""
    return tuple(Record(f"{role}_v{v:.3g}", (float(v),), (0.0,)) for v in velocities)


def draw_design(rng: np.random.Generator, design: str, k: float) -> dict[str, tuple[Record, ...]]:
    """The records of each role for recording design ``design`` (speeds × the length scale k)."""
    if design == "paper":
        return {role: _files(role, [k * v for v in vs]) for role, vs in PAPER_SPLIT.items()}
    if design == "random":
        counts = {"train": int(rng.integers(2, 4)), "validate": int(rng.integers(1, 3)),
                  "test": int(rng.integers(1, 3))}
        speeds = list(rng.permutation(_speeds(rng, sum(counts.values()), k)))
        out, start = {}, 0
        for role, n in counts.items():
            out[role] = _files(role, sorted(speeds[start:start + n]))
            start += n
        return out
    n_train = int(rng.integers(3, 6) if design == "single" else rng.integers(2, 5))
    speeds = np.array(_speeds(rng, n_train + 3, k))
    order = rng.permutation(len(speeds))
    train_v = tuple(float(v) for v in speeds[order[:n_train]])
    rest = sorted(float(v) for v in speeds[order[n_train:]])
    jumps = design == "jumps"
    offsets = tuple(np.cumsum(rng.uniform(0.2, 2.0, n_train) * rng.choice([-1, 1], n_train))
                    if jumps else np.zeros(n_train))
    train = Record("train_file", train_v, tuple(float(o) for o in offsets), joined=jumps)
    validate = _files("validate", rest[:1]) if rng.uniform() < 0.5 else ()
    return {"train": (train,), "validate": validate, "test": _files("test", rest[1:])}


def move_reference(spec: JointSpec, velocity: float, offset: float, period: float
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """q_ref [rad], q̇_ref [rad/s], q̈_ref [rad/s²] of one back-and-forth move at ``velocity``.

    The acceleration is lowered where the ramp to ``velocity`` would last less than
    :data:`MIN_RAMP_S` (a ramp of a sample or two misses the target speed by up to 100 %).
    """
    acc = min(spec.acceleration, velocity / (spec.scale * MIN_RAMP_S))
    move = MoveSpec(velocity, q_low=-0.6 + offset, q_high=0.8 + offset,
                    max_pass_s=spec.max_pass_s, slow_acceleration=0.5 * acc,
                    fast_acceleration=acc, scale=spec.scale)
    q_low, q_high, acc, cycles = move.geometry()
    _, q, qd, qdd = trapezoid_moves(q_low, q_high, velocity, acc, spec.dwell_s, cycles, period)
    return q, qd, qdd


def references(spec: JointSpec, record: Record, period: float
               ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """References of the separately simulated parts of ``record`` (one unless joined)."""
    moves = [move_reference(spec, v, o, period)
             for v, o in zip(record.velocities, record.offsets, strict=True)]
    if record.joined or len(moves) == 1:
        return moves
    q_parts, end = [], moves[0][0][0]
    for q, _, _ in moves:  # chain the moves continuously in q
        q_parts.append(q - q[0] + end)
        end = q_parts[-1][-1]
    return [(np.concatenate(q_parts), np.concatenate([m[1] for m in moves]),
             np.concatenate([m[2] for m in moves]))]


def _all_references(spec: JointSpec, period: float):
    return [ref for recs in spec.records.values() for r in recs
            for ref in references(spec, r, period)]


def duration(spec: JointSpec) -> float:
    """Total duration [s] of the joint's records."""
    period = 0.005
    return sum(len(q) for q, _, _ in _all_references(spec, period)) * period


def fit_budget(spec: JointSpec) -> JointSpec:
    """Shorten passes and dwells until the records fit :data:`MAX_SAMPLES` and
    :data:`MAX_DURATION_S`."""
    limit = min(MAX_DURATION_S, MAX_SAMPLES / spec.log_hz)
    for f in np.geomspace(1.0, 0.05, 16):
        trial = replace(spec, max_pass_s=max(7.0 * f, 0.4), dwell_s=max(0.5 * f, 0.15))
        if duration(trial) <= limit:
            return trial
    return trial


def peak_torque(spec: JointSpec) -> float:
    """Peak |τ| [N·m] of the truth along the reference moves (rigid body + static friction)."""
    m = spec.truth
    return max(float(np.max(np.abs(m.rigid_body_torque(q, qdd) + m.static_friction(qd))))
               for q, qd, qdd in _all_references(spec, spec.control_period))


def steady_speeds(spec: JointSpec, roles: Sequence[str] = ("train", "validate")) -> list[float]:
    """Cruise speeds [rad/s] actually reached by the moves of ``roles``."""
    return [float(np.max(np.abs(move_reference(spec, v, o, spec.control_period)[1])))
            for role in roles for r in spec.records[role]
            for v, o in zip(r.velocities, r.offsets, strict=True)]


def stick_slip_free(spec: JointSpec) -> bool:
    """Whether the loop keeps ≥ 25 % of its damping k_d at every steady speed, both ways
    (a static curve falling faster than k_d cancels it: stick-slip)."""
    _, kd = spec.controller().gains(spec.truth.inertia)
    v = np.array(steady_speeds(spec, ("train", "validate", "test")))
    v = np.concatenate([v, -v])
    slope = (spec.truth.static_friction(v * 1.001) - spec.truth.static_friction(v * 0.999)) / \
        (0.002 * v)
    return bool(np.all(kd + slope >= 0.25 * kd))


def _substeps(truth: JointModel, zeta: float, period: float) -> int:
    omega_b = np.sqrt(truth.sigma0 / truth.inertia)
    h = SUBSTEP_FRACTION / (omega_b * max(1.0, 2.0 * zeta))
    return int(np.clip(np.ceil(period / h), 10, MAX_SUBSTEPS))


def _bandwidth(truth: JointModel, k: float) -> float:
    """Loop bandwidth [Hz]: 15 Hz, up to 25 Hz to keep the static lag g(0)/k_p ≤ 2 mrad × k."""
    need = np.sqrt(truth.g0 / (truth.inertia * 2e-3 * k)) / (2 * np.pi)
    return float(np.clip(need, 15.0, 25.0))


def draw_joint(seed: int, index: int) -> JointSpec:
    """Joint ``index`` of ``seed``: truth, sensors, rates and records (see the module doc)."""
    rng = np.random.default_rng([seed, index])
    axis = "prismatic" if index % 4 == 3 else "revolute"
    k = PRISMATIC_SCALE if axis == "prismatic" else 1.0
    truth, deflection, zeta = draw_truth(rng, axis)
    design = DESIGNS[index % len(DESIGNS)]
    records = draw_design(rng, design, k)
    log_hz = int(rng.choice(LOG_RATES_HZ))
    step = (_loguniform(rng, 1e-8, 1e-5) if axis == "prismatic"
            else 2 * np.pi / 2 ** int(rng.integers(12, 25)))
    spec = JointSpec(
        index=index, seed=seed, truth=truth, design=design, records=records, log_hz=log_hz,
        encoder_step=step, position_noise=step * _loguniform(rng, 0.05, 1.0),
        noise_fraction=_loguniform(rng, 0.003, 0.05), torque_noise=0.0,
        acceleration=float(np.clip(_loguniform(rng, 0.3, 2.0) * truth.g0 / truth.inertia,
                                   4.0 * k, 30.0 * k)) / k,
        bandwidth_hz=_bandwidth(truth, k), substeps=0, max_pass_s=7.0, dwell_s=0.5,
        sensor_seed=int(rng.integers(2**31)), deflection=deflection, zeta=zeta)
    spec = avoid_stick_slip(fit_budget(spec), rng)
    period = spec.control_period
    return replace(spec, torque_noise=spec.noise_fraction * peak_torque(spec),
                   substeps=_substeps(spec.truth, spec.zeta, period))


def avoid_stick_slip(spec: JointSpec, rng: np.random.Generator, tries: int = 30) -> JointSpec:
    """Redraw the Stribeck terms (then halve them) until :func:`stick_slip_free`."""
    k = spec.scale
    for n in range(tries + 1):
        if stick_slip_free(spec):
            return replace(spec, redraws=n)
        fc = spec.truth.coulomb
        omega, stribeck = draw_stribeck(rng, fc, k)
        if n >= tries // 2:
            stribeck = tuple((d, a * 0.5 ** (n - tries // 2 + 1)) for d, a in stribeck)
        truth = spec.truth.with_(stribeck_velocity=omega, stribeck=stribeck)
        s0, s1 = bristle(truth.g0, truth.inertia, truth.axis, spec.deflection, spec.zeta)
        spec = replace(spec, truth=truth.with_(sigma0=s0, sigma1=s1),
                       bandwidth_hz=_bandwidth(truth, k))
    return replace(spec, redraws=tries)


# ---------------------------------------------------------------------------- simulation
@dataclass
class JointData:
    """The simulated records of one joint, by role, and how well the loop tracked."""

    spec: JointSpec
    train: list[Trajectory]
    validate: list[Trajectory]
    test: list[Trajectory]
    tracking: float  #: worst :func:`tracking_error` of a record

    @property
    def samples(self) -> int:
        """Logged samples of all roles."""
        return sum(len(t) for t in self.train + self.validate + self.test)


def _subsample(traj: Trajectory, every: int, qd_ref: np.ndarray, qdd_ref: np.ndarray
               ) -> Trajectory:
    truth = {**traj.truth, "qd_ref": qd_ref, "qdd_ref": qdd_ref}
    return traj.with_(t=traj.t[::every], q=traj.q[::every], tau=traj.tau[::every],
                      truth={key: v[::every] for key, v in truth.items()})


def _join(parts: list[Trajectory], name: str) -> Trajectory:
    """Concatenate records into one file (uniform time; q and τ jump between records)."""
    if len(parts) == 1:
        return parts[0].with_(name=name)
    dt = parts[0].dt
    n = sum(len(p) for p in parts)
    cat = np.concatenate
    return Trajectory(t=np.arange(n) * dt, q=cat([p.q for p in parts]),
                      tau=cat([p.tau for p in parts]), name=name,
                      truth={key: cat([p.truth[key] for p in parts]) for key in parts[0].truth})


def with_noise_seed(spec: JointSpec, noise_seed: int) -> JointSpec:
    """``spec`` with its sensor noise drawn anew: noise seed 0 is the drawn one; any other
    simulates the same joint, records and sensors with another realisation of the torque and
    position noise. A fix tuned on one joint should hold on its other realisations; a result
    that holds on one only turned on the noise."""
    if noise_seed == 0:
        return spec
    rng = np.random.default_rng([spec.sensor_seed, noise_seed])
    return replace(spec, sensor_seed=int(rng.integers(2**31)))


def logged_position(spec: JointSpec, q_true: np.ndarray, seed: int) -> np.ndarray:
    """The logged position [rad or m]: q with Gaussian noise, rounded to the encoder step."""
    noisy = q_true + np.random.default_rng(seed).normal(0.0, spec.position_noise, len(q_true))
    return np.round(noisy / spec.encoder_step) * spec.encoder_step


def simulate_record(spec: JointSpec, record: Record, seed: int) -> Trajectory:
    """Simulate, log and (if joined) concatenate the parts of one record.

    The loop reads a fine, noise-free motor-side encoder (:data:`LOOP_STEP`); the log holds
    the joint encoder of the spec (a 12-bit joint encoder in the loop makes a stiff PD loop
    hunt by hundreds of N·m).
    """
    parts = []
    loop_step = LOOP_STEP[spec.truth.axis]
    for j, (q, qd, qdd) in enumerate(references(spec, record, spec.control_period)):
        ff = spec.truth.with_(kind="static").rigid_body_torque(q, qdd)
        sensors = Sensors(loop_step, 0.0, spec.torque_noise, seed=seed + j)
        traj = simulate(spec.truth, tau_ff=ff, q_ref=q, qd_ref=qd, controller=spec.controller(),
                        sensors=sensors, substeps=spec.substeps, name=record.name)
        traj = traj.with_(q=logged_position(spec, traj.truth["q_true"], seed + j + 50))
        parts.append(_subsample(traj, spec.log_every, qd, qdd))
    return _join(parts, record.name)


def tracking_error(traj: Trajectory) -> float:
    """Median of |q̇_true − q̇_ref|/|q̇_ref| where the reference cruises: steady tracking (a
    hunting loop or stick-slip), not the one-off lag while a slow move builds up break-away."""
    ref, qd = traj.truth["qd_ref"], traj.truth["qd_true"]
    cruise = (traj.truth["qdd_ref"] == 0) & (ref != 0)
    if not cruise.any():
        return float("nan")
    return float(np.median(np.abs(qd - ref)[cruise] / np.abs(ref[cruise])))


def simulate_joint(spec: JointSpec) -> JointData:
    """Every record of ``spec``, with the truth in ``Trajectory.truth``."""
    roles = {}
    for i, (role, recs) in enumerate(spec.records.items()):
        roles[role] = [simulate_record(spec, r, spec.sensor_seed + 1000 * i + 100 * j)
                       for j, r in enumerate(recs)]
    worst = max(tracking_error(t) for ts in roles.values() for t in ts)
    return JointData(spec, roles["train"], roles["validate"], roles["test"], worst)


# ---------------------------------------------------------------------------- methods
@dataclass
class Fit:
    """One method's result on one joint."""

    method: str
    model: JointModel | None = None
    wall: float = float("nan")
    error: str = ""
    warnings: list[str] = field(default_factory=list)
    extra: dict = field(default_factory=dict)


def timed(method: str, fn: Callable[[], tuple[JointModel, list[str], dict]]) -> Fit:
    """Run ``fn`` (→ model, warnings, extra) and time it; an exception is a failed fit."""
    t0 = time.perf_counter()
    try:
        model, warnings, extra = fn()
    except Exception as exc:  # noqa: BLE001 — a failing method is a result, not a crash
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return Fit(method, wall=time.perf_counter() - t0,
                   error=f"{type(exc).__name__}: {text}"[:200])
    return Fit(method, model, time.perf_counter() - t0, "", list(warnings), extra)


def sparsefric_details(est: SparseFric) -> dict:
    """What sparsefric chose on the way, for re-analysis without a rerun."""
    result = est.result_
    prep = result.preprocessing
    keep = [c for c in ("trajectory", "regularization", "noise_std", "tau_regularization",
                        "tau_noise_std") if c in prep.columns]
    runs = [{"sigma0_init": r.sigma0_init, "sigma0": float(r.params.sigma0),
             "sigma1": float(r.params.sigma1), "omega_s": float(r.params.stribeck_velocity),
             "error": r.error, "converged": r.converged, "admissible": r.admissible,
             "reason": r.reason} for r in (result.lugre.runs if result.lugre else [])]
    lugre = est.lugre_model_.to_dict() if est.lugre_model_ is not None else None
    return {"differentiation": prep[keep].to_dict("records"), "window": result.window,
            "step1_terms": est.terms_.loc[est.terms_.active, ["term", "coefficient"]]
            .to_dict("records"), "static_model": est.static_model_.to_dict(),
            "lugre_model": lugre, "runs": runs, "converged": est.converged_,
            "reason": est.convergence_reason_, "refined": result.refined,
            "kind": est.model_.kind}


def fit_sparsefric(data: JointData) -> Fit:
    """``SparseFric(axis).fit(train, validate=val)`` with the defaults."""
    def run() -> tuple[JointModel, list[str], dict]:
        est = SparseFric(axis=data.spec.truth.axis).fit(data.train,
                                                        validate=data.validate or None)
        return est.model_, est.warnings_, sparsefric_details(est)
    return timed("sparsefric", run)


def baseline_cutoff(spec: JointSpec) -> float:
    """Butterworth cutoff [Hz] of IDIM-LS and OE: 20 Hz or above the bristle resonance
    √(σ0/I)/2π (run.py's choice), at most 0.4 × Nyquist."""
    resonance = np.sqrt(spec.truth.sigma0 / spec.truth.inertia) / (2 * np.pi)
    return float(min(max(20.0, 1.25 * resonance), 0.2 * spec.log_hz))


def fit_idim(data: JointData) -> Fit:
    """IDIM-LS as in run.py: Coulomb + q̇ + q̇³, rows below 0.05 rad/s (× scale) dropped — or
    below half the slowest training speed, where that is lower (else no row may be left)."""
    spec = data.spec
    min_velocity = min(0.05 * spec.scale, 0.5 * min(steady_speeds(spec, ("train",))))

    def run() -> tuple[JointModel, list[str], dict]:
        m = idim_ls(data.train, spec.truth.axis, cutoff_hz=baseline_cutoff(spec),
                    decimate=max(1, round(spec.log_hz / 100)), viscous_powers=(1, 3),
                    min_velocity=min_velocity)
        return m, [], {}
    return timed("idim", run)


def fit_oe(data: JointData, idim: Fit) -> Fit:
    """Output-error LuGre from each of ``default_sigma0_starts`` (IDIM-LS start), best kept;
    the wall time excludes IDIM-LS."""
    if idim.model is None:
        return Fit("oe", error=f"no IDIM-LS start ({idim.error})")
    spec, start = data.spec, idim.model

    def run() -> tuple[JointModel, list[str], dict]:
        starts = default_sigma0_starts(start.g0, spec.truth.axis)
        m = output_error_multistart(data.train, spec.truth.axis, start, starts,
                                    cutoff_hz=baseline_cutoff(spec))
        return m, [], {"output_error": m.extra.get("output_error", {})}
    return timed("oe", run)


def fit_oracle(data: JointData) -> Fit:
    """The output-error fit started at the truth, in the truth's structure (δ free), on the
    training and validation records together, with sparsefric's TV-differentiated signals and
    the measured torque, by the sample-averaged equation (:data:`ORACLE_DIFFERENTIATION`): the
    optimum of the prediction error nearest the truth on these data (at most
    :data:`ORACLE_MAX_NFEV` solver steps)."""
    truth = data.spec.truth

    def run() -> tuple[JointModel, list[str], dict]:
        m = output_error_lugre(data.train + data.validate, truth.axis, truth,
                               differentiation=ORACLE_DIFFERENTIATION, complete_start=False,
                               max_nfev=ORACLE_MAX_NFEV)
        return m, [], {"output_error": m.extra.get("output_error", {})}
    return timed("oracle", run)


def run_methods(data: JointData, methods: Sequence[str]) -> list[Fit]:
    """The requested methods on one joint (IDIM-LS also runs as OE's start)."""
    fits = []
    if "sparsefric" in methods:
        fits.append(fit_sparsefric(data))
    idim = fit_idim(data) if {"idim", "oe"} & set(methods) else None
    if "idim" in methods:
        fits.append(idim)
    if "oe" in methods:
        fits.append(fit_oe(data, idim))
    if "oracle" in methods:
        fits.append(fit_oracle(data))
    return fits


# ---------------------------------------------------------------------------- scores
def _pct(est: float, true: float) -> float:
    return 100.0 * (est / true - 1.0) if true else float("nan")


def static_rms(model: JointModel, truth: JointModel, speeds: Sequence[float]) -> float:
    """RMS relative error [%] of the static curve at 200 log-spaced speeds each way over the
    range of ``speeds`` [rad/s]."""
    v = np.geomspace(min(speeds), max(speeds), 200)
    v = np.concatenate([v, -v])
    ref = truth.static_friction(v)
    return float(100 * np.sqrt(np.mean(((model.static_friction(v) - ref) / ref) ** 2)))


def reaches_stribeck(data: JointData, min_time_s: float = 0.5) -> bool:
    """Whether the truth slides (bristle within 10 % of its steady deflection) at
    0 < |q̇| ≤ 2 Ω_s for ``min_time_s`` in training and validation together."""
    truth = data.spec.truth
    coulomb_stribeck = truth.with_(viscous=())
    total = 0.0
    for traj in data.train + data.validate:
        qd, z = traj.truth["qd_true"], traj.truth["z_true"]
        z_ss = coulomb_stribeck.static_friction(qd) / truth.sigma0
        sliding = (np.abs(z - z_ss) <= 0.1 * np.abs(z_ss)) & (qd != 0)
        total += np.count_nonzero(sliding & (np.abs(qd) <= 2 * truth.stribeck_velocity)) * \
            traj.dt
    return total >= min_time_s


def named(item: str, warnings: Sequence[str]) -> bool:
    """Whether a warning names the catastrophe ``item`` (pattern :data:`NAMES`)."""
    return any(re.search(NAMES[item], w, flags=re.IGNORECASE) for w in warnings)


def catastrophes(errors: dict[str, float], checked: Sequence[str]) -> list[str]:
    """The items of ``checked`` whose |error| exceeds :data:`CATASTROPHE`."""
    return [k for k in checked if np.isfinite(errors.get(k, np.nan))
            and abs(errors[k]) > CATASTROPHE[k]]


def unnamed_failures(ok: dict[str, bool], warnings: Sequence[str]) -> list[str]:
    """The failed pass criteria of :data:`NAMED_CRITERIA` that no warning names: the failures a
    user is not told about (the test ratio needs the truth, so no tool can name it)."""
    return [k for k in NAMED_CRITERIA if not ok[k] and not named(k, warnings)]


def checked_items(fit: Fit) -> list[str]:
    """Catastrophe items the method's model class can get wrong (IDIM-LS: no LuGre, no
    Stribeck term; a LuGre result of any method, the oracle's included: all)."""
    if fit.method == "idim":
        return ["I", "f_c", "static"]
    if fit.model is not None and fit.model.kind != "lugre":
        return ["I", "f_c", "static", "breakaway"]
    return list(CATASTROPHE)


def passes(errors: dict[str, float], reached: bool) -> dict[str, bool]:
    """Each pass criterion (break-away only where the Stribeck region is reached)."""
    out = {k: bool(abs(errors[k]) <= PASS[k]) for k in ("static", "I", "sigma0")}
    out["breakaway"] = bool(abs(errors["breakaway"]) <= PASS["breakaway"]) if reached else True
    out["test"] = bool(errors["test_ratio"] <= PASS["test"])
    return out


def score(fit: Fit, data: JointData, scorer: Prepared, truth_test: float,
          reached: bool) -> dict[str, object]:
    """Scores of one fit (see the module doc); NaN where the model lacks a parameter."""
    truth, speeds = data.spec.truth, steady_speeds(data.spec)
    row: dict[str, object] = {"joint": data.spec.index, "method": fit.method,
                              "wall_s": fit.wall, "error": fit.error,
                              "warnings": len(fit.warnings), "reached": reached}
    if fit.model is None:
        return {**row, "pass": False, "silent": [], "unnamed": []}
    m, v_max = fit.model, 1.2 * max(speeds)
    lugre = m.kind == "lugre"
    errors = {"static": static_rms(m, truth, speeds),
              "breakaway": _pct(m.breakaway_torque(v_max=v_max),
                                truth.breakaway_torque(v_max=v_max)),
              "I": _pct(m.inertia, truth.inertia), "f_c": _pct(m.coulomb, truth.coulomb),
              "sigma0": _pct(m.sigma0, truth.sigma0) if lugre else float("nan"),
              "sigma1": _pct(m.sigma1, truth.sigma1) if lugre else float("nan")}
    try:
        errors["test_ratio"] = scorer.relative_error(m) / truth_test
    except Exception:  # noqa: BLE001 — an unscorable model fails the test criterion
        errors["test_ratio"] = float("nan")
    ok = passes(errors, reached)
    bad = catastrophes(errors, checked_items(fit))
    return {**row, **errors, "kind": m.kind, **{f"ok_{k}": v for k, v in ok.items()},
            "pass": all(ok.values()), "catastrophes": bad,
            "silent": [k for k in bad if not named(k, fit.warnings)],
            "unnamed": unnamed_failures(ok, fit.warnings)}


# ---------------------------------------------------------------------------- one joint
def run_joint(spec: JointSpec, methods: Sequence[str]) -> tuple[list[dict], dict]:
    """Simulate, fit and score one joint; returns the score rows and the JSON record."""
    t0 = time.perf_counter()
    data = simulate_joint(spec)
    t_sim = time.perf_counter() - t0
    fits = run_methods(data, methods)
    scorer = Preprocessor().prepare(data.test)  # the same test data for every model
    truth_test = scorer.relative_error(spec.truth)
    reached = reaches_stribeck(data)
    rows = [score(f, data, scorer, truth_test, reached) for f in fits]
    record = {"spec": spec_dict(spec), "samples": data.samples, "simulation_s": t_sim,
              "tracking": data.tracking, "truth_test_error": truth_test,
              "steady_speeds": steady_speeds(spec), "reaches_stribeck": reached,
              "fits": [{"method": f.method, "model": f.model.to_dict() if f.model else None,
                        "wall_s": f.wall, "error": f.error, "warnings": f.warnings,
                        "details": f.extra, "scores": r} for f, r in zip(fits, rows, strict=True)]}
    return rows, record


def spec_dict(spec: JointSpec) -> dict:
    """The drawn joint as JSON-able data (the truth as a model-file dict)."""
    out = {k: v for k, v in asdict(spec).items() if k not in ("truth", "records")}
    out["truth"] = spec.truth.to_dict()
    out["records"] = {role: [asdict(r) for r in recs] for role, recs in spec.records.items()}
    out.update(control_period=spec.control_period, log_every=spec.log_every)
    return out


def _jsonable(obj: object) -> object:
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not np.isfinite(obj):
        return None
    return obj


def progress_line(spec: JointSpec, rows: list[dict], record: dict) -> str:
    """One line per joint: the drawn joint and each method's headline scores."""
    s = spec.summary()
    head = (f"#{spec.index:02d} {s['axis']} {s['design']:6s} I={s['I']:.3g} f_c={s['f_c']:.3g} "
            f"fs/fc={s['f_s/f_c']:.2f} Ωs={s['Ω_s']:.3g} δ={s['δ']} σ0={s['σ0']:.3g} "
            f"noise={s['noise %']:.1f}% {s['Hz']}Hz {s['enc']} n={record['samples']} "
            f"track={100 * record['tracking']:.1f}% "
            f"reach={'y' if record['reaches_stribeck'] else 'n'}")
    parts = [head]
    for r in rows:
        if r.get("error"):
            parts.append(f"    {r['method']:10s} FAILED {r['error']}")
            continue
        parts.append(f"    {r['method']:10s} static {r['static']:6.2f}% "
                     f"brk {r['breakaway']:+7.1f}% I {r['I']:+7.1f}% "
                     f"σ0 {r['sigma0']:+8.1f}% σ1 {r['sigma1']:+8.1f}% "
                     f"test× {r['test_ratio']:.3f} {'PASS' if r['pass'] else 'fail'} "
                     f"silent={','.join(r['silent']) or '-'} warn={r['warnings']} "
                     f"{r['wall_s']:.1f}s")
    return "\n".join(parts)


# ---------------------------------------------------------------------------- tables
def _fmt(v: object, digits: int = 3) -> str:
    if isinstance(v, float):
        return "–" if not np.isfinite(v) else f"{v:.{digits}g}"
    return str(v)


def joints_table(specs: Sequence[JointSpec]) -> pd.DataFrame:
    """The drawn joints, one row each."""
    return pd.DataFrame([{k: _fmt(v) for k, v in s.summary().items()} for s in specs])


def results_table(rows: Sequence[dict]) -> pd.DataFrame:
    """Scores per joint and method."""
    out = []
    for r in rows:
        rec = {"joint": r["joint"], "method": r["method"]}
        for key, label in (("static", "static %"), ("breakaway", "brk %"), ("I", "I %"),
                           ("sigma0", "σ0 %"), ("sigma1", "σ1 %"), ("test_ratio", "test ×")):
            rec[label] = _fmt(r.get(key, float("nan")))
        rec["reach"] = "y" if r["reached"] else "n"
        rec["pass"] = "FAILED" if r["error"] else ("yes" if r["pass"] else "no")
        rec["silent"] = ",".join(r["silent"]) or "–"
        rec["unnamed"] = ",".join(r.get("unnamed", [])) or "–"
        rec["warn"] = r["warnings"]
        rec["wall s"] = _fmt(r["wall_s"])
        out.append(rec)
    return pd.DataFrame(out)


def pass_rates(rows: Sequence[dict]) -> pd.DataFrame:
    """Per method: joints, pass rate, each criterion's pass rate, silent catastrophes (all,
    and those with an item other than σ1, the least identifiable parameter), median wall."""
    df = pd.DataFrame(rows)
    out = []
    for method, g in df.groupby("method", sort=False):
        ok = g[g["error"] == ""]
        rec = {"method": method, "joints": len(g), "failed runs": len(g) - len(ok),
               "pass": f"{int(g['pass'].sum())}/{len(g)}"}
        for k in ("static", "breakaway", "I", "sigma0", "test"):
            pool = ok[ok["reached"]] if k == "breakaway" else ok
            n = int(pool[f"ok_{k}"].sum()) if f"ok_{k}" in pool else 0
            rec[f"{k} ok"] = f"{n}/{len(pool)}"
        failed = ok[~ok["pass"].astype(bool)]
        rec["failed, every failure named"] = int(sum(not u for u in failed["unnamed"]))
        rec["silent catastrophes"] = int(sum(bool(s) for s in g["silent"]))
        rec["… not only σ1"] = int(sum(bool(set(s) - {"sigma1"}) for s in g["silent"]))
        rec["median wall s"] = _fmt(float(g["wall_s"].median()))
        out.append(rec)
    return pd.DataFrame(out)


#: The pass criteria, in the order of the tables.
CRITERIA = ("static", "breakaway", "I", "sigma0", "test")


def failed_criteria(row: dict) -> list[str]:
    """The pass criteria of :data:`CRITERIA` a score row fails (every one for a failed run)."""
    if row.get("error"):
        return list(CRITERIA)
    return [k for k in CRITERIA if not row.get(f"ok_{k}", False)]


def _pairs(rows: Sequence[dict]) -> list[tuple[dict, dict]]:
    """(sparsefric row, oracle row) of every joint where both methods ran, by joint."""
    by = {(r["joint"], r["method"]): r for r in rows}
    return [(by[j, "sparsefric"], by[j, "oracle"]) for j in sorted({r["joint"] for r in rows})
            if (j, "sparsefric") in by and (j, "oracle") in by]


def oracle_table(rows: Sequence[dict]) -> pd.DataFrame:
    """Per joint where sparsefric and the oracle both ran: the criteria each fails, those
    sparsefric fails alone (the tool's own faults) and the oracle's errors [% of the truth]."""
    out = []
    for own, oracle in _pairs(rows):
        mine, its = failed_criteria(own), failed_criteria(oracle)
        rec = {"joint": own["joint"], "reach": "y" if own["reached"] else "n",
               "sparsefric fails": ",".join(mine) or "–",
               "oracle fails": "FAILED" if oracle["error"] else ",".join(its) or "–",
               "sparsefric only": ",".join(k for k in mine if k not in its) or "–"}
        for key, label in (("static", "static %"), ("breakaway", "brk %"), ("I", "I %"),
                           ("sigma0", "σ0 %"), ("test_ratio", "test ×")):
            value = oracle.get(key)
            rec[f"oracle {label}"] = _fmt(float("nan") if value is None else float(value))
        out.append(rec)
    return pd.DataFrame(out)


def oracle_summary(rows: Sequence[dict]) -> list[str]:
    """Lines comparing sparsefric with the oracle on the joints whose records reach the
    Stribeck region (none unless both ran): the oracle's pass count, sparsefric's passes
    where the oracle passes, and per criterion how many of sparsefric's failures the oracle
    shares (joints where the oracle's run failed left out of the last)."""
    pairs = [(a, b) for a, b in _pairs(rows) if a["reached"]]
    if not pairs:
        return []
    good = [(a, b) for a, b in pairs if b["pass"]]
    ran = [(a, b) for a, b in pairs if not b["error"]]
    shared = []
    for k in CRITERIA:
        fails = [(a, b) for a, b in ran if k in failed_criteria(a)]
        both = sum(k in failed_criteria(b) for _, b in fails)
        shared.append(f"{k} {both}/{len(fails)}")
    lines = [f"- the oracle passes on {len(good)} of the {len(pairs)} joints whose records reach "
             "the Stribeck region",
             f"- sparsefric passes on {sum(bool(a['pass']) for a, _ in good)} of the {len(good)} "
             "reaching joints where the oracle passes",
             "- of sparsefric's failures on reaching joints, per criterion, those the oracle "
             "shares: " + ", ".join(shared)]
    if len(ran) < len(pairs):
        lines.append(f"- the oracle's run failed on {len(pairs) - len(ran)} reaching joints")
    return lines


def write_outputs(out: Path, seed: int, specs: list[JointSpec], rows: list[dict],
                  total_s: float, methods: Sequence[str], noise_seed: int = 0) -> str:
    """``zoo.csv`` and ``zoo.md`` in ``out``; returns the markdown."""
    flat = [{**r, "catastrophes": ",".join(r.get("catastrophes", [])),
             "silent": ",".join(r["silent"]),
             "unnamed": ",".join(r.get("unnamed", []))} for r in rows]
    pd.DataFrame(flat).to_csv(out / "zoo.csv", index=False)
    against = oracle_summary(rows)
    oracle = ["## Against the oracle", "", *against, "", md_table(oracle_table(rows)), ""] \
        if against else []
    text = "\n".join([
        f"# Joint zoo: seed {seed}{f' (noise seed {noise_seed})' if noise_seed else ''}, "
        f"{len(specs)} joints, methods {', '.join(methods)}", "",
        f"- machine: {machine()}", f"- total wall time {total_s:.0f} s", "",
        "## Pass rates", "", md_table(pass_rates(rows)), "", *oracle,
        "## Joints", "", md_table(joints_table(specs)), "",
        "## Scores", "", md_table(results_table(rows)), ""])
    (out / "zoo.md").write_text(text)
    return text


def results_heading(fresh: bool) -> str:
    """The RESULTS.md heading of a zoo run at the fixed seed or at a seed drawn at run time."""
    return "## Joint zoo: " + ("a seed drawn at run time" if fresh else "the fixed seed")


def results_section(seed: int, fresh: bool, rows: list[dict], methods: Sequence[str]) -> str:
    """The RESULTS.md section of a zoo run: pass rates per method, sparsefric's scores."""
    seed_option = f" --seed {seed}" if seed != DEFAULT_SEED else ""
    own = [r for r in rows if r["method"] == "sparsefric"]
    reached = [r for r in own if r["reached"]]
    return "\n".join([
        results_heading(fresh), "",
        f"- seed {seed}, {len({r['joint'] for r in rows})} joints; machine: {machine()}",
        f"- reproduce: `python benchmarks/zoo.py --methods {','.join(methods)}{seed_option} "
        "--results` (the joints and the criteria: the module docstring of benchmarks/zoo.py)",
        f"- sparsefric passes on {sum(r['pass'] for r in reached)} of the {len(reached)} joints "
        "whose records reach the Stribeck region", *oracle_summary(rows), "",
        md_table(pass_rates(rows)), "", "sparsefric per joint (errors in % of the truth):", "",
        md_table(results_table(own).drop(columns=["method"])), ""])


# ---------------------------------------------------------------------------- CLI
def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line (see the module doc)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    which = ap.add_mutually_exclusive_group()
    which.add_argument("--seed", type=int, default=DEFAULT_SEED)
    which.add_argument("--fresh", action="store_true", help="draw a seed now and print it")
    ap.add_argument("--n", type=int, default=40, help="number of joints (0 … n−1)")
    ap.add_argument("--methods", default="sparsefric",
                    help=f"comma-separated subset of {','.join(METHODS)}")
    ap.add_argument("--joints", default="", help="comma-separated joint indices (default all)")
    ap.add_argument("--noise-seed", type=int, default=0,
                    help="re-simulate the joints with other sensor noise (0: the drawn one)")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--results", action="store_true",
                    help="also write the pass rates and scores into benchmarks/RESULTS.md")
    args = ap.parse_args(argv)
    args.methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    if bad := [m for m in args.methods if m not in METHODS]:
        ap.error(f"unknown method(s) {', '.join(bad)}; choose from {', '.join(METHODS)}")
    if args.fresh:
        args.seed = int(np.random.SeedSequence().entropy % 2**31)
    if args.noise_seed and args.results:
        ap.error("--results records the joints with their drawn noise: leave out --noise-seed")
    args.joints = ([int(j) for j in args.joints.split(",") if j.strip()] if args.joints
                   else list(range(args.n)))
    return args


def main(argv: list[str] | None = None) -> int:
    """Draw, run and score the zoo; print progress and the tables; write ``--out``."""
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    noise = f", noise seed {args.noise_seed}" if args.noise_seed else ""
    print(f"seed {args.seed} ({'fresh' if args.fresh else 'fixed'}{noise}); joints "
          f"{args.joints[0]}…{args.joints[-1]} ({len(args.joints)}); methods "
          f"{', '.join(args.methods)}; numba warm-up {warm_up():.1f} s", flush=True)
    t0 = time.perf_counter()
    specs, rows = [], []
    for i in args.joints:
        spec = with_noise_seed(draw_joint(args.seed, i), args.noise_seed)
        joint_rows, record = run_joint(spec, args.methods)
        specs.append(spec)
        rows += joint_rows
        (args.out / f"joint_{i:03d}.json").write_text(json.dumps(_jsonable(record), indent=1))
        print(progress_line(spec, joint_rows, record), flush=True)
    text = write_outputs(args.out, args.seed, specs, rows, time.perf_counter() - t0,
                         args.methods, args.noise_seed)
    print("\n" + text.split("## Joints")[0].split("## Pass rates")[1].strip())
    print(f"\nseed {args.seed}: total {time.perf_counter() - t0:.0f} s; wrote {args.out}")
    if args.results:
        drawn = args.seed != DEFAULT_SEED
        section = results_section(args.seed, drawn, rows, args.methods)
        write_text(RESULTS, replace_section(RESULTS.read_text(), results_heading(drawn), section))
    return 0


if __name__ == "__main__":
    sys.exit(main())
