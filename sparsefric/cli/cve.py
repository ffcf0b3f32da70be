"""``sparsefric cve``: friction–velocity points from constant-velocity back-and-forth moves."""

from __future__ import annotations

import argparse
from pathlib import Path

from sparsefric.cli.common import _add_data_options, _add_output_options, _examples, _load, _say
from sparsefric.errors import SparsefricError


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``cve`` to the subcommands ``sub`` of the main parser."""
    p = sub.add_parser("cve", help="friction–velocity points from constant-velocity moves",
                       description="Constant-velocity experiments (main paper §5.1): on the "
                                   "constant-velocity parts of back-and-forth moves, friction "
                                   "(τ⁺ − τ⁻)/2 and gravity (τ⁺ + τ⁻)/2 at matched positions. "
                                   "Writes DIR/cve_points.csv.",
                       epilog=_examples("sparsefric cve data/example/train_*.csv "
                                        "data/example/test_*.csv --out results/cve"))
    p.add_argument("files", nargs="+", help="trajectory files with back-and-forth moves")
    _add_output_options(p, None)
    _add_data_options(p, differentiation="butterworth", torque_timing=False)
    p.set_defaults(run=_run_cve)


def _run_cve(args: argparse.Namespace) -> int:
    from sparsefric.atomic import refuse_results, staged
    from sparsefric.validation import cve_from_trajectories

    refuse_results(Path(args.out), ("cve_points.csv",), args.force)
    points = cve_from_trajectories(_load(args.files, args, "trajectory"),
                                   method=args.differentiation,
                                   regularization=args.regularization,
                                   cutoff_hz=args.cutoff_hz)
    if points.empty:
        raise SparsefricError("no constant-velocity parts moving both ways were found in "
                              + ", ".join(args.files))

    def work(stage: Path) -> None:
        points.to_csv(stage / "cve_points.csv", index=False)

    staged(Path(args.out), work)
    _say(args, points.to_string(index=False, float_format=lambda v: f"{v:.5g}"))
    _say(args, f"{len(points)} friction–velocity points written to {args.out}/cve_points.csv")
    return 0
