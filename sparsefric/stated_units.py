"""Units a trajectory file states for its columns, checked against the units it is read in.

Data-acquisition exports (a measurement PC's logger, a drive's scope, a spreadsheet) often
write a row of units under the column names (``t,q,tau`` then ``s,deg,Nm``) or put the unit in
the name (``q [deg]``). Such a units row made the file unreadable ("non-numeric value 's'"),
and a unit the file states was never compared with the one it is read in: a position column
the file calls degrees, read as rad, gives every speed 57.3× too large.

Here a units row is recognised and left out (:func:`is_units_row`), and the units it and the
column names state (:func:`stated_units`) choose the units the time and angle are read in
where ``--time-unit`` and ``--angle-unit`` are not given (:func:`resolve_units`); an option
given wins, with a note where the file says otherwise. A position in mm or encoder counts and
a torque in amperes (a logged motor current) get a note. Units the tables below do not know
are left alone.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from sparsefric.errors import DataError
from sparsefric.options import mention

#: Spellings of the time units (lower case) → ``time_unit``.
TIME_WORDS = {"s": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s",
              "ms": "ms", "msec": "ms", "millisecond": "ms", "milliseconds": "ms",
              "us": "us", "µs": "us", "μs": "us", "usec": "us", "microsecond": "us",
              "microseconds": "us"}
#: Spellings of the position units (lower case) → ``angle_unit`` (or the unit it lacks).
POSITION_WORDS = {"rad": "rad", "radian": "rad", "radians": "rad", "m": "m",
                  "deg": "deg", "degree": "deg", "degrees": "deg", "°": "deg",
                  "mm": "mm", "counts": "counts", "count": "counts", "cnt": "counts",
                  "inc": "counts", "increments": "counts", "ticks": "counts"}
#: Torque units that are no torque: a motor current.
CURRENT_WORDS = {"a", "amp", "amps", "ampere", "amperes", "ma"}
#: A unit at the end of a column name: ``q [deg]``, ``t (s)``, ``tau [N·m]``.
_NAME_UNIT = re.compile(r"[\[(]\s*([^\[\]()]+?)\s*[\])]\s*$")


def is_number(text: str) -> bool:
    """Whether a cell's ``text`` is a number (with a decimal point or comma)."""
    try:
        float(text.replace(",", "."))
    except ValueError:
        return False
    return True


def is_units_row(row: Sequence[str], below: Sequence[str]) -> bool:
    """Whether the first row under a header, ``row`` (its cells as text), names units rather
    than holding data: no cell of it is a number and at least one is not empty, and the row
    ``below`` it holds a number in a column where ``row`` has text."""
    texts = [c.strip() for c in row]
    if not any(texts) or any(is_number(c) for c in texts if c):
        return False
    return any(c and is_number(b.strip()) for c, b in zip(texts, below, strict=False))


def stated_units(names: Sequence[str], row: Sequence[str] | None) -> dict[str, str]:
    """Column name → the unit the file states for it, as written: the units row's cell
    (``row``; None: the file has none), else the bracketed end of the name."""
    units = {}
    for i, name in enumerate(names):
        cell = row[i].strip() if row is not None and i < len(row) else ""
        match = _NAME_UNIT.search(name)
        unit = cell.strip("[]() ") or (match[1] if match else "")
        if unit:
            units[name] = unit
    return units


def resolve_units(units: Mapping[str, str], columns: Mapping[str, str | None], where: str, *,
                  angle_unit: str | None, time_unit: str | None, sample_rate: float | None,
                  axis: str | None = None) -> tuple[str, str, list[str]]:
    """The units to read a file's angle and time columns in, and notes on them.

    ``units``: what the file (``where``: the file and the line of its units) states per column
    (:func:`stated_units`); ``columns``: role → the name of the column read. An option given
    (``angle_unit``, ``time_unit``; None: not given) is kept, with a note where the file
    states another unit; otherwise the unit the file states for the position (time) column,
    with a note where that is not rad (s), else rad (s). Positions stated in mm or encoder
    counts, which no option reads, and a torque stated in amperes (a logged motor current)
    get a note too.

    Raises
    ------
    DataError
        Where the file states degrees for the positions of a prismatic ``axis``.
    """
    notes = []

    def stated(role: str) -> tuple[str | None, str]:
        name = columns.get(role)
        return name, units.get(name, "") if name is not None else ""

    def choose(option: str, given: str | None, name: str | None, said: str,
               read: str | None, default: str) -> str:
        if given is None:
            if read is not None and read != default:
                notes.append(f"{where} gives column '{name}' in {said}: read in {read}")
            return read or default
        if read is not None and read != given:
            notes.append(f"{where} gives column '{name}' in {said}, but it is read in {given}, "
                         f"as {mention(option, given)} says")
        return given

    name, said = stated("time")
    read = TIME_WORDS.get(said.lower()) if sample_rate is None else None
    time_unit = choose("time_unit", time_unit, name, said, read, "s")
    name, said = stated("position")
    word = POSITION_WORDS.get(said.lower())
    if word in ("mm", "counts"):
        notes.append(f"{where} gives column '{name}' in {said}, which no option reads: it is "
                     "read in rad (m for a prismatic axis); convert it")
    read = word if word in ("rad", "deg") else None
    if read == "deg" and axis == "prismatic" and angle_unit is None:
        raise DataError(f"{where} gives column '{name}' in {said}, an angle, but the axis is "
                        "prismatic (positions in m)")
    angle_unit = choose("angle_unit", angle_unit, name, said, read, "rad")
    name, said = stated("torque")
    if said.lower() in CURRENT_WORDS:
        notes.append(f"{where} gives column '{name}' in {said}, a motor current: the model's "
                     f"torques and friction are in {said} (times the torque constant: N·m)")
    return angle_unit, time_unit, notes
