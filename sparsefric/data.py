"""The data contract: trajectories read from CSV, Parquet or MATLAB files.

A trajectory is time ``t`` [s], position ``q`` [rad, or m for a prismatic axis] and motor torque
``tau`` [N·m, or N], sampled uniformly; optionally measured velocity and acceleration columns and a
``trajectory`` column that splits one file into independent trajectories. Columns named ``*_true``
(written by the simulator) are never read as measurements. A CSV may be in UTF-8, UTF-16 or
Windows-1252 (Latin-1) and may hold blank lines and comment lines starting with ``#``.

Every problem with a file is raised as :class:`~sparsefric.errors.DataError` with one line that
names the file, the column or the line number (as a text editor counts it, blank and comment
lines included: the first line of the file is line 1).
"""

from __future__ import annotations

import bz2
import codecs
import filecmp
import gzip
import io
import lzma
import os
import re
import shlex
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sparsefric.atomic import atomic_path
from sparsefric.data_checks import Finding
from sparsefric.errors import DataError, OptionError
from sparsefric.options import (
    ANGLE_UNITS,
    check_choice,
    check_positive,
    check_torque_delay,
    mention,
)
from sparsefric.stated_units import is_number, is_units_row, resolve_units, stated_units

MIN_SAMPLES = 50
#: Units of a time column and their factor to seconds (``time_unit``, ``--time-unit``).
TIME_UNITS: dict[str, float] = {"s": 1.0, "ms": 1e-3, "us": 1e-6}
#: Largest accepted deviation of one sampling interval from the mean period of its record, as a
#: fraction of it: the differentiation (:func:`sparsefric.differentiation.differentiate`) takes
#: the samples as uniform within this, so a record beyond it is refused when loaded (or
#: resampled with ``resample``) rather than later without its file's name.
SAMPLING_TOLERANCE = 0.01
#: Largest accepted magnitude of a position, velocity, acceleration or torque value (after the
#: degree conversion); beyond it the regressions overflow, and no joint records such values.
MAX_ABS_VALUE = 1e12
#: Accepted range of the median sampling period [s].
PERIOD_RANGE = (1e-9, 3600.0)
#: ``--resample`` refuses to create more than this many samples per recorded sample.
MAX_RESAMPLE_FACTOR = 10
#: A step of more than this many median periods is a pause that ``--resample`` keeps (a logger
#: that drops a sample or two is interpolated across).
RESAMPLE_GAP = 5.0


#: The trajectory column's default name: a file without it is one trajectory.
TRAJECTORY_COLUMN = "trajectory"


@dataclass(frozen=True)
class Columns:
    """Names of the columns to read; ``None`` for an optional column that is absent.

    Every column named must be in the file, except the trajectory column by its default name
    (:data:`TRAJECTORY_COLUMN`), which splits the files that have it, and the time column when
    the times come from a sample rate (``sample_rate`` of :func:`load_file`).
    """

    time: str | None = "t"
    position: str = "q"
    torque: str = "tau"
    velocity: str | None = None
    acceleration: str | None = None
    trajectory: str | None = TRAJECTORY_COLUMN


@dataclass(frozen=True)
class Trajectory:
    """One uniformly sampled record of a joint.

    Attributes
    ----------
    t : ndarray
        Time [s], strictly increasing, uniform.
    q : ndarray
        Position [rad] (or [m]).
    tau : ndarray
        Motor torque [N·m] (or [N]).
    qd, qdd : ndarray or None
        Measured velocity [rad/s] and acceleration [rad/s²] if the file has them.
    name : str
        Where it came from: ``file`` or ``file#trajectory``.
    truth : dict
        Simulator truth columns (``qd_true``, ``qdd_true``, ``z_true``) if present; never used for
        identification.
    notes : tuple of str
        What loading changed in the data (an angle unwrapped), for the user to check.
    columns : Columns or None
        The columns it was read from, for messages (None: not read from a table).
    """

    t: np.ndarray
    q: np.ndarray
    tau: np.ndarray
    qd: np.ndarray | None = None
    qdd: np.ndarray | None = None
    name: str = "trajectory"
    truth: dict[str, np.ndarray] = field(default_factory=dict, compare=False)
    notes: tuple[str, ...] = field(default=(), compare=False)
    columns: Columns | None = field(default=None, compare=False)

    @property
    def dt(self) -> float:
        """Sample period [s]."""
        return float((self.t[-1] - self.t[0]) / (len(self.t) - 1))

    def __len__(self) -> int:
        return len(self.t)

    def with_(self, **changes) -> Trajectory:
        """A copy with some fields changed."""
        return replace(self, **changes)

    def part(self, samples: slice, name: str | None = None) -> Trajectory:
        """Consecutive ``samples``, every channel (truth included) cut alike; ``name``
        replaces the name when given."""
        def cut(x: np.ndarray | None) -> np.ndarray | None:
            return None if x is None else x[samples]

        return self.with_(t=self.t[samples], q=self.q[samples], tau=self.tau[samples],
                          qd=cut(self.qd), qdd=cut(self.qdd),
                          name=self.name if name is None else name,
                          truth={k: v[samples] for k, v in self.truth.items()})


def read_table(path: Path) -> pd.DataFrame:
    """The table in ``path`` (CSV, Parquet or MATLAB); :class:`DataError` naming the file otherwise.

    A CSV is read as :func:`table_text` gives it (any encoding of :data:`ENCODINGS`, without its
    blank and comment lines). The index is the line of each row in the file, for messages (a
    Parquet file's row ``i`` is "line" ``i + 2``, as below a header line).
    """
    if not path.exists():
        raise DataError(f"{path}: no such file")
    if path.is_dir():
        raise DataError(f"{path}: is a directory, expected a CSV, Parquet or MATLAB file")
    suffixes = "".join(path.suffixes).lower()
    try:
        if suffixes.endswith(".parquet") or suffixes.endswith(".pq"):
            df = _read_parquet(path)
        elif suffixes.endswith(".mat"):
            df = _read_mat(path)
        else:
            return _read_csv(path)
        # a typed table's units are in its names only (q [deg])
        df.attrs[STATED_UNITS] = (stated_units([str(c) for c in df.columns], None),
                                  f"{path} (its header)")
        return df
    except DataError:
        raise
    except (pd.errors.ParserError, ValueError, OSError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else exc.__class__.__name__
        raise DataError(f"{path}: cannot be read as a table ({first})") from None


def _read_parquet(path: Path) -> pd.DataFrame:
    try:
        df = pd.read_parquet(path)
    except ImportError:
        raise DataError(f"{path}: reading Parquet needs pyarrow (pip install pyarrow)") from None
    df.index = np.arange(len(df)) + 2
    return df


def _read_mat(path: Path) -> pd.DataFrame:
    """A MATLAB file's vectors as columns named by their variables: the real vectors of the
    longest length two or more of them share (row and column vectors alike; other variables
    are left out).
    MATLAB and Simulink logs are saved so (``save('run.mat', 't', 'q', 'tau')``); scipy reads
    the formats up to v7, not v7.3 (HDF5)."""
    from scipy.io import loadmat  # only for .mat files: scipy.io costs start-up time
    from scipy.io.matlab import MatReadError

    try:
        variables = loadmat(path, squeeze_me=True)
    except NotImplementedError:
        raise DataError(f"{path}: a MATLAB v7.3 (HDF5) file, which is not read: save it with "
                        "save(..., '-v7') or as CSV") from None
    except (MatReadError, ValueError, TypeError, OSError) as exc:
        raise DataError(f"{path}: cannot be read as a MATLAB file ({exc})") from None
    vectors = {k: v for k, v in variables.items() if not k.startswith("__")
               and isinstance(v, np.ndarray) and v.ndim == 1 and v.size > 1
               and np.issubdtype(v.dtype, np.number)}
    if complex_ := [k for k, v in vectors.items() if np.iscomplexobj(v)]:
        raise DataError(f"{path}: variable '{complex_[0]}' holds complex numbers; a trajectory "
                        "is real")
    if not vectors:
        raise DataError(f"{path}: no variable is a vector of numbers; save the time, position "
                        "and torque as vectors, each its own variable (t, q, tau)")
    # a record's columns share a length, longer than the parameter vectors saved beside them
    lengths = [v.size for v in vectors.values()]
    n = max((m for m in set(lengths) if lengths.count(m) >= 2), default=max(lengths))
    df = pd.DataFrame({k: v.astype(float) for k, v in vectors.items() if v.size == n})
    df.index = np.arange(len(df)) + 2  # "lines" as a CSV's or Parquet's (_read_parquet)
    if other := [f"{k} ({v.size})" for k, v in vectors.items() if v.size != n]:
        df.attrs[LEFT_OUT] = f"vectors not of length {n}: {', '.join(other)}"
    return df


#: Key of :attr:`pandas.DataFrame.attrs` under which a reader says what it left out of the
#: table, for the message of a missing column.
LEFT_OUT = "left_out"


def _read_csv(path: Path) -> pd.DataFrame:
    table = read_text_table(path)
    if not table.data:
        raise DataError(f"{path}: the file is empty (no line other than blank lines and "
                        f"'{COMMENT}' comments)")
    try:
        names = table.names()
        units_line = int(table.lines[1]) if len(table.lines) > 1 else None
        table, row = table.without_units_row()
        df = table.rows()
        repeats, drop = header_repeats(df, row)
        if repeats:  # read again without them: the numbers below are then numbers
            table = table.without_lines(np.searchsorted(table.lines, drop))
            df = table.rows()
    except pd.errors.ParserError as exc:
        raise DataError(f"{path}: cannot be read as a table ({parser_message(exc, table.lines)})"
                        ) from None
    _check_names_not_numbers(path, names, table.lines[0])
    check_unique_header(path, names)
    if repeats:
        df.attrs[HEADER_REPEATS] = repeats
    # what the file says its columns are in, for load_file, and where it says it
    df.attrs[STATED_UNITS] = (stated_units(names, row), f"{path} (line {units_line})"
                              if row is not None else f"{path} (its header)")
    return df


def header_repeats(df: pd.DataFrame, units: Sequence[str] | None
                   ) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The lines of the rows of ``df`` that repeat its header, and those to leave out: them and
    the units row ``units`` (None: none) under each. Files joined one after another (``cat
    a.csv b.csv``) repeat both before each record. Such a row puts text in every column (but
    an empty one, as a separator ending every line makes), so a table with a column of numbers
    has none, and only the rows whose first column holds its name are compared whole."""
    full = [c for c in df.columns if df[c].notna().any()]
    if not full or any(pd.api.types.is_numeric_dtype(df[c]) for c in full):
        return (), ()
    first = df[full[0]].astype(str).str.strip().to_numpy() == str(full[0])
    rows = [i for i in np.flatnonzero(first)
            if all(str(df[c].iloc[i]).strip() == str(c) for c in full)]
    drop = list(rows)
    if units is not None:
        cells = dict(zip(df.columns, units, strict=False))
        drop += [i + 1 for i in rows if i + 1 < len(df) and all(
            str(df[c].iloc[i + 1]).strip() == cells.get(c, "").strip() for c in full)]
    lines = df.index.to_numpy()
    return tuple(int(lines[i]) for i in rows), tuple(sorted(int(lines[i]) for i in drop))


#: Key of :attr:`pandas.DataFrame.attrs` under which :func:`read_table` leaves the lines of a
#: CSV's header written again (records joined one after another).
HEADER_REPEATS = "header_repeats"
#: Key of :attr:`pandas.DataFrame.attrs` under which :func:`read_table` leaves the units a CSV
#: states (:func:`~sparsefric.stated_units.stated_units`) and where it states them.
STATED_UNITS = "stated_units"


def parser_message(exc: Exception, lines: np.ndarray) -> str:
    """The first line of the CSV parser's message on :func:`table_text`'s text, its "line N"
    (from 1) and "row N" (from 0) made the line in the file (``lines``)."""
    def in_file(match: re.Match) -> str:
        i = int(match[2]) - (match[1] == "line")
        return f"line {lines[i]}" if 0 <= i < len(lines) else match[0]

    return re.sub(r"\b(line|row) (\d+)", in_file, str(exc).strip().splitlines()[0])


#: Readers of the compressed CSVs, by suffix.
_OPENERS = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}
#: Encodings of a CSV, tried in turn: UTF-8 (without the byte-order mark of Excel's "CSV UTF-8"),
#: then Windows-1252, the superset of Latin-1 in which Excel on Windows saves "CSV" in western
#: locales (°, µ, ·, umlauts). A file that starts with the UTF-16 byte-order mark (Excel's
#: "Unicode text") is read as UTF-16.
ENCODINGS = ("utf-8-sig", "cp1252")
#: A line whose first character other than spaces and tabs is this is a comment (a logger's
#: preamble, a note between the rows) and is skipped.
COMMENT = "#"
#: A comma between digits: a decimal comma in a table separated by ``;`` or tabs.
DECIMAL_COMMA = re.compile(r"(?<=\d),(?=\d)")
#: A line break followed by a line that is empty or starts with a space or a tab (one regular
#: expression scans a 1M-row file in ~40 ms; three substring tests took ~0.2 s).
_LINE_START_BLANK = re.compile(r"\n[\n \t]")
#: A blank or comment line, with the line break before it.
_SKIPPED = re.compile(rf"\n[ \t]*(?:{re.escape(COMMENT)}[^\n]*)?(?=\n)")


def table_text(path: Path) -> tuple[str, np.ndarray]:
    """The text of a table file without its blank and comment lines, and the line of each line
    left in the file.

    ``path`` is decompressed by its suffix (:data:`_OPENERS`) and decoded in the first of
    :data:`ENCODINGS` that fits. Only whole lines that start with :data:`COMMENT` are left out;
    a ``#`` elsewhere, as in a column name, is kept.

    Returns
    -------
    text : str
        The lines left, each ended by ``"\\n"`` (whatever line breaks the file has).
    lines : ndarray of int
        The line of each in the file, as a text editor counts them (the first line is 1).
    """
    text = _decoded(path)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if text and not text.endswith("\n"):
        text += "\n"
    if not _may_skip(text):  # most files: no search line by line (a 1M-row file: ~0.5 s)
        return text, np.arange(1, text.count("\n") + 1)
    # Every line between two line breaks, for _SKIPPED:
    framed = "\n" + text
    skipped, line, pos = [], 0, 0
    for match in _SKIPPED.finditer(framed):
        line += framed.count("\n", pos, match.start() + 1)
        pos = match.start() + 1
        skipped.append(line - 1)
    kept = _SKIPPED.sub("", framed) if skipped else framed
    return kept[1:], np.delete(np.arange(1, framed.count("\n")), skipped)


def _may_skip(text: str) -> bool:
    """Whether ``text`` (its lines ended by line breaks) may hold a blank or comment line: a
    :data:`COMMENT` anywhere, or a line that is empty or starts with a space or a tab."""
    return (COMMENT in text or text.startswith(("\n", " ", "\t"))
            or _LINE_START_BLANK.search(text) is not None)


def _decoded(path: Path) -> str:
    """The text of ``path`` in the first encoding that fits (see :data:`ENCODINGS`)."""
    with _OPENERS.get(path.suffix.lower(), open)(path, "rb") as fh:
        raw = fh.read()
    utf16 = raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))
    for encoding in ("utf-16",) if utf16 else ENCODINGS:
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError:
            continue
        if "\x00" not in text:
            return text
    raise DataError(f"{path}: not a text file (in UTF-8, UTF-16 or Windows-1252 encoding); "
                    "save it as CSV")


class ExtraFieldsError(DataError):
    """A row of a text table with more fields than its header names (other than empty ones
    that end it); ``line`` is its line in the file."""

    def __init__(self, message: str, line: int):
        super().__init__(message)
        self.line = line

    def __reduce__(self):  # picklable across worker processes
        return (type(self), (str(self), self.line))


@dataclass(frozen=True)
class TextTable:
    """A delimited text file as :func:`read_text_table` finds it, before its cells are read.

    Attributes
    ----------
    path : Path
        The file, for messages.
    data : bytes
        Its lines in UTF-8 without the blank and comment ones (:func:`table_text`); empty if
        the file has no other line.
    lines : ndarray of int
        The line of each in the file (the first is the header's).
    sep : str
        The column separator: ``","``, or ``";"`` or a tab where the header has no comma.
    decimal_comma : bool
        Whether numbers are written with a decimal comma (``0,5``): a comma between digits
        below a header separated by ``";"`` or tabs.
    """

    path: Path
    data: bytes
    lines: np.ndarray
    sep: str = ","
    decimal_comma: bool = False

    def _read(self, **options: Any) -> pd.DataFrame:
        return pd.read_csv(io.BytesIO(self.data), encoding="utf-8", skipinitialspace=True,
                           sep=self.sep, decimal="," if self.decimal_comma else ".", **options)

    def without_units_row(self) -> tuple[TextTable, list[str] | None]:
        """The table without the row of units under its header, and that row's cells; itself
        and None where the first row is data (:func:`~sparsefric.stated_units.is_units_row`)
        or the header spans lines (a quoted name with a line break)."""
        end = self.data.find(b"\n")
        if self.data.count(b'"', 0, end) % 2 or len(self.lines) < 3:
            return self, None
        try:
            first = self._read(header=None, skiprows=1, nrows=2, dtype=str,
                               keep_default_na=False)
        except pd.errors.ParserError:  # rows of unequal fields: rows() names the line
            return self, None
        if len(first) < 2 or not is_units_row(list(first.iloc[0]), list(first.iloc[1])):
            return self, None
        return self.without_lines([1]), [str(c) for c in first.iloc[0]]

    def without_lines(self, positions: Sequence[int]) -> TextTable:
        """The table without its lines at ``positions`` (0 is the header's; a name or cell
        quoted across lines counts as several)."""
        drop = sorted(set(int(i) for i in positions))
        starts = self._line_starts(drop[-1] + 2 if drop else 0)
        pieces, at = [], 0
        for i in drop:
            pieces.append(self.data[at:starts[i]])
            at = int(starts[i + 1]) if i + 1 < len(starts) else len(self.data)
        pieces.append(self.data[at:])
        return replace(self, data=b"".join(pieces), lines=np.delete(self.lines, drop))

    def _line_starts(self, count: int) -> np.ndarray:
        """The byte offsets at which the first ``count`` lines start (fewer where the table
        has fewer): found one by one near the top (a units row), at numpy's speed deeper."""
        if count <= 64:
            starts, at = [0], 0
            while len(starts) < count and (at := self.data.find(b"\n", at) + 1) > 0:
                starts.append(at)
            return np.array(starts)
        breaks = np.flatnonzero(np.frombuffer(self.data, dtype=np.uint8) == ord("\n"))
        return np.r_[0, breaks + 1][:count]

    def names(self) -> list[str]:
        """The column names in the header, as written."""
        return [str(h).strip() for h in self._read(header=None, nrows=1, dtype=str,
                                                   keep_default_na=False).iloc[0]]

    def rows(self, text: bool = False) -> pd.DataFrame:
        """The rows under the header, each cell in the column it is named by, indexed by the
        line of each row in the file, the column names stripped of spaces; ``text``: every
        cell as the text it holds (``""`` where empty), no number read.

        Rows of more fields than the header names were read with the first fields as row
        labels, every column shifted: separators that end every row are dropped; other
        surplus fields are an error.

        Raises
        ------
        ExtraFieldsError
            A row has more fields than the header names.
        pandas.errors.ParserError
            The rows do not parse; :func:`parser_message` names the line in the file.
        """
        cells: dict[str, Any] = {"dtype": str, "keep_default_na": False} if text else {}
        df = self._read(**cells)
        if not isinstance(df.index, pd.RangeIndex):
            surplus = df.index.nlevels
            extra = df.iloc[:, -surplus:]
            if not (extra.isna() | extra.eq("")).all(axis=None):
                named, line = len(df.columns), int(self.lines[-len(df)])
                raise ExtraFieldsError(f"{self.path}: line {line}: {named + surplus} fields, "
                                       f"but the header names {named} columns; name every "
                                       "column in the header", line)
            with warnings.catch_warnings():  # the fields dropped are empty
                warnings.simplefilter("ignore", pd.errors.ParserWarning)
                df = self._read(index_col=False, **cells)
        # A quoted name that spans lines makes the header longer than one line: rows count
        # from the end.
        df.index = self.lines[len(self.lines) - len(df):]
        # skipinitialspace drops the spaces before a name, not those after it (` t , q , tau `)
        df.columns = [str(c).strip() for c in df.columns]
        return df


def read_text_table(path: Path) -> TextTable:
    """The lines of a delimited text file (CSV, or ``;``- or tab-separated) and how they are
    delimited, the one reading of data files and batch manifests.

    The text is :func:`table_text`'s (decompressed, decoded, without blank and comment lines).
    Spreadsheets in many locales export ``t;q;tau`` with decimal commas (``0,5``); loggers
    often write tab-separated text. Read with commas, such a file is one column named
    "t;q;tau". So a header without a comma is separated by ``;`` or else a tab where it has
    one, and a comma between digits anywhere below such a header is a decimal comma (a first
    row of whole numbers, as ``0;0;0``, has none).
    """
    text, lines = table_text(path)
    end = text.find("\n")
    header = text[:end]
    sep = "," if "," in header else next((s for s in (";", "\t") if s in header), ",")
    decimal_comma = sep != "," and DECIMAL_COMMA.search(text, end) is not None
    return TextTable(path, text.encode(), lines, sep, decimal_comma)


def check_unique_header(path: Path, names: Sequence[str]) -> None:
    """Refuse a CSV header that names a column twice (pandas would rename the second one and
    read the first without a word, and the user could not tell which was used)."""
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        where = "; ".join(f"'{_shorten(n, 40)}' in columns "
                          + ", ".join(str(i + 1) for i, m in enumerate(names) if m == n)
                          for n in twice)
        raise DataError(f"{path}: duplicate column names: {where}; rename them so that each "
                        "name is unique")


def _check_names_not_numbers(path: Path, names: Sequence[str], line: int) -> None:
    """Refuse a header of numbers: the file has none (or wrote it as a comment), and its first
    row of data would be read as the column names."""
    if all(is_number(n) for n in names):
        raise DataError(f"{path}: line {line} holds numbers, not column names: the file needs "
                        f"a header line that names its columns (a line starting with '{COMMENT}' "
                        "is a comment)")


#: Per field of :class:`Columns`: the command-line option that names its column, and the header
#: names (lower case, units stripped) that often hold it, for the hint of a missing column.
#: Names shorter than three letters count only when they are the whole name.
COLUMN_ROLES = {
    "time": ("--time", ("time", "timestamp", "t", "sec", "seconds")),
    "position": ("--position", ("position", "pos", "angle", "theta", "q", "x")),
    "torque": ("--torque", ("torque", "tau", "effort", "force", "moment")),
    "velocity": ("--velocity", ("velocity", "vel", "speed", "qd", "omega")),
    "acceleration": ("--acceleration", ("acceleration", "acc", "qdd")),
    "trajectory": ("--trajectory-column", ("trajectory", "record", "run", "experiment")),
}


#: The other way to the times, for the hint of a missing time column no header looks like.
_TIMELESS = {"time": ", or for rows without time stamps their rate with --sample-rate HZ "
                     "(sample_rate=… in Python)"}


def check_columns(df: pd.DataFrame, columns: Columns, path: Path, *,
                  advise: bool = True) -> None:
    """Refuse a table ``df`` read from ``path`` that lacks a column ``columns`` names (the
    trajectory column by its default name aside: it splits only the files that have it).

    With ``advise`` (a file) the error names the option that names that column and suggests
    a header of the file that looks like it (:func:`_suggestion`): a user's own file rarely
    has the headers t, q, tau, and "no column 't' (columns: time, position, torque)" left the
    way to ``--time time`` to the help text. A table passed in Python has fixed names."""
    for role, (option, _) in COLUMN_ROLES.items():
        name = getattr(columns, role)
        if name is None or name in df.columns or (
                role == "trajectory" and name == TRAJECTORY_COLUMN):
            continue
        have = _shorten(", ".join(map(str, df.columns)) or "none")
        if LEFT_OUT in df.attrs:
            have += f"; left out: {_shorten(df.attrs[LEFT_OUT])}"
        advice = (f": name the {role} column with {option} NAME (Columns({role}=…) in Python)"
                  + (_suggestion(df, columns, role) or _TIMELESS.get(role, ""))) if advise else ""
        raise DataError(f"{path}: no column '{name}' (columns: {have}){advice}")


def _suggestion(df: pd.DataFrame, columns: Columns, role: str) -> str:
    """``", here perhaps --option HEADER"`` where exactly one header of ``df`` looks like the
    column of field ``role`` (:data:`COLUMN_ROLES`, :func:`_looks_like`), no field of
    ``columns`` names it already and it is no simulator's ``*_true`` column; else ``""``."""
    option, usual = COLUMN_ROLES[role]
    taken = {getattr(columns, r) for r in COLUMN_ROLES}
    like = [str(c) for c in df.columns if c not in taken and not str(c).endswith("_true")
            and _looks_like(str(c), usual)]
    # quoted for a shell where it has spaces or brackets: --time 't [s]'
    return f", here perhaps {option} {shlex.quote(_shorten(like[0], 40))}" if len(like) == 1 \
        else ""


def _looks_like(header: str, usual: Sequence[str]) -> bool:
    """Whether ``header``, in lower case and without a unit in brackets or after ``_``/space
    (``Time [s]``, ``angle_rad``), is one of the ``usual`` names or starts with one of three or
    more letters."""
    stem = re.split(r"[\s_\[(]", header.strip().lower(), maxsplit=1)[0]
    return any(stem == u or (len(u) >= 3 and stem.startswith(u)) for u in usual)


def _numeric_column(df: pd.DataFrame, name: str, path: Path) -> np.ndarray:
    """A column as finite floats; ``df`` is indexed by the line of each row (:func:`read_table`)
    and holds the column (:func:`check_columns`)."""
    values = _coerce(df, name, path)
    finite = np.isfinite(values)
    if not finite.all():
        i = int(np.flatnonzero(~finite)[0])
        raise DataError(f"{path}: column '{name}', line {df.index[i]}: missing, NaN or infinite "
                        "value")
    return values


def clock_in_seconds(df: pd.DataFrame, name: str | None, where: str
                     ) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """``df`` with its time column ``name`` in seconds where it holds durations (their total
    seconds) or dates and times (the seconds since the first), typed or as text
    (:func:`_clock_values`), and a note saying so; unchanged otherwise.

    Loggers stamp rows with a clock: ``00:00:01.5``, ``2024-01-01 12:00:00.001``, or a typed
    column of a Parquet file or DataFrame. Read as numbers, a typed column gave nanoseconds
    (which the check of the sampling period took for seconds), and text was refused.

    Raises
    ------
    DataError
        Where a cell of such a column is empty or not of its kind (its line named).
    """
    raw = df[name] if name is not None and name in df.columns else None
    if not isinstance(raw, pd.Series) or not (held := _clock_values(raw)):
        return df, ()
    parsed = raw if held == "typed" else _parsed_clock(raw, held)
    bad = parsed.isna().to_numpy()
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DataError(f"{where}: column '{name}', line {df.index[i]}: "
                        f"{_shorten(repr(raw.iloc[i]))} is not one of the {_clock_kind(parsed)} "
                        "the column holds")
    if pd.api.types.is_timedelta64_dtype(parsed):
        seconds, since = parsed.dt.total_seconds(), "their total seconds"
    else:
        seconds = (parsed - parsed.iloc[0]).dt.total_seconds()
        since = f"the seconds since the first, {parsed.iloc[0]}"
    note = (f"{where}: column '{name}' holds {_clock_kind(parsed)} such as "
            f"{_shorten(repr(str(raw.iloc[0])), 60)}: read as {since}")
    return df.assign(**{name: seconds.to_numpy(dtype=float)}), (note,)


def _clock_kind(parsed: pd.Series) -> str:
    return "durations" if pd.api.types.is_timedelta64_dtype(parsed) else "dates and times"


def _parsed_clock(raw: pd.Series, kind: str) -> pd.Series:
    """Text ``raw`` as durations or as ISO 8601 dates and times (``kind``, as
    :func:`_clock_values` found it); NaT where a cell does not read so."""
    text = raw.astype(str).str.strip()
    if kind == "durations":
        return pd.to_timedelta(text, errors="coerce")
    return pd.to_datetime(text, format="ISO8601", errors="coerce")


#: Text a clock writes: a time of day (12:00, 0:00:01.5), a day count or an ISO 8601 date.
_CLOCK_TEXT = re.compile(r"\d:\d\d|\d\s*days?\b|\d{4}-\d\d-\d\d")


def _clock_values(raw: pd.Series) -> str | None:
    """Whether a time column holds a clock's values instead of numbers: ``"typed"`` for a
    typed column of durations or dates and times (Parquet, a DataFrame); ``"durations"`` or
    ``"dates and times"`` for text such as ``0 days 00:00:01.5``, ``00:00:01.5`` or an ISO
    8601 time stamp, as its first such cell reads; None for anything else."""
    if pd.api.types.is_timedelta64_dtype(raw) or pd.api.types.is_datetime64_any_dtype(raw):
        return "typed"
    if pd.api.types.is_numeric_dtype(raw):
        return None
    text = next((v for v in raw if isinstance(v, str) and not is_number(v)), None)
    if text is None or not _CLOCK_TEXT.search(text):  # "1 234", "now": no clock
        return None
    for kind, parse in (("durations", pd.to_timedelta),
                        ("dates and times", lambda x: pd.to_datetime(x, format="ISO8601"))):
        try:
            parsed = parse(text)
        except (ValueError, TypeError, OverflowError):
            continue
        if pd.notna(parsed):
            return kind
    return None


def _coerce(df: pd.DataFrame, name: str, path: Path) -> np.ndarray:
    """A column as floats (NaN where empty); text that is not a number is an error."""
    raw = df[name]
    if isinstance(raw, pd.DataFrame):
        raise DataError(f"{path}: column '{name}' appears more than once")
    if pd.api.types.is_bool_dtype(raw):
        raise DataError(f"{path}: column '{name}' holds true/false values, not numbers")
    col = pd.to_numeric(raw, errors="coerce")
    bad = col.isna() & raw.notna()
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise DataError(f"{path}: column '{name}', line {df.index[i]}: "
                        f"non-numeric value {_shorten(repr(raw.iloc[i]))}")
    with np.errstate(over="ignore", invalid="ignore"):
        return col.to_numpy(dtype=float)


def _check_magnitude(values: np.ndarray, name: str, path: Path, lines: np.ndarray
                     ) -> np.ndarray:
    """Reject values beyond :data:`MAX_ABS_VALUE` (a wrong unit or a corrupt file); ``lines``:
    the line of each value in the file."""
    big = np.abs(values) > MAX_ABS_VALUE
    if big.any():
        i = int(np.flatnonzero(big)[0])
        raise DataError(f"{path}: column '{name}', line {lines[i]}: implausibly large value "
                        f"{values[i]:.6g} (limit ±{MAX_ABS_VALUE:.0e})")
    return values


def _shorten(text: str, limit: int = 120) -> str:
    """One printable line of at most ``limit`` characters (for messages quoting file content)."""
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _check_clock(t: np.ndarray, where: str, lines: np.ndarray) -> None:
    """Enough samples, strictly increasing times [s] and a median period in
    :data:`PERIOD_RANGE` (``lines``: the line of each sample in the file)."""
    if t.size < MIN_SAMPLES:
        raise DataError(f"{where}: only {t.size} samples, at least {MIN_SAMPLES} are needed")
    dt = np.diff(t)
    if (dt <= 0).any():
        i = int(np.flatnonzero(dt <= 0)[0])
        raise DataError(f"{where}: time not strictly increasing at line {lines[i + 1]} "
                        f"(t = {t[i + 1]:.9g} after {t[i]:.9g})")
    median = float(np.median(dt))
    lo, hi = PERIOD_RANGE
    if not lo <= median <= hi:
        raise DataError(f"{where}: sampling period {median:.6g} s is outside {lo:g}–{hi:g} s; "
                        "is the time column in seconds?")


def _check_time(t: np.ndarray, where: str, lines: np.ndarray, resample: bool) -> bool:
    """Whether the time axis [s] (checked by :func:`_check_clock`) needs resampling onto a
    uniform grid: an irregular one is refused unless ``resample``."""
    dt = np.diff(t)
    mean = float((t[-1] - t[0]) / (t.size - 1))
    with np.errstate(over="ignore"):
        off = np.abs(dt - mean) / mean
    i = int(np.argmax(off))
    worst = float(off[i])
    if worst > SAMPLING_TOLERANCE and not resample:
        raise DataError(f"{where}: irregular sampling: the interval before line {lines[i + 1]} "
                        f"is {dt[i]:.6g} s against a mean period of {mean:.6g} s "
                        f"({_percent(worst)} off, tolerance {100 * SAMPLING_TOLERANCE:g} %); "
                        "use --resample (resample=True) to interpolate onto a uniform grid")
    return worst > 1e-6 and resample


#: Largest distance [share of the period] of a timestamp from its slot t₀ + k h on a regular
#: clock, for :func:`clock_slots` to read it as jitter.
JITTER_SLOT = 0.4
#: How much rougher the finite-difference speed must be on the timestamps than on the slots
#: (:func:`clock_slots`): the ratio of the sums of its squared steps.
JITTER_EVIDENCE = 2.0


def clock_slots(t: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, float, float] | None:
    """``(k, t0, h)``: samples taken on a regular clock t₀ + k h [s] whose timestamps ``t`` [s]
    only jitter about it, where the positions ``q`` show that; None otherwise.

    A logger that stamps regular samples with a PC's clock, or with the time it wrote them,
    scatters the stamps by a fraction of the period while the positions advance with the
    sample count. Taken at their stamps, the samples then look irregular, and interpolating
    them onto a uniform grid (``resample``) puts every position v·jitter off: on a joint
    logged at 1 kHz with ±0.3 ms jitter and 0.5 % dropped samples the inertia came out at
    −100 % and the break-away +94 % (``DESIGN.md`` §98). The two readings differ in the
    speed Δq/Δt: on the slots it is as smooth as the motion, on the stamps it jitters with
    them (and the other way round for samples truly taken at their stamps). Every stamp must
    lie within :data:`JITTER_SLOT` of a period of its own slot (a dropped sample leaves its slot
    empty), and the speed on the stamps be :data:`JITTER_EVIDENCE` times rougher.
    """
    dt = np.diff(t)
    h, t0 = float(np.median(dt)), float(t[0])
    # The period from ever longer spans, each twice the last: the median's error, 1e-3 of h
    # under ±30 % jitter, would put the slots of a 15,000-sample record 15 periods off, and a
    # fit on n samples predicts the next n to a small share of a period.
    span = 64
    while span < 2 * t.size:
        head = t[:span]
        h, t0 = (float(c) for c in np.polyfit(np.round((head - t0) / h), head, 1))
        span *= 2
    k = np.round((t - t0) / h)
    if not h > 0 or np.any(np.diff(k) < 1) or \
            np.max(np.abs(t - (t0 + k * h))) > JITTER_SLOT * h:
        return None
    dq = np.diff(q)
    on_stamps = float(np.sum(np.diff(dq / dt) ** 2))
    on_slots = float(np.sum(np.diff(dq / (np.diff(k) * h)) ** 2))
    if not JITTER_EVIDENCE * on_slots < on_stamps:
        return None
    return k.astype(np.int64), t0, h


def _on_clock(t: np.ndarray, q: np.ndarray, name: str) -> tuple[np.ndarray, tuple[str, ...]]:
    """The times [s] of the samples: on the regular clock their jittering stamps hide
    (:func:`clock_slots`), with a note, where the stamps are irregular; else ``t`` itself."""
    mean = float((t[-1] - t[0]) / (t.size - 1))
    if np.max(np.abs(np.diff(t) - mean)) <= SAMPLING_TOLERANCE * mean:
        return t, ()
    slots = clock_slots(t, q)
    if slots is None:
        return t, ()
    k, t0, h = slots
    jitter = float(np.max(np.abs(t - (t0 + k * h)))) / h
    gaps = np.diff(k) - 1
    dropped = int(gaps[gaps < RESAMPLE_GAP].sum())
    filled = f"; {dropped} missing samples filled in by interpolation" if dropped else ""
    return t0 + k * h, (f"{name}: the timestamps jitter about a regular clock of {h:.4g} s (up "
                        f"to {_percent(jitter)} of a period) while the positions advance with "
                        f"the sample count: the samples are placed on that clock{filled}",)


def _percent(ratio: float) -> str:
    """A ratio in % with two significant digits below 10 %: 0.0196 → "2 %", 0.0123 → "1.2 %"."""
    return f"{100 * ratio:.2g} %" if ratio < 0.1 else f"{100 * ratio:.0f} %"


def _resample(traj: Trajectory) -> Trajectory:
    """Linear interpolation of every channel onto a uniform grid with the median period, on
    each stretch between pauses of the recording (steps over :data:`RESAMPLE_GAP` periods):
    a pause stays a jump in t, where the preprocessing cuts the record, instead of a straight
    line drawn across it."""
    t = traj.t
    dt = np.diff(t)
    median = float(np.median(dt))
    ends = np.r_[0, np.flatnonzero(dt > RESAMPLE_GAP * median) + 1, len(t)]
    grid = np.concatenate([np.linspace(t[a], t[b - 1], int(round((t[b - 1] - t[a]) / median)) + 1)
                           for a, b in zip(ends[:-1], ends[1:], strict=True)])
    if grid.size > MAX_RESAMPLE_FACTOR * len(t):
        raise DataError(f"{traj.name}: resampling would turn {len(t)} samples into {grid.size} "
                        f"(the time column has gaps much longer than the {median:.6g} s period)")

    def interp(x: np.ndarray | None) -> np.ndarray | None:
        return None if x is None else np.interp(grid, t, x)

    truth = {k: np.interp(grid, t, v) for k, v in traj.truth.items()}
    return traj.with_(t=grid, q=interp(traj.q), tau=interp(traj.tau), qd=interp(traj.qd),
                      qdd=interp(traj.qdd), truth=truth)


#: A jump between samples is a wrap when, less the full turns, it is no larger than this many
#: times the largest ordinary step (and below π/4).
WRAP_STEP_FACTOR = 20.0


def unwrap_angle(q: np.ndarray) -> tuple[np.ndarray, int]:
    """``(q, n)``: the angle [rad] made continuous where it wraps around at ±π, and the number of
    jumps removed (0: ``q`` returned as it is).

    An absolute encoder or a logger reports the angle modulo 2π, so the trace jumps by about a
    full turn when the joint crosses ±π; differentiated as it is, each jump is a velocity spike
    of 2π/Δt that ruins every regression. A step larger than π between two samples is read as a
    wrap only if what is left after removing the full turns is an ordinary step (at most
    :data:`WRAP_STEP_FACTOR` times the largest step elsewhere), and then removed by
    ``numpy.unwrap``; a glitch or a position in other units is left alone.
    """
    step = np.diff(q)
    jumps = np.abs(step) > np.pi
    if not jumps.any() or jumps.all():
        return q, 0
    turns = np.round(step[jumps] / (2 * np.pi))
    rest = np.abs(step[jumps] - 2 * np.pi * turns)
    ordinary = float(np.max(np.abs(step[~jumps])))
    if np.any(rest > min(WRAP_STEP_FACTOR * ordinary, np.pi / 4)):
        return q, 0
    return np.unwrap(q), int(jumps.sum())


def _check_motion(traj: Trajectory, columns: Columns) -> None:
    span = float(np.ptp(traj.q))
    if span <= 1e-9 * max(1.0, float(np.max(np.abs(traj.q)))):
        raise DataError(f"{traj.name}: no motion at all (position is constant at {traj.q[0]:.6g})")
    if float(np.ptp(traj.tau)) == 0.0:
        raise DataError(f"{traj.name}: column '{columns.torque}' is constant at "
                        f"{traj.tau[0]:.6g}: no torque was recorded")


def _split(df: pd.DataFrame, col: str | None, path: Path) -> list[tuple[str, pd.DataFrame]]:
    """Split a table on its trajectory column; return (name, part) pairs, the parts indexed
    like ``df`` by the line of each row. A file without the column ``col`` is one trajectory
    (``col`` is then the default name, :data:`TRAJECTORY_COLUMN`: :func:`check_columns`
    refused any other)."""
    if col is None or (col == TRAJECTORY_COLUMN and col not in df.columns):
        return [(str(path), df)]
    keys = df[col]
    if keys.isna().any():
        i = int(np.flatnonzero(keys.isna().to_numpy())[0])
        raise DataError(f"{path}: column '{col}', line {df.index[i]}: missing trajectory label")
    codes = pd.factorize(keys)[0]
    parts = []
    for code in range(codes.max() + 1):
        idx = np.flatnonzero(codes == code)
        label = _shorten(str(keys.iloc[idx[0]]), 40)
        if np.any(np.diff(idx) != 1):
            raise DataError(f"{path}: column '{col}': the rows of trajectory '{label}' are not "
                            "contiguous")
        parts.append((f"{path}#{label}", df.iloc[idx]))
    return parts


def load_file(path: str | os.PathLike, columns: Columns = Columns(), *,
              angle_unit: str | None = None, resample: bool = False,
              time_unit: str | None = None, sample_rate: float | None = None,
              axis: str | None = None) -> list[Trajectory]:
    """Read one CSV, Parquet or MATLAB file into one or more trajectories.

    Parameters
    ----------
    path : path-like
        The file; ``.parquet`` is read with pyarrow, ``.mat`` with scipy, anything else as
        CSV. Records written one after another into one file (``cat a.csv b.csv``: the header
        repeated; or a clock that restarts) are read as separate records
        (:func:`_one_after_another`), with a note.
    columns : Columns
        Column names (``--time``, ``--position``, ``--torque`` on the command line).
    angle_unit : {"rad", "deg"}, optional
        Unit of the position, velocity and acceleration columns; degrees are converted to rad.
        Default: the unit the file states for the position (a row of units under the header,
        or the name's bracketed end: ``q [deg]``), else rad
        (:func:`~sparsefric.stated_units.resolve_units`).
    resample : bool
        Interpolate irregularly sampled data onto a uniform grid instead of rejecting it.
    time_unit : {"s", "ms", "us"}, optional
        Unit of the time column; converted to seconds before any check of the sampling.
        Default: the unit the file states for it, else s.
    sample_rate : float, optional
        Sampling rate [Hz] of a file without a time column (``--sample-rate``): the rows of a
        record are taken at t = k / ``sample_rate``, k = 0, 1, …, and the time column is not
        read (a note says so where the file has one). Many drive and PLC logs are written at a
        fixed rate without time stamps.
    axis : {"revolute", "prismatic"}, optional
        The joint's axis, where known: a prismatic joint's positions are no angles, and a
        file that states degrees for them is refused.
    """
    if angle_unit is not None:
        check_choice("angle_unit", angle_unit, ANGLE_UNITS)
    if time_unit is not None:
        check_choice("time_unit", time_unit, tuple(TIME_UNITS))
    _check_clock_options(columns, time_unit, sample_rate)
    path = Path(path)
    try:
        df = read_table(path)
        check_columns(df, replace(columns, time=None) if sample_rate else columns, path)
        df, clock = clock_in_seconds(df, None if sample_rate else columns.time, str(path))
        units, where = df.attrs.get(STATED_UNITS, ({}, str(path)))
        angle_unit, time_unit, notes = resolve_units(
            units, asdict(columns), where, angle_unit=angle_unit, time_unit=time_unit,
            sample_rate=sample_rate, axis=axis)
        reading = Reading(np.pi / 180.0 if angle_unit == "deg" else 1.0, TIME_UNITS[time_unit],
                          sample_rate)
        notes, trajs = (*clock, *notes), []
        for name, part in _split(df, columns.trajectory, path):
            pieces, cut = _one_after_another(part, name, columns, reading, path,
                                             df.attrs.get(HEADER_REPEATS, ()))
            trajs += [_trajectory(piece, label, path, columns, reading, resample)
                      for label, piece in pieces]
            notes += cut
        return [replace(trajs[0], notes=(*notes, *trajs[0].notes)), *trajs[1:]] if notes \
            else trajs
    except DataError as exc:  # file content quoted in a message must not break the line
        raise DataError(_shorten(str(exc), 400)) from None
    except (ValueError, TypeError, KeyError, IndexError, OverflowError) as exc:
        # A table that pandas reads in an unforeseen shape; still one line naming the file.
        raise DataError(_shorten(f"{path}: cannot be read as a trajectory "
                                 f"({exc.__class__.__name__}: {exc})", 400)) from None


#: A time that runs back by more than this many median periods starts a new record (a clock
#: restarted); less is a stamp out of order, refused.
RESTART_PERIODS = 10


def _one_after_another(part: pd.DataFrame, name: str, columns: Columns, reading: Reading,
                       path: Path, repeats: Sequence[int]
                       ) -> tuple[list[tuple[str, pd.DataFrame]], tuple[str, ...]]:
    """The records one table's rows ``part`` (named ``name``) hold one after another, and a
    note where there are several: cut after each line ``repeats`` names (the header written
    again: files joined by ``cat``) and where the time runs backwards (a logger's clock
    restarted for the next record: by more than :data:`RESTART_PERIODS` periods, then on at
    the period), each named ``name[a:b]`` by its rows; ``[(name, part)]`` where there is no
    such cut. Equal times, a stamp a little early and a single stamp out of place are no
    restart (:func:`_check_clock` refuses them)."""
    lines = part.index.to_numpy()
    cuts = set(np.searchsorted(lines, np.asarray(repeats, dtype=lines.dtype)).tolist())
    if reading.rate is None and len(part) > 1:
        dt = np.diff(_numeric_column(part, columns.time, path))
        period = float(np.median(np.abs(dt)))
        # a restart runs on at the period; one bad stamp jumps back and forth again
        on = np.r_[np.abs(dt[1:] - period) <= 0.5 * period, True]
        cuts |= set((np.flatnonzero((dt < -RESTART_PERIODS * period) & on) + 1).tolist())
    edges = [0, *sorted(c for c in cuts if 0 < c < len(part)), len(part)]
    if len(edges) == 2:
        return [(name, part)], ()
    where = ", ".join(f"line {lines[c]}" for c in edges[1:-1][:5])
    more = f" and {len(edges) - 7} more" if len(edges) > 7 else ""
    note = (f"{name}: {len(edges) - 1} records one after another (the header repeated or the "
            f"time restarting before {where}{more}): read as separate records")
    pieces = [(f"{name}[{a}:{b}]", part.iloc[a:b])
              for a, b in zip(edges, edges[1:], strict=False)]
    return pieces, (note,)


def _check_clock_options(columns: Columns, time_unit: str | None, sample_rate: float | None
                         ) -> None:
    """Refuse a sample rate [Hz] that is no positive number or comes with a time unit, and no
    time column without one."""
    if sample_rate is None:
        if columns.time is None:
            raise OptionError("sample_rate", "is needed without a time column (Columns(time="
                              "None)): give the rate [Hz] at which the rows were sampled")
        return
    check_positive("sample_rate", sample_rate)
    if time_unit is not None:
        raise OptionError("sample_rate", f"gives the times, so {mention('time_unit', time_unit)}"
                          " (the unit of a time column) has nothing to read: leave one out")


@dataclass(frozen=True)
class Reading:
    """How the columns of a table are read: ``angle``, the factor to rad of the position,
    velocity and acceleration columns; ``seconds``, that to s of the time column; ``rate``
    [Hz], where not None, the rate at which the rows were sampled, which gives their times
    instead of a time column."""

    angle: float = 1.0
    seconds: float = 1.0
    rate: float | None = None


def _times(part: pd.DataFrame, name: str, columns: Columns, path: Path, reading: Reading
           ) -> tuple[np.ndarray, tuple[str, ...]]:
    """The times [s] of the rows of ``part`` as ``reading`` has them, and a note where a
    sample rate replaces a time column the file has."""
    rate = reading.rate
    if rate is None:
        return _numeric_column(part, columns.time, path) * reading.seconds, ()
    t = np.arange(len(part)) / rate
    unread = columns.time is not None and columns.time in part.columns
    return t, (f"{name}: column '{columns.time}' not read: the times are those of "
               f"{mention('sample_rate', _number(rate))} Hz",) if unread else ()


def _number(x: float) -> float | int:
    """``x`` as an int where it is whole, for messages (1000 Hz, not 1000.0 Hz)."""
    return int(x) if float(x).is_integer() else x


def _trajectory(part: pd.DataFrame, name: str, path: Path, columns: Columns,
                reading: Reading, resample: bool) -> Trajectory:
    """One validated trajectory from the rows of one table (or one part of it), indexed by
    their lines in the file, its columns read as ``reading`` says."""
    scale = reading.angle
    lines = part.index.to_numpy()

    def column(col: str, factor: float = 1.0) -> np.ndarray:
        values = _numeric_column(part, col, path) * factor
        return _check_magnitude(values, col, path, lines)

    def optional(col: str | None) -> np.ndarray | None:
        return None if col is None else column(col, scale)

    t, notes = _times(part, name, columns, path, reading)
    if reading.rate is not None:  # the times are the sample rate's: no time column was read
        columns = replace(columns, time=None)
    _check_clock(t, name, lines)
    truth = {str(c): _coerce(part, c, path) for c in part.columns
             if str(c).endswith("_true")}
    q, wraps = unwrap_angle(column(columns.position, scale))
    notes += (f"{name}: column '{columns.position}' wraps around at ±π ({wraps} jumps of a full "
              "turn between samples): unwrapped into a continuous angle",) if wraps else ()
    t, clock = _on_clock(t, q, name)
    need_resample = _check_time(t, name, lines, resample or bool(clock))
    notes += clock
    traj = Trajectory(t=t, q=q, tau=column(columns.torque), qd=optional(columns.velocity),
                      qdd=optional(columns.acceleration), name=name, truth=truth, notes=notes,
                      columns=columns)
    _check_motion(traj, columns)
    return _resample(traj) if need_resample else traj


def load_trajectories(paths, columns: Columns = Columns(), **options: Any) -> list[Trajectory]:
    """Read several files; each file gives one trajectory or, with a trajectory column, several.
    ``options``: those of :func:`load_file` (``angle_unit``, ``resample``, …)."""
    if isinstance(paths, str | os.PathLike):
        paths = [paths]
    out: list[Trajectory] = []
    for p in paths:
        out.extend(load_file(p, columns, **options))
    return out


#: The loading options by name, as the command line and batch manifests spell them.
LOAD_DEFAULTS: dict[str, Any] = {"time": "t", "position": "q", "torque": "tau", "velocity": None,
                                 "acceleration": None, "trajectory_column": TRAJECTORY_COLUMN,
                                 "angle_unit": None, "resample": False, "time_unit": None,
                                 "sample_rate": None}


def load_with(paths, options: Mapping[str, Any]) -> list[Trajectory]:
    """:func:`load_trajectories` with the options named as in :data:`LOAD_DEFAULTS`.

    Keys of ``options`` that are not loading options are ignored (the CLI passes all its
    arguments); missing or ``None`` ones take their defaults. An ``axis`` among them is the
    joint's (``load_file``'s ``axis``).
    """
    o = {k: v if options.get(k) is None else options[k] for k, v in LOAD_DEFAULTS.items()}
    cols = Columns(o["time"], o["position"], o["torque"], o["velocity"], o["acceleration"],
                   o["trajectory_column"])
    return load_trajectories(list(paths), cols, angle_unit=o["angle_unit"],
                             resample=bool(o["resample"]), time_unit=o["time_unit"],
                             sample_rate=o["sample_rate"], axis=options.get("axis"))


#: Files seen so far, by size [bytes] (None: not a readable file): name as given, real path.
_FileIndex = dict[int | None, list[tuple[str, Path]]]


def _identity(path: str) -> tuple[Path, int | None]:
    """The real path of ``path`` (links resolved) and its size [bytes] (None if unreadable)."""
    real = Path(path).resolve()
    try:
        return real, real.stat().st_size if real.is_file() else None
    except OSError:
        return real, None


def _twin(path: str, index: _FileIndex, add: bool = False) -> tuple[str, bool] | None:
    """The file of ``index`` that ``path`` repeats, and whether it is the same file (False: a
    copy, the same bytes under another name); None if it repeats none. ``add``: enter
    ``path`` into ``index`` then."""
    real, size = _identity(path)
    for name, other in index.get(size, ()):
        if other == real:
            return name, True
        if size is not None and filecmp.cmp(other, real, shallow=False):
            return name, False
    if add:
        index.setdefault(size, []).append((path, real))
    return None


def _index(paths: Sequence[str | os.PathLike]) -> _FileIndex:
    """The files ``paths``, by size."""
    index: _FileIndex = {}
    for path in map(str, paths):
        _twin(path, index, add=True)
    return index


def repeated_file(paths: Sequence[str | os.PathLike]) -> str | None:
    """How the first file of ``paths`` that repeats an earlier one does, in words ("a.csv is
    listed twice", "b.csv holds the same bytes as a.csv"); None when they all differ.

    A file is repeated by its own name, by another path to it, or by a copy of its bytes: the
    same records, each of whose samples would count twice in a fit (its intervals narrowed by
    √2 without any new information).
    """
    index: _FileIndex = {}
    for path in map(str, paths):
        if found := _twin(path, index, add=True):
            name, same = found
            if not same:
                return f"{path} holds the same bytes as {name}"
            return f"{path} is listed twice" if name == path else f"{path} and {name} are one file"
    return None


def shared_file_findings(train: Sequence[str | os.PathLike],
                         roles: Mapping[str, Sequence[str | os.PathLike]]) -> list[Finding]:
    """A warning ``shared_file`` for every file of ``roles`` (a label, as ``--test``, → its
    files) that is a training file too, or a copy of one: its error measures the fit, not a
    prediction."""
    index = _index(train)
    found = []
    for role, files in roles.items():
        for path in map(str, files):
            if twin := _twin(path, index):
                name, same = twin
                what = (f"{path} is training data and {role} data" if same else
                        f"{path} ({role} data) holds the same bytes as the training file {name}")
                found.append(Finding("warning", "shared_file", f"{what}: its error there is "
                                     "that of the fit, not of a prediction"))
    return found


def save_trajectory(path: str | os.PathLike, traj: Trajectory, float_format: str = "%.9g") -> None:
    """Write a trajectory as CSV in the data contract (atomically)."""
    cols = {"t": traj.t, "q": traj.q, "tau": traj.tau}
    if traj.qd is not None:
        cols["qd"] = traj.qd
    if traj.qdd is not None:
        cols["qdd"] = traj.qdd
    cols.update(traj.truth)
    with atomic_path(path) as tmp:
        pd.DataFrame(cols).to_csv(tmp, index=False, float_format=float_format)


#: Smallest and largest fraction of a record that ``holdout`` may keep back.
HOLDOUT_RANGE = (0.05, 0.9)


def holdout(trajectories: Sequence[Trajectory], fraction: float
            ) -> tuple[list[Trajectory], list[Trajectory]]:
    """Split the last ``fraction`` off every trajectory, as held-out test data.

    Parameters
    ----------
    trajectories : sequence of Trajectory
        The records to split.
    fraction : float
        Share of each record's samples (the last ones) that is held out, in
        :data:`HOLDOUT_RANGE` [-].

    Returns
    -------
    kept, held : list of Trajectory
        The first part of every record (name unchanged) and its last part (name
        ``"<name> (last N %)"``).
    """
    lo, hi = HOLDOUT_RANGE
    if not lo <= fraction <= hi:
        raise OptionError("holdout", f"must lie between {lo:g} and {hi:g}, got {fraction:g}")
    kept, held = [], []
    for traj in trajectories:
        cut = int(round(len(traj) * (1.0 - fraction)))
        if min(cut, len(traj) - cut) < MIN_SAMPLES:
            raise DataError(f"{traj.name}: {len(traj)} samples cannot be split into two parts "
                            f"of at least {MIN_SAMPLES} with {mention('holdout', fraction)}")
        kept.append(traj.part(slice(0, cut)))
        held.append(traj.part(slice(cut, None), f"{traj.name} (last {100 * fraction:g} %)"))
    return kept, held


def aligned_samples(traj: Trajectory, delay: float) -> slice:
    """The samples of ``traj`` whose time t + ``delay`` [s] lies within the record: those
    :func:`align_torque` keeps (a shift of whole samples lands on the end samples, not
    beyond)."""
    shifted = traj.t + delay
    edge = 1e-6 * traj.dt
    inside = np.flatnonzero((shifted >= traj.t[0] - edge) & (shifted <= traj.t[-1] + edge))
    return slice(int(inside[0]), int(inside[-1]) + 1) if inside.size else slice(0, 0)


def align_torque(traj: Trajectory, delay: float) -> Trajectory:
    """The record with its torque moved to the time of the motion it drives.

    A drive that logs its current command applies it a few cycles later, so the torque column
    leads the position; a filter on the torque channel makes it lag. The LuGre fit reads a lead
    L as bristle damping, σ̂1 ≈ σ1 + L σ0 (``DESIGN.md`` §97).

    Parameters
    ----------
    traj : Trajectory
        One record without jumps (a piece of :func:`~sparsefric.segments.split_records`): the
        torque is interpolated along its time axis.
    delay : float
        How late [s] the torque column is against the position: τ_aligned(t) = τ(t + delay),
        linearly interpolated between samples; negative where the torque is early, as a logged
        current command is. The shift must leave :data:`MIN_SAMPLES` samples; how it compares
        with whole records is checked with the options
        (:func:`~sparsefric.options.check_torque_delay`).

    Returns
    -------
    Trajectory
        ``traj`` itself for a delay of 0; else its samples whose t + delay lies within the
        record (:func:`aligned_samples`), with the aligned torque: the |delay|/h others, at the
        start for a negative delay and at the end for a positive one, are dropped (nothing is
        extrapolated), and every other channel (position, given velocity and acceleration,
        truth) is cut alike.

    Raises
    ------
    OptionError
        ``delay`` is not a finite number.
    DataError
        The shift leaves fewer than :data:`MIN_SAMPLES` samples of the record.
    """
    delay = check_torque_delay(delay)
    if delay == 0:
        return traj
    kept = aligned_samples(traj, delay)
    if (left := kept.stop - kept.start) < MIN_SAMPLES:
        raise DataError(f"{traj.name}: the torque delay {delay:g} s leaves {left} of its "
                        f"{len(traj)} samples, at least {MIN_SAMPLES} are needed")
    return traj.part(kept).with_(tau=np.interp(traj.t[kept] + delay, traj.t, traj.tau))
