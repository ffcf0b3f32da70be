"""``sparsefric predict``: a model file's torque on recorded trajectories, and its relative error.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from sparsefric.cli.common import (
    _add_data_options,
    _check_angle_unit,
    _examples,
    _load,
    _preprocessor,
    _warn,
)
from sparsefric.errors import ModelFileError, OptionError, SparsefricError
from sparsefric.options import OUTSIDE, check_torque_delay


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``predict`` to the subcommands ``sub`` of the main parser."""
    p = sub.add_parser("predict", help="evaluate a model on a trajectory",
                       description="Predict the torque of recorded trajectories with a model "
                                   "file and print the relative torque error.",
                       epilog=_examples("sparsefric predict results/example/model.json "
                                        "data/example/test_v1p4.csv --out prediction.csv"))
    p.add_argument("model", help="model file (model.json)")
    p.add_argument("data", nargs="+", help="trajectory files")
    p.add_argument("--out", default=None, metavar="CSV",
                   help="write trajectory, t [s], tau, tau_hat to this CSV file, tau aligned "
                        "by the torque delay (default: print the error only)")
    p.add_argument("--force", action="store_true",
                   help="replace an existing --out file (without it the command stops)")
    p.add_argument("--outside", choices=OUTSIDE, default="warn",
                   help="positions and velocities beyond the range of the model's "
                        "identification data (its validity section): warn (default), clamp "
                        "them to the range, or ignore")
    _add_data_options(p, differentiation=None, torque_delay=None)  # both the model's
    p.set_defaults(run=_run_predict)


def _run_predict(args: argparse.Namespace) -> int:
    import numpy as np
    import pandas as pd

    from sparsefric.atomic import atomic_path, check_out_file
    from sparsefric.data_checks import check_units
    from sparsefric.model import JointModel
    from sparsefric.validation import relative_error

    model = JointModel.load(args.model)
    _model_differentiation(args, model)
    _model_torque_delay(args, model)
    if args.out:
        check_out_file(Path(args.out), args.force)
    _check_angle_unit(args, model.axis, f"{args.model} is a {model.axis} model")
    trajs = _load(args.data, args, "trajectory")
    prep = _preprocessor(args, denoise_torque=False).prepare(trajs)
    for finding in check_units(prep, model.axis, given=args.differentiation == "given"):
        if finding.level == "error":
            raise SparsefricError(finding.message)
        _warn(args, finding.message)
    for text in _left_out(args, trajs, prep):
        _warn(args, text)
    if args.outside == "warn" and (text := model.outside_message(prep.signals.q,
                                                                 prep.signals.qd)):
        _warn(args, text)
    tau_hat = np.concatenate(prep.torque(model, outside=args.outside))
    if args.out:
        pieces = prep.pieces or trajs  # records cut at jumps
        table = pd.DataFrame({"trajectory": np.repeat([tr.name for tr in pieces],
                                                      [len(tr.t) for tr in pieces]),
                              "t": np.concatenate([tr.t for tr in pieces]),
                              "tau": prep.tau_raw, "tau_hat": tau_hat})
        with atomic_path(args.out) as tmp:
            table.to_csv(tmp, index=False)
    error = relative_error(prep.tau_raw, tau_hat)
    print(f"relative RMS torque error ‖τ − τ̂‖/‖τ‖ = {100 * error:.2f} %")
    return 0


def _left_out(args: argparse.Namespace, trajs, prep) -> list[str]:
    """What preparing the records changed, as identify reports it (records cut at jumps,
    pieces left out), and how many samples of the files the error and ``--out``, which have
    a row per sample predicted, leave out: those of pieces too short between jumps, those with
    the drive off, and the ends of the records the torque delay shifts past."""
    from sparsefric.segments import MIN_PIECE

    missing = sum(map(len, trajs)) - len(prep.tau_raw)
    if not missing:
        return list(prep.notes)
    where = f" and {args.out}" if args.out else ""
    delay = ", and the ends of the records the torque delay shifts past" \
        if args.torque_delay else ""
    return [*prep.notes, f"{missing} of the {sum(map(len, trajs))} samples are not predicted "
            f"(pieces between jumps shorter than {MIN_PIECE} samples, stretches with the drive "
            f"off{delay}): the error{where} leave them out"]


def _fit_section(args: argparse.Namespace, model) -> dict:
    """The ``fit`` section of ``model`` (empty where the file has none): how it was identified.

    Raises
    ------
    ModelFileError
        The file's ``fit`` is not an object.
    """
    fit = model.extra.get("fit", {})
    if not isinstance(fit, dict):
        raise ModelFileError(f"{args.model}: $.fit: must be an object")
    return fit


def _model_differentiation(args: argparse.Namespace, model) -> None:
    """``--differentiation`` not given: the method, and the κ or cutoff [Hz] a user set, that
    ``model`` records it was identified with (its ``fit`` section), else tv. The same record
    differentiated another way gives another error: a model identified with Butterworth
    derivatives and tested at 38.2 % by ``identify`` scored 32.2 % in ``predict``'s TV."""
    if args.differentiation is not None:
        return
    used = _fit_section(args, model).get("differentiation") or {}
    args.differentiation = used.get("method", "tv")
    if args.regularization is None and args.cutoff_hz is None:
        args.regularization, args.cutoff_hz = used.get("regularization"), used.get("cutoff_hz")


def _model_torque_delay(args: argparse.Namespace, model) -> None:
    """``--torque-delay`` not given: the delay [s] by which ``model`` records its training
    torque was aligned (its ``fit`` section), else 0 (a file written before the option): the
    records to predict come from the same drive, with the same lag, and a model fitted on
    aligned records predicts the aligned torque."""
    if args.torque_delay is not None:
        return
    recorded = _fit_section(args, model).get("torque_delay", 0.0)
    try:
        args.torque_delay = check_torque_delay(recorded)
    except OptionError as exc:
        raise ModelFileError(f"{args.model}: $.fit.torque_delay: {exc.problem}") from None
