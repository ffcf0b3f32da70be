"""Motion regimes: where the joint slides, and how far it is from the last or next stop.

LuGre's bristle state relaxes to its steady state exponentially in *travelled distance*, with the
length g(q̇)/σ0 (dz/dq = 1 − σ0 z sign(q̇)/g). A static friction model is therefore valid only on
samples that are several such lengths away from a stop or a velocity reversal, at any speed. The
static step (ALGORITHM.md §2) and the first outer iteration are fitted on those sliding samples;
the LuGre iterations use every sample.
"""

from __future__ import annotations

import numpy as np


def runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """``(start, stop)`` sample ranges of the runs of True in ``mask``, in order."""
    edges = np.flatnonzero(np.diff(np.r_[0, np.asarray(mask, dtype=np.int8), 0]))
    return list(zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True))


def distance_from_stops(q: np.ndarray, qd: np.ndarray, v_stop: float) -> np.ndarray:
    """Travelled distance [rad] to the nearest stop or reversal (the last one or the next).

    Parameters
    ----------
    q : ndarray
        Position [rad] of one trajectory.
    qd : ndarray
        Velocity [rad/s].
    v_stop : float
        Speed [rad/s] at or below which the joint counts as stopped.

    Returns
    -------
    ndarray
        0 at stops; otherwise min(distance since the segment's start, distance to its end), where a
        segment is a run of samples moving in one direction faster than ``v_stop``.
    """
    direction = np.where(np.abs(qd) > v_stop, np.sign(qd), 0.0)
    step = np.abs(np.diff(q, prepend=q[0]))
    new_segment = np.r_[True, direction[1:] != direction[:-1]]
    seg = np.cumsum(new_segment) - 1
    travelled = np.cumsum(step)
    start = travelled[np.flatnonzero(new_segment)][seg] - step[np.flatnonzero(new_segment)][seg]
    ends = np.r_[np.flatnonzero(new_segment)[1:] - 1, len(q) - 1]
    end = travelled[ends][seg]
    out = np.minimum(travelled - start, end - travelled)
    out[direction == 0] = 0.0
    return out


def default_stop_speed(qd: np.ndarray) -> float:
    """Speed [rad/s] below which the joint counts as stopped: 10⁻³ of the 99th-percentile speed."""
    return 1e-3 * float(np.percentile(np.abs(qd), 99))
