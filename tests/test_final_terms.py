"""One final model: the candidates with the final model's coefficients beside step 1's."""

from __future__ import annotations

import pandas as pd
import pytest

pytestmark = pytest.mark.slow  # the session's identification of data/example


def test_final_terms_hold_the_model_and_step_1_beside_it(fitted):
    result = fitted.result_
    terms = result.final_terms
    step1 = result.terms
    assert list(terms["term"][:len(step1)]) == list(step1["term"])
    pd.testing.assert_series_equal(terms["step1_coefficient"][:len(step1)],
                                   step1["coefficient"], check_names=False)
    assert list(terms["step1_active"][:len(step1)]) == list(step1["active"])
    m = result.model
    by_term = terms.set_index("term")["coefficient"]
    assert by_term["qdd"] == m.inertia and by_term["sign(qd)"] == m.coulomb
    for power, c in m.viscous:
        assert by_term["qd" if power == 1 else f"qd^{power}"] == c
    (delta, amplitude), = m.stribeck
    assert by_term[f"sign(qd)*exp(-|qd/Ws|^{delta:g})"] == amplitude
    # on data/example the refinement re-selects the terms: the two stories differ
    assert result.refined and list(terms["active"]) != list(terms["step1_active"])
    assert terms["active"].sum() == (terms["coefficient"] != 0).sum()


def test_the_notebook_display_lists_the_final_terms(fitted):
    from sparsefric.display import results_html

    page = results_html(fitted.result_)
    assert "Active terms</b> of the final model" in page and "qd^3" in page


def test_the_estimators_terms_are_the_models(fitted):
    """``terms_`` was step 1's sweep row: on data/example its Stribeck exponent 2.75 and no q̇³,
    q̇⁵ beside a model with δ = 1.5 and both, which a notebook then showed as the active terms."""
    terms = fitted.terms_
    pd.testing.assert_frame_equal(terms, fitted.result_.final_terms)
    active = terms[terms["active"]].set_index("term")["coefficient"]
    m = fitted.model_
    (delta, amplitude), = m.stribeck
    assert active[f"sign(qd)*exp(-|qd/Ws|^{delta:g})"] == amplitude
    assert {f"qd^{p}" if p > 1 else "qd" for p, _ in m.viscous} <= set(active.index)
