"""Term inclusion frequencies of the bootstrap: how often each friction candidate, and each
family of nearly collinear candidates, survives the resamples; and the AICc path with them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pandas as pd

from sparsefric.model import JointModel
from sparsefric.uncertainty.result import ParameterUncertainty

if TYPE_CHECKING:  # the draws are the bootstrap's, which imports this module
    from sparsefric.uncertainty.bootstrap import Draw

__all__ = [
    "FAMILIES",
    "inclusion_table",
    "model_terms",
    "path_with_inclusion",
    "stribeck_family",
    "viscous_family",
]


def model_terms(model: JointModel, terms: Sequence) -> frozenset[str]:
    """Plain-text names of the step-1 candidates (``terms``: :class:`~sparsefric.
    feature_library.Term`) that ``model``'s friction contains."""
    have = {("viscous", float(p)) for p, c in model.viscous if c != 0}
    have |= {("stribeck", float(d)) for d, a in model.stribeck if a != 0}
    if model.coulomb != 0 or model.kind == "lugre":
        have.add(("coulomb", 0.0))
    return frozenset(t.name for t in terms if (t.kind, float(t.param)) in have)


def inclusion_table(terms: Sequence, model: JointModel, draws: Sequence[Draw]) -> pd.DataFrame:
    """Inclusion frequency of every friction candidate (``terms``) over ``draws``: in the step-1
    AICc choice and in the final model; ``selected``: in ``model``; ``family``: the kind of the
    family rows that judge the candidate ('' for none).

    Below the candidates, the rows of each family of nearly collinear candidates
    (:data:`FAMILIES`): the share of draws with at least k members of any exponent or power,
    for k = 1 up to the most that the model or a draw has. The resamples split one Stribeck
    rise between neighbouring exponents, and a faster-than-linear viscous rise between q̇²…q̇⁵
    (over one speed range q̇³ and q̇⁵ correlate to 0.98); whether there is such a rise at all
    is the family's row."""
    friction = [t for t in terms if t.kind in ("viscous", "coulomb", "stribeck")]
    chosen = model_terms(model, friction)
    n = max(len(draws), 1)
    table = pd.DataFrame({
        "term": [t.name for t in friction], "kind": [t.kind for t in friction],
        "selected": [t.name in chosen for t in friction],
        "step1": [sum(t.name in d.step1 for d in draws) / n for t in friction],
        "final": [sum(t.name in d.final for d in draws) / n for t in friction],
        "family": [next((kind for kind, (member, _) in FAMILIES.items() if member(t)), "")
                   for t in friction]})
    rows = [table]
    for kind, (_, name) in FAMILIES.items():
        members = frozenset(table.term[table.family == kind])
        if not members:
            continue
        count = {part: [len(getattr(d, part) & members) for d in draws]
                 for part in ("step1", "final")}
        most = max([1, len(chosen & members), *count["step1"], *count["final"]])
        ks = range(1, most + 1)
        rows.append(pd.DataFrame({
            "term": [name(k) for k in ks], "kind": kind,
            "selected": [len(chosen & members) >= k for k in ks],
            **{part: [sum(c >= k for c in count[part]) / n for k in ks]
               for part in ("step1", "final")}, "family": ""}))
    return pd.concat(rows, ignore_index=True)


def stribeck_family(k: int) -> str:
    """Plain-text name of the inclusion row "at least ``k`` Stribeck terms, any exponent"."""
    return "Stribeck rise, any delta" if k == 1 else f"{k} Stribeck rises, any delta"


def viscous_family(k: int) -> str:
    """Plain-text name of the inclusion row "at least ``k`` viscous powers q̇ᵖ, p ≥ 2"."""
    return ("faster-than-linear viscous term, any power" if k == 1
            else f"{k} faster-than-linear viscous terms, any power")


#: Families of candidates the resamples share out (:func:`inclusion_table`): kind of their rows
#: → (whether a candidate term is a member, the row's name for "at least k members").
FAMILIES = {
    "stribeck_family": (lambda t: t.kind == "stribeck", stribeck_family),
    "viscous_family": (lambda t: t.kind == "viscous" and int(t.param) >= 2, viscous_family),
}


def path_with_inclusion(selection: pd.DataFrame, unc: ParameterUncertainty) -> pd.DataFrame:
    """The step-1 AICc path (``IdentificationResult.selection``: one row per λ, one column per
    candidate term) with two more rows, ``inclusion (step 1)`` and ``inclusion (final)``: the
    bootstrap inclusion frequency [-] of each term, under its column (other columns empty).
    Without inclusion frequencies (the fast method) the path is returned unchanged."""
    if unc.inclusion is None:
        return selection
    freq = unc.inclusion.set_index("term")
    rows = pd.DataFrame([freq.step1.to_dict(), freq.final.to_dict()],
                        index=["inclusion (step 1)", "inclusion (final)"])
    return pd.concat([selection, rows.reindex(columns=selection.columns)])
