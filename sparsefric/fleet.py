"""Comparison of the joints of a batch: one row per joint, robust z-scores of the friction
parameters and their ratios to the other joints' median, and the summary page.

``summary.csv`` and ``summary.html`` of ``sparsefric batch`` (:mod:`sparsefric.batch`), from each
joint's :class:`~sparsefric.batch.JointResult`. The HTML page draws the friction curves of all
joints overlaid and a strip plot per friction parameter.
"""

from __future__ import annotations

import html
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sparsefric.atomic import write_text
from sparsefric.model import JointModel
from sparsefric.options import DEFAULT_OUTLIER_RATIO, DEFAULT_OUTLIER_Z

if TYPE_CHECKING:
    from sparsefric.batch import JointResult

#: Why a joint was redone (:func:`sparsefric.batch.inputs_changed`) whose results an earlier
#: version wrote without a record of their inputs.
UNRECORDED = "the earlier run recorded no inputs"

#: Friction parameters compared across joints by robust z-score (summary column → label).
COMPARED = {"breakaway": "break-away torque", "coulomb": "Coulomb f_c", "viscous": "viscous c_1",
            "sigma0": "σ0"}

def _overall_error(metrics: list[dict], dataset: str, model: str) -> float:
    """‖τ − τ̂‖/‖τ‖ over all trajectories of one data set (from per-trajectory metrics)."""
    rows = [m for m in metrics if m.get("dataset") == dataset and m.get("model") == model]
    err2 = sum(m["n"] * m["rms"] ** 2 for m in rows if m.get("rms") is not None)
    ref2 = sum(m["n"] * (m["rms"] / m["relative_rms"]) ** 2 for m in rows
               if m.get("rms") is not None and m.get("relative_rms"))
    return math.sqrt(err2 / ref2) if ref2 > 0 else math.nan


def _model_columns(model: dict) -> dict[str, Any]:
    m = JointModel.from_dict(model)
    viscous = dict(m.viscous)
    return {"axis": m.axis, "kind": m.kind, "inertia": m.inertia,
            "gravity_cos": m.gravity_cos, "gravity_sin": m.gravity_sin, "offset": m.offset,
            "coulomb": m.coulomb, "breakaway": m.breakaway_torque(),
            "stribeck_velocity": m.stribeck_velocity,
            "stribeck": ";".join(f"{d:g}:{a:.6g}" for d, a in m.stribeck),
            "viscous": viscous.get(1, 0.0),
            "viscous_higher": ";".join(f"{p}:{c:.6g}" for p, c in m.viscous if p != 1),
            "sigma0": m.sigma0 if m.kind == "lugre" else math.nan,
            "sigma1": m.sigma1 if m.kind == "lugre" else math.nan}


def _joint_row(res: JointResult) -> dict[str, Any]:
    row: dict[str, Any] = {"joint": res.joint, "status": res.status,
                           "run": "earlier" if res.earlier else "this", "redone": res.redone,
                           "error": res.error,
                           "seconds": round(res.seconds, 2)}
    s = res.summary
    if not s.get("model"):
        return row
    row["converged"] = s.get("converged")
    row["warnings"] = len(s.get("warnings", []))
    terms = [t["term"] for t in s.get("terms", []) if t.get("active")]
    row["active_terms"] = ";".join(terms)
    row["n_active"] = len(terms) if terms else None
    row["lambda"] = s.get("selection", {}).get("lambda")
    row.update(_model_columns(s["model"]))
    row["_model"] = s["model"]  # for the figures of summary.html; not in summary.csv
    model = "dynamic" if row["kind"] == "lugre" else "static"
    for dataset in ("train", "validate", "test"):
        row[f"{dataset}_rel_rms"] = _overall_error(s.get("metrics", []), dataset, model)
    speeds = [r.get("max_abs_qd") for rs in s.get("data", {}).values() for r in rs]
    row["max_abs_qd"] = max((v for v in speeds if v is not None), default=math.nan)
    return row


#: Least spread of a parameter across joints, relative to its median [-]: joints that agree
#: to better than this (e.g. the same data identified twice) have no meaningful scatter.
SPREAD_FLOOR = 0.01


def robust_z(values: np.ndarray, floor: float = SPREAD_FLOOR) -> np.ndarray:
    """Robust z-scores (x − median)/s with s = MAD/0.6745 (Iglewicz & Hoaglin), NaN-aware.

    Parameters
    ----------
    values : ndarray
        One parameter across joints (any unit); NaN entries are ignored and stay NaN.
    floor : float
        Least spread s relative to |median| [-] (:data:`SPREAD_FLOOR`).

    Returns
    -------
    ndarray
        Dimensionless scores; NaN for fewer than 3 finite values. Where the MAD is below the
        floor (most joints agree) the mean absolute deviation (× 1.2533) replaces it, and s
        is never below ``floor`` × |median|, so that a difference of a fraction of a percent
        does not score as an outlier; if s is 0 (every value 0) every score is 0.
    """
    x = np.asarray(values, dtype=float)
    ok = np.isfinite(x)
    z = np.full(x.shape, np.nan)
    if ok.sum() < 3:
        return z
    med = np.median(x[ok])
    dev = np.abs(x[ok] - med)
    least = floor * abs(med)
    scale = np.median(dev) / 0.6745
    if scale <= least:
        scale = max(1.253314 * np.mean(dev), least)
    z[ok] = (x[ok] - med) / scale if scale > 0 else 0.0
    return z


def ratio_to_others(values: np.ndarray) -> np.ndarray:
    """Each value divided by the median of the other joints' values [-], NaN-aware.

    Parameters
    ----------
    values : ndarray
        One positive parameter across joints (any unit); NaN entries are ignored and stay NaN.

    Returns
    -------
    ndarray
        NaN for fewer than 3 finite values or where the others' median is not positive. A
        break-away 1.5× the fleet's gives 1.5 however few joints there are and however they
        scatter, where a z-score needs a tight fleet.
    """
    x = np.asarray(values, dtype=float)
    ok = np.flatnonzero(np.isfinite(x))
    out = np.full(x.shape, np.nan)
    if len(ok) < 3:
        return out
    for i in ok:
        med = np.median(x[ok[ok != i]])
        out[i] = x[i] / med if med > 0 else np.nan
    return out


def _stands_out(z: float, ratio: float, outlier_z: float, outlier_ratio: float) -> bool:
    """Whether a parameter is flagged: |z| above ``outlier_z`` or a ratio beyond
    ``outlier_ratio`` either way."""
    far = math.isfinite(z) and abs(z) > outlier_z
    odd = math.isfinite(ratio) and (ratio >= outlier_ratio or ratio <= 1 / outlier_ratio)
    return far or odd


def summary_table(results: list[JointResult], outlier_z: float = DEFAULT_OUTLIER_Z,
                  outlier_ratio: float = DEFAULT_OUTLIER_RATIO) -> pd.DataFrame:
    """One row per joint: status, active terms, parameters, errors, z-scores, ratios, flags.

    Parameters
    ----------
    results : list of JointResult
    outlier_z : float
        Flag threshold on |robust z|.
    outlier_ratio : float
        Flag threshold on the ratio to the other joints' median (and its inverse).

    Returns
    -------
    DataFrame
        Columns joint, status, run (``this`` or ``earlier``), redone (why an earlier result
        was not kept, or ""), error, seconds, converged,
        warnings (how many the fit gave), active_terms (of the final model), n_active,
        lambda, axis, kind, parameters (units of the joint's axis: N·m, rad/s… or N,
        m/s…), ``*_rel_rms`` per data set [-],
        ``max_abs_qd`` [rad/s or m/s], ``z_<param>`` and ``ratio_<param>`` for
        :data:`COMPARED` (within joints of the same axis), ``flagged`` (the parameters that
        stand out, ';'-separated) and ``_model`` (the model as a dict, left out of
        summary.csv).
    """
    df = pd.DataFrame([_joint_row(r) for r in results])
    for col in ("axis", *COMPARED):
        if col not in df:
            df[col] = np.nan
    for name in COMPARED:
        df[f"z_{name}"] = np.nan
        df[f"ratio_{name}"] = np.nan
    for _, idx in df[df["axis"].notna()].groupby("axis").groups.items():
        for name in COMPARED:
            values = df.loc[idx, name].to_numpy(float)
            df.loc[idx, f"z_{name}"] = robust_z(values)
            df.loc[idx, f"ratio_{name}"] = ratio_to_others(values)
    df["flagged"] = [";".join(n for n in COMPARED if _stands_out(
        row[f"z_{n}"], row[f"ratio_{n}"], outlier_z, outlier_ratio)) for _, row in df.iterrows()]
    return df


_CSS = """
body{font-family:sans-serif;max-width:1400px;margin:1em auto;padding:0 1em;color:#222}
.scroll{width:fit-content;max-width:100%;overflow:auto;max-height:40em}
table{border-collapse:collapse;font-size:0.8em}td,th{border:1px solid #ccc;padding:2px 5px}
th{background:#f0f0f0;position:sticky;top:0}td{text-align:right}td.l{text-align:left}
tr.failed td{background:#fde8e8}td.flag{background:#ffe9a8;font-weight:bold}
.note{color:#555;font-size:0.9em}
"""
_SHOWN = ("joint", "status", "run", "redone", "converged", "active_terms", "inertia", "gravity_cos",
          "gravity_sin", "coulomb", "breakaway", "stribeck_velocity", "viscous", "sigma0",
          "sigma1", "train_rel_rms", "validate_rel_rms", "test_rel_rms",
          *(f"z_{n}" for n in COMPARED), *(f"ratio_{n}" for n in COMPARED), "flagged",
          "seconds")
#: Columns shown in % (ratios ‖τ − τ̂‖/‖τ‖) under a header that says so.
_PERCENT = {f"{d}_rel_rms": f"{d} ‖τ − τ̂‖/‖τ‖ [%]" for d in ("train", "validate", "test")}


def _flag_of(col: str, row: pd.Series, outlier_z: float, outlier_ratio: float) -> bool:
    for prefix in ("z_", "ratio_"):
        if col.startswith(prefix):
            col = col[len(prefix):]
    return col in COMPARED and _stands_out(row.get(f"z_{col}", math.nan),
                                           row.get(f"ratio_{col}", math.nan),
                                           outlier_z, outlier_ratio)


def _cell(col: str, value: Any, row: pd.Series, limits: tuple[float, float]) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "<td></td>"
    if col == "joint" and row.get("status") != "failed":
        j = html.escape(str(value))
        return f'<td class="l"><a href="{j}/report.html">{j}</a></td>'
    if col in _PERCENT:
        value = 100 * float(value)
    is_num = isinstance(value, float | np.floating)
    text = f"{value:.4g}" if is_num else html.escape(str(value))
    cls = "flag" if _flag_of(col, row, *limits) else ("l" if isinstance(value, str) else "")
    return f'<td class="{cls}">{text}</td>' if cls else f"<td>{text}</td>"


def _joints_table(df: pd.DataFrame, limits: tuple[float, float]) -> str:
    cols = [c for c in _SHOWN if c in df.columns]
    head = "".join(f"<th>{html.escape(_PERCENT.get(c, c))}</th>" for c in cols)
    rows = []
    for _, row in df.iterrows():
        cls = ' class="failed"' if row["status"] == "failed" else ""
        rows.append(f"<tr{cls}>" + "".join(_cell(c, row[c], row, limits) for c in cols)
                    + "</tr>")
    return (f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}'
            "</tbody></table></div>")


def flag_reasons(row: pd.Series) -> str:
    """Why a joint's parameters are flagged: "breakaway 1.52× the others' median (z 2.1)"."""
    out = []
    for name in filter(None, str(row.get("flagged", "")).split(";")):
        ratio, z = row.get(f"ratio_{name}", math.nan), row.get(f"z_{name}", math.nan)
        out.append(f"{COMPARED.get(name, name)} {ratio:.3g}× the others' median (z {z:.2g})")
    return "; ".join(out)


def _items(df: pd.DataFrame, column: str) -> str:
    def text(r: pd.Series) -> str:
        return flag_reasons(r) if column == "flagged" else str(r[column])

    items = "".join(f"<li><b>{html.escape(str(r['joint']))}</b>: {html.escape(text(r))}</li>"
                    for _, r in df.iterrows())
    return f"<ul>{items or '<li>none</li>'}</ul>"


def _fleet_figures(df: pd.DataFrame, limits: tuple[float, float]) -> str:
    """Per axis: the friction curves of every joint overlaid and the strip plots."""
    from sparsefric.figures import fleet_friction, fleet_strips

    out = []
    done = df[df["status"] == "ok"]
    for axis, joints in done.groupby("axis"):
        models = {r["joint"]: JointModel.from_dict(r["_model"]) for _, r in joints.iterrows()}
        v_max = float(np.nanmax(joints["max_abs_qd"].to_numpy(float), initial=0.0)) or 1.0
        flags = {name: [_stands_out(r[f"z_{name}"], r[f"ratio_{name}"], *limits)
                        for _, r in joints.iterrows()] for name in COMPARED}
        out += [fleet_friction(models, v_max, str(axis)).svg(),
                fleet_strips(joints, COMPARED, flags, str(axis)).svg()]
    return "".join(out)


def _summary_html(df: pd.DataFrame, outlier_z: float, outlier_ratio: float) -> str:
    from sparsefric.svgplot import CSS as FIGURE_CSS

    limits = (outlier_z, outlier_ratio)
    counts = count_text(df)
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>sparsefric batch summary</title><style>{_CSS}{FIGURE_CSS}</style></head>"
            f"<body>\n<h1>sparsefric batch summary</h1><p>{len(df)} joints: {counts}.</p>"
            f'<p class="note">Parameters in the units of each joint\'s axis (revolute: '
            f"N·m, rad/s, N·m·s/rad, N·m/rad; prismatic: N, m/s, N·s/m, N/m). z_*: robust "
            f"z-score 0.6745 (x − median)/MAD across joints of the same axis, the spread "
            f"taken as at least {100 * SPREAD_FLOOR:g} % of the median; ratio_*: the "
            f"value over the median of the other joints; highlighted where |z| &gt; "
            f"{outlier_z:g} or the ratio is ≥ {outlier_ratio:g} or ≤ {1 / outlier_ratio:.3g}. "
            f"‖τ − τ̂‖/‖τ‖ of the final model. run: this run, or kept from an earlier run "
            f"(with its timing); redone: why an earlier run's results were not kept (the "
            f"joint's row or files changed).</p>\n"
            f"<h2>Friction that stands out</h2>{_items(df[df['flagged'] != ''], 'flagged')}\n"
            f"<h2>Failed joints</h2>{_items(df[df['status'] == 'failed'], 'error')}\n"
            f"<h2>The fleet</h2>{_fleet_figures(df, limits)}\n"
            f"<h2>Joints</h2>{_joints_table(df, limits)}\n</body></html>\n")


def count_text(df: pd.DataFrame) -> str:
    """The joints by status, e.g. "1 failed, 3 ok (1 kept from an earlier run, 1 redone because
    its inputs changed)"."""
    redone = df["redone"] if "redone" in df else pd.Series("", index=df.index)
    parts = []
    for status, n in sorted(df["status"].value_counts().items()):
        mine = df["status"] == status
        kept = int((mine & (df["run"] == "earlier")).sum())
        unrecorded = int((mine & (redone == UNRECORDED)).sum())
        changed = int((mine & (redone != "") & (redone != UNRECORDED)).sum())
        notes = [f"{kept} kept from an earlier run"] if kept else []
        if changed:
            notes.append(f"{changed} redone because {'its' if changed == 1 else 'their'} "
                         "inputs changed")
        if unrecorded:
            notes.append(f"{unrecorded} redone because the earlier run recorded no inputs")
        parts.append(f"{n} {status}" + (f" ({', '.join(notes)})" if notes else ""))
    return ", ".join(parts)


def write_summary(table: pd.DataFrame, out_dir: str | os.PathLike,
                  outlier_z: float = DEFAULT_OUTLIER_Z,
                  outlier_ratio: float = DEFAULT_OUTLIER_RATIO) -> None:
    """Write ``summary.csv`` and ``summary.html`` into ``out_dir`` atomically."""
    out = Path(out_dir)
    shown = table.drop(columns=[c for c in table.columns if c.startswith("_")])
    write_text(out / "summary.csv", shown.to_csv(index=False))
    write_text(out / "summary.html", _summary_html(table, outlier_z, outlier_ratio))
