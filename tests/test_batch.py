"""``sparsefric batch``: a 3-joint manifest (one broken) on 2 processes and on a Dask cluster."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import sparsefric.batch as batch_module
from sparsefric.batch import JointResult, read_manifest, run_manifest
from sparsefric.cli import build_parser, main
from sparsefric.data import load_trajectories, save_trajectory
from sparsefric.errors import SparsefricError
from sparsefric.fleet import UNRECORDED, count_text, robust_z

from .conftest import example_files

pytestmark = pytest.mark.slow  # whole identifications

#: Fast identification options (one Ω_s and σ0 start, 6 thresholds), as manifest cells.
FAST = {"sigma0_starts": "1e4", "omega_starts": "0.05",
        "thresholds": ";".join(f"{v:.4g}" for v in np.geomspace(0.1, 20, 6))}


def _piece(path: Path, out: Path, start: int, n: int, noise: float, seed: int) -> str:
    traj = load_trajectories([path])[0]
    s = slice(start, start + n)
    tau = traj.tau[s] + np.random.default_rng(seed).normal(0.0, noise, n)
    save_trajectory(out, traj.with_(t=traj.t[s] - traj.t[start], q=traj.q[s], tau=tau, truth={}))
    return out.name


def _manifest(root: Path) -> Path:
    """Joints a, b (pieces of data/example with different noise) and broken (no tau column)."""
    data = root / "data"
    data.mkdir()
    train = example_files("train")
    rows = []
    for joint, start, noise in (("a", 0, 0.0), ("b", 1000, 0.2)):
        files = [_piece(p, data / f"{joint}_{i}.csv", start, 4000, noise, i)
                 for i, p in enumerate(train)]
        rows.append({"joint": joint, "train": ";".join(f"data/{f}" for f in files), **FAST})
    pd.read_csv(data / "a_0.csv").drop(columns="tau").to_csv(data / "broken.csv", index=False)
    rows.append({"joint": "broken", "train": "data/broken.csv", **FAST})
    path = root / "manifest.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _cli(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    return args.run(args)


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    root = tmp_path_factory.mktemp("batch")
    manifest = _manifest(root)
    status = _cli(["batch", str(manifest), "--out", str(root / "out"), "--workers", "2",
                   "--quiet"])
    return root, manifest, status


def test_two_joints_succeed_and_the_broken_one_is_reported(batch):
    root, _, status = batch
    out = root / "out"
    assert status == 1  # one joint failed
    table = pd.read_csv(out / "summary.csv", keep_default_na=False).set_index("joint")
    assert table.loc["a", "status"] == "ok" and table.loc["b", "status"] == "ok"
    assert table.loc["broken", "status"] == "failed"
    assert "no column 'tau'" in table.loc["broken", "error"]
    for joint in ("a", "b"):
        files = {p.name for p in (out / joint).iterdir()}
        assert {"model.json", "report.html", "summary.json", "terms.csv"} <= files
        assert "qdd" in table.loc[joint, "active_terms"]
        assert float(table.loc[joint, "train_rel_rms"]) < 0.2
    assert not (out / "broken").exists()
    assert not list(out.glob(".*staging*"))
    page = (out / "summary.html").read_text(encoding="utf-8")
    assert 'href="a/report.html"' in page and "no column &#x27;tau&#x27;" in page


def test_rerun_keeps_complete_joints_with_their_status_and_force_redoes(batch, monkeypatch,
                                                                       capsys):
    root, manifest, _ = batch
    out = root / "out"
    stamp = (out / "a" / "model.json").stat().st_mtime_ns
    first = pd.read_csv(out / "summary.csv").set_index("joint")
    calls = _stub_runs(monkeypatch)
    capsys.readouterr()
    table = run_manifest(manifest, out, workers=2, progress=True)
    assert capsys.readouterr().err == ""  # no progress bar: stderr is not a terminal
    assert calls == ["broken"]  # only the failed joint is tried again
    assert (out / "a" / "model.json").stat().st_mtime_ns == stamp
    assert list(table["status"]) == ["ok", "ok", "failed"]
    assert list(table["run"]) == ["earlier", "earlier", "this"]
    kept = table.set_index("joint")
    for joint in ("a", "b"):
        assert kept.loc[joint, "seconds"] == first.loc[joint, "seconds"] > 0
    assert table.loc[0, "coulomb"] > 0  # parameters read back from disk
    calls.clear()
    run_manifest(manifest, out, workers=2, progress=False, force=True)
    assert calls == ["a", "b", "broken"]


def _stub_runs(monkeypatch) -> list[str]:
    """Local runs replaced by a stub that fails each joint unrun; the joints it is given."""
    calls: list[str] = []

    def fake_run(specs, out_dir, workers, report):
        for s in specs:
            calls.append(s.joint)
            report(JointResult(s.joint, "failed", "not run"))

    monkeypatch.setattr(batch_module, "_run_local", fake_run)
    return calls


def _rerun(manifest: Path, out: Path, monkeypatch) -> tuple[list[str], pd.DataFrame]:
    """A rerun whose identifications are not run: the joints it would redo, and its table."""
    calls = _stub_runs(monkeypatch)
    table = run_manifest(manifest, out, workers=2, progress=False)
    return calls, table.set_index("joint")


def test_rerun_redoes_a_joint_whose_row_or_files_changed(batch, tmp_path, monkeypatch):
    root, _, _ = batch
    copy = tmp_path / "moved"
    shutil.copytree(root, copy)  # the record holds file names and content, not the folder
    manifest, out = copy / "manifest.csv", copy / "out"
    data = copy / "data" / "a_0.csv"
    os.utime(data, ns=(data.stat().st_atime_ns, data.stat().st_mtime_ns + 10**9))
    calls, table = _rerun(manifest, out, monkeypatch)
    assert calls == ["broken"]  # moved and touched, same content: kept
    assert list(table["run"]) == ["earlier", "earlier", "this"]

    original = data.read_bytes()
    data.write_bytes(original.replace(b"0", b"1", 1))  # same size, other content
    rows = pd.read_csv(manifest, dtype=str, keep_default_na=False)
    rows["model"] = ["", "A", ""]
    rows.to_csv(manifest, index=False)
    calls, table = _rerun(manifest, out, monkeypatch)
    assert calls == ["a", "b", "broken"]
    assert table.loc["a", "redone"] == "train file a_0.csv changed"
    assert table.loc["b", "redone"] == "option model changed"
    assert table.loc["broken", "redone"] == ""  # never done: not counted as redone
    assert count_text(table) == "3 failed (2 redone because their inputs changed)"

    data.write_bytes(original)
    rows["model"] = ""
    rows.to_csv(manifest, index=False)
    (out / "a" / "inputs.json").unlink()  # results of a version that kept no record
    with open(out / "b" / "model.json", "a") as f:  # a model.json not of its record
        f.write("\n")
    calls, table = _rerun(manifest, out, monkeypatch)
    assert calls == ["a", "b", "broken"]
    assert table.loc["a", "redone"] == UNRECORDED
    assert "model.json" in table.loc["b", "redone"]
    assert count_text(table) == ("3 failed (1 redone because its inputs changed, 1 redone "
                                 "because the earlier run recorded no inputs)")
    assert "redone" in pd.read_csv(out / "summary.csv").columns


def test_dask_cluster_gives_the_same_models(batch, tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    root, manifest, _ = batch
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=None) as cluster:
        table = run_manifest(manifest, tmp_path / "out", scheduler=cluster.scheduler_address,
                             progress=False)
    assert list(table["status"]) == ["ok", "ok", "failed"]
    for joint in ("a", "b"):
        local = json.loads((root / "out" / joint / "model.json").read_text())
        remote = json.loads((tmp_path / "out" / joint / "model.json").read_text())
        assert _flat(remote) == pytest.approx(_flat(local), rel=1e-9, abs=1e-12)


def _flat(obj, prefix: str = "") -> dict:
    if isinstance(obj, dict):
        return {k: v for key, val in obj.items() for k, v in _flat(val, f"{prefix}/{key}").items()}
    if isinstance(obj, list):
        return {k: v for i, val in enumerate(obj) for k, v in _flat(val, f"{prefix}/{i}").items()}
    return {prefix: obj} if isinstance(obj, int | float) else {}


# ------------------------------------------------------------------------------ manifest errors
def _write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "x.csv").write_text("t,q,tau\n0,0,0\n")
    path = tmp_path / "m.csv"
    path.write_text(text)
    return path


@pytest.mark.parametrize("text, message", [
    ("joint,train\na,missing.csv\n", "row 2, column 'train': no such file 'missing.csv'"),
    ("joint,validate\na,x.csv\n", "missing column 'train'"),
    ("train\nx.csv\n", "missing column 'joint'"),
    ("joint,train\na,x.csv\na,x.csv\n", "row 3, column 'joint': duplicate joint name 'a'"),
    ("joint,train,axis\na,x.csv,rotary\n", "row 2, column 'axis': expected one of revolute"),
    ("joint,train,static_only\na,x.csv,maybe\n", "row 2, column 'static_only': expected true"),
    ("joint,train,sigma0_starts\na,x.csv,-1\n", "row 2, column 'sigma0_starts': expected a pos"),
    ("joint,train,torque_delay\na,x.csv,nan\n", "row 2, column 'torque_delay': expected a finite "
     "number, got 'nan'"),
    ("joint,train,resamples\na,x.csv,5\n", "row 2, column 'resamples': expected an integer of "
     "at least 10, got '5'"),
    ("joint,train,random_state\na,x.csv,-1\n", "row 2, column 'random_state': expected an "
     "integer of at least 0, got '-1'"),
    ("joint,train,resamples\na,x.csv,100\n", "row 2, column 'resamples': needs uncertainty "
     "bootstrap in the row (column 'uncertainty')"),
    ("joint,train,uncertainty,random_state\na,x.csv,fast,0\n", "row 2, column 'random_state': "
     "needs uncertainty bootstrap"),
    ("joint,train,colour\na,x.csv,red\n", "column 'colour': unknown column"),
    ("joint,train,sample_rate\na,x.csv,0\n", "row 2, column 'sample_rate': expected a "
     "positive number, got '0'"),
    ("joint,train\n../up,x.csv\n", "row 2, column 'joint': joint name '../up'"),
    ("joint,train,axis,angle_unit\na,x.csv,prismatic,deg\n",
     "row 2, column 'angle_unit': deg applies to a revolute joint only"),
    ("joint,train;validate\na,x.csv;x.csv\n", "row 1 (header), column 'train;validate': the "
     "header mixes ',' and ';'; separate all its columns by ','"),
    ("joint;train;validate\na;x.csv;x.csv;x.csv\n", 'row 2: more cells than the header has '
     'columns (quote a cell of several files: "a.csv;b.csv")'),
    ("joint,train\na,x.csv,x.csv\n", "row 2: more cells than the header has columns"),
])
def test_bad_manifest_is_one_line_naming_row_and_column(tmp_path, text, message):
    path = _write(tmp_path, text)
    with pytest.raises(SparsefricError) as info:
        read_manifest(path)
    assert str(path) in str(info.value) and message in str(info.value)
    assert "\n" not in str(info.value)


def test_bootstrap_columns_are_options_of_the_joint(tmp_path):
    spec, = read_manifest(_write(tmp_path, "joint,train,uncertainty,resamples,random_state\n"
                                           "a,x.csv,bootstrap,200,7\n"))
    assert spec.options == {"uncertainty": "bootstrap", "resamples": 200, "random_state": 7}


def test_a_sample_rate_column_is_a_loading_option(tmp_path):
    spec, = read_manifest(_write(tmp_path, "joint,train,sample_rate\na,x.csv,500\n"))
    assert spec.load == {"sample_rate": 500.0} and spec.options == {}


def test_a_file_listed_twice_in_a_cell_is_refused(tmp_path):
    """A cell naming one file twice, or a copy of it, fitted its records twice over."""
    (tmp_path / "copy.csv").write_bytes((_write(tmp_path, "").parent / "x.csv").read_bytes())
    x, copy = (str((tmp_path / name).resolve()) for name in ("x.csv", "copy.csv"))
    for text, message in (("joint,train\na,x.csv;./x.csv\n",
                           f"row 2, column 'train': {x} is listed twice: its records would "
                           "count twice; list each file once"),
                          ("joint,train,test\na,x.csv,x.csv;copy.csv\n",
                           f"row 2, column 'test': {copy} holds the same bytes as {x}")):
        with pytest.raises(SparsefricError, match=re.escape(message)):
            read_manifest(_write(tmp_path, text))


def test_a_training_file_given_as_test_data_is_a_warning_of_the_joint(tmp_path):
    """identify warned of it; a batch joint did not, and --strict passed."""
    train = str(example_files("train")[-1])
    spec = batch_module.JointSpec("j", (train,), test=(train,), options={
        "static_only": True, "library": "coulomb-viscous", "differentiation": "butterworth",
        "uncertainty": "none"})
    result = batch_module.identify_joint(spec, str(tmp_path))
    assert result.status == "ok"
    assert f"{train} is training data and test data: its error there is that of the fit" \
        in result.summary["warnings"][0]


@pytest.mark.parametrize("cutoff", [0.001, 600.0])
def test_a_manifest_cutoff_the_records_cannot_take_fails_the_joint_as_identify_refuses_it(
        cutoff, capsys, monkeypatch, tmp_path):
    """0.001 Hz was fitted with warnings that blamed the data, 600 Hz failed after the
    differentiation without the record's name: both now fail the joint before the fit, with
    the message of ``identify --cutoff-hz``."""
    train = str(example_files("train")[0])
    spec = batch_module.JointSpec("j", (train,), options={"differentiation": "butterworth",
                                                          "cutoff_hz": cutoff})
    monkeypatch.setattr(batch_module, "fit_joint", lambda *a, **k: pytest.fail("fitted"))
    result = batch_module.identify_joint(spec, str(tmp_path))
    assert result.status == "failed" and result.error.startswith(f"cutoff_hz {cutoff:g} is ")
    assert main(["identify", train, "--differentiation", "butterworth", "--cutoff-hz",
                 f"{cutoff:g}", "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == f"sparsefric: error: --{result.error.replace('_', '-', 1)}\n"


def test_a_manifest_torque_delay_the_records_cannot_take_fails_the_joint_before_the_fit(
        monkeypatch, tmp_path):
    """The delay is checked against every record of the joint, its test records included,
    before the fit, with the message of ``identify --torque-delay``."""
    train, test = str(example_files("train")[0]), str(example_files("test")[-1])  # 7.2 s
    spec = batch_module.JointSpec("j", (train,), test=(test,), options={"torque_delay": 0.8})
    monkeypatch.setattr(batch_module, "fit_joint", lambda *a, **k: pytest.fail("fitted"))
    result = batch_module.identify_joint(spec, str(tmp_path))
    assert result.status == "failed"
    assert result.error == (f"torque_delay 0.8 s is not below 0.1 of the duration of {test} "
                            "(7.199 s): a drive's delay is a few sample periods, in seconds "
                            "(3 ms is 0.003)")


def test_manifest_paths_are_relative_to_its_folder(tmp_path):
    path = _write(tmp_path, "joint,train,model,omega_starts\nj1,x.csv,B,0.01;0.1\n")
    (spec,) = read_manifest(path)
    assert spec.train == (str((tmp_path / "x.csv").resolve()),)
    assert spec.options == {"model": "B", "omega_starts": (0.01, 0.1)}


def test_a_windows_manifest_with_comment_lines_is_read_and_rows_named_by_line(tmp_path):
    """Excel on Windows writes 'ä' in Windows-1252 (the manifest was refused as not UTF-8);
    a row commented out with '#' is skipped, and rows keep the numbers an editor shows."""
    (tmp_path / "Gelenk_ä.csv").write_text("t,q,tau\n0,0,0\n")
    path = _write(tmp_path, "")
    path.write_bytes("# robot 3\njoint,train\n#old,x.csv\n\nj1,Gelenk_ä.csv\n".encode("cp1252"))
    (spec,) = read_manifest(path)
    assert spec.train == (str((tmp_path / "Gelenk_ä.csv").resolve()),) and spec.line == 5
    path.write_text("# robot 3\njoint,train\n\nj1,x.csv\nj1,x.csv\n")
    with pytest.raises(SparsefricError, match="row 5, column 'joint': duplicate joint name 'j1' "
                       r"\(first on row 4\)"):
        read_manifest(path)
    path.write_text("# robot 3\njoint,validate\nj1,x.csv\n")
    with pytest.raises(SparsefricError, match="row 2 \\(header\\): missing column 'train'"):
        read_manifest(path)


def test_a_manifest_separated_by_semicolons_reads_as_by_commas(tmp_path):
    """A spreadsheet whose decimal mark is a comma writes ';' between the columns (and quotes a
    cell of several files); it was one column 'joint;train;…', "missing column 'joint'"."""
    comma = _write(tmp_path, "joint,train,validate,axis\na,x.csv;y.csv,x.csv,prismatic\n")
    (tmp_path / "y.csv").write_text("t,q,tau\n1,1,1\n")
    semi = tmp_path / "semi.csv"
    semi.write_text('joint;train;validate;axis\r\na;"x.csv;y.csv";x.csv;prismatic\r\n')
    assert read_manifest(semi) == read_manifest(comma)


def test_numbers_of_a_semicolon_manifest_have_decimal_commas(tmp_path):
    """The spreadsheet that separates by ';' writes 0.5 as '0,5' ("expected a number, got
    '0,5'"); a list with decimal points keeps its commas as separators."""
    comma = _write(tmp_path, 'joint,train,tanh_k,omega_starts,thresholds,torque_delay\n'
                             'a,x.csv,0.5,0.01;0.1,"0.2,3",-0.003\n')
    semi = tmp_path / "semi.csv"
    semi.write_text('joint;train;tanh_k;omega_starts;thresholds;torque_delay\n'
                    'a;x.csv;0,5;"0,01;0,1";0.2,3;-0,003\n')
    (expected,), (spec,) = read_manifest(comma), read_manifest(semi)
    assert spec.options.pop("thresholds").tolist() == [0.2, 3.0]
    expected.options.pop("thresholds")
    assert spec == expected and spec.options["tanh_k"] == 0.5
    assert spec.options["torque_delay"] == -0.003


def test_a_manifest_is_delimited_as_a_data_file_is(tmp_path):
    """The manifest has the data files' reader: tabs separate its columns, with decimal
    commas, and separators that end its rows are dropped (both were refused)."""
    comma = _write(tmp_path, "joint,train,tanh_k\na,x.csv,0.5\n")
    for name, text in (("tab.csv", "joint\ttrain\ttanh_k\na\tx.csv\t0,5\n"),
                       ("ends.csv", "joint;train;tanh_k\na;x.csv;0,5;;\n")):
        (tmp_path / name).write_text(text)
        assert read_manifest(tmp_path / name) == read_manifest(comma)

def test_robust_z_flags_the_odd_one():
    z = robust_z(np.array([10.0, 10.5, 9.8, 10.2, 30.0, np.nan]))
    assert abs(z[4]) > 3.5 and np.all(np.abs(z[:4]) < 1.5) and np.isnan(z[5])
    assert np.all(np.isnan(robust_z(np.array([1.0, 2.0]))))
    assert np.all(robust_z(np.array([5.0, 5.0, 5.0])) == 0)
