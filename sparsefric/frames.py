"""In-memory inputs of the estimator: DataFrames and arrays as trajectories.

:class:`~sparsefric.estimator.SparseFric` takes what a notebook holds as well as what
:func:`~sparsefric.data.load_trajectories` returns:

* a :class:`~pandas.DataFrame` with columns ``t`` [s], ``q`` [rad | m] and ``tau`` [N·m | N]
  (optionally ``qd`` [rad/s], ``qdd`` [rad/s²]); a ``trajectory`` column splits it into
  independent trajectories (contiguous rows each, as a cross-validation split leaves them);
* a list of such DataFrames, of :class:`~sparsefric.data.Trajectory` objects, or a mix;
* a 2-D array with the columns (t, q) or (t, q, tau), one trajectory.

The torque is the regression target: it is X's ``tau`` column or ``y`` (one value per row, in
the order of the rows). Each table is checked as a file is (uniform sampling, finite values,
motion; :mod:`sparsefric.data`); an error names the input (``X``, ``X[2]``, a trajectory label)
and counts rows from 0 where a file's message would count lines.

>>> as_trajectories(df)                              # df with t, q, tau (and trajectory)
>>> as_trajectories(df[["t", "q"]], y=df["tau"])     # the torque as the target
>>> as_trajectories(df[["t", "q"]], torque=False)    # for a prediction: no torque needed
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.utils import check_array

from sparsefric.data import Columns, Reading, Trajectory, check_columns, clock_in_seconds
from sparsefric.data import _trajectory as _table_trajectory
from sparsefric.errors import DataError, OptionError

#: Column names of an input table (the defaults of :class:`~sparsefric.data.Columns`).
COLUMNS = Columns()
#: The columns of a 2-D array input, in order (the torque optional).
ARRAY_COLUMNS = ("t", "q", "tau")
#: What the estimator takes as records.
TrajectoryInput = pd.DataFrame | Trajectory | np.ndarray | Sequence[pd.DataFrame | Trajectory]


def as_trajectories(X: Any, y: Any = None, *, torque: bool = True,
                    source: str = "X") -> list[Trajectory]:
    """The trajectories of an estimator input.

    Parameters
    ----------
    X : DataFrame, Trajectory, 2-D array, or a list of DataFrames and Trajectories
        The records (see the module docstring); a list of Trajectories is returned as it is
        (the same objects) when ``y`` is None.
    y : array-like, optional
        Measured torque [N·m | N], one value per row of all of ``X``; where ``X`` holds a torque
        too, the two must agree.
    torque : bool
        Whether the torque is needed; without it (a prediction) a missing torque reads as 0.
    source : str
        Name of the input in messages.

    Returns
    -------
    list of Trajectory

    Raises
    ------
    OptionError
        An input of the wrong type or shape, or a ``y`` that does not fit it.
    DataError
        A table that is not a usable trajectory (missing column, NaN, irregular sampling, …).
    """
    pieces = _pieces(X, source)
    targets = _split_target(y, pieces, source)
    out: list[Trajectory] = []
    for (name, piece), target in zip(pieces, targets, strict=True):
        if isinstance(piece, Trajectory):
            out.append(piece if target is None else _with_target(piece, target, name))
        else:
            out.extend(_frame_trajectories(piece, target, name, torque))
    if not out:
        raise OptionError(source, "holds no trajectory")
    return out


def refuse_repeats(records: Sequence[Trajectory], source: str) -> None:
    """:class:`OptionError` where a record of ``source`` repeats an earlier one sample for
    sample (time, position and torque): fitted twice, its samples would count twice and
    narrow every interval, as the command line refuses a file given twice."""
    seen: dict[bytes, str] = {}
    for r in records:
        key = hashlib.blake2b(b"".join(np.ascontiguousarray(a, dtype=float).tobytes()
                                       for a in (r.t, r.q, r.tau))).digest()
        if key in seen:
            raise OptionError(source, f"holds the same record twice ({seen[key]} and {r.name}): "
                                      "its samples would count twice and narrow the intervals")
        seen[key] = r.name


def optional_trajectories(X: Any, source: str) -> list[Trajectory] | None:
    """:func:`as_trajectories` of ``X``, or None for None or an empty list (no such data)."""
    if X is None or (isinstance(X, list | tuple) and not X):
        return None
    return as_trajectories(X, source=source)


def _pieces(X: Any, source: str) -> list[tuple[str, pd.DataFrame | Trajectory]]:
    """``X`` as named tables and trajectories."""
    if isinstance(X, Trajectory | pd.DataFrame):
        return [(source, X)]
    if isinstance(X, np.ndarray) or hasattr(X, "__array__") or hasattr(X, "tocsr"):
        return [(source, _array_frame(X, source))]
    if isinstance(X, Sequence) and not isinstance(X, str | bytes):
        for i, item in enumerate(X):
            if not isinstance(item, Trajectory | pd.DataFrame):
                raise OptionError(f"{source}[{i}]", "must be a DataFrame or a Trajectory, "
                                                    f"got {type(item).__name__}")
        return [(f"{source}[{i}]", item) for i, item in enumerate(X)]
    raise OptionError(source, "must be a DataFrame with columns t, q, tau, a list of "
                              f"DataFrames or Trajectories, or a 2-D array; got {type(X).__name__}")


def _array_frame(X: Any, source: str) -> pd.DataFrame:
    """A 2-D array (t, q[, tau]) as a table; scikit-learn's checks word the common errors."""
    values = check_array(X, dtype=np.float64, ensure_min_samples=2, ensure_min_features=2,
                         input_name=source)
    if values.shape[1] > len(ARRAY_COLUMNS):
        raise OptionError(source, f"as an array must have the columns (t, q) or (t, q, tau), "
                                  f"got {values.shape[1]} columns")
    return pd.DataFrame(values, columns=list(ARRAY_COLUMNS[: values.shape[1]]))


def _split_target(y: Any, pieces: list, source: str) -> list[np.ndarray | None]:
    """``y`` cut into one part per piece (all None without ``y``)."""
    if y is None:
        return [None] * len(pieces)
    values = np.asarray(y, dtype=float)
    if values.ndim == 2 and values.shape[1] == 1:
        values = values[:, 0]
    total = sum(len(p) for _, p in pieces)
    if values.ndim != 1 or len(values) != total:
        raise OptionError("y", f"must hold one torque per row of {source} ({total}), "
                               f"got shape {values.shape}")
    if not np.isfinite(values).all():
        raise OptionError("y", "contains NaN or infinite values")
    cuts = np.cumsum([len(p) for _, p in pieces])[:-1]
    return list(np.split(values, cuts))


def _with_target(traj: Trajectory, target: np.ndarray, name: str) -> Trajectory:
    if not np.array_equal(traj.tau, target):
        raise OptionError("y", f"differs from the torque of {name} ({traj.name})")
    return traj


def _frame_trajectories(df: pd.DataFrame, target: np.ndarray | None, name: str,
                        torque: bool) -> list[Trajectory]:
    """The trajectories of one table (split on its trajectory column)."""
    df = df.reset_index(drop=True)  # the loader's messages name the row by its index
    tau = COLUMNS.torque
    if target is not None:
        if tau in df.columns and not np.array_equal(df[tau].to_numpy(dtype=float), target):
            raise OptionError("y", f"differs from the column '{tau}' of {name}")
        df = df.assign(**{tau: target})
    placeholder = tau not in df.columns and not torque
    if placeholder:  # the loader wants a recorded torque; a prediction does not read it
        df = df.assign(**{tau: df[COLUMNS.position] if COLUMNS.position in df.columns else 0.0})
    columns = Columns(velocity="qd" if "qd" in df.columns else None,
                      acceleration="qdd" if "qdd" in df.columns else None)
    check_columns(df, columns, Path(name), advise=False)
    df, clock = clock_in_seconds(df, columns.time, name)
    out = [_table_trajectory(part, label, Path(label), columns, Reading(), False)
           for label, part in _parts(df, name)]
    if clock:  # durations or dates and times read as seconds: said with the first record
        out[0] = out[0].with_(notes=(*clock, *out[0].notes))
    return [t.with_(tau=np.zeros_like(t.q)) for t in out] if placeholder else out


def _parts(df: pd.DataFrame, name: str) -> list[tuple[str, pd.DataFrame]]:
    """(label, rows) of each trajectory of a table."""
    column = COLUMNS.trajectory
    if column not in df.columns:
        return [(name, df)]
    labels = df[column].to_numpy()
    if pd.isna(labels).any():
        row = int(np.flatnonzero(pd.isna(labels))[0])
        raise DataError(f"{name}: column '{column}', row {row}: missing trajectory label")
    starts = np.flatnonzero(np.r_[True, labels[1:] != labels[:-1]])
    stops = np.r_[starts[1:], len(labels)]
    seen: set[str] = set()
    for start in starts:
        label = str(labels[start])
        if label in seen:
            raise DataError(f"{name}: column '{column}': the rows of trajectory '{label}' are "
                            "not contiguous")
        seen.add(label)
    return [(f"{name}#{labels[a]}", df.iloc[a:b]) for a, b in zip(starts, stops, strict=True)]
