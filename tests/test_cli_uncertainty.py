"""The command line's intervals and ranges: ``--uncertainty``, ``--strict``, ``predict --outside``,
and model files of format 1 on the way through."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from sparsefric.cli import EXIT_WARNINGS, main
from sparsefric.model import JointModel
from sparsefric.schema import validate_model_dict
from sparsefric.validity import ValidityRange

from .conftest import EMPS, EXAMPLE, example_files

#: A quick static identification of the first 6000 EMPS samples.
STATIC_EMPS = ["--axis", "prismatic", "--library", "coulomb-viscous-offset", "--static-only"]


def _emps(tmp_path, scale: float = 1.0, name: str = "emps.csv"):
    """The first 6000 EMPS samples, the time column multiplied by ``scale``."""
    df = pd.read_csv(EMPS).iloc[:6000]
    path = tmp_path / name
    df.assign(t=scale * df["t"]).to_csv(path, index=False)
    return path


def test_strict_exits_3_after_writing_the_results_of_a_fit_with_warnings(tmp_path, capsys):
    """Time in ms read as seconds: the fit warns; --strict turns that into status 3 with every
    result on disk, and the same run without --strict succeeds."""
    data = str(_emps(tmp_path, scale=1e3))
    rc = main(["identify", data, *STATIC_EMPS, "--strict", "--out", str(tmp_path / "strict")])
    err = capsys.readouterr().err
    assert rc == EXIT_WARNINGS == 3
    assert "sparsefric: warning: the sampling period is 1 s" in err
    assert (tmp_path / "strict" / "model.json").is_file()
    assert (tmp_path / "strict" / "report.html").is_file()
    assert main(["identify", data, *STATIC_EMPS, "--out", str(tmp_path / "lax")]) == 0


def test_identify_writes_the_validity_range_and_intervals_of_format_2(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["identify", str(_emps(tmp_path)), *STATIC_EMPS, "--quiet",
                 "--out", str(out)]) == 0
    data = json.loads((out / "model.json").read_text())
    validate_model_dict(data)
    assert data["format"] == "sparsefric-model/2"
    assert data["uncertainty"]["method"] == "asymptotic"
    model = JointModel.load(out / "model.json")
    lo, hi = model.uncertainty.intervals["inertia"]
    assert lo < model.inertia < hi
    q = pd.read_csv(EMPS).iloc[:6000, 1]  # the position column [m]
    v_lo, v_hi = model.validity.velocity
    assert v_lo < 0 < v_hi
    assert model.validity.position == pytest.approx((q.min(), q.max()), abs=1e-3 * np.ptp(q))
    static = json.loads((out / "static_model.json").read_text())
    assert static["validity"] == data["validity"]
    html = (out / "report.html").read_text()
    assert "Break-away torque</b>" in html and "95% intervals of the identified model" in html
    assert "Validity range" in html


def test_uncertainty_none_writes_the_range_but_no_intervals(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["identify", str(_emps(tmp_path)), *STATIC_EMPS, "--uncertainty", "none",
                 "--quiet", "--out", str(out)]) == 0
    model = JointModel.load(out / "model.json")
    assert model.uncertainty is None and model.validity is not None
    assert "No intervals were computed" in (out / "report.html").read_text()


def test_uncertainty_is_an_option_of_sparsefric_only(tmp_path, capsys):
    rc = main(["identify", str(_emps(tmp_path)), "--axis", "prismatic", "--method", "idim-ls",
               "--uncertainty", "bootstrap", "--out", str(tmp_path / "o")])
    assert rc == 2
    assert "--uncertainty applies to --method sparsefric only" in capsys.readouterr().err


def test_resamples_and_seed_reach_the_bootstrap(tmp_path, bootstrap_calls):
    out = tmp_path / "out"
    assert main(["identify", str(_emps(tmp_path)), *STATIC_EMPS, "--uncertainty", "bootstrap",
                 "--resamples", "12", "--seed", "3", "--quiet", "--out", str(out)]) == 0
    assert [(c["resamples"], c["seed"]) for c in bootstrap_calls] == [(12, 3)]


def _bounded_model(tmp_path, velocity: tuple[float, float]) -> str:
    """The example's truth (a format-1 file) with a validity range of velocity only."""
    path = tmp_path / "bounded.json"
    JointModel.load(EXAMPLE / "truth.json").with_(
        validity=ValidityRange(velocity=velocity)).save(path)
    return str(path)


def test_predict_warns_beyond_the_range_and_clamps_on_request(tmp_path, capsys):
    test = str(example_files("test")[1])  # moves at 1.4 rad/s
    bounded = _bounded_model(tmp_path, (-1.0, 1.0))
    errors = {}
    for outside in ("warn", "clamp", "ignore"):
        out = tmp_path / f"{outside}.csv"
        assert main(["predict", bounded, test, "--outside", outside, "--out", str(out)]) == 0
        printed = capsys.readouterr()
        warned = "is outside the validity range [-1, 1] rad/s" in printed.err
        assert warned == (outside == "warn"), outside
        errors[outside] = float(printed.out.split("=")[1].split("%")[0])
        frame = pd.read_csv(out)
        assert len(frame) and np.isfinite(frame["tau_hat"]).all()
    assert errors["warn"] == errors["ignore"]
    assert errors["clamp"] > errors["warn"] + 1.0  # the viscous torque above 1 rad/s is cut
    inside = _bounded_model(tmp_path, (-2.0, 2.0))
    assert main(["predict", inside, test]) == 0
    assert "warning" not in capsys.readouterr().err


def test_a_format_1_model_file_predicts_and_simulates_without_a_range(tmp_path, capsys):
    """A file of format 1 has no validity section: it predicts and simulates as before."""
    truth = str(EXAMPLE / "truth.json")
    assert json.loads((EXAMPLE / "truth.json").read_text())["format"] == "sparsefric-model/1"
    assert main(["predict", truth, str(example_files("test")[0])]) == 0
    assert main(["simulate", truth, "--velocities", "3.0", "--out", str(tmp_path / "s")]) == 0
    assert "warning" not in capsys.readouterr().err


def test_simulate_says_when_the_motion_leaves_the_range(tmp_path, capsys):
    bounded = _bounded_model(tmp_path, (-1.0, 1.0))
    assert main(["simulate", bounded, "--velocities", "0.5,1.5", "--out",
                 str(tmp_path / "s")]) == 0
    err = capsys.readouterr().err
    assert "the simulated motion leaves the model's range: velocity 1.5" in err


@pytest.mark.slow
def test_strict_exits_0_when_the_fit_gives_no_warning(tmp_path, capsys):
    """data/example is identified without a warning: --strict leaves the status at 0."""
    args = ["identify", *map(str, example_files("train")), "--validate",
            *map(str, example_files("validate")), "--strict", "--out", str(tmp_path / "o")]
    assert main(args) == 0
    assert "warning" not in capsys.readouterr().err


@pytest.mark.slow
def test_batch_strict_exits_3_when_a_joint_warns(tmp_path, capsys):
    data = _emps(tmp_path, scale=1e3)
    manifest = tmp_path / "joints.csv"
    manifest.write_text("joint,train,axis,library,static_only,uncertainty\n"
                        f"emps,{data.name},prismatic,coulomb-viscous-offset,true,none\n")
    base = ["batch", str(manifest), "--workers", "1", "--quiet"]
    assert main([*base, "--out", str(tmp_path / "lax")]) == 0
    assert main([*base, "--strict", "--out", str(tmp_path / "strict")]) == EXIT_WARNINGS
    summary = pd.read_csv(tmp_path / "strict" / "summary.csv")
    assert summary.loc[0, "status"] == "ok" and summary.loc[0, "warnings"] >= 1
    model = JointModel.load(tmp_path / "strict" / "emps" / "model.json")
    assert model.uncertainty is None and model.validity is not None
