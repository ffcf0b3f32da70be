"""A user's own constant-velocity results (``identify --cve FILE``): reading and checking the
file, the score of a static curve against it, the overlay on the friction–velocity plot."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sparsefric.cli import main
from sparsefric.errors import DataError
from sparsefric.figures import friction_curves
from sparsefric.model import JointModel, units
from sparsefric.validation import CVE_POINT_COLUMNS, cve_score, cve_table, load_cve

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "data" / "example"
#: Speeds of the written CVE file [rad/s]: inside the range the example's records cover.
SPEEDS = np.r_[np.geomspace(0.05, 2.0, 8), -np.geomspace(0.05, 2.0, 4)]


@pytest.fixture(scope="module")
def truth() -> JointModel:
    return JointModel.load(EXAMPLE / "truth.json")


def _write_cve(path: Path, model: JointModel, scale: float = 1.0, std: float = 0.2) -> Path:
    """A CVE file on ``model``'s static curve times ``scale``."""
    pd.DataFrame({"velocity": SPEEDS,
                  "friction": scale * model.static_friction(SPEEDS, outside="ignore"),
                  "std": std}).to_csv(path, index=False)
    return path


def test_file_becomes_cve_point_rows(tmp_path, truth):
    path = _write_cve(tmp_path / "runs.csv", truth)
    points = load_cve(path)
    assert list(points.columns) == CVE_POINT_COLUMNS
    assert len(points) == len(SPEEDS) and set(points["trajectory"]) == {str(path)}
    np.testing.assert_allclose(points["velocity"], SPEEDS)
    np.testing.assert_allclose(points["friction_std"], 0.2)


def test_std_is_optional_and_degrees_are_converted():
    table = pd.DataFrame({"velocity": [10.0, -30.0], "friction": [5.0, -6.0]})
    points = cve_table(table, "runs.csv", velocity_scale=np.pi / 180)
    np.testing.assert_allclose(points["velocity"], np.deg2rad([10.0, -30.0]))
    np.testing.assert_array_equal(points["friction_std"], [0.0, 0.0])


@pytest.mark.parametrize(("table", "expected"), [
    ({"speed": [1.0], "friction": [2.0]}, "no column 'velocity'"),
    ({"velocity": [1.0, 2.0], "friction": ["3", "fast"]}, "column 'friction', line 3: not a"),
    ({"velocity": [0.0], "friction": [2.0]}, "column 'velocity', line 2: zero"),
    ({"velocity": [1.0, -1.0], "friction": [2.0, 2.0]}, "column 'friction', line 3: zero or opp"),
    ({"velocity": [1.0, 2.0], "friction": [2.0, 0.0]}, "column 'friction', line 3: zero or"),
    ({"velocity": [1.0], "friction": [2.0], "std": [-0.1]}, "column 'std', line 2: negative"),
    ({"velocity": [], "friction": []}, "no rows"),
])
def test_bad_table_names_file_column_and_line(table, expected):
    with pytest.raises(DataError, match=r"^runs\.csv: " + re.escape(expected)):
        cve_table(pd.DataFrame(table), "runs.csv")


def test_a_file_with_comment_lines_names_the_line_of_the_bad_row(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("# bench 2, 20 °C\nvelocity,friction\n0.1,2.0\n\n# backwards\n-0.1,2.0\n")
    with pytest.raises(DataError, match=rf"^{re.escape(str(path))}: column 'friction', line 6: "
                       "zero or opposite"):
        load_cve(path)

def test_score_is_zero_on_the_curve_and_the_relative_offset_off_it(truth):
    on = cve_table(pd.DataFrame({"velocity": SPEEDS,
                                 "friction": truth.static_friction(SPEEDS, outside="ignore")}),
                   "runs.csv")
    assert cve_score(truth, on).rms_relative == pytest.approx(0.0, abs=1e-12)
    off = on.assign(friction=1.1 * on["friction"])
    score = cve_score(truth, off)
    # model − 1.1 model over 1.1 model, at every point
    assert score.rms_relative == pytest.approx(0.1 / 1.1, rel=1e-9)
    assert score.worst_relative == pytest.approx(-0.1 / 1.1, rel=1e-9)
    assert abs(score.worst_velocity) == pytest.approx(2.0)  # the largest friction
    assert score.n == len(SPEEDS)


def test_figure_overlays_the_file_points_with_their_own_legend(tmp_path, truth):
    points = load_cve(_write_cve(tmp_path / "runs.csv", truth))
    svg = friction_curves({"truth": truth}, 2.5, units("revolute"), cve_file=points).svg()
    assert svg.count("<title>CVE file</title>") == 2  # log and linear panel
    assert ">CVE file</text>" in svg  # one legend entry
    plain = friction_curves({"truth": truth}, 2.5, units("revolute")).svg()
    assert "CVE file" not in plain


def test_a_model_with_even_viscous_powers_shows_what_its_points_measure(truth):
    """c₂q̇² pushes the same way in both directions: the log panel adds the mean of both
    directions, which a constant-velocity point measures; an odd series draws one curve."""
    label = "truth, mean of both directions"
    even = truth.with_(viscous=((1, 9.0), (2, 2.5)))
    assert f"<title>{label}</title>" in friction_curves({"truth": even}, 2.5,
                                                        units("revolute")).svg()
    assert label not in friction_curves({"truth": truth}, 2.5, units("revolute")).svg()


@pytest.mark.parametrize(("content", "expected"), [
    ("velocity,torque\n1,2\n", "no column 'friction'"),
    ("velocity,friction\n1,2\n0,3\n", "column 'velocity', line 3: zero"),
])
def test_cli_bad_file_is_one_line_and_writes_nothing(tmp_path, capsys, content, expected):
    bad = tmp_path / "runs.csv"
    bad.write_text(content)
    out = tmp_path / "out"
    rc = main(["identify", str(EXAMPLE / "train_v2p13.csv"), "--static-only", "--cve", str(bad),
               "--out", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1
    assert str(bad) in err and expected in err
    assert not out.exists()


def test_cli_cve_is_refused_with_a_baseline_method(tmp_path, capsys, truth):
    path = _write_cve(tmp_path / "runs.csv", truth)
    rc = main(["identify", str(EXAMPLE / "train_v2p13.csv"), "--method", "idim-ls", "--cve",
               str(path), "--out", str(tmp_path / "out"), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and "--cve applies to --method sparsefric only" in err


@pytest.mark.slow
def test_round_trip_on_the_example(tmp_path, capsys, truth):
    """CVE points on the true static curve: the identified model scores within 1 %, the report
    draws them and every summary carries the score."""
    path = _write_cve(tmp_path / "runs.csv", truth)
    out = tmp_path / "out"
    files = [str(p) for p in sorted(EXAMPLE.glob("train_*.csv"))]
    rc = main(["identify", *files, "--validate", *map(str, sorted(EXAMPLE.glob("validate_*"))),
               "--sigma0-starts", "1e4", "--uncertainty", "none", "--truth",
               str(EXAMPLE / "truth.json"), "--cve", str(path), "--out", str(out), "--json"])
    assert rc == 0
    summary = json.loads(capsys.readouterr().out)["cve_file"]
    assert summary["model"] == "dynamic" and summary["n"] == len(SPEEDS)
    assert summary["rms_relative"] < 0.01  # 0.13 % measured
    assert abs(summary["worst"]["relative"]) < 0.02
    assert summary["others"]["truth"] == pytest.approx(0.0, abs=1e-12)
    assert len(summary["points"]) == len(SPEEDS)
    page = (out / "report.html").read_text(encoding="utf-8")
    assert ">CVE file</text>" in page and "RMS error / RMS friction [%]" in page
    md = (out / "summary.md").read_text(encoding="utf-8")
    assert f"CVE file runs.csv ({len(SPEEDS)} points)" in md and "## CVE file (runs.csv)" in md
