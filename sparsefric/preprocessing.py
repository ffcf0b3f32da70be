"""Step 0: trajectories → stacked signals for the regressions (differentiation per trajectory)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from sparsefric.data import Trajectory
from sparsefric.differentiation import differentiate
from sparsefric.feature_library import Signals
from sparsefric.regimes import default_stop_speed, distance_from_stops


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


def prepare(trajectories: list[Trajectory], *, method: str = "tv",
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
