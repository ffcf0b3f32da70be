"""Step 0: trajectories → denoised, stacked signals for the regressions (ALGORITHM.md §4).

Each trajectory is first cut where its time or position jumps (:mod:`sparsefric.segments`: the
pieces are separate records, never differentiated across a jump), the torque of each piece is
aligned with its position where the torque column is logged early or late
(:func:`sparsefric.data.align_torque`), then every piece is differentiated on its own
(:func:`sparsefric.differentiation.differentiate`) and the results are stacked into one
:class:`Prepared` set with the slice of every piece, its sample period and, per sample, the
travelled distance to the nearest stop (see :mod:`sparsefric.regimes`).
:class:`Preprocessor` holds the settings, so that data scored after a fit are prepared exactly as
the training data were.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from sparsefric.data import MAX_ABS_VALUE, Trajectory, align_torque, aligned_samples
from sparsefric.differentiation import Derivatives, differentiate
from sparsefric.differentiation.trend_filter import measurement_noise_std
from sparsefric.errors import DataError, OptionError, user_stacklevel
from sparsefric.model import JointModel
from sparsefric.options import mention
from sparsefric.regimes import default_stop_speed, distance_from_stops
from sparsefric.segments import MIN_PIECE, kept_samples, split_records
from sparsefric.signals import Signals
from sparsefric.threads import in_parallel
from sparsefric.validation import relative_error
from sparsefric.validity import OutsideValidityWarning


@dataclass(frozen=True)
class Prepared:
    """Denoised samples of several trajectories, stacked, with their boundaries.

    Attributes
    ----------
    signals : Signals
        q [rad], q̇ [rad/s], q̈ [rad/s²] of all samples.
    tau : ndarray
        Denoised torque [N·m].
    tau_raw : ndarray
        Measured torque [N·m].
    bounds : list of (start, stop)
        Slice of each record in the stacked arrays (z is integrated per record). A record is
        a trajectory, or a piece of one cut at a jump (see ``pieces``).
    dt : list of float
        Sample period [s] of each record.
    stop_distance : ndarray
        Travelled distance [rad] of each sample to the nearest stop or reversal.
    span : ndarray
        Position span [rad] of each sample's record (1st–99th percentile).
    names : list of str
        Record names (a piece of trajectory ``name`` is ``name[start:stop]``, its samples).
    params : list of dict
        Differentiation settings per record (method, regularisation and how it was chosen).
    presliding_distance : float, optional
        The user's fixed distance [rad] from stops below which samples count as pre-sliding.
    pieces : tuple of Trajectory
        The records, one per slice of ``bounds``: the given trajectories themselves, except
        where one was cut at a jump (:func:`sparsefric.segments.split_record`).
    notes : tuple of str
        What preparing the data changed or could not settle (a record cut at a jump, pieces
        left out, an automatic regularisation at the end of its range), for the user.
    torque_held : bool
        The torque is a command held until the next sample (zero-order hold), not an
        instantaneous sample: the sample-averaged equation averages it by
        :func:`~sparsefric.differentiation.held_average`, not
        :func:`~sparsefric.differentiation.sample_average` (``DESIGN.md`` §68).
    """

    signals: Signals
    tau: np.ndarray
    tau_raw: np.ndarray
    bounds: list[tuple[int, int]]
    dt: list[float]
    stop_distance: np.ndarray
    span: np.ndarray
    names: list[str]
    params: list[dict] = field(default_factory=list)
    presliding_distance: float | None = None
    pieces: tuple[Trajectory, ...] = ()
    notes: tuple[str, ...] = ()
    torque_held: bool = False

    def __len__(self) -> int:
        return len(self.tau)

    def join(self, other: Prepared) -> Prepared:
        """These records followed by ``other``'s: what :func:`prepare` of both lists gives,
        since each record is differentiated on its own, without differentiating them again."""
        x, y, n = self.signals, other.signals, len(self)
        return Prepared(Signals(np.r_[x.q, y.q], np.r_[x.qd, y.qd], np.r_[x.qdd, y.qdd]),
                        np.r_[self.tau, other.tau], np.r_[self.tau_raw, other.tau_raw],
                        [*self.bounds, *((a + n, b + n) for a, b in other.bounds)],
                        [*self.dt, *other.dt], np.r_[self.stop_distance, other.stop_distance],
                        np.r_[self.span, other.span], [*self.names, *other.names],
                        [*self.params, *other.params], self.presliding_distance,
                        self.pieces + other.pieces, self.notes + other.notes, self.torque_held)

    def sliding_mask(self, fraction: float) -> np.ndarray:
        """Samples farther than ``fraction``·span from every stop (or than the user's distance)."""
        limit = self.presliding_distance if self.presliding_distance is not None else \
            fraction * self.span
        return self.stop_distance > limit

    def measured(self) -> Prepared:
        """The same samples with the measured torque in place of the denoised one (``tau``).

        The final coefficients regress it: least squares is not biased by noise in the torque,
        but it is by a smoothing that the q̈ column does not share (``DESIGN.md`` §33)."""
        return replace(self, tau=self.tau_raw)

    @property
    def torque_denoised(self) -> bool:
        """Whether ``tau`` differs from the measured torque (given derivatives keep it)."""
        return not np.array_equal(self.tau, self.tau_raw)

    @property
    def sampled_acceleration(self) -> bool:
        """Whether every record's q̈ is a second difference of fitted positions (TV of q̈):
        the acceleration averaged over ±h, against which τ must be averaged alike
        (:func:`~sparsefric.differentiation.sample_average`)."""
        return bool(self.params) and all(
            p.get("method") == "tv" and p.get("tv_order", 0) >= 2 for p in self.params)

    def subset(self, mask: np.ndarray) -> tuple[Signals, np.ndarray]:
        """Signals and torque of the masked samples (for the static regressions)."""
        x = self.signals
        return Signals(x.q[mask], x.qd[mask], x.qdd[mask]), self.tau[mask]

    def torque(self, model: JointModel, outside: str = "warn") -> list[np.ndarray]:
        """τ̂ [N·m] of ``model`` along every trajectory (LuGre z integrated along each from the
        default start of :func:`sparsefric.lugre.integrate_z`); ``outside`` as in
        :meth:`JointModel.torque <sparsefric.model.JointModel.torque>`, except that ``"warn"``
        gives one :class:`~sparsefric.validity.OutsideValidityWarning` for all the records,
        attributed to the user's line that led here (not to this package's)."""
        x = self.signals
        if outside == "warn" and (message := model.outside_message(x.q, x.qd)):
            warnings.warn(message, OutsideValidityWarning, stacklevel=user_stacklevel())
        each = "ignore" if outside == "warn" else outside
        return [model.torque(x.q[a:b], x.qd[a:b], x.qdd[a:b], h, outside=each)
                for (a, b), h in zip(self.bounds, self.dt, strict=True)]

    def relative_error(self, model: JointModel) -> float:
        """‖τ − τ̂‖/‖τ‖ of ``model`` over every sample, τ the measured torque."""
        return relative_error(self.tau_raw, np.concatenate(self.torque(model)))

    def cut(self, parts: Sequence[tuple[int, int, int]], records: Sequence[Trajectory],
            notes: tuple[str, ...] = ()) -> Prepared:
        """Samples ``start:stop`` of record ``k`` for each ``(k, start, stop)`` of ``parts``,
        each a record of its own (``records``: its trajectory, in the same order).

        The derivatives are those of the whole record: a record cut into training parts and
        held-out blocks (:func:`sparsefric.segments.hold_out`) is differentiated once, and
        every part carries the regularisation chosen on all of it, with no edge of the TV fit
        at the cuts. Which samples slide is judged within each part, as for a record given
        alone (its stops and its position span)."""
        x = self.signals
        rows = [np.arange(self.bounds[k][0] + a, self.bounds[k][0] + b) for k, a, b in parts]
        columns = [(x.q[r], x.qd[r], x.qdd[r], self.tau[r], self.tau_raw[r],
                    *_regime_columns(x.q[r], x.qd[r])) for r in rows]
        q, qd, qdd, tau, raw, dist, span = (np.concatenate(c) for c in zip(*columns, strict=True))
        ends = np.cumsum([0, *(len(r) for r in rows)])
        return Prepared(Signals(q, qd, qdd), tau, raw, list(zip(ends[:-1].tolist(),
                                                                ends[1:].tolist(), strict=True)),
                        [self.dt[k] for k, _, _ in parts], dist, span,
                        [r.name for r in records],
                        [{**self.params[k], "trajectory": r.name}
                         for (k, _, _), r in zip(parts, records, strict=True)],
                        self.presliding_distance, tuple(records), notes, self.torque_held)


def prepare(trajectories: Sequence[Trajectory], *, method: str = "tv",
            regularization: float | None = None, cutoff_hz: float | None = None,
            presliding_distance: float | None = None,
            tv_weight: float | None = None, torque_timing: str = "instant",
            torque_delay: float = 0.0, denoise_torque: bool = True) -> Prepared:
    """Cut each trajectory at its jumps, align the torque of each piece with its position,
    differentiate each piece on its own, stack the results.

    ``presliding_distance`` [rad] fixes which samples count as sliding for the static fits
    (default: chosen by :func:`choose_window`); see :mod:`sparsefric.regimes`. ``tv_weight``
    replaces ``regularization`` by the paper's TVRegDiff weight (:func:`tvregdiff_kappa`).
    ``torque_timing`` (:data:`~sparsefric.options.TORQUE_TIMINGS`): ``instant``, a sample of a
    torque that changes between samples; ``hold``, the command applied until the next sample.
    ``torque_delay`` [s]: how late the torque column is against the position (negative: early);
    each piece's torque is shifted by it and the samples the shift takes beyond the piece
    dropped (:func:`aligned_pieces`), so ``pieces`` are the aligned records.
    ``denoise_torque`` False leaves ``Prepared.tau`` the measured torque (what a prediction
    is compared with) and skips its fit.

    Raises
    ------
    DataError
        If nothing is left between the jumps and after the alignment, or a differentiated
        signal is not finite or beyond :data:`sparsefric.data.MAX_ABS_VALUE` (the regressions
        would overflow).
    """
    pieces, notes = aligned_pieces(trajectories, torque_delay)

    def derivatives(piece: Trajectory) -> Derivatives:
        reg = regularization if tv_weight is None else tvregdiff_kappa(piece, tv_weight)
        return differentiate(piece.t, piece.q, piece.tau, method=method, qd=piece.qd,
                             qdd=piece.qdd, regularization=reg, cutoff_hz=cutoff_hz,
                             denoise_torque=denoise_torque)

    parts, bounds, params = [], [], []
    start = 0
    # the pieces are independent and the angle's fit costs several times the torque's: pieces
    # side by side keep every core busy (each piece's own two fits also run side by side)
    for piece, d in zip(pieces, in_parallel(derivatives, pieces), strict=True):
        _check_finite(d, piece.name)
        parts.append((d.q, d.qd, d.qdd, d.tau, piece.tau, *_regime_columns(d.q, d.qd)))
        bounds.append((start, start + len(piece)))
        start += len(piece)
        params.append({"trajectory": piece.name, "method": d.method, **d.params})
        notes += [f"{piece.name}: {n}" for n in d.notes]
    q, qd, qdd, tau, raw, dist, span = (np.concatenate(c) for c in zip(*parts, strict=True))
    return Prepared(Signals(q, qd, qdd), tau, raw, bounds, [p.dt for p in pieces], dist, span,
                    [p.name for p in pieces], params, presliding_distance, tuple(pieces),
                    tuple(notes), torque_timing == "hold")


def aligned_pieces(trajectories: Sequence[Trajectory], torque_delay: float = 0.0
                   ) -> tuple[list[Trajectory], list[str]]:
    """The records cut at their jumps (:func:`~sparsefric.segments.split_records`), each piece
    with its torque aligned by ``torque_delay`` [s] (:func:`~sparsefric.data.align_torque`),
    and notes: what was cut, and the pieces the shift would leave shorter than
    :data:`~sparsefric.segments.MIN_PIECE` samples, which are left out as the cut leaves out
    short pieces. Every fit (sparsefric's and the baselines') takes its records this way.

    Raises
    ------
    DataError
        If no piece is left.
    """
    pieces, notes = split_records(trajectories)
    aligned = []
    for piece in pieces:
        kept = aligned_samples(piece, torque_delay)
        left = kept.stop - kept.start
        if left >= MIN_PIECE:
            aligned.append(align_torque(piece, torque_delay))
        else:
            notes.append(f"{piece.name}: {left} samples after the torque's alignment by "
                         f"{torque_delay:g} s, fewer than {MIN_PIECE}: left out")
    if not aligned:
        raise DataError(f"no part of {', '.join(t.name for t in trajectories)[:200]} is "
                        f"{MIN_PIECE} samples long between its jumps once its torque is aligned "
                        f"by {torque_delay:g} s: nothing to identify")
    return aligned, notes


def per_row(values: Sequence[np.ndarray], trajectories: Sequence[Trajectory]
            ) -> tuple[list[np.ndarray], int]:
    """Values of the records :func:`prepare` makes of ``trajectories`` without a torque delay
    (one array per record, e.g. :meth:`Prepared.torque`), as one array per trajectory with a
    value per sample: NaN at the samples of the pieces between jumps too short to keep and
    of the stretches with the drive off (:func:`~sparsefric.segments.kept_samples`). Also
    returns how many samples are NaN."""
    kept = [kept_samples(t) for t in trajectories]
    out = np.full(sum(k.size for k in kept), np.nan)
    out[np.concatenate(kept)] = np.concatenate(values)
    ends = np.cumsum([k.size for k in kept])[:-1]
    return np.split(out, ends), int(out.size - sum(k.sum() for k in kept))


def tvregdiff_kappa(record: Trajectory, alpha: float) -> tuple[float, float]:
    """κ of the angle and of the torque of ``record`` for TVRegDiff's weight ``alpha``.

    TVRegDiff (Chartrand, the paper's differentiation with α = 1000) minimises
    α Σ|Δu| + ½‖Au − f‖², u the derivative per sample and A its cumulative sum; with x = Au the
    fitted signal that is the trend filter ½‖f − x‖² + α‖D^(m)x‖₁ of
    :func:`~sparsefric.differentiation.derivatives.tv_fit`, so λ = α in the units of the signal
    and κ = λ/σ̂ with the σ̂ that function estimates (angle: TV of q̈, torque: TV of τ̇). A
    noise-free signal (σ̂ = 0) gets κ = 0, as λ = κσ̂ would anyway.
    """
    def kappa(y: np.ndarray, order: int) -> float:
        sigma = measurement_noise_std(y, order)
        return float(alpha / sigma) if sigma > 0 else 0.0

    return kappa(record.q, 4), kappa(record.tau, 3)


def _regime_columns(q: np.ndarray, qd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per sample of one record: the travelled distance to the nearest stop [rad] and the
    record's position span [rad] (1st–99th percentile), the two that say which samples slide."""
    lo, hi = np.percentile(q, [1, 99])
    return (distance_from_stops(q, qd, default_stop_speed(qd)),
            np.full(len(q), max(hi - lo, 1e-12)))


def _check_finite(d: Derivatives, name: str) -> None:
    """Raise :class:`DataError` if a differentiated signal of record ``name`` is not finite or
    beyond :data:`~sparsefric.data.MAX_ABS_VALUE` (e.g. a measured column far out of range)."""
    for label, x in (("position", d.q), ("velocity", d.qd), ("acceleration", d.qdd),
                     ("torque", d.tau)):
        with np.errstate(invalid="ignore"):
            bad = ~(np.abs(x) <= MAX_ABS_VALUE)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise DataError(f"{name}: the {label} after differentiation is {x[i]:.6g} at sample "
                            f"{i} (not finite or beyond ±{MAX_ABS_VALUE:.0e}): check the record "
                            "for corrupt values")


@dataclass
class Preprocessor:
    """How records are prepared, remembered with the sets already prepared.

    The sets prepared with ``remember=True`` (the training and validation data of a fit) are
    kept, by the identity of their :class:`~sparsefric.data.Trajectory` objects, so that the
    report does not differentiate them a second time. The cache is not pickled.

    Attributes
    ----------
    method : str
        Differentiation method (:data:`sparsefric.options.DIFFERENTIATION`).
    regularization : float, optional
        TV weight κ (dimensionless; default automatic).
    cutoff_hz : float, optional
        Butterworth cutoff [Hz].
    presliding_distance : float, optional
        Fixed distance [rad] from stops below which samples count as pre-sliding.
    tv_weight : float, optional
        TV weight in the paper's units (TVRegDiff's α, :func:`tvregdiff_kappa`); replaces
        ``regularization``.
    torque_timing : str
        ``instant`` (default) or ``hold``: how the logged torque relates to the motion
        between samples (:func:`prepare`).
    torque_delay : float
        How late [s] the torque column is against the position, negative where it is early
        (default 0): every record's torque is aligned with its position (:func:`prepare`).
    denoise_torque : bool
        False: the torque is left as measured (:func:`prepare`); for predictions, which need
        the motion's derivatives only.
    """

    method: str = "tv"
    regularization: float | None = None
    cutoff_hz: float | None = None
    presliding_distance: float | None = None
    tv_weight: float | None = None
    torque_timing: str = "instant"
    torque_delay: float = 0.0
    denoise_torque: bool = True
    _cache: list[tuple[tuple[Trajectory, ...], Prepared]] = field(
        default_factory=list, repr=False, compare=False)

    def prepare(self, trajectories: Sequence[Trajectory], remember: bool = False) -> Prepared:
        """The :class:`Prepared` set of ``trajectories``; ``remember`` keeps it for next time."""
        key = tuple(trajectories)
        for seen, prep in self._cache:
            if len(seen) == len(key) and all(a is b for a, b in zip(seen, key, strict=True)):
                return prep
        if self.method == "given" and any(t.qd is None or t.qdd is None for t in key):
            raise OptionError("differentiation", f"given needs the measured velocity and "
                              f"acceleration in every record ({mention('velocity', 'NAME')} "
                              f"and {mention('acceleration', 'NAME')})")
        prep = prepare(key, method=self.method, regularization=self.regularization,
                       cutoff_hz=self.cutoff_hz, presliding_distance=self.presliding_distance,
                       tv_weight=self.tv_weight, torque_timing=self.torque_timing,
                       torque_delay=self.torque_delay, denoise_torque=self.denoise_torque)
        if remember:
            self.remember(key, prep)
        return prep

    def motion(self) -> Preprocessor:
        """These settings with no torque alignment (``torque_delay`` 0), for predictions: they
        need the motion alone, and one value per sample of every record. Aligned, the sets
        remembered hold fewer samples, so a preprocessor with a delay gives one of its own."""
        if self.torque_delay == 0:
            return self
        return replace(self, torque_delay=0.0, _cache=[])

    def remember(self, trajectories: Sequence[Trajectory], prep: Prepared) -> None:
        """Keep ``prep`` as the prepared set of ``trajectories`` (e.g. parts cut from a record
        prepared whole, :meth:`Prepared.cut`)."""
        self._cache.append((tuple(trajectories), prep))

    def __getstate__(self) -> dict:
        # the prepared sets are a cache of the fitted data, not part of the fitted model
        return {k: v for k, v in self.__dict__.items() if k != "_cache"}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state, _cache=[])


#: Candidate pre-sliding windows, as fractions of each trajectory's position span.
WINDOW_FRACTIONS = (0.0, 0.001, 0.0025, 0.005, 0.01)


def choose_window(prep: Prepared, rigid_columns: np.ndarray, tolerance: float = 0.05) -> float:
    """Pick the pre-sliding window for the static fits, as a fraction of the span.

    A static model is biased by samples still in the bristle transition after a stop. For each
    candidate window, fit rigid body + Coulomb + viscous by least squares on the samples outside
    it and measure the RMS residual on the samples outside the widest window (clean sliding); keep
    the smallest window within ``tolerance`` (relative) of the best residual — more data where
    transitions do not matter, fewer samples where they bias the fit.
    """
    x = prep.signals
    cols = np.column_stack([rigid_columns, np.sign(x.qd), x.qd])
    strict = prep.sliding_mask(WINDOW_FRACTIONS[-1])
    if strict.sum() < cols.shape[1] * 10:
        return WINDOW_FRACTIONS[0]
    scores = []
    for f in WINDOW_FRACTIONS:
        mask = prep.sliding_mask(f)
        coef = np.linalg.lstsq(cols[mask], prep.tau[mask], rcond=None)[0]
        scores.append(float(np.sqrt(np.mean((cols[strict] @ coef - prep.tau[strict]) ** 2))))
    best = min(scores)
    return next(f for f, s in zip(WINDOW_FRACTIONS, scores, strict=True)
                if s <= best * (1 + tolerance))
