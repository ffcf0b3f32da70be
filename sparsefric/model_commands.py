"""Commands on a model file: ``sparsefric export`` and ``sparsefric validate-model``.

``export MODEL.json --lang {c,python} --out DIR`` writes the model's friction as code
(:func:`sparsefric.export.export_model`): all files or none, moved into ``DIR`` only when
every one is written, and files of the same names already there replaced only with
``--force``. ``validate-model FILE…`` checks every model file against the JSON Schema
of the format (:mod:`sparsefric.schema`) and then as the reader does, as a linter does: one
line per file, valid or naming the JSON path of its first problem, and exit status 2 if any
file is invalid.

Both follow the command line's conventions (:mod:`sparsefric.cli`): a problem raises
:class:`~sparsefric.errors.SparsefricError` (an option's as
:class:`~sparsefric.errors.OptionError`), which the entry point prints as one line
``sparsefric: error: …`` with exit status 2 (``validate-model`` prints the line of each
invalid file itself and goes on). Only argparse is imported at start-up.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from sparsefric.errors import EXIT_USAGE, SparsefricError

#: Languages of ``export --lang`` (those of :data:`sparsefric.export.LANGS`).
EXPORT_LANGS = ("c", "python")
#: Default ``--prefix`` (:data:`sparsefric.export.DEFAULT_PREFIX`).
EXPORT_PREFIX = "sparsefric_friction"
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Add ``export`` and ``validate-model`` to the subcommands ``sub`` of the main parser."""
    p = sub.add_parser("export", help="write a model's friction as C or Python code",
                       description="Write the friction of a model file as dependency-free C99 "
                                   "(PREFIX.h, PREFIX.c) or as a Python module that needs numpy "
                                   "only (PREFIX.py), with the parameters baked in.",
                       epilog="examples:\n"
                              "  sparsefric export results/joint5/model.json --lang c --out fw/\n"
                              "  sparsefric export model.json --lang python --out . "
                              "--prefix joint5")
    p.add_argument("model", help="model file (model.json)")
    p.add_argument("--lang", choices=EXPORT_LANGS, required=True, help="language of the code")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--prefix", default=EXPORT_PREFIX,
                   help=f"file name and C identifier prefix (default: {EXPORT_PREFIX})")
    p.add_argument("--force", action="store_true",
                   help="replace files of the same names in --out (without it the command "
                        "stops)")
    p.set_defaults(run=run_export)
    p = sub.add_parser("validate-model", help="check model files against the format's schema",
                       description="Check every model file against the JSON Schema of "
                                   "sparsefric-model (the first problem of a file is named with "
                                   "its JSON path), then as sparsefric reads them: one line per "
                                   "file, and exit status 2 if any is invalid.",
                       epilog="examples:\n  sparsefric validate-model results/*/model.json")
    p.add_argument("files", nargs="+", help="model files (model.json)")
    p.set_defaults(run=run_validate)


def _load_valid(path: str):
    """(model, format) of ``path`` after the schema and the reader's checks (ModelFileError)."""
    from sparsefric.model import JointModel, read_json
    from sparsefric.schema import validate_model_dict

    data = read_json(path)
    validate_model_dict(data, path)
    return JointModel.from_dict(data, path), data["format"]


def run_export(args: argparse.Namespace) -> int:
    """``sparsefric export``: the code files of ``args.model`` in ``args.out``."""
    from sparsefric.atomic import refuse_results, staged
    from sparsefric.export import export_model, file_names

    _check_prefix(args.prefix, args.lang)
    out = Path(args.out)
    refuse_results(out, file_names(args.lang, args.prefix), args.force)
    model, _ = _load_valid(args.model)
    names: list[str] = []

    def work(stage: Path) -> None:
        names.extend(p.name for p in export_model(model, args.lang, stage, prefix=args.prefix))

    staged(out, work)
    print(f"{model.kind} friction of {args.model} written to "
          + ", ".join(str(out / name) for name in names))
    return 0


def _check_prefix(prefix: str, lang: str) -> None:
    """:class:`OptionError` unless ``prefix`` is a C identifier and, for a Python module, not
    the name of a standard-library module (``sys.py`` beside a program would hide ``sys``)."""
    from sparsefric.errors import OptionError

    if not _IDENTIFIER.fullmatch(prefix):
        raise OptionError("prefix", f"must be a C identifier (letters, digits, _; not starting "
                                    f"with a digit), got {prefix!r}")
    if lang == "python" and prefix in sys.stdlib_module_names:
        raise OptionError("prefix", f"{prefix!r} is a module of Python's standard library, "
                                    f"which {prefix}.py would hide; choose another name")


def run_validate(args: argparse.Namespace) -> int:
    """``sparsefric validate-model``: one line per file, in order, a valid one's on stdout and
    an invalid one's as the command line's errors (``sparsefric: error: …`` on stderr); exit
    status :data:`~sparsefric.errors.EXIT_USAGE` if any file is invalid, else 0."""
    invalid = False
    for path in args.files:
        try:
            model, fmt = _load_valid(path)
        except SparsefricError as exc:
            print(f"sparsefric: error: {exc}", file=sys.stderr, flush=True)
            invalid = True
        else:
            print(f"{path}: valid {fmt} ({model.axis} axis, {model.kind} friction)", flush=True)
    return EXIT_USAGE if invalid else 0
