"""Speed and memory of the core kernels and of the command line; writes RESULTS_core.md.

Run:  .venv/bin/python benchmarks/bench_core.py            (~10 min; the 1e6-sample fit is
                                                             stopped after 180 s)
      .venv/bin/python benchmarks/bench_core.py --scale    (the 1e6-sample fit without a limit)

1. simulator sub-steps per second, data/example-like closed-loop run (target ≥ 1e6/s), against
   the same integrator run as plain Python (the numba kernels' ``py_func``) on a short piece;
2. ``lugre.integrate_z`` samples per second on 1e6 samples (target ≥ 5e6/s), against its plain
   Python/numpy version on a short piece;
3. the static λ sweep (``selection.sweep``, ``static_library()``, multi-start Newton from
   ``DEFAULT_OMEGA_STARTS``) on 50,000 simulated samples (target ≤ 2 s);
4. ``sparsefric identify`` (CLI wall, report included) on data/example and on a 4-record,
   ~53k-sample joint simulated by ``sparsefric simulate``; on the same data the fit alone, the
   report alone and ``--method output-error`` (IDIM-LS start, the five default σ0 starts) in
   this process; ``sparsefric predict`` and ``sparsefric --help`` (targets of the 4-record
   joint: identify ≤ 3 s and ≤ 1× output-error, fit ≤ 1.5 s, report ≤ 0.8 s; predict ≤ 1 s,
   --help ≤ 0.3 s);
5. ``SparseFric(static_only=False).fit`` on 10k, 50k, 200k and 1M simulated samples, each size in
   its own child process: wall time, peak resident memory (1M: ≤ 30 s, ≤ 1.5 GB) and the
   exponent of the growth of the time from 50k to 1M (≤ 1.1).

Every numba kernel is compiled before anything is timed. Rows 1–3 are the best of a few
repeats; rows 4–5 the median of three runs (one for 1M samples).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import shutil
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

import sparsefric.simulate.joint as simmod
from sparsefric import lugre
from sparsefric.data import Trajectory, load_trajectories
from sparsefric.estimator import SparseFric
from sparsefric.feature_library import static_library
from sparsefric.identify import DEFAULT_OMEGA_STARTS
from sparsefric.selection import sweep
from sparsefric.signals import Signals
from sparsefric.simulate import (
    EXAMPLE_SENSORS,
    EXAMPLE_TRUTH,
    Sensors,
    paper_experiment,
    simulate_moves,
)

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE.parent / "data" / "example"
OUT = HERE / "RESULTS_core.md"
SCALING_LIMIT_S = 180.0
SCALING_SAMPLES = (10_000, 50_000, 200_000, 1_000_000)
MEMORY_KILL_BYTES = 6 * 2**30
REPEATS = 3


def pure(dispatcher):
    """The plain-Python version of a numba kernel, calling plain-Python versions of its callees."""
    f = dispatcher.py_func
    g = dict(f.__globals__)
    for name in f.__code__.co_names:
        v = g.get(name)
        if hasattr(v, "py_func"):
            g[name] = pure(v)
    return types.FunctionType(f.__code__, g, f.__name__, f.__defaults__, f.__closure__)


def best_of(fn, repeats: int = 3) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def example_moves(velocity: float = 0.127, substeps: int = 10, n: int | None = None,
                  ) -> tuple[Trajectory, float]:
    """One data/example-like trajectory (closed loop, EXAMPLE_TRUTH); returns it and its time."""
    t0 = time.perf_counter()
    tr = simulate_moves(EXAMPLE_TRUTH, -0.6, 0.8, velocity, 4.0, sensors=EXAMPLE_SENSORS,
                        substeps=substeps)
    return tr, time.perf_counter() - t0


# ---------------------------------------------------------------------------- 1. simulator
def bench_simulator() -> dict:
    example_moves()  # compile
    wall, tr = best_of(lambda: example_moves()[0])
    n = len(tr)
    steps = n * 10
    # plain Python: the same closed-loop run cut to its first 1,500 samples
    cut = 1500
    fast_kernel = simmod._simulate
    orig = simmod.trapezoid_moves

    def short_moves(*a, **k):
        return tuple(x[:cut] for x in orig(*a, **k))

    simmod.trapezoid_moves = short_moves
    try:
        t_fast_short, _ = best_of(lambda: example_moves()[0])
        simmod._simulate = pure(fast_kernel)
        t0 = time.perf_counter()
        slow = example_moves()[0]
        t_slow = time.perf_counter() - t0
    finally:
        simmod._simulate = fast_kernel
        simmod.trapezoid_moves = orig
    fast_short = simulate_moves(EXAMPLE_TRUTH, -0.6, 0.8, 0.127, 4.0, sensors=EXAMPLE_SENSORS)
    same = bool(np.allclose(slow.q, fast_short.q[:cut], rtol=0, atol=1e-12))
    return {"samples": n, "substeps": steps, "wall": wall, "rate": steps / wall,
            "py_rate": cut * 10 / t_slow, "py_samples": cut, "same": same,
            "ratio": (steps / wall) / (cut * 10 / t_slow), "fast_short": t_fast_short}


# ---------------------------------------------------------------------------- 2. integrate_z
def bench_integrate_z(n: int = 1_000_000) -> dict:
    t = np.arange(n) * 1e-3
    qd = 1.2 * np.sin(2 * np.pi * 0.3 * t) + 0.2 * np.sin(2 * np.pi * 2.1 * t)
    p = EXAMPLE_TRUTH.friction
    lugre.integrate_z(qd[:100], 1e-3, p)  # compile
    wall, (z, _) = best_of(lambda: lugre.integrate_z(qd, 1e-3, p))
    m = 20_000
    slow = pure(lugre._integrate)
    g = lugre.stribeck_g(qd[:m], p)
    step = np.full(m, 1e-3)
    t0 = time.perf_counter()
    z_py, _ = slow(np.ascontiguousarray(qd[:m]), step, float(p.sigma0), g, float(p.tanh_k), 0.0,
                  1)
    t_py = time.perf_counter() - t0
    same = bool(np.allclose(z_py, z[:m], rtol=1e-12, atol=1e-15))
    return {"samples": n, "wall": wall, "rate": n / wall, "py_rate": m / t_py, "py_samples": m,
            "ratio": (n / wall) / (m / t_py), "same": same}


# ---------------------------------------------------------------------------- 3. sweep
def bench_sweep(n: int = 50_000) -> dict:
    trs = [t for seed in (1, 2) for ts in paper_experiment(
        EXAMPLE_TRUTH, sensors=Sensors(position_noise=5e-6, torque_noise=0.3, seed=seed)).values()
        for t in ts]
    cat = {k: np.concatenate([t.truth[k] for t in trs]) for k in ("q_true", "qd_true", "qdd_true")}
    tau = np.concatenate([t.tau for t in trs])
    record = int(tau.size)
    lib = static_library()
    out = {"samples": n, "record": record, "n_terms": len(lib.terms())}
    # "all": the first n samples, stops included; "sliding": the first n samples with
    # |q̇| > 0.01 rad/s, as the fit uses (samples away from the stops)
    for label, keep in (("all", np.ones(record, bool)), ("sliding", np.abs(cat["qd_true"]) > 0.01)):
        q, qd, qdd = (cat[k][keep][:n] for k in ("q_true", "qd_true", "qdd_true"))
        y = tau[keep][:n]
        if y.size < n:
            raise RuntimeError(f"record has only {y.size} {label} samples")
        with threadpool_limits(1):
            sweep(lib, Signals(q[:2000], qd[:2000], qdd[:2000]), y[:2000],
                  omega_starts=DEFAULT_OMEGA_STARTS)  # compile
            wall, res = best_of(lambda q=q, qd=qd, qdd=qdd, y=y: sweep(
                static_library(), Signals(q, qd, qdd), y, omega_starts=DEFAULT_OMEGA_STARTS),
                repeats=1)
        out[label] = {"wall": wall, "n_lambda": len(res.table),
                      "n_active": int(res.best.support.sum()), "omega": float(res.best.omega)}
    return out


# ---------------------------------------------------------------------------- 4. CLI
#: Target velocities [rad/s] of the 4-record joint: data/example's truth, ~53k samples.
JOINT51_VELOCITIES = "0.03,0.08,0.127,2.13"
CLI = "import sys; from sparsefric.cli import main; sys.exit(main())"


def median_wall(fn) -> tuple[float, list[float], object]:
    """Median wall time [s] of :data:`REPEATS` calls of ``fn``, all the times and the last
    output."""
    times, out = [], None
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), times, out


#: Where the command-line runs keep their compiled bytecode: an installed package has its .pyc
#: files (pip writes them), so the runs read them as a user's would, whatever
#: ``PYTHONDONTWRITEBYTECODE`` the benchmark's environment sets (it made every run compile the
#: package's modules, ~0.05 s), and without writing into the checkout.
PYCACHE = Path(tempfile.gettempdir()) / "sparsefric-bench-pycache"


def cli(*args: str) -> None:
    """``sparsefric ARGS`` in a fresh interpreter with this checkout first on the path, its
    bytecode cached in :data:`PYCACHE` (the first run of a command, untimed, writes it)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env |= {"PYTHONPYCACHEPREFIX": str(PYCACHE), "PYTHONPATH": os.pathsep.join(
        [str(HERE.parent), *filter(None, [os.environ.get("PYTHONPATH")])])}
    proc = subprocess.run([sys.executable, "-c", CLI, *args], env=env, capture_output=True,
                          text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"sparsefric {' '.join(args[:2])} failed: {proc.stderr.strip()[-300:]}")


def example_files() -> dict[str, list[str]]:
    return {role: [str(p) for p in sorted(EXAMPLE.glob(f"{role}_*.csv"))]
            for role in ("train", "validate", "test")}


def joint51(root: Path) -> dict[str, list[str]]:
    """The 4-record joint, simulated by ``sparsefric simulate`` (all four records train)."""
    out = root / "joint51"
    cli("simulate", "--out", str(out), "--velocities", JOINT51_VELOCITIES, "--seed", "1",
        "--quiet")
    return {"train": [str(p) for p in sorted(out.glob("moves_*.csv"))], "validate": [],
            "test": []}


def identify_args(files: dict[str, list[str]], out: Path) -> list[str]:
    args = ["identify", *files["train"], "--out", str(out), "--force", "--quiet"]
    for role in ("validate", "test"):
        if files[role]:
            args += [f"--{role}", *files[role]]
    return args


def bench_data_set(name: str, files: dict[str, list[str]], root: Path) -> dict:
    """CLI identify (with report), the fit alone, the report alone and the output-error
    multi-start (:func:`~sparsefric.baselines.fit_baseline`, the CLI's ``--method
    output-error``: IDIM-LS start, the five default σ0 starts) on one data set."""
    from sparsefric.baselines import fit_baseline
    from sparsefric.outputs import write_results

    out = root / f"out_{name}"
    train = load_trajectories(files["train"])
    val = load_trajectories(files["validate"]) if files["validate"] else None
    test = load_trajectories(files["test"]) if files["test"] else None
    cli(*identify_args(files, out))  # numba caches, page cache
    wall, walls, _ = median_wall(lambda: cli(*identify_args(files, out)))
    fit, _, est = median_wall(lambda: SparseFric().fit(train, validate=val))
    stage = root / f"report_{name}"

    def report() -> None:
        shutil.rmtree(stage, ignore_errors=True)
        stage.mkdir()
        write_results(est.result_, stage, train, val, test)

    rep, _, _ = median_wall(report)
    oe, _, oe_model = median_wall(lambda: fit_baseline("output-error", train))
    return {"samples": sum(len(t) for t in train), "records": len(train), "wall": wall,
            "walls": walls, "fit": fit, "report": rep, "oe": oe, "ratio": wall / oe,
            "fit_ratio": fit / oe, "oe_evals": oe_model.extra["output_error"]["evaluations"],
            "model": est.model_.kind, "out": out}


def bench_predict(files: dict[str, list[str]], model: Path) -> float:
    cli("predict", str(model), *files["test"])
    return median_wall(lambda: cli("predict", str(model), *files["test"]))[0]


def bench_help() -> float:
    cli("--help")
    return median_wall(lambda: cli("--help"))[0]


# ---------------------------------------------------------------------------- 5. scaling
def scaling_child(n: int, repeats: int) -> None:
    """Run in a child process: simulate ≥ n samples, fit ``repeats`` times, print the walls and
    ru_maxrss."""
    import resource

    example_moves()  # compile the simulator on a small run
    cycles = int(np.ceil(n / 4000))  # one cycle of 1 rad/s moves over 1.4 rad is ~4.0 s
    big = simulate_moves(EXAMPLE_TRUTH, -0.6, 0.8, 1.0, 8.0, cycles=cycles,
                         sensors=EXAMPLE_SENSORS, name="long")
    big = big.with_(t=big.t[:n], q=big.q[:n], tau=big.tau[:n], truth={})
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    walls = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        est = SparseFric(static_only=False).fit([big])
        walls.append(time.perf_counter() - t0)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"RESULT samples={len(big)} walls={','.join(f'{w:.3f}' for w in walls)} "
          f"rss_before_kb={rss_before} rss_kb={rss} kind={est.model_.kind}", flush=True)


def parse_scaling(out: str) -> dict | None:
    line = next((ln for ln in out.splitlines() if ln.startswith("RESULT")), "")
    if not line:
        return None
    kv = dict(item.split("=", 1) for item in line.split()[1:])
    walls = [float(w) for w in kv["walls"].split(",")]
    return {"ok": True, "samples": int(kv["samples"]), "walls": walls,
            "fit": float(np.median(walls)), "rss": int(kv["rss_kb"]) * 1024,
            "rss_before": int(kv["rss_before_kb"]) * 1024, "kind": kv["kind"]}


def bench_scaling_point(n: int, repeats: int, limit: float | None) -> dict:
    """:func:`scaling_child` in a fresh process, watching its RSS; killed past the limits."""
    proc = subprocess.Popen([sys.executable, __file__, "--scaling-child", str(n), str(repeats)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    t0 = time.perf_counter()
    peak, reason = 0, ""
    while proc.poll() is None:
        try:
            with open(f"/proc/{proc.pid}/status") as fh:
                kb = next((int(ln.split()[1]) for ln in fh if ln.startswith("VmRSS")), 0)
            peak = max(peak, kb * 1024)
        except OSError:
            pass
        if peak > MEMORY_KILL_BYTES:
            reason = f"killed: resident memory above {MEMORY_KILL_BYTES / 2**30:.0f} GB"
        elif limit is not None and time.perf_counter() - t0 > limit:
            reason = f"stopped after {limit:.0f} s (run with --scale to let it finish)"
        if reason:
            proc.kill()
            proc.wait()
            break
        time.sleep(0.25)
    out, err = proc.communicate()
    res = parse_scaling(out)
    if res is None:
        last = err.strip().splitlines()[-1] if err.strip() else "no output"
        return {"ok": False, "samples": n, "reason": reason or f"failed: {last}", "peak": peak}
    return res


def exponent(points: list[dict], smallest: int = 50_000) -> float:
    """Slope of log(fit time) against log(samples) over the points from ``smallest`` samples."""
    use = [p for p in points if p["ok"] and p["samples"] >= smallest]
    if len(use) < 2:
        return float("nan")
    return float(np.polyfit(np.log([p["samples"] for p in use]),
                            np.log([p["fit"] for p in use]), 1)[0])


# ---------------------------------------------------------------------------- report
def _ok(good: bool) -> str:
    return "met" if good else "**missed**"


def _walls(times: list[float]) -> str:
    return ", ".join(f"{t:.2f}" for t in times)


def cli_rows(root: Path) -> list[tuple[str, ...]]:
    """Rows 4: identify, fit, report, output-error, predict and --help."""
    rows = []
    sets = {"data/example": example_files(), "joint51": joint51(root)}
    results = {name: bench_data_set(name.replace("/", "_"), files, root)
               for name, files in sets.items()}
    for name, r in results.items():
        what = ("data/example (2 train, 2 validate, 2 test records)" if name == "data/example"
                else f"a {r['samples']}-sample {r['records']}-record joint (`sparsefric "
                     f"simulate --velocities {JOINT51_VELOCITIES} --seed 1`)")
        strict = name == "joint51"
        rows.append((f"4. `sparsefric identify` with report, {what}",
                     f"{r['wall']:.2f} s", "≤ 3 s, ≤ 1× output-error" if strict else "—",
                     _ok(r["wall"] <= 3.0 and r["ratio"] <= 1.0) if strict else "—",
                     f"CLI wall, median of {_walls(r['walls'])} s; ÷ output-error ×5 "
                     f"({r['oe']:.2f} s, {r['oe_evals']} residual evaluations, IDIM-LS start) "
                     f"= {r['ratio']:.2f}; model {r['model']}"))
        rows.append((f"4. `SparseFric().fit` alone, {name}", f"{r['fit']:.2f} s",
                     "≤ 1.5 s" if strict else "—",
                     _ok(r["fit"] <= 1.5) if strict else "—",
                     f"÷ output-error ×5 = {r['fit_ratio']:.2f}; TV differentiation included"))
        rows.append((f"4. report and result files alone (`write_results`), {name}",
                     f"{r['report']:.2f} s", "≤ 0.8 s" if strict else "—",
                     _ok(r["report"] <= 0.8) if strict else "—", ""))
        print(*rows[-3:], sep="\n", flush=True)
    pred = bench_predict(sets["data/example"], results["data/example"]["out"] / "model.json")
    rows.append(("4. `sparsefric predict` on data/example's 2 test records",
                 f"{pred:.2f} s", "≤ 1 s", _ok(pred <= 1.0), "CLI wall, TV differentiation "
                 "included"))
    helps = bench_help()
    rows.append(("4. `sparsefric --help`", f"{helps:.2f} s", "≤ 0.3 s", _ok(helps <= 0.3),
                 "CLI wall"))
    print(*rows[-2:], sep="\n", flush=True)
    return rows


def scaling_rows(limit: float | None) -> list[tuple[str, ...]]:
    """Rows 5: the fit on 10k…1M simulated samples, one child process per size."""
    rows, points = [], []
    for n in SCALING_SAMPLES:
        big = n >= 1_000_000
        r = bench_scaling_point(n, 1 if big else REPEATS, limit if big else None)
        points.append(r)
        target = "≤ 30 s, ≤ 1.5 GB" if big else "—"
        if r["ok"]:
            good = r["fit"] <= 30.0 and r["rss"] <= 1.5 * 2**30
            rows.append((f"5. `SparseFric(static_only=False).fit`, {n:,} samples",
                         f"{r['fit']:.2f} s, {r['rss'] / 2**30:.2f} GB", target,
                         _ok(good) if big else "—",
                         f"{'one run' if big else 'median of ' + _walls(r['walls']) + ' s'}; "
                         f"peak ru_maxrss ({r['rss_before'] / 2**30:.2f} GB before the fit); "
                         f"model {r['kind']}"))
        else:
            rows.append((f"5. `SparseFric(static_only=False).fit`, {n:,} samples",
                         f"not measured: {r['reason']}", target, "—",
                         f"largest resident size seen {r['peak'] / 2**30:.2f} GB"))
        print(rows[-1], flush=True)
    k = exponent(points)
    rows.append(("5. growth of the fit time, 50k → 1M samples", f"∝ n^{k:.2f}", "≤ n^1.1",
                 _ok(k <= 1.1) if np.isfinite(k) else "—",
                 "least-squares slope of log time on log samples"))
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", action="store_true",
                    help="run the 1e6-sample fit without the time limit")
    ap.add_argument("--skip-scaling", action="store_true")
    ap.add_argument("--scaling-child", type=int, nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    if args.scaling_child:
        scaling_child(*args.scaling_child)
        return 0
    t_all = time.perf_counter()
    load = [os.getloadavg()[0]]
    rows = []

    s = bench_simulator()
    rows.append(("1. simulator, closed loop (data/example-like, 10 sub-steps/sample)",
                 f"{s['rate']:.3g} sub-steps/s ({s['samples']} samples in {s['wall']:.3f} s)",
                 "≥ 1e6 /s", _ok(s["rate"] >= 1e6),
                 f"×{s['ratio']:.0f} vs plain Python ({s['py_rate']:.3g} /s on the first "
                 f"{s['py_samples']} samples; identical output: {s['same']})"))
    print(rows[-1], flush=True)

    z = bench_integrate_z()
    rows.append(("2. `lugre.integrate_z`, 1e6 samples",
                 f"{z['rate']:.3g} samples/s ({z['wall'] * 1e3:.1f} ms)", "≥ 5e6 /s",
                 _ok(z["rate"] >= 5e6),
                 f"×{z['ratio']:.0f} vs plain Python ({z['py_rate']:.3g} /s on "
                 f"{z['py_samples']} samples; identical z: {z['same']})"))
    print(rows[-1], flush=True)

    w = bench_sweep()
    for label, what in (("sliding", "samples with abs(q̇) > 0.01 rad/s, as the fit uses"),
                        ("all", "first samples, stops included")):
        r = w[label]
        rows.append((f"3. static λ sweep, {w['samples']} {what} (simulated record of "
                     f"{w['record']} samples, true q, q̇, q̈)",
                     f"{r['wall']:.2f} s", "≤ 2 s", _ok(r["wall"] <= 2.0),
                     f"{r['n_lambda']} λ × {len(DEFAULT_OMEGA_STARTS)} Ω_s starts, "
                     f"{w['n_terms']} candidates; selected {r['n_active']} terms, "
                     f"Ω_s = {r['omega']:.3g} rad/s"))
        print(rows[-1], flush=True)

    with tempfile.TemporaryDirectory(prefix="bench_core-") as tmp:
        rows += cli_rows(Path(tmp))
    if not args.skip_scaling:
        rows += scaling_rows(None if args.scale else SCALING_LIMIT_S)
    total = time.perf_counter() - t_all
    load.append(os.getloadavg()[0])
    write(args.out, rows, total, args.scale, load)
    print(f"total {total:.0f} s; wrote {args.out}")
    return 0


def write(path: Path, rows, total: float, scale: bool, load: list[float]) -> None:
    from run import machine, update_core_section  # the same machine line as RESULTS.md

    lines = ["# Core benchmarks", "",
             f"- date: {_dt.datetime.now().strftime('%Y-%m-%d %H:%M')}; machine: {machine()}",
             f"- reproduce: `python benchmarks/bench_core.py{' --scale' if scale else ''}` "
             f"(took {total:.0f} s); times are wall-clock medians of {REPEATS} runs in one "
             "run of the script; rows 5 run in child processes, the 1M-sample fit once, "
             + ("without a time limit" if scale
                else f"stopped after {SCALING_LIMIT_S:.0f} s unless --scale"),
             f"- load: 1-minute load average {load[0]:.1f} at the start, {load[-1]:.1f} at the "
             f"end ({os.cpu_count()} CPUs; other jobs lengthen every wall time)", "",
             "| benchmark | measured | target | | notes |", "|---|---|---|---|---|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    path.write_text("\n".join(lines) + "\n")
    if path == OUT:
        update_core_section()


if __name__ == "__main__":
    sys.exit(main())
