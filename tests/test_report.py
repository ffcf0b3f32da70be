"""The identification report: self-contained HTML with SVG figures, Markdown and JSON summaries,
one headline and one final model throughout."""

from __future__ import annotations

import html
import json
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sparsefric.data import load_trajectories
from sparsefric.estimator import SparseFric
from sparsefric.model import JointModel, parameter_table
from sparsefric.report import headline_lines, summary_dict, write_report

pytestmark = pytest.mark.slow  # whole identifications

EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "example"


@pytest.fixture(scope="session")
def light_fit():
    """A quick fit on one short trajectory (not a good model; enough to exercise the report)."""
    traj = load_trajectories([EXAMPLE / "train_v2p13.csv"])[0]
    n = 4000
    short = traj.with_(t=traj.t[:n], q=traj.q[:n], tau=traj.tau[:n],
                       truth={k: v[:n] for k, v in traj.truth.items()})
    test = load_trajectories([EXAMPLE / "test_v1p4.csv"])[0]
    m = 3000
    test = test.with_(t=test.t[:m], q=test.q[:m], tau=test.tau[:m], truth={})
    est = SparseFric(sigma0_starts=(1e4,), omega_starts=(0.05,),
                     thresholds=np.geomspace(0.1, 20, 6)).fit([short], validate=[short])
    return est, [short], [test]


@pytest.fixture(scope="session")
def rendered(light_fit, tmp_path_factory):
    est, train, test = light_fit
    out = tmp_path_factory.mktemp("report")
    truth = JointModel.load(EXAMPLE / "truth.json")
    summary = write_report(est.result_, out, train, test=test, known={"truth": truth},
                           restart_s=0.5)
    return out, summary


def test_files_written_atomically(rendered):
    out, _ = rendered
    names = sorted(p.name for p in out.iterdir())
    assert names == ["report.html", "summary.md"]  # no temporary files left behind


def test_html_is_self_contained(rendered):
    out, _ = rendered
    page = (out / "report.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "http://" not in page and "https://" not in page
    assert "<script" not in page and "<link" not in page and "<img" not in page
    figures = re.findall(r'<svg class="figure" id="fig-([a-z-]+)"', page)
    assert figures == ["selection", "coefficients", "friction", "branches-train", "convergence",
                       "torque-train", "torque-test", "residuals-test", "free-run", "loops-test"]
    assert page.count("<svg") == len(figures)
    assert len(page) < 3_000_000


def test_html_has_tables_and_status(rendered, light_fit):
    out, _ = rendered
    est = light_fit[0]
    page = (out / "report.html").read_text(encoding="utf-8")
    for text in ("Parameters", "σ0 (bristle stiffness)", "N·m/rad", "kg·m²", "Coulomb",
                 "Model selection", "Friction–velocity", "Outer-loop convergence",
                 "Torque prediction", "Free-run", "Hysteresis", "Data and preprocessing",
                 est.convergence_reason_.split()[0]):
        assert text in page, text
    assert page.count("<table") >= 6
    # the sweep's table says which rows are off the λ path (another δ, viscous q̇ only)
    assert "<th>variant</th>" in page and "<th>hierarchical</th>" in page
    for variant in set(est.selection_["variant"]) - {""}:
        assert f"<td>{variant}</td>" in page
    # every candidate term appears in the coefficient table
    for term in est.terms_["term"]:
        assert f"<td>{html.escape(term)}</td>" in page


def test_summary_markdown(rendered, light_fit):
    out, _ = rendered
    md = (out / "summary.md").read_text(encoding="utf-8")
    assert md.startswith("# ")
    assert "| parameter | unit |" in md
    assert "## Torque prediction" in md and "## Free run (test data)" in md
    assert ("converged" in md) and light_fit[0].convergence_reason_ in md


def test_summary_dict_is_json(rendered, light_fit):
    _, summary = rendered
    text = json.dumps(summary, allow_nan=False)
    back = json.loads(text)
    assert back["format"] == "sparsefric-summary/1"
    assert back["model"]["friction"]["kind"] == "lugre"
    assert back["selection"]["n_active"] == int(light_fit[0].terms_["step1_active"].sum())
    assert {r["model"] for r in back["metrics"]} == {"static", "dynamic", "truth"}
    assert {r["dataset"] for r in back["metrics"]} == {"train", "test"}
    assert len(back["history"]) >= 1
    assert "truth" in back


def test_summary_dict_without_data(light_fit):
    est = light_fit[0]
    d = summary_dict(est.result_)
    json.dumps(d, allow_nan=False)
    assert d["metrics"] == [] and d["data"] == {}
    assert d["converged"] == bool(est.converged_)


def test_dynamic_beats_static_on_training_torque(rendered):
    _, summary = rendered
    m = pd.DataFrame(summary["metrics"])
    train = m[m.dataset == "train"].set_index("model")["relative_rms"]
    assert train["dynamic"] < train["static"]


def test_parameter_table_units():
    truth = JointModel.load(EXAMPLE / "truth.json")
    table = parameter_table({"truth": truth, "static": truth.with_(kind="static")})
    row = table.set_index("parameter").loc["c_3 (viscous q̇^3)"]
    assert row["unit"] == "N·m·(s/rad)^3" and row["truth"] == 0.8
    s1 = table.set_index("parameter").loc["σ1 (bristle damping)"]
    assert s1["truth"] == 60 and np.isnan(s1["static"])
    prism = parameter_table({"m": truth.with_(axis="prismatic")})
    assert "a_c (gravity cos)" not in set(prism["parameter"])
    assert prism.set_index("parameter").loc["I (inertia)", "unit"] == "kg"


def test_report_without_cve_and_test(light_fit, tmp_path):
    est, train, _ = light_fit
    write_report(est.result_, tmp_path, train, cve=pd.DataFrame(), restart_s=None)
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    # no test data: no test torque figure; free run and hysteresis fall back to the training data
    assert page.count('<svg class="figure"') == 9
    assert "Free-run simulation (train data)" in page
    assert "Constant-velocity experiment points" not in page


def test_headline_gives_the_held_out_error_in_percent_beside_the_truth(rendered, light_fit):
    """Status, console and summary.md quote the same figures: the test torque error of the
    identified model next to the true model's, and the free-run error."""
    out, summary = rendered
    est, _, test = light_fit
    h = summary["headline"]
    assert h["dataset"] == "test" and h["model"] == "dynamic"
    assert h["torque_error"] == pytest.approx(est.result_.relative_error(test), rel=1e-9)
    truth = JointModel.load(EXAMPLE / "truth.json")
    assert h["others"]["truth"] == pytest.approx(est.result_.relative_error(test, truth),
                                                 rel=1e-9)
    first, second = headline_lines(summary)
    assert first.startswith(f"test torque error ‖τ − τ̂‖/‖τ‖ = {100 * h['torque_error']:.2f} %")
    assert f"(truth {100 * h['others']['truth']:.2f} %;" in first
    assert "free run on the test data (restarted every 0.5 s): velocity error" in second
    page = (out / "report.html").read_text(encoding="utf-8")
    status = page[page.index('id="status"'):page.index('id="parameters"')]
    md = (out / "summary.md").read_text(encoding="utf-8")
    for line in (first, second):
        assert html.escape(line) in status and line in md


def test_a_free_run_that_diverged_is_reported_as_not_available(light_fit, tmp_path,
                                                                monkeypatch):
    """A free run whose simulation left the finite numbers gives no error figure: the
    headline, the section and summary.md say it is not available and why."""
    import sparsefric.report as report
    from sparsefric.validation import free_run_compare

    def diverging(*args, **kwargs):
        run = free_run_compare(*args, **kwargs)
        return replace(run, qd_sim=np.full_like(run.qd_sim, np.nan))

    monkeypatch.setattr(report, "free_run_compare", diverging)
    est, train, test = light_fit
    summary = write_report(est.result_, tmp_path, train, test=test, restart_s=0.5)
    fr = summary["headline"]["free_run"]
    assert fr["velocity_error"] is None and "did not stay finite" in fr["unavailable"]
    second = headline_lines(summary)[1]
    assert second.startswith("free run on the test data (restarted every 0.5 s): not "
                             "available: the simulation of the identified model did not stay "
                             "finite")
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    section = page[page.index('id="free-run"'):page.index('id="loops"')]
    assert "Not available: the simulation" in section and "<svg" not in section
    assert "Not available: the simulation" in (tmp_path / "summary.md").read_text()


def test_headline_of_a_summary_without_free_run_errors_says_why():
    """A summary read back from JSON holds None for a non-finite free-run error."""
    summary = {"model": {"axis": "revolute"},
               "headline": {"dataset": "train", "torque_error": 0.1, "others": {},
                            "free_run": {"restart_s": 1.0, "velocity_error": None,
                                         "rms_q": None, "others": {"truth": None}}}}
    lines = headline_lines(summary)
    assert lines[1] == ("free run on the train data (restarted every 1 s): not available: "
                        "its errors are not finite numbers")


def test_a_headline_on_validation_records_the_model_was_fitted_on_says_so(light_fit):
    """Without test records the headline quotes the validation records; where the final
    coefficients were fitted on them too (the prediction-error refit, ``DESIGN.md`` §101),
    their error is no held-out figure, and the headline says to judge the model on test
    data."""
    est, train, test = light_fit
    result = replace(est.result_, model=est.model_.with_(extra={
        "fit": {"fitted_on": "the training and validation records"}}))
    summary = summary_dict(result, train, validate=test, restart_s=None)
    assert summary["headline"]["dataset"] == "validate" and summary["headline"]["fitted"]
    assert headline_lines(summary)[0].endswith(
        " — fitted on these records too, once they had chosen the terms: judge the model on "
        "test data")
    plain = summary_dict(est.result_, train, validate=test, restart_s=None)
    assert "fitted" not in plain["headline"] and "judge" not in headline_lines(plain)[0]


def test_one_final_model_in_chart_tables_and_summary(rendered, light_fit):
    out, summary = rendered
    terms = light_fit[0].result_.final_terms
    assert [t["term"] for t in summary["terms"]] == list(terms["term"])
    assert [t["active"] for t in summary["terms"]] == list(terms["active"])
    page = (out / "report.html").read_text(encoding="utf-8")
    chart = page[page.index('id="fig-coefficients"'):]
    chart = chart[:chart.index("</svg>")]
    assert "final model" in chart and "step 1 (static, selected λ)" in chart
    final = ", ".join(terms.loc[terms["active"], "term"])
    assert html.escape(final) in page


def test_ratios_are_shown_in_percent(rendered):
    out, summary = rendered
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "<th>‖τ − τ̂‖/‖τ‖ [%]</th>" in page and "<th>relative_rms</th>" not in page
    row = next(m for m in summary["metrics"] if m["dataset"] == "test" and m["model"] == "dynamic")
    assert f"<td>{100 * row['relative_rms']:.5g}</td>" in page


def test_comparison_and_reference_are_overlaid_with_their_fit(light_fit, tmp_path):
    est, train, test = light_fit
    truth = JointModel.load(EXAMPLE / "truth.json")
    rigid = truth.with_(kind="static", stribeck=(), sigma0=0.0, sigma1=0.0)
    summary = write_report(est.result_, tmp_path, train, test=test, cve=pd.DataFrame(),
                           known={"reference": truth}, compare={"idim-ls": rigid})
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    section = page[page.index('id="comparison"'):page.index('id="free-run"')]
    assert "fit on test data [%]" in section and 'id="fig-comparison"' in section
    for method in ("sparsefric", "reference", "idim-ls"):
        assert f"<td>{method}</td>" in section
    assert set(summary["headline"]["others"]) == {"static", "reference", "idim-ls"}
    assert "reference" in summary and "(reference " in headline_lines(summary)[0]


def test_a_prismatic_axis_has_no_gravity_in_its_notes():
    from sparsefric.report import _hysteresis_note

    assert "a_c cos q" in _hysteresis_note("revolute")
    assert "cos q" not in _hysteresis_note("prismatic") and "I q̈ + o" in _hysteresis_note(
        "prismatic")


def test_table_cells_show_an_open_interval_end_and_leave_nan_empty():
    from sparsefric.tables import fmt

    assert (fmt(np.inf), fmt(-np.inf), fmt(np.nan), fmt(1.23456789)) == ("∞", "−∞", "", "1.2346")
    assert fmt(np.float64(2.5e-7), digits=2) == "2.5e-07"


def test_the_terms_note_gives_the_bootstrap_share_of_a_rise_of_any_exponent_or_power():
    """With bootstrap inclusion frequencies the note under the terms table says how many
    resamples keep a Stribeck rise, whichever exponent, and a faster-than-linear viscous
    term, whichever power; without them it says nothing of either."""
    from types import SimpleNamespace

    from sparsefric.model import Uncertainty
    from sparsefric.report import _family_note
    from sparsefric.uncertainty import stribeck_family, viscous_family

    def result(inclusion):
        unc = Uncertainty(method="bootstrap", level=0.95, intervals={}, inclusion=inclusion)
        return SimpleNamespace(model=SimpleNamespace(uncertainty=unc))

    note = _family_note(result({"qd": 1.0, stribeck_family(1): 0.96}))
    assert "A Stribeck rise of any exponent: 96% of the resamples" in note
    assert "viscous" not in note
    note = _family_note(result({"qd": 1.0, stribeck_family(1): 0.5, viscous_family(1): 0.85}))
    assert "A faster-than-linear viscous term of any power: 85% of the resamples" in note
    assert _family_note(result({"qd": 1.0})) == ""
    assert _family_note(SimpleNamespace(model=SimpleNamespace(uncertainty=None))) == ""


def test_the_refinement_note_says_where_the_steady_levels_broke_a_tie_of_aicc():
    from sparsefric.report import _tie_note

    table = pd.DataFrame({"aicc": [10.0, 11.5, 14.0], "aic_r": [-1.5, 0.0, 2.5],
                          "steady_chi2": [48.0, 3.0, 1.0], "selected": [False, True, False],
                          "aicc_choice": [True, False, False]})
    note = _tie_note(table)
    assert "1.5 above AICc's choice" in note and "χ² 3 against 48" in note
    assert _tie_note(table.assign(aic_r=[0.0, 1.5, 4.0], selected=[True, False, False])) == ""
    assert _tie_note(table.drop(columns="steady_chi2")) == ""
    # a row below the selected one that may not be selected is no tie the levels broke
    assert _tie_note(table.assign(aicc_choice=[False, True, False])) == ""


def test_the_refinement_note_counts_the_rounds_and_names_a_merge_of_the_rises():
    from types import SimpleNamespace

    from sparsefric.report import _refinement_note
    from sparsefric.steps.refinement import Refinement

    table = SimpleNamespace(table=pd.DataFrame({"n_active": [5], "lambda": [0.3], "aicc": [1.0],
                                                "aic_r": [0.0], "selected": [True]}))

    def note(runs: int, merged: float | None) -> str:
        refinement = Refinement(best=None, table=table, runs=[None] * runs, merged=merged)
        return _refinement_note(SimpleNamespace(lugre=SimpleNamespace(refinement=refinement),
                                                warnings=[]))

    assert "replaced the first LuGre model after 2 round(s)" in note(2, None)
    assert "merged" not in note(2, None)
    merged = note(3, 2.75)
    assert "after 2 round(s)" in merged
    assert "Stribeck terms were then merged into one (δ = 2.75), which predicts better" in merged
    assert "did not predict better and was not kept; the model's Stribeck terms were then " \
           "merged into one (δ = 0.5)" in note(1, 0.5)
    assert "did not predict better and was not kept." in note(0, None)
