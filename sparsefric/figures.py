"""The figures of the identification report (and of the notebook), as SVG.

Each function returns a :class:`~sparsefric.svgplot.Figure`; ``figure.svg()`` is the markup
and, in Jupyter, a figure displays itself. Every axis is labelled with its unit: ``unit`` is
:func:`sparsefric.model.units` of the joint's axis (rad, N·m … or m, N …).

>>> from sparsefric.model import units                                  # doctest: +SKIP
>>> friction_curves({"identified": model}, 2.0, units(model.axis))       # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from sparsefric.data import Trajectory
from sparsefric.lugre import direction_mean_curve
from sparsefric.model import JointModel, StaticBand
from sparsefric.preprocessing import Prepared
from sparsefric.svgplot import COLORS, CYCLE, Figure, Panel
from sparsefric.validation import (
    FreeRunResult,
    friction_from_torque,
    motion_accel_threshold,
    relative_error_series,
)

#: Records longer than this [s] get zoomed views of representative moves.
ZOOM_ABOVE_S = 8.0
#: Lags of the residual autocorrelation [samples].
MAX_LAG = 400
#: Reversals drawn in the pre-sliding view.
MAX_REVERSALS = 12
#: Roles of the models known beforehand (the true model, a published reference).
KNOWN_ROLES = ("truth", "reference")
#: Line style per model role (legend label, colour, dash).
STYLES = {"static": ("static (step 1)", COLORS["static"], "6 3"),
          "dynamic": ("LuGre (final)", COLORS["dynamic"], None),
          "truth": ("truth", COLORS["truth"], "2 2"),
          "reference": ("reference", COLORS["reference"], "8 3 2 3")}
#: Dash of a model's mean of both directions, ½[τ_ss(v) − τ_ss(−v)], drawn beside its curve on
#: the log panel where even viscous powers make the two differ: a constant-velocity point
#: measures that mean (``DESIGN.md`` §87).
MEAN_DASH = "1 2"
#: Colour of a user's own constant-velocity points (the ones from the records are COLORS["cve"]).
CVE_FILE_COLOR = CYCLE[7]


def _style(label: str, k: int = 0) -> tuple[str, str, str | None]:
    """Legend text, colour and dash of a model role or of a compared method."""
    return STYLES.get(label, (label, CYCLE[(k + 3) % len(CYCLE)], "5 2"))


def short(name: str) -> str:
    """A record's name without its folder."""
    return os.path.basename(str(name))


@dataclass
class Evaluation:
    """One data set, differentiated once, with each model's torque prediction.

    Attributes
    ----------
    label : str
        ``train``, ``validate`` or ``test``.
    trajectories : list of Trajectory
    prep : Prepared
        The records as the fit prepared them (q̇, q̈, the torque used).
    predictions : dict of str to list of ndarray
        Model role (``static``, ``dynamic``, ``truth``, a method's name) → τ̂ per record [N·m].
    """

    label: str
    trajectories: list[Trajectory]
    prep: Prepared
    predictions: dict[str, list[np.ndarray]] = field(default_factory=dict)

    def slices(self) -> list[slice]:
        """The samples of each record in the concatenated signals."""
        return [slice(a, b) for a, b in self.prep.bounds]

    def measured(self) -> list[np.ndarray]:
        """The measured torque of each record [N·m]."""
        return [self.prep.tau_raw[s] for s in self.slices()]

    def error(self, role: str) -> float:
        """‖τ − τ̂‖/‖τ‖ over the whole set [-] of one model's predictions."""
        tau = np.concatenate(self.measured())
        diff = tau - np.concatenate(self.predictions[role])
        return float(np.linalg.norm(diff) / np.linalg.norm(tau))

    def final(self) -> str:
        """The role of the identified model: ``dynamic`` if there is one, else ``static``."""
        return "dynamic" if "dynamic" in self.predictions else "static"

    def own_roles(self) -> list[str]:
        """The static model, the known models, then the identified model (drawn last, on
        top); other methods' models are left to the comparison."""
        own = [r for r in ("static", *KNOWN_ROLES) if r in self.predictions and
               r != self.final()]
        return [*own, self.final()]


# ----------------------------------------------------------------------------- step 1
#: Labels of the sweep's rows off the λ path, by their ``variant``
#: (:data:`sparsefric.selection.LINEAR_VISCOUS`, :data:`sparsefric.selection.EXPONENT`,
#: :data:`sparsefric.selection.ADDED`, :data:`sparsefric.selection.VISCOUS_ADDED`,
#: :data:`sparsefric.selection.LINEAR_EXPONENT`, :data:`sparsefric.selection.LINEAR_ADDED`,
#: :data:`sparsefric.selection.LOWER_POWER`, :data:`sparsefric.selection.COULOMB_ADDED`).
VARIANT_LABELS = {"linear viscous": "the same support, viscous q̇ only",
                  "exponent": "the selected support, another Stribeck δ",
                  "stribeck added": "the selected support, a Stribeck term added",
                  "viscous added": "the selected support, viscous q̇ added",
                  "linear viscous, exponent": "the selected support, viscous q̇ only and "
                                              "another Stribeck δ",
                  "linear viscous added": "the same support, viscous q̇ added",
                  "lower viscous power": "the selected support, a viscous power lowered by 2",
                  "coulomb added": "the selected support, the Coulomb level added"}


def selection(table: pd.DataFrame, unit: dict[str, str]) -> Figure:
    """AIC_r and the eliminated terms against the SR3 threshold, the selected one marked; the
    variants off the λ path (:data:`VARIANT_LABELS`) as separate points at their threshold."""
    chosen = table["threshold"].to_numpy(float)[table["selected"].to_numpy(bool)]
    variants = _variants(table)
    extra, table = table[variants], table[~variants]
    thr = table["threshold"].to_numpy(float)
    xlabel = f"SR3 threshold (RMS torque of a term) [{unit['tau']}]"
    a = Panel(xlabel, "AIC_r = AICc − the selected model's [-]", "Information criterion", xlog=True)
    a.line(thr, table["aic_r"], "AIC_r", COLORS["dynamic"]).points(thr, table["aic_r"],
                                                                  color=COLORS["dynamic"])
    for (variant, label), color in zip(VARIANT_LABELS.items(), (COLORS["step1"],
                                                                COLORS["reference"],
                                                                COLORS["cve"], CYCLE[5], CYCLE[6],
                                                                CYCLE[7], CYCLE[9], CYCLE[8]),
                                       strict=True):
        rows = extra[extra["variant"] == variant]
        if len(rows):
            a.points(rows["threshold"].to_numpy(float), rows["aic_r"].to_numpy(float), label,
                     color)
    b = Panel(xlabel, "eliminated candidates [-]", "Sparsity", xlog=True)
    b.line(thr, table["n_eliminated"], "eliminated terms", COLORS["static"])
    b.points(thr, table["n_eliminated"], color=COLORS["static"])
    for p in (a, b):
        if len(chosen):
            p.vline(chosen[0], label="selected")
    return Figure([a, b], "Model selection (step 1)", "selection")


def coefficients(terms: pd.DataFrame) -> Figure:
    """|coefficient| of every candidate in the final model, step 1's beside it."""
    names = list(terms["term"])
    p = Panel("|coefficient| [unit of each term, see the table]", "candidate term", xlog=True,
              categories=names)
    floor = _bar_floor(terms)
    for slot, (col, label, color) in enumerate((
            ("coefficient", "final model", COLORS["dynamic"]),
            ("step1_coefficient", "step 1 (static, selected λ)", COLORS["step1"]))):
        mag = np.abs(terms[col].to_numpy(float))
        p.hbars(np.where(mag > 0, mag, np.nan), label, color, slot, 2)
    p.xlim = (floor, 2 * float(np.nanmax(np.abs(terms[["coefficient", "step1_coefficient"]]
                                                  .to_numpy(float)), initial=1.0)))
    n_final, n_1 = int(terms["active"].sum()), int(terms["step1_active"].sum())
    return Figure([p], f"Candidates: {n_final} terms in the final model, {n_1} after step 1 "
                  f"(of {len(terms)})", "coefficients", cols=1, height=60 + 17 * len(names))


def term_survival(table: pd.DataFrame, terms: pd.DataFrame, unit: dict[str, str]) -> Figure:
    """Which candidate terms are active at each SR3 threshold of the step-1 sweep.

    Parameters
    ----------
    table : DataFrame
        The sweep (``selection_``): ``threshold``, ``selected`` and one coefficient column per
        candidate term (0 where it is eliminated).
    terms : DataFrame
        The candidates (``terms_``), whose ``term`` column names the rows.
    unit : dict
        :func:`sparsefric.model.units` of the axis.
    """
    names = [n for n in terms["term"] if n in table]
    chosen = table["threshold"].to_numpy(float)[table["selected"].to_numpy(bool)]
    table = table[~_variants(table)]
    thr = table["threshold"].to_numpy(float)
    p = Panel(f"SR3 threshold (RMS torque of a term) [{unit['tau']}]", "candidate term",
              xlog=True, categories=names)
    for row, name in enumerate(names):
        on = table[name].to_numpy(float) != 0
        p.points(thr[on], np.full(on.sum(), row), "active" if row == 0 else None,
                 COLORS["dynamic"], size=6.0)
    if len(chosen):
        p.vline(chosen[0], label="selected")
    return Figure([p], "Active candidate terms along the sweep (step 1)", "survival", cols=1,
                  height=60 + 17 * len(names))


def _variants(table: pd.DataFrame) -> np.ndarray:
    """Rows of the sweep that are not on the λ path (:data:`VARIANT_LABELS`)."""
    if "variant" not in table:
        return np.zeros(len(table), dtype=bool)
    return (table["variant"].fillna("") != "").to_numpy()


def _bar_floor(terms: pd.DataFrame) -> float:
    mags = np.abs(terms[["coefficient", "step1_coefficient"]].to_numpy(float)).ravel()
    mags = mags[mags > 0]
    return float(mags.min()) / 3 if mags.size else 1e-6


# ----------------------------------------------------------------------------- friction
def friction_curves(models: Mapping[str, JointModel], v_max: float,
                    unit: dict[str, str], cve: pd.DataFrame | None = None,
                    name: str = "friction",
                    title: str = "Friction–velocity curve (steady state, ż = 0)",
                    band: tuple[str, StaticBand] | None = None,
                    cve_file: pd.DataFrame | None = None) -> Figure:
    """Steady-state friction of each model against velocity, log and linear, CVE points and
    the confidence band of the identified curve.

    Parameters
    ----------
    models : mapping of str to JointModel
        Role (see :data:`STYLES`) or any label → model.
    v_max : float
        Largest speed shown [rad/s or m/s].
    unit : dict
        :func:`sparsefric.model.units` of the axis.
    cve : DataFrame, optional
        Points with velocity, friction and friction_std columns (constant-velocity moves).
    band : (str, StaticBand), optional
        Legend text and pointwise band of τ_ss(q̇) [N·m | N] (``model.uncertainty.
        static_curve``), drawn behind the curves.
    cve_file : DataFrame, optional
        A user's own constant-velocity points (:func:`sparsefric.validation.load_cve`): signed
        velocity and friction as measured, with friction_std; square markers, legend "CVE
        file".
    """
    lo = _lowest_speed(1e-4 * v_max, cve, cve_file)
    v_log, v_lin = np.geomspace(lo, v_max, 300), np.linspace(-v_max, v_max, 601)
    ylabel = f"τ_f [{unit['tau']}]"
    a = Panel(f"q̇ [{unit['qd']}] (positive, log)", ylabel, xlog=True)
    b = Panel(f"q̇ [{unit['qd']}]", ylabel)
    if band is not None:
        label, curve = band
        v, lower, upper = (np.asarray(x, dtype=float) for x in (curve.velocity, curve.lower,
                                                                 curve.upper))
        positive = v > 0
        a.band(v[positive], lower[positive], upper[positive], label)
        b.band(v, lower, upper, label)
    for k, (role, m) in enumerate(models.items()):
        label, color, dash = _style(role, k)
        a.line(v_log, m.static_friction(v_log, outside="ignore"), label, color, dash)
        if any(p % 2 == 0 for p, _ in m.viscous):  # the points measure what both ways share
            a.line(v_log, direction_mean_curve(v_log, m.friction),
                   f"{label}, mean of both directions", color, MEAN_DASH)
        b.line(v_lin, m.static_friction(v_lin, outside="ignore"), label, color, dash)
    _cve_by_speed(a, cve, cve_file)
    if cve is not None and len(cve):
        v, f, err = _points(cve)
        b.errorbar(np.r_[v, -v], np.r_[f, -f], np.r_[err, err], "constant-velocity points")
    if cve_file is not None and len(cve_file):
        b.errorbar(*_points(cve_file), "CVE file", CVE_FILE_COLOR, square=True)
    return Figure([a, b], title, name)


def _lowest_speed(floor: float, *points: pd.DataFrame | None) -> float:
    """The low end [rad/s or m/s] of a log speed axis: ``floor``, or half the slowest CVE
    point."""
    for pts in points:
        if pts is not None and len(pts):
            floor = min(floor, 0.5 * float(np.abs(pts["velocity"]).min()))
    return floor


def _cve_by_speed(panel: Panel, cve: pd.DataFrame | None,
                  cve_file: pd.DataFrame | None) -> None:
    """CVE points on a log speed axis: friction in the direction of motion against |q̇|; the
    records' points as round dots, a user's file (signed, as measured) as squares."""
    if cve is not None and len(cve):
        panel.errorbar(*_points(cve), "constant-velocity points")
    if cve_file is not None and len(cve_file):
        v, f, err = _points(cve_file)
        panel.errorbar(np.abs(v), np.sign(v) * f, err, "CVE file", CVE_FILE_COLOR, square=True)


def _points(cve: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Velocity, friction and its spread (0 without a friction_std column) of CVE points."""
    v, f = cve["velocity"].to_numpy(float), cve["friction"].to_numpy(float)
    err = cve["friction_std"].to_numpy(float) if "friction_std" in cve else np.zeros_like(v)
    return v, f, err


# ----------------------------------------------------------------------------- iterations
def convergence(history: pd.DataFrame, unit: dict[str, str]) -> Figure:
    """E_τ/‖τ‖, ξ_u, σ0, σ1 and Ω_s against the outer iteration; rounds separated."""
    cols = [("error_rel", "E_τ/‖τ‖ [%]", 100.0), ("xi_u", "ξ_u [-]", 1.0),
            ("sigma0", f"σ0 [{unit['stiff']}]", 1.0), ("sigma1", f"σ1 [{unit['damp']}]", 1.0),
            ("omega_s", f"Ω_s [{unit['qd']}]", 1.0)]
    k = np.arange(1, len(history) + 1)
    stage = history["stage"].to_numpy() if "stage" in history else np.zeros(len(history))
    starts = k[1:][stage[1:] != stage[:-1]]
    panels = []
    for col, label, scale in cols:
        p = Panel("outer iteration (all rounds) [-]", label, label.split(" [")[0])
        p.line(k, scale * history[col].to_numpy(float), "fit (training)", COLORS["dynamic"])
        p.points(k, scale * history[col].to_numpy(float), color=COLORS["dynamic"])
        if col == "error_rel" and "prediction_error_rel" in history:
            p.line(k, 100 * history["prediction_error_rel"].to_numpy(float),
                   "prediction (simulated z)", COLORS["static"], "5 3")
        if col == "xi_u":
            p.hline(1.0)
        for x in starts:
            p.vline(x - 0.5, label="new refinement round")
        panels.append(p)
    return Figure(panels, "Outer-loop convergence (winning σ0 start, then refinements)",
                  "convergence", cols=3, height=220)


# ----------------------------------------------------------------------------- torque
def zoom_windows(t: np.ndarray, qd: np.ndarray, residual: np.ndarray
                 ) -> list[tuple[float, float, str]]:
    """Up to two windows (t0, t1 [s], why) of a long record: around the reversal of the move
    with the median speed, and where the torque error is largest. None for a short record."""
    if t[-1] - t[0] <= ZOOM_ABOVE_S:
        return []
    revs = reversals(qd)
    n = len(t)
    width = int(np.clip(2 * np.median(np.diff(revs)) if len(revs) > 2 else n / 8,
                        n / 40, n / 8))
    out = []
    if len(revs):
        peaks = [np.max(np.abs(qd[a:b])) for a, b in zip(np.r_[0, revs[:-1]], revs,
                                                         strict=True)]
        k = revs[int(np.argsort(peaks)[len(peaks) // 2])]
        out.append(_window(t, k, width, "a reversal of a typical move"))
    energy = np.convolve(np.square(np.nan_to_num(residual)), np.ones(width), "same")
    worst = _window(t, int(np.argmax(energy)), width, "the largest torque error")
    if not out or abs(worst[0] - out[0][0]) > 0.5 * (out[0][1] - out[0][0]):
        out.append(worst)
    return out


def _window(t: np.ndarray, centre: int, width: int, why: str) -> tuple[float, float, str]:
    a = int(np.clip(centre - width // 2, 0, max(0, len(t) - width)))
    return float(t[a]), float(t[min(len(t) - 1, a + width)]), why


def reversals(qd: np.ndarray, threshold: float = 0.02) -> np.ndarray:
    """Sample indices where the motion changes direction: the velocity crosses from above
    ``threshold`` × its 99th percentile to below minus that, or back (then the index of the
    zero crossing)."""
    v = threshold * np.percentile(np.abs(qd), 99)
    state = np.where(qd > v, 1, np.where(qd < -v, -1, 0))
    moving = np.flatnonzero(state)
    if len(moving) < 2:
        return np.array([], dtype=int)
    flips = moving[1:][state[moving[1:]] != state[moving[:-1]]]
    prev = moving[:-1][state[moving[1:]] != state[moving[:-1]]]
    return np.array([a + int(np.argmin(np.abs(qd[a:b + 1]))) for a, b in zip(prev, flips,
                                                                              strict=True)])


def torque_fit(data: Evaluation, unit: dict[str, str]) -> Figure:
    """Measured and predicted torque, and the error (τ − τ̂)/max|τ| [%], of every record; a
    long record also in zoomed windows (representative reversal, largest error)."""
    panels = []
    signals = data.prep.signals
    for i, (traj, s) in enumerate(zip(data.trajectories, data.slices(), strict=True)):
        tau = data.prep.tau_raw[s]
        final = data.predictions[data.final()][i]
        windows = zoom_windows(traj.t, signals.qd[s], tau - final)
        main = _torque_panel(data, i, unit, f"{short(traj.name)}: whole record")
        err = Panel("t [s]", "(τ − τ̂)/max|τ| [%]", "error")
        for k, role in enumerate(data.own_roles()):
            label, color, _ = _style(role, k)
            err.line(traj.t, 100 * relative_error_series(tau, data.predictions[role][i]), label,
                     color, None, 1.0)
        for t0, t1, _ in windows:
            main.span(t0, t1)
            err.span(t0, t1)
        panels += [main, err]
        for t0, t1, why in windows:
            keep = (traj.t >= t0) & (traj.t <= t1)
            panels.append(_torque_panel(data, i, unit, f"zoom: {why}", keep))
    return Figure(panels, f"Torque fit — {data.label} data (shaded: the zoomed windows)",
                  f"torque-{data.label}", height=230)


def _torque_panel(data: Evaluation, i: int, unit: dict[str, str], title: str,
                  keep: np.ndarray | None = None) -> Panel:
    """τ and every τ̂ of record ``i`` (the samples ``keep``)."""
    keep = slice(None) if keep is None else keep
    t = data.trajectories[i].t[keep]
    p = Panel("t [s]", f"τ [{unit['tau']}]", title)
    p.line(t, data.measured()[i][keep], "measured", COLORS["measured"], width=1.0)
    for k, role in enumerate(data.own_roles()):
        label, color, dash = _style(role, k)
        p.line(t, data.predictions[role][i][keep], label, color, dash, 1.2)
    return p


def residuals(data: Evaluation, unit: dict[str, str]) -> Figure:
    """Histogram of τ − τ̂ of the identified model with a normal density of the same mean and
    deviation, and its autocorrelation with the 99 % band of white noise (as ``resid``)."""
    res = [tau - pred for tau, pred in zip(data.measured(), data.predictions[data.final()],
                                           strict=True)]
    r = np.concatenate(res)
    edges = np.linspace(*np.percentile(r, [0.1, 99.9]), 61)
    counts, _ = np.histogram(r, edges)
    share = 100 * counts / len(r)
    mid, width = 0.5 * (edges[1:] + edges[:-1]), edges[1] - edges[0]
    a = Panel(f"τ − τ̂ [{unit['tau']}]", "samples per bin [%]", "Histogram")
    a.line(np.repeat(edges, 2)[1:-1], np.repeat(share, 2), "residual", COLORS["dynamic"])
    mu, sd = float(np.mean(r)), float(np.std(r))
    if sd > 0:
        normal = 100 * width * np.exp(-0.5 * ((mid - mu) / sd) ** 2) / (sd * np.sqrt(2 * np.pi))
        a.line(mid, normal, "normal, same mean and deviation", COLORS["static"], "5 3")
    lags, acf = _autocorrelation(res)
    dt = float(np.median(data.prep.dt))
    b = Panel("lag [s]", "autocorrelation [-]", "Autocorrelation")
    b.line(lags * dt, acf, "residual autocorrelation", COLORS["dynamic"])
    band = 2.576 / np.sqrt(len(r))
    b.hline(band).hline(-band).hline(0.0)
    return Figure([a, b], f"Residuals of the identified model — {data.label} data "
                  f"(mean {mu:.3g}, deviation {sd:.3g} {unit['tau']}; dashed: 99 % band of "
                  "white noise)", f"residuals-{data.label}")


def _autocorrelation(parts: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Normalised autocorrelation at lags 0…:data:`MAX_LAG` [samples], pooled over records."""
    lag = min(MAX_LAG, min(len(p) for p in parts) // 4)
    acc = np.zeros(lag + 1)
    for p in parts:
        x = p - p.mean()
        f = np.fft.rfft(x, 2 * len(x))
        acc += np.fft.irfft(f * np.conj(f))[: lag + 1]
    return np.arange(lag + 1), acc / acc[0] if acc[0] > 0 else acc


# ----------------------------------------------------------------------------- free run
def free_run(runs: Sequence[FreeRunResult], names: Sequence[str], unit: dict[str, str],
             restart_s: float | None) -> Figure:
    """Free-run q and q̇ against the measurement, restarts marked."""
    panels = []
    for r, name in zip(runs, names, strict=True):
        for meas, sim, what, err in ((r.q, r.q_sim, f"q [{unit['q']}]",
                                      f"RMS error {r.rms_q:.3g} {unit['q']}"),
                                     (r.qd, r.qd_sim, f"q̇ [{unit['qd']}]",
                                      f"RMS error {r.rms_qd:.3g} {unit['qd']}")):
            p = Panel("t [s]", what, f"{short(name)}: {err}")
            p.line(r.t, meas, "measured", COLORS["measured"], width=1.2)
            p.line(r.t, sim, "free run of the identified model", COLORS["dynamic"], "5 2", 1.2)
            panels.append(p)
    return Figure(panels, "Free-run simulation driven by the measured torque "
                  f"({_restarts(restart_s)})", "free-run", height=220)


def _restarts(restart_s: float | None) -> str:
    return (f"restarted from the measured state every {restart_s:g} s" if restart_s else
            "one run from the start")


def free_run_errors(runs: Mapping[str, Sequence[FreeRunResult]], names: Sequence[str],
                    unit: dict[str, str], restart_s: float | None) -> Figure:
    """The paper's Fig. 14: per record, the free-run relative errors (q − q_sim)/max|q| and
    (q̇ − q̇_sim)/max|q̇| [%] against time, every model on the same axes.

    Parameters
    ----------
    runs : mapping of str to sequence of FreeRunResult
        Legend label (``model A``, ``model B``) → the free runs of that model, one per record
        of ``names``, in the same order.
    names : sequence of str
        The records.
    unit : dict
        :func:`sparsefric.model.units` of the axis (the relative errors have none; the titles
        quote each model's RMS errors in it).
    restart_s : float or None
        Restart period [s] of the runs (for the title).
    """
    panels = []
    for i, name in enumerate(names):
        for sym, attr, u in (("q", "q", unit["q"]), ("q̇", "qd", unit["qd"])):
            rms = ", ".join(f"{label} {getattr(r[i], 'rms_' + attr):.3g}"
                            for label, r in runs.items())
            p = Panel("t [s]", f"({sym} − {sym}_sim)/max|{sym}| [%]",
                      f"{short(name)}: {sym} (RMS error {rms} {u})")
            for k, (label, r) in enumerate(runs.items()):
                measured, simulated = getattr(r[i], attr), getattr(r[i], attr + "_sim")
                p.line(r[i].t, 100 * relative_error_series(measured, simulated), label,
                       CYCLE[k % len(CYCLE)], None, 1.0)
            panels.append(p)
    return Figure(panels, "Free-run relative error of each model, driven by the measured "
                  f"torque ({_restarts(restart_s)})", "free-run-errors", height=220)


# ----------------------------------------------------------------------------- friction branches
#: Legend text and colour of the accelerating and decelerating branches.
BRANCH_STYLES = {"accelerating": ("dynamic model, accelerating (|q̇| rising)", CYCLE[2]),
                 "decelerating": ("dynamic model, decelerating (|q̇| falling)", CYCLE[4])}


def motion_phases(qd: np.ndarray, qdd: np.ndarray, accel_threshold: float | None = None
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Masks of the accelerating and the decelerating samples of a motion.

    |q̇| rises where q̇ q̈ > 0 (½ d(q̇²)/dt) and falls where q̇ q̈ < 0. Samples with |q̈| at or
    below ``accel_threshold`` (constant velocity, rest) are in neither.

    Parameters
    ----------
    qd : ndarray
        Velocity [rad/s or m/s].
    qdd : ndarray
        Acceleration [rad/s² or m/s²], same length.
    accel_threshold : float, optional
        [rad/s² or m/s²]; default :func:`sparsefric.validation.motion_accel_threshold`. (The
        CVE's threshold, :func:`sparsefric.validation.default_accel_threshold`, may rise to a
        quarter of the acceleration scale where q̈ is noisy; the branches keep every sample
        that visibly accelerates.)
    """
    qd, qdd = np.asarray(qd, dtype=float), np.asarray(qdd, dtype=float)
    if accel_threshold is None:
        accel_threshold = motion_accel_threshold(qdd)
    moving = np.abs(qdd) > accel_threshold
    rate = qd * qdd
    return moving & (rate > 0), moving & (rate < 0)


def _branch_lines(panel: Panel, model: JointModel, data: Evaluation, lo: float) -> None:
    """sign(q̇)·τ_f of ``model`` driven by the velocity of each record of ``data`` (z
    integrated along it) against |q̇| ≥ ``lo``: one line per motion phase, broken elsewhere."""
    x = data.prep.signals
    for traj, s in zip(data.trajectories, data.slices(), strict=True):
        qd = x.qd[s]
        f = np.sign(qd) * model.friction_torque(qd, traj.dt, outside="ignore")
        shown = np.abs(qd) >= lo
        for (label, color), mask in zip(BRANCH_STYLES.values(), motion_phases(qd, x.qdd[s]),
                                        strict=True):
            panel.line(*_runs_apart(mask & shown, np.abs(qd), f), label, color, None, 1.2)


def _runs_apart(keep: np.ndarray, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The samples ``keep`` of (x, y), a NaN between runs (a line breaks there; the rest is
    left out, so a long record is thinned only by what it shows)."""
    idx = np.flatnonzero(keep)
    breaks = np.flatnonzero(np.diff(idx) > 1) + 1
    return (np.insert(x[idx].astype(float), breaks, np.nan),
            np.insert(y[idx].astype(float), breaks, np.nan))


def friction_branches(models: Mapping[str, tuple[JointModel, JointModel]], data: Evaluation,
                      unit: dict[str, str], cve: pd.DataFrame | None = None,
                      cve_file: pd.DataFrame | None = None) -> Figure:
    """The paper's Fig. 15: the friction of each dynamic model along the records, split into
    accelerating and decelerating motion, against the CVE points, the model's own steady-state
    curve (ż = 0) and the step-1 static curve; one panel per model.

    Parameters
    ----------
    models : mapping of str to (JointModel, JointModel)
        Panel title (``LuGre (final)``, ``model A`` …) → (the dynamic model, its step-1 static
        model).
    data : Evaluation
        The records whose velocity drives the models (the paper uses a training record).
    unit : dict
        :func:`sparsefric.model.units` of the axis.
    cve, cve_file : DataFrame, optional
        Constant-velocity points of the records and of a user's file, as in
        :func:`friction_curves`.

    Notes
    -----
    The friction is drawn in the direction of motion, sign(q̇)·τ_f, against |q̇| on a log axis
    from 10⁻³ of the largest speed (or half the slowest CVE point) up; see
    :func:`motion_phases` for the split.
    """
    hi = float(np.max(np.abs(data.prep.signals.qd)))
    lo = _lowest_speed(1e-3 * hi, cve, cve_file)
    v = np.geomspace(lo, hi, 300)
    panels = []
    for title, (dynamic, static) in models.items():
        p = Panel(f"|q̇| [{unit['qd']}] (log)", f"sign(q̇)·τ_f [{unit['tau']}]", title,
                  xlog=True)
        _branch_lines(p, dynamic, data, lo)
        p.line(v, static.static_friction(v, outside="ignore"), *_style("static"))
        p.line(v, dynamic.static_friction(v, outside="ignore"), "dynamic model with ż = 0",
               COLORS["dynamic"])
        _cve_by_speed(p, cve, cve_file)
        panels.append(p)
    return Figure(panels, "Friction of the dynamic model along the records, accelerating and "
                  f"decelerating — {data.label} data", f"branches-{data.label}",
                  cols=min(2, len(panels)), height=320)


# ----------------------------------------------------------------------------- friction loops
def friction_loops(models: Mapping[str, JointModel], data: Evaluation,
                   unit: dict[str, str]) -> Figure:
    """Around reversals: friction against velocity (hysteresis) and against the displacement
    since the last reversal (the pre-sliding loop), measured (τ − rigid body of the identified
    model) and predicted by each LuGre model of ``models`` (``dynamic`` first: it sizes the
    pre-sliding window, 4 × break-away/σ0)."""
    final = models["dynamic"]
    reach = 4 * final.breakaway_torque() / final.sigma0
    scale, dunit = _small_unit(reach, unit["q"])
    hyst = Panel(f"q̇ [{unit['qd']}]", f"τ_f [{unit['tau']}]", "Hysteresis (|q̇| small)")
    pre = Panel(f"q − q(last reversal) [{dunit}]", f"τ_f [{unit['tau']}]",
                "Pre-sliding loop")
    x = data.prep.signals
    for traj, s in zip(data.trajectories, data.slices(), strict=True):
        q, qd = x.q[s], x.qd[s]
        tau_f = friction_from_torque(final, q, x.qdd[s], data.prep.tau[s])
        low = np.abs(qd) < 0.1 * np.percentile(np.abs(qd), 99)
        segments = _after_reversals(q, qd, reach)
        moved = [scale * (q[seg] - q[seg.start]) for seg in segments]
        hyst.points(*_every(qd[low], tau_f[low]), "measured", COLORS["measured"], 2.0)
        for d, seg in zip(moved, segments, strict=True):
            pre.points(d, tau_f[seg], "measured", COLORS["measured"], 2.0)
        for k, (role, m) in enumerate(models.items()):
            style = _style(role, k)
            f = m.friction_torque(qd, traj.dt, outside="ignore")
            hyst.line(np.where(low, qd, np.nan), np.where(low, f, np.nan), *style, 1.2)
            for d, seg in zip(moved, segments, strict=True):
                pre.line(d, f[seg], *style, 1.2)
    return Figure([hyst, pre], f"Friction around reversals — {data.label} data (measured: τ "
                  "less the identified rigid body)", f"loops-{data.label}", height=300)


def _small_unit(span: float, base: str) -> tuple[float, str]:
    """A factor and unit for small displacements: mrad or µrad, mm or µm."""
    for factor, prefix in ((1.0, ""), (1e3, "m"), (1e6, "µ")):
        if span * factor >= 0.5 or prefix == "µ":
            return factor, f"{prefix}{base}"
    return 1.0, base  # pragma: no cover


def _every(x: np.ndarray, y: np.ndarray, most: int = 2500) -> tuple[np.ndarray, np.ndarray]:
    step = max(1, int(np.ceil(len(x) / most)))
    return x[::step], y[::step]


def _after_reversals(q: np.ndarray, qd: np.ndarray, reach: float) -> list[slice]:
    """The samples from each reversal until the joint has moved ``reach`` away from it (or
    the next reversal); at most :data:`MAX_REVERSALS`, spread over the record."""
    revs = reversals(qd)
    if len(revs) > MAX_REVERSALS:
        revs = revs[np.linspace(0, len(revs) - 1, MAX_REVERSALS).round().astype(int)]
    out = []
    for a in revs:
        far = np.flatnonzero(np.abs(q[a:] - q[a]) > reach)
        b = a + (int(far[0]) if len(far) else len(q) - a)
        if b - a > 2:
            out.append(slice(int(a), int(b)))
    return out


# ----------------------------------------------------------------------------- comparison
def comparison(data: Evaluation, roles: Sequence[str], unit: dict[str, str]) -> Figure:
    """The torque of each method on one record's zoomed window (or whole record), the
    measurement behind, and their error against time."""
    i = int(np.argmax([len(t) for t in data.trajectories]))
    traj, tau = data.trajectories[i], data.measured()[i]
    qd = data.prep.signals.qd[data.slices()[i]]
    final = data.predictions[data.final()][i]
    windows = zoom_windows(traj.t, qd, tau - final)
    keep = ((traj.t >= windows[0][0]) & (traj.t <= windows[0][1]) if windows
            else np.ones(len(traj.t), bool))
    a = Panel("t [s]", f"τ [{unit['tau']}]", short(traj.name))
    a.line(traj.t[keep], tau[keep], "measured", COLORS["measured"], width=1.0)
    b = Panel("t [s]", f"τ − τ̂ [{unit['tau']}]", "error")
    for k, role in enumerate(roles):
        label, color, dash = _style(role, k)
        a.line(traj.t[keep], data.predictions[role][i][keep], label, color, dash, 1.3)
        b.line(traj.t[keep], (tau - data.predictions[role][i])[keep], label, color, None, 1.0)
    return Figure([a, b], f"Comparison of the methods — {data.label} data", "comparison")


# ----------------------------------------------------------------------------- fleet
def fleet_friction(models: Mapping[str, JointModel], v_max: float, axis: str) -> Figure:
    """The steady-state friction curves of the joints of one axis type, overlaid."""
    from sparsefric.model import units

    fig = friction_curves(models, v_max, units(axis), name=f"fleet-friction-{axis}",
                          title=f"Friction–velocity curves of the {axis} joints (steady state)")
    for p in fig.panels:  # every joint a solid line of its own colour
        for k, s in enumerate(p.series):
            s.color, s.dash = CYCLE[k % len(CYCLE)], None
    return fig


def fleet_strips(joints: pd.DataFrame, parameters: Mapping[str, str],
                 flags: Mapping[str, Sequence[bool]], axis: str) -> Figure:
    """One strip per friction parameter: each joint a dot, those that stand out in red, the
    fleet's median dashed.

    Parameters
    ----------
    joints : DataFrame
        Rows of the batch summary table of one axis type (columns joint and the parameters).
    parameters : mapping of str to str
        Column → label.
    flags : mapping of str to sequence of bool
        Column → whether each joint's value stands out.
    axis : str
        ``revolute`` or ``prismatic`` (the units).
    """
    from sparsefric.model import units

    u = units(axis)
    unit = {"breakaway": u["tau"], "coulomb": u["tau"], "viscous": u["damp"],
            "sigma0": u["stiff"]}
    names = [str(j) for j in joints["joint"]]
    panels = []
    for col, label in parameters.items():
        values = joints[col].to_numpy(float)
        odd = np.asarray(flags[col], dtype=bool)
        p = Panel(f"{label} [{unit.get(col, '-')}]", "joint", categories=names)
        rows = np.arange(len(names))
        p.points(values[~odd], rows[~odd], "joint", COLORS["dynamic"], 7.0)
        p.points(values[odd], rows[odd], "stands out", COLORS["cve"], 9.0)
        if np.isfinite(values).any():
            p.vline(float(np.nanmedian(values)), label="median of the joints")
        panels.append(p)
    return Figure(panels, f"Friction parameters of the {axis} joints", f"fleet-strips-{axis}",
                  cols=2, height=90 + 18 * len(names))
