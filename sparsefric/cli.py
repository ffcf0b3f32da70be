"""Command line: ``sparsefric identify | predict | simulate | cve | batch``.

Every problem with the user's input ends in one line ``sparsefric: error: …`` and exit status 2,
with nothing written. Results are staged in a hidden directory beside the output and moved into
place only when the run has succeeded, ``model.json`` last.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd

from sparsefric import __version__
from sparsefric.errors import SparsefricError
from sparsefric.report import write_report

EXIT_USAGE = 2
#: Longest open-loop simulation [s] (10⁷ samples at 1 kHz).
MAX_DURATION_S = 1e4


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (the usage is one ``--help`` away)."""

    def error(self, message: str) -> None:  # noqa: D102
        print(f"sparsefric: error: {message} (see sparsefric {self.prog.split()[-1]} --help)"
              if " " in self.prog else f"sparsefric: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not np.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def _float_list(text: str) -> tuple[float, ...]:
    try:
        values = tuple(float(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated numbers, got {text!r}") from None
    if not values or not all(np.isfinite(v) and v > 0 for v in values):
        raise argparse.ArgumentTypeError(f"expected positive numbers, got {text!r}")
    return values


def _add_data_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("data columns")
    g.add_argument("--time", default="t", help="time column [s] (default: t)")
    g.add_argument("--position", default="q", help="position column [rad or m] (default: q)")
    g.add_argument("--torque", default="tau", help="torque column [N·m or N] (default: tau)")
    g.add_argument("--velocity", default=None, help="measured velocity column (optional)")
    g.add_argument("--acceleration", default=None, help="measured acceleration column (optional)")
    g.add_argument("--trajectory-column", default="trajectory",
                   help="column that splits a file into trajectories (default: trajectory)")
    g.add_argument("--angle-unit", choices=("rad", "deg"), default="rad")
    g.add_argument("--resample", action="store_true",
                   help="interpolate irregularly sampled files onto a uniform grid")
    g = p.add_argument_group("preprocessing")
    g.add_argument("--differentiation", choices=("tv", "butterworth", "savgol", "given"),
                   default="tv", help="how q̇, q̈ are obtained (default: tv)")
    g.add_argument("--regularization", type=_positive_float, default=None,
                   help="TV regularisation κ (default: chosen automatically)")
    g.add_argument("--cutoff-hz", type=_positive_float, default=None,
                   help="Butterworth cutoff [Hz]")


def _load(paths: Sequence[str], args: argparse.Namespace):
    from sparsefric.data import Columns, load_trajectories

    if getattr(args, "differentiation", None) == "given" and not (
            args.velocity and args.acceleration):
        raise SparsefricError("--differentiation given needs the measured --velocity and "
                              "--acceleration columns")
    cols = Columns(args.time, args.position, args.torque, args.velocity, args.acceleration,
                   args.trajectory_column)
    return load_trajectories(list(paths), cols, angle_unit=args.angle_unit,
                             resample=args.resample)


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
    p.add_argument("--axis", choices=("revolute", "prismatic"), default="revolute")
    p.add_argument("--library", default="full",
                   choices=("full", "coulomb-viscous", "coulomb-viscous-offset", "stribeck"),
                   help="candidate library (default: full)")
    p.add_argument("--offset", action="store_true", help="add a torque offset (revolute)")
    p.add_argument("--static-only", action="store_true", help="stop after step 1")
    p.add_argument("--model", choices=("A", "B", "both"), default="A",
                   help="A: sign(q̇); B: tanh(K q̇); both: side by side")
    p.add_argument("--tanh-k", type=_positive_float, default=150.0, help="K of model B [s/rad]")
    p.add_argument("--omega-starts", type=_float_list, default=None,
                   help="initial Ω_s values [rad/s], comma-separated")
    p.add_argument("--sigma0-starts", type=_float_list, default=None,
                   help="initial σ0 values [N·m/rad or N/m], comma-separated "
                   "(default: scaled from the step-1 break-away level)")
    p.add_argument("--nu", type=_positive_float, default=0.01, help="SR3 relaxation ν")
    p.add_argument("--aic-parts", type=int, default=None, help="m of AICc")
    p.add_argument("--presliding-distance", type=_positive_float, default=None,
                   help="distance [rad] from stops left out of the static fits")
    from sparsefric.methods import METHODS

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

    if args.aic_parts is not None and args.aic_parts < 10:
        raise SparsefricError(f"--aic-parts must be at least 10, got {args.aic_parts}")
    return SparseFric(axis=args.axis, model=model, tanh_k=args.tanh_k, library=args.library,
                      offset=args.offset, nu=args.nu, aic_parts=args.aic_parts,
                      omega_starts=args.omega_starts or DEFAULT_OMEGA_STARTS,
                      sigma0_starts=args.sigma0_starts,
                      static_only=args.static_only, differentiation=args.differentiation,
                      regularization=args.regularization, cutoff_hz=args.cutoff_hz,
                      presliding_distance=args.presliding_distance,
                      progress=not (args.quiet or args.json) and sys.stderr.isatty())




def _write_results(est, stage: Path, train, validate, test, title: str | None = None) -> dict:
    """Every result file of one identification into ``stage``, ``model.json`` last; returns
    the report's summary."""
    est.selection_.to_csv(stage / "selection.csv", index=False)
    est.terms_.to_csv(stage / "terms.csv", index=False)
    if len(est.history_):
        est.history_.to_csv(stage / "history.csv", index=False)
    if est.refinement_ is not None:
        est.refinement_.table.to_csv(stage / "refinement.csv", index=False)
    est.preprocessing_.to_csv(stage / "preprocessing.csv", index=False)
    _stamped(est.static_model_).save(stage / "static_model.json")
    if est.lugre_model_ is not None and est.lugre_model_ is not est.model_:
        _stamped(est.lugre_model_).save(stage / "lugre_model.json")
    options = {"title": title} if title else {}
    summary = write_report(est, stage, train, validate=validate, test=test, **options)
    _stamped(est.model_).save(stage / "model.json")
    return summary


def _stamped(model):
    """The model with a ``created`` timestamp (the only field that differs between reruns)."""
    created = datetime.now(UTC).isoformat(timespec="seconds")
    return model.with_(extra={**model.extra, "created": created})


#: Everything a run may write into ``--out``; a rerun removes those it does not write again.
RESULT_NAMES = ("model.json", "lugre_model.json", "static_model.json", "selection.csv",
                "refinement.csv", "history.csv", "terms.csv", "preprocessing.csv",
                "report.html", "summary.md", "summary.json", "A", "B")


def _publish(stage: Path, out: Path) -> None:
    """Move staged files into ``out``; ``model.json`` last so that it marks a complete run.

    Results of an earlier run that this one does not write again are removed first, so that a
    directory never mixes two runs.
    """
    out.mkdir(parents=True, exist_ok=True)
    for name in RESULT_NAMES:
        old = out / name
        if not (stage / name).exists() and (old.exists() or old.is_symlink()):
            shutil.rmtree(old) if old.is_dir() else old.unlink()
    entries = sorted(stage.iterdir(), key=lambda p: p.name == "model.json")
    for entry in entries:
        target = out / entry.name
        if target.is_dir() and entry.is_dir():
            shutil.rmtree(target)
        os.replace(entry, target)


def _check_out_dir(out: Path) -> None:
    """Fail before any work when ``--out`` cannot be a results directory."""
    if out.exists() and not out.is_dir():
        raise SparsefricError(f"--out {out}: exists and is not a directory")


def _staged(out: Path, work: Callable[[Path], None]) -> None:
    _check_out_dir(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.staging-", dir=out.parent))
    try:
        work(stage)
        _publish(stage, out)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _model_lines(m) -> list[str]:
    """The parameters of a model with values and units, one per line."""
    return [f"  {name:<26} {value: .6g} {unit}" for name, unit, value in m.parameters()]


def _print_terms(est, label: str) -> None:
    n_active = int(est.terms_.active.sum())
    print(f"{label}step 1 kept {n_active} of {len(est.terms_)} candidates (AICc on "
          f"{est.sweep_.validation_source} data); "
          + ("terms re-selected with the dynamic columns; " if est.refined_ else "")
          + f"model ({est.model_.kind}):")
    print("\n".join(_model_lines(est.model_)))
    if est.model_.kind == "lugre":
        state = "converged" if est.converged_ else "NOT converged"
        print(f"{label}{state}: {est.convergence_reason_}")


def _run_identify(args: argparse.Namespace) -> int:
    _check_method_options(args)
    train = _load(args.train, args)
    validate = _load(args.validate, args) if args.validate else None
    test = _load(args.test, args) if args.test else None
    if args.method != "sparsefric":
        return _run_baseline(args, train, validate, test)
    models = ("A", "B") if args.model == "both" else (args.model,)
    out = Path(args.out)
    _check_out_dir(out)
    fitted = {m: _estimator(args, m).fit(train, validate=validate) for m in models}

    summaries: dict[str, dict] = {}

    def work(stage: Path) -> None:
        for name, est in fitted.items():
            target = stage / name if len(fitted) > 1 else stage
            target.mkdir(exist_ok=True)
            summaries[name] = _write_results(est, target, train, validate, test)

    _staged(out, work)
    if args.json:
        print(json.dumps(summaries if len(fitted) > 1 else summaries[models[0]]))
    elif not args.quiet:
        for name, est in fitted.items():
            _print_terms(est, f"[model {name}] " if len(fitted) > 1 else "")
        for name, est in fitted.items():
            for text in est.warnings_:
                print(f"sparsefric: warning{f' [model {name}]' if len(fitted) > 1 else ''}: "
                      f"{text}", file=sys.stderr)
        if validate is None:
            print("no --validate files: AICc was computed on the training data")
        print(f"results written to {out}/")
    return 0


def _check_method_options(args: argparse.Namespace) -> None:
    """Reject options the chosen ``--method`` would silently ignore."""
    def flag(name: str) -> str:
        return "--" + name.replace("_", "-")

    if args.method != "sparsefric":
        for name, default in args.sparsefric_only.items():
            if getattr(args, name) != default:
                raise SparsefricError(f"{flag(name)} applies to --method sparsefric only")
    if args.presliding and args.method != "two-step":
        raise SparsefricError("--presliding applies to --method two-step only")
    if args.sigma0_starts and args.method not in ("sparsefric", "output-error"):
        raise SparsefricError("--sigma0-starts applies to --method sparsefric and output-error")


def _run_baseline(args: argparse.Namespace, train, validate, test) -> int:
    """``identify --method`` with a baseline: model.json and a summary of its errors."""
    from sparsefric.methods import fit_baseline

    presliding = _load([args.presliding], args)[0] if args.presliding else None
    out = Path(args.out)
    _check_out_dir(out)
    t0 = time.perf_counter()
    model = fit_baseline(args.method, train, args.axis, validate=validate or (),
                         presliding=presliding, cutoff_hz=args.cutoff_hz,
                         sigma0_starts=args.sigma0_starts)
    wall = time.perf_counter() - t0
    scorer = _estimator(args, "A")
    errors = {role: scorer.relative_error(trajs, model=model)
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
        _stamped(model.with_(extra={**model.extra, "method": args.method})).save(
            stage / "model.json")

    _staged(out, work)
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
    from sparsefric.atomic import atomic_path
    from sparsefric.identify import predict_prepared
    from sparsefric.model import JointModel
    from sparsefric.preprocessing import prepare

    model = JointModel.load(args.model)
    if args.out and Path(args.out).is_dir():
        raise SparsefricError(f"--out {args.out}: is a directory, expected a CSV file name")
    trajs = _load(args.data, args)
    prep = prepare(trajs, method=args.differentiation, regularization=args.regularization,
                   cutoff_hz=args.cutoff_hz)
    tau_hat = np.concatenate(predict_prepared(model, prep))
    err = float(np.linalg.norm(prep.tau_raw - tau_hat) / np.linalg.norm(prep.tau_raw))
    if args.out:
        t = np.concatenate([tr.t for tr in trajs])
        with atomic_path(args.out) as tmp:
            pd.DataFrame({"t": t, "tau": prep.tau_raw, "tau_hat": tau_hat}).to_csv(tmp,
                                                                                 index=False)
    print(f"relative RMS torque error ‖τ − τ̂‖/‖τ‖ = {err:.4f}")
    return 0


# ------------------------------------------------------------------------------ simulate
def _simulate_parser(sub) -> None:
    p = sub.add_parser("simulate", help="simulate a joint (truth model) into CSV files")
    p.add_argument("model", nargs="?", default=None,
                   help="truth model file (default: the joint of data/example)")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--velocities", type=_float_list, default=None,
                   help="target velocities [rad/s] of back-and-forth moves, comma-separated "
                        "(default: the main paper's train/validate/test split)")
    p.add_argument("--open-loop", default=None, metavar="multisine|chirp|FILE",
                   help="open-loop torque instead of closed-loop moves")
    p.add_argument("--amplitude", type=_positive_float, default=None,
                   help="open-loop torque amplitude [N·m] (default: 1.5 × break-away)")
    p.add_argument("--duration", type=_positive_float, default=10.0, help="open loop [s]")
    p.add_argument("--torque-noise", type=float, default=0.3, help="[N·m]")
    p.add_argument("--position-noise", type=float, default=5e-6, help="[rad]")
    p.add_argument("--encoder-bits", type=int, default=20, help="0: no quantisation")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--presliding", action="store_true",
                   help="also write a pre-sliding record (open loop, torque below break-away) "
                        "for identify --method two-step")
    p.set_defaults(run=_run_simulate)


def _run_simulate(args: argparse.Namespace) -> int:
    from sparsefric.baselines import presliding_experiment
    from sparsefric.data import Trajectory, load_trajectories, save_trajectory
    from sparsefric.experiment import EXAMPLE_TRUTH, PAPER_SPLIT, paper_experiment
    from sparsefric.model import JointModel
    from sparsefric.simulate import Sensors, chirp, multisine, simulate

    truth = JointModel.load(args.model) if args.model else EXAMPLE_TRUTH
    if not 0 <= args.encoder_bits <= 64:
        raise SparsefricError(f"--encoder-bits must be between 0 and 64, got {args.encoder_bits}")
    if not (args.torque_noise >= 0 and args.position_noise >= 0):
        raise SparsefricError("--torque-noise and --position-noise must be ≥ 0")
    if args.duration > MAX_DURATION_S:
        raise SparsefricError(f"--duration must be at most {MAX_DURATION_S:g} s, "
                              f"got {args.duration:g}")
    if truth.inertia <= 0:
        raise SparsefricError(f"{args.model}: rigid_body.inertia must be > 0 to simulate")
    res = 2 * np.pi * 2.0 ** -args.encoder_bits if args.encoder_bits else 0.0
    sensors = Sensors(res, args.position_noise, args.torque_noise, args.seed)
    trajs: list[Trajectory] = []
    if args.open_loop:
        amp = args.amplitude or 1.5 * truth.breakaway_torque()
        if args.open_loop == "multisine":
            _, tau = multisine(args.duration, amp, 0.2, 5.0, seed=args.seed)
        elif args.open_loop == "chirp":
            _, tau = chirp(args.duration, amp, 0.1, 5.0)
        else:
            tau = load_trajectories([args.open_loop])[0].tau
        trajs.append(simulate(truth, tau_ff=tau, sensors=sensors, name="open_loop"))
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

    _staged(Path(args.out), work)
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
    from sparsefric.validation import cve_from_trajectories

    points = cve_from_trajectories(_load(args.files, args), method=args.differentiation)
    if points.empty:
        raise SparsefricError("no constant-velocity parts moving both ways were found in "
                              + ", ".join(args.files))

    def work(stage: Path) -> None:
        points.to_csv(stage / "cve_points.csv", index=False)

    _staged(Path(args.out), work)
    print(points.to_string(index=False, float_format=lambda v: f"{v:.5g}"))
    print(f"{len(points)} friction–velocity points written to {args.out}/cve_points.csv")
    return 0


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
    from sparsefric.batch import build_batch_parser  # batch imports this module's staging

    build_batch_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return args.run(args)
    except SparsefricError as exc:
        print(f"sparsefric: error: {exc}", file=sys.stderr)
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
