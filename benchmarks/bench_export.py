"""Speed of the exported C friction step against the Python object, on recorded velocities.

Run:  .venv/bin/python benchmarks/bench_export.py          (~1 min; needs a C compiler as ``cc``)

The record is every data/example trajectory's velocity (Butterworth differentiation of the
measured angle, the files one after the other, repeated to 100,000 samples); the models are the
example truth as model A and as model B (K = 150 s/rad). The C code is exported, compiled with
``cc -O2`` (no -ffast-math) with a timing harness in its own translation unit (so no call is
inlined into the loop), and each variant — fixed-step and variable-step, double and float, and
six instances stepped in turn (a six-axis controller) — is timed over the whole record in
several runs; the median is printed. Times are the thread's CPU
time, so that other processes on a shared machine do not count. The Python object
(:class:`sparsefric.lugre.LuGreFriction`) is timed in this process, sample by sample (``step``)
and vectorised (``simulate``).

What bounds the C step (figures from this script, cc -O2, on a 2.0 GHz AMD EPYC shared with
other jobs): per sample it evaluates, one after the other, x^δ (a square root for δ = 1.5), the
Stribeck exponential in g(q̇), a division by the interval's g and the bristle decay exp(−a h),
which needs that g — a chain of about 40 ns of latency (the last table: sqrt 8 ns, each inline
exp 13 ns, division 3 ns, and the multiplications and additions between them). Only the last
update of z depends on the previous sample, so successive samples overlap, but only about two
such chains at a time: alone, on independent inputs, the chain x√x → exp → ÷ → exp costs 19 ns
(52 M/s), the ceiling of any exact step on this machine; without its square root 13 ns, without
its first exp 10.5 ns. The rest of a sample — the validity check, the viscous polynomial, ż's
division by g, the state — adds operations that compete for the same overlap, and z's update and
τ_f lengthen the chain: the step costs 29 ns (34 M/s double, 40 M/s float). By hand on the same
machine (code that is not exported): eight extra operations at the end of the bare chain cost
5 ns, eight independent ones 1.4 ns; a step written for model A alone, without the loops over
terms, ran at 39 M/s, and at 43 M/s without the validity check, the a h < 1e−12 test and ż's
division. Six independent instances stepped in turn run no faster than one: no dependency
between samples bounds the step. (One did until the state kept z apart from qd_prev: the
compiler stored both in one 16-byte store, so the next sample's decay waited for the previous
z — 32 M/s instead of 34.) -O3 or -march=native change nothing; a cheaper exp would, but
degree 3 takes the step outside the tests' 1e−9 tolerance (see sparsefric/export.py). So 50 M
steps/s, this project's target, is out of reach of an exact step at -O2 on this machine.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from sparsefric.data import load_trajectories
from sparsefric.differentiation import differentiate
from sparsefric.export import EXP_STEPS, export_model
from sparsefric.model import JointModel

EXAMPLE = Path(__file__).resolve().parent.parent / "data" / "example"
N = 100_000
DT = 1e-3
PREFIX = "bench_friction"
VARIANTS = ("step double", "step_dt double", "step float", "step_dt float",
            "step double, 6 joints")

HARNESS = r"""
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "bench_friction.h"

static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Steps per second of one pass over the record, for each variant; prints one line per run. */
int main(int argc, char **argv)
{
    double head[2];
    FILE *in = argc == 3 ? fopen(argv[1], "rb") : NULL;
    if (!in || fread(head, sizeof(double), 2, in) != 2) {
        return 2;
    }
    long n = (long)head[0];
    double *qd = malloc(2 * (size_t)n * sizeof(double));
    float *qf = malloc(2 * (size_t)n * sizeof(float));
    if (!qd || !qf || fread(qd, sizeof(double), 2 * (size_t)n, in) != 2 * (size_t)n) {
        return 2;
    }
    double *h = qd + n;
    float *hf = qf + n;
    for (long i = 0; i < 2 * n; i++) {
        qf[i] = (float)qd[i];
    }
    double sum = 0.0;
    for (int run = 0; run < atoi(argv[2]); run++) {
        bench_friction_state s;
        bench_friction_statef sf;
        double t[5];
        bench_friction_init(&s, &bench_friction_model, head[1], 0.0);
        t[0] = cpu_seconds();
        for (long i = 0; i < n; i++) sum += bench_friction_step(&s, qd[i]);
        t[1] = cpu_seconds();
        for (long i = 0; i < n; i++) sum += bench_friction_step_dt(&s, qd[i], h[i]);
        t[2] = cpu_seconds();
        bench_friction_initf(&sf, &bench_friction_modelf, (float)head[1], 0.0f);
        t[3] = cpu_seconds();
        for (long i = 0; i < n; i++) sum += bench_friction_stepf(&sf, qf[i]);
        t[4] = cpu_seconds();
        double t5 = cpu_seconds();
        for (long i = 0; i < n; i++) sum += bench_friction_step_dtf(&sf, qf[i], hf[i]);
        double t6 = cpu_seconds();
        /* six independent instances stepped in turn, as a six-axis controller does: nothing
           that one step computes waits for another's */
        bench_friction_state joint[6];
        for (int j = 0; j < 6; j++) {
            bench_friction_init(&joint[j], &bench_friction_model, head[1], 0.0);
        }
        long n6 = n - n % 6;
        double t7 = cpu_seconds();
        for (long i = 0; i < n6; i += 6) {
            for (int j = 0; j < 6; j++) sum += bench_friction_step(&joint[j], qd[i + j]);
        }
        double t8 = cpu_seconds();
        printf("%.6g %.6g %.6g %.6g %.6g\n", n / (t[1] - t[0]), n / (t[2] - t[1]),
               n / (t[4] - t[3]), n / (t6 - t5), n6 / (t8 - t7));
    }
    fprintf(stderr, "checksum %g\n", sum);
    return 0;
}
"""


PRIMITIVES = r"""
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "bench_friction.c" /* for its inline exp only; no step is called */

#define PER_E (@STEPS@.0 / 0.6931471805599453) /* the inline exp takes x @STEPS@/ln 2 */

static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Each loop's result is stored here before the clock is read, so that it cannot move past it. */
double results[10];

/* One timed loop: DEPENDENT feeds each result into the next input, otherwise the inputs are
   the independent x[i] and the results are summed. */
#define TIME(slot, init, update)                                                               \
    do {                                                                                       \
        double y = init, start = cpu_seconds();                                                \
        for (long i = 0; i < n; i++) {                                                         \
            update;                                                                            \
        }                                                                                      \
        results[slot] = y;                                                                     \
        ns[slot] = 1e9 * (cpu_seconds() - start) / n;                                          \
    } while (0)

/* ns per operation, one line per run: libm's exp and the exported code's inline exp, each in
   a dependent chain (latency) and on independent inputs (throughput); sqrt and division in a
   dependent chain; a step's own chain x sqrt(x) -> exp -> division -> exp on independent
   inputs, which is what successive steps can at best overlap, and that chain without its
   square root and without its first exp. */
int main(int argc, char **argv)
{
    long n = 1000000;
    double *x = malloc((size_t)n * sizeof(double));
    if (argc != 2 || !x) {
        return 2;
    }
    for (long i = 0; i < n; i++) {
        x[i] = 0.001 * (double)(i % 1000);
    }
    double sink = 0.0;
    for (int run = 0; run < atoi(argv[1]); run++) {
        double ns[10];
        TIME(0, 0.5, y = exp(-y));
        TIME(1, 0.0, y += exp(-x[i]));
        TIME(2, 0.5, y = bench_friction_exp_(y * PER_E, 1.0));
        TIME(3, 0.0, y += bench_friction_exp_(x[i] * PER_E, 1.0));
        TIME(4, 2.0, y = sqrt(y + 1.0));
        TIME(5, 0.5, y = 2.0 / (y + 1.0));
        TIME(6, 0.0, y += bench_friction_exp_(
            PER_E / (1.0 + bench_friction_exp_(x[i] * sqrt(x[i]) * PER_E, 1.0)), 1.0));
        TIME(7, 0.0, y += exp(-1.0 / (1.0 + exp(-x[i] * sqrt(x[i])))));
        TIME(8, 0.0, y += bench_friction_exp_(
            PER_E / (1.0 + bench_friction_exp_(x[i] * x[i] * PER_E, 1.0)), 1.0));
        TIME(9, 0.0, y += bench_friction_exp_(PER_E / (1.0 + x[i] * sqrt(x[i])), 1.0));
        for (int k = 0; k < 10; k++) {
            sink += results[k];
            printf("%.6g ", ns[k]);
        }
        printf("\n");
    }
    fprintf(stderr, "checksum %g\n", sink);
    free(x);
    return 0;
}
"""
PRIMITIVE_NAMES = ("exp (libm), dependent", "exp (libm), independent",
                   "exp (inline), dependent", "exp (inline), independent",
                   "sqrt + add, dependent", "division + add, dependent",
                   "step chain (inline exp)", "step chain (libm exp)",
                   "step chain without sqrt", "step chain without 1st exp")


def recorded_velocity() -> np.ndarray:
    """Every data/example file's velocity [rad/s], concatenated and repeated to N samples."""
    parts = [differentiate(tr.t, tr.q, tr.tau, method="butterworth").qd
             for path in sorted(EXAMPLE.glob("*.csv")) for tr in load_trajectories(path)]
    return np.resize(np.concatenate(parts), N)


def _compile_and_run(sources: list[Path], args: list[str], work: Path) -> np.ndarray:
    """Compile ``sources`` with ``cc -O2`` and the math library, run the program with ``args``
    and return its output lines of numbers as rows."""
    exe = work / sources[0].stem
    subprocess.run(["cc", "-std=c99", "-O2", f"-I{work}", *map(str, sources), "-lm", "-o",
                    str(exe)], check=True)
    out = subprocess.run([str(exe), *args], check=True, capture_output=True, text=True).stdout
    return np.array([[float(x) for x in line.split()] for line in out.splitlines()])


def c_steps_per_second(model: JointModel, qd: np.ndarray, h: np.ndarray, runs: int,
                       work: Path) -> dict[str, float]:
    """Median steps/s of each C variant, compiled with ``cc -O2``."""
    export_model(model, "c", work, prefix=PREFIX)
    (work / "harness.c").write_text(HARNESS)
    np.r_[N, DT, qd, h].tofile(work / "in.bin")
    rates = _compile_and_run([work / "harness.c", work / f"{PREFIX}.c"],
                             [str(work / "in.bin"), str(runs)], work)
    return dict(zip(VARIANTS, np.median(rates, axis=0), strict=True))


def primitive_ns(model: JointModel, runs: int, work: Path) -> dict[str, float]:
    """Median ns per exp, sqrt, division and a step's chain of them, compiled like the exported
    code (whose inline exp it uses)."""
    export_model(model, "c", work, prefix=PREFIX)
    (work / "primitives.c").write_text(PRIMITIVES.replace("@STEPS@", str(EXP_STEPS)))
    times = _compile_and_run([work / "primitives.c"], [str(runs)], work)
    return dict(zip(PRIMITIVE_NAMES, np.median(times, axis=0), strict=True))


def python_steps_per_second(model: JointModel, qd: np.ndarray, runs: int) -> dict[str, float]:
    """Median steps/s of the Python object: ``step`` on 20,000 samples, ``simulate`` on all."""
    f = model.friction_object()
    f.step(0.1, DT)  # compile the kernels first
    f.simulate(qd[:10], DT)
    out: dict[str, list[float]] = {"Python step": [], "Python simulate": []}
    for _ in range(runs):
        f.reset()
        start = time.process_time()
        for v in qd[:20_000]:
            f.step(v, DT)
        out["Python step"].append(20_000 / (time.process_time() - start))
        f.reset()
        start = time.process_time()
        f.simulate(qd, DT)
        out["Python simulate"].append(N / (time.process_time() - start))
    return {k: float(np.median(v)) for k, v in out.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="timed runs per variant")
    args = parser.parse_args(argv)
    if shutil.which("cc") is None:
        print("no C compiler found as 'cc': nothing to measure", file=sys.stderr)
        return 1
    qd = recorded_velocity()
    h = DT * (1 + 0.01 * np.sin(np.arange(N)))
    truth = JointModel.load(EXAMPLE / "truth.json")
    print(f"{N} samples of data/example velocities (median |qd| "
          f"{np.median(np.abs(qd)):.3g} rad/s), median of {args.runs} runs, thread CPU time\n")
    print(f"{'model':<10}{'variant':<24}{'steps/s':>14}{'vs Python step':>16}")
    for label, model in (("A", truth), ("B", truth.with_(tanh_k=150.0))):
        with tempfile.TemporaryDirectory() as work:
            rates = c_steps_per_second(model, qd, h, args.runs, Path(work))
        rates.update(python_steps_per_second(model, qd, args.runs))
        base = rates["Python step"]
        for name, rate in rates.items():
            print(f"{label:<10}{name:<24}{rate:>14.4g}{rate / base:>15.0f}×")
    with tempfile.TemporaryDirectory() as work:
        costs = primitive_ns(truth, args.runs, Path(work))
    print(f"\n{'operation (cc -O2)':<28}{'ns':>8}{'steps/s at most':>18}")
    for name, ns in costs.items():
        bound = f"{1e9 / ns:>18.3g}" if name.startswith("step chain (") else ""
        print(f"{name:<28}{ns:>8.2f}{bound}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
