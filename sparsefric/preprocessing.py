"""Step 0: trajectories → denoised, stacked signals for the regressions (ALGORITHM.md §4).

Each trajectory is differentiated on its own (:func:`sparsefric.differentiation.differentiate`)
and the results are stacked into one :class:`Prepared` set with the slice of every trajectory,
its sample period and, per sample, the travelled distance to the nearest stop (see
:mod:`sparsefric.regimes`). :class:`Preprocessor` holds the settings, so that data scored after a
fit are prepared exactly as the training data were.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from sparsefric.data import Trajectory
from sparsefric.differentiation import differentiate
from sparsefric.errors import OptionError
from sparsefric.model import JointModel
from sparsefric.options import mention
from sparsefric.regimes import default_stop_speed, distance_from_stops
from sparsefric.signals import Signals
from sparsefric.validation import relative_error


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
        Slice of each trajectory in the stacked arrays (z is integrated per trajectory).
    dt : list of float
        Sample period [s] of each trajectory.
    stop_distance : ndarray
        Travelled distance [rad] of each sample to the nearest stop or reversal.
    span : ndarray
        Position span [rad] of each sample's trajectory (1st–99th percentile).
    names : list of str
        Trajectory names.
    params : list of dict
        Differentiation settings per trajectory (method, regularisation and how it was chosen).
    presliding_distance : float, optional
        The user's fixed distance [rad] from stops below which samples count as pre-sliding.
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

    def __len__(self) -> int:
        return len(self.tau)

    def sliding_mask(self, fraction: float) -> np.ndarray:
        """Samples farther than ``fraction``·span from every stop (or than the user's distance)."""
        limit = self.presliding_distance if self.presliding_distance is not None else \
            fraction * self.span
        return self.stop_distance > limit

    def subset(self, mask: np.ndarray) -> tuple[Signals, np.ndarray]:
        """Signals and torque of the masked samples (for the static regressions)."""
        x = self.signals
        return Signals(x.q[mask], x.qd[mask], x.qdd[mask]), self.tau[mask]

    def torque(self, model: JointModel) -> list[np.ndarray]:
        """τ̂ [N·m] of ``model`` along every trajectory (LuGre z integrated along each from the
        default start of :func:`sparsefric.lugre.integrate_z`)."""
        x = self.signals
        return [model.torque(x.q[a:b], x.qd[a:b], x.qdd[a:b], h)
                for (a, b), h in zip(self.bounds, self.dt, strict=True)]

    def relative_error(self, model: JointModel) -> float:
        """‖τ − τ̂‖/‖τ‖ of ``model`` over every sample, τ the measured torque."""
        return relative_error(self.tau_raw, np.concatenate(self.torque(model)))


def prepare(trajectories: Sequence[Trajectory], *, method: str = "tv",
            regularization: float | None = None, cutoff_hz: float | None = None,
            presliding_distance: float | None = None) -> Prepared:
    """Differentiate each trajectory on its own and stack the results.

    ``presliding_distance`` [rad] fixes which samples count as sliding for the static fits
    (default: chosen by :func:`choose_window`); see :mod:`sparsefric.regimes`.
    """
    parts, bounds, dts, params = [], [], [], []
    start = 0
    for traj in trajectories:
        d = differentiate(traj.t, traj.q, traj.tau, method=method, qd=traj.qd, qdd=traj.qdd,
                          regularization=regularization, cutoff_hz=cutoff_hz)
        lo, hi = np.percentile(d.q, [1, 99])
        parts.append((d.q, d.qd, d.qdd, d.tau, traj.tau,
                      distance_from_stops(d.q, d.qd, default_stop_speed(d.qd)),
                      np.full(len(traj), max(hi - lo, 1e-12))))
        bounds.append((start, start + len(traj)))
        start += len(traj)
        dts.append(traj.dt)
        params.append({"trajectory": traj.name, "method": d.method, **d.params})
    q, qd, qdd, tau, raw, dist, span = (np.concatenate(c) for c in zip(*parts, strict=True))
    return Prepared(Signals(q, qd, qdd), tau, raw, bounds, dts, dist, span,
                    [t.name for t in trajectories], params, presliding_distance)


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
    """

    method: str = "tv"
    regularization: float | None = None
    cutoff_hz: float | None = None
    presliding_distance: float | None = None
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
                       cutoff_hz=self.cutoff_hz, presliding_distance=self.presliding_distance)
        if remember:
            self._cache.append((key, prep))
        return prep

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
