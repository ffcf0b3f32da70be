"""Ablation: the paper's algorithm as published, then each sparsefric addition switched on alone.

Run:  nice python benchmarks/ablation.py                  (data/example, zoo joints 0–9 of seed
                                                            2024, EMPS; ~25 min on one core)
      nice python benchmarks/ablation.py --zoo 4 --workers 2
      nice python benchmarks/ablation.py --sets example --no-write

Rows: ``SparseFric(recipe="paper")`` (``sparsefric.recipes``: no refinement, no σ0 polish, no
sliding window, unscaled columns with the λ grid 1 … 1e5, AICc with m = 10 evaluated as printed
on the validation data, Ω_s start 0.01, σ0 starts 1e3 … 1e5, rigid body frozen after step 2's
first iteration, the paper's inner and outer rules, TVRegDiff weight 1000); then that recipe
with one option set to sparsefric's value; then the full default, and the default with the
paper's inner or outer rule (the effect of the rules on the pipeline as shipped).

Scores: data/example against its truth (static curve RMS % over 0.02–2.1 rad/s, break-away,
σ0, σ1 in % of the truth, test error ‖τ − τ̂‖/‖τ‖ in %); the zoo joints with
``benchmarks/zoo.py``'s scores (medians of |error| over the joints; the test error as the ratio
to the true model's on the same test data; pass = zoo's criteria); EMPS (real data, first 70 %
train, last 30 % test, no truth): test error and the identified σ0, σ1. Every model is scored
on the same TV-differentiated test data. Writes the section "Ablation" of
benchmarks/RESULTS.md (the rest of the file is kept) and benchmarks/out/ablation.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from multiprocessing import Pool
from pathlib import Path

import numpy as np
import pandas as pd
import zoo
from run import (
    RESULTS,
    STATIC_RANGE,
    emps,
    example,
    machine,
    md_table,
    replace_section,
    warm_up,
)

from sparsefric.atomic import write_text
from sparsefric.estimator import SparseFric
from sparsefric.model import JointModel
from sparsefric.preprocessing import Prepared, Preprocessor
from sparsefric.recipes import AUTO, DEFAULT_OMEGA_STARTS

OUT = Path(__file__).resolve().parent / "out" / "ablation.json"
HEADING = "## Ablation: the paper's algorithm, then each addition"

#: (label, options) of every row; the paper rows add their options to ``recipe="paper"``.
PAPER_ROWS: tuple[tuple[str, dict], ...] = (
    ("paper", {}),
    ("+ refinement (§9)", {"refine": True}),
    ("+ σ0 polish (§14)", {"polish": True}),
    ("+ sliding window (§4)", {"sliding_window": True}),
    ("+ scaled columns, automatic grid (§2)", {"scale_columns": True, "lambdas": AUTO}),
    ("+ AICc m = 4(p+2), guarded (§1)", {"aic_parts": AUTO, "aic_domain": "guarded"}),
    ("+ AICc on training + validation (§15)", {"aic_data": "training+validation"}),
    ("+ Ω_s starts 0.002–0.2 (§5)", {"omega_starts": DEFAULT_OMEGA_STARTS}),
    ("+ σ0 starts scaled with g(0) (§13)", {"sigma0_starts": AUTO}),
    ("+ rigid body refit (§24)", {"refit_rigid": True}),
    ("+ inner rule: search (§27, §47)", {"inner_rule": "search"}),
    ("+ outer stop: σ0 and g (§7)", {"outer_stop": "sigma0+g"}),
    ("+ automatic TV weight (§23)", {"tv_weight": AUTO}),
    ("+ Ω_s by the profile's minimum (§28)", {"omega_step": "profile"}),
)
DEFAULT_ROWS: tuple[tuple[str, dict], ...] = (
    ("sparsefric (default)", {}),
    ("sparsefric, inner rule: paper", {"inner_rule": "paper"}),
    ("sparsefric, inner rule: best (the walk)", {"inner_rule": "best"}),
    ("sparsefric, outer stop: σ0", {"outer_stop": "sigma0"}),
    ("sparsefric, Ω_s by the profile (§28)", {"omega_step": "profile"}),
)
ROWS = tuple((label, {"recipe": "paper", **kw}) for label, kw in PAPER_ROWS) + DEFAULT_ROWS
SETS = ("example", "zoo", "emps")


def _pct(est: float, true: float) -> float:
    return 100.0 * (est / true - 1.0) if true else float("nan")


def fit(axis: str, options: dict, train, validate) -> tuple[SparseFric | None, float, str]:
    """The estimator of ``options`` fitted, its wall time [s], and the error of a failed fit."""
    t0 = time.perf_counter()
    try:
        est = SparseFric(axis=axis, **options).fit(train, validate=validate or None)
    except Exception as exc:  # noqa: BLE001 — a failing configuration is a result
        return None, time.perf_counter() - t0, f"{type(exc).__name__}: {exc}"[:160]
    return est, time.perf_counter() - t0, ""


def _dynamic_errors(model: JointModel, truth: JointModel) -> dict[str, float]:
    lugre = model.kind == "lugre"
    return {"sigma0": _pct(model.sigma0, truth.sigma0) if lugre else float("nan"),
            "sigma1": _pct(model.sigma1, truth.sigma1) if lugre else float("nan")}


def run_dataset(ds, scores: Callable[[JointModel, Prepared], dict]) -> list[dict]:
    """Every row on the data set ``ds`` of ``benchmarks/run.py``; ``scores(model, test)``."""
    scorer = Preprocessor().prepare(ds.test)
    rows = []
    for label, options in ROWS:
        est, wall, error = fit(ds.axis, options, ds.train, ds.validate)
        row = {"set": ds.name, "joint": 0, "config": label, "wall_s": wall, "error": error}
        if est is not None:
            row.update(kind=est.model_.kind, **scores(est.model_, scorer))
        rows.append(row)
    return rows


def run_example() -> list[dict]:
    """Every row on data/example, scored against its truth."""
    ds = example()
    truth, v_max = ds.truth, 1.2 * STATIC_RANGE[1]

    def scores(m: JointModel, scorer: Prepared) -> dict:
        return {"static": zoo.static_rms(m, truth, STATIC_RANGE),
                "breakaway": _pct(m.breakaway_torque(v_max=v_max),
                                  truth.breakaway_torque(v_max=v_max)),
                "I": _pct(m.inertia, truth.inertia), **_dynamic_errors(m, truth),
                "test": 100 * scorer.relative_error(m)}
    return run_dataset(ds, scores)


def run_emps() -> list[dict]:
    """Every row on EMPS: test error and the identified values (no truth)."""
    def scores(m: JointModel, scorer: Prepared) -> dict:
        return {"coulomb": m.coulomb, "sigma0_value": m.sigma0, "sigma1_value": m.sigma1,
                "test": 100 * scorer.relative_error(m)}
    return run_dataset(emps(), scores)


def run_zoo_joint(seed: int, index: int) -> list[dict]:
    """Every row on zoo joint ``index`` of ``seed``, scored as ``benchmarks/zoo.py`` does."""
    spec = zoo.draw_joint(seed, index)
    data = zoo.simulate_joint(spec)
    scorer = Preprocessor().prepare(data.test)
    truth_test = scorer.relative_error(spec.truth)
    reached = zoo.reaches_stribeck(data)
    rows = []
    for label, options in ROWS:
        def one(options: dict = options) -> tuple[JointModel, list[str], dict]:
            est = SparseFric(axis=spec.truth.axis, **options).fit(
                data.train, validate=data.validate or None)
            return est.model_, est.warnings_, {}
        scores = zoo.score(zoo.timed("sparsefric", one), data, scorer, truth_test, reached)
        rows.append({"set": "zoo", "joint": index, "config": label,
                     **{k: scores.get(k) for k in ("wall_s", "error", "kind", "static",
                                                   "breakaway", "I", "sigma0", "sigma1",
                                                   "test_ratio", "pass", "reached")}})
    return rows


def run_task(task: tuple) -> list[dict]:
    """One unit of work for the pool: ("example",), ("emps",) or ("zoo", seed, index)."""
    kind, *args = task
    return {"example": run_example, "emps": run_emps, "zoo": run_zoo_joint}[kind](*args)


# ---------------------------------------------------------------------------- tables
def _fmt(x: object, digits: int = 1) -> str:
    if x is None or (isinstance(x, float) and not np.isfinite(x)):
        return "—"
    return f"{x:+.{digits}f}" if isinstance(x, float) else str(x)


def example_table(df: pd.DataFrame) -> pd.DataFrame:
    """One row per configuration: signed errors [%] on data/example."""
    out = pd.DataFrame({
        "configuration": df.config, "model": df.get("kind"),
        "static RMS %": df.static.map(lambda v: _fmt(v, 2).lstrip("+")),
        "break-away %": df.breakaway.map(_fmt), "I %": df.I.map(_fmt),
        "σ0 %": df.sigma0.map(_fmt), "σ1 %": df.sigma1.map(_fmt),
        "test %": df.test.map(lambda v: _fmt(v, 3).lstrip("+")),
        "wall s": df.wall_s.map(lambda v: f"{v:.1f}")})
    return out


def emps_table(df: pd.DataFrame) -> pd.DataFrame:
    """One row per configuration on EMPS: the identified values and the test error."""
    def val(v: object) -> str:
        return "—" if v is None or not np.isfinite(v) else f"{v:.4g}"
    return pd.DataFrame({
        "configuration": df.config, "model": df.get("kind"), "f_c N": df.coulomb.map(val),
        "σ0 N/m": df.sigma0_value.map(val), "σ1 N·s/m": df.sigma1_value.map(val),
        "test %": df.test.map(lambda v: val(v) if v is None else f"{v:.3f}"),
        "wall s": df.wall_s.map(lambda v: f"{v:.1f}"), "failed": df.error.fillna("")})


def zoo_table(df: pd.DataFrame) -> pd.DataFrame:
    """One row per configuration: medians of |error| over the zoo joints, passes, time."""
    rows, base = [], None
    for label, _ in ROWS:
        g = df[df.config == label]
        med = {k: float(np.nanmedian(np.abs(g[k].astype(float)))) if g[k].notna().any()
               else float("nan") for k in ("static", "breakaway", "I", "sigma0", "sigma1")}
        reached = g[g.reached.astype(bool)]
        test = float(np.nanmedian(g.test_ratio.astype(float)))
        passed = int(g["pass"].astype(bool).sum())
        base = base or (passed, test)
        rows.append({
            "configuration": label, "static %": f"{med['static']:.2f}",
            "break-away % (reached)": f"{np.nanmedian(np.abs(reached.breakaway)):.1f}"
            if len(reached) else "—",
            "I %": f"{med['I']:.2f}", "σ0 %": f"{med['sigma0']:.0f}",
            "σ1 %": f"{med['sigma1']:.0f}", "test ÷ truth": f"{test:.3f}",
            "pass": f"{passed}/{len(g)}", "Δ pass": f"{passed - base[0]:+d}",
            "failed": int((g.error.fillna("") != "").sum()),
            "wall s": f"{g.wall_s.sum():.0f}"})
    return pd.DataFrame(rows)


def section(df: pd.DataFrame, args: argparse.Namespace, total_s: float) -> str:
    """The RESULTS.md section of this run."""
    cmd = "python benchmarks/ablation.py" + (f" --zoo {args.zoo}" if args.zoo != 10 else "")
    parts = [HEADING, "", f"- machine: {machine()}",
             f"- reproduce: `nice {cmd}` (total wall time {total_s:.0f} s, "
             f"{args.workers} worker{'s' if args.workers > 1 else ''})", "",
             __doc__.split("\n\n", 2)[2].split("Writes")[0].strip(), "",
             "What each addition buys, and which do not pay for themselves: docs/DESIGN.md §27."]
    if (ex := df[df.set == "example"]).size:
        parts += ["", "### data/example", "", md_table(example_table(ex.reset_index()))]
    if (z := df[df.set == "zoo"]).size:
        parts += ["", f"### Zoo: seed {args.seed}, joints {z.joint.min()}–{z.joint.max()} "
                  "(medians of |error| over the joints)", "", md_table(zoo_table(z))]
    if (e := df[df.set == "emps"]).size:
        parts += ["", "### EMPS (real data, no truth)", "", md_table(emps_table(e.reset_index()))]
    return "\n".join(parts) + "\n"


# ---------------------------------------------------------------------------- CLI
def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default=",".join(SETS), help="comma-separated subset of "
                                                           f"{','.join(SETS)}")
    ap.add_argument("--zoo", type=int, default=10, help="zoo joints 0 … N−1 (default 10)")
    ap.add_argument("--seed", type=int, default=zoo.DEFAULT_SEED)
    ap.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    ap.add_argument("--no-write", dest="write", action="store_false",
                    help="print the section instead of writing RESULTS.md")
    args = ap.parse_args(argv)
    args.sets = [s.strip() for s in args.sets.split(",") if s.strip()]
    if bad := [s for s in args.sets if s not in SETS]:
        ap.error(f"unknown set(s) {', '.join(bad)}; choose from {', '.join(SETS)}")
    return args


def tasks(args: argparse.Namespace) -> list[tuple]:
    """The work units, the longest (zoo joints) first."""
    out: list[tuple] = [("zoo", args.seed, i) for i in range(args.zoo)] \
        if "zoo" in args.sets else []
    return out + [(s,) for s in ("example", "emps") if s in args.sets]


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    print(f"numba warm-up {warm_up():.1f} s; {len(ROWS)} configurations", flush=True)
    t0 = time.perf_counter()
    rows: list[dict] = []
    with Pool(args.workers) as pool:
        for done in pool.imap_unordered(run_task, tasks(args)):
            rows += done
            print(f"{done[0]['set']} {done[0]['joint']}: "
                  f"{sum(r['wall_s'] or 0 for r in done):.0f} s", flush=True)
    df = pd.DataFrame(rows)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    write_text(OUT, json.dumps(zoo._jsonable(rows), indent=1))
    text = section(df, args, time.perf_counter() - t0)
    if args.write:
        write_text(RESULTS, replace_section(RESULTS.read_text(), HEADING, text))
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
