"""The methods sparsefric is compared with (ALGORITHM.md §6), and their registry by name.

Each returns a :class:`~sparsefric.model.JointModel`:

* :mod:`.idim_ls` — :func:`idim_ls`, the robotics standard: a fixed inverse dynamic model by
  linear least squares;
* :mod:`.output_error` — :func:`output_error_lugre`, :func:`output_error_multistart`: every LuGre
  parameter by nonlinear least squares on the torque error;
* :mod:`.two_step` — :func:`two_step_lugre`: the classical two-step identification from
  constant-velocity points and a pre-sliding record (:func:`presliding_experiment`).

:func:`fit_baseline` runs them by the names of ``sparsefric identify --method`` (the first of
:data:`~sparsefric.options.METHODS`, ``sparsefric``, is :class:`~sparsefric.estimator.SparseFric`)
with the settings a practitioner would choose without knowing the joint:

* ``idim-ls`` — rigid body + Coulomb + viscous q̇ by linear least squares, with the published
  EMPS reference settings (4th-order zero-phase Butterworth at 100 Hz, decimation by 10).
* ``output-error`` — every LuGre and rigid-body parameter by bounded nonlinear least squares on
  the torque error, started from the IDIM-LS fit and from each σ0 of
  :func:`~sparsefric.steps.iterations.default_sigma0_starts` (σ0 is not known beforehand);
  the fit with the lowest torque error is kept.
* ``two-step`` — the static curve from the constant-velocity parts of the training and
  validation moves, σ0, σ1 and I from a separate pre-sliding record (small torque below
  break-away), gravity from IDIM-LS.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

from sparsefric.baselines.idim_ls import idim_ls, idim_regressor
from sparsefric.baselines.output_error import output_error_lugre, output_error_multistart
from sparsefric.baselines.two_step import (
    fit_presliding_arx,
    fit_static_curve,
    presliding_experiment,
    two_step_lugre,
)
from sparsefric.data import Trajectory
from sparsefric.errors import DataError, FitWarning, OptionError, user_stacklevel
from sparsefric.model import JointModel
from sparsefric.options import METHODS, check_choice, check_cutoff, mention
from sparsefric.preprocessing import aligned_pieces
from sparsefric.steps.iterations import default_sigma0_starts
from sparsefric.validation import cve_from_trajectories

__all__ = ["fit_baseline", "fit_presliding_arx", "fit_static_curve", "idim_ls", "idim_regressor",
           "output_error_lugre", "output_error_multistart", "presliding_experiment",
           "two_step_lugre"]

#: Butterworth cutoffs [Hz] of IDIM-LS (EMPS reference) and of the output-error velocity.
IDIM_CUTOFF_HZ = 100.0
OUTPUT_ERROR_CUTOFF_HZ = 20.0
#: g(0) [N·m] for the σ0 starts when IDIM-LS finds no positive Coulomb level (the paper's joint).
FALLBACK_BREAKAWAY = 25.0


def fit_baseline(method: str, train: Sequence[Trajectory], axis: str = "revolute", *,
                 validate: Sequence[Trajectory] = (), presliding: Trajectory | None = None,
                 cutoff_hz: float | None = None,
                 sigma0_starts: Sequence[float] | None = None,
                 torque_delay: float = 0.0) -> JointModel:
    """Identify with the baseline ``method`` (one of :data:`METHODS` but ``sparsefric``).

    Parameters
    ----------
    method : str
        ``"idim-ls"``, ``"output-error"`` or ``"two-step"``.
    train, validate : sequence of Trajectory
        Training records; validation records add constant-velocity points for ``two-step``.
    axis : {"revolute", "prismatic"}
    presliding : Trajectory, optional
        The pre-sliding record ``two-step`` needs: the applied torque [N·m or N] and the angle
        [rad or m] of a joint excited below break-away.
    cutoff_hz : float, optional
        Butterworth cutoff [Hz] of every filter (default :data:`IDIM_CUTOFF_HZ` for IDIM-LS,
        :data:`OUTPUT_ERROR_CUTOFF_HZ` for the output-error velocity).
    sigma0_starts : sequence of float, optional
        σ0 starts [N·m/rad or N/m] of ``output-error`` (default scaled from IDIM-LS's Coulomb
        level, as sparsefric's).
    torque_delay : float
        How late [s] the torque column of every record is against the position, negative
        where early (default 0). Every record is first cut at its jumps and the torque of
        each piece aligned with its position, as sparsefric prepares its records
        (:func:`~sparsefric.preprocessing.aligned_pieces`: the pieces too short are left
        out); the pre-sliding record must stay one piece.

    Warns
    -----
    FitWarning
        One per note of the cutting and the alignment (a record cut at a jump, a piece left
        out), as :meth:`SparseFric.fit <sparsefric.estimator.SparseFric.fit>` warns of them.

    Raises
    ------
    DataError
        If no piece of the training records is left, or ``presliding`` has a jump.
    """
    check_choice("method", method, METHODS[1:])
    train = _pieces(train, torque_delay)
    validate = _pieces(validate, torque_delay) if validate else []
    if presliding is not None:
        pieces = _pieces([presliding], torque_delay)
        if len(pieces) > 1:
            raise DataError(f"{presliding.name}: the pre-sliding record has jumps in time or "
                            f"position (cut into {len(pieces)} pieces): record one stretch")
        presliding = pieces[0]
    if method == "two-step" and presliding is None:
        raise OptionError("method", f"two-step needs {mention('presliding', 'FILE')}, a record "
                          "of the joint excited below break-away (sparsefric simulate "
                          "--presliding writes one)")
    start = idim_ls(train, axis, cutoff_hz=_cutoff(cutoff_hz, IDIM_CUTOFF_HZ, train), decimate=10)
    if method == "idim-ls":
        return start
    if method == "output-error":
        starts = sigma0_starts or default_sigma0_starts(
            start.g0 if start.g0 > 0 else FALLBACK_BREAKAWAY, axis)
        return output_error_multistart(train, axis, start, starts,
                                       cutoff_hz=_cutoff(cutoff_hz, OUTPUT_ERROR_CUTOFF_HZ, train))
    cve = cve_from_trajectories([*train, *validate])
    if len(cve) < 4:
        raise OptionError(
            "method", f"two-step: {len(cve)} constant-velocity friction points in the training "
            "and validation files, at least 4 are needed for the static curve (record "
            "back-and-forth moves at several constant speeds)")
    assert presliding is not None
    return two_step_lugre((cve["velocity"].to_numpy(), cve["friction"].to_numpy()), presliding,
                          axis, rigid_body=start)


def _pieces(records: Sequence[Trajectory], torque_delay: float) -> list[Trajectory]:
    """:func:`~sparsefric.preprocessing.aligned_pieces` of ``records``, each of its notes a
    :class:`~sparsefric.errors.FitWarning` attributed to the user's line."""
    pieces, notes = aligned_pieces(records, torque_delay)
    for note in notes:
        warnings.warn(note, FitWarning, stacklevel=user_stacklevel())
    return pieces


def _cutoff(given: float | None, default: float, trajectories: Sequence[Trajectory]) -> float:
    """The Butterworth cutoff [Hz]: ``given``, which must suit every record
    (:func:`~sparsefric.options.check_cutoff`), else ``default`` capped at 0.4 of the
    slowest record's sampling rate."""
    check_cutoff(given, trajectories)
    if given is None:
        return min(default, 0.8 * min(0.5 / tr.dt for tr in trajectories))
    return given
