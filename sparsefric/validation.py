"""Validation of an identified joint model (ALGORITHM.md §5): pure functions on arrays and models.

* torque prediction metrics on held-out trajectories (:func:`torque_metrics`,
  :func:`metrics_table`, :func:`relative_error_series`);
* free-run simulation driven by the measured torque, optionally restarted from the measured state
  (:func:`free_run_compare`);
* constant-velocity experiments (CVE): friction–velocity points from the constant-velocity parts
  of back-and-forth moves (:func:`cve_pairs`, :func:`cve_points`, :func:`cve_from_trajectories`);
* a user's own constant-velocity results from a file (:func:`load_cve`, :func:`cve_table`) and
  the score of a model's static curve against them (:func:`cve_score`);
* hysteresis of the friction torque around stops and reversals (:func:`hysteresis`).

Units: rad, rad/s, rad/s², N·m, s (m, m/s, N for a prismatic axis).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from sparsefric.data import Trajectory, read_table
from sparsefric.differentiation import differentiate
from sparsefric.errors import DataError
from sparsefric.lugre import integrate_z
from sparsefric.model import JointModel
from sparsefric.regimes import default_stop_speed, runs

# --------------------------------------------------------------------------- torque metrics


@dataclass(frozen=True)
class TorqueMetrics:
    """Torque prediction errors of one trajectory.

    Attributes
    ----------
    relative_rms : float
        ‖τ − τ̂‖/‖τ‖ [-].
    nrmse : float
        RMS(τ − τ̂)/(max τ − min τ) [-].
    rms : float
        RMS(τ − τ̂) [N·m].
    max_abs : float
        max|τ − τ̂| [N·m].
    max_relative : float
        max|τ − τ̂|/max|τ| [-] (the peak of the paper's relative error series).
    n : int
        Number of samples.
    """

    relative_rms: float
    nrmse: float
    rms: float
    max_abs: float
    max_relative: float
    n: int


def relative_error(tau: np.ndarray, tau_hat: np.ndarray) -> float:
    """‖τ − τ̂‖/‖τ‖ [-] over all samples of the measured ``tau`` and the predicted ``tau_hat``
    [N·m, same length]: the torque error every result quotes."""
    tau, tau_hat = _pair(tau, tau_hat)
    return float(np.linalg.norm(tau - tau_hat) / np.linalg.norm(tau))


def relative_error_series(tau: np.ndarray, tau_hat: np.ndarray) -> np.ndarray:
    """The paper's relative error (τ_j − τ̂_j)/max|τ| [-], one value per sample.

    Parameters
    ----------
    tau : ndarray
        Measured torque [N·m].
    tau_hat : ndarray
        Predicted torque [N·m], same length.
    """
    tau, tau_hat = _pair(tau, tau_hat)
    scale = float(np.max(np.abs(tau)))
    return (tau - tau_hat) / scale if scale > 0 else np.full_like(tau, np.nan)


def torque_metrics(tau: np.ndarray, tau_hat: np.ndarray) -> TorqueMetrics:
    """Relative RMS error, NRMSE, RMS and maximum absolute error of a torque prediction.

    Parameters
    ----------
    tau : ndarray
        Measured torque [N·m].
    tau_hat : ndarray
        Predicted torque [N·m], same length.
    """
    tau, tau_hat = _pair(tau, tau_hat)
    err = tau - tau_hat
    rms = float(np.sqrt(np.mean(err**2)))
    norm = float(np.linalg.norm(tau))
    span = float(np.ptp(tau))
    peak = float(np.max(np.abs(tau)))
    max_abs = float(np.max(np.abs(err)))
    return TorqueMetrics(
        relative_rms=float(np.linalg.norm(err)) / norm if norm > 0 else np.nan,
        nrmse=rms / span if span > 0 else np.nan,
        rms=rms,
        max_abs=max_abs,
        max_relative=max_abs / peak if peak > 0 else np.nan,
        n=int(tau.size),
    )


def metrics_table(names: Sequence[str], tau: Sequence[np.ndarray],
                  predictions: Mapping[str, Sequence[np.ndarray]],
                  dataset: str = "") -> pd.DataFrame:
    """Tidy table of :class:`TorqueMetrics`, one row per trajectory and model.

    Parameters
    ----------
    names : sequence of str
        Trajectory names.
    tau : sequence of ndarray
        Measured torque [N·m] of each trajectory.
    predictions : mapping of str to sequence of ndarray
        Model label (e.g. ``"static"``, ``"dynamic"``) → predicted torque of each trajectory.
    dataset : str
        Label of the data set (``"train"``, ``"test"``...), copied into every row.

    Returns
    -------
    DataFrame
        Columns dataset, trajectory, model, relative_rms, nrmse, rms, max_abs, max_relative, n.
    """
    rows = []
    for label, preds in predictions.items():
        for name, y, y_hat in zip(names, tau, preds, strict=True):
            rows.append({"dataset": dataset, "trajectory": name, "model": label,
                         **vars(torque_metrics(y, y_hat))})
    return pd.DataFrame(rows, columns=["dataset", "trajectory", "model", "relative_rms", "nrmse",
                                       "rms", "max_abs", "max_relative", "n"])


def _pair(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(a, dtype=float).ravel()
    b = np.asarray(b, dtype=float).ravel()
    if a.shape != b.shape:
        raise ValueError(f"measured and predicted torque differ in length ({a.size} vs {b.size})")
    if a.size == 0:
        raise ValueError("empty torque record")
    return a, b


# --------------------------------------------------------------------------- free run


@dataclass(frozen=True)
class FreeRunResult:
    """Free-run simulation against the measurement.

    Attributes
    ----------
    t : ndarray
        Time [s].
    q, qd : ndarray
        Measured position [rad] and velocity [rad/s] (the velocity as given or differentiated).
    q_sim, qd_sim : ndarray
        Simulated position [rad] and velocity [rad/s].
    restarts : ndarray of int
        Sample indices where the simulation was (re)started from the measured state.
    rms_q, rms_qd : float
        RMS errors of q [rad] and q̇ [rad/s].
    max_abs_q : float
        Largest |q − q_sim| [rad].
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    q_sim: np.ndarray
    qd_sim: np.ndarray
    restarts: np.ndarray
    rms_q: float
    rms_qd: float
    max_abs_q: float


def restart_indices(n: int, dt: float, restart_s: float | None) -> np.ndarray:
    """Start indices of the simulation segments: 0, then every ``restart_s`` [s] (None: only 0)."""
    if restart_s is None or restart_s <= 0:
        return np.array([0])
    step = max(int(round(restart_s / dt)), 1)
    return np.arange(0, n, step)


def free_run_compare(model: JointModel, t: np.ndarray, q: np.ndarray, tau: np.ndarray,
                     qd: np.ndarray | None = None, *, restart_s: float | None = None,
                     substeps: int = 10) -> FreeRunResult:
    """Integrate ``model`` driven by the measured torque and compare with the measured motion.

    Parameters
    ----------
    model : JointModel
        The identified (or true) joint; a static model is simulated with a stiff bristle.
    t : ndarray
        Time [s], uniform.
    q : ndarray
        Measured position [rad].
    tau : ndarray
        Measured torque [N·m]; sample k is applied during [t_k, t_k+1).
    qd : ndarray, optional
        Measured or estimated velocity [rad/s] (default: Butterworth differentiation of q).
    restart_s : float, optional
        Restart the simulation from the measured state every ``restart_s`` seconds; closed-loop
        recordings drift in open loop. ``None``: one run from the start.
    substeps : int
        Integration sub-steps per sample.

    Notes
    -----
    The measured state at a restart is (q, q̇) and the bristle deflection z the model builds up
    along the measured q̇ (from the default start of `lugre.integrate_z`). Restarting with a
    relaxed bristle instead would lose the friction σ0 z for a few g/σ0 of travel and offset the
    velocity by ~g/σ0·g/I.
    """
    t = np.asarray(t, dtype=float)
    q = np.asarray(q, dtype=float)
    tau = np.asarray(tau, dtype=float)
    dt = float((t[-1] - t[0]) / (len(t) - 1))
    if qd is None:
        qd = differentiate(t, q, tau, method="butterworth").qd
    qd = np.asarray(qd, dtype=float)
    # deferred: `predict` imports this module for relative_error and never simulates (the
    # simulator brings a numba kernel and the excitation code)
    from sparsefric.simulate import as_lugre, free_run

    sim_model = as_lugre(model)
    z = integrate_z(qd, dt, sim_model.friction)[0]
    starts = restart_indices(len(t), dt, restart_s)
    q_sim, qd_sim = np.empty_like(q), np.empty_like(q)
    for a, b in zip(starts, np.r_[starts[1:], len(t)], strict=True):
        q_sim[a:b], qd_sim[a:b] = free_run(sim_model, tau[a:b], float(q[a]), float(qd[a]),
                                           float(z[a]), dt, substeps)
    eq = q - q_sim
    return FreeRunResult(t, q, qd, q_sim, qd_sim, starts,
                         rms_q=float(np.sqrt(np.mean(eq**2))),
                         rms_qd=float(np.sqrt(np.mean((qd - qd_sim) ** 2))),
                         max_abs_q=float(np.max(np.abs(eq))))


# --------------------------------------------------------------------------- CVE


#: Shortest travel of a constant-velocity run [share of the record's stroke, the 1st–99th
#: percentile of q]. A steady move carries the joint across much of the stroke (a short slow
#: move of a fixed-seed zoo file over 9 %); a joint held near rest creeps, slower than any move
#: but above the stop speed, over a few µrad to a mrad, with the "friction" (τ⁺ − τ⁻)/2 of a
#: bristle holding still (−90 … −120 % off the curve, zoo joints at 0.00002–0.005 rad/s).
MIN_RUN_TRAVEL = 0.01


#: Pre-sliding deflections g(0)/σ0 the bristles slide after a move starts before a sample counts
#: as steady friction. From the other side's deflection the friction nears its steady level as
#: 1 − 2e^{−s σ0/g}: 90 % at 3, and the pass beyond averages closer. On the zoo joint of
#: :func:`sparsefric.steps.checks.cve_of` the 0.03 rad/s point is 17.14, 18.82, 19.05 and
#: 19.11 N·m for 0, 2, 3 and 4 (truth 19.29); at 5 the two directions' settled samples no
#: longer share positions and it is gone.
SETTLE_DEFLECTIONS = 3.0


def settle_distance(model: JointModel | None) -> float:
    """Travel [rad | m] after the start of a move within which a LuGre ``model``'s friction is
    still rising to its steady level: :data:`SETTLE_DEFLECTIONS` · g(0)/σ0 (0 for a static
    model or none)."""
    if model is None or model.kind != "lugre" or not model.sigma0 > 0:
        return 0.0
    return SETTLE_DEFLECTIONS * max(model.g0, 0.0) / model.sigma0


#: Multiple of the robust noise level σ̂ of q̈ that the default acceleration threshold admits at
#: least (a Gaussian sample exceeds 3σ in 0.3 % of cases).
ACCEL_NOISE_FACTOR = 3.0
#: Share of the record's acceleration scale (99.9th percentile of |q̈| while moving) that the
#: noise floor may raise the default acceleration threshold to: where |q̈| ≤ 0.25·max|q̈| on a
#: sinusoid the speed is within 3 % of its peak.
ACCEL_NOISE_CAP = 0.25


def motion_accel_threshold(qdd: np.ndarray) -> float:
    """5 % of the 99th percentile of |q̈| [rad/s²]: below it a sample does not visibly
    accelerate where at least 1 % of the samples do (0 for no samples)."""
    a = np.abs(np.asarray(qdd, dtype=float))
    return 0.05 * float(np.percentile(a, 99)) if a.size else 0.0


def default_accel_threshold(qd: np.ndarray, qdd: np.ndarray,
                            stop_speed: float | None = None) -> float:
    """Largest |q̈| [rad/s²] of a constant-velocity sample: :func:`motion_accel_threshold`,
    raised to :data:`ACCEL_NOISE_FACTOR` σ̂ (σ̂ = 1.4826·MAD of q̈ over the moving samples, the
    differentiation noise where the joint mostly slides steadily) but at most to
    :data:`ACCEL_NOISE_CAP` of the 99.9th percentile of |q̈| while moving (|q̇| above
    ``stop_speed`` [rad/s], default :func:`~sparsefric.regimes.default_stop_speed`).

    The percentile alone presumes that 1 % of the samples accelerate. Slow moves started and
    stopped briskly accelerate for a few samples each: a fixed-seed zoo validation record at
    0.065 rad/s (2 kHz, 29.6 rad/s² commanded) put its 99th percentile in the noise, the
    threshold at 0.12 rad/s² below the noise (median |q̈| 0.15 rad/s² in the steady parts), and
    no run of the 4.9 s record counted as steady: the record had no CVE point, so the checks
    and the pooling of slower validation records never saw its low-speed level (``DESIGN.md``
    §85).
    """
    threshold = motion_accel_threshold(qdd)
    moving = np.abs(qd) > (default_stop_speed(qd) if stop_speed is None else stop_speed)
    if moving.sum() < 10:
        return threshold
    centred = qdd[moving] - np.median(qdd[moving])
    sigma = 1.4826 * float(np.median(np.abs(centred)))
    cap = ACCEL_NOISE_CAP * float(np.percentile(np.abs(qdd[moving]), 99.9))
    return max(threshold, min(ACCEL_NOISE_FACTOR * sigma, cap))


def constant_velocity_mask(qd: np.ndarray, qdd: np.ndarray, *,
                           accel_threshold: float | None = None,
                           speed_threshold: float | None = None,
                           trim: int = 10, q: np.ndarray | None = None,
                           settle: float = 0.0) -> np.ndarray:
    """Samples of the constant-velocity parts: |q̈| small, the joint not stopped, away from run
    edges, and (with ``q`` and ``settle``) at least ``settle`` [rad] from where the move
    started (:func:`travel_since_start`): at a steady speed the friction is steady only once
    the bristles have slid a few pre-sliding deflections since the reversal.

    The speed floor is the stop speed of :mod:`sparsefric.regimes`, so that every steady level
    of a record that moves at several speeds counts, down to the slowest (a floor at 20 % of
    the fastest speed kept only the fast levels of a one-file recording); the creep of a joint
    held near rest, slower still, travels too little to count (:data:`MIN_RUN_TRAVEL`).

    Parameters
    ----------
    qd, qdd : ndarray
        Velocity [rad/s] and acceleration [rad/s²].
    accel_threshold : float, optional
        Largest |q̈| [rad/s²] (default: :func:`default_accel_threshold` over the samples
        faster than the speed threshold).
    speed_threshold : float, optional
        Smallest |q̇| [rad/s] (default: the stop speed, 10⁻³ of the 99th percentile of |q̇|,
        :func:`~sparsefric.regimes.default_stop_speed`).
    trim : int
        Samples dropped at both ends of every run (filter transients at the corners).
    q : ndarray, optional
        Position [rad], for ``settle``.
    settle : float
        Travel [rad] since the start of the move below which samples are left out.
    """
    qd = np.asarray(qd, dtype=float)
    qdd = np.asarray(qdd, dtype=float)
    v_thr = default_stop_speed(qd) if speed_threshold is None else speed_threshold
    a_thr = default_accel_threshold(qd, qdd, v_thr) if accel_threshold is None \
        else accel_threshold
    mask = (np.abs(qdd) <= a_thr) & (np.abs(qd) > v_thr)
    if q is not None and settle > 0:
        mask &= travel_since_start(np.asarray(q, dtype=float), qd, v_thr) >= settle
    out = np.zeros_like(mask)
    for a, b in runs(mask):
        if b - a > 2 * trim:
            out[a + trim:b - trim] = True
    return out


def travel_since_start(q: np.ndarray, qd: np.ndarray, stop_speed: float) -> np.ndarray:
    """|q − q₀| [rad] at every sample, q₀ the position where the current move started: the last
    sample where the joint was stopped (|q̇| ≤ ``stop_speed``) or moved the other way."""
    direction = np.sign(qd) * (np.abs(qd) > stop_speed)
    start = np.r_[True, direction[1:] != direction[:-1]]
    first = np.maximum.accumulate(np.where(start, np.arange(len(q)), 0))
    return np.abs(q - q[first])


def _velocity_levels(speeds: np.ndarray, rel_tol: float) -> np.ndarray:
    """Group run speeds [rad/s] into levels: a label per run, runs within ``rel_tol`` share one."""
    order = np.argsort(speeds)
    labels = np.empty(len(speeds), dtype=int)
    level, ref = -1, -np.inf
    for i in order:
        if speeds[i] > ref * (1 + rel_tol):
            level, ref = level + 1, speeds[i]
        labels[i] = level
    return labels


def cve_pairs(q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, tau: np.ndarray, *,  # noqa: PLR0913
              accel_threshold: float | None = None, speed_threshold: float | None = None,
              bin_width: float | None = None, level_tol: float = 0.25, min_samples: int = 5,
              trim: int = 10, settle: float = 0.0) -> pd.DataFrame:
    """Forward/backward constant-velocity samples paired at matched positions (per position bin).

    In each position bin of each velocity level, τ⁺ and τ⁻ are the mean torques of the forward
    and backward samples; at constant velocity τ± = gravity(q) ± τ_f(v), so
    τ_f = (τ⁺ − τ⁻)/2 and gravity = (τ⁺ + τ⁻)/2.

    Parameters
    ----------
    q, qd, qdd, tau : ndarray
        Position [rad], velocity [rad/s], acceleration [rad/s²], torque [N·m] of one record.
    accel_threshold, speed_threshold, trim, settle
        See :func:`constant_velocity_mask`.
    bin_width : float, optional
        Position bin [rad] (default: 1/40 of the position span of the constant-velocity samples).
    level_tol : float
        Relative speed difference below which constant-velocity runs belong to one level.
    min_samples : int
        Smallest number of samples per direction in a bin. A run counts if it travels
        :data:`MIN_RUN_TRAVEL` of the record's stroke.

    Returns
    -------
    DataFrame
        One row per bin: level, position [rad], v_plus, v_minus [rad/s] (mean speeds),
        tau_plus, tau_minus, friction, gravity [N·m], n_plus, n_minus.
    """
    q, qd, qdd, tau = (np.asarray(x, dtype=float) for x in (q, qd, qdd, tau))
    stroke = float(np.subtract(*np.percentile(q, [99, 1]))) if len(q) else 0.0
    mask = constant_velocity_mask(qd, qdd, accel_threshold=accel_threshold,
                                  speed_threshold=speed_threshold, trim=trim, q=q, settle=settle)
    steady = [(a, b) for a, b in runs(mask) if abs(q[b - 1] - q[a]) >= MIN_RUN_TRAVEL * stroke]
    cols = ["level", "position", "v_plus", "v_minus", "tau_plus", "tau_minus", "friction",
            "gravity", "n_plus", "n_minus"]
    if not steady:
        return pd.DataFrame(columns=cols)
    speeds = np.array([np.mean(np.abs(qd[a:b])) for a, b in steady])
    labels = _velocity_levels(speeds, level_tol)
    rows = []
    for level in range(labels.max() + 1):
        idx = np.concatenate([np.arange(a, b) for (a, b), lab in zip(steady, labels, strict=True)
                              if lab == level])
        rows.extend(_pair_bins(level, q[idx], qd[idx], tau[idx], bin_width, min_samples))
    return pd.DataFrame(rows, columns=cols)


def _pair_bins(level: int, q: np.ndarray, qd: np.ndarray, tau: np.ndarray,
               bin_width: float | None, min_samples: int) -> list[dict]:
    fwd, bwd = qd > 0, qd < 0
    if not fwd.any() or not bwd.any():
        return []
    lo = max(q[fwd].min(), q[bwd].min())
    hi = min(q[fwd].max(), q[bwd].max())
    if hi <= lo:
        return []
    width = bin_width or (np.ptp(q) / 40 if np.ptp(q) > 0 else hi - lo)
    edges = np.arange(lo, hi + width, width)
    b = np.digitize(q, edges) - 1
    rows = []
    for k in range(len(edges) - 1):
        p, m = fwd & (b == k), bwd & (b == k)
        if p.sum() < min_samples or m.sum() < min_samples:
            continue
        tp, tm = float(tau[p].mean()), float(tau[m].mean())
        rows.append({"level": level, "position": 0.5 * (edges[k] + edges[k + 1]),
                     "v_plus": float(qd[p].mean()), "v_minus": float(-qd[m].mean()),
                     "tau_plus": tp, "tau_minus": tm, "friction": 0.5 * (tp - tm),
                     "gravity": 0.5 * (tp + tm), "n_plus": int(p.sum()), "n_minus": int(m.sum())})
    return rows


def cve_points(pairs: pd.DataFrame, trajectory: str = "") -> pd.DataFrame:
    """One friction–velocity point per velocity level from :func:`cve_pairs` bins.

    Returns
    -------
    DataFrame
        trajectory, level, velocity [rad/s] (mean of forward and backward speed), friction [N·m]
        (mean over bins), friction_std [N·m] (spread over bins), n_bins, n_samples.
    """
    cols = CVE_POINT_COLUMNS
    rows = []
    for level, g in pairs.groupby("level", sort=True):
        rows.append({"trajectory": trajectory, "level": int(level),
                     "velocity": float(0.5 * (g["v_plus"].mean() + g["v_minus"].mean())),
                     "friction": float(g["friction"].mean()),
                     "friction_std": float(g["friction"].std(ddof=1)) if len(g) > 1 else 0.0,
                     "n_bins": len(g), "n_samples": int((g["n_plus"] + g["n_minus"]).sum())})
    return pd.DataFrame(rows, columns=cols)


def cve_from_trajectories(trajectories: Sequence[Trajectory], *, method: str = "butterworth",
                          inertia: float = 0.0, regularization: float | None = None,
                          cutoff_hz: float | None = None, **kwargs) -> pd.DataFrame:
    """CVE points of several trajectories (q̇, q̈ by :func:`differentiate` with ``method`` and
    its ``regularization`` (TV weight κ) or ``cutoff_hz`` [Hz], default automatic).

    ``inertia`` [kg·m² | kg]: the torque is taken net of the inertia force inertia·q̈.
    ``kwargs`` go to :func:`cve_pairs`. Trajectories without forward and backward
    constant-velocity parts give no point.
    """
    frames = []
    for traj in trajectories:
        d = differentiate(traj.t, traj.q, traj.tau, method=method, qd=traj.qd, qdd=traj.qdd,
                          regularization=regularization, cutoff_hz=cutoff_hz,
                          denoise_torque=False)  # the pairs take the measured torque
        pts = cve_points(cve_pairs(d.q, d.qd, d.qdd, traj.tau - inertia * d.qdd, **kwargs),
                         traj.name)
        if len(pts):
            frames.append(pts)
    if not frames:
        return cve_points(pd.DataFrame(columns=["level"]))
    return pd.concat(frames, ignore_index=True).sort_values("velocity", ignore_index=True)


# --------------------------------------------------------------------------- CVE file
#: Columns of a constant-velocity results file; ``std`` (the spread of each point) is optional.
CVE_FILE_COLUMNS = ("velocity", "friction", "std")
#: Columns of :func:`cve_points` (and of :func:`cve_table`).
CVE_POINT_COLUMNS = ["trajectory", "level", "velocity", "friction", "friction_std", "n_bins",
                     "n_samples"]


def cve_table(table: pd.DataFrame, source: str, *, velocity_scale: float = 1.0,
              lines: Sequence[int] | None = None) -> pd.DataFrame:
    """Friction–velocity points of a constant-velocity experiment, checked, as
    :func:`cve_points` rows.

    Parameters
    ----------
    table : DataFrame
        Columns velocity [rad/s or m/s], friction [N·m or N] and optionally std [N·m or N], one
        row per constant-velocity run. A run backwards has a negative velocity and friction.
    source : str
        The file's name: the ``trajectory`` of every point and the start of every error.
    velocity_scale : float
        Factor to rad/s (π/180 for a file in deg/s).
    lines : sequence of int, optional
        The line of each row in the file, for messages (:func:`~sparsefric.data.read_table`
        gives them as its index); by default row ``i`` is on line ``i + 2``, below a header.

    Returns
    -------
    DataFrame
        trajectory (``source``), level (row), velocity, friction, friction_std (std, else 0),
        n_bins and n_samples (1: a row is one point).

    Raises
    ------
    DataError
        Naming the file, the column and the line at fault.
    """
    for col in CVE_FILE_COLUMNS[:2]:
        if col not in table:
            raise DataError(f"{source}: no column '{col}' (a constant-velocity file has the "
                            f"columns velocity, friction and optionally std)")
    if table.empty:
        raise DataError(f"{source}: no rows")
    rows = np.arange(len(table)) + 2 if lines is None else np.asarray(lines)
    cols = {c: _finite_column(table, c, source, rows) for c in CVE_FILE_COLUMNS if c in table}
    v, f = cols["velocity"], cols["friction"]
    std = cols.get("std", np.zeros_like(v))
    _check_row(source, rows, "velocity", v == 0, "zero (friction at standstill is not a "
               "constant-velocity point)")
    _check_row(source, rows, "friction", np.sign(f) != np.sign(v), "zero or opposite in sign to "
               "the velocity (friction has the sign of the motion)")
    _check_row(source, rows, "std", std < 0, "negative")
    return pd.DataFrame({"trajectory": source, "level": np.arange(len(v)),
                         "velocity": velocity_scale * v, "friction": f, "friction_std": std,
                         "n_bins": 1, "n_samples": 1},
                        columns=CVE_POINT_COLUMNS)


def _finite_column(table: pd.DataFrame, col: str, source: str, lines: np.ndarray
                   ) -> np.ndarray:
    values = pd.to_numeric(table[col], errors="coerce").to_numpy(float)
    _check_row(source, lines, col, ~np.isfinite(values), "not a finite number")
    return values


def _check_row(source: str, lines: np.ndarray, col: str, bad: np.ndarray, problem: str
               ) -> None:
    """Raise for the first row where ``bad`` holds (``lines``: the line of each row)."""
    if np.any(bad):
        raise DataError(f"{source}: column '{col}', line {lines[np.flatnonzero(bad)[0]]}: "
                        f"{problem}")


def load_cve(path: str | Path, *, angle_unit: str | None = "rad") -> pd.DataFrame:
    """Read a constant-velocity results file (CSV or Parquet) into :func:`cve_table` points.

    ``angle_unit`` ``"deg"``: the velocity column is in deg/s (converted to rad/s).
    """
    path = Path(path)
    scale = np.pi / 180.0 if angle_unit == "deg" else 1.0
    table = read_table(path)
    return cve_table(table, str(path), velocity_scale=scale, lines=table.index)


@dataclass(frozen=True)
class CveScore:
    """A static curve against constant-velocity points.

    Attributes
    ----------
    rms_relative : float
        RMS(τ_ss(v) − τ_f)/RMS(τ_f) over the points [-].
    worst_velocity, worst_friction, worst_model : float
        The point the curve misses most: velocity [rad/s], measured and model friction [N·m].
    worst_relative : float
        (model − measured)/|measured| at that point [-].
    n : int
        Number of points.
    """

    rms_relative: float
    worst_velocity: float
    worst_friction: float
    worst_model: float
    worst_relative: float
    n: int


def cve_score(model: JointModel, points: pd.DataFrame) -> CveScore:
    """Score ``model``'s steady-state curve against CVE ``points`` (velocity [rad/s], friction
    [N·m] columns, e.g. :func:`cve_table`), also beyond the model's validity range."""
    v = points["velocity"].to_numpy(float)
    f = points["friction"].to_numpy(float)
    off = model.static_friction(v, outside="ignore") - f
    k = int(np.argmax(np.abs(off)))
    return CveScore(rms_relative=float(np.sqrt(np.mean(off**2)) / np.sqrt(np.mean(f**2))),
                    worst_velocity=float(v[k]), worst_friction=float(f[k]),
                    worst_model=float(f[k] + off[k]), worst_relative=float(off[k] / abs(f[k])),
                    n=int(v.size))


# --------------------------------------------------------------------------- hysteresis


def friction_from_torque(model: JointModel, q: np.ndarray, qdd: np.ndarray,
                         tau: np.ndarray) -> np.ndarray:
    """Measured friction τ_f = τ − (I q̈ + a_c cos q + a_s sin q + o) [N·m]."""
    return np.asarray(tau, dtype=float) - model.rigid_body_torque(q, qdd)


def hysteresis(qd: np.ndarray, qdd: np.ndarray, tau_f: np.ndarray, *,
               v_window: float | None = None) -> pd.DataFrame:
    """Friction against velocity around stops and reversals, split into branches.

    Parameters
    ----------
    qd, qdd : ndarray
        Velocity [rad/s] and acceleration [rad/s²].
    tau_f : ndarray
        Friction torque [N·m] (measured by :func:`friction_from_torque`, or a model's).
    v_window : float, optional
        Half-width [rad/s] of the velocity window around zero (default: 10 % of the 99th
        percentile of |q̇|).

    Returns
    -------
    DataFrame
        One row per sample inside the window: event (index of the low-speed episode), index
        (sample), qd [rad/s], tau_f [N·m], branch ("accelerating" where |q̇| increases,
        i.e. q̇ q̈ > 0, else "decelerating").
    """
    qd = np.asarray(qd, dtype=float)
    qdd = np.asarray(qdd, dtype=float)
    tau_f = np.asarray(tau_f, dtype=float)
    v = 0.1 * np.percentile(np.abs(qd), 99) if v_window is None else v_window
    rows = []
    for event, (a, b) in enumerate(runs(np.abs(qd) < v)):
        idx = np.arange(a, b)
        rows.append(pd.DataFrame({
            "event": event, "index": idx, "qd": qd[idx], "tau_f": tau_f[idx],
            "branch": np.where(qd[idx] * qdd[idx] > 0, "accelerating", "decelerating")}))
    if not rows:
        return pd.DataFrame(columns=["event", "index", "qd", "tau_f", "branch"])
    return pd.concat(rows, ignore_index=True)
