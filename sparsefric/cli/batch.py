"""``sparsefric batch``: every joint of a manifest identified, and the joints compared."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from sparsefric.cli.common import (
    EXIT_WARNINGS,
    _add_strict_option,
    _argument_type,
    _examples,
    _interactive,
    _positive,
    _say,
    _warn,
)
from sparsefric.options import DEFAULT_OUTLIER_RATIO, DEFAULT_OUTLIER_Z, integer_parser


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``batch`` to the subcommands ``sub`` of the main parser."""
    p = sub.add_parser("batch", help="identify many joints listed in a manifest",
                       description="Identify every joint of a CSV manifest (columns joint, "
                       "train[, validate, test, options…]) in parallel; write DIR/<joint>/ per "
                       "joint and DIR/summary.html, DIR/summary.csv. A rerun keeps the joints "
                       "already done whose row and files are unchanged (their status and "
                       "timings), redoes the others and retries the failed ones.",
                       epilog=_examples("sparsefric batch joints.csv --out results/ --workers 2",
                                        "sparsefric batch joints.csv --out results/ --scheduler "
                                        "tcp://10.0.0.5:8786 --force"))
    p.add_argument("manifest", help="CSV manifest, one row per joint")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory")
    p.add_argument("--workers", type=_argument_type(integer_parser(1)),
                   default=os.cpu_count() or 1, metavar="N",
                   help="local worker processes (default: the number of CPUs)")
    p.add_argument("--scheduler", default=None, metavar="tcp://HOST:PORT",
                   help="run on this Dask distributed scheduler instead of local processes")
    p.add_argument("--force", action="store_true",
                   help="redo joints whose model.json already exists (without it, only "
                   "joints whose manifest row or input files changed are redone)")
    p.add_argument("--outlier-z", type=_positive, default=DEFAULT_OUTLIER_Z, metavar="Z",
                   help=f"flag |robust z-score| above this (default: {DEFAULT_OUTLIER_Z:g})")
    p.add_argument("--outlier-ratio", type=_positive, default=DEFAULT_OUTLIER_RATIO,
                   metavar="R", help="also flag a friction parameter R times the median of the "
                   f"other joints or more, or 1/R of it or less (default: "
                   f"{DEFAULT_OUTLIER_RATIO:g})")
    _add_strict_option(p)
    quiet = p.add_mutually_exclusive_group()
    quiet.add_argument("--quiet", action="store_true",
                       help="no progress bar; print only failed joints, flags and errors")
    quiet.add_argument("--silent", action="store_true", help="print only errors")
    p.set_defaults(run=_run_batch)


def _run_batch(args: argparse.Namespace) -> int:
    """Exit status 0 if every joint succeeded or was skipped, 1 if any failed, else with
    ``--strict`` 3 if any joint's fit gave warnings (a bad manifest raises
    :class:`SparsefricError`)."""
    from sparsefric.atomic import check_out_dir
    from sparsefric.batch import run_manifest
    from sparsefric.fleet import count_text, flag_reasons

    check_out_dir(Path(args.out))
    table = run_manifest(args.manifest, args.out, workers=args.workers,
                         scheduler=args.scheduler, force=args.force,
                         progress=_interactive(args), outlier_z=args.outlier_z,
                         outlier_ratio=args.outlier_ratio)
    failed = table[table["status"] == "failed"]
    for r in failed.itertuples():
        print(f"sparsefric: joint {r.joint} failed: {r.error}", file=sys.stderr)
    for _, r in table[table["flagged"] != ""].iterrows():
        _warn(args, f"joint {r['joint']}: friction stands out: {flag_reasons(r)}")
    _say(args, f"{count_text(table)}; summary written to {Path(args.out) / 'summary.html'}")
    if len(failed):
        return 1
    warned = table["warnings"].fillna(0).gt(0).any() if "warnings" in table else False
    return EXIT_WARNINGS if args.strict and warned else 0
