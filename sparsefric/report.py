"""The identification report: one self-contained ``report.html`` and a ``summary.md``.

>>> write_report(est.result_, "out/", train, validate=val, test=test)      # doctest: +SKIP

``report.html`` draws every figure as inline SVG (:mod:`sparsefric.figures`): sharp at any
zoom, no script, no external resource, so it opens offline. Its Status section, the last lines
the command line prints (:func:`headline_lines`) and ``summary.md`` give the same headline: the
torque error of the identified model on the test data (else the validation data, else the
training data) in %, beside the true or reference model's and the free-run error. Both files
are written atomically. :func:`summary_dict` gives the same key results as a JSON-serialisable
dictionary (the CLI's ``--json``; ratios there stay ratios, not %).
:func:`write_model_comparison` writes the page that sets models A and B side by side
(``identify --model both``).
"""

from __future__ import annotations

import datetime as _dt
import html
import json
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from sparsefric import figures
from sparsefric.atomic import write_text
from sparsefric.data import Trajectory
from sparsefric.figures import Evaluation, short
from sparsefric.model import JointModel, parameter_table, units
from sparsefric.result import OUTSIDE_VALIDITY, IdentificationResult
from sparsefric.selection import MAX_ROWS, TIE_AICC
from sparsefric.steps.checks import cve_of
from sparsefric.svgplot import CSS as FIGURE_CSS
from sparsefric.tables import fmt, html_table, markdown_table
from sparsefric.uncertainty import interval_table, stribeck_family, viscous_family
from sparsefric.validation import (
    FreeRunResult,
    cve_score,
    free_run_compare,
    metrics_table,
)

#: Roles of models known beforehand, in the order they are quoted.
KNOWN = figures.KNOWN_ROLES


# --------------------------------------------------------------------------- evaluation
def _evaluate(result: IdentificationResult, label: str,
              trajectories: Sequence[Trajectory] | None,
              others: Mapping[str, JointModel]) -> Evaluation | None:
    """One data set prepared once, with the predictions of every model (``others``: known
    and compared models by role)."""
    if not trajectories:
        return None
    prep = result.prepare(list(trajectories))
    # beyond the validity range the report says so once (_validity_html), not per prediction
    preds = {"static": prep.torque(result.static_model, outside="ignore")}
    if result.model.kind == "lugre":
        preds["dynamic"] = prep.torque(result.model, outside="ignore")
    preds.update({role: prep.torque(m, outside="ignore") for role, m in others.items()})
    # the records as prepared: a record cut where it jumps counts as its pieces
    return Evaluation(label, list(prep.pieces) or list(trajectories), prep, preds)


def _datasets(result: IdentificationResult, train, validate, test,
              others: Mapping[str, JointModel] | None = None) -> list[Evaluation]:
    out = [_evaluate(result, lab, trajs, others or {})
           for lab, trajs in (("train", train), ("validate", validate), ("test", test))]
    return [d for d in out if d is not None]


def _metrics(datasets: list[Evaluation]) -> pd.DataFrame:
    frames = [metrics_table(d.prep.names, d.measured(), d.predictions, d.label) for d in datasets]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _cve(cve: pd.DataFrame | None, datasets: list[Evaluation], model: JointModel
         ) -> pd.DataFrame:
    """The given CVE points, else those of every record as the consistency check measures
    them (:func:`sparsefric.steps.checks.cve_of`): on the records as the fit prepared them,
    net of the ``model``'s inertia force, and past its bristles' settling distance. (The
    records are differentiated once, for the predictions; a second differentiation by another
    filter took ~0.9 s on a 53k-sample joint, scipy.signal's import included.)"""
    if cve is not None:
        return cve
    return cve_of([d.prep for d in datasets], model)


def _free_runs(model: JointModel, data: Evaluation | None,
               restart_s: float | None) -> list[FreeRunResult]:
    if data is None or not model.inertia > 0:  # no inertia term: nothing to integrate
        return []
    return [free_run_compare(model, traj.t, traj.q, traj.tau, data.prep.signals.qd[s],
                             restart_s=restart_s)
            for traj, s in zip(data.trajectories, data.slices(), strict=True)]


def _held_out(datasets: Sequence[Evaluation]) -> Evaluation | None:
    """The test data, else the validation data, else the training data."""
    by = {d.label: d for d in datasets}
    return by.get("test") or by.get("validate") or by.get("train")


# --------------------------------------------------------------------------- headline
def _free_run_figures(runs: Sequence[FreeRunResult]) -> dict[str, float]:
    """‖q̇ − q̇_sim‖/‖q̇‖ [-] and the RMS position error [rad or m] pooled over the runs."""
    qd = np.concatenate([r.qd for r in runs])
    diff = np.concatenate([r.qd - r.qd_sim for r in runs])
    dq = np.concatenate([r.q - r.q_sim for r in runs])
    return {"velocity_error": float(np.linalg.norm(diff) / np.linalg.norm(qd)),
            "rms_q": float(np.sqrt(np.mean(dq**2)))}


#: Why the headline quotes no free-run error when a simulation did not stay finite.
FREE_RUN_DIVERGED = ("the simulation of the identified model did not stay finite (it diverged "
                     "under the measured torque)")


def _diverged(runs: Sequence[FreeRunResult]) -> bool:
    """Whether any of the free runs left the finite numbers."""
    return any(not (np.isfinite(r.q_sim).all() and np.isfinite(r.qd_sim).all()) for r in runs)


def _free_run_headline(runs: Sequence[FreeRunResult],
                       known_runs: Mapping[str, Sequence[FreeRunResult]],
                       restart_s: float | None) -> dict:
    """The free-run part of the headline; ``unavailable`` says why a run has no error."""
    if _diverged(runs):
        return {"restart_s": restart_s, "velocity_error": None, "rms_q": None,
                "unavailable": FREE_RUN_DIVERGED, "others": {}}
    return {"restart_s": restart_s, **_free_run_figures(runs),
            "others": {role: _free_run_figures(r)["velocity_error"]
                       for role, r in known_runs.items() if r and not _diverged(r)}}


def _headline(held: Evaluation | None, runs: Sequence[FreeRunResult],
              known_runs: Mapping[str, Sequence[FreeRunResult]],
              restart_s: float | None) -> dict:
    """The errors quoted at a glance (ratios): torque on the held-out data, free run."""
    if held is None:
        return {}
    final = held.final()
    out: dict[str, Any] = {"dataset": held.label, "model": final,
                           "torque_error": held.error(final),
                           "others": {r: held.error(r) for r in held.predictions
                                      if r != final}}
    if runs:
        out["free_run"] = _free_run_headline(runs, known_runs, restart_s)
    return out


def _others_text(others: Mapping[str, float], order: Sequence[str]) -> str:
    labels = {"static": "static step-1 model", "dynamic": "LuGre model"}
    parts = [f"{labels.get(r, r)} {100 * others[r]:.2f} %" for r in order
             if others.get(r) is not None]
    return f" ({'; '.join(parts)})" if parts else ""


def headline_lines(summary: Mapping[str, Any]) -> list[str]:
    """The headline of :func:`summary_dict` as text: the torque error in % of the held-out
    data beside the known and compared models', then the free-run error.

    Returns
    -------
    list of str
        One or two lines (none without data).
    """
    h = summary.get("headline") or {}
    if not h:
        return []
    cve_line = _cve_file_line(summary)
    others = h.get("others", {})
    order = [*KNOWN, *(r for r in others if r not in (*KNOWN, "static", "dynamic")),
             "static", "dynamic"]
    note = " — no validation or test data: the training fit" if h["dataset"] == "train" else \
        " — fitted on these records too, once they had chosen the terms: judge the model on " \
        "test data" if h.get("fitted") else ""
    lines = [f"{h['dataset']} torque error ‖τ − τ̂‖/‖τ‖ = {100 * h['torque_error']:.2f} %"
             + _others_text(others, order) + note]
    if h.get("free_run"):
        lines.append(_free_run_line(h["dataset"], h["free_run"], summary["model"]["axis"]))
    return lines + cve_line


def _free_run_line(dataset: str, fr: Mapping[str, Any], axis: str) -> str:
    """The free-run errors of the headline in words, or why there are none."""
    every = f"restarted every {fr['restart_s']:g} s" if fr.get("restart_s") else "one run"
    if fr.get("velocity_error") is None or fr.get("rms_q") is None:
        why = fr.get("unavailable") or "its errors are not finite numbers"
        return f"free run on the {dataset} data ({every}): not available: {why}"
    return (f"free run on the {dataset} data ({every}): velocity error "
            f"‖q̇ − q̇_sim‖/‖q̇‖ = {100 * fr['velocity_error']:.2f} %"
            + _others_text(fr.get("others", {}), KNOWN)
            + f", RMS position error {fr['rms_q']:.3g} {units(axis)['q']}")


def _cve_file_line(summary: Mapping[str, Any]) -> list[str]:
    """The score against the ``--cve`` file as one line (none without one)."""
    c = summary.get("cve_file")
    if not c:
        return []
    u = units(summary["model"]["axis"])
    w = c["worst"]
    return [f"CVE file {short(c['source'])} ({c['n']} points): static curve off by "
            f"RMS {100 * c['rms_relative']:.2f} % of the RMS friction"
            + _others_text(c["others"], [*KNOWN, "static"])
            + f"; worst at {w['velocity']:.3g} {u['qd']}: {w['model']:.4g} vs "
              f"{w['friction']:.4g} {u['tau']} ({100 * w['relative']:+.1f} %)"]


def _cve_file_summary(models: Mapping[str, JointModel], final: str,
                      points: pd.DataFrame) -> dict:
    """The ``cve_file`` entry of the summary: the score of the final model's static curve
    against a user's CVE points (RMS relative [-], worst point), the other models' RMS."""
    score = cve_score(models[final], points)
    return _jsonable({
        "source": str(points["trajectory"].iloc[0]), "model": final, "n": score.n,
        "rms_relative": score.rms_relative,
        "worst": {"velocity": score.worst_velocity, "friction": score.worst_friction,
                  "model": score.worst_model, "relative": score.worst_relative},
        "others": {role: cve_score(m, points).rms_relative for role, m in models.items()
                   if role != final},
        "points": _records(points)})


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


def _summary(result: IdentificationResult, datasets: list[Evaluation], metrics: pd.DataFrame,
             cve: pd.DataFrame, known: Mapping[str, JointModel], headline: dict) -> dict:
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
        "headline": headline,
        "terms": _records(result.final_terms),
        "history": _records(result.winning_history),
        "preprocessing": _records(result.preprocessing),
        "data": {d.label: [{"name": n, "samples": b - a, "dt": h,
                            "max_abs_qd": float(np.max(np.abs(d.prep.signals.qd[a:b])))}
                           for n, (a, b), h in zip(d.prep.names, d.prep.bounds, d.prep.dt,
                                                   strict=True)]
                 for d in datasets},
        "metrics": _records(metrics),
        "cve": _records(cve),
    }
    out.update({role: m.to_dict() for role, m in known.items()})
    return _jsonable(out)


def _known(known: Mapping[str, JointModel] | None) -> dict[str, JointModel]:
    """The known models in the order of :data:`KNOWN`; another role is an error."""
    known = dict(known or {})
    wrong = [role for role in known if role not in KNOWN]
    if wrong:
        raise ValueError(f"known models are {', '.join(KNOWN)}, got {wrong[0]!r}")
    return {role: known[role] for role in KNOWN if known.get(role) is not None}


def summary_dict(result: IdentificationResult, train: Sequence[Trajectory] | None = None,
                 validate: Sequence[Trajectory] | None = None,
                 test: Sequence[Trajectory] | None = None, cve: pd.DataFrame | None = None, *,
                 known: Mapping[str, JointModel] | None = None,
                 restart_s: float | None = 1.0, cve_file: pd.DataFrame | None = None) -> dict:
    """Key results of an identification as a JSON-ready dict.

    Parameters
    ----------
    result : IdentificationResult
        A fitted estimator's ``result_``.
    train, validate, test : list of Trajectory, optional
        Data sets to score (torque metrics of every model per trajectory).
    cve : DataFrame, optional
        CVE points (:func:`sparsefric.validation.cve_from_trajectories`); default: none (not
        computed here).
    known : mapping of str to JointModel, optional
        ``truth`` (of simulated data) and ``reference`` (a published model): scored beside the
        identified one and copied into the summary.
    restart_s : float, optional
        Restart period [s] of the free run of the headline (``None``: one run).
    cve_file : DataFrame, optional
        A user's own constant-velocity points (:func:`sparsefric.validation.load_cve`) to score
        the static curves against.

    Returns
    -------
    dict
        format, converged, convergence_reason, sigma0_init, model, static_model, selection,
        refined, warnings, headline (dataset, torque_error [-] of the identified model,
        others [-] by model, free_run: velocity_error [-], rms_q [rad or m], and fitted: True
        where the final coefficients were fitted on the headline's validation records), terms (the
        final model's coefficients beside step 1's), history (winning σ0 start),
        preprocessing, data (per record: name, samples, dt [s], max_abs_qd [rad/s or m/s]),
        metrics, cve [, truth, reference] [, cve_file: source, model (the scored role), n,
        rms_relative [-], worst (velocity, friction, model, relative), others (RMS relative
        by role), points]; non-finite numbers become ``None``.
    """
    known = _known(known)
    with threadpool_limits(1):  # vector products only: BLAS threads would just contend
        datasets = _datasets(result, train, validate, test, known)
        held = _held_out(datasets)
        runs = _free_runs(result.model, held, restart_s)
        known_runs = {role: _free_runs(m, held, restart_s) for role, m in known.items()}
        cve = cve if cve is not None else pd.DataFrame()
        headline = _headline(held, runs, known_runs, restart_s)
        if headline.get("dataset") == "validate" and "validation" in \
                result.model.extra.get("fit", {}).get("fitted_on", ""):
            headline["fitted"] = True  # the final coefficients were fitted on these records
        out = _summary(result, datasets, _metrics(datasets), cve, known, headline)
    return _with_cve_file(out, result, known, cve_file)


def _curve_models(result: IdentificationResult,
                  others: Mapping[str, JointModel]) -> dict[str, JointModel]:
    """Role → model of the friction figures: step 1's, the final LuGre model, ``others``."""
    out = {"static": result.static_model}
    if result.model.kind == "lugre":
        out["dynamic"] = result.model
    return {**out, **others}


def _with_cve_file(summary: dict, result: IdentificationResult,
                   others: Mapping[str, JointModel], cve_file: pd.DataFrame | None) -> dict:
    """``summary`` with the ``cve_file`` score when there are points to score against."""
    if cve_file is None or not len(cve_file):
        return summary
    final = "dynamic" if result.model.kind == "lugre" else "static"
    return {**summary, "cve_file": _cve_file_summary(_curve_models(result, others), final,
                                                     cve_file)}


# --------------------------------------------------------------------------- HTML pieces
_CSS = """
body{font-family:sans-serif;max-width:1150px;margin:1em auto;padding:0 1em;color:#222}
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:1.6em}
.scroll{width:fit-content;max-width:100%;overflow:auto;max-height:30em;margin:0.5em 0}
table{border-collapse:collapse;font-size:0.85em}
td,th{border:1px solid #ccc;padding:2px 6px;text-align:right;vertical-align:top}
th{background:#f0f0f0;position:sticky;top:0}td:first-child,th:first-child{text-align:left}
.ok{color:#060;font-weight:bold}.bad{color:#a00;font-weight:bold}
tr.sel td{background:#e6f0ff;font-weight:bold}
.note{color:#555;font-size:0.9em}
.headline{font-size:1.15em;background:#f4f8ff;border-left:4px solid #1f63b5;padding:0.4em 0.8em}
nav{font-size:0.9em}nav a{margin-right:0.8em}
"""


def _html_table(df: pd.DataFrame, highlight: Sequence[bool] | None = None) -> str:
    return ('<div class="scroll">'
            + html_table(list(df.columns), df.itertuples(index=False), highlight) + "</div>")


def _md_table(df: pd.DataFrame) -> str:
    return markdown_table(list(df.columns), df.itertuples(index=False))


def _percent(df: pd.DataFrame, columns: Mapping[str, str]) -> pd.DataFrame:
    """``df`` with ratio columns as % under new names (``columns``: old → new header)."""
    present = {c: n for c, n in columns.items() if c in df}
    return df.assign(**{c: 100 * df[c].astype(float) for c in present}).rename(columns=present)


def _metrics_view(metrics: pd.DataFrame) -> pd.DataFrame:
    m = metrics.assign(trajectory=[short(n) for n in metrics["trajectory"]])
    m = m.drop(columns=[c for c in ("n",) if c in m])
    return _percent(m, {"relative_rms": "‖τ − τ̂‖/‖τ‖ [%]", "nrmse": "RMS/range [%]",
                        "max_relative": "max |τ − τ̂|/max|τ| [%]"})


def _preprocessing_table(result: IdentificationResult) -> pd.DataFrame:
    """Differentiation settings: one row per setting, one column per training record."""
    df = result.preprocessing.copy()
    names = [short(v) for v in df.pop("trajectory")] if "trajectory" in df else list(df.index)
    cells = df.map(lambda v: json.dumps(_jsonable(v)) if isinstance(v, dict | list) else v)
    table = cells.T
    table.columns = names
    return table.reset_index(names="setting")


def _data_table(datasets: list[Evaluation], unit: dict[str, str]) -> pd.DataFrame:
    rows = []
    for d in datasets:
        for traj, s in zip(d.trajectories, d.slices(), strict=True):
            qd = d.prep.signals.qd[s]
            rows.append({"set": d.label, "trajectory": short(traj.name), "samples": len(traj),
                         "duration [s]": traj.t[-1] - traj.t[0], "dt [s]": traj.dt,
                         f"max |q̇| [{unit['qd']}]": float(np.max(np.abs(qd))),
                         f"max |τ| [{unit['tau']}]": float(np.max(np.abs(traj.tau)))})
    return pd.DataFrame(rows)


def _status_html(result: IdentificationResult, summary: dict) -> str:
    """The headline, the warning that the test records leave the validity range beside it,
    and the convergence."""
    cls = "ok" if result.converged else "bad"
    word = "converged" if result.converged else "NOT converged"
    s0 = _sigma0_init(result)
    start = f"; winning initial σ0 = {s0:g}" if s0 is not None else ""
    head = "".join(f"<div>{html.escape(line)}</div>" for line in headline_lines(summary))
    outside = "".join(f'<p class="note"><b>Warning:</b> {html.escape(f.message)}</p>'
                      for f in result.findings if f.code == OUTSIDE_VALIDITY)
    return ((f'<div class="headline">{head}</div>' if head else "") + outside
            + f'<p><span class="{cls}">{word}</span>: '
            f"{html.escape(str(result.convergence_reason))}{html.escape(start)}</p>")


def _refinement_note(result: IdentificationResult) -> str:
    """One paragraph on the re-selection with the dynamic columns and any warnings."""
    out = []
    refinement = result.lugre.refinement if result.lugre is not None else None
    if refinement is not None and refinement.table is not None:
        table = refinement.table.table
        row = table[table.selected].iloc[0]
        rounds = len(refinement.runs) - (refinement.merged is not None)
        kept = (f"replaced the first LuGre model after {rounds} round(s), each from the last "
                "kept model" if rounds else "did not predict better and was not kept")
        if refinement.merged is not None:
            kept += (f"; the model's Stribeck terms were then merged into one "
                     f"(δ = {refinement.merged:g}), which predicts better")
        out.append(f'<p class="note">Refinement: with the converged bristle state, the sweep over '
                   f"every friction candidate (dynamic columns σ0 z/g·[1, e^…] and ż) selected "
                   f"{int(row.n_active)} terms at λ = {fmt(row['lambda'])}{_tie_note(table)}; "
                   f"the re-iterated model {kept}. The chart and the tables below show the final "
                   "model.</p>")
    for text in result.warnings:
        out.append(f'<p class="note"><b>Warning:</b> {html.escape(text)}</p>')
    return "\n".join(out)


def _tie_note(table: pd.DataFrame) -> str:
    """Where the records' constant-velocity levels chose among models AICc could not tell
    apart, a clause that says so ('' where AICc chose alone)."""
    if "steady_chi2" not in table or table.loc[table.selected, "aicc_choice"].all():
        return ""
    row, first = table[table.selected].iloc[0], table[table.aicc_choice].iloc[0]
    return (f", {fmt(float(row.aicc - first.aicc))} above AICc's choice: of the models "
            f"within {fmt(TIE_AICC)} of the AICc minimum, its static curve meets the "
            f"constant-velocity levels of the records best (χ² {fmt(row.steady_chi2)} against "
            f"{fmt(first.steady_chi2)})")


def _story(result: IdentificationResult, summary: dict) -> str:
    """Step 1's selection and the final model in one sentence (as the console says it)."""
    sel = summary["selection"]
    terms = result.final_terms
    final = terms.loc[terms["active"], "term"]
    kind = "LuGre" if result.model.kind == "lugre" else "static"
    return (f"<p>Step 1 selected λ = {fmt(sel.get('lambda'))}: {sel.get('n_active')} of "
            f"{len(result.terms)} candidates kept, AICc scored on {sel.get('aic_source')} data "
            f"in {sel.get('aic_parts')} parts. <b>Final model</b> ({kind} friction): "
            f"{len(final)} terms, {html.escape(', '.join(final))}"
            + (" with σ0, σ1" if kind == "LuGre" else "") + ".</p>")


def _method_text(model: JointModel) -> str:
    """How the intervals of ``model`` were obtained, in a few words."""
    unc = model.uncertainty
    if unc.method == "bootstrap":
        return (f"block bootstrap of the whole identification, term selection included, "
                f"{unc.resamples} resamples")
    return "asymptotic HAC covariance with the selected terms held fixed"


def _breakaway_html(table: pd.DataFrame, level: float) -> str:
    row = table[table["name"] == "breakaway"]
    if row.empty:
        return ""
    r = row.iloc[0]
    return (f"<p><b>Break-away torque</b> {fmt(r.estimate)} {r.unit}, {level:.0%} interval "
            f"[{fmt(r.lower)}, {fmt(r.upper)}] {r.unit}.</p>")


def _interval_html(model: JointModel) -> str:
    """The break-away torque with its interval, and the table of every interval."""
    table = interval_table(model)
    if table.empty:
        return '<p class="note">No intervals were computed (uncertainty "none").</p>'
    level = model.uncertainty.level
    return (_breakaway_html(table, level)
            + f'<p class="note">{level:.0%} intervals of the identified model '
              f"({html.escape(_method_text(model))}):</p>"
            + _html_table(table.drop(columns="name")))


#: Unit key (of :func:`sparsefric.model.units`) of each quantity of a validity range.
_RANGE_UNITS = {"velocity": "qd", "speed": "qd", "position": "q", "torque": "tau"}


def _validity_html(model: JointModel, datasets: Sequence[Evaluation]) -> str:
    """The range of the identification data, and the data sets that leave it."""
    v = model.validity
    if v is None:
        return ""
    u = units(model.axis)
    ranges = "; ".join(f"{q} [{fmt(lo)}, {fmt(hi)}] {u[_RANGE_UNITS[q]]}"
                       for q, (lo, hi) in v.to_dict().items())
    out = [f'<p class="note">Validity range (the data it was identified on, model.json '
           f"<code>validity</code>): {html.escape(ranges)}.</p>"]
    for d in datasets:
        text = model.outside_message(d.prep.signals.q, d.prep.signals.qd)
        if text:
            out.append(f'<p class="note"><b>{d.label} data:</b> {html.escape(text)}.</p>')
    return "".join(out)


def _terms_view(result: IdentificationResult) -> pd.DataFrame:
    """The final terms, with the bootstrap inclusion frequency of each where there is one."""
    terms = result.final_terms
    unc = result.model.uncertainty
    if unc is None or not unc.inclusion:
        return terms
    return terms.assign(**{"inclusion [-]": terms["term"].map(unc.inclusion)})


def _hysteresis_note(axis: str) -> str:
    gravity = "a_c cos q + a_s sin q + " if axis == "revolute" else ""
    return (f'<p class="note">τ_f = τ − (I q̈ + {gravity}o) with the identified rigid body; '
            "the pre-sliding loop follows each reversal until the joint has moved 4 × "
            "break-away/σ0.</p>")


# --------------------------------------------------------------------------- sections
class _Context:
    """Everything the sections of the report draw from, computed once."""

    def __init__(self, result: IdentificationResult, sets: tuple, cves: tuple,
                 known: dict[str, JointModel], compare: Mapping[str, JointModel],
                 restart_s: float | None):
        self.result, self.known, self.compare = result, known, dict(compare)
        self.restart_s = restart_s
        self.unit = units(result.model.axis)
        self.datasets = _datasets(result, *sets, {**known, **self.compare})
        self.by = {d.label: d for d in self.datasets}
        self.held = _held_out(self.datasets)
        self.metrics = _metrics(self.datasets)
        cve, self.cve_file = cves
        self.cve = _cve(cve, self.datasets, result.model)
        self.runs = _free_runs(result.model, self.held, restart_s)
        known_runs = {role: _free_runs(m, self.held, restart_s) for role, m in known.items()}
        self.summary = _with_cve_file(
            _summary(result, self.datasets, self.metrics, self.cve, known,
                     _headline(self.held, self.runs, known_runs, restart_s)),
            result, {**known, **self.compare}, self.cve_file)
        self.params = parameter_table(self.models())

    def models(self) -> dict[str, JointModel]:
        """Column label → model of the parameter table."""
        out = {"static (step 1)": self.result.static_model}
        if self.result.model.kind == "lugre":
            out["LuGre (final)"] = self.result.model
        return {**out, **self.known, **self.compare}

    def curve_models(self) -> dict[str, JointModel]:
        """Role → model of the friction figures."""
        return _curve_models(self.result, {**self.known, **self.compare})

    def v_max(self) -> float:
        return max((float(np.max(np.abs(d.prep.signals.qd))) for d in self.datasets),
                   default=1.0)


def _sec_status(c: _Context) -> str:
    return _status_html(c.result, c.summary)


def _sec_parameters(c: _Context) -> str:
    return (_html_table(c.params) + _interval_html(c.result.model)
            + _validity_html(c.result.model, c.datasets))


def _sec_data(c: _Context) -> str:
    return (_html_table(_data_table(c.datasets, c.unit))
            + '<p class="note">Differentiation of the training records (the regularisation used '
              "and the rule that chose it):</p>" + _html_table(_preprocessing_table(c.result)))


#: What each coefficient column of the terms table (terms.csv) holds.
TERMS_NOTE = (
    "Coefficients in the unit of each term; terms.csv holds the same table. coefficient: the "
    "final model (after the LuGre iterations and any refinement). step1_coefficient: step 1's "
    "sweep at the selected λ (the highlighted row above), fitted on at most "
    f"{MAX_ROWS} of the training samples. static_coefficient: the static model "
    "(static_model.json, the column “static (step 1)” of the parameters), the same terms "
    "refitted on every sliding sample (where blocks were held out, on the whole records if "
    "that predicts them better).")


def _sec_selection(c: _Context) -> str:
    sel = c.result.selection
    cols = [k for k in ("threshold", "lambda", "n_active", "n_eliminated", "omega_s",
                        "train_error", "aic_r", "variant", "hierarchical", "converged") if k in sel]
    terms = _terms_view(c.result)
    return (_story(c.result, c.summary) + figures.selection(sel, c.unit).svg()
            + _refinement_note(c.result) + _html_table(sel[cols], sel["selected"].to_numpy(bool))
            + figures.coefficients(terms).svg()
            + f'<p class="note">{TERMS_NOTE} Inclusion: the share of the bootstrap resamples '
              f"whose final model has the term.{_family_note(c.result)}</p>"
            + _html_table(terms, terms["active"].to_numpy(bool)))


def _family_note(result: IdentificationResult) -> str:
    """The bootstrap shares of a Stribeck rise of any exponent and of a faster-than-linear
    viscous term of any power, as sentences ('' without)."""
    unc = result.model.uncertainty
    shares = unc.inclusion if unc is not None else {}
    notes = {stribeck_family(1): ("A Stribeck rise of any exponent", "neighbouring exponents"),
             viscous_family(1): ("A faster-than-linear viscous term of any power",
                                 "the powers q̇²…q̇⁵ over one speed range")}
    return "".join(f" {what}: {shares[row]:.0%} of the resamples ({who} give nearly the same "
                   "column and share the resamples)." for row, (what, who) in notes.items()
                   if row in shares)


def _friction_band(model: JointModel):
    """(legend text, band) of the identified static curve, None without one."""
    unc = model.uncertainty
    if unc is None or unc.static_curve is None:
        return None
    return f"{unc.level:.0%} band of the identified curve", unc.static_curve


def _sec_friction(c: _Context) -> str:
    out = figures.friction_curves(c.curve_models(), c.v_max(), c.unit, c.cve,
                                  band=_friction_band(c.result.model), cve_file=c.cve_file).svg()
    if len(c.cve):
        out += ('<p class="note">Constant-velocity experiment points: τ_f = (τ⁺ − τ⁻)/2 at '
                "matched positions, of the torque net of the model's inertia force Î q̈ and, "
                "for a LuGre model, from 3 pre-sliding deflections g(0)/σ0 past the start of "
                "each move (before, the friction is still rising); spread = std over position "
                "bins.</p>"
                + _html_table(c.cve.assign(trajectory=[short(n) for n in c.cve["trajectory"]])))
    if "cve_file" in c.summary:
        out += ('<p class="note">CVE file: the static curve of each model against the given '
                "constant-velocity points; RMS error relative to the RMS friction, and the "
                "point missed most.</p>" + _html_table(_cve_file_table(c)))
    return out + _branches_html(c, {"LuGre (final)": c})


def _branches_html(c: _Context, panels: Mapping[str, _Context]) -> str:
    """The dynamic friction along the training records, accelerating and decelerating (the
    paper's Fig. 15), one panel per LuGre model of ``panels`` (title → its context); empty
    without one."""
    models = {title: (ctx.result.model, ctx.result.static_model)
              for title, ctx in panels.items() if ctx.result.model.kind == "lugre"}
    if not models or "train" not in c.by:
        return ""
    return (figures.friction_branches(models, c.by["train"], c.unit, c.cve, c.cve_file).svg()
            + _BRANCHES_NOTE)


_BRANCHES_NOTE = ('<p class="note">The friction of the dynamic model driven by the velocity '
                  "of the training records (z integrated along each), in the direction of "
                  "motion, where |q̇| rises and where it falls (|q̈| above 5 % of its 99th "
                  "percentile); beside it the model's own steady-state curve (ż = 0), the "
                  "step-1 static curve and the constant-velocity points (as Fig. 15 of "
                  "Mahmoudkhani et al. 2023).</p>")


def _cve_file_table(c: _Context) -> pd.DataFrame:
    """One row per model: its static curve against the ``--cve`` points."""
    rows = []
    for role, model in c.curve_models().items():
        s = cve_score(model, c.cve_file)
        rows.append({"model": figures.STYLES.get(role, (role,))[0],
                     "RMS error / RMS friction [%]": 100 * s.rms_relative,
                     f"worst at q̇ [{c.unit['qd']}]": s.worst_velocity,
                     f"model [{c.unit['tau']}]": s.worst_model,
                     f"measured [{c.unit['tau']}]": s.worst_friction,
                     "worst error [%]": 100 * s.worst_relative})
    return pd.DataFrame(rows)


def _sec_convergence(c: _Context) -> str:
    hist = c.result.winning_history
    if hist.empty:
        return ""
    view = _percent(hist, {"error_rel": "error_rel [%]",
                           "prediction_error_rel": "prediction_error_rel [%]",
                           "g_change": "g_change [%]"})
    return figures.convergence(hist, c.unit).svg() + _html_table(view)


def _sec_torque(c: _Context) -> str:
    if c.metrics.empty:
        return ""
    shown = [c.by[lab] for lab in ("train", "test") if lab in c.by]
    return (_html_table(_metrics_view(c.metrics))
            + "".join(figures.torque_fit(d, c.unit).svg() for d in shown))


def _sec_residuals(c: _Context) -> str:
    return figures.residuals(c.held, c.unit).svg() if c.held is not None else ""


def _sec_comparison(c: _Context) -> str:
    if not c.compare or c.held is None:
        return ""
    roles = [c.held.final(), *c.known, *c.compare]
    rows = [{"method": "sparsefric" if r in ("static", "dynamic") else r,
             **{f"{d.label}: ‖τ − τ̂‖/‖τ‖ [%]": 100 * d.error(r) for d in c.datasets},
             f"fit on {c.held.label} data [%]": _fit_percent(c.held, r)} for r in roles]
    return (_html_table(pd.DataFrame(rows))
            + '<p class="note">fit = 100 (1 − ‖τ − τ̂‖/‖τ − mean τ‖), as MATLAB\'s compare.</p>'
            + figures.comparison(c.held, roles, c.unit).svg())


def _fit_percent(d: Evaluation, role: str) -> float:
    tau = np.concatenate(d.measured())
    err = tau - np.concatenate(d.predictions[role])
    return float(100 * (1 - np.linalg.norm(err) / np.linalg.norm(tau - tau.mean())))


def _sec_free_run(c: _Context) -> str:
    if not c.runs:
        return ""
    if _diverged(c.runs):
        return f'<p class="note">Not available: {html.escape(FREE_RUN_DIVERGED)}.</p>'
    return figures.free_run(c.runs, c.held.prep.names, c.unit, c.restart_s).svg()


def _sec_loops(c: _Context) -> str:
    if c.result.model.kind != "lugre" or c.held is None:
        return ""
    models = {role: m for role, m in c.curve_models().items()
              if role != "static" and m.kind == "lugre"}
    return (_hysteresis_note(c.result.model.axis)
            + figures.friction_loops(models, c.held, c.unit).svg())


#: The sections of report.html: anchor, heading, builder (empty output: section left out).
SECTIONS = (("status", "Status", _sec_status), ("parameters", "Parameters", _sec_parameters),
            ("selection", "Model selection", _sec_selection),
            ("friction", "Friction–velocity curve", _sec_friction),
            ("convergence", "Outer-loop convergence (winning σ0 start)", _sec_convergence),
            ("torque", "Torque prediction", _sec_torque),
            ("residuals", "Residuals", _sec_residuals),
            ("comparison", "Comparison of the methods", _sec_comparison),
            ("free-run", "Free-run simulation", _sec_free_run),
            ("loops", "Hysteresis and pre-sliding", _sec_loops),
            ("data", "Data and preprocessing", _sec_data))


def _page(c: _Context, title: str) -> str:
    sections = []
    for anchor, heading, build in SECTIONS:
        if anchor == "free-run" and c.held is not None:
            heading = f"{heading} ({c.held.label} data)"
        sections.append((anchor, heading, build(c)))
    return _document(title, c.result.model.axis, sections)


def _document(title: str, axis: str, sections: Sequence[tuple[str, str, str]]) -> str:
    """The HTML page: title, a note, links to the sections, then each (anchor, heading,
    body) section whose body is not empty."""
    parts, links = [], []
    for anchor, heading, body in sections:
        if body:
            parts.append(f'<section id="{anchor}"><h2>{html.escape(heading)}</h2>{body}'
                         "</section>")
            links.append(f'<a href="#{anchor}">{html.escape(heading.split(" (")[0])}</a>')
    stamp = _dt.datetime.now().isoformat(timespec="seconds")
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{html.escape(title)}</title><style>{_CSS}{FIGURE_CSS}</style></head><body>\n"
            f"<h1>{html.escape(title)}</h1>"
            f'<p class="note">Generated {stamp} by sparsefric (Mahmoudkhani et al. 2023: '
            f"SINDy-SR3 static structure + iterative LuGre identification). Axis: "
            f"{axis}. Figures are vector graphics: zoom in with the browser."
            f"</p><nav>{''.join(links)}</nav>\n" + "\n".join(parts) + "\n</body></html>\n")


def _markdown(c: _Context, title: str) -> str:
    result, summary = c.result, c.summary
    status = "converged" if result.converged else "NOT converged"
    terms = result.final_terms
    lines = [f"# {title}", "", *(f"**{line}**  " for line in headline_lines(summary)), "",
             f"**Status:** {status} — {result.convergence_reason}", "",
             f"**Final model:** {', '.join(terms.loc[terms['active'], 'term'])} "
             f"(step 1: λ = {fmt(summary['selection'].get('lambda'))}, "
             f"{summary['selection'].get('n_active')} of {len(terms)} candidates).", "",
             *_md_warnings(result.warnings), "## Parameters", "", _md_table(c.params)]
    intervals = interval_table(result.model)
    if not intervals.empty:
        lines += ["", f"{result.model.uncertainty.level:.0%} intervals "
                  f"({_method_text(result.model)}):", "",
                  _md_table(intervals.drop(columns="name"))]
    if not c.metrics.empty:
        m = _metrics_view(c.metrics)
        lines += ["## Torque prediction", "", _md_table(m.drop(columns=["rms"]))]
    if c.runs and _diverged(c.runs):
        lines += [f"## Free run ({c.held.label} data)", "", f"Not available: {FREE_RUN_DIVERGED}."]
    elif c.runs:
        fr = pd.DataFrame([{"trajectory": short(n), "rms_q": r.rms_q, "rms_qd": r.rms_qd,
                            "max_abs_q": r.max_abs_q}
                           for n, r in zip(c.held.prep.names, c.runs, strict=True)])
        lines += [f"## Free run ({c.held.label} data)", "", _md_table(fr)]
    if len(c.cve):
        lines += ["## Constant-velocity points", "",
                  _md_table(c.cve.assign(trajectory=[short(n) for n in c.cve["trajectory"]]))]
    if "cve_file" in c.summary:
        lines += ["", f"## CVE file ({short(c.summary['cve_file']['source'])})", "",
                  _md_table(_cve_file_table(c))]
    lines += ["Figures: see `report.html`.", ""]
    return "\n".join(lines)


def _md_warnings(warnings: Sequence[str]) -> list[str]:
    """The lines of a Markdown section listing ``warnings`` in their order, the report's and
    the console's (none without a warning)."""
    if not warnings:
        return []
    return ["## Warnings", "", *(f"- {_md_text(text)}" for text in warnings), ""]


def _md_text(text: str) -> str:
    """``text`` with the characters Markdown reads as markup within words escaped (a term such
    as ``sign(qd)*exp(-|qd/Ws|^1.5)`` stays as written; f_c and [a, b] are plain text)."""
    return re.sub(r"([\\`*<])", r"\\\1", text)


def write_report(result: IdentificationResult, out_dir: str | Path,  # noqa: PLR0913 - keyword options
                 train: Sequence[Trajectory],
                 validate: Sequence[Trajectory] | None = None,
                 test: Sequence[Trajectory] | None = None, cve: pd.DataFrame | None = None, *,
                 known: Mapping[str, JointModel] | None = None,
                 compare: Mapping[str, JointModel] | None = None,
                 restart_s: float | None = 1.0,
                 title: str = "sparsefric identification report",
                 cve_file: pd.DataFrame | None = None) -> dict:
    """Write ``report.html`` (self-contained) and ``summary.md`` into ``out_dir``, atomically.

    Parameters
    ----------
    result : IdentificationResult
        A fitted estimator's ``result_``.
    out_dir : path-like
        Output directory (created if missing).
    train, validate, test : list of Trajectory
        The data sets (validate and test optional); the torque fit is shown on train and test,
        the headline, residuals, free run and friction loops on test (else validate, else
        train).
    cve : DataFrame, optional
        CVE points with columns trajectory, velocity [rad/s], friction [N·m], friction_std [N·m];
        default: computed from all given trajectories (pass an empty DataFrame to omit).
    known : mapping of str to JointModel, optional
        Models known beforehand by role: ``truth`` (of simulated data), ``reference`` (a
        published model); scored, drawn and tabulated beside the identified one.
    compare : mapping of str to JointModel, optional
        Models of other methods (``idim-ls`` …) fitted on the same data: overlaid, with their
        errors and fit %.
    restart_s : float, optional
        Restart period [s] of the free-run simulation (``None``: one open-loop run).
    title : str
        Page title.
    cve_file : DataFrame, optional
        A user's own constant-velocity points (:func:`sparsefric.validation.load_cve`): drawn
        on the friction–velocity plot ("CVE file") and scored against every static curve.

    Returns
    -------
    dict
        :func:`summary_dict`'s dictionary of the same results.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with threadpool_limits(1):  # vector products only: BLAS threads would just contend
        c = _Context(result, (train, validate, test), (cve, cve_file), _known(known),
                     compare or {}, restart_s)
        page, md = _page(c, title), _markdown(c, title)
    write_text(out / "report.html", page)
    write_text(out / "summary.md", md)
    return c.summary


# --------------------------------------------------------------------------- models A and B
def write_model_comparison(results: Mapping[str, IdentificationResult],
                           out_dir: str | Path, train: Sequence[Trajectory],
                           validate: Sequence[Trajectory] | None = None,
                           test: Sequence[Trajectory] | None = None, *,
                           cve_file: pd.DataFrame | None = None, restart_s: float | None = 1.0,
                           title: str = "sparsefric: model A against model B") -> None:
    """Write ``report.html`` into ``out_dir`` comparing models identified on the same data
    (``identify --model both``), atomically.

    The page holds each model's headline, their parameters side by side, the free-run relative
    errors of q and q̇ of every model on the same axes (test, else validation, else training
    data; the paper's Fig. 14) and the friction of each dynamic model along the training
    records, accelerating and decelerating, against the CVE points and the steady-state and
    step-1 curves (Fig. 15). It links to each model's own report, ``<name>/report.html``.

    Parameters
    ----------
    results : mapping of str to IdentificationResult
        Model name (``A``, ``B``: also its subfolder) → a fitted estimator's ``result_``.
    out_dir : path-like
        Output directory (created if missing).
    train, validate, test : list of Trajectory
        The data sets the models were identified and are scored on.
    cve_file : DataFrame, optional
        A user's own constant-velocity points (:func:`sparsefric.validation.load_cve`).
    restart_s : float, optional
        Restart period [s] of the free runs (``None``: one open-loop run).
    title : str
        Page title.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    contexts: dict[str, _Context] = {}
    with threadpool_limits(1):  # vector products only: BLAS threads would just contend
        for name, result in results.items():
            cve = next(iter(contexts.values())).cve if contexts else None  # the records': once
            contexts[f"model {name}"] = _Context(result, (train, validate, test),
                                                 (cve, cve_file), {}, {}, restart_s)
        page = _document(title, next(iter(results.values())).model.axis,
                         _comparison_sections(contexts, list(results)))
    write_text(out / "report.html", page)


def _signs_note(contexts: Mapping[str, _Context]) -> str:
    """The friction sign function of each model, in one line."""
    signs = [f"{label}: " + (f"tanh(K q̇), K = {fmt(c.result.model.tanh_k)} "
                             f"{c.unit['vel']}" if c.result.model.tanh_k > 0
                             else "sign(q̇)")
             for label, c in contexts.items()]
    return f'<p class="note">Friction sign function — {html.escape("; ".join(signs))}.</p>'


def _comparison_sections(contexts: Mapping[str, _Context],
                         names: Sequence[str]) -> list[tuple[str, str, str]]:
    """(anchor, heading, body) of the page of :func:`write_model_comparison`."""
    first = next(iter(contexts.values()))
    head = "".join(f"<div>{html.escape(f'[{label}] {line}')}</div>"
                   for label, c in contexts.items() for line in headline_lines(c.summary))
    links = " · ".join(f'<a href="{html.escape(n)}/report.html">model {html.escape(n)}: its '
                       "own report</a>" for n in names)
    params = parameter_table({label: c.result.model for label, c in contexts.items()})
    runs = {label: c.runs for label, c in contexts.items() if c.runs and not _diverged(c.runs)}
    errors = (figures.free_run_errors(runs, first.held.prep.names, first.unit,
                                      first.restart_s).svg() if runs else "")
    held = first.held.label if first.held is not None else ""
    return [("status", "Status", f'<div class="headline">{head}</div><p>{links}</p>'),
            ("parameters", "Parameters", _html_table(params) + _signs_note(contexts)),
            ("free-run", f"Free-run relative error ({held} data)", errors),
            ("branches", "Friction along the training records", _branches_html(first, contexts))]
