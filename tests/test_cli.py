"""The command line: results on disk, one-line errors with exit status 2, nothing half-written."""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pytest

from sparsefric.cli import main
from sparsefric.model import JointModel

from .conftest import EMPS, EXAMPLE, example_files, imported_by


def _short_csv(tmp_path, src, n=6000, name="short.csv"):
    df = pd.read_csv(src).iloc[:n]
    path = tmp_path / name
    df.to_csv(path, index=False)
    return path


def test_identify_static_writes_model_and_selection(tmp_path, capsys):
    out = tmp_path / "out"
    rc = main(["identify", str(EMPS), "--axis", "prismatic", "--library",
               "coulomb-viscous-offset", "--static-only", "--out", str(out)])
    assert rc == 0
    model = JointModel.load(out / "model.json")
    assert model.kind == "static" and model.axis == "prismatic"
    sel = pd.read_csv(out / "selection.csv")
    assert {"lambda", "aic_r", "n_eliminated", "selected"} <= set(sel.columns)
    printed = capsys.readouterr().out
    assert "I (inertia)" in printed and "f_c (Coulomb)" in printed and str(out) in printed
    assert not list(tmp_path.glob(".out.staging-*"))


@pytest.mark.slow
def test_identify_lugre_and_predict(tmp_path, capsys):
    train = [_short_csv(tmp_path, f, name=f.name) for f in example_files("train")]
    out = tmp_path / "out"
    rc = main(["identify", *map(str, train), "--sigma0-starts", "1e4", "--out", str(out),
               "--json"])
    assert rc == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["model"]["friction"]["kind"] == "lugre"
    assert (out / "history.csv").exists() and (out / "static_model.json").exists()
    rc = main(["predict", str(out / "model.json"), str(train[1]), "--out",
               str(tmp_path / "pred.csv")])
    assert rc == 0
    pred = pd.read_csv(tmp_path / "pred.csv")
    assert list(pred.columns) == ["trajectory", "t", "tau", "tau_hat"]
    assert set(pred.trajectory) == {str(train[1])}
    err = np.linalg.norm(pred.tau - pred.tau_hat) / np.linalg.norm(pred.tau)
    assert err < 0.1 and f"{100 * err:.2f} %" in capsys.readouterr().out


def test_simulate_writes_trajectories_and_truth(tmp_path):
    rc = main(["simulate", "--out", str(tmp_path / "sim"), "--velocities", "0.5"])
    assert rc == 0
    assert (tmp_path / "sim" / "truth.json").exists()
    assert len(list((tmp_path / "sim").glob("*.csv"))) == 1


@pytest.mark.parametrize("argv, message", [
    (["identify", "absent.csv"], "absent.csv: no such file"),
    (["identify", str(EMPS), "--torque", "force"], "no column 'force'"),
    (["identify", str(EMPS), "--sigma0-starts", "-3"], "expected a positive number"),
    (["identify", str(EMPS), "--model", "C"], "invalid choice"),
    (["predict", "absent.json", str(EMPS)], "absent.json: no such model file"),
    (["simulate", "--out", "x", "--velocities", "fast"], "expected a number, got 'fast'"),
    (["identify", str(EMPS), "--method", "idim-ls", "--static-only"],
     "--static-only applies to --method sparsefric only"),
    (["identify", str(EMPS), "--method", "idim-ls", "--presliding", str(EMPS)],
     "--presliding applies to --method two-step only"),
    (["identify", str(EMPS), "--method", "two-step"], "--method two-step needs --presliding"),
    (["identify", str(EMPS), "--differentiation", "given"],
     "--differentiation given needs the measured velocity and acceleration in every record "
     "(--velocity NAME and --acceleration NAME)"),
    (["identify", str(EMPS), "--method", "idim-ls", "--cutoff-hz", "600"],
     "--cutoff-hz 600 is not below the Nyquist frequency 500 Hz"),
    (["identify", str(EMPS), "--torque-delay", "nan"],
     "argument --torque-delay: expected a finite number, got 'nan'"),
    (["identify", str(EMPS), "--resamples", "9"],
     "argument --resamples: expected an integer of at least 10, got '9'"),
    (["identify", str(EMPS), "--resamples", "1e3"],
     "argument --resamples: expected an integer of at least 10, got '1e3'"),
    (["identify", str(EMPS), "--seed", "-1"],
     "argument --seed: expected an integer of at least 0, got '-1'"),
    (["identify", str(EMPS), "--aic-parts", "-3"],
     "argument --aic-parts: expected an integer of at least 10, got '-3'"),
    (["batch", "joints.csv", "--out", "x", "--workers", "0"],
     "argument --workers: expected an integer of at least 1, got '0'"),
    (["identify", str(EMPS), "--method", "idim-ls", "--seed", "3"],
     "--seed applies to --method sparsefric only"),
    (["identify", str(EMPS), "--resamples", "20"],
     "--resamples needs --uncertainty bootstrap"),
    (["identify", str(EMPS), "--uncertainty", "none", "--seed", "3"],
     "--seed needs --uncertainty bootstrap"),
    # given explicitly, the default values are refused as well (they passed unnoticed)
    (["identify", str(EMPS), "--resamples", "100"],
     "--resamples needs --uncertainty bootstrap"),
    (["identify", str(EMPS), "--seed", "0"], "--seed needs --uncertainty bootstrap"),
    (["identify", str(EMPS), "--method", "idim-ls", "--resamples", "100"],
     "--resamples applies to --method sparsefric only"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    try:
        rc = main(argv)
    except SystemExit as exc:
        rc = exc.code
    err = capsys.readouterr().err
    assert rc == 2
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "sparsefric-out").exists()


def test_cve_writes_friction_velocity_points_on_the_static_curve(tmp_path, truth):
    files = [str(p) for role in ("train", "test") for p in example_files(role)]
    assert main(["cve", *files, "--out", str(tmp_path / "cve")]) == 0
    points = pd.read_csv(tmp_path / "cve" / "cve_points.csv")
    assert len(points) == 4 and (points.friction_std > 0).all()
    expected = truth.static_friction(points.velocity.to_numpy())
    np.testing.assert_allclose(points.friction, expected, rtol=0.01)


def test_cve_differentiates_with_the_given_cutoff_and_takes_no_torque_timing(tmp_path,
                                                                             monkeypatch):
    """--cutoff-hz and --regularization were accepted by cve and silently not used; the torque
    timing, moot for steady levels, is not offered."""
    import sparsefric.validation

    seen = []
    original = sparsefric.validation.differentiate

    def differentiate(*args, **kwargs):
        seen.append((kwargs["cutoff_hz"], kwargs["regularization"]))
        return original(*args, **kwargs)

    monkeypatch.setattr(sparsefric.validation, "differentiate", differentiate)
    files = [str(p) for p in example_files("train")]
    assert main(["cve", *files, "--cutoff-hz", "20", "--out", str(tmp_path / "a")]) == 0
    assert seen == [(20.0, None)] * len(files)
    with pytest.raises(SystemExit) as info:
        main(["cve", *files, "--torque-timing", "hold", "--out", str(tmp_path / "b")])
    assert info.value.code == 2


def test_out_that_is_a_file_fails_before_any_work(tmp_path, capsys):
    (tmp_path / "taken").write_text("x")
    rc = main(["identify", str(EMPS), "--out", str(tmp_path / "taken")])
    err = capsys.readouterr().err
    assert rc == 2 and "is not a directory" in err and err.count("\n") == 1


def test_rerun_leaves_no_results_of_the_earlier_run(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "lugre_model.json").write_text("{}")  # as if an earlier LuGre run had written it
    rc = main(["identify", str(EMPS), "--axis", "prismatic", "--library",
               "coulomb-viscous-offset", "--static-only", "--quiet", "--force", "--out", str(out)])
    assert rc == 0 and (out / "model.json").exists() and not (out / "lugre_model.json").exists()


@pytest.mark.slow
def test_identify_with_a_baseline_method(tmp_path, capsys, truth):
    """--method idim-ls and output-error on data/example: model.json, a summary with the errors
    on every role's data, no sparsefric report; output-error (LuGre) predicts the test data
    far better than IDIM-LS (rigid body + Coulomb + viscous): 3.6 % against 20 %."""
    files = {role: [str(p) for p in example_files(role)] for role in ("train", "test")}
    errors = {}
    for method, extra in (("idim-ls", []), ("output-error", ["--sigma0-starts", "1e4"])):
        out = tmp_path / method
        rc = main(["identify", *files["train"], "--test", *files["test"], "--method", method,
                   *extra, "--out", str(out), "--quiet"])
        assert rc == 0 and not (out / "report.html").exists()
        model = JointModel.load(out / "model.json")
        summary = json.loads((out / "summary.json").read_text())
        assert model.extra["method"] == summary["method"] == method
        assert set(summary["relative_error"]) == {"train", "test"}
        errors[method] = summary["relative_error"]["test"]
        assert model.inertia == pytest.approx(truth.inertia, rel=0.3)
    assert errors["output-error"] < 0.05 < 0.15 < errors["idim-ls"]


def test_a_baseline_says_which_pieces_of_its_records_it_leaves_out(tmp_path, capsys):
    """The notes of the validation records' cutting were dropped by the baselines."""
    frame = pd.read_csv(example_files("validate")[0])[["t", "q", "tau"]]
    frame.loc[1000:1029, "q"] += 0.5  # jumps in and out: a piece of 30 samples
    jumped = tmp_path / "jumped.csv"
    frame.to_csv(jumped, index=False)
    train = [str(p) for p in example_files("train")]
    assert main(["identify", *train, "--validate", str(jumped), "--method", "idim-ls",
                 "--quiet", "--out", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err
    assert (f"sparsefric: warning: {jumped}: 1 piece(s) between jumps shorter than 50 samples "
            "left out (samples [1000:1030])") in err


def test_two_step_from_a_simulated_presliding_record(tmp_path, capsys):
    sim = tmp_path / "sim"
    assert main(["simulate", "--out", str(sim), "--presliding"]) == 0
    pre = sim / "presliding_0.1.csv"
    assert pre.exists() and "7 trajectories" in capsys.readouterr().out  # 6 moves + 1
    truth = JointModel.load(sim / "truth.json")
    rc = main(["identify", *map(str, sorted(sim.glob("train_*.csv"))), "--validate",
               *map(str, sorted(sim.glob("validate_*.csv"))), "--method", "two-step",
               "--presliding", str(pre), "--out", str(tmp_path / "out"), "--json"])
    assert rc == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["kind"] == "lugre"
    sigma0 = {p["name"]: p["value"] for p in summary["parameters"]}["σ0 (bristle stiffness)"]
    assert sigma0 == pytest.approx(truth.sigma0, rel=0.1)  # from the ARX fit of the record


# ------------------------------------------------------------------------------ CLI traps
STATIC_EMPS = ["--axis", "prismatic", "--library", "coulomb-viscous-offset", "--static-only"]


def _exit_status(argv) -> int:
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


def test_results_of_an_earlier_run_are_not_replaced_without_force(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "model.json").write_text('{"mine": true}')
    rc = main(["identify", str(EMPS), *STATIC_EMPS, "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1
    assert f"{out}: holds the results of an earlier run (model.json); add --force" in err
    assert (out / "model.json").read_text() == '{"mine": true}'
    assert main(["simulate", "--out", str(tmp_path / "sim"), "--velocities", "0.5",
                 "--silent"]) == 0
    assert main(["simulate", "--out", str(tmp_path / "sim"), "--velocities", "0.5"]) == 2
    assert "add --force" in capsys.readouterr().err


@pytest.mark.parametrize("argv, unknown", [
    (["identify", str(EMPS), "--sigma0", "1e4"], "--sigma0"),
    (["identify", str(EMPS), "--stat"], "--stat"),
    (["batch", "m.csv", "--out", "x", "--work", "2"], "--work"),
])
def test_abbreviated_options_are_rejected(tmp_path, capsys, monkeypatch, argv, unknown):
    monkeypatch.chdir(tmp_path)
    assert _exit_status(argv) == 2
    err = capsys.readouterr().err
    assert f"unrecognized arguments: {unknown}" in err and err.count("\n") == 1


def _ms_file(tmp_path, n=6000):
    """The first ``n`` samples of EMPS with the time column in milliseconds."""
    df = pd.read_csv(EMPS).iloc[:n]
    path = tmp_path / "emps_ms.csv"
    df.assign(t=1e3 * df["t"]).to_csv(path, index=False)
    return path, _short_csv(tmp_path, EMPS, n=n, name="emps_s.csv")


def test_time_unit_ms_gives_the_model_of_seconds_and_quiet_keeps_warnings(tmp_path, capsys):
    ms, seconds = _ms_file(tmp_path)
    outs = {}
    for name, argv in (("s", [str(seconds)]), ("ms", [str(ms), "--time-unit", "ms"])):
        outs[name] = tmp_path / name
        assert main(["identify", *argv, *STATIC_EMPS, "--silent", "--out", str(outs[name])]) == 0
    assert capsys.readouterr() == ("", "")  # --silent: nothing at all
    a, b = (JointModel.load(outs[n] / "model.json").parameters() for n in ("s", "ms"))
    for (name, unit, x), (_, _, y) in zip(a, b, strict=True):
        assert x == pytest.approx(y, rel=1e-6, abs=1e-9), (name, unit)
    # read as seconds, the same file is 1000× slow: --quiet still shows the warning that says so
    rc = main(["identify", str(ms), *STATIC_EMPS, "--quiet", "--out", str(tmp_path / "slow")])
    printed = capsys.readouterr()
    assert rc == 0 and printed.out == ""
    assert "sparsefric: warning: the sampling period is 1 s" in printed.err
    assert "is the time column in seconds?" in printed.err


def test_sample_rate_gives_a_file_without_time_stamps_the_model_of_the_stamped_one(
        tmp_path, capsys):
    _, stamped = _ms_file(tmp_path)
    rows = tmp_path / "rows.csv"
    pd.read_csv(stamped).drop(columns="t").to_csv(rows, index=False)
    rate = round(1 / np.median(np.diff(pd.read_csv(stamped)["t"])))
    outs, printed = {}, {}
    for name, argv in (("t", [str(stamped)]), ("rate", [str(rows), "--sample-rate", str(rate)])):
        outs[name] = tmp_path / name
        assert main(["identify", *argv, *STATIC_EMPS, "--quiet", "--out", str(outs[name])]) == 0
        printed[name] = capsys.readouterr().err
    assert printed["rate"] == printed["t"]  # the same warnings, no more
    a, b = (JointModel.load(outs[n] / "model.json").parameters() for n in ("t", "rate"))
    for (name, unit, x), (_, _, y) in zip(a, b, strict=True):
        assert x == pytest.approx(y, rel=1e-9, abs=1e-12), (name, unit)
    # without the rate the error says how to do without a time column
    assert _exit_status(["identify", str(rows), *STATIC_EMPS, "--out", str(tmp_path / "x")]) == 2
    assert "for rows without time stamps their rate with --sample-rate HZ" in (
        capsys.readouterr().err)


def test_a_units_row_of_ms_gives_the_model_of_seconds(tmp_path, capsys):
    """A logger's export with a row of units: it was refused ("non-numeric value 's'"), and
    its time in ms needed --time-unit ms."""
    ms, seconds = _ms_file(tmp_path)
    lines = ms.read_text().splitlines()
    ms.write_text("\n".join([lines[0], "ms,m,N,m", *lines[1:]]) + "\n")
    outs = {}
    for name, path in (("s", seconds), ("ms", ms)):
        outs[name] = tmp_path / name
        assert main(["identify", str(path), *STATIC_EMPS, "--out", str(outs[name])]) == 0
    assert f"warning: {ms} (line 2) gives column 't' in ms: read in ms" in capsys.readouterr().err
    a, b = (JointModel.load(outs[n] / "model.json").parameters() for n in ("s", "ms"))
    for (name, unit, x), (_, _, y) in zip(a, b, strict=True):
        assert x == pytest.approx(y, rel=1e-6, abs=1e-9), (name, unit)


def test_holdout_makes_the_last_part_of_every_record_the_test_data(tmp_path, capsys):
    short = _short_csv(tmp_path, EMPS, n=8000)
    rc = main(["identify", str(short), *STATIC_EMPS, "--holdout", "0.25", "--json",
               "--out", str(tmp_path / "out")])
    assert rc == 0
    data = json.loads(capsys.readouterr().out)["data"]
    assert [d["samples"] for d in data["train"]] == [6000]
    assert [d["samples"] for d in data["test"]] == [2000]
    assert data["test"][0]["name"].endswith("short.csv (last 25 %)")
    for bad in ("1.5", "0", "x"):
        assert _exit_status(["identify", str(short), "--holdout", bad]) == 2


def test_without_validate_files_every_output_names_the_held_out_blocks_aicc_scored(tmp_path,
                                                                                   capsys):
    short = _short_csv(tmp_path, EMPS, n=8000)
    out = tmp_path / "out"
    rc = main(["identify", str(short), *STATIC_EMPS, "--aic-data", "validation",
               "--out", str(out)])
    assert rc == 0
    printed = capsys.readouterr().out
    source = JointModel.load(out / "model.json").extra["fit"]["validation"]
    # --aic-data validation: the blocks alone, not training + blocks
    assert source.startswith("held-out (4 blocks, 20 % of the samples)")
    assert f"AICc on {source} data" in printed
    assert "AICc was computed on the training data" not in printed
    summary = (out / "report.html").read_text(encoding="utf-8")
    assert f"AICc scored on {source} data" in summary


def test_duplicate_columns_are_one_line_naming_them(tmp_path, capsys):
    path = tmp_path / "twice.csv"
    path.write_text(EMPS.read_text().replace("t,q,tau,", "t,q,tau,tau,", 1).split("\n", 1)[0]
                    + "\n" + "\n".join(f"{i},0,0,0,0" for i in range(60)) + "\n")
    assert main(["identify", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "twice.csv: duplicate column names: 'tau' in columns 3, 4" in err
    assert err.count("\n") == 1


def _subcommands():
    from sparsefric.cli import build_parser

    parser = build_parser()
    (sub,) = [a for a in parser._actions if a.dest == "command"]
    return parser, sub.choices


def test_every_option_has_help_and_every_subcommand_an_example():
    parser, subs = _subcommands()
    assert "examples:" in parser.format_help()
    for name, sub in subs.items():
        for action in sub._actions:
            assert action.help and action.help.strip(), (name, action.option_strings)
        text = sub.format_help()
        assert f"examples:\n  sparsefric {name} " in text, name
    identify = subs["identify"].format_help()
    assert "(default: ./sparsefric-out)" in identify
    assert "sign(q̇)" in identify and "tanh(K q̇)" in identify


def test_the_data_options_take_their_defaults_one_by_one():
    """The differentiation's default (the model's, None) decided the torque delay's as well."""
    import argparse

    from sparsefric.cli.common import _add_data_options

    _, subs = _subcommands()
    defaults = {name: (sub.get_default("differentiation"), sub.get_default("torque_delay"))
                for name, sub in subs.items() if name in ("identify", "predict")}
    assert defaults == {"identify": ("tv", 0.0), "predict": (None, None)}
    for differentiation, delay in [(None, 0.0), ("butterworth", None)]:
        parser = argparse.ArgumentParser()
        _add_data_options(parser, differentiation=differentiation, torque_delay=delay)
        assert parser.get_default("differentiation") == differentiation
        assert parser.get_default("torque_delay") == delay
        text = " ".join(parser.format_help().split())
        assert ("the delay the model was identified with" in text) == (delay is None)


def test_an_interrupted_batch_says_which_joints_it_kept(tmp_path, capsys, monkeypatch):
    """Ctrl-C in a batch: the joints finished before it stay, and the one-line message names
    them instead of claiming that nothing was written."""
    import sparsefric.batch

    def interrupted(*args, **kwargs):
        exc = KeyboardInterrupt()
        exc.add_note("1 joint finished and was kept in out (a); 1 not finished (b): a rerun "
                     "does it; summary not written")
        raise exc

    monkeypatch.setattr(sparsefric.batch, "run_manifest", interrupted)
    manifest = tmp_path / "joints.csv"
    manifest.write_text("joint,train\na,a.csv\n")
    rc = main(["batch", str(manifest), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 130
    assert err == ["sparsefric: interrupted; 1 joint finished and was kept in out (a); 1 not "
                   "finished (b): a rerun does it; summary not written"]


def test_a_batch_out_below_a_file_is_refused_before_any_joint(tmp_path, capsys):
    (tmp_path / "existing.csv").write_text("x\n")
    manifest = tmp_path / "joints.csv"
    manifest.write_text("joint,train\na,existing.csv\n")
    out = tmp_path / "existing.csv" / "out"
    rc = main(["batch", str(manifest), "--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1
    assert "--out" in err[0] and str(out) in err[0] and "is not a directory" in err[0]


def test_sigterm_while_results_are_written_leaves_nothing_behind(tmp_path, capsys, monkeypatch):
    """SIGTERM (``kill``, a batch scheduler) ends the run like Ctrl-C: exit status 143, the
    staging folder removed, an earlier run's results untouched."""
    import os
    import signal

    import sparsefric.outputs

    out = tmp_path / "out"
    out.mkdir()
    (out / "model.json").write_text('{"earlier": true}')

    def killed(result, stage, *args, **kwargs):
        (stage / "report.html").write_text("half")
        os.kill(os.getpid(), signal.SIGTERM)
        raise AssertionError("SIGTERM did not interrupt the run")

    monkeypatch.setattr(sparsefric.outputs, "write_results", killed)
    short = _short_csv(tmp_path, EMPS, n=4000)
    before = signal.getsignal(signal.SIGTERM)
    rc = main(["identify", str(short), *STATIC_EMPS, "--force", "--out", str(out)])
    assert rc == 143 and "terminated; nothing was written" in capsys.readouterr().err
    assert (out / "model.json").read_text() == '{"earlier": true}'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "short.csv"]
    assert signal.getsignal(signal.SIGTERM) == before


@pytest.mark.parametrize("name, status, word", [("SIGINT", 130, "interrupted"),
                                                ("SIGTERM", 143, "terminated")])
def test_a_signal_whose_exception_was_lost_still_stops_the_results(tmp_path, capsys,
                                                                  monkeypatch, name, status,
                                                                  word):
    """C code that calls Python code can discard the exception a signal handler raised there
    (once in about twenty runs killed during the fit, which then wrote its results and exited
    0): the signal is raised again before anything is published."""
    import os
    import signal

    import sparsefric.outputs

    sig = getattr(signal, name)
    out = tmp_path / "out"
    out.mkdir()
    (out / "model.json").write_text('{"earlier": true}')
    write_results = sparsefric.outputs.write_results

    def lost(*args, **kwargs):
        try:
            os.kill(os.getpid(), sig)
            raise AssertionError(f"{name} did not interrupt the run")
        except KeyboardInterrupt:
            pass  # what a dictionary lookup in C does with an error of a Python __eq__
        return write_results(*args, **kwargs)

    monkeypatch.setattr(sparsefric.outputs, "write_results", lost)
    short = _short_csv(tmp_path, EMPS, n=4000)
    rc = main(["identify", str(short), *STATIC_EMPS, "--force", "--out", str(out)])
    assert rc == status and f"{word}; nothing was written" in capsys.readouterr().err
    assert (out / "model.json").read_text() == '{"earlier": true}'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "short.csv"]


def test_the_last_lines_give_the_held_out_error_beside_the_reference_and_baseline(tmp_path,
                                                                                   capsys):
    short = _short_csv(tmp_path, EMPS, n=8000)
    out = tmp_path / "out"
    rc = main(["identify", str(short), *STATIC_EMPS, "--holdout", "0.3", "--reference",
               str(EMPS.parent / "reference.json"), "--compare", "idim-ls", "--out", str(out)])
    assert rc == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-3] == f"results written to {out}/"
    assert lines[-2].startswith("test torque error ‖τ − τ̂‖/‖τ‖ = ")
    assert "(reference " in lines[-2] and "; idim-ls " in lines[-2]
    assert lines[-1].startswith("free run on the test data (restarted every 1 s): velocity "
                                "error ‖q̇ − q̇_sim‖/‖q̇‖ = ")
    assert "(reference " in lines[-1] and lines[-1].endswith(" m")
    page = (out / "report.html").read_text(encoding="utf-8")
    assert 'id="comparison"' in page and "<td>idim-ls</td>" in page
    terms = pd.read_csv(out / "terms.csv")
    assert {"coefficient", "step1_coefficient", "active", "step1_active"} <= set(terms.columns)
    assert any(line.startswith("final model (static friction, sign(q̇)): ") for line in lines)


@pytest.mark.parametrize("argv, message", [
    (["--compare", "idim-ls,fast"], "expected methods among idim-ls, output-error, two-step"),
    (["--compare", "two-step"], "--compare two-step needs --presliding FILE"),
    (["--method", "idim-ls", "--compare", "output-error"],
     "--compare applies to --method sparsefric only"),
    (["--truth", str(EMPS.parent.parent / "example" / "truth.json"), "--axis", "prismatic"],
     "truth.json: is a revolute model, the data are --axis prismatic"),
])
def test_comparison_and_known_model_mistakes_are_one_line(tmp_path, capsys, monkeypatch, argv,
                                                          message):
    monkeypatch.chdir(tmp_path)
    assert _exit_status(["identify", str(EMPS), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


@pytest.mark.slow
def test_a_file_with_a_jump_gets_a_report_and_a_prediction_per_sample(tmp_path, capsys):
    """Two records joined in one file, q shifted between them: the preparation cuts the file at
    the jump; the report and predict must follow the pieces (they indexed past them)."""
    a, b = (pd.read_csv(f)[["t", "q", "tau"]] for f in example_files("train"))
    b = b.assign(t=b.t - b.t.iloc[0] + a.t.iloc[-1] + 1e-3, q=b.q + 0.8)
    joined = tmp_path / "joined.csv"
    pd.concat([a, b]).to_csv(joined, index=False)
    out = tmp_path / "res"
    assert main(["identify", str(joined), "--static-only", "--out", str(out)]) == 0
    assert "position jumps" in capsys.readouterr().err
    assert (out / "report.html").stat().st_size > 0
    pred = tmp_path / "pred.csv"
    assert main(["predict", str(out / "model.json"), str(joined), "--out", str(pred)]) == 0
    assert len(pd.read_csv(pred)) == len(a) + len(b)


def test_predict_says_which_rows_a_piece_too_short_between_jumps_leaves_out(tmp_path, capsys):
    """The rows of the piece were missing from --out and from the error without a word."""
    frame = pd.read_csv(example_files("test")[0])[["t", "q", "tau"]].iloc[:3000]
    frame.loc[1000:1029, "q"] += 0.5  # jumps in and out: a piece of 30 samples
    jumped = tmp_path / "jumped.csv"
    frame.to_csv(jumped, index=False)
    pred = tmp_path / "pred.csv"
    assert main(["predict", str(EXAMPLE / "truth.json"), str(jumped), "--differentiation",
                 "butterworth", "--out", str(pred)]) == 0
    err = capsys.readouterr().err
    assert "1 piece(s) between jumps shorter than 50 samples left out (samples [1000:1030])" in err
    assert (f"30 of the 3000 samples are not predicted (pieces between jumps shorter than 50 "
            f"samples, stretches with the drive off): the error and {pred} leave them out") in err
    assert len(pd.read_csv(pred)) == 2970
    # the samples a torque delay shifts past the record's ends are counted with them
    assert main(["predict", str(EXAMPLE / "truth.json"), str(jumped), "--differentiation",
                 "butterworth", "--torque-delay", "0.003", "--out", str(pred), "--force"]) == 0
    err = capsys.readouterr().err
    kept = len(pd.read_csv(pred))
    assert kept < 2970 and (f"{3000 - kept} of the 3000 samples are not predicted (pieces "
                            "between jumps shorter than 50 samples, stretches with the drive "
                            "off, and the ends of the records the torque delay shifts past)") in err


def test_python_dash_m_runs_the_command_line():
    """``python -m sparsefric`` is the ``sparsefric`` script (for environments without it)."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "sparsefric", "--version"], capture_output=True,
                         text=True, check=False)
    assert out.returncode == 0 and out.stdout.startswith("sparsefric ")


@pytest.mark.parametrize("argv, message", [
    (["--seed", "-1"], "argument --seed: expected an integer of at least 0, got '-1'"),
    (["--velocities", "0.5,0.5"],
     "--velocities lists 0.5 twice: each velocity is one file (moves_v0p5.csv); list each once"),
    (["--velocities", "0.5,1,0.5000001"],
     "--velocities lists 0.5 and 0.5000001, which would both be written to moves_v0p5.csv"),
    (["--open-loop", "chirp", "--duration", "2", "--amplitude", "1e7"],
     "the simulation of open_loop diverged (values not finite from t = 0.001 s); lower "
     "--amplitude"),
])
def test_simulate_option_mistakes_are_one_line_and_write_nothing(tmp_path, capsys, argv,
                                                                  message):
    out = tmp_path / "sim"
    assert _exit_status(["simulate", "--out", str(out), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert not out.exists() and not list(tmp_path.iterdir())


EMPS_REFERENCE = EMPS.parent / "reference.json"


@pytest.mark.parametrize("argv, message", [
    (["identify", str(EMPS), *STATIC_EMPS, "--angle-unit", "deg"],
     "--angle-unit deg applies to a revolute joint only; --axis prismatic (positions in m)"),
    (["predict", str(EMPS_REFERENCE), str(EMPS), "--angle-unit", "deg"],
     f"--angle-unit deg applies to a revolute joint only; {EMPS_REFERENCE} is a prismatic "
     "model (positions in m)"),
])
def test_degrees_are_refused_for_a_prismatic_axis(tmp_path, capsys, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    assert _exit_status(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not list(tmp_path.iterdir())


def _refused_unread(argv: list[str], capsys, monkeypatch) -> str:
    """stderr of a command that must end with status 2 before it reads any data."""
    monkeypatch.setattr("sparsefric.data.load_trajectories",
                        lambda *a, **k: pytest.fail("the data were read"))
    assert _exit_status(argv) == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("command", [["identify", str(EMPS), *STATIC_EMPS],
                                     ["predict", str(EMPS_REFERENCE), str(EMPS)]])
def test_out_below_a_file_is_refused_before_any_work(tmp_path, capsys, monkeypatch, command):
    """A parent of --out that is a regular file: named with the user's path, before the fit."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "existing.csv").write_text("x")
    err = _refused_unread([*command, "--out", "existing.csv/a/out"], capsys, monkeypatch)
    assert err == ("sparsefric: error: --out existing.csv/a/out: existing.csv is not a "
                   "directory\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["existing.csv"]


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs the Linux /proc file system")
@pytest.mark.parametrize("command", [["identify", str(EMPS), *STATIC_EMPS],
                                     ["predict", str(EMPS_REFERENCE), str(EMPS)],
                                     ["simulate"], ["cve", str(EMPS)]])
def test_out_where_no_file_can_be_made_is_refused_before_any_work(capsys, monkeypatch, command):
    err = _refused_unread([*command, "--out", "/proc/sfout"], capsys, monkeypatch)
    assert err == ("sparsefric: error: --out /proc/sfout: cannot create files in /proc (the "
                   "file system does not allow it)\n")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="needs a user whom file permissions bind")
def test_out_in_a_read_only_folder_is_refused_before_any_work(tmp_path, capsys):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        assert _exit_status(["identify", str(EMPS), *STATIC_EMPS, "--out",
                             str(locked / "out")]) == 2
    finally:
        locked.chmod(0o700)
    err = capsys.readouterr().err
    assert f"--out {locked / 'out'}: cannot create files in {locked} (permission denied)" in err


def test_jittery_time_stamps_of_regular_samples_are_placed_on_their_clock(tmp_path, capsys,
                                                                         monkeypatch):
    """EMPS's regular samples with ±20 µs on their stamps were refused as irregular; the
    positions show the samples regular, so the fit runs on the clock and says so. Samples
    taken at irregular times are still one line naming the file and --resample."""
    monkeypatch.chdir(tmp_path)
    df = pd.read_csv(EMPS).iloc[:3000]
    slots = df["t"].to_numpy()
    df["t"] = slots + np.random.default_rng(0).uniform(-20e-6, 20e-6, len(df))
    df.loc[0, "t"] = 0.0
    df.to_csv("jitter.csv", index=False)
    assert _exit_status(["identify", "jitter.csv", *STATIC_EMPS]) == 0
    err = capsys.readouterr().err
    assert "jitter.csv: the timestamps jitter about a regular clock of 0.001 s (up to 2" in err
    assert "the positions advance with the sample count" in err
    df["q"] = np.interp(df["t"], slots, df["q"])  # taken at the stamps, not on the clock
    df.to_csv("jitter.csv", index=False)
    assert _exit_status(["identify", "jitter.csv", *STATIC_EMPS, "--force"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("sparsefric: error: jitter.csv: irregular sampling: the interval ")
    assert err.endswith("tolerance 1 %); use --resample (resample=True) to interpolate onto a "
                        "uniform grid\n")


@pytest.mark.parametrize("value", ["0", "-0.1", "0.001", "0.999", "1", "1.5", "nan"])
def test_every_holdout_out_of_range_gets_the_one_message_with_the_range(tmp_path, capsys,
                                                                         monkeypatch, value):
    monkeypatch.chdir(tmp_path)
    assert _exit_status(["identify", str(EMPS), f"--holdout={value}"]) == 2
    err = capsys.readouterr().err
    assert err == (f"sparsefric: error: argument --holdout: must lie between 0.05 and 0.9, got "
                   f"'{value}' (see sparsefric identify --help)\n")


@pytest.mark.parametrize("argv, message", [
    (["cve", str(EMPS), "--out", "cve", "--differentiation", "given"],
     "--differentiation given needs the measured velocity and acceleration in every record "
     "(--velocity NAME and --acceleration NAME)"),
    (["identify", str(EMPS), *STATIC_EMPS, "--differentiation", "butterworth", "--cutoff-hz",
      "1e6"], f"--cutoff-hz 1e+06 is not below the Nyquist frequency 500 Hz of {EMPS}"),
    (["predict", str(EMPS_REFERENCE), str(EMPS), "--differentiation", "butterworth",
      "--cutoff-hz", "500"], f"--cutoff-hz 500 is not below the Nyquist frequency 500 Hz of "
     f"{EMPS}"),
    # 0.001 Hz was taken, and the fit's warnings blamed the data ("the torque denoising
    # removed 68 % of the torque: the record is dominated by content faster than the motion")
    (["identify", str(EMPS), *STATIC_EMPS, "--differentiation", "butterworth", "--cutoff-hz",
      "0.001"], f"--cutoff-hz 0.001 is below 0.0805 Hz, 2/T of {EMPS} (T = 24.84 s): the "
     "filter would take away its moves, not only their noise"),
    (["identify", str(EMPS), "--axis", "prismatic", "--method", "idim-ls", "--cutoff-hz",
      "0.05"], f"--cutoff-hz 0.05 is below 0.0805 Hz, 2/T of {EMPS}"),
    (["cve", str(EMPS), "--cutoff-hz", "0.01", "--out", "cve"], "--cutoff-hz 0.01 is below"),
    # a delay in ms given as s: the alignment would drop 3 s of every record
    (["identify", str(EMPS), *STATIC_EMPS, "--torque-delay", "3"], f"--torque-delay 3 s is not "
     f"below 0.1 of the duration of {EMPS} (24.84 s): a drive's delay is a few sample periods, "
     "in seconds (3 ms is 0.003)"),
    (["identify", str(EMPS), "--axis", "prismatic", "--method", "idim-ls", "--torque-delay",
      "-3"], "--torque-delay -3 s is not below 0.1"),
    (["predict", str(EMPS_REFERENCE), str(EMPS), "--torque-delay", "-2.5"],
     "--torque-delay -2.5 s is not below 0.1"),
])
def test_options_the_records_cannot_take_are_named_as_flags(tmp_path, capsys, monkeypatch,
                                                            argv, message):
    monkeypatch.chdir(tmp_path)
    assert _exit_status(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"sparsefric: error: {message}") and err.count("\n") == 1
    assert not list(tmp_path.iterdir())


def test_a_baseline_method_gets_the_data_checks_and_the_records_cut_at_jumps(tmp_path, capsys):
    """IDIM-LS took a time column in ms and a jump in q as they came, exit 0 and no word: the
    checks of the default method now run for the baselines too, and a jump cuts the record."""
    df = pd.read_csv(example_files("train")[-1])  # 2.13 rad/s
    ms = tmp_path / "ms.csv"
    df.assign(t=1000 * df.t).to_csv(ms, index=False)
    rc = main(["identify", str(ms), "--method", "idim-ls", "--strict", "--out",
               str(tmp_path / "a")])
    err = capsys.readouterr().err
    assert rc == 3 and "is the time column in seconds?" in err
    jumped = df.assign(q=df.q + np.where(np.arange(len(df)) >= len(df) // 2, 1.0, 0.0))
    jumped.to_csv(tmp_path / "jump.csv", index=False)
    jumped.iloc[:len(df) // 2].to_csv(tmp_path / "first.csv", index=False)
    jumped.iloc[len(df) // 2:].to_csv(tmp_path / "second.csv", index=False)
    assert main(["identify", str(tmp_path / "jump.csv"), "--method", "idim-ls", "--out",
                 str(tmp_path / "b")]) == 0
    assert "position jumps by +1" in capsys.readouterr().err
    assert main(["identify", str(tmp_path / "first.csv"), str(tmp_path / "second.csv"),
                 "--method", "idim-ls", "--out", str(tmp_path / "c")]) == 0
    cut, apart = (JointModel.load(tmp_path / d / "model.json") for d in "bc")
    assert cut.inertia == pytest.approx(apart.inertia, rel=1e-6)
    assert cut.coulomb == pytest.approx(apart.coulomb, rel=1e-6)


@pytest.mark.parametrize("method", ["sparsefric", "idim-ls"])
def test_a_joint_that_barely_moves_is_named_before_any_fit(tmp_path, capsys, monkeypatch,
                                                           method):
    """A held joint (a count of encoder dither, a holding torque) ended in "the identified
    model is physically inadmissible" after the fit: now one line before it, naming the file."""
    rng = np.random.default_rng(5)
    count = 2 * np.pi / 2**20
    n = 5000
    held = pd.DataFrame({"t": np.arange(n) * 1e-3,
                         "q": np.round((-0.6 + 5e-6 * rng.standard_normal(n)) / count) * count,
                         "tau": 24.0 + 0.3 * rng.standard_normal(n)})
    held.to_csv(tmp_path / "held.csv", index=False)
    monkeypatch.setattr("sparsefric.identify.fit_static", lambda *a, **k: pytest.fail("fitted"))
    monkeypatch.setattr("sparsefric.baselines.fit_baseline",
                        lambda *a, **k: pytest.fail("fitted"))
    assert main(["identify", str(tmp_path / "held.csv"), "--method", method, "--out",
                 str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"sparsefric: error: {tmp_path / 'held.csv'}: the joint barely "
                          "moves: its position spans ") and err.count("\n") == 1
    assert "no motion to identify friction from" in err
    assert not (tmp_path / "out").exists()


def test_predict_says_when_the_time_column_looks_like_ms(tmp_path, capsys):
    df = pd.read_csv(example_files("test")[0])
    ms = tmp_path / "ms.csv"
    df.assign(t=1000 * df.t).to_csv(ms, index=False)
    assert main(["predict", str(EXAMPLE / "truth.json"), str(ms)]) == 0
    assert "is the time column in seconds?" in capsys.readouterr().err


def test_a_prismatic_position_in_mm_is_named_by_identify_and_predict(tmp_path, capsys):
    """EMPS with q in mm was identified as a different model, the only hint "the joint moves
    at 19.6–125 m/s"."""
    mm = tmp_path / "mm.csv"
    df = pd.read_csv(_short_csv(tmp_path, EMPS))
    df.assign(q=1000 * df.q).to_csv(mm, index=False)
    text = "it looks like millimetres; divide the position column"
    assert main(["predict", str(EMPS.parent / "reference.json"), str(mm)]) == 0
    assert text in capsys.readouterr().err
    assert main(["identify", str(mm), "--axis", "prismatic", "--library", "coulomb-viscous",
                 "--static-only", "--uncertainty", "none", "--strict", "--out",
                 str(tmp_path / "o")]) == 3
    assert text in capsys.readouterr().err


def test_a_velocity_column_in_rpm_is_named_by_identify_and_predict(tmp_path, capsys):
    """qd and qdd in rpm (and rpm/s) were fitted with --differentiation given, the inertia 9.5×
    low, exit 0 and no warning: now an error that names the column; a warning (that --strict
    and --json see) where the derivatives come from the position."""
    df = pd.read_csv(_short_csv(tmp_path, example_files("train")[-1]))
    rpm = tmp_path / "rpm.csv"
    df.assign(qd=30 / np.pi * df.qd_true, qdd=30 / np.pi * df.qdd_true).drop(
        columns=["qd_true", "qdd_true"]).to_csv(rpm, index=False)
    text = f"{rpm}: column 'qd' is 9.55 × dq/dt of the position column 'q': rpm? 60/2π = 9.55"
    args = [str(rpm), "--velocity", "qd", "--acceleration", "qdd", "--differentiation"]
    out = tmp_path / "given"
    assert main(["identify", *args, "given", "--static-only", "--out", str(out)]) == 2
    (err,) = capsys.readouterr().err.strip().splitlines()
    assert err.startswith(f"sparsefric: error: {text}") and not out.exists()
    assert "--differentiation given would fit the model to it" in err
    assert main(["predict", str(EXAMPLE / "truth.json"), *args, "given"]) == 2
    assert capsys.readouterr().err.startswith(f"sparsefric: error: {text}")
    assert main(["identify", *args, "butterworth", "--static-only", "--library",
                 "coulomb-viscous", "--uncertainty", "none", "--strict", "--json", "--out",
                 str(tmp_path / "o")]) == 3
    warnings = json.loads(capsys.readouterr().out)["warnings"]
    assert any(w.startswith(text) and "taken from the position instead" in w for w in warnings)


def test_a_baseline_model_the_tool_cannot_read_back_is_an_error_and_nothing_is_written(
        tmp_path, capsys):
    """IDIM-LS on data/example's 0.127 rad/s record cut in two gives a negative inertia; the
    model.json written with it failed to load in every later command."""
    df = pd.read_csv(example_files("train")[0])
    df.assign(q=df.q + np.where(np.arange(len(df)) >= len(df) // 2, 1.0, 0.0)).to_csv(
        tmp_path / "jump.csv", index=False)
    out = tmp_path / "out"
    rc = main(["identify", str(tmp_path / "jump.csv"), "--method", "idim-ls", "--out",
               str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and not out.exists()
    assert "the idim-ls model" in err[-1] and "inertia" in err[-1] and "nothing written" in err[-1]


def test_a_file_given_for_training_and_test_is_named_and_strict_fails(tmp_path, capsys):
    """The warning was printed, but --strict exited 0."""
    train = str(example_files("train")[-1])
    args = ["identify", train, "--method", "idim-ls", "--test", train]
    assert main([*args, "--out", str(tmp_path / "lax")]) == 0
    assert f"{train} is training data and --test data" in capsys.readouterr().err
    assert main([*args, "--strict", "--out", str(tmp_path / "strict")]) == 3
    assert (tmp_path / "strict" / "model.json").is_file()


def test_the_shared_file_warning_is_a_finding_of_the_fit(tmp_path, capsys, monkeypatch):
    """A training file given as --test data: the warning was printed only, missing from
    report.html, summary.md and the --json warnings, and --strict ignored it. The fit's own
    findings are dropped here, so that the shared file alone decides --strict."""
    import sparsefric.identify

    fit = sparsefric.identify.fit_joint

    def without_findings(*args, **kwargs):
        result, unc = fit(*args, **kwargs)
        result.findings.clear()
        return result, unc

    monkeypatch.setattr(sparsefric.identify, "fit_joint", without_findings)
    train = str(_short_csv(tmp_path, EMPS))
    args = ["identify", train, "--axis", "prismatic", "--library", "coulomb-viscous-offset",
            "--static-only", "--uncertainty", "none", "--strict", "--json"]
    assert main([*args, "--out", str(tmp_path / "alone")]) == 0
    capsys.readouterr()
    out = tmp_path / "shared"
    assert main([*args, "--test", train, "--out", str(out)]) == 3
    text = f"{train} is training data and --test data: its error there is that of the fit"
    printed = capsys.readouterr()
    assert any(text in w for w in json.loads(printed.out)["warnings"]) and text in printed.err
    assert text in (out / "report.html").read_text() and text in (out / "summary.md").read_text()


def _given_twice(tmp_path) -> list[tuple[list[str], str]]:
    """identify's files with one given twice in a role, and how the error says so."""
    train, valid = str(example_files("train")[-1]), example_files("validate")[0]
    again = str(valid.parent / ".." / "example" / valid.name)  # another path to the same file
    copies = [str(tmp_path / f"{name}.csv") for name in ("copy", "again")]
    for path in copies:
        with open(path, "wb") as f:
            f.write(example_files("test")[0].read_bytes())
    return [([train, train], f"{train} is listed twice among the training files"),
            ([train, "--test", *copies], f"{copies[1]} holds the same bytes as {copies[0]} "
                                         "among the --test files"),
            ([train, "--validate", str(valid), again], f"{again} and {valid} are one file among "
                                                       "the --validate files")]


@pytest.mark.parametrize("case", range(3))
def test_a_file_given_twice_in_one_role_is_refused(tmp_path, capsys, case):
    """The same training file twice was fitted as twice the data (intervals narrowed, a
    spurious offset warning); a copy of a file, or another path to it, is the same data."""
    argv, text = _given_twice(tmp_path)[case]
    out = tmp_path / "out"
    assert main(["identify", *argv, "--static-only", "--out", str(out)]) == 2
    (err,) = capsys.readouterr().err.strip().splitlines()
    assert err == f"sparsefric: error: {text}: its records would count twice; give each file once"
    assert not out.exists()


def test_predict_replaces_an_existing_out_file_only_with_force(tmp_path, capsys):
    pred = tmp_path / "pred.csv"
    pred.write_text("earlier\n")
    args = ["predict", str(EXAMPLE / "truth.json"), str(example_files("test")[0]), "--out",
            str(pred)]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--out" in err[0] and f"{pred}: exists (use --force" in err[0]
    assert pred.read_text() == "earlier\n"
    assert main([*args, "--force"]) == 0
    assert list(pd.read_csv(pred).columns) == ["trajectory", "t", "tau", "tau_hat"]


def test_predict_loads_neither_the_simulator_nor_the_fit():
    """predict is read, differentiate, evaluate: its start-up is most of its ~1 s, and the
    simulator (validation imported it for relative_error) and the fitting modules it never
    runs have no place in it."""
    run = (f"sparsefric.cli.main(['predict', {str(EXAMPLE / 'truth.json')!r}, "
           f"{str(example_files('test')[0])!r}])")
    watched = ("sparsefric.simulate", "sparsefric.identify", "sparsefric.estimator",
               "sparsefric.feature_library", "scipy.signal", "scipy.stats", "sklearn")
    loaded = imported_by("sparsefric.cli", watched, run)  # after the words of predict's error
    assert not set(watched) & set(loaded)


def test_predict_differentiates_as_the_model_was_identified(tmp_path, capsys):
    """A model records how its data were differentiated; predict takes that method (and a κ
    or cutoff the user set) unless told otherwise, so that it quotes the error identify did."""
    data = json.loads((EXAMPLE / "truth.json").read_text())
    data["fit"] = {"differentiation": {"method": "butterworth", "regularization": None,
                                       "cutoff_hz": 5.0}}
    model = tmp_path / "model.json"
    model.write_text(json.dumps(data))
    test = str(example_files("test")[0])

    def error(*options: str) -> float:
        assert main(["predict", str(model), test, *options]) == 0
        return float(capsys.readouterr().out.split("=")[-1].split("%")[0])

    recorded = error()
    assert recorded == error("--differentiation", "butterworth", "--cutoff-hz", "5")
    assert recorded != error("--differentiation", "butterworth")
    assert recorded != error("--differentiation", "tv")


def test_a_torque_delay_aligns_every_role_and_predict_takes_it_from_the_model(tmp_path, capsys):
    """--torque-delay -0.002 (the torque 2 samples early): the training record, the blocks
    held out of it for validation and its last quarter held out as test data each lose their
    first 2 samples to the alignment; model.json records the delay, and predict aligns by it
    unless told otherwise, as a model file written before the option predicts as they are."""
    short = _short_csv(tmp_path, EMPS, n=8000)
    out = tmp_path / "out"
    assert main(["identify", str(short), *STATIC_EMPS, "--holdout", "0.25", "--torque-delay",
                 "-0.002", "--json", "--out", str(out)]) == 0
    data = json.loads(capsys.readouterr().out)["data"]
    assert [d["samples"] for d in data["train"]] == [5998]
    assert [d["samples"] for d in data["test"]] == [1998]
    fitted = json.loads((out / "model.json").read_text())
    assert fitted["fit"]["torque_delay"] == -0.002
    recorded = pd.read_csv(short)

    def predicted(model: dict, *options: str) -> pd.DataFrame:
        path, pred = tmp_path / "model.json", tmp_path / "pred.csv"
        path.write_text(json.dumps(model))
        assert main(["predict", str(path), str(short), "--differentiation", "butterworth",
                     "--out", str(pred), "--force", *options]) == 0
        return pd.read_csv(pred)

    aligned = predicted(fitted)
    np.testing.assert_array_equal(aligned.t, recorded.t[2:])
    np.testing.assert_allclose(aligned.tau, recorded.tau[:-2], rtol=1e-9)
    assert len(predicted(fitted, "--torque-delay", "0")) == len(recorded)
    del fitted["fit"]["torque_delay"]
    assert len(predicted(fitted)) == len(recorded)
    fitted["fit"]["torque_delay"] = "2 ms"
    path = tmp_path / "model.json"
    path.write_text(json.dumps(fitted))
    capsys.readouterr()
    assert main(["predict", str(path), str(short)]) == 2
    assert capsys.readouterr().err == (f"sparsefric: error: {path}: $.fit.torque_delay: must "
                                       "be a finite number of seconds, got '2 ms'\n")


def test_a_model_whose_fit_is_not_an_object_is_one_line_naming_the_file(tmp_path, capsys):
    data = json.loads((EXAMPLE / "truth.json").read_text())
    data["fit"] = [1, 2]
    model = tmp_path / "model.json"
    model.write_text(json.dumps(data))
    assert main(["predict", str(model), str(example_files("test")[0])]) == 2
    assert capsys.readouterr().err == (f"sparsefric: error: {model}: $.fit: must be an "
                                       "object\n")


def test_a_baseline_aligns_its_records_and_records_the_delay_for_predict(tmp_path):
    short = _short_csv(tmp_path, EMPS, n=8000)
    models = {}
    for delay in ("0", "-0.002"):
        out = tmp_path / delay
        assert main(["identify", str(short), "--axis", "prismatic", "--method", "idim-ls",
                     "--differentiation", "butterworth", "--torque-delay", delay, "--out",
                     str(out), "--quiet"]) == 0
        models[delay] = JointModel.load(out / "model.json")
        assert models[delay].extra["fit"] == {"torque_delay": float(delay)}
    assert models["0"].parameters() != models["-0.002"].parameters()


def test_a_presliding_distance_beyond_the_moves_names_the_option(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["identify", str(example_files("train")[-1]), "--presliding-distance", "100",
                 "--static-only", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and not out.exists()
    assert "--presliding-distance 100 leaves almost no sliding samples" in err[0]
