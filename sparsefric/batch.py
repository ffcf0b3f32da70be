"""Batch identification of many joints: ``sparsefric batch MANIFEST.csv --out DIR``.

The manifest is a CSV file with one row per joint::

    joint,train,validate,test,axis,static_only
    shoulder,shoulder/train1.csv;shoulder/train2.csv,shoulder/val.csv,shoulder/test.csv,,
    gantry,gantry/run.csv,,,prismatic,true

A spreadsheet whose decimal mark is a comma separates the columns by ``;`` instead, and quotes a
cell of several files (``shoulder;"a.csv;b.csv";val.csv``); lines starting with ``#`` are skipped.

``joint`` (a directory name) and ``train`` (semicolon-separated files) are required; ``validate``
and ``test`` are optional; every other column is an identification option (see
:data:`OPTIONS`; an empty cell keeps the default). Relative paths are relative to the manifest's
folder. Each joint is identified in its own process (``--workers N``) or as one task on a
Dask distributed cluster (``--scheduler tcp://HOST:PORT``; the workers must see the same file
system) and written to ``DIR/<joint>/`` exactly like ``sparsefric identify`` (staged, then moved
into place, ``model.json`` last) plus ``summary.json`` and ``inputs.json`` (the row's options and
the size, time and SHA-256 of its files). A joint whose ``model.json`` already exists is kept
unless ``--force``, as long as its row and the content of its files are those ``inputs.json``
records: it stays ``ok`` with the timing of the run that identified it (column ``run``:
``earlier``); otherwise it is redone (column ``redone``: why). The manifest is checked whole
before any joint runs (a missing file or a bad option is an error naming its row, and nothing
is written: hours of fits are not spent before a typo shows); a joint that fails as it runs is
reported in the summary and does not stop the others. Ctrl-C (or SIGTERM) stops the local
workers at once: the joints already finished stay, each written whole, and the interrupt
carries a note naming them and those left for a rerun (:func:`interrupted_text`).
``DIR/summary.csv`` and ``DIR/summary.html`` compare the joints (:mod:`sparsefric.fleet`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import as_completed
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm import tqdm  # console bars: tqdm.auto warns in Jupyter without ipywidgets

from sparsefric.atomic import remove_stale_stages, staged, write_text
from sparsefric.data import (
    DECIMAL_COMMA,
    LOAD_DEFAULTS,
    TIME_UNITS,
    ExtraFieldsError,
    load_with,
    parser_message,
    read_text_table,
    repeated_file,
    shared_file_findings,
)
from sparsefric.errors import SparsefricError
from sparsefric.fleet import UNRECORDED, summary_table, write_summary
from sparsefric.identify import fit_joint, settings
from sparsefric.model import JointModel
from sparsefric.options import (
    ANGLE_UNITS,
    AXES,
    DEFAULT_OUTLIER_RATIO,
    DEFAULT_OUTLIER_Z,
    DIFFERENTIATION,
    LIBRARIES,
    MIN_RESAMPLES,
    SIGN_MODELS,
    TORQUE_TIMINGS,
    UNCERTAINTY,
    angle_unit_conflict,
    check_records,
    integer_parser,
    parse_bool,
    parse_number,
    parse_positive,
    parse_positive_list,
)
from sparsefric.outputs import RESULT_NAMES, write_results
from sparsefric.result import IdentificationResult
from sparsefric.workers import process_pool, starting

REQUIRED = ("joint", "train")
FILE_COLUMNS = ("train", "validate", "test")
_JOINT_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+-]*$")
_RESERVED = {"summary.csv", "summary.html"}


# ------------------------------------------------------------------------------ manifest values
def _choice(*choices: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if text not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}, got {text!r}")
        return text
    return parse


def _name(text: str) -> str:
    return text


#: Option columns of the manifest → parser of a cell (estimator keywords of
#: :class:`~sparsefric.estimator.SparseFric`, then data-loading options).
OPTIONS: dict[str, Callable[[str], Any]] = {
    "axis": _choice(*AXES),
    "model": _choice(*SIGN_MODELS),
    "library": _choice(*LIBRARIES),
    "offset": parse_bool,
    "static_only": parse_bool,
    "tanh_k": parse_positive,
    "nu": parse_positive,
    "aic_parts": integer_parser(10),
    "omega_starts": parse_positive_list,
    "sigma0_starts": parse_positive_list,
    "thresholds": parse_positive_list,
    "differentiation": _choice(*DIFFERENTIATION),
    "regularization": parse_positive,
    "cutoff_hz": parse_positive,
    "torque_timing": _choice(*TORQUE_TIMINGS),
    "torque_delay": parse_number,
    "presliding_distance": parse_positive,
    "uncertainty": _choice(*UNCERTAINTY),
    "resamples": integer_parser(MIN_RESAMPLES),
    "random_state": integer_parser(0),
    "angle_unit": _choice(*ANGLE_UNITS),
    "time_unit": _choice(*TIME_UNITS),
    "sample_rate": parse_positive,
    "resample": parse_bool,
    "time": _name,
    "position": _name,
    "torque": _name,
    "velocity": _name,
    "acceleration": _name,
    "trajectory_column": _name,
}

#: Option columns of numbers (read with decimal commas in a ';'- or tab-separated manifest).
_NUMBER_OPTIONS = [col for col, parse in OPTIONS.items()
                   if parse in (parse_number, parse_positive, parse_positive_list)]


@dataclass(frozen=True)
class JointSpec:
    """One manifest row, checked and with absolute paths.

    Attributes
    ----------
    joint : str
        Joint name (the output sub-directory).
    train, validate, test : tuple of str
        Absolute paths of the trajectory files.
    options : dict
        Keyword arguments of :class:`~sparsefric.estimator.SparseFric`.
    load : dict
        Data-loading options (column names, ``angle_unit``, ``resample``).
    line : int
        Line of the row in the manifest (the header is line 1).
    """

    joint: str
    train: tuple[str, ...]
    validate: tuple[str, ...] = ()
    test: tuple[str, ...] = ()
    options: dict[str, Any] = field(default_factory=dict)
    load: dict[str, Any] = field(default_factory=dict)
    line: int = 2


@dataclass
class JointResult:
    """Outcome of one joint: ``status`` is ``ok`` or ``failed``.

    Attributes
    ----------
    joint : str
    status : str
    error : str
        One-line error message of a failed joint ("" otherwise).
    summary : dict
        :func:`sparsefric.report.summary_dict` of the joint (empty if failed or unreadable).
    seconds : float
        Wall time [s] of the identification (of the earlier run for a kept joint; NaN when
        that run's summary.csv is gone).
    earlier : bool
        The joint's results were kept from an earlier run (``model.json`` present, row and
        files unchanged, no ``force``).
    redone : str
        Why an earlier run's results were not kept (:func:`inputs_changed`; "" otherwise).
    """

    joint: str
    status: str
    error: str = ""
    summary: dict = field(default_factory=dict)
    seconds: float = 0.0
    earlier: bool = False
    redone: str = ""


def _where(manifest: Path, line: int, column: str | None = None) -> str:
    col = f", column '{column}'" if column else ""
    return f"{manifest}: row {line}{col}"


def _read_manifest_table(manifest: Path) -> pd.DataFrame:
    """The manifest's cells as stripped text, indexed by the line of each row in the file."""
    if not manifest.is_file():
        raise SparsefricError(f"{manifest}: no such manifest file")
    df, header = _manifest_cells(manifest)
    mixed = next((c for c in df.columns if "," in c or ";" in c), None)
    if mixed is not None:
        raise SparsefricError(f"{header}, column '{mixed}': the header mixes ',' and ';'; "
                              "separate all its columns by ',' (then ';' separates the files "
                              "within a cell) or all by ';'")
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise SparsefricError(f"{header}: missing column '{missing[0]}' (columns: "
                              f"{', '.join(df.columns) or 'none'})")
    unknown = [c for c in df.columns if c not in (*FILE_COLUMNS, "joint", *OPTIONS)]
    if unknown:
        raise SparsefricError(f"{header}, column '{unknown[0]}': unknown column (options: "
                              f"{', '.join(OPTIONS)})")
    if df.empty:
        raise SparsefricError(f"{manifest}: no joints (the manifest has only a header)")
    return df.apply(lambda col: col.str.strip())


def _manifest_cells(manifest: Path) -> tuple[pd.DataFrame, str]:
    """The manifest's cells, indexed by the line of each row, and its header's place for
    messages ("MANIFEST: row N (header)").

    It is read as a data file is (:func:`~sparsefric.data.read_text_table`): in UTF-8 or
    Windows-1252, without blank lines and lines starting with ``#`` (a row commented out),
    separated by ``,``, or by ``;`` or tabs where the header has no ``,``.
    """
    try:
        table = read_text_table(manifest)
    except OSError as exc:
        raise SparsefricError(f"{manifest}: cannot be read ({_one_line(exc)})") from None
    if not table.data:
        raise SparsefricError(f"{manifest}: the manifest is empty")
    hint = _quote_hint(table.sep)
    try:
        df = table.rows(text=True)
    except ExtraFieldsError as exc:
        raise SparsefricError(f"{manifest}: row {exc.line}: more cells than the header has "
                              f"columns{hint}") from None
    except ValueError as exc:  # pandas' ParserError among them
        raise SparsefricError(f"{manifest}: cannot be read as CSV "
                              f"({parser_message(exc, table.lines)}){hint}") from None
    return (_decimal_points(df) if table.decimal_comma else df,
            f"{manifest}: row {table.lines[0]} (header)")


def _decimal_points(df: pd.DataFrame) -> pd.DataFrame:
    """The number options of a manifest with decimal commas (separated by ';' or tabs:
    :attr:`~sparsefric.data.TextTable.decimal_comma`) with those made points: the spreadsheet
    that separates by ';' writes 0.5 as "0,5". A cell with a point already keeps
    its commas, which then separate numbers ("0.01,0.1")."""
    for col in df.columns.intersection(_NUMBER_OPTIONS):
        cells = df[col]
        df[col] = cells.where(cells.str.contains(".", regex=False),
                              cells.str.replace(DECIMAL_COMMA, ".", regex=True))
    return df


def _quote_hint(sep: str) -> str:
    """How to write several files in one cell of a ';'-separated manifest ("" for ',')."""
    return ' (quote a cell of several files: "a.csv;b.csv")' if sep == ";" else ""


def _files(cell: str, base: Path, where: str, required: bool) -> tuple[str, ...]:
    names = [p.strip() for p in cell.split(";") if p.strip()]
    if required and not names:
        raise SparsefricError(f"{where}: no training file given")
    out = []
    for name in names:
        path = Path(name).expanduser()
        path = path if path.is_absolute() else base / path
        if not path.is_file():
            raise SparsefricError(f"{where}: no such file '{name}' (looked for {path})")
        out.append(str(path.resolve()))
    if text := repeated_file(out):
        raise SparsefricError(f"{where}: {text}: its records would count twice; list each file "
                              "once")
    return tuple(out)


def _joint_name(cell: str, where: str, seen: dict[str, int]) -> str:
    if not cell:
        raise SparsefricError(f"{where}: empty joint name")
    if not _JOINT_NAME.match(cell) or cell in _RESERVED:
        raise SparsefricError(f"{where}: joint name {cell!r} cannot be a directory name "
                              "(use letters, digits, '_', '-', '.', '+')")
    if cell in seen:
        raise SparsefricError(f"{where}: duplicate joint name {cell!r} (first on row "
                              f"{seen[cell]})")
    return cell


def _row_spec(row: pd.Series, line: int, manifest: Path, seen: dict[str, int]) -> JointSpec:
    base = manifest.parent
    joint = _joint_name(row["joint"], _where(manifest, line, "joint"), seen)
    files = {c: _files(row.get(c, ""), base, _where(manifest, line, c), c == "train")
             for c in FILE_COLUMNS}
    options, load = {}, {}
    for col, parse in OPTIONS.items():
        cell = row.get(col, "")
        if not cell:
            continue
        try:
            value = parse(cell)
        except ValueError as exc:
            raise SparsefricError(f"{_where(manifest, line, col)}: {exc}") from None
        (load if col in LOAD_DEFAULTS else options)[col] = value
    if "thresholds" in options:
        options["thresholds"] = np.asarray(options["thresholds"], dtype=float)
    drawn = [c for c in ("resamples", "random_state") if c in options]
    if drawn and options.get("uncertainty") != "bootstrap":  # fast and none draw nothing
        raise SparsefricError(f"{_where(manifest, line, drawn[0])}: needs uncertainty "
                              "bootstrap in the row (column 'uncertainty')")
    axis = options.get("axis", "revolute")
    if why := angle_unit_conflict(load.get("angle_unit", "rad"), axis):
        raise SparsefricError(f"{_where(manifest, line, 'angle_unit')}: {why} (axis {axis}: "
                              "positions in m)")
    return JointSpec(joint, files["train"], files["validate"], files["test"], options, load,
                     line)


def read_manifest(manifest: str | os.PathLike) -> list[JointSpec]:
    """Read and check a batch manifest.

    Parameters
    ----------
    manifest : path-like
        The CSV manifest (columns ``joint``, ``train`` and optionally ``validate``, ``test`` and
        option columns of :data:`OPTIONS`).

    Returns
    -------
    list of JointSpec
        One per row, in manifest order, with absolute file paths.

    Raises
    ------
    SparsefricError
        One line naming the manifest, the row (line, header = 1) and the column at fault.
    """
    path = Path(manifest)
    df = _read_manifest_table(path)
    seen: dict[str, int] = {}
    specs = []
    for line, row in df.iterrows():
        spec = _row_spec(row, int(line), path, seen)
        seen[spec.joint] = spec.line
        specs.append(spec)
    return specs


# ------------------------------------------------------------------------------ inputs record
#: The record, in a joint's folder, of the manifest row and files its results came from.
INPUTS_NAME = "inputs.json"
_INPUTS_FORMAT = "sparsefric-batch-inputs/1"


def _sha256(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _file_record(path: str, known: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Name, size, modification time and SHA-256 of one input file; the hash of ``known`` (an
    earlier record of the same path) is reused when its size and time are unchanged."""
    st = os.stat(path)
    rec = {"path": path, "name": Path(path).name, "size": st.st_size, "mtime_ns": st.st_mtime_ns}
    same = known is not None and all(known.get(k) == rec[k] for k in ("path", "size",
                                                                       "mtime_ns"))
    rec["sha256"] = known["sha256"] if same else _sha256(path)
    return rec


def _plain(value: Any) -> Any:
    """A manifest value as JSON would give it back (tuples and arrays as lists)."""
    return json.loads(json.dumps(value, sort_keys=True, default=lambda v: np.asarray(v).tolist()))


def inputs_record(spec: JointSpec, known: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What a joint's results depend on: the row's options and its files' content.

    Parameters
    ----------
    spec : JointSpec
        The manifest row.
    known : mapping, optional
        An earlier record: a file's hash is reused where its path, size and modification time
        are unchanged (the file is not read again).

    Returns
    -------
    dict
        ``options`` (estimator and loading options of the row) and ``files`` (per column
        ``train``, ``validate``, ``test``: the files' records in manifest order).
    """
    earlier = {f["path"]: f for col in (known or {}).get("files", {}).values() for f in col
               if isinstance(f, dict) and "path" in f}
    files = {col: [_file_record(p, earlier.get(p)) for p in getattr(spec, col)]
             for col in FILE_COLUMNS}
    return {"format": _INPUTS_FORMAT,
            "options": _plain({**spec.options, **spec.load}), "files": files}


def _file_changes(col: str, old: list, new: list) -> str:
    if [f.get("name") for f in old] != [f["name"] for f in new]:
        return f"{col} files changed"
    changed = [f["name"] for f, g in zip(new, old, strict=True) if f["sha256"] != g.get("sha256")]
    if not changed:
        return ""
    return f"{col} file{'s' if len(changed) > 1 else ''} {', '.join(changed)} changed"


def inputs_changed(spec: JointSpec, folder: Path) -> str:
    """Why the results in ``folder`` (complete: ``model.json`` present) are not those of the
    row ``spec`` and its files as they are now; "" when they are.

    Parameters
    ----------
    spec : JointSpec
        The manifest row.
    folder : Path
        The joint's output folder.

    Returns
    -------
    str
        E.g. "options model, nu changed" or "train file a.csv changed"; :data:`UNRECORDED`
        when ``inputs.json`` is absent or unreadable; "" when nothing changed. Files are
        compared by name and content (moving the data keeps the results).
    """
    try:
        old = json.loads((folder / INPUTS_NAME).read_text(encoding="utf-8"))
        model_hash = _sha256(folder / "model.json")
    except (OSError, ValueError):
        return UNRECORDED
    if not isinstance(old, dict) or old.get("format") != _INPUTS_FORMAT:
        return UNRECORDED
    if old.get("model_sha256") != model_hash:
        return "model.json is not the one the record belongs to"
    try:
        new = inputs_record(spec, old)
    except OSError as exc:
        return f"an input file cannot be read ({_one_line(exc)})"
    opts, before = new["options"], old.get("options", {})
    keys = sorted(k for k in {*opts, *before} if opts.get(k) != before.get(k))
    if keys:
        return f"option{'s' if len(keys) > 1 else ''} {', '.join(keys)} changed"
    for col in FILE_COLUMNS:
        why = _file_changes(col, old.get("files", {}).get(col, []), new["files"][col])
        if why:
            return why
    return ""


# ------------------------------------------------------------------------------ one joint
def _write_joint(result: IdentificationResult, stage: Path, train, validate, test,
                 title: str) -> dict:
    """The files of ``sparsefric identify`` (same names) plus ``summary.json``; returns it."""
    summary = write_results(result, stage, train, validate, test, title=title)
    write_text(stage / "summary.json", json.dumps(summary, indent=1))
    return summary


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if isinstance(exc, SparsefricError) else f"{type(exc).__name__}: {text}"


def _records(spec: JointSpec) -> tuple[list, list | None, list | None]:
    """The joint's training, validation and test records (None where none are given), checked
    against the options that depend on them, by the rule of ``identify``: the cutoff and the
    torque delay (:func:`~sparsefric.options.check_records`)."""
    train = load_with(spec.train, spec.load)
    validate = load_with(spec.validate, spec.load) if spec.validate else None
    test = load_with(spec.test, spec.load) if spec.test else None
    check_records(spec.options.get("cutoff_hz"), spec.options.get("torque_delay", 0.0),
                  [*train, *(validate or ()), *(test or ())])
    return train, validate, test


def identify_joint(spec: JointSpec, out_dir: str) -> JointResult:
    """Identify one joint and write ``out_dir/<joint>/`` atomically (``model.json`` last).

    Runs in a worker process (local pool or Dask); never raises for a problem of the joint's
    data or fit: the result then has ``status="failed"`` and a one-line ``error``.

    Parameters
    ----------
    spec : JointSpec
        The manifest row.
    out_dir : str
        The batch output directory.

    Returns
    -------
    JointResult
    """
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            record = inputs_record(spec)  # before reading: a file changed later gets redone
            train, validate, test = _records(spec)
            result, _ = fit_joint(train, validate, settings(spec.options))
            result.findings[:0] = shared_file_findings(spec.train, {"validate": spec.validate,
                                                                    "test": spec.test})
            box: dict[str, dict] = {}

            def work(stage: Path) -> None:
                box["summary"] = _write_joint(result, stage, train, validate, test,
                                              f"sparsefric identification report — {spec.joint}")
                record["model_sha256"] = _sha256(stage / "model.json")
                write_text(stage / INPUTS_NAME, json.dumps(record, indent=1))

            staged(Path(out_dir) / spec.joint, work, (*RESULT_NAMES, INPUTS_NAME))
    except Exception as exc:  # noqa: BLE001 - one joint's failure must not stop the batch
        return JointResult(spec.joint, "failed", _one_line(exc),
                           seconds=time.perf_counter() - start)
    return JointResult(spec.joint, "ok", summary=box["summary"],
                       seconds=time.perf_counter() - start)


def _previous(spec: JointSpec, out: Path, seconds: Mapping[str, float]) -> JointResult:
    """The result of a joint already complete on disk (``model.json`` present), with the
    timing the earlier run recorded in ``summary.csv`` (``seconds``: joint → wall time [s])."""
    try:
        summary = json.loads((out / spec.joint / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        try:
            summary = {"model": JointModel.load(out / spec.joint / "model.json").to_dict()}
        except SparsefricError as exc:
            return JointResult(spec.joint, "failed", f"earlier result unreadable: {exc}; "
                               "rerun with --force")
    return JointResult(spec.joint, "ok", summary=summary,
                       seconds=seconds.get(spec.joint, math.nan), earlier=True)


def _earlier_seconds(out: Path) -> dict[str, float]:
    """Joint → wall time [s] of the joints an earlier run identified (from its summary.csv)."""
    try:
        table = pd.read_csv(out / "summary.csv", usecols=["joint", "seconds"],
                            dtype={"joint": str})
    except (OSError, ValueError, pd.errors.ParserError):
        return {}
    return dict(zip(table["joint"], table["seconds"].astype(float), strict=True))


# ------------------------------------------------------------------------------ execution
@contextlib.contextmanager
def _single_threaded_blas() -> Iterator[None]:
    """One BLAS/OpenMP thread per worker process (inherited at spawn), unless set by the user."""
    names = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")
    added = [n for n in names if n not in os.environ]
    for n in added:
        os.environ[n] = "1"
    try:
        yield
    finally:
        for n in added:
            os.environ.pop(n, None)


def _worker_start() -> None:
    """Worker start: its progress bars take a thread lock. tqdm's default one is a named
    semaphore, which a terminated worker would leave for the resource tracker to warn about."""
    tqdm.set_lock(threading.RLock())


def _run_local(specs: list[JointSpec], out: str, workers: int,
               report: Callable[[JointResult], None]) -> None:
    """The joints on ``workers`` processes. Ctrl-C (or SIGTERM, turned into it by the command
    line) cancels the joints not started, ends the workers and then removes the staging
    folders of the joints they were writing (a finished joint was moved into place whole)."""
    try:
        with _single_threaded_blas(), process_pool(workers, _worker_start) as ex:
            with starting():  # submit starts the workers
                futures = {ex.submit(identify_joint, s, out): s for s in specs}
            for fut in as_completed(futures):
                try:
                    report(fut.result())
                except Exception as exc:  # noqa: BLE001 - a crashed worker fails its joint only
                    report(JointResult(futures[fut].joint, "failed", _one_line(exc)))
    except KeyboardInterrupt:
        for s in specs:
            remove_stale_stages(Path(out) / s.joint)
        raise


def _run_dask(specs: list[JointSpec], out: str, scheduler: str,
              report: Callable[[JointResult], None]) -> None:
    from dask.distributed import Client, as_completed

    try:
        client = Client(scheduler, timeout="20s")
    except (OSError, TimeoutError, ValueError) as exc:
        raise SparsefricError(f"--scheduler {scheduler}: cannot connect ({_one_line(exc)})"
                              ) from None
    with client:
        futures = {client.submit(identify_joint, s, out, pure=False,
                                 key=f"sparsefric-batch-{s.joint}-{os.urandom(4).hex()}"): s
                   for s in specs}
        try:
            for fut in as_completed(list(futures)):
                try:
                    report(fut.result())
                except Exception as exc:  # noqa: BLE001 - a lost worker fails its joint only
                    report(JointResult(futures[fut].joint, "failed", _one_line(exc)))
        except KeyboardInterrupt:
            client.cancel(list(futures))
            raise


def _to_do(specs: list[JointSpec], out: Path,
           force: bool) -> tuple[list[JointSpec], dict[str, str]]:
    """The joints to identify, and joint → why for those whose earlier results are not kept."""
    todo, redone = [], {}
    for s in specs:
        if force or not (out / s.joint / "model.json").is_file():
            todo.append(s)
        elif why := inputs_changed(s, out / s.joint):
            todo.append(s)
            redone[s.joint] = why
    return todo, redone


def run_batch_specs(specs: list[JointSpec], out_dir: str | os.PathLike, *, workers: int = 1,
                    scheduler: str | None = None, force: bool = False, progress: bool = True,
                    outlier_z: float = DEFAULT_OUTLIER_Z,
                    outlier_ratio: float = DEFAULT_OUTLIER_RATIO) -> pd.DataFrame:
    """Identify every joint (skipping complete ones) and write the batch summary.

    Parameters
    ----------
    specs : list of JointSpec
        From :func:`read_manifest`.
    out_dir : path-like
        Output directory; ``<joint>/`` per joint plus ``summary.csv`` and ``summary.html``.
    workers : int
        Local worker processes (ignored with ``scheduler``).
    scheduler : str, optional
        Address of a Dask distributed scheduler (``tcp://host:port``); one task per joint.
    force : bool
        Redo joints whose ``model.json`` exists (else they are kept, with their status and
        timing, unless their row or files changed since: :func:`inputs_changed`).
    progress : bool
        Show a tqdm progress bar on stderr (only when stderr is a terminal).
    outlier_z : float
        |robust z-score| above which a friction parameter is flagged.
    outlier_ratio : float
        A friction parameter at least this many times the median of the other joints, or at
        most its inverse, is flagged too (:func:`ratio_to_others`).

    Returns
    -------
    DataFrame
        The summary table (one row per joint, manifest order), as written to ``summary.csv``.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results: dict[str, JointResult] = {}
    todo, redone = _to_do(specs, out, force)
    seconds = _earlier_seconds(out)
    again = {s.joint for s in todo}
    for s in specs:
        if s.joint not in again:
            results[s.joint] = _previous(s, out, seconds)
    bar = tqdm(total=len(specs), initial=len(specs) - len(todo), unit="joint", desc="joints",
               disable=not (progress and sys.stderr.isatty()), file=sys.stderr)

    def report(res: JointResult) -> None:
        results[res.joint] = replace(res, redone=redone.get(res.joint, ""))
        bar.set_postfix_str(f"{res.joint}: {res.status}")
        bar.update(1)

    started = time.time_ns()
    with bar:
        try:
            if todo and scheduler:
                _run_dask(todo, str(out), scheduler, report)
            elif todo:
                _run_local(todo, str(out), max(1, min(workers, len(todo))), report)
        except KeyboardInterrupt as exc:
            exc.add_note(interrupted_text(todo, results, out, started))
            raise
    table = summary_table([results.get(s.joint, JointResult(s.joint, "failed", "no result"))
                           for s in specs], outlier_z, outlier_ratio)
    write_summary(table, out, outlier_z, outlier_ratio)
    return table


def _names(joints: list[str], shown: int = 5) -> str:
    more = f", … ({len(joints) - shown} more)" if len(joints) > shown else ""
    return ", ".join(joints[:shown]) + more


def interrupted_text(todo: list[JointSpec], results: Mapping[str, JointResult], out: Path,
                     started: int) -> str:
    """What an interrupted run leaves: the joints it finished (each written whole) and those
    it did not.

    Parameters
    ----------
    todo : list of JointSpec
        The joints the run was to identify.
    results : mapping
        Joint → result, of the joints reported before the interrupt.
    out : Path
        The batch output directory.
    started : int
        When the run started [ns since the epoch]: a joint published after it but not yet
        reported counts as finished.

    Returns
    -------
    str
        One line, e.g. "1 joint finished and was kept in out (a); 2 not finished (b, c):
        a rerun does them; summary not written".
    """
    ok, failed, rest = [], [], []
    for s in todo:
        res = results.get(s.joint)
        if res is not None:
            (ok if res.status == "ok" else failed).append(s.joint)
        elif _published_since(out / s.joint, started):
            ok.append(s.joint)
        else:
            rest.append(s.joint)
    done = (f"{len(ok)} joint{'s' if len(ok) != 1 else ''} finished and "
            f"{'were' if len(ok) != 1 else 'was'} kept in {out} ({_names(ok)})"
            if ok else "no joint finished")
    parts = [done, f"{len(failed)} failed ({_names(failed)})" if failed else "",
             f"{len(rest)} not finished ({_names(rest)}): a rerun does "
             f"{'it' if len(rest) == 1 else 'them'}" if rest else ""]
    return "; ".join([p for p in parts if p] + ["summary not written"])


def _published_since(folder: Path, started: int) -> bool:
    try:
        return (folder / "model.json").stat().st_mtime_ns >= started
    except OSError:
        return False


def run_manifest(manifest: str | os.PathLike, out_dir: str | os.PathLike,
                 **kwargs: Any) -> pd.DataFrame:
    """:func:`read_manifest` then :func:`run_batch_specs` (same keyword arguments)."""
    return run_batch_specs(read_manifest(manifest), out_dir, **kwargs)
