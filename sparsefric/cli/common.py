"""The pieces of the command line that its commands share: the parser with one-line errors and
examples kept as written, the options that read data files and name the output, and the
helpers that load records, print results and warnings.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from sparsefric.errors import EXIT_USAGE, OptionError, SparsefricError
from sparsefric.options import (
    ANGLE_UNITS,
    DIFFERENTIATION,
    TORQUE_TIMINGS,
    angle_unit_conflict,
    as_flags,
    check_records,
    parse_number,
    parse_positive,
    parse_positive_list,
)

#: Exit status of ``--strict`` when a fit gave warnings (the results are written).
EXIT_WARNINGS = 3
#: Units of a time column (the keys of :data:`sparsefric.data.TIME_UNITS`).
TIME_UNITS = ("s", "ms", "us")


class _Formatter(argparse.HelpFormatter):
    """Descriptions wrapped as usual; the examples of an epilog kept line by line."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("examples:"):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (the usage is one ``--help`` away), no abbreviated options
    (``--sigma0`` must not pass for ``--sigma0-starts``) and examples kept as written."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("allow_abbrev", False)
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # noqa: D102
        print(f"sparsefric: error: {message} (see sparsefric {self.prog.split()[-1]} --help)"
              if " " in self.prog else f"sparsefric: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def _examples(*lines: str) -> str:
    return "examples:\n" + "\n".join(f"  {line}" for line in lines)


def _argument_type(parse):
    """An argparse ``type`` from a parser of :mod:`sparsefric.options` (ValueError → usage)."""
    def convert(text: str):
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    convert.__name__ = parse.__name__
    return convert


_number = _argument_type(parse_number)
_positive = _argument_type(parse_positive)
_positive_list = _argument_type(parse_positive_list)


def _add_output_options(p: argparse.ArgumentParser, default_out: str | None) -> None:
    g = p.add_argument_group("output")
    if default_out is None:
        g.add_argument("--out", required=True, metavar="DIR", help="output directory")
    else:
        g.add_argument("--out", default=default_out, metavar="DIR",
                       help=f"output directory (default: ./{default_out})")
    g.add_argument("--force", action="store_true",
                   help="replace the results of an earlier run in --out (without it an "
                        "existing result folder is left alone and the command stops)")
    quiet = g.add_mutually_exclusive_group()
    quiet.add_argument("--quiet", action="store_true",
                       help="print only warnings and errors (no progress, no results)")
    quiet.add_argument("--silent", action="store_true", help="print only errors")


def _add_data_options(p: argparse.ArgumentParser, differentiation: str | None = "tv",
                      torque_timing: bool = True, torque_delay: float | None = 0.0) -> None:
    """The options that read and differentiate data files.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The command's parser.
    differentiation : str or None
        Default of ``--differentiation``; None: the model's
        (:func:`~sparsefric.cli.predict._model_differentiation`).
    torque_timing : bool
        False: no options of the torque's timing, ``--torque-timing`` and ``--torque-delay``
        (steady levels).
    torque_delay : float or None
        Default of ``--torque-delay`` [s]; None: the model's
        (:func:`~sparsefric.cli.predict._model_torque_delay`).
    """
    g = p.add_argument_group("data columns")
    g.add_argument("--time", default="t", metavar="NAME", help="time column (default: t)")
    g.add_argument("--time-unit", choices=TIME_UNITS, default=None,
                   help="unit of the time column (default: the unit the file states in a row "
                        "of units under its header or in the column's name, 't [ms]', else s)")
    g.add_argument("--sample-rate", type=_positive, default=None, metavar="HZ",
                   help="rows sampled at this rate, for files without a time column: row k "
                        "is at k/HZ s (a time column is then not read)")
    g.add_argument("--position", default="q", metavar="NAME",
                   help="position column [rad, deg with --angle-unit deg, or m] (default: q)")
    g.add_argument("--torque", default="tau", metavar="NAME",
                   help="torque column [N·m, or N for a prismatic axis] (default: tau)")
    g.add_argument("--velocity", default=None, metavar="NAME",
                   help="measured velocity column [position unit/s] (optional; used by "
                        "--differentiation given, checked against the position)")
    g.add_argument("--acceleration", default=None, metavar="NAME",
                   help="measured acceleration column [position unit/s²] (optional; used by "
                        "--differentiation given, checked against the position)")
    g.add_argument("--trajectory-column", default="trajectory", metavar="NAME",
                   help="column that splits a file into trajectories; a name given must be in "
                        "every file (default: trajectory, where a file has it)")
    g.add_argument("--angle-unit", choices=ANGLE_UNITS, default=None,
                   help="unit of the position, velocity and acceleration columns of a revolute "
                        "joint; degrees are converted to rad (default: the unit the file "
                        "states for the position, as --time-unit, else rad)")
    g.add_argument("--resample", action="store_true",
                   help="interpolate irregularly sampled files onto a uniform grid")
    g = p.add_argument_group("preprocessing")
    default = differentiation or "the method the model was identified with, else tv"
    g.add_argument("--differentiation", choices=DIFFERENTIATION, default=differentiation,
                   help="how q̇, q̈ are obtained: total-variation regularised (tv), "
                   "Butterworth, Savitzky–Golay or the given columns "
                   f"(default: {default})")
    g.add_argument("--regularization", type=_positive, default=None, metavar="KAPPA",
                   help="TV regularisation κ (default: chosen automatically)")
    g.add_argument("--cutoff-hz", type=_positive, default=None, metavar="HZ",
                   help="Butterworth cutoff [Hz] (--differentiation butterworth and the "
                        "baselines; default: their own), below every record's Nyquist "
                        "frequency and at least 2/T of the shortest, T its duration [s]")
    if not torque_timing:  # steady levels: when the torque acts is moot
        return
    g.add_argument("--torque-timing", choices=TORQUE_TIMINGS, default="instant",
                   help="the torque column samples a torque that changes between samples "
                        "(instant: a sensor, or a command logged slower than the controller "
                        "runs) or is a command held until the next sample (hold: logged at the "
                        "control rate) (default: instant)")
    g.add_argument("--torque-delay", type=_number, default=torque_delay, metavar="SECONDS",
                   help="how late the torque column is against the position [s], negative "
                        "where it is early (a logged current command, which the drive applies "
                        "later): every record's torque is aligned with its position and the "
                        "samples the shift takes beyond a record's end are dropped (default: "
                        + ("the delay the model was identified with, else 0)"
                           if torque_delay is None else f"{torque_delay:g})"))


def _load(paths: Sequence[str], args: argparse.Namespace, role: str):
    """The records of ``paths``, checked against the options that depend on them; ``role``
    names the files in a message ("training", "--test")."""
    from sparsefric.data import load_with, repeated_file

    if text := repeated_file(paths):
        raise SparsefricError(f"{text} among the {role} files: its records would count twice; "
                              "give each file once")
    trajs = load_with(paths, vars(args))
    _check_records(args, trajs)
    return trajs


def _check_records(args: argparse.Namespace, trajs) -> None:
    """Before any work: ``--differentiation given`` needs the measured velocity and
    acceleration columns, and ``--cutoff-hz`` and ``--torque-delay`` must suit every record
    (:func:`~sparsefric.options.check_records`)."""
    from sparsefric.options import mention

    if args.differentiation == "given" and any(t.qd is None or t.qdd is None for t in trajs):
        raise OptionError("differentiation", "given needs the measured velocity and "
                          f"acceleration in every record ({mention('velocity', 'NAME')} and "
                          f"{mention('acceleration', 'NAME')})")
    check_records(args.cutoff_hz, getattr(args, "torque_delay", 0.0), trajs)  # cve: no delay


def _preprocessor(args: argparse.Namespace, denoise_torque: bool = True):
    """How the command's data are differentiated (the options of ``--differentiation``);
    ``denoise_torque`` False for commands that compare with the measured torque only."""
    from sparsefric.preprocessing import Preprocessor

    return Preprocessor(args.differentiation, args.regularization, args.cutoff_hz,
                        torque_timing=args.torque_timing, torque_delay=args.torque_delay,
                        denoise_torque=denoise_torque)


def _say(args: argparse.Namespace, text: str) -> None:
    """Print a result line unless ``--quiet``, ``--silent`` or ``--json``."""
    if not (args.quiet or args.silent or getattr(args, "json", False)):
        print(text)


def _warn(args: argparse.Namespace, text: str) -> None:
    """Print a warning on stderr unless ``--silent``."""
    if not getattr(args, "silent", False):
        print(f"sparsefric: warning: {as_flags(text)}", file=sys.stderr)


def _add_strict_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--strict", action="store_true",
                   help=f"exit with status {EXIT_WARNINGS} if the fit gave any warning (after "
                        "the results are written), for pipelines")


def _interactive(args: argparse.Namespace) -> bool:
    """Whether to draw progress bars: results are printed and stderr is a terminal."""
    return not (args.quiet or args.silent or getattr(args, "json", False)) and \
        sys.stderr.isatty()


def _check_angle_unit(args: argparse.Namespace, axis: str, source: str) -> None:
    """Degrees are an angle: refuse ``--angle-unit deg`` for a prismatic axis (``source``
    says where the axis comes from), whose positions are in metres."""
    if why := angle_unit_conflict(args.angle_unit, axis):
        raise OptionError("angle_unit", f"{why}; {source} (positions in m)")
