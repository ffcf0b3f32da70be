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
if it is narrow; the summary gives both per parameter (and the share of joints whose interval
is finite and holds the truth: an interval open on one side is honest, not a bound), over all
joints and over the joints whose identified structure is right (the truth's friction kind,
viscous powers and number of Stribeck terms: intervals conditioned on a wrong structure cannot
be expected to cover). The truth's break-away torque is taken up to the fastest recorded speed,
as the interval's.

The bootstrap also scores its term inclusion frequencies (the share of the resamples whose final
model has a term). A true term should be kept by ≥ 90 % of the resamples on the joints whose data
reach it, and no spurious term by more than 20 % on ≥ 80 % of the joints. Scored: the Coulomb
level, the linear viscous term, the Stribeck rise of any exponent (``stribeck_family`` rows: at
least k rises; the exponents of the candidate grid are not the truth's, and neighbouring ones
share the resamples) and the faster-than-linear viscous term of any power
(``viscous_family`` rows: at least k powers p ≥ 2, which over one speed range share the
resamples as the exponents do). A true term is reached where its torque exceeds the torque
noise: a viscous term's at the fastest recorded speed (the k-th largest of the powers p ≥ 2 for
the k-th family row), a Stribeck rise's amplitude on a joint whose records slide in its region
(``zoo.reaches_stribeck``).

Outputs in ``--out`` (git-ignored): ``coverage_METHOD.csv`` (one row per joint and quantity),
for the bootstrap ``inclusion.csv`` (one row per joint and scored term), and
``coverage_METHOD.md`` (the summary, printed at the end). Joints already in the CSV are
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

from sparsefric.estimator import SparseFric
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


#: A true term is to be kept by at least this share of the resamples, a spurious one by at most
#: ``SPURIOUS_MAX``, on at least ``SPURIOUS_JOINTS`` of the joints.
TRUE_MIN, SPURIOUS_MAX, SPURIOUS_JOINTS = 0.9, 0.2, 0.8


def inclusion_rows(spec: zoo.JointSpec, data: zoo.JointData, inclusion: pd.DataFrame
                   ) -> list[dict]:
    """One row per scored term of a bootstrap's ``inclusion`` table: its final share, whether
    the truth has it, and whether the data reach it (torque above the noise)."""
    truth, noise = spec.truth, spec.torque_noise
    v_max = max(float(np.max(np.abs(t.truth["qd_true"]))) for t in data.train + data.validate)
    powers = {float(p): abs(c) * v_max ** p for p, c in truth.viscous if c != 0}
    faster = sorted((t for p, t in powers.items() if p >= 2), reverse=True)
    amplitudes = sorted((a for _, a in truth.stribeck), reverse=True)
    reached = zoo.reaches_stribeck(data)
    rows = []
    for row in inclusion.itertuples():
        k = int(row.term[0]) if row.term[0].isdigit() else 1  # of a family row
        if row.term == "qd":
            true = 1.0 in powers
            reach = true and powers[1.0] > noise
        elif row.kind == "coulomb":
            true, reach = truth.coulomb > 0, truth.coulomb > noise
        elif row.kind == "stribeck_family":
            true = k <= len(amplitudes)
            reach = true and reached and amplitudes[k - 1] > noise
        elif row.kind == "viscous_family":
            true = k <= len(faster)
            reach = true and faster[k - 1] > noise
        else:
            continue  # single exponents and powers p ≥ 2: scored by their family
        rows.append({"joint": spec.index, "term": row.term, "kind": row.kind,
                     "final": float(row.final), "true": true, "reached": bool(reach)})
    return rows


def inclusion_summary(df: pd.DataFrame) -> str:
    """The inclusion criteria over the scored joints, as markdown lines."""
    true = df[df.true & df.reached]
    joints = (~df.true & (df.final > SPURIOUS_MAX)).groupby(df.joint).sum() == 0
    missed = ", ".join(f"{r.joint}:{r.term} {r.final:.2f}" for r in
                       true[true.final < TRUE_MIN].itertuples()) or "none"
    spurious = ", ".join(f"{r.joint}:{r.term} {r.final:.2f}" for r in
                         df[~df.true & (df.final > SPURIOUS_MAX)].itertuples()) or "none"
    return "\n".join([
        f"- true terms the data reach kept by ≥ {TRUE_MIN:.0%} of the resamples: "
        f"{int((true.final >= TRUE_MIN).sum())} of {len(true)} (below: {missed})",
        f"- joints with no spurious term above {SPURIOUS_MAX:.0%}: {int(joints.sum())} of "
        f"{len(joints)} (target ≥ {SPURIOUS_JOINTS:.0%}; above: {spurious})"])


def assess_joint(seed: int, index: int, args: argparse.Namespace
                 ) -> tuple[list[dict], list[dict]]:
    """Rows (one per checked quantity) of one joint: truth, estimate, interval, covered; and
    its inclusion rows (bootstrap only, :func:`inclusion_rows`)."""
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
                for name in CHECKED], []
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
    if unc.inclusion is None:
        return rows, []
    return rows, inclusion_rows(spec, data, unc.inclusion)


def _method_options(args: argparse.Namespace) -> dict:
    if args.method == "bootstrap":
        return {"resamples": args.resamples, "workers": args.workers, "seed": args.seed}
    return {}


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per quantity: joints with an interval, coverage and median relative width, over all
    joints and over those with the right structure; and the share of joints whose interval is
    finite *and* holds the truth (an open interval is honest but useless as a bound)."""
    rows = []
    for name in CHECKED:
        d = df[(df.name == name) & df.covered.notna()]
        ok = d[d.structure_ok.astype(bool)]
        finite = np.isfinite(d.rel_width.astype(float))
        rows.append({"quantity": name, "joints": len(d),
                     "coverage": _share(d.covered), "median rel. width": _median(d.rel_width),
                     "finite and covering": _share(d.covered.astype(bool) & finite),
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
    terms_csv = args.out / "inclusion.csv"
    done, terms = ((pd.read_csv(f) if f.exists() and not args.fresh else pd.DataFrame())
                   for f in (csv, terms_csv))
    seen = set(done.joint) if not done.empty else set()
    for index in parse_joints(args.joints):
        if index in seen:
            continue
        quantities, scored = assess_joint(args.seed, index, args)
        rows = pd.DataFrame(quantities)
        done = pd.concat([done, rows], ignore_index=True)
        done.to_csv(csv, index=False)
        if scored:
            terms = pd.concat([terms, pd.DataFrame(scored)], ignore_index=True)
            terms.to_csv(terms_csv, index=False)
        print(rows.drop(columns=["axis", "design", "true_structure"], errors="ignore")
              .to_string(index=False), flush=True)
    if "covered" not in done:
        print("no joint produced an interval")
        return 1
    text = (f"# Coverage of the {args.level:.0%} intervals ({args.method}), seed {args.seed}, "
            f"joints {args.joints}\n\n" + md_table(summary(done)) + "\n")
    if args.method == "bootstrap" and not terms.empty:
        text += "\n## Term inclusion (bootstrap)\n\n" + inclusion_summary(terms) + "\n"
    (args.out / f"coverage_{args.method}.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
