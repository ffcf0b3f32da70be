"""Command line: ``sparsefric identify | predict | simulate | cve | batch | export |
validate-model`` (the last two from :mod:`sparsefric.model_commands`).

Every problem with the user's input ends in one line ``sparsefric: error: …`` and exit status 2,
with nothing written. With ``--strict``, ``identify`` and ``batch`` exit with status 3 when the
fit gave warnings, after the results are written. Results are staged in a hidden directory
beside the output and moved into place only when the run has succeeded, ``model.json`` last.

Start-up imports only argparse and the option vocabulary: each command imports the numerical
modules it needs when it runs, so ``sparsefric --help`` answers at once.

One module per command holds its parser and what it runs (:mod:`~sparsefric.cli.identify`,
:mod:`~sparsefric.cli.predict`, :mod:`~sparsefric.cli.simulate`, :mod:`~sparsefric.cli.cve`,
:mod:`~sparsefric.cli.batch`). The parser pieces and helpers that the commands share are in
:mod:`~sparsefric.cli.common`.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence

from sparsefric import __version__, interrupts
from sparsefric.cli import batch, cve, identify, predict, simulate
from sparsefric.cli.common import EXIT_WARNINGS, _examples, _Parser
from sparsefric.cli.identify import DEFAULT_OUT
from sparsefric.errors import EXIT_USAGE, OptionError, SparsefricError
from sparsefric.interrupts import Terminated
from sparsefric.model_commands import add_parsers as _model_file_parsers
from sparsefric.options import as_flags, flag

__all__ = ["EXIT_INTERRUPTED", "EXIT_WARNINGS", "Terminated", "build_parser", "main"]


#: Exit status after SIGINT (Ctrl-C) and SIGTERM (``kill``, batch schedulers): 128 + signal.
EXIT_INTERRUPTED = {"SIGINT": 130, "SIGTERM": 143}


def build_parser() -> argparse.ArgumentParser:
    """The ``sparsefric`` argument parser."""
    parser = _Parser(prog="sparsefric", description="Sparse identification of joint friction "
                     "(inertia, gravity and LuGre) from angle and torque recordings.",
                     epilog=_examples(
                         "sparsefric simulate --out sim/",
                         "sparsefric identify sim/train_*.csv --validate sim/validate_*.csv "
                         "--test sim/test_*.csv",
                         f"    (writes ./{DEFAULT_OUT}/; see sparsefric identify --help)"))
    parser.add_argument("--version", action="version", version=f"sparsefric {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    identify.add_parser(sub)
    predict.add_parser(sub)
    simulate.add_parser(sub)
    cve.add_parser(sub)
    batch.add_parser(sub)
    _model_file_parsers(sub)
    return parser


def _message(exc: SparsefricError) -> str:
    """An error in the terms of the command line: parameters as their flags."""
    if isinstance(exc, OptionError):
        return as_flags(f"{flag(exc.parameter)} {exc.problem}")
    return as_flags(str(exc))


def _interrupted(exc: BaseException) -> int:
    name = "SIGTERM" if isinstance(exc, Terminated) else "SIGINT"
    word = "terminated" if name == "SIGTERM" else "interrupted"
    notes = getattr(exc, "__notes__", None)  # a batch run names the joints it finished
    print(f"sparsefric: {word}; {notes[-1] if notes else 'nothing was written'}",
          file=sys.stderr)
    return EXIT_INTERRUPTED[name]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status (0, 1 for failed batch joints, 2 for bad input,
    3 for warnings under ``--strict``, 130 after Ctrl-C, 143 after SIGTERM)."""
    args = build_parser().parse_args(argv)
    try:
        with interrupts.handled(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return args.run(args)
    except SparsefricError as exc:
        print(f"sparsefric: error: {_message(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:  # the file system refused an output (permissions, disk full, …)
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"sparsefric: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt as exc:
        return _interrupted(exc)
    except SystemError as exc:  # Ctrl-C inside compiled (numba) code surfaces as SystemError
        cause = _interrupt_cause(exc)
        if cause is None:
            raise
        return _interrupted(cause)


def _interrupt_cause(exc: BaseException | None) -> KeyboardInterrupt | None:
    while exc is not None:
        if isinstance(exc, KeyboardInterrupt):
            return exc
        exc = exc.__cause__ or exc.__context__
    return None
