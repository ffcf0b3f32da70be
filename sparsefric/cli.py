"""Command line: ``sparsefric identify | predict | simulate | cve | batch``.

Every problem with the user's input ends in one line ``sparsefric: error: …`` and exit status 2,
with nothing written. Results are staged in a hidden directory beside the output and moved into
place only when the run has succeeded, ``model.json`` last.

Start-up imports only argparse and the option vocabulary: each command imports the numerical
modules it needs when it runs, so ``sparsefric --help`` answers at once.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path

from sparsefric import __version__
from sparsefric.errors import OptionError, SparsefricError
from sparsefric.options import (
    ANGLE_UNITS,
    AXES,
    DEFAULT_OUTLIER_Z,
    DIFFERENTIATION,
    LIBRARIES,
    METHODS,
    as_flags,
    flag,
    parse_positive,
    parse_positive_list,
)

EXIT_USAGE = 2
#: Longest open-loop simulation [s] (10⁷ samples at 1 kHz).
MAX_DURATION_S = 1e4


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (the usage is one ``--help`` away)."""

    def error(self, message: str) -> None:  # noqa: D102
        print(f"sparsefric: error: {message} (see sparsefric {self.prog.split()[-1]} --help)"
              if " " in self.prog else f"sparsefric: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def _argument_type(parse):
    """An argparse ``type`` from a parser of :mod:`sparsefric.options` (ValueError → usage)."""
    def convert(text: str):
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    convert.__name__ = parse.__name__
    return convert


_positive = _argument_type(parse_positive)
_positive_list = _argument_type(parse_positive_list)


def _add_data_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("data columns")
    g.add_argument("--time", default="t", help="time column [s] (default: t)")
    g.add_argument("--position", default="q", help="position column [rad or m] (default: q)")
    g.add_argument("--torque", default="tau", help="torque column [N·m or N] (default: tau)")
    g.add_argument("--velocity", default=None, help="measured velocity column (optional)")
    g.add_argument("--acceleration", default=None, help="measured acceleration column (optional)")
    g.add_argument("--trajectory-column", default="trajectory",
                   help="column that splits a file into trajectories (default: trajectory)")
    g.add_argument("--angle-unit", choices=ANGLE_UNITS, default="rad")
    g.add_argument("--resample", action="store_true",
                   help="interpolate irregularly sampled files onto a uniform grid")
    g = p.add_argument_group("preprocessing")
    g.add_argument("--differentiation", choices=DIFFERENTIATION,
                   default="tv", help="how q̇, q̈ are obtained (default: tv)")
    g.add_argument("--regularization", type=_positive, default=None,
                   help="TV regularisation κ (default: chosen automatically)")
    g.add_argument("--cutoff-hz", type=_positive, default=None,
                   help="Butterworth cutoff [Hz]")


def _load(paths: Sequence[str], args: argparse.Namespace):
    from sparsefric.data import load_with

    return load_with(paths, vars(args))


def _preprocessor(args: argparse.Namespace):
    """How the command's data are differentiated (the options of ``--differentiation``)."""
    from sparsefric.preprocessing import Preprocessor

    return Preprocessor(args.differentiation, args.regularization, args.cutoff_hz)


# ------------------------------------------------------------------------------ identify
#: identify options that only sparsefric uses (their defaults come from the parser).
_SPARSEFRIC_ONLY = ("model", "static_only", "library", "offset", "omega_starts", "aic_parts",
                    "presliding_distance", "nu", "tanh_k")


def _identify_parser(sub) -> None:
    p = sub.add_parser("identify", help="identify a joint model from trajectories",
                       description="Steps 0–3: differentiation, static structure by SR3 and "
                                   "AICc, then the LuGre iterations.")
    p.add_argument("train", nargs="+", help="training CSV/Parquet files")
    p.add_argument("--validate", nargs="+", default=[], help="validation files (AICc)")
    p.add_argument("--test", nargs="+", default=[], help="test files (reported errors)")
    p.add_argument("--axis", choices=AXES, default="revolute")
    p.add_argument("--library", default="full", choices=LIBRARIES,
                   help="candidate library (default: full)")
    p.add_argument("--offset", action="store_true", help="add a torque offset (revolute)")
    p.add_argument("--static-only", action="store_true", help="stop after step 1")
    p.add_argument("--model", choices=("A", "B", "both"), default="A",
                   help="A: sign(q̇); B: tanh(K q̇); both: side by side")
    p.add_argument("--tanh-k", type=_positive, default=150.0, help="K of model B [s/rad]")
    p.add_argument("--omega-starts", type=_positive_list, default=None,
                   help="initial Ω_s values [rad/s], comma-separated")
    p.add_argument("--sigma0-starts", type=_positive_list, default=None,
                   help="initial σ0 values [N·m/rad or N/m], comma-separated "
                   "(default: scaled from the step-1 break-away level)")
    p.add_argument("--nu", type=_positive, default=0.01, help="SR3 relaxation ν")
    p.add_argument("--aic-parts", type=int, default=None, help="m of AICc")
    p.add_argument("--presliding-distance", type=_positive, default=None,
                   help="distance [rad] from stops left out of the static fits")
    p.add_argument("--method", choices=METHODS, default=METHODS[0],
                   help="sparsefric (default) or a baseline: idim-ls (rigid body + Coulomb + "
                        "viscous by least squares), output-error (LuGre by nonlinear least "
                        "squares from IDIM-LS), two-step (static curve from constant-velocity "
                        "moves, σ0, σ1 from --presliding)")
    p.add_argument("--presliding", default=None, metavar="FILE",
                   help="pre-sliding record (torque below break-away) for --method two-step")
    p.add_argument("--out", default="sparsefric-out", help="output directory")
    p.add_argument("--quiet", action="store_true", help="print nothing but errors")
    p.add_argument("--json", action="store_true", help="print a machine-readable summary")
    _add_data_options(p)
    p.set_defaults(run=_run_identify, sparsefric_only={
        name: p.get_default(name) for name in _SPARSEFRIC_ONLY})


def _estimator(args: argparse.Namespace, model: str):
    from sparsefric.identify import DEFAULT_OMEGA_STARTS, SparseFric

    return SparseFric(axis=args.axis, model=model, tanh_k=args.tanh_k, library=args.library,
                      offset=args.offset, nu=args.nu, aic_parts=args.aic_parts,
                      omega_starts=args.omega_starts or DEFAULT_OMEGA_STARTS,
                      sigma0_starts=args.sigma0_starts,
                      static_only=args.static_only, differentiation=args.differentiation,
                      regularization=args.regularization, cutoff_hz=args.cutoff_hz,
                      presliding_distance=args.presliding_distance,
                      progress=not (args.quiet or args.json) and sys.stderr.isatty())


def _model_lines(m) -> list[str]:
    """The parameters of a model with values and units, one per line."""
    return [f"  {name:<26} {value: .6g} {unit}" for name, unit, value in m.parameters()]


def _print_terms(result, label: str) -> None:
    n_active = int(result.terms.active.sum())
    print(f"{label}step 1 kept {n_active} of {len(result.terms)} candidates (AICc on "
          f"{result.sweep.validation_source} data); "
          + ("terms re-selected with the dynamic columns; " if result.refined else "")
          + f"model ({result.model.kind}):")
    print("\n".join(_model_lines(result.model)))
    if result.model.kind == "lugre":
        state = "converged" if result.converged else "NOT converged"
        print(f"{label}{state}: {result.convergence_reason}")


def _run_identify(args: argparse.Namespace) -> int:
    from sparsefric.atomic import check_out_dir, staged
    from sparsefric.outputs import RESULT_NAMES, write_results

    _check_method_options(args)
    train = _load(args.train, args)
    validate = _load(args.validate, args) if args.validate else None
    test = _load(args.test, args) if args.test else None
    if args.method != "sparsefric":
        return _run_baseline(args, train, validate, test)
    models = ("A", "B") if args.model == "both" else (args.model,)
    out = Path(args.out)
    check_out_dir(out)
    fitted = {m: _estimator(args, m).fit(train, validate=validate).result_ for m in models}

    summaries: dict[str, dict] = {}

    def work(stage: Path) -> None:
        for name, result in fitted.items():
            target = stage / name if len(fitted) > 1 else stage
            target.mkdir(exist_ok=True)
            summaries[name] = write_results(result, target, train, validate, test)

    staged(out, work, RESULT_NAMES)
    if args.json:
        print(json.dumps(summaries if len(fitted) > 1 else summaries[models[0]]))
    elif not args.quiet:
        for name, result in fitted.items():
            _print_terms(result, f"[model {name}] " if len(fitted) > 1 else "")
        for name, result in fitted.items():
            for text in result.warnings:
                print(f"sparsefric: warning{f' [model {name}]' if len(fitted) > 1 else ''}: "
                      f"{as_flags(text)}", file=sys.stderr)
        if validate is None:
            print("no --validate files: AICc was computed on the training data")
        print(f"results written to {out}/")
    return 0


def _check_method_options(args: argparse.Namespace) -> None:
    """Reject options the chosen ``--method`` would silently ignore."""
    if args.method != "sparsefric":
        for name, default in args.sparsefric_only.items():
            if getattr(args, name) != default:
                raise OptionError(name, "applies to --method sparsefric only")
    if args.presliding and args.method != "two-step":
        raise OptionError("presliding", "applies to --method two-step only")
    if args.sigma0_starts and args.method not in ("sparsefric", "output-error"):
        raise OptionError("sigma0_starts", "applies to --method sparsefric and output-error")


def _run_baseline(args: argparse.Namespace, train, validate, test) -> int:
    """``identify --method`` with a baseline: model.json and a summary of its errors."""
    from sparsefric.atomic import check_out_dir, staged
    from sparsefric.baselines import fit_baseline
    from sparsefric.outputs import RESULT_NAMES, stamped

    presliding = _load([args.presliding], args)[0] if args.presliding else None
    out = Path(args.out)
    check_out_dir(out)
    t0 = time.perf_counter()
    model = fit_baseline(args.method, train, args.axis, validate=validate or (),
                         presliding=presliding, cutoff_hz=args.cutoff_hz,
                         sigma0_starts=args.sigma0_starts)
    wall = time.perf_counter() - t0
    prepare = _preprocessor(args).prepare
    errors = {role: prepare(trajs).relative_error(model)
              for role, trajs in (("train", train), ("validate", validate), ("test", test))
              if trajs}
    summary = {"method": args.method, "axis": args.axis, "kind": model.kind,
               "wall_time_s": wall, "relative_error": errors,
               "parameters": [{"name": n, "unit": u, "value": v}
                              for n, u, v in model.parameters()]}
    lines = [f"{args.method} ({model.kind} model), identified in {wall:.2f} s:",
             *_model_lines(model),
             *(f"  ‖τ − τ̂‖/‖τ‖ on the {role} data: {err:.4f}" for role, err in errors.items())]

    def work(stage: Path) -> None:
        (stage / "summary.json").write_text(json.dumps(summary, indent=1))
        (stage / "summary.md").write_text("\n".join(lines) + "\n")
        stamped(model.with_(extra={**model.extra, "method": args.method})).save(
            stage / "model.json")

    staged(out, work, RESULT_NAMES)
    if args.json:
        print(json.dumps(summary))
    elif not args.quiet:
        print("\n".join(lines))
        print(f"results written to {out}/")
    return 0


# ------------------------------------------------------------------------------ predict
def _predict_parser(sub) -> None:
    p = sub.add_parser("predict", help="evaluate a model on a trajectory")
    p.add_argument("model", help="model file (model.json)")
    p.add_argument("data", nargs="+", help="trajectory files")
    p.add_argument("--out", default=None, help="CSV with t, tau, tau_hat")
    _add_data_options(p)
    p.set_defaults(run=_run_predict)


def _run_predict(args: argparse.Namespace) -> int:
    import numpy as np
    import pandas as pd

    from sparsefric.atomic import atomic_path
    from sparsefric.model import JointModel

    model = JointModel.load(args.model)
    if args.out and Path(args.out).is_dir():
        raise OptionError("out", f"{args.out}: is a directory, expected a CSV file name")
    trajs = _load(args.data, args)
    prep = _preprocessor(args).prepare(trajs)
    tau_hat = np.concatenate(prep.torque(model))
    if args.out:
        t = np.concatenate([tr.t for tr in trajs])
        with atomic_path(args.out) as tmp:
            pd.DataFrame({"t": t, "tau": prep.tau_raw, "tau_hat": tau_hat}).to_csv(tmp,
                                                                                 index=False)
    print(f"relative RMS torque error ‖τ − τ̂‖/‖τ‖ = {prep.relative_error(model):.4f}")
    return 0


# ------------------------------------------------------------------------------ simulate
def _simulate_parser(sub) -> None:
    p = sub.add_parser("simulate", help="simulate a joint (truth model) into CSV files")
    p.add_argument("model", nargs="?", default=None,
                   help="truth model file (default: the joint of data/example)")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--velocities", type=_positive_list, default=None,
                   help="target velocities [rad/s] of back-and-forth moves, comma-separated "
                        "(default: the main paper's train/validate/test split)")
    p.add_argument("--open-loop", default=None, metavar="multisine|chirp|FILE",
                   help="open-loop torque instead of closed-loop moves")
    p.add_argument("--amplitude", type=_positive, default=None,
                   help="open-loop torque amplitude [N·m] (default: 1.5 × break-away)")
    p.add_argument("--duration", type=_positive, default=10.0, help="open loop [s]")
    p.add_argument("--torque-noise", type=float, default=0.3, help="[N·m]")
    p.add_argument("--position-noise", type=float, default=5e-6, help="[rad]")
    p.add_argument("--encoder-bits", type=int, default=20, help="0: no quantisation")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--presliding", action="store_true",
                   help="also write a pre-sliding record (open loop, torque below break-away) "
                        "for identify --method two-step")
    p.set_defaults(run=_run_simulate)


def _check_simulate_options(args: argparse.Namespace) -> None:
    if not 0 <= args.encoder_bits <= 64:
        raise OptionError("encoder_bits", f"must be between 0 and 64, got {args.encoder_bits}")
    if not (args.torque_noise >= 0 and args.position_noise >= 0):
        raise OptionError("torque_noise", "and --position-noise must be ≥ 0")
    if args.duration > MAX_DURATION_S:
        raise OptionError("duration", f"must be at most {MAX_DURATION_S:g} s, "
                                      f"got {args.duration:g}")


def _run_simulate(args: argparse.Namespace) -> int:
    import numpy as np

    from sparsefric.atomic import staged
    from sparsefric.baselines import presliding_experiment
    from sparsefric.data import load_trajectories, save_trajectory
    from sparsefric.model import JointModel
    from sparsefric.simulate import (
        EXAMPLE_TRUTH,
        PAPER_SPLIT,
        Sensors,
        chirp,
        multisine,
        paper_experiment,
        simulate,
    )

    truth = JointModel.load(args.model) if args.model else EXAMPLE_TRUTH
    _check_simulate_options(args)
    if truth.inertia <= 0:
        raise SparsefricError(f"{args.model}: rigid_body.inertia must be > 0 to simulate")
    res = 2 * np.pi * 2.0 ** -args.encoder_bits if args.encoder_bits else 0.0
    sensors = Sensors(res, args.position_noise, args.torque_noise, args.seed)
    if args.open_loop:
        amp = args.amplitude or 1.5 * truth.breakaway_torque()
        if args.open_loop == "multisine":
            _, tau = multisine(args.duration, amp, 0.2, 5.0, seed=args.seed)
        elif args.open_loop == "chirp":
            _, tau = chirp(args.duration, amp, 0.1, 5.0)
        else:
            tau = load_trajectories([args.open_loop])[0].tau
        trajs = [simulate(truth, tau_ff=tau, sensors=sensors, name="open_loop")]
    else:
        split = {"moves": args.velocities} if args.velocities else PAPER_SPLIT
        trajs = [t for ts in paper_experiment(truth, split, sensors=sensors).values()
                 for t in ts]
    if args.presliding:
        trajs.append(presliding_experiment(truth, seed=args.seed, sensors=sensors))

    def work(stage: Path) -> None:
        for traj in trajs:
            save_trajectory(stage / f"{traj.name}.csv", traj)
        truth.save(stage / "truth.json")

    staged(Path(args.out), work)
    print(f"{len(trajs)} trajectories and truth.json written to {args.out}/")
    return 0


# ------------------------------------------------------------------------------ cve
def _cve_parser(sub) -> None:
    p = sub.add_parser("cve", help="friction–velocity points from constant-velocity moves",
                       description="Constant-velocity experiments (main paper §5.1): on the "
                                   "constant-velocity parts of back-and-forth moves, friction "
                                   "(τ⁺ − τ⁻)/2 and gravity (τ⁺ + τ⁻)/2 at matched positions.")
    p.add_argument("files", nargs="+", help="trajectory files with back-and-forth moves")
    p.add_argument("--out", required=True, help="output directory (cve_points.csv)")
    _add_data_options(p)
    p.set_defaults(run=_run_cve, differentiation="butterworth")


def _run_cve(args: argparse.Namespace) -> int:
    from sparsefric.atomic import staged
    from sparsefric.validation import cve_from_trajectories

    points = cve_from_trajectories(_load(args.files, args), method=args.differentiation)
    if points.empty:
        raise SparsefricError("no constant-velocity parts moving both ways were found in "
                              + ", ".join(args.files))

    def work(stage: Path) -> None:
        points.to_csv(stage / "cve_points.csv", index=False)

    staged(Path(args.out), work)
    print(points.to_string(index=False, float_format=lambda v: f"{v:.5g}"))
    print(f"{len(points)} friction–velocity points written to {args.out}/cve_points.csv")
    return 0


# ------------------------------------------------------------------------------ batch
def _positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return int(text)


def _batch_parser(sub) -> None:
    p = sub.add_parser("batch", help="identify many joints listed in a manifest",
                       description="Identify every joint of a CSV manifest (columns joint, "
                       "train[, validate, test, options…]) in parallel; write DIR/<joint>/ per "
                       "joint and DIR/summary.html, DIR/summary.csv.")
    p.add_argument("manifest", help="CSV manifest, one row per joint")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--workers", type=_positive_int, default=os.cpu_count() or 1,
                   help="local worker processes (default: the number of CPUs)")
    p.add_argument("--scheduler", default=None, metavar="tcp://HOST:PORT",
                   help="run on this Dask distributed scheduler instead of local processes")
    p.add_argument("--force", action="store_true",
                   help="redo joints whose model.json already exists")
    p.add_argument("--outlier-z", type=_positive, default=DEFAULT_OUTLIER_Z,
                   help=f"flag |robust z-score| above this (default: {DEFAULT_OUTLIER_Z:g})")
    p.add_argument("--quiet", action="store_true", help="no progress bar, print only errors")
    p.set_defaults(run=_run_batch)


def _run_batch(args: argparse.Namespace) -> int:
    """Exit status 0 if every joint succeeded or was skipped, 1 if any failed (a bad manifest
    raises :class:`SparsefricError`)."""
    from sparsefric.batch import run_manifest

    table = run_manifest(args.manifest, args.out, workers=args.workers,
                         scheduler=args.scheduler, force=args.force, progress=not args.quiet,
                         outlier_z=args.outlier_z)
    failed = table[table["status"] == "failed"]
    for r in failed.itertuples():
        print(f"sparsefric: joint {r.joint} failed: {r.error}", file=sys.stderr)
    if not args.quiet:
        counts = table["status"].value_counts().to_dict()
        print(", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
              + f"; summary written to {Path(args.out) / 'summary.html'}")
        for r in table[table["flagged"] != ""].itertuples():
            print(f"  {r.joint}: friction stands out ({r.flagged})")
    return 1 if len(failed) else 0


# ------------------------------------------------------------------------------ main
def build_parser() -> argparse.ArgumentParser:
    """The ``sparsefric`` argument parser."""
    parser = _Parser(prog="sparsefric", description="Sparse identification of joint friction "
                     "(inertia, gravity and LuGre) from angle and torque recordings.")
    parser.add_argument("--version", action="version", version=f"sparsefric {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    _identify_parser(sub)
    _predict_parser(sub)
    _simulate_parser(sub)
    _cve_parser(sub)
    _batch_parser(sub)
    return parser


def _message(exc: SparsefricError) -> str:
    """An error in the terms of the command line: parameters as their flags."""
    if isinstance(exc, OptionError):
        return as_flags(f"{flag(exc.parameter)} {exc.problem}")
    return as_flags(str(exc))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return args.run(args)
    except SparsefricError as exc:
        print(f"sparsefric: error: {_message(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:  # the file system refused an output (permissions, disk full, …)
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"sparsefric: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("sparsefric: interrupted; nothing was written", file=sys.stderr)
        return 130
    except SystemError as exc:  # Ctrl-C inside compiled (numba) code surfaces as SystemError
        if not _caused_by_interrupt(exc):
            raise
        print("sparsefric: interrupted; nothing was written", file=sys.stderr)
        return 130


def _caused_by_interrupt(exc: BaseException | None) -> bool:
    while exc is not None:
        if isinstance(exc, KeyboardInterrupt):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
