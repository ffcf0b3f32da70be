"""HTML views of results for Jupyter (``_repr_html_``), without matplotlib.

>>> from IPython.display import HTML                                    # doctest: +SKIP
>>> HTML(results_html(SparseFric().fit(train)))                         # doctest: +SKIP

:func:`results_html` renders a fitted :class:`~sparsefric.identify.SparseFric` as tables:
status and convergence, the selected λ, the parameters of the static and dynamic models with
units, and the active terms. :func:`model_html` renders a
:class:`~sparsefric.model.JointModel`. Neither imports :mod:`sparsefric.report` (which switches
matplotlib to the Agg backend and would stop inline figures in a notebook).
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

from sparsefric.model import JointModel, parameter_table

_STYLE = ("<style>.sparsefric table{border-collapse:collapse;font-size:0.9em;margin:0.3em 0}"
          ".sparsefric td,.sparsefric th{border:1px solid #ccc;padding:1px 6px;text-align:right}"
          ".sparsefric th{background:#f4f4f4}.sparsefric td:first-child{text-align:left}"
          ".sparsefric .ok{color:#060;font-weight:bold}.sparsefric .bad{color:#a00;"
          "font-weight:bold}</style>")


def _fmt(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else ""
    if isinstance(value, float):
        return "" if not math.isfinite(value) else f"{value:.6g}"
    return html.escape(str(value))


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{_fmt(v)}</td>" for v in row) + "</tr>"
                   for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def model_html(model: JointModel) -> str:
    """A :class:`~sparsefric.model.JointModel` as an HTML table (parameter, unit, value)."""
    rows = model.parameters()
    return (f'{_STYLE}<div class="sparsefric"><b>JointModel</b> ({model.axis}, friction '
            f"{model.kind})" + _table(["parameter", "unit", "value"], rows) + "</div>")


def _status(est) -> str:
    cls, word = ("ok", "converged") if est.converged_ else ("bad", "NOT converged")
    return (f'<p><span class="{cls}">{word}</span>: '
            f"{html.escape(str(est.convergence_reason_))}</p>")


def _selection(est) -> str:
    sel = est.selection_
    row = sel[sel["selected"]].iloc[0]
    n = len(est.terms_)
    return (f"<p>Step 1: λ = {_fmt(float(row['lambda']))} selected by AICc on "
            f"{html.escape(str(est.sweep_.validation_source))} data "
            f"({len(sel)} values swept): {int(row['n_active'])} of {n} candidate terms active, "
            f"Ω_s = {_fmt(float(row['omega_s']))}.</p>")


def _convergence(est) -> str:
    hist = est.history_
    if hist is None or hist.empty:
        return ""
    s0 = getattr(est, "sigma0_init_", None)
    win = hist[hist["sigma0_init"] == s0] if s0 is not None else hist
    cols = [c for c in ("outer", "error_rel", "xi_u", "sigma0", "sigma1", "omega_s", "coulomb")
            if c in win]
    last = win.tail(1)[cols]
    starts = hist.groupby("sigma0_init")["outer"].max()
    text = ", ".join(f"σ0₀ = {k:g}: {int(v)}" for k, v in starts.items())
    return (f"<p>LuGre outer iterations per start ({text}); last iteration of the winning "
            f"start:</p>" + _table(cols, [[float(v) for v in r] for r in last.to_numpy()]))


def results_html(est) -> str:
    """A fitted :class:`~sparsefric.identify.SparseFric` as HTML (Jupyter's ``_repr_html_``).

    Parameters
    ----------
    est : SparseFric
        The estimator; if it is not fitted, a one-line note with its options.

    Returns
    -------
    str
        Status and convergence, λ selection, parameter table (static and dynamic models, with
        units) and the active terms with their coefficients and units.
    """
    if not hasattr(est, "model_"):
        return (f'{_STYLE}<div class="sparsefric"><b>SparseFric</b> (not fitted): axis = '
                f"{html.escape(str(est.axis))}, model = {html.escape(str(est.model))}, library = "
                f"{html.escape(str(est.library))}</div>")
    models = {"static": est.static_model_}
    if est.model_.kind == "lugre":
        models["dynamic"] = est.model_
    params = parameter_table(models)
    active = est.terms_[est.terms_["active"]]
    return (f'{_STYLE}<div class="sparsefric"><b>SparseFric</b> ({est.model_.axis}, model '
            f"{html.escape(str(est.model))})" + _status(est) + _selection(est)
            + "<p><b>Parameters</b></p>"
            + _table(list(params.columns), params.itertuples(index=False))
            + "<p><b>Active terms</b> (step 1)</p>"
            + _table(["term", "kind", "coefficient", "unit"],
                     active[["term", "kind", "coefficient", "unit"]].itertuples(index=False))
            + _convergence(est) + "</div>")
