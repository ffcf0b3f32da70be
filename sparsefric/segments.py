r"""Records cut where they jump, so that no derivative is taken across a discontinuity.

One file often concatenates separate records: the position jumps between them (the joint was
moved, or the logger restarted with another offset) and the time may pause or restart. A
derivative across such a jump is a one-sample velocity spike of Δq/h and an acceleration of
±Δq/h², which dominates every regression (``DESIGN.md`` §22). :func:`split_record` cuts a
:class:`~sparsefric.data.Trajectory` at

* a **time break**: a step ``t_{i+1} − t_i`` that is not positive or exceeds
  :data:`TIME_GAP_FACTOR` times the median period;
* a **position jump** (:func:`position_jumps`): a step ``d_i = q_{i+1} − q_i`` that departs
  from the steps around it by far more than both the local motion and the noise;

and leaves out the **drive off** (:func:`drive_off`): runs where the torque is exactly 0 while
the joint rests.

The pieces become separate records (their own bounds, z restarted); pieces shorter than
:data:`MIN_PIECE` samples are left out. Every cut and every piece left out is described in a
note for the user.

:func:`validation_blocks` picks contiguous blocks of one record to hold out for validation when
no validation records are given, cut where the joint rests.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sparsefric.data import MIN_SAMPLES, Trajectory
from sparsefric.differentiation.trend_filter import measurement_noise_std
from sparsefric.errors import DataError
from sparsefric.regimes import runs

__all__ = ["DRIVE_OFF_SAMPLES", "JUMP_FACTOR", "MIN_PIECE", "TIME_GAP_FACTOR", "cut_steps",
           "drive_off", "kept_samples", "piece_bounds", "position_jumps", "rest_mask",
           "split_record", "split_records", "time_breaks", "validation_blocks"]

#: A step is a jump when its departure from the steps around it exceeds this many times both
#: the largest of those steps and the position noise σ̂.
JUMP_FACTOR = 20.0
#: A time step longer than this many median periods is a pause of the recording.
TIME_GAP_FACTOR = 1.5
#: Fewest samples of a piece worth keeping (the loader's minimum for a record).
MIN_PIECE = MIN_SAMPLES
#: Offsets of the neighbouring steps that estimate the local motion of step i (the steps i ± 1
#: are left out: a glitch of one sample moves both steps around it).
_NEIGHBOURS = (-3, -2, 2, 3)
#: Most cuts listed one by one in a note.
_LISTED = 5


def time_breaks(t: np.ndarray, factor: float = TIME_GAP_FACTOR) -> np.ndarray:
    """Steps where the time axis pauses or runs backwards.

    Parameters
    ----------
    t : ndarray, shape (n,)
        Time [s].
    factor : float
        A step ``Δt_i = t_{i+1} − t_i`` breaks the record when ``Δt_i ≤ 0`` or
        ``Δt_i > factor · median(Δt)``.

    Returns
    -------
    ndarray of bool, shape (n − 1,)
        True for step i (between samples i and i + 1) if it breaks the record.
    """
    dt = np.diff(np.asarray(t, dtype=float))
    positive = dt[dt > 0]
    if positive.size == 0:
        return np.ones(dt.size, dtype=bool)
    return (dt <= 0) | (dt > factor * float(np.median(positive)))


def position_jumps(q: np.ndarray, noise: float, factor: float = JUMP_FACTOR) -> np.ndarray:
    r"""Steps where the position jumps: a one-sample departure far above motion and noise.

    With the steps ``d_i = q_{i+1} − q_i`` [rad or m] and the neighbouring steps
    ``N_i = {d_{i−3}, d_{i−2}, d_{i+2}, d_{i+3}}`` (ends padded with the end values), step i
    jumps when

    .. math:: |d_i − \operatorname{median} N_i| > \text{factor}\cdot
              \max\big(\hat\sigma,\ \max_{d \in N_i} |d|\big).

    A moving joint changes its step by the acceleration times h² per sample, so its departure
    stays below the neighbouring steps themselves (a ramp from rest: ~0.2 of them; motion at
    the Nyquist rate: 1); at rest the departure is noise, a few σ̂ (two encoder counts at most on
    a lattice, 7 σ̂ with σ̂ = Δ/√12). A jump between concatenated records departs by its full
    size. A glitch of one sample moves the two steps around it, and both are found.

    Parameters
    ----------
    q : ndarray, shape (n,)
        Position [rad or m].
    noise : float
        σ̂, the position noise standard deviation [rad or m].
    factor : float
        How far above both scales a departure must be.

    Returns
    -------
    ndarray of bool, shape (n − 1,)
        True for step i (between samples i and i + 1) if it jumps.
    """
    d = np.diff(np.asarray(q, dtype=float))
    if d.size == 0:
        return np.zeros(0, dtype=bool)
    pad = max(abs(k) for k in _NEIGHBOURS)
    padded = np.pad(d, pad, mode="edge")
    near = np.column_stack([padded[pad + k: pad + k + d.size] for k in _NEIGHBOURS])
    departure = np.abs(d - np.median(near, axis=1))
    scale = np.maximum(np.max(np.abs(near), axis=1), noise)
    return departure > factor * scale


def cut_steps(t: np.ndarray, q: np.ndarray, noise: float | None = None) -> np.ndarray:
    """Indices i of the steps (between samples i and i + 1) where a record is cut.

    ``noise`` [rad or m] defaults to :func:`~.trend_filter.measurement_noise_std` of ``q``
    (its trimmed 4th differences ignore the few jumps).
    """
    sigma = measurement_noise_std(np.asarray(q, dtype=float)) if noise is None else noise
    return np.flatnonzero(time_breaks(t) | position_jumps(q, sigma))


#: Fewest samples of a run of exact zeros of the torque at rest that :func:`drive_off` takes
#: for the drive switched off (a resting drive that holds the joint logs its noise).
DRIVE_OFF_SAMPLES = 50


def drive_off(tau: np.ndarray, q: np.ndarray, noise: float,
              min_run: int = DRIVE_OFF_SAMPLES) -> np.ndarray:
    """Samples of the runs of at least ``min_run`` samples where the torque ``tau`` [N·m or N]
    is exactly 0 and the joint rests (:func:`rest_mask` of ``q`` with noise σ̂ ``noise``).

    There the drive was off, or the log holds its command while a brake held the joint: an
    unmeasured torque then carries the gravity and the bristles, and the equation of motion
    does not hold. data/example with 3 s at rest and the torque at 0 before each training
    record came out with I +32 % (1.99 kg·m², truth 1.5) and an offset warning that did not
    name the cause. A joint that coasts with the drive off (τ = 0 while it moves) is kept: the
    equation holds there with τ = 0. A torque that is 0 throughout is none measured (the
    placeholder of a record to predict; the loader refuses a constant torque column).

    Returns
    -------
    ndarray of bool, shape (n,)
    """
    zero = np.asarray(tau) == 0.0
    out = np.zeros(len(zero), dtype=bool)
    if zero.all() or not any(b - a >= min_run for a, b in runs(zero)):
        return out  # no torque measured (a record to predict), or no such run
    for a, b in runs(zero & rest_mask(q, noise)):
        out[a:b] = b - a >= min_run
    return out


def piece_bounds(n: int, cuts: np.ndarray) -> list[tuple[int, int]]:
    """``(start, stop)`` sample ranges of the pieces of an n-sample record cut after the
    samples ``cuts`` (step i cuts between samples i and i + 1)."""
    edges = np.r_[0, np.asarray(cuts, dtype=int) + 1, n]
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:], strict=True) if b > a]


def _bounds(traj: Trajectory, noise: float | None = None
            ) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int]]]:
    """The cuts of ``traj`` (:func:`cut_steps`), its drive-off samples (:func:`drive_off`) and
    the ``(start, stop)`` sample ranges of its pieces: between the cuts, without those
    samples."""
    sigma = measurement_noise_std(np.asarray(traj.q, dtype=float)) if noise is None else noise
    cuts = cut_steps(traj.t, traj.q, sigma)
    off = drive_off(traj.tau, traj.q, sigma)
    bounds = [(a + start, a + stop) for a, b in piece_bounds(len(traj), cuts)
              for start, stop in runs(~off[a:b])]
    return cuts, off, bounds


def _piece(traj: Trajectory, a: int, b: int) -> Trajectory:
    """Samples a:b of ``traj``, named ``name[a:b]``, without the whole record's notes."""
    return traj.part(slice(a, b), f"{traj.name}[{a}:{b}]").with_(notes=())


def _describe(traj: Trajectory, i: int) -> str:
    """One cut in words: what jumps, where."""
    t, q = traj.t, traj.q
    where = f"after sample {i} (t = {t[i]:.6g} s)"
    if not t[i + 1] > t[i]:
        return f"time runs backwards {where}"
    if t[i + 1] - t[i] > TIME_GAP_FACTOR * float(np.median(np.diff(t))):
        return f"time pauses for {t[i + 1] - t[i]:.6g} s {where}"
    return f"position jumps by {q[i + 1] - q[i]:+.6g} {where}"


def _split_note(traj: Trajectory, cuts: np.ndarray, kept: int) -> str:
    listed = "; ".join(_describe(traj, int(i)) for i in cuts[:_LISTED])
    more = f"; and {len(cuts) - _LISTED} more" if len(cuts) > _LISTED else ""
    return (f"{traj.name}: {listed}{more}. The record is split there into {kept} separate "
            "records (never differentiated across a jump; the bristle state restarts in each)")


def _off_note(traj: Trajectory, off: np.ndarray, kept: int) -> str:
    stretches = runs(off)
    seconds = float(off.sum()) * float(np.median(np.diff(traj.t)))
    first = traj.t[stretches[0][0]]
    return (f"{traj.name}: the torque is exactly 0 while the joint rests in {len(stretches)} "
            f"stretch(es), {seconds:.3g} s in all, the first from t = {first:.6g} s: the drive "
            "was off, or a brake held the joint against a torque the log does not hold; those "
            "samples are left out"
            + (f", and the record is split into {kept} records there" if kept > 1 else ""))


def split_record(traj: Trajectory, noise: float | None = None,
                 min_samples: int = MIN_PIECE) -> tuple[list[Trajectory], list[str]]:
    """The pieces of ``traj`` between its time breaks and position jumps, without the samples
    where the drive is off, and notes.

    Parameters
    ----------
    traj : Trajectory
        One record.
    noise : float, optional
        Position noise σ̂ [rad or m] (default: estimated from ``traj.q``).
    min_samples : int
        Pieces with fewer samples are left out (with a note).

    Returns
    -------
    pieces : list of Trajectory
        ``[traj]`` itself when nothing is cut; else the pieces of at least ``min_samples``
        samples, named ``name[start:stop]`` by their sample range.
    notes : list of str
        What was cut and what was left out, one line each (empty when nothing was cut).
    """
    cuts, off, bounds = _bounds(traj, noise)
    if cuts.size == 0 and not off.any():
        return [traj], []
    kept = [(a, b) for a, b in bounds if b - a >= min_samples]
    short = [(a, b) for a, b in bounds if b - a < min_samples]
    notes = [_split_note(traj, cuts, len(kept))] if cuts.size else []
    if off.any():
        notes.append(_off_note(traj, off, len(kept)))
    if short:
        listed = ", ".join(f"[{a}:{b}]" for a, b in short[:_LISTED])
        more = f" and {len(short) - _LISTED} more" if len(short) > _LISTED else ""
        notes.append(f"{traj.name}: {len(short)} piece(s) between jumps shorter than "
                     f"{min_samples} samples left out (samples {listed}{more})")
    return [_piece(traj, a, b) for a, b in kept], notes


def kept_samples(traj: Trajectory, min_samples: int = MIN_PIECE) -> np.ndarray:
    """Which samples of ``traj`` the records prepared from it hold, without a torque delay
    (:func:`~sparsefric.preprocessing.aligned_pieces`): those of its pieces between jumps and
    without the drive off (:func:`split_record`) of at least ``min_samples`` samples.

    Returns
    -------
    ndarray of bool, shape (n,)
        False at the samples of the pieces left out.
    """
    mask = np.zeros(len(traj), dtype=bool)
    for a, b in _bounds(traj)[2]:
        mask[a:b] = b - a >= min_samples
    return mask


def split_records(trajectories: Sequence[Trajectory], min_samples: int = MIN_PIECE
                  ) -> tuple[list[Trajectory], list[str]]:
    """:func:`split_record` of every trajectory: all the pieces in order, and all the notes.

    Raises
    ------
    DataError
        If no piece of any trajectory is long enough to keep.
    """
    pieces: list[Trajectory] = []
    notes: list[str] = []
    for traj in trajectories:
        kept, said = split_record(traj, min_samples=min_samples)
        pieces += kept
        notes += said
    if trajectories and not pieces:
        raise DataError(f"no part of {', '.join(t.name for t in trajectories)[:200]} is "
                        f"{min_samples} samples long between its jumps: nothing to identify")
    return pieces, notes


#: Samples of the window over which the position must stay within :data:`REST_BAND` σ̂ for
#: a sample to count as a rest.
REST_WINDOW = 9
#: Position band [in σ̂] of a rest (a resting encoder dithers over ± two counts at most).
REST_BAND = 8.0


def rest_mask(q: np.ndarray, noise: float, window: int = REST_WINDOW) -> np.ndarray:
    r"""Samples where the joint rests: the position range over the ``window`` samples centred on
    them stays within :data:`REST_BAND`·σ̂.

    .. math:: \max_{|j−i| ≤ w/2} q_j − \min_{|j−i| ≤ w/2} q_j ≤ \text{REST\_BAND}\cdot\hat\sigma

    Parameters
    ----------
    q : ndarray, shape (n,)
        Position [rad or m].
    noise : float
        σ̂ [rad or m].
    window : int
        Samples per window (odd).

    Returns
    -------
    ndarray of bool, shape (n,)
    """
    q = np.asarray(q, dtype=float)
    half = window // 2
    padded = np.pad(q, half, mode="edge")
    view = np.lib.stride_tricks.sliding_window_view(padded, 2 * half + 1)
    return (view.max(axis=1) - view.min(axis=1)) <= REST_BAND * max(noise, 0.0)


def _snap(target: int, rest: np.ndarray, lo: int, hi: int) -> int:
    """The rest sample in [lo, hi) nearest to ``target``, else ``target``."""
    candidates = np.flatnonzero(rest[lo:hi]) + lo
    if candidates.size == 0:
        return target
    return int(candidates[np.argmin(np.abs(candidates - target))])


def validation_blocks(q: np.ndarray, noise: float, fraction: float = 0.2, blocks: int = 4,
                      min_samples: int = MIN_PIECE) -> list[tuple[int, int]]:
    """Contiguous blocks of one record to hold out for validation, cut where the joint rests.

    The record of n samples is divided into ``blocks`` equal spans; in each, a block of
    s = ``fraction``·n/``blocks`` samples is centred, and each of its ends is moved to the
    nearest rest (:func:`rest_mask`) within s/4 … s of the centre, so that neither the held-out
    block nor the training parts around it start in the middle of a move where a rest is near
    (the bristle state restarts at each cut); a block is thus s/2 … 2s long. Evenly spread
    blocks see every part of a file that changes speed as it goes.

    Parameters
    ----------
    q : ndarray, shape (n,)
        Position [rad or m] of one record (no jumps: :func:`split_record` first).
    noise : float
        Position noise σ̂ [rad or m].
    fraction : float
        Share of the samples to hold out, in (0, 0.5].
    blocks : int
        Number of blocks.
    min_samples : int
        Blocks, and training parts between them, shorter than this are not made.

    Returns
    -------
    list of (start, stop)
        Sample ranges of the validation blocks, in order (empty if the record is too short for
        blocks of ``min_samples`` with training parts as long around them).
    """
    n = len(q)
    if not 0.0 < fraction <= 0.5 or blocks < 1:
        raise ValueError(f"fraction must be in (0, 0.5] and blocks ≥ 1, got {fraction}, {blocks}")
    span = n // blocks
    size = int(fraction * span)
    if size < min_samples or span - size < min_samples:
        return []
    rest = rest_mask(q, noise)
    out, previous = [], 0
    for b in range(blocks):
        lo, hi = b * span, (b + 1) * span
        centre = lo + span // 2
        start = _snap(centre - size // 2, rest, max(lo, centre - size), centre - size // 4)
        stop = _snap(centre + size // 2, rest, centre + size // 4, min(hi, centre + size))
        if stop - start >= min_samples and start - previous >= min_samples and \
                n - stop >= min_samples:
            out.append((start, stop))
            previous = stop
    return out


#: Share of the samples held out for validation when none are given, and blocks per record.
HOLD_OUT_FRACTION = 0.2
HOLD_OUT_BLOCKS = 4


def _complement(n: int, blocks: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The sample ranges of an n-sample record around ``blocks`` (sorted, disjoint)."""
    edges = [0, *(e for block in blocks for e in block), n]
    return [(a, b) for a, b in zip(edges[::2], edges[1::2], strict=True) if b > a]


#: A sample range of a record: (index of the piece among the split records, start, stop).
Part = tuple[int, int, int]


@dataclass(frozen=True)
class HeldOut:
    """Records given without validation data, cut into training parts and validation blocks.

    Attributes
    ----------
    train, validate : list of Trajectory
        The training parts, named ``name[start:stop]`` (a piece without blocks keeps its
        name), and the held-out blocks (empty if no piece was long enough).
    train_parts, validate_parts : list of Part
        Their sample ranges in the pieces, in the same order.
    """

    train: list[Trajectory]
    validate: list[Trajectory]
    train_parts: list[Part]
    validate_parts: list[Part]


def hold_out(pieces: Sequence[Trajectory], fraction: float = HOLD_OUT_FRACTION,
             blocks: int = HOLD_OUT_BLOCKS) -> HeldOut:
    """Training parts and validation blocks of records given without validation data.

    ``pieces`` are the records split at their jumps (:func:`split_records`; the records a
    :class:`~sparsefric.preprocessing.Prepared` set holds). From each piece
    :func:`validation_blocks` holds out ``blocks`` contiguous blocks of ``fraction`` of its
    samples, cut at rests; the training parts are the spans between them. Selection (AICc) and
    the choice among σ0 starts then score data the fit has not seen, as with a validation file
    (``DESIGN.md`` §26). A piece too short for blocks stays whole in training.
    """
    train: list[Part] = []
    validate: list[Part] = []
    for k, piece in enumerate(pieces):
        held = validation_blocks(piece.q, measurement_noise_std(piece.q), fraction, blocks)
        validate += [(k, a, b) for a, b in held]
        train += [(k, a, b) for a, b in _complement(len(piece), held)] if held \
            else [(k, 0, len(piece))]

    def records(parts: list[Part]) -> list[Trajectory]:
        return [pieces[k] if (a, b) == (0, len(pieces[k])) else _piece(pieces[k], a, b)
                for k, a, b in parts]

    return HeldOut(records(train), records(validate), train, validate)
