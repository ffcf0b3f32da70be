"""Coverage of sparsefric's confidence intervals on the simulated joints of the zoo.

Run:  python benchmarks/interval_coverage.py            (joints 0–29 of seed 2024, fast)
      python benchmarks/interval_coverage.py --joints 0,1,4 --method bootstrap --resamples 40
      python benchmarks/interval_coverage.py --joints 0-3 --out benchmarks/out/interval_coverage

For every joint of ``benchmarks/zoo.py`` (truth, records and noise drawn by ``zoo.draw_joint``,
simulated by ``zoo.simulate_joint``) the joint is identified with the defaults
(``SparseFric(axis).fit(train, validate=val)``), the intervals of level ``--level`` are
computed by ``--method`` (``fast``: :func:`sparsefric.uncertainty.fast_uncertainty` on the
prepared training and validation data; ``bootstrap``: :func:`~sparsefric.uncertainty.
bootstrap_uncertainty`), and for I, f_c, the break-away torque, σ0 and σ1 it is recorded
whether the interval contains the truth, and its relative width (upper − lower)/|truth|.

A nominal 95 % interval should contain the truth on 85–99 % of the joints, and is useful only
if it is narrow; the summary gives both per parameter, over all joints and over the joints
whose identified structure is right (the truth's friction kind, viscous powers and number of
Stribeck terms: intervals conditioned on a wrong structure cannot be expected to cover). The truth's
break-away torque is taken up to the fastest recorded speed, as the interval's.

Outputs in ``--out`` (git-ignored): ``coverage_METHOD.csv`` (one row per joint and quantity)
and ``coverage_METHOD.md`` (the summary, printed at the end). Joints already in the CSV are
skipped unless ``--fresh``; a failing fit is a row with its error.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import zoo

from sparsefric.identify import SparseFric
from sparsefric.model import JointModel
from sparsefric.uncertainty import estimate_uncertainty

OUT = Path(__file__).resolve().parent / "out" / "coverage"
#: The checked quantities: interval name → how the truth gives its value (v_max: break-away).
CHECKED = ("inertia", "coulomb", "breakaway", "sigma0", "sigma1")


def truth_value(truth: JointModel, name: str, v_max: float) -> float:
    """The true value of a checked quantity [its unit]."""
    if name == "breakaway":
        return truth.breakaway_torque(v_max)
    return float(getattr(truth, name))


def structure(model: JointModel) -> str:
    """The friction structure: kind, viscous powers and Stribeck exponents, e.g.
    ``lugre c1,c3 δ0.5,2``."""
    powers = ",".join(f"c{p}" for p, _ in sorted(model.viscous))
    deltas = ",".join(f"{d:g}" for d, _ in sorted(model.stribeck)) or "-"
    return f"{model.kind} {powers or '-'} δ{deltas}"


def same_structure(model: JointModel, truth: JointModel) -> bool:
    """Whether ``model`` has the truth's friction kind, viscous powers and number of Stribeck
    terms (the exponents δ lie on the library's grid, the zoo's anywhere in 0.5–3)."""
    return (model.kind == truth.kind
            and sorted(p for p, _ in model.viscous) == sorted(p for p, _ in truth.viscous)
            and len(model.stribeck) == len(truth.stribeck))


def assess_joint(seed: int, index: int, args: argparse.Namespace) -> list[dict]:
    """Rows (one per checked quantity) of one joint: truth, estimate, interval, covered."""
    spec = zoo.draw_joint(seed, index)
    data = zoo.simulate_joint(spec)
    base = {"joint": index, "axis": spec.truth.axis, "design": spec.design,
            "samples": sum(len(t) for t in data.train + data.validate)}
    t0 = time.perf_counter()
    try:
        est = SparseFric(axis=spec.truth.axis).fit(data.train, validate=data.validate or None)
        fit_s = time.perf_counter() - t0
        unc = estimate_uncertainty(est.result_, data.train, data.validate or None,
                                   est.settings(), method=args.method, level=args.level,
                                   **_method_options(args))
    except Exception as exc:  # noqa: BLE001 - a failing joint is a row, not a crash
        return [{**base, "name": name, "error": str(exc).splitlines()[0][:200]}
                for name in CHECKED]
    unc_s = time.perf_counter() - t0 - fit_s
    v_max = float(np.max(np.abs(np.concatenate([t.truth["qd_true"]
                                                for t in data.train + data.validate]))))
    table = unc.table.set_index("name")
    rows = []
    for name in CHECKED:
        truth = truth_value(spec.truth, name, v_max)
        row = {**base, "name": name, "truth": truth, "structure": structure(est.model_),
               "true_structure": structure(spec.truth),
               "structure_ok": same_structure(est.model_, spec.truth),
               "fit_s": fit_s, "uncertainty_s": unc_s, "error": ""}
        if name in table.index:
            lo, hi = float(table.loc[name, "lower"]), float(table.loc[name, "upper"])
            row.update(estimate=float(table.loc[name, "estimate"]), lower=lo, upper=hi,
                       covered=bool(lo <= truth <= hi), rel_width=(hi - lo) / abs(truth))
        rows.append(row)
    return rows


def _method_options(args: argparse.Namespace) -> dict:
    if args.method == "bootstrap":
        return {"resamples": args.resamples, "workers": args.workers, "seed": args.seed}
    return {}


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per quantity: joints with an interval, coverage and median relative width, over all
    joints and over those with the right structure."""
    rows = []
    for name in CHECKED:
        d = df[(df.name == name) & df.covered.notna()]
        ok = d[d.structure_ok.astype(bool)]
        rows.append({"quantity": name, "joints": len(d),
                     "coverage": _share(d.covered), "median rel. width": _median(d.rel_width),
                     "joints (structure ok)": len(ok), "coverage (structure ok)":
                     _share(ok.covered), "median rel. width (structure ok)":
                     _median(ok.rel_width)})
    return pd.DataFrame(rows)


def _share(x: pd.Series) -> str:
    return f"{x.astype(bool).mean():.0%}" if len(x) else "–"


def _median(x: pd.Series) -> str:
    return f"{x.median():.3g}" if len(x) else "–"


def md_table(df: pd.DataFrame) -> str:
    lines = ["| " + " | ".join(df.columns) + " |", "|" + "|".join("---" for _ in df.columns) + "|"]
    lines += ["| " + " | ".join(str(v) for v in r) + " |" for r in df.itertuples(index=False)]
    return "\n".join(lines)


def parse_joints(text: str) -> list[int]:
    """``"0-29"`` or ``"0,3,7"`` (or both, comma-separated) → joint indices."""
    out: list[int] = []
    for part in filter(None, text.split(",")):
        lo, _, hi = part.partition("-")
        out += list(range(int(lo), int(hi) + 1)) if hi else [int(lo)]
    return out


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=zoo.DEFAULT_SEED)
    ap.add_argument("--joints", default="0-29", help="indices, e.g. 0-29 or 0,3,7")
    ap.add_argument("--method", choices=("fast", "bootstrap"), default="fast")
    ap.add_argument("--level", type=float, default=0.95)
    ap.add_argument("--resamples", type=int, default=50, help="bootstrap resamples")
    ap.add_argument("--workers", type=int, default=None, help="bootstrap processes")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--fresh", action="store_true", help="redo joints already in the CSV")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    csv = args.out / f"coverage_{args.method}.csv"
    done = pd.read_csv(csv) if csv.exists() and not args.fresh else pd.DataFrame()
    seen = set(done.joint) if not done.empty else set()
    for index in parse_joints(args.joints):
        if index in seen:
            continue
        rows = pd.DataFrame(assess_joint(args.seed, index, args))
        done = pd.concat([done, rows], ignore_index=True)
        done.to_csv(csv, index=False)
        print(rows.drop(columns=["axis", "design", "true_structure"], errors="ignore")
              .to_string(index=False), flush=True)
    if "covered" not in done:
        print("no joint produced an interval")
        return 1
    text = (f"# Coverage of the {args.level:.0%} intervals ({args.method}), seed {args.seed}, "
            f"joints {args.joints}\n\n" + md_table(summary(done)) + "\n")
    (args.out / f"coverage_{args.method}.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
