"""The identification report: one self-contained ``report.html`` and a ``summary.md``.

>>> write_report(est.result_, "out/", train, validate=val, test=test)      # doctest: +SKIP

``report.html`` embeds every figure as a base64 PNG (matplotlib, Agg backend) and uses no external
resource, so it opens offline. Both files are written atomically. :func:`summary_dict` gives the
same key results as a JSON-serialisable dictionary (the CLI's ``--json``).
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import io
import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from sparsefric.atomic import write_text  # noqa: E402
from sparsefric.data import Trajectory  # noqa: E402
from sparsefric.errors import SparsefricError  # noqa: E402
from sparsefric.model import JointModel, parameter_table, units  # noqa: E402
from sparsefric.preprocessing import Prepared  # noqa: E402
from sparsefric.result import IdentificationResult  # noqa: E402
from sparsefric.tables import fmt, html_table, markdown_table  # noqa: E402
from sparsefric.validation import (  # noqa: E402
    FreeRunResult,
    cve_from_trajectories,
    free_run_compare,
    friction_from_torque,
    hysteresis,
    metrics_table,
    relative_error_series,
)

#: Largest number of points drawn per line (longer records are decimated for the figures).
MAX_POINTS = 3000
DPI = 80
COLORS = {"measured": "0.25", "static": "tab:orange", "dynamic": "tab:blue", "truth": "tab:green",
          "cve": "tab:red"}


# --------------------------------------------------------------------------- evaluation


@dataclass
class _Dataset:
    """One data set prepared once, with both models' predictions."""

    label: str
    trajectories: list[Trajectory]
    prep: Prepared
    predictions: dict[str, list[np.ndarray]] = field(default_factory=dict)

    def slices(self) -> list[slice]:
        return [slice(a, b) for a, b in self.prep.bounds]

    def measured(self) -> list[np.ndarray]:
        return [self.prep.tau_raw[s] for s in self.slices()]


def _evaluate(result: IdentificationResult, label: str,
              trajectories: Sequence[Trajectory] | None) -> _Dataset | None:
    if not trajectories:
        return None
    prep = result.prepare(list(trajectories))
    preds = {"static": prep.torque(result.static_model)}
    if result.model.kind == "lugre":
        preds["dynamic"] = prep.torque(result.model)
    return _Dataset(label, list(trajectories), prep, preds)


def _datasets(result: IdentificationResult, train, validate, test) -> list[_Dataset]:
    out = [_evaluate(result, lab, trajs)
           for lab, trajs in (("train", train), ("validate", validate), ("test", test))]
    return [d for d in out if d is not None]


def _metrics(datasets: list[_Dataset]) -> pd.DataFrame:
    frames = [metrics_table(d.prep.names, d.measured(), d.predictions, d.label) for d in datasets]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _cve(cve: pd.DataFrame | None, datasets: list[_Dataset]) -> pd.DataFrame:
    if cve is not None:
        return cve
    trajs = [t for d in datasets for t in d.trajectories]
    try:
        return cve_from_trajectories(trajs)
    except (SparsefricError, ValueError):
        return pd.DataFrame(columns=["trajectory", "velocity", "friction", "friction_std"])


def _refinement_note(result: IdentificationResult) -> str:
    """One paragraph on the re-selection with the dynamic columns and any warnings."""
    out = []
    refinement = result.lugre.refinement if result.lugre is not None else None
    if refinement is not None and refinement.table is not None:
        table = refinement.table.table
        row = table[table.selected].iloc[0]
        kept = (f"replaced the first LuGre model after {len(refinement.runs)} round(s), each "
                "from the last kept model" if refinement.refined else
                "did not predict better and was not kept")
        out.append(f'<p class="note">Refinement: with the converged bristle state, the sweep over '
                   f"every friction candidate (dynamic columns σ0 z/g·[1, e^…] and ż) selected "
                   f"{int(row.n_active)} terms at λ = {fmt(row['lambda'])}; the re-iterated "
                   f"model {kept}. The parameter table shows the final model.</p>")
    for text in result.warnings:
        out.append(f'<p class="note"><b>Warning:</b> {html.escape(text)}</p>')
    return "\n".join(out)


def _free_runs(model: JointModel, data: _Dataset | None,
               restart_s: float | None) -> list[FreeRunResult]:
    if data is None or not model.inertia > 0:  # no inertia term: nothing to integrate
        return []
    out = []
    for traj, s in zip(data.trajectories, data.slices(), strict=True):
        out.append(free_run_compare(model, traj.t, traj.q, traj.tau,
                                    data.prep.signals.qd[s], restart_s=restart_s))
    return out


# --------------------------------------------------------------------------- units


def _models(result: IdentificationResult, truth: JointModel | None) -> dict[str, JointModel]:
    models = {"static (step 1)": result.static_model}
    if result.model.kind == "lugre":
        models["dynamic (LuGre)"] = result.model
    if truth is not None:
        models["truth"] = truth
    return models


# --------------------------------------------------------------------------- figures


def _png(fig: plt.Figure) -> str:
    """The figure as a base64 PNG string (the figure is closed)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _decimate(*arrays: np.ndarray) -> list[np.ndarray]:
    step = max(1, int(math.ceil(len(arrays[0]) / MAX_POINTS)))
    return [np.asarray(a)[::step] for a in arrays]


def fig_selection(selection: pd.DataFrame) -> plt.Figure:
    """AIC_r and the number of eliminated terms against λ (log axis), the selected λ marked."""
    fig, ax = plt.subplots(figsize=(7, 3.2))
    lam = selection["lambda"].to_numpy(dtype=float)
    ax.semilogx(lam, selection["aic_r"], "o-", color="tab:blue", label="AIC_r")
    ax.set_xlabel("λ")
    ax.set_ylabel("AIC_r = AICc − min AICc", color="tab:blue")
    ax2 = ax.twinx()
    ax2.semilogx(lam, selection["n_eliminated"], "s--", color="tab:orange", label="eliminated")
    ax2.set_ylabel("eliminated terms", color="tab:orange")
    sel = selection["selected"].to_numpy(dtype=bool)
    if sel.any():
        ax.axvline(lam[sel][0], color="k", lw=0.8, ls=":")
        ax.text(lam[sel][0], 0.97, " selected", transform=ax.get_xaxis_transform(), ha="left",
                va="top", fontsize=8)
    ax.set_title("Model selection (step 1)")
    ax.grid(True, which="both", alpha=0.3)
    return fig


def fig_coefficients(terms: pd.DataFrame) -> plt.Figure:
    """|coefficient| of every candidate at the selected λ; selected terms filled."""
    fig, ax = plt.subplots(figsize=(7, 3.2))
    x = np.arange(len(terms))
    mag = np.abs(terms["coefficient"].to_numpy(dtype=float))
    active = terms["active"].to_numpy(dtype=bool)
    floor = np.min(mag[mag > 0]) / 10 if np.any(mag > 0) else 1e-6
    colors = np.where(active, "tab:blue", "0.8")
    ax.bar(x, np.where(mag > 0, mag, floor), color=colors, edgecolor="k", linewidth=0.4)
    ax.set_yscale("log")
    ax.set_xticks(x, terms["term"], rotation=70, fontsize=7, ha="right")
    ax.set_ylabel("|coefficient| (SI units)")
    ax.set_title(f"Candidates: {int(active.sum())} of {len(terms)} selected (blue)")
    ax.grid(True, axis="y", alpha=0.3)
    return fig


def fig_friction(static: JointModel, dynamic: JointModel | None, cve: pd.DataFrame,
                 truth: JointModel | None, v_max: float, unit: dict[str, str]) -> plt.Figure:
    """Friction–velocity curves: static model, dynamic model with ż = 0, CVE points, truth."""
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    lo = 1e-4 * v_max
    if len(cve):
        lo = min(lo, 0.5 * float(cve["velocity"].min()))
    v_log = np.geomspace(lo, v_max, 400)
    v_lin = np.linspace(-v_max, v_max, 801)
    curves = [("static (step 1)", static, COLORS["static"], "--")]
    if dynamic is not None:
        curves.append(("dynamic, ż = 0", dynamic, COLORS["dynamic"], "-"))
    if truth is not None:
        curves.append(("truth", truth, COLORS["truth"], ":"))
    for label, m, c, ls in curves:
        axes[0].semilogx(v_log, m.static_friction(v_log), ls, color=c, label=label)
        axes[1].plot(v_lin, m.static_friction(v_lin), ls, color=c, label=label)
    if len(cve):
        v, f = cve["velocity"].to_numpy(float), cve["friction"].to_numpy(float)
        err = cve["friction_std"].to_numpy(float) if "friction_std" in cve else None
        axes[0].errorbar(v, f, yerr=err, fmt="o", color=COLORS["cve"], ms=4, capsize=2,
                         label="CVE")
        axes[1].errorbar(np.r_[v, -v], np.r_[f, -f], fmt="o", color=COLORS["cve"], ms=3)
    axes[0].set_xlabel(f"q̇ [{unit['qd']}] (positive)")
    axes[1].set_xlabel(f"q̇ [{unit['qd']}]")
    for ax in axes:
        ax.set_ylabel(f"τ_f steady state [{unit['tau']}]")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle("Friction–velocity curve")
    fig.tight_layout()
    return fig


def fig_convergence(history: pd.DataFrame) -> plt.Figure:
    """E_τ/‖τ‖, ξ_u, σ0, σ1 and Ω_s against the outer iteration of the winning σ0 start and
    then of each refinement round (dashed lines where a round starts)."""
    cols = [("error_rel", "E_τ/‖τ‖"), ("xi_u", "ξ_u"), ("sigma0", "σ0"), ("sigma1", "σ1"),
            ("omega_s", "Ω_s")]
    fig, axes = plt.subplots(1, len(cols), figsize=(11, 2.6))
    k = np.arange(1, len(history) + 1)
    stage = history["stage"].to_numpy() if "stage" in history else np.zeros(len(history))
    starts = k[1:][stage[1:] != stage[:-1]]
    for ax, (col, label) in zip(axes, cols, strict=True):
        for x in starts:
            ax.axvline(x - 0.5, color="0.5", lw=0.8, ls="--")
        ax.plot(k, history[col], "o-", ms=3)
        if col == "error_rel" and "prediction_error_rel" in history:
            ax.plot(k, history["prediction_error_rel"], "s--", ms=3, label="prediction")
            ax.legend(fontsize=7)
        if col == "xi_u":
            ax.axhline(1.0, color="k", lw=0.6, ls=":")
        ax.set_title(label, fontsize=9)
        ax.set_xlabel("outer iteration" + (", then refinements" if len(starts) else ""),
                      fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(True, alpha=0.3)
    fig.tight_layout()
    return fig


def fig_torque(data: _Dataset, unit: dict[str, str]) -> plt.Figure:
    """Measured and predicted torque, and the relative error (τ − τ̂)/max|τ|, per trajectory."""
    n = len(data.trajectories)
    fig, axes = plt.subplots(n, 2, figsize=(11, 2.4 * n), squeeze=False)
    for i, (traj, s) in enumerate(zip(data.trajectories, data.slices(), strict=True)):
        tau = data.prep.tau_raw[s]
        t, y = _decimate(traj.t, tau)
        axes[i, 0].plot(t, y, color=COLORS["measured"], lw=0.8, label="measured")
        for label, preds in data.predictions.items():
            t, yh = _decimate(traj.t, preds[i])
            axes[i, 0].plot(t, yh, color=COLORS[label], lw=0.8, label=label)
            t, e = _decimate(traj.t, 100 * relative_error_series(tau, preds[i]))
            axes[i, 1].plot(t, e, color=COLORS[label], lw=0.6, label=label)
        axes[i, 0].set_ylabel(f"τ [{unit['tau']}]")
        axes[i, 1].set_ylabel("(τ − τ̂)/max|τ| [%]")
        axes[i, 0].set_title(_short(traj.name), fontsize=9)
        for ax in axes[i]:
            ax.grid(True, alpha=0.3)
    axes[0, 0].legend(fontsize=7, ncol=3)
    axes[0, 1].legend(fontsize=7)
    for ax in axes[-1]:
        ax.set_xlabel("t [s]")
    fig.suptitle(f"Torque fit — {data.label} data")
    fig.tight_layout()
    return fig


def fig_free_run(runs: list[FreeRunResult], names: list[str], unit: dict[str, str],
                 restart_s: float | None) -> plt.Figure:
    """Free-run q and q̇ against the measurement, restarts marked."""
    n = len(runs)
    fig, axes = plt.subplots(n, 2, figsize=(11, 2.4 * n), squeeze=False)
    for i, (r, name) in enumerate(zip(runs, names, strict=True)):
        for j, (meas, sim, lab) in enumerate(((r.q, r.q_sim, f"q [{unit['q']}]"),
                                              (r.qd, r.qd_sim, f"q̇ [{unit['qd']}]"))):
            t, y, ys = _decimate(r.t, meas, sim)
            axes[i, j].plot(t, y, color=COLORS["measured"], lw=1.0, label="measured")
            axes[i, j].plot(t, ys, color=COLORS["dynamic"], lw=0.8, ls="--", label="free run")
            axes[i, j].set_ylabel(lab)
            axes[i, j].grid(True, alpha=0.3)
        axes[i, 0].set_title(f"{_short(name)}: RMS q error {r.rms_q:.3g} {unit['q']}",
                             fontsize=9)
        axes[i, 1].set_title(f"RMS q̇ error {r.rms_qd:.3g} {unit['qd']}", fontsize=9)
    axes[0, 0].legend(fontsize=7)
    for ax in axes[-1]:
        ax.set_xlabel("t [s]")
    every = f"restarted from the measured state every {restart_s:g} s" if restart_s else \
        "one run from the start"
    fig.suptitle(f"Free-run simulation driven by the measured torque ({every})")
    fig.tight_layout()
    return fig


def fig_hysteresis(model: JointModel, data: _Dataset, unit: dict[str, str]) -> plt.Figure:
    """τ_f against q̇ around stops and reversals: measured (τ − rigid body) and the LuGre model."""
    n = len(data.trajectories)
    fig, axes = plt.subplots(1, n, figsize=(4.2 * n, 3.4), squeeze=False)
    x = data.prep.signals
    for i, (traj, s) in enumerate(zip(data.trajectories, data.slices(), strict=True)):
        ax = axes[0, i]
        qd, qdd = x.qd[s], x.qdd[s]
        tau_f = friction_from_torque(model, x.q[s], qdd, data.prep.tau[s])
        loops = hysteresis(qd, qdd, tau_f)
        model_f = model.friction_torque(qd, traj.dt)
        for branch, c in (("accelerating", "tab:purple"), ("decelerating", "tab:olive")):
            b = loops[loops["branch"] == branch]
            v, f = _decimate(b["qd"].to_numpy(), b["tau_f"].to_numpy())
            ax.plot(v, f, ".", ms=1.5, color=c, label=f"measured, {branch}")
        for k, (_, ev) in enumerate(loops.groupby("event")):
            idx = ev["index"].to_numpy()
            ax.plot(qd[idx], model_f[idx], "-", lw=0.6, color="k", alpha=0.6,
                    label="LuGre model" if k == 0 else None)
        ax.set_xlabel(f"q̇ [{unit['qd']}]")
        ax.set_ylabel(f"τ_f [{unit['tau']}]")
        ax.set_title(_short(traj.name), fontsize=9)
        ax.grid(True, alpha=0.3)
    axes[0, 0].legend(fontsize=7, markerscale=5)
    fig.suptitle(f"Friction hysteresis around reversals — {data.label} data")
    fig.tight_layout()
    return fig


def _short(name: str) -> str:
    return os.path.basename(str(name))


# --------------------------------------------------------------------------- summary


def _jsonable(obj: Any) -> Any:
    """Convert numpy scalars/arrays and non-finite floats (→ None) for JSON."""
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [_jsonable(v) for v in obj.tolist()]
    if isinstance(obj, np.bool_ | bool):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, float | np.floating):
        return float(obj) if math.isfinite(obj) else None
    if obj is None or isinstance(obj, str | int):
        return obj
    return str(obj)


def _records(df: pd.DataFrame) -> list[dict]:
    return [] if df is None or df.empty else df.to_dict(orient="records")


def _sigma0_init(result: IdentificationResult) -> float | None:
    """The initial σ0 of the kept LuGre run, None without one."""
    return result.lugre.best.sigma0_init if result.lugre is not None else None


def _selected_row(result: IdentificationResult) -> dict:
    sel = result.selection
    row = sel[sel["selected"]].iloc[0]
    keys = ["threshold", "lambda", "n_active", "n_eliminated", "omega_s", "aicc"]
    return {k: row[k] for k in keys if k in row}


def _summary(result: IdentificationResult, datasets: list[_Dataset], metrics: pd.DataFrame,
             cve: pd.DataFrame, truth: JointModel | None) -> dict:
    out = {
        "format": "sparsefric-summary/1",
        "converged": bool(result.converged),
        "convergence_reason": result.convergence_reason,
        "sigma0_init": _sigma0_init(result),
        "model": result.model.to_dict(),
        "static_model": result.static_model.to_dict(),
        "selection": {**_selected_row(result), "n_candidates": len(result.terms),
                      "aic_parts": result.sweep.parts,
                      "aic_source": result.sweep.validation_source},
        "refined": result.refined,
        "warnings": result.warnings,
        "terms": _records(result.terms),
        "history": _records(result.winning_history),
        "preprocessing": _records(result.preprocessing),
        "data": {d.label: [{"name": n, "samples": b - a, "dt": h}
                           for n, (a, b), h in zip(d.prep.names, d.prep.bounds, d.prep.dt,
                                                   strict=True)]
                 for d in datasets},
        "metrics": _records(metrics),
        "cve": _records(cve),
    }
    if truth is not None:
        out["truth"] = truth.to_dict()
    return _jsonable(out)


def summary_dict(result: IdentificationResult, train: Sequence[Trajectory] | None = None,
                 validate: Sequence[Trajectory] | None = None,
                 test: Sequence[Trajectory] | None = None, cve: pd.DataFrame | None = None, *,
                 truth: JointModel | None = None) -> dict:
    """Key results of an identification as a JSON-ready dict.

    Parameters
    ----------
    result : IdentificationResult
        A fitted estimator's ``result_``.
    train, validate, test : list of Trajectory, optional
        Data sets to score (torque metrics of the static and dynamic models per trajectory).
    cve : DataFrame, optional
        CVE points (:func:`sparsefric.validation.cve_from_trajectories`); default: none (not
        computed here).
    truth : JointModel, optional
        A known true model, copied into the summary.

    Returns
    -------
    dict
        format, converged, convergence_reason, sigma0_init, model, static_model, selection,
        terms, history (winning σ0 start), preprocessing, data, metrics, cve [, truth];
        non-finite numbers become ``None``.
    """
    datasets = _datasets(result, train, validate, test)
    cve = cve if cve is not None else pd.DataFrame()
    return _summary(result, datasets, _metrics(datasets), cve, truth)


# --------------------------------------------------------------------------- HTML / Markdown

_CSS = """
body{font-family:sans-serif;max-width:1150px;margin:1em auto;padding:0 1em;color:#222}
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:1.6em}
table{border-collapse:collapse;font-size:0.85em;margin:0.5em 0}
td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}
th{background:#f0f0f0}td:first-child,th:first-child{text-align:left}
img{max-width:100%;display:block;margin:0.5em 0}
.ok{color:#060;font-weight:bold}.bad{color:#a00;font-weight:bold}
tr.sel td{background:#e6f0ff;font-weight:bold}
.note{color:#555;font-size:0.9em}
"""


def _html_table(df: pd.DataFrame, highlight: Sequence[bool] | None = None) -> str:
    return html_table(list(df.columns), df.itertuples(index=False), highlight)


def _md_table(df: pd.DataFrame) -> str:
    return markdown_table(list(df.columns), df.itertuples(index=False))


def _img(b64: str, alt: str) -> str:
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{b64}">'


def _preprocessing_table(result: IdentificationResult) -> pd.DataFrame:
    df = result.preprocessing.copy()
    for c in df.columns:
        df[c] = [_short(v) if c == "trajectory" else
                 (json.dumps(_jsonable(v)) if isinstance(v, dict | list) else v) for v in df[c]]
    return df


def _data_table(datasets: list[_Dataset], unit: dict[str, str]) -> pd.DataFrame:
    rows = []
    for d in datasets:
        for traj, s in zip(d.trajectories, d.slices(), strict=True):
            qd = d.prep.signals.qd[s]
            rows.append({"set": d.label, "trajectory": _short(traj.name), "samples": len(traj),
                         "duration [s]": traj.t[-1] - traj.t[0], "dt [s]": traj.dt,
                         f"max |q̇| [{unit['qd']}]": float(np.max(np.abs(qd))),
                         f"max |τ| [{unit['tau']}]": float(np.max(np.abs(traj.tau)))})
    return pd.DataFrame(rows)


def _status_html(result: IdentificationResult) -> str:
    cls = "ok" if result.converged else "bad"
    word = "converged" if result.converged else "NOT converged"
    s0 = _sigma0_init(result)
    start = f"; winning initial σ0 = {s0:g}" if s0 is not None else ""
    return (f'<p><span class="{cls}">{word}</span>: {html.escape(str(result.convergence_reason))}'
            f"{html.escape(start)}</p>")


def _build(result: IdentificationResult, train, validate, test, cve, truth, restart_s,
           title) -> tuple[str, str, dict]:
    unit = units(result.model.axis)
    datasets = _datasets(result, train, validate, test)
    by = {d.label: d for d in datasets}
    metrics = _metrics(datasets)
    cve = _cve(cve, datasets)
    summary = _summary(result, datasets, metrics, cve, truth)
    params = parameter_table(_models(result, truth))
    dynamic = result.model if result.model.kind == "lugre" else None
    v_max = max((float(np.max(np.abs(d.prep.signals.qd))) for d in datasets), default=1.0)
    held_out = by.get("test") or by.get("validate") or by.get("train")
    runs = _free_runs(result.model, held_out, restart_s)
    hist = result.winning_history
    sel = result.selection

    parts = [f"<h1>{html.escape(title)}</h1>",
             f'<p class="note">Generated {_dt.datetime.now().isoformat(timespec="seconds")} by '
             f"sparsefric (Mahmoudkhani et al. 2023: SINDy-SR3 static structure + iterative "
             f"LuGre identification). Axis: {result.model.axis}.</p>",
             "<h2>Status</h2>", _status_html(result),
             "<h2>Parameters</h2>", _html_table(params),
             "<h2>Data and preprocessing</h2>", _html_table(_data_table(datasets, unit)),
             '<p class="note">Differentiation settings per trajectory (the regularisation used '
             "and the rule that chose it):</p>", _html_table(_preprocessing_table(result)),
             "<h2>Model selection (step 1)</h2>",
             f"<p>Selected λ = {fmt(summary['selection'].get('lambda'))}: "
             f"{summary['selection'].get('n_active')} of {len(result.terms)} candidates kept; "
             f"AICc scored on {summary['selection'].get('aic_source')} data in "
             f"{summary['selection'].get('aic_parts')} parts.</p>",
             _img(_png(fig_selection(sel)), "AIC_r and eliminated terms against lambda"),
             _refinement_note(result),
             _html_table(sel[[c for c in ("threshold", "lambda", "n_active", "n_eliminated",
                                          "omega_s", "train_error", "aic_r", "converged")
                              if c in sel]], sel["selected"].to_numpy(bool)),
             "<h3>Candidate coefficients at the selected λ</h3>",
             _img(_png(fig_coefficients(result.terms)), "coefficients of every candidate"),
             _html_table(result.terms, result.terms["active"].to_numpy(bool)),
             "<h2>Friction–velocity curve</h2>",
             _img(_png(fig_friction(result.static_model, dynamic, cve, truth, v_max, unit)),
                  "friction against velocity")]
    if len(cve):
        parts += ['<p class="note">Constant-velocity experiment points: τ_f = (τ⁺ − τ⁻)/2 at '
                  "matched positions; spread = std over position bins.</p>",
                  _html_table(cve.assign(trajectory=[_short(n) for n in cve["trajectory"]]))]
    if not hist.empty:
        parts += ["<h2>Outer-loop convergence (winning σ0 start)</h2>",
                  _img(_png(fig_convergence(hist)), "outer loop convergence"),
                  _html_table(hist)]
    parts += ["<h2>Torque prediction</h2>", _html_table(
        metrics.assign(trajectory=[_short(n) for n in metrics["trajectory"]]))
        if not metrics.empty else ""]
    for label in ("train", "test"):
        if label in by:
            parts.append(_img(_png(fig_torque(by[label], unit)), f"torque fit {label}"))
    if runs:
        parts += [f"<h2>Free-run simulation ({held_out.label} data)</h2>",
                  _img(_png(fig_free_run(runs, held_out.prep.names, unit, restart_s)),
                       "free run")]
    if dynamic is not None and held_out is not None:
        parts += ["<h2>Hysteresis</h2>",
                  '<p class="note">τ_f = τ − (I q̈ + a_c cos q + a_s sin q + o) of the '
                  "identified rigid body, for |q̇| below 10 % of the top speed.</p>",
                  _img(_png(fig_hysteresis(result.model, held_out, unit)), "hysteresis loops")]
    body = "\n".join(parts)
    page = (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>{html.escape(title)}</title><style>{_CSS}</style></head>"
            f"<body>\n{body}\n</body></html>\n")
    md = _markdown(result, title, summary, params, metrics, cve, runs, held_out)
    return page, md, summary


def _markdown(result: IdentificationResult, title: str, summary: dict, params: pd.DataFrame,
              metrics: pd.DataFrame, cve: pd.DataFrame, runs: list[FreeRunResult],
              held_out: _Dataset | None) -> str:
    status = "converged" if result.converged else "NOT converged"
    sel = summary["selection"]
    lines = [f"# {title}", "",
             f"**Status:** {status} — {result.convergence_reason}", "",
             f"**Selection:** λ = {fmt(sel.get('lambda'))}, {sel.get('n_active')} of "
             f"{sel.get('n_candidates')} candidates active "
             f"({', '.join(result.terms.loc[result.terms['active'], 'term'])}).", "",
             "## Parameters", "", _md_table(params)]
    if not metrics.empty:
        m = metrics.assign(trajectory=[_short(n) for n in metrics["trajectory"]])
        lines += ["## Torque prediction", "",
                  _md_table(m[["dataset", "trajectory", "model", "relative_rms", "nrmse",
                               "max_abs"]])]
    if runs and held_out is not None:
        fr = pd.DataFrame([{"trajectory": _short(n), "rms_q": r.rms_q, "rms_qd": r.rms_qd,
                            "max_abs_q": r.max_abs_q}
                           for n, r in zip(held_out.prep.names, runs, strict=True)])
        lines += [f"## Free run ({held_out.label} data)", "", _md_table(fr)]
    if len(cve):
        c = cve.assign(trajectory=[_short(n) for n in cve["trajectory"]])
        lines += ["## Constant-velocity points", "", _md_table(c)]
    lines += ["Figures: see `report.html`.", ""]
    return "\n".join(lines)


def write_report(result: IdentificationResult, out_dir: str | os.PathLike,
                 train: Sequence[Trajectory],
                 validate: Sequence[Trajectory] | None = None,
                 test: Sequence[Trajectory] | None = None, cve: pd.DataFrame | None = None, *,
                 truth: JointModel | None = None, restart_s: float | None = 1.0,
                 title: str = "sparsefric identification report") -> dict:
    """Write ``report.html`` (self-contained) and ``summary.md`` into ``out_dir``, atomically.

    Parameters
    ----------
    result : IdentificationResult
        A fitted estimator's ``result_``.
    out_dir : path-like
        Output directory (created if missing).
    train, validate, test : list of Trajectory
        The data sets (validate and test optional); the torque fit is shown on train and test,
        the free run and the hysteresis on test (else validate, else train).
    cve : DataFrame, optional
        CVE points with columns trajectory, velocity [rad/s], friction [N·m], friction_std [N·m];
        default: computed from all given trajectories (pass an empty DataFrame to omit).
    truth : JointModel, optional
        A known true model (simulated data): its curve and parameters are shown.
    restart_s : float, optional
        Restart period [s] of the free-run simulation (``None``: one open-loop run).
    title : str
        Page title.

    Returns
    -------
    dict
        :func:`summary_dict`'s dictionary of the same results.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    page, md, summary = _build(result, train, validate, test, cve, truth, restart_s, title)
    write_text(out / "report.html", page)
    write_text(out / "summary.md", md)
    return summary
