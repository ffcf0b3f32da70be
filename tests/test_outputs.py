"""The files of a result folder agree with each other: one list of warnings, one meaning of each
step-1 coefficient, the test records checked against the model's validity range."""

from __future__ import annotations

import html
import re

import pandas as pd
import pytest

from sparsefric.data import load_trajectories
from sparsefric.identify import fit_joint, settings
from sparsefric.model import JointModel
from sparsefric.outputs import write_results

from .conftest import EXAMPLE

#: The quick options of a static identification.
FAST = {"static_only": True, "library": "coulomb-viscous", "differentiation": "butterworth"}


@pytest.fixture(scope="module")
def slow_only(tmp_path_factory):
    """data/example's joint trained at 0.127 rad/s only (a static model, held-out blocks) and
    tested on its 1.4 rad/s record, far beyond the training speeds: the result, its intervals
    and its folder."""
    train = load_trajectories([EXAMPLE / "train_v0p127.csv"])
    test = load_trajectories([EXAMPLE / "test_v1p4.csv"])
    result, unc = fit_joint(train, None, settings(FAST))
    out = tmp_path_factory.mktemp("outputs")
    write_results(result, out, train, None, test)
    return result, unc, out, (train, test)


def _section(page: str, anchor: str) -> str:
    return page.split(f'<section id="{anchor}">', 1)[1].split("</section>", 1)[0]


def test_summary_md_lists_the_warnings_in_the_order_of_the_report(slow_only):
    result, _, out, _ = slow_only
    md = (out / "summary.md").read_text(encoding="utf-8")
    listed = md.split("\n## Warnings\n", 1)[1].split("\n## ", 1)[0]
    items = [re.sub(r"\\(.)", r"\1", line[2:]) for line in listed.splitlines()
             if line.startswith("- ")]
    page = (out / "report.html").read_text(encoding="utf-8")
    shown = re.findall(r"<b>Warning:</b> (.*?)</p>", _section(page, "selection"))
    assert len(result.warnings) >= 3
    assert items == [html.unescape(text) for text in shown] == result.warnings


def test_terms_csv_gives_the_static_model_beside_the_sweep_and_says_which_is_which(slow_only):
    result, _, out, _ = slow_only
    terms = pd.read_csv(out / "terms.csv").set_index("kind")
    static = JointModel.load(out / "static_model.json")
    expected = {"inertia": static.inertia, "gravity_cos": static.gravity_cos,
                "gravity_sin": static.gravity_sin, "coulomb": static.coulomb}
    for kind, value in expected.items():
        assert terms.loc[kind, "static_coefficient"] == pytest.approx(value, rel=1e-12), kind
    selection = pd.read_csv(out / "selection.csv")
    row = selection[selection["selected"]].iloc[0]
    assert list(terms["step1_coefficient"]) == pytest.approx([row[t] for t in terms["term"]])
    # the sweep's coefficient is not the static model's: the files say which is which
    assert terms.loc["inertia", "step1_coefficient"] != terms.loc["inertia",
                                                                  "static_coefficient"]
    note = _section((out / "report.html").read_text(encoding="utf-8"), "selection")
    assert "static_coefficient" in note and "static_model.json" in note
    assert "step1_coefficient" in note and "selected λ" in note


def test_test_records_beyond_the_validity_range_are_a_warning_beside_the_test_error(slow_only,
                                                                                  tmp_path):
    result, _, out, (train, test) = slow_only
    outside = [f for f in result.findings if f.code == "test_outside_validity"]
    assert len(outside) == 1
    text = outside[0].message
    assert text.startswith("test data: ") and "velocity -1.4" in text
    assert text.endswith(result.model.outside_message(*_signals(result, test)))
    status = _section((out / "report.html").read_text(encoding="utf-8"), "status")
    assert "test torque error" in status and html.escape(text) in status
    write_results(result, tmp_path, train, None, test)  # a second writing: one warning
    assert [f.code for f in result.findings].count("test_outside_validity") == 1


def _signals(result, trajectories):
    signals = result.prepare(trajectories).signals
    return signals.q, signals.qd


def test_records_inside_the_range_give_no_validity_warning(slow_only, tmp_path):
    result, _, _, (train, _) = slow_only
    before = list(result.findings)
    write_results(result, tmp_path, train, None, train)
    assert result.findings == before


def test_a_static_models_inertia_warning_says_nothing_of_the_bristle(slow_only):
    result, unc, _, _ = slow_only
    assert result.model.kind == "static"
    wide = [w for w in result.warnings if w.startswith("the inertia is poorly determined")]
    assert wide and not any("parts per sample interval" in w or "bristle" in w for w in wide)
    assert (unc.table["integration_gap"] == 0).all()
