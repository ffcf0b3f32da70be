"""Speed and memory of the core kernels; writes benchmarks/RESULTS_core.md.

Run:  .venv/bin/python benchmarks/bench_core.py            (~2 min; the 1e6-sample memory fit is
                                                             stopped after 180 s)
      .venv/bin/python benchmarks/bench_core.py --scale    (the memory fit without a time limit)

1. simulator sub-steps per second, data/example-like closed-loop run (target ≥ 1e6/s), against
   the same integrator run as plain Python (the numba kernels' ``py_func``) on a short piece;
2. ``lugre.integrate_z`` samples per second on 1e6 samples (target ≥ 5e6/s), against its plain
   Python/numpy version on a short piece;
3. the static λ sweep (``selection.sweep``, ``static_library()``, multi-start Newton from
   ``DEFAULT_OMEGA_STARTS``) on 50,000 simulated samples (target ≤ 2 s);
4. ``SparseFric().fit`` on data/example, differentiation included (target ≤ 10 s), against
   ``output_error_lugre`` on the same training data, in the same process;
5. peak resident memory of ``SparseFric(static_only=False).fit`` on a 1,000,000-sample simulated
   trajectory, in a child process (target ≤ 2 GB).

Every numba kernel is compiled before anything is timed.  Times are the best of a few repeats
where a repeat is cheap.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import subprocess
import sys
import time
import types
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

import sparsefric.simulate.joint as simmod
from sparsefric import lugre
from sparsefric.baselines import idim_ls, output_error_lugre
from sparsefric.data import Trajectory, load_trajectories
from sparsefric.feature_library import static_library
from sparsefric.identify import DEFAULT_OMEGA_STARTS, SparseFric
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
MEMORY_LIMIT_S = 180.0
MEMORY_KILL_BYTES = 6 * 2**30


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
    z_py, _ = slow(np.ascontiguousarray(qd[:m]), step, float(p.sigma0), g, float(p.tanh_k), 0.0)
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


# ---------------------------------------------------------------------------- 4. fit
def bench_fit() -> dict:
    tr = load_trajectories(sorted(EXAMPLE.glob("train_*.csv")))
    va = load_trajectories(sorted(EXAMPLE.glob("validate_*.csv")))
    short = [t.with_(t=t.t[:3000], q=t.q[:3000], tau=t.tau[:3000]) for t in tr]
    SparseFric(sigma0_starts=(1e4,)).fit(short)  # compile
    t0 = time.perf_counter()
    est = SparseFric().fit(tr, validate=va)
    t_fit = time.perf_counter() - t0
    t0 = time.perf_counter()
    start = idim_ls(tr, "revolute", cutoff_hz=20.0, decimate=10, viscous_powers=(1, 3),
                    min_velocity=0.05)
    t_idim = time.perf_counter() - t0
    t0 = time.perf_counter()
    oe = output_error_lugre(tr, "revolute", start)
    t_oe = time.perf_counter() - t0
    return {"samples": sum(len(t) for t in tr), "val_samples": sum(len(t) for t in va),
            "wall": t_fit, "oe": t_oe, "idim": t_idim, "ratio": t_fit / t_oe,
            "oe_nfev": oe.extra["output_error"]["nfev"],
            "oe_evals": oe.extra["output_error"]["evaluations"],
            "converged": bool(est.converged_)}


# ---------------------------------------------------------------------------- 5. memory
def memory_child(n: int) -> None:
    """Run in a child process: simulate ≥ n samples, fit, print wall and ru_maxrss."""
    import resource

    tr, _ = example_moves()  # compile the simulator on a small run
    t0 = time.perf_counter()
    cycles = int(np.ceil(n / 4000))  # one cycle of 1 rad/s moves over 1.4 rad is ~4.0 s
    big = simulate_moves(EXAMPLE_TRUTH, -0.6, 0.8, 1.0, 8.0, cycles=cycles,
                         sensors=EXAMPLE_SENSORS, name="long")
    big = big.with_(t=big.t[:n], q=big.q[:n], tau=big.tau[:n], truth={})
    t_sim = time.perf_counter() - t0
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    est = SparseFric(static_only=False).fit([big])
    wall = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"RESULT samples={len(big)} sim={t_sim:.2f} fit={wall:.2f} rss_before_kb={rss_before} "
          f"rss_kb={rss} kind={est.model_.kind}", flush=True)


def parse_memory(out: str, elapsed: float, peak: int) -> dict | None:
    line = next((ln for ln in out.splitlines() if ln.startswith("RESULT")), "")
    if not line:
        return None
    kv = dict(item.split("=", 1) for item in line.split()[1:])
    return {"ok": True, "samples": int(kv["samples"]), "fit": float(kv["fit"]),
            "sim": float(kv["sim"]), "rss": int(kv["rss_kb"]) * 1024,
            "rss_before": int(kv["rss_before_kb"]) * 1024, "peak_polled": peak,
            "elapsed": elapsed, "kind": kv["kind"]}


def bench_memory(n: int, limit: float | None) -> dict:
    """Run :func:`memory_child` in a fresh process, watching its RSS; kill it past the limits."""
    proc = subprocess.Popen([sys.executable, __file__, "--memory-child", str(n)],
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
    elapsed = time.perf_counter() - t0
    res = parse_memory(out, elapsed, peak)
    if res is None:
        last = err.strip().splitlines()[-1] if err.strip() else "no output"
        return {"ok": False, "reason": reason or f"failed: {last}", "elapsed": elapsed,
                "peak": peak}
    return res


# ---------------------------------------------------------------------------- report
def _ok(good: bool) -> str:
    return "met" if good else "**missed**"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", action="store_true",
                    help="run the 1e6-sample memory fit without the 180 s limit")
    ap.add_argument("--skip-memory", action="store_true")
    ap.add_argument("--memory-log", type=Path,
                    help="take figure 5 from the output of an earlier separate run of "
                         "`bench_core.py --memory-child 1000000` instead of running it")
    ap.add_argument("--memory-child", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    if args.memory_child:
        memory_child(args.memory_child)
        return 0
    t_all = time.perf_counter()
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

    f = bench_fit()
    rows.append(("4. `SparseFric().fit` on data/example (TV differentiation included)",
                 f"{f['wall']:.1f} s", "≤ 10 s", _ok(f["wall"] <= 10.0),
                 f"{f['samples']} train + {f['val_samples']} validation samples; "
                 f"÷ `output_error_lugre` ({f['oe']:.2f} s, {f['oe_nfev']} iterations, "
                 f"{f['oe_evals']} residual evaluations; + IDIM-LS start {f['idim']:.3f} s) "
                 f"= {f['ratio']:.1f}"))
    print(rows[-1], flush=True)

    if args.skip_memory:
        m_row = ("5. peak memory, 1e6-sample fit", "not run (--skip-memory)", "≤ 2 GB", "—", "")
    else:
        m = (parse_memory(args.memory_log.read_text(), float("nan"), 0) if args.memory_log
             else bench_memory(1_000_000, None if args.scale else MEMORY_LIMIT_S))
        if m is None:
            m = {"ok": False, "reason": f"no RESULT line in {args.memory_log}",
                 "elapsed": float("nan"), "peak": 0}
        if m["ok"]:
            m_row = ("5. peak memory, `SparseFric(static_only=False).fit`, 1e6 samples",
                     f"{m['rss'] / 2**30:.2f} GB ru_maxrss", "≤ 2 GB", _ok(m["rss"] <= 2**31),
                     f"fit {m['fit']:.0f} s (simulation {m['sim']:.1f} s); "
                     f"{m['rss_before'] / 2**30:.2f} GB before the fit; model {m['kind']}"
                     + (f"; from {args.memory_log.name}, a separate `--memory-child` run"
                        if args.memory_log else ""))
        else:
            m_row = ("5. peak memory, `SparseFric(static_only=False).fit`, 1e6 samples",
                     f"not measured: {m['reason']}", "≤ 2 GB", "—",
                     f"largest resident size seen {m['peak'] / 2**30:.2f} GB after "
                     f"{m['elapsed']:.0f} s")
    rows.append(m_row)
    print(rows[-1], flush=True)
    total = time.perf_counter() - t_all
    write(args.out, rows, total, args.scale)
    print(f"total {total:.0f} s; wrote {args.out}")
    return 0


def write(path: Path, rows, total: float, scale: bool) -> None:
    sys.path.insert(0, str(HERE))
    from run import machine, update_core_section  # the same machine line as RESULTS.md

    lines = ["# Core benchmarks", "",
             f"- date: {_dt.datetime.now().strftime('%Y-%m-%d %H:%M')}; machine: {machine()}",
             f"- reproduce: `python benchmarks/bench_core.py{' --scale' if scale else ''}` "
             f"(took {total:.0f} s); figure 5 in a child process, "
             f"{'without a time limit' if scale else 'stopped after 180 s unless --scale'}", "",
             "| benchmark | measured | target | | notes |", "|---|---|---|---|---|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    path.write_text("\n".join(lines) + "\n")
    if path == OUT:
        update_core_section()


if __name__ == "__main__":
    sys.exit(main())
