"""HTML views of results for Jupyter (``_repr_html_``), without matplotlib.

>>> from IPython.display import HTML                                    # doctest: +SKIP
>>> HTML(results_html(SparseFric().fit(train).result_))                 # doctest: +SKIP

:func:`results_html` renders an :class:`~sparsefric.result.IdentificationResult` as tables:
status and convergence, the selected λ, the parameters of the static and dynamic models with
units, and the active terms of the final model (a :class:`~sparsefric.model.JointModel` renders
itself). It does not import :mod:`sparsefric.report`, which evaluates data sets and is not
needed to show a fit.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from sparsefric.model import parameter_table
from sparsefric.result import IdentificationResult
from sparsefric.tables import NOTEBOOK_STYLE, fmt, html_table

DIGITS = 6


def unfitted_html(params: Mapping[str, Any]) -> str:
    """An estimator that is not fitted yet: a one-line note with its main options."""
    shown = ", ".join(f"{k} = {html.escape(str(params[k]))}" for k in ("axis", "model", "library"))
    return f'{NOTEBOOK_STYLE}<div class="sparsefric"><b>SparseFric</b> (not fitted): {shown}</div>'


def _status(result: IdentificationResult) -> str:
    cls, word = ("ok", "converged") if result.converged else ("bad", "NOT converged")
    return (f'<p><span class="{cls}">{word}</span>: '
            f"{html.escape(str(result.convergence_reason))}</p>")


def _selection(result: IdentificationResult) -> str:
    sel = result.selection
    row = sel[sel["selected"]].iloc[0]
    return (f"<p>Step 1: λ = {fmt(float(row['lambda']), DIGITS)} selected by AICc on "
            f"{html.escape(str(result.sweep.validation_source))} data "
            f"({len(sel)} values swept): {int(row['n_active'])} of {len(result.terms)} "
            f"candidate terms active, Ω_s = {fmt(float(row['omega_s']), DIGITS)}.</p>")


def _convergence(result: IdentificationResult) -> str:
    hist = result.history
    if hist.empty:
        return ""
    win = result.winning_history
    cols = [c for c in ("outer", "error_rel", "xi_u", "sigma0", "sigma1", "omega_s", "coulomb")
            if c in win]
    last = win.tail(1)[cols]
    starts = hist.groupby("sigma0_init")["outer"].max()
    text = ", ".join(f"σ0₀ = {k:g}: {int(v)}" for k, v in starts.items())
    return (f"<p>LuGre outer iterations per start ({text}); last iteration of the winning "
            f"start:</p>" + html_table(cols, [[float(v) for v in r] for r in last.to_numpy()],
                                       digits=DIGITS))


def _warnings(result: IdentificationResult) -> str:
    """The fit's warnings as a list (empty without any)."""
    if not result.warnings:
        return ""
    items = "".join(f"<li>{html.escape(w)}</li>" for w in result.warnings)
    return f"<p><b>Warnings</b> ({len(result.warnings)})</p><ul>{items}</ul>"


def results_html(result: IdentificationResult) -> str:
    """An identification as HTML (the estimator's ``_repr_html_``).

    Returns
    -------
    str
        Status and convergence, the warnings, λ selection, parameter table (static and dynamic
        models, with units) and the terms of the final model with their coefficients and units
        (step 1's beside).
    """
    models = {"static": result.static_model}
    if result.model.kind == "lugre":
        models["dynamic"] = result.model
    params = parameter_table(models)
    terms = result.final_terms
    active = terms[terms["active"]]
    sign = "B" if result.model.tanh_k > 0 else "A"
    return (f'{NOTEBOOK_STYLE}<div class="sparsefric"><b>SparseFric</b> '
            f"({result.model.axis}, model {sign})" + _status(result) + _warnings(result)
            + _selection(result)
            + "<p><b>Parameters</b></p>"
            + html_table(list(params.columns), params.itertuples(index=False), digits=DIGITS)
            + "<p><b>Active terms</b> of the final model (step 1's coefficient beside)</p>"
            + html_table(["term", "kind", "coefficient", "unit", "step 1"],
                         active[["term", "kind", "coefficient", "unit", "step1_coefficient"]]
                         .itertuples(index=False), digits=DIGITS)
            + _convergence(result) + "</div>")
