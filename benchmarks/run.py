"""Every identification method on the same data sets, in one run; writes benchmarks/RESULTS.md.

Run:  .venv/bin/python benchmarks/run.py            (every data set, ~7 min on 2 shared cores)
      .venv/bin/python benchmarks/run.py --quick    (data/example and data/emps only)

Methods (sparsefric.baselines for the baselines):

* ``sparsefric``  — ``SparseFric(axis=...).fit(train, validate=val)``, model A, defaults.
* ``sparsefric hold`` — the same with ``torque_timing="hold"``: the simulated joints log the
  command they hold over each sample interval (EMPS logs its force command too); docs/DESIGN.md
  §68.
* ``IDIM-LS``     — ``idim_ls(train)``: rigid body + Coulomb + viscous q̇, q̇³, 20 Hz Butterworth,
  decimation 10, rows with |q̇| < 0.05 rad/s (prismatic 0.005 m/s) dropped.  On EMPS the
  published reference settings (Coulomb + viscous q̇ + offset, 100 Hz, all rows).
* ``OE-LuGre``    — ``output_error_lugre(train, start=IDIM-LS)``, defaults (σ0 starts at 1e4,
  close to the simulated joints' truth); its wall time excludes the IDIM-LS start.
* ``OE-LuGre ×5`` — ``output_error_multistart``: the same fit from each of sparsefric's default
  σ0 starts (``default_sigma0_starts`` of the IDIM-LS Coulomb level), the lowest torque error
  kept: the comparison on equal terms when σ0 is not known beforehand.
* ``two-step``    — ``two_step_lugre``: static curve from the CVE points that
  ``cve_from_trajectories`` extracts from train + validate + test, σ0, σ1, I from a simulated
  pre-sliding experiment ``presliding_experiment(truth)`` (simulated joints only); a_c, a_s, o
  from IDIM-LS.  Its wall time covers CVE extraction and both fits, not the simulation.

Every model is scored on the same preprocessed test data: ``Preprocessor().prepare(test)
.relative_error(m)`` (TV differentiation, LuGre z integrated from 0), ‖τ − τ̂‖/‖τ‖ on the measured
torque.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from sparsefric.baselines import (
    idim_ls,
    output_error_lugre,
    output_error_multistart,
    presliding_experiment,
    two_step_lugre,
)
from sparsefric.data import Trajectory, load_trajectories
from sparsefric.estimator import SparseFric
from sparsefric.identify import default_sigma0_starts
from sparsefric.model import JointModel
from sparsefric.preprocessing import Preprocessor
from sparsefric.simulate import EXAMPLE_TRUTH, PAPER_SPLIT, Sensors, paper_experiment
from sparsefric.validation import cve_from_trajectories

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "data" / "example"
EMPS = ROOT / "data" / "emps" / "emps_estimation.csv"
RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
CORE = Path(__file__).resolve().parent / "RESULTS_core.md"

#: Published IDIM-LS reference model of EMPS (data/emps/README.md).
EMPS_REFERENCE = JointModel(axis="prismatic", inertia=95.1089, offset=-3.1648, coulomb=20.3935,
                            viscous=((1, 203.5034),))
#: Velocity range [rad/s] of the static-curve error (prismatic: the same range / 10, in m/s).
STATIC_RANGE = (0.02, 2.1)
PRISMATIC_SCALE = 0.1


@dataclass
class Dataset:
    name: str
    axis: str
    train: list[Trajectory]
    validate: list[Trajectory]
    test: list[Trajectory]
    truth: JointModel | None = None
    note: str = ""
    presliding_sensors: Sensors | None = None
    #: Butterworth cutoff of IDIM-LS and OE-LuGre [Hz]: above the bristle resonance
    #: √(σ0/I)/2π (16 Hz on the revolute joints, 29 Hz on the prismatic one), which a lower
    #: cutoff filters out of the torque the output-error fit has to match.
    cutoff_hz: float = 20.0

    @property
    def scale(self) -> float:
        return PRISMATIC_SCALE if self.axis == "prismatic" else 1.0


@dataclass
class Result:
    method: str
    model: JointModel | None = None
    wall: float = float("nan")
    error: str = ""
    test_error: float = float("nan")
    extra: dict = field(default_factory=dict)


# ---------------------------------------------------------------------------- data sets
def example() -> Dataset:
    def load(role: str) -> list[Trajectory]:
        return load_trajectories(sorted(EXAMPLE.glob(f"{role}_*.csv")))

    return Dataset("example", "revolute", load("train"), load("validate"), load("test"),
                   JointModel.load(EXAMPLE / "truth.json"),
                   "data/example as bundled (EXAMPLE_TRUTH, 0.3 N·m torque noise)")


def simulated(name: str, truth: JointModel, sensors: Sensors, note: str,
              split: dict[str, tuple[float, ...]] = PAPER_SPLIT,
              presliding_sensors: Sensors | None = None, scale: float = 1.0,
              cutoff_hz: float = 20.0) -> Dataset:
    d = paper_experiment(truth, split, sensors=sensors, scale=scale)
    return Dataset(name, truth.axis, d["train"], d["validate"], d["test"], truth, note,
                   presliding_sensors, cutoff_hz)


def peak_torque(truth: JointModel) -> float:
    """Peak |τ| [N·m] of the noise-free paper experiment of ``truth``."""
    d = paper_experiment(truth, sensors=Sensors(position_noise=5e-6, torque_noise=0.0, seed=1))
    return max(float(np.max(np.abs(t.tau))) for ts in d.values() for t in ts)


#: Double Stribeck break: a slow (δ = 0.5) and a sharp (δ = 3) term with the same Ω_s.
DOUBLE_STRIBECK = EXAMPLE_TRUTH.with_(stribeck=((0.5, 4.0), (3.0, 5.0)),
                                      extra={"provenance": "benchmarks/run.py"})
#: Classic LuGre (Canudas de Wit et al. 1995 shape): Gaussian Stribeck δ = 2, linear viscous.
CLASSIC_LUGRE = JointModel(axis="revolute", inertia=0.8, gravity_cos=12.0, gravity_sin=2.0,
                           kind="lugre", coulomb=10.0, stribeck_velocity=0.05,
                           stribeck=((2.0, 5.0),), viscous=((1, 4.0),), sigma0=1e4, sigma1=50.0)
#: A prismatic axis [kg, N, m]: offset instead of gravity, linear-encoder sensors.
PRISMATIC = JointModel(axis="prismatic", inertia=60.0, offset=-3.0, kind="lugre", coulomb=20.0,
                       stribeck_velocity=0.01, stribeck=((1.0, 10.0),), viscous=((1, 200.0),),
                       sigma0=2e6, sigma1=4e3)
PRISMATIC_SENSORS = Sensors(encoder_resolution=1e-7, position_noise=1e-7, torque_noise=1.0,
                            seed=13)
PRISMATIC_SPLIT = {role: tuple(PRISMATIC_SCALE * v for v in vs)
                   for role, vs in PAPER_SPLIT.items()}


def all_datasets(quick: bool) -> list[Callable[[], Dataset]]:
    out: list[Callable[[], Dataset]] = [example]
    if quick:
        return out
    peak = peak_torque(EXAMPLE_TRUTH)
    for frac in (0.005, 0.02, 0.05):
        out.append(lambda f=frac: simulated(
            f"noise-{100 * f:g}%", EXAMPLE_TRUTH,
            Sensors(position_noise=5e-6, torque_noise=f * peak, seed=7),
            f"EXAMPLE_TRUTH, torque noise σ = {100 * f:g} % of the peak torque "
            f"{peak:.1f} N·m = {f * peak:.2f} N·m (same seed at every level)"))
    out.append(lambda: simulated(
        "double-stribeck", DOUBLE_STRIBECK, Sensors(position_noise=5e-6, torque_noise=0.3,
                                                    seed=11),
        "EXAMPLE_TRUTH with two Stribeck terms (δ = 0.5, A = 4; δ = 3, A = 5 N·m), 0.3 N·m noise"))
    out.append(lambda: simulated(
        "lugre-delta2", CLASSIC_LUGRE, Sensors(position_noise=5e-6, torque_noise=0.2, seed=12),
        "classic LuGre: I = 0.8, f_c = 10, A = 5 N·m, δ = 2, Ω_s = 0.05 rad/s, c1 = 4, "
        "σ0 = 1e4, σ1 = 50; 0.2 N·m noise"))
    out.append(lambda: simulated(
        "prismatic", PRISMATIC, PRISMATIC_SENSORS,
        "prismatic: M = 60 kg, o = −3 N, f_c = 20 N, A = 10 N, δ = 1, Ω_s = 0.01 m/s, "
        "c1 = 200 N·s/m, σ0 = 2e6 N/m, σ1 = 4e3 N·s/m; the paper's experiment with velocities, "
        "ranges and accelerations / 10 [m, m/s, m/s²]; 0.1 µm encoder and position noise, 1 N "
        "force noise; IDIM-LS and OE-LuGre filter at 100 Hz",
        split=PRISMATIC_SPLIT, scale=PRISMATIC_SCALE, cutoff_hz=100.0,
        presliding_sensors=Sensors(1e-7, 1e-7, 1.0, seed=0)))
    return out


def emps() -> Dataset:
    d = pd.read_csv(EMPS)
    n = len(d)
    cut = int(0.7 * n)

    def part(a: int, b: int, name: str) -> Trajectory:
        return Trajectory(t=d["t"].to_numpy()[a:b], q=d["q"].to_numpy()[a:b],
                          tau=d["tau"].to_numpy()[a:b], name=name)

    return Dataset("emps", "prismatic", [part(0, cut, "emps[0:70%]")], [],
                   [part(cut, n, "emps[70%:]")], None,
                   f"data/emps (real): first 70 % ({cut} samples) train, last 30 % "
                   f"({n - cut}) test; no validation set; no truth")


# ---------------------------------------------------------------------------- methods
def _timed(method: str, fn: Callable[[], JointModel]) -> Result:
    t0 = time.perf_counter()
    try:
        model = fn()
    except Exception as exc:  # noqa: BLE001 — a failing method is a result, not a crash
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return Result(method, None, time.perf_counter() - t0,
                      f"{type(exc).__name__}: {msg}"[:160])
    wall = time.perf_counter() - t0
    bad = [k for k, v in _params(model).items() if not np.isfinite(v)]
    return Result(method, model, wall, f"non-finite parameters: {', '.join(bad)}" if bad else "")


#: sparsefric's rows: (method name, torque timing).
SPARSEFRIC = (("sparsefric", "instant"), ("sparsefric hold", "hold"))


def run_methods(ds: Dataset) -> list[Result]:
    tr, va = ds.train, ds.validate
    out = [_timed(name, lambda timing=timing: SparseFric(axis=ds.axis, torque_timing=timing).fit(
        tr, validate=va or None).model_) for name, timing in SPARSEFRIC]
    if ds.name == "emps":
        idim = _timed("IDIM-LS", lambda: idim_ls(tr, "prismatic", cutoff_hz=100.0, decimate=10))
    else:
        vmin = 0.05 * ds.scale
        idim = _timed("IDIM-LS", lambda: idim_ls(tr, ds.axis, cutoff_hz=ds.cutoff_hz, decimate=10,
                                                 viscous_powers=(1, 3), min_velocity=vmin))
    out.append(idim)
    if idim.model is not None:
        out.append(_timed("OE-LuGre", lambda: output_error_lugre(
            tr, ds.axis, idim.model, cutoff_hz=ds.cutoff_hz)))
        g0 = idim.model.coulomb + sum(a for _, a in idim.model.stribeck)
        out.append(_timed("OE-LuGre ×5", lambda: output_error_multistart(
            tr, ds.axis, idim.model, default_sigma0_starts(g0, ds.axis),
            cutoff_hz=ds.cutoff_hz)))
    else:
        out += [Result("OE-LuGre", error="no IDIM-LS start"),
                Result("OE-LuGre ×5", error="no IDIM-LS start")]
    if ds.truth is not None:
        truth = ds.truth
        pre = presliding_experiment(truth, sensors=ds.presliding_sensors)

        def two_step() -> JointModel:
            cve = cve_from_trajectories(ds.train + ds.validate + ds.test)
            return two_step_lugre((cve["velocity"].to_numpy(), cve["friction"].to_numpy()), pre,
                                  ds.axis, viscous_powers=(1, 3), rigid_body=idim.model)

        out.append(_timed("two-step", two_step))
    return out


# ---------------------------------------------------------------------------- metrics
def _params(m: JointModel) -> dict[str, float]:
    p = {"I": m.inertia}
    if m.axis == "revolute":
        p.update(a_c=m.gravity_cos, a_s=m.gravity_sin)
    else:
        p["offset"] = m.offset
    p["f_c"] = m.coulomb
    if m.kind == "lugre":
        p.update(sigma0=m.sigma0, sigma1=m.sigma1)
    return {k: float(v) for k, v in p.items()}


def _breakaway(m: JointModel, scale: float) -> float:
    return m.breakaway_torque(v_max=2.0 * scale)


def static_rms(m: JointModel, truth: JointModel, scale: float) -> float:
    v = np.geomspace(STATIC_RANGE[0] * scale, STATIC_RANGE[1] * scale, 200)
    ref = truth.static_friction(v)
    return float(np.sqrt(np.mean(((m.static_friction(v) - ref) / ref) ** 2)))


def row(ds: Dataset, r: Result, t_ref: float) -> dict[str, object]:
    out: dict[str, object] = {"method": r.method}
    cols = (["I", "a_c", "a_s"] if ds.axis == "revolute" else ["I", "offset"]) + \
        ["f_c", "τ_break", "σ0", "σ1", "static RMS"]
    if ds.truth is not None:
        for c in cols:
            out[c] = "—"
    if r.model is not None and ds.truth is not None:
        est, tru = _params(r.model), _params(ds.truth)
        est["τ_break"], tru["τ_break"] = (_breakaway(r.model, ds.scale),
                                          _breakaway(ds.truth, ds.scale))
        est["σ0"], est["σ1"] = est.pop("sigma0", None), est.pop("sigma1", None)
        tru["σ0"], tru["σ1"] = tru.pop("sigma0", None), tru.pop("sigma1", None)
        for c in cols[:-1]:
            if est.get(c) is not None and tru.get(c):
                out[c] = f"{100 * (est[c] / tru[c] - 1):+.1f}"
        out["static RMS"] = f"{100 * static_rms(r.model, ds.truth, ds.scale):.1f}"
    out["test ‖τ−τ̂‖/‖τ‖ %"] = "—" if not np.isfinite(r.test_error) else f"{100 * r.test_error:.2f}"
    out["wall s"] = "—" if not np.isfinite(r.wall) else f"{r.wall:.2f}"
    out["÷ sparsefric"] = ("—" if not (np.isfinite(r.wall) and np.isfinite(t_ref) and t_ref > 0)
                           else f"{r.wall / t_ref:.3g}")
    out["status"] = f"failed: {r.error}" if r.error else "ok"
    return out


def evaluate(ds: Dataset) -> pd.DataFrame:
    results = run_methods(ds)
    scorer = Preprocessor().prepare(ds.test)  # identical preprocessing for everyone
    references = [Result("truth", ds.truth)] if ds.truth is not None else \
        [Result("published IDIM-LS", EMPS_REFERENCE)]
    for r in results + references:
        if r.model is None:
            continue
        try:
            r.test_error = scorer.relative_error(r.model)
        except Exception as exc:  # noqa: BLE001
            r.error = r.error or f"scoring: {type(exc).__name__}: {exc}"[:160]
        if not np.isfinite(r.test_error) and not r.error:
            r.error = "test error is not finite"
    t_ref = results[0].wall if not results[0].error else float("nan")
    rows = [row(ds, r, t_ref) for r in results + references]
    for rw in rows[len(results):]:
        rw["wall s"] = rw["÷ sparsefric"] = "—"
        rw["status"] = "reference"
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------- output
def md_table(df: pd.DataFrame) -> str:
    cols = list(df.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    lines += ["| " + " | ".join(str(v) for v in rec) + " |" for rec in df.itertuples(index=False)]
    return "\n".join(lines)


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next(ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    import numba
    import scipy
    return (f"{cpu}, {os.cpu_count()} logical cores (shared with other jobs), "
            f"{platform.system()} {platform.release()}; Python {platform.python_version()}, "
            f"numpy {np.__version__}, scipy {scipy.__version__}, numba {numba.__version__}")


def commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "sparsefric"], cwd=ROOT,
                               check=True, capture_output=True, text=True).stdout.strip()
        return out + (" (+ uncommitted changes in sparsefric/)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def warm_up() -> float:
    """Compile every numba kernel (tiny fit, LuGre and simulator) before anything is timed."""
    t0 = time.perf_counter()
    tr = load_trajectories(sorted(EXAMPLE.glob("train_*.csv")))
    short = [t.with_(t=t.t[:3000], q=t.q[:3000], tau=t.tau[:3000]) for t in tr]
    SparseFric(sigma0_starts=(1e4,)).fit(short)
    m = idim_ls(short, "revolute", cutoff_hz=20.0, decimate=10, min_velocity=0.05)
    output_error_lugre(short, "revolute", m, max_nfev=2)
    return time.perf_counter() - t0


PARAM_NOTE = """\
Parameter columns: signed relative error in % of the estimate against the truth (I; a_c, a_s or
the offset o; f_c; the break-away torque τ_break = `JointModel.breakaway_torque`, the peak of the
static curve; σ0, σ1 where the method has them).  `static RMS`: RMS of the relative error of the
static friction curve on 200 log-spaced velocities over 0.02–2.1 rad/s (prismatic: 0.002–0.21
m/s).  `test`: ‖τ − τ̂‖/‖τ‖ on the test trajectories, every model scored by the same
`Preprocessor().prepare(test).relative_error(m)` (TV-differentiated q, q̇, q̈; LuGre z from 0).
`wall s`: identification wall time in this run; `÷ sparsefric`: that time over sparsefric's on
the same data.  The `truth` row scores the true model on the same preprocessed test data (the
floor set by noise and differentiation)."""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="data/example and data/emps only")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    t_start = time.perf_counter()
    warm = warm_up()
    print(f"numba warm-up: {warm:.1f} s", flush=True)
    sections: list[tuple[Dataset, pd.DataFrame, float]] = []
    for make in [*all_datasets(args.quick), emps]:
        t0 = time.perf_counter()
        ds = make()
        t_data = time.perf_counter() - t0
        table = evaluate(ds)
        sections.append((ds, table, t_data))
        print(f"\n## {ds.name} — {ds.note} (data {t_data:.1f} s, total "
              f"{time.perf_counter() - t0:.1f} s)", flush=True)
        print(table.to_string(index=False), flush=True)
    total = time.perf_counter() - t_start
    print(f"\ntotal wall time {total:.0f} s", flush=True)
    write(args.out, sections, total, args.quick, warm)
    print(f"wrote {args.out}")
    return 0


def write(path: Path, sections, total: float, quick: bool, warm: float) -> None:
    cmd = "python benchmarks/run.py" + (" --quick" if quick else "")
    parts = [
        "# Benchmarks: sparsefric against the baselines",
        "",
        f"- date: {_dt.datetime.now().strftime('%Y-%m-%d %H:%M')}",
        f"- machine: {machine()}",
        f"- code: commit {commit()}",
        f"- reproduce: `{cmd}` (full: `python benchmarks/run.py`, quick: `--quick`); core "
        "figures: `python benchmarks/bench_core.py`",
        f"- this run: {'quick' if quick else 'full'}, total wall time {total:.0f} s "
        f"(numba warm-up {warm:.1f} s, not charged to any method)",
        "",
        __doc__.split("\n\n", 1)[1].strip(),
        "",
        PARAM_NOTE,
        "",
        "## Summary: test-trajectory relative torque error [%] and wall time [s]",
        "",
        md_table(summary(sections)),
        "",
    ]
    for ds, table, t_data in sections:
        parts += [f"## {ds.name}", "", f"{ds.note}. Train {_n(ds.train)}, validate "
                  f"{_n(ds.validate)}, test {_n(ds.test)} samples; data made in {t_data:.1f} s.",
                  "", md_table(table), ""]
    path.write_text("\n".join(parts) + kept_sections(path) + core_section())


#: Sections of RESULTS.md that other scripts write (``zoo.py --results``, ``ablation.py``,
#: ``bench_batch.py --results``): a run of this script keeps them.
OTHER_SECTIONS = ("## Joint zoo", "## Ablation", "## Batch")


def sections_of(text: str) -> list[str]:
    """The "## " sections of a markdown ``text``, each from its heading to the next."""
    return ["## " + part for part in text.split("\n## ")[1:]]


def kept_sections(path: Path) -> str:
    """The sections of :data:`OTHER_SECTIONS` in the existing file ``path``, or ""."""
    if not path.exists():
        return ""
    kept = [sec.rstrip("\n") + "\n" for sec in sections_of(path.read_text())
            if sec.startswith(OTHER_SECTIONS)]
    return "".join("\n" + sec for sec in kept)


def replace_section(text: str, heading: str, new: str) -> str:
    """``text`` (RESULTS.md) with its section ``heading`` replaced by ``new``; a new section goes
    before "## Core benchmarks" (or at the end)."""
    if heading in text:
        head, rest = text.split(heading, 1)
        tail = rest.split("\n## ", 1)
        return head + new + ("\n## " + tail[1] if len(tail) > 1 else "")
    marker = "\n## Core benchmarks\n"
    if marker in text:
        head, tail = text.split(marker, 1)
        return head.rstrip("\n") + "\n\n" + new + marker + tail
    return text.rstrip("\n") + "\n\n" + new


def core_section() -> str:
    """The "Core benchmarks" section from RESULTS_core.md (written by bench_core.py), or ""."""
    if not CORE.exists():
        return ""
    body = CORE.read_text().split("\n", 1)[1].strip()
    return ("\n## Core benchmarks\n\n"
            f"From `python benchmarks/bench_core.py` (also in `{CORE.name}`):\n\n{body}\n")


def update_core_section(path: Path = RESULTS) -> None:
    """Replace (or append) the "Core benchmarks" section of an existing RESULTS.md."""
    if not path.exists():
        return
    text = path.read_text()
    head = text.split("\n## Core benchmarks\n", 1)[0].rstrip("\n") + "\n"
    path.write_text(head + core_section())


def _n(trs: list[Trajectory]) -> int:
    return sum(len(t) for t in trs)


def summary(sections) -> pd.DataFrame:
    methods = [name for name, _ in SPARSEFRIC] + ["IDIM-LS", "OE-LuGre", "OE-LuGre ×5",
                                                  "two-step"]
    rows = []
    for ds, table, _ in sections:
        rec: dict[str, object] = {"data set": ds.name}
        by = {r["method"]: r for r in table.to_dict("records")}
        for m in methods:
            r = by.get(m)
            if r is None:
                rec[m] = "n/a"
            elif str(r["status"]).startswith("failed"):
                rec[m] = "failed"
            else:
                rec[m] = f"{r['test ‖τ−τ̂‖/‖τ‖ %']} ({r['wall s']} s)"
        ref = by.get("truth") or by.get("published IDIM-LS")
        rec["truth / reference"] = ref["test ‖τ−τ̂‖/‖τ‖ %"] if ref else "—"
        rows.append(rec)
    return pd.DataFrame(rows)


if __name__ == "__main__":
    sys.exit(main())
