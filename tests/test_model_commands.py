"""``export`` and ``validate-model``: code files written whole, one-line errors naming the file,
the option or the JSON path."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys

import numpy as np
import pytest

from sparsefric import export
from sparsefric.errors import ModelFileError, OptionError, SparsefricError
from sparsefric.model import JointModel
from sparsefric.model_commands import EXPORT_LANGS, EXPORT_PREFIX, add_parsers

from .conftest import EXAMPLE, imported_by

TRUTH = EXAMPLE / "truth.json"


class _Parser(argparse.ArgumentParser):
    """Usage errors as exceptions, so that a test can read them."""

    def error(self, message: str):
        raise SparsefricError(message)


def _run(argv: list[str]) -> int:
    """Parse and run a command as the ``sparsefric`` entry point wires it."""
    parser = _Parser(prog="sparsefric")
    add_parsers(parser.add_subparsers(dest="command", required=True, parser_class=_Parser))
    args = parser.parse_args(argv)
    return args.run(args)


def test_defaults_are_those_of_the_exporter():
    assert EXPORT_LANGS == export.LANGS and EXPORT_PREFIX == export.DEFAULT_PREFIX


def test_export_python_module_runs_like_the_model(tmp_path, capsys):
    out = tmp_path / "ctrl"
    assert _run(["export", str(TRUTH), "--lang", "python", "--out", str(out)]) == 0
    module = out / f"{EXPORT_PREFIX}.py"
    assert str(module) in capsys.readouterr().out
    qd = np.linspace(-0.5, 0.5, 200)
    code = (f"import sys, numpy as np; sys.path.insert(0, {str(out)!r}); "
            f"from {EXPORT_PREFIX} import LuGreFriction; "
            "print(*LuGreFriction().simulate(np.linspace(-0.5, 0.5, 200), 0.001)[0])")
    done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                          text=True)
    expected = JointModel.load(TRUTH).friction_object().simulate(qd, 0.001)[0]
    np.testing.assert_allclose(np.array(done.stdout.split(), dtype=float), expected,
                               rtol=1e-12, atol=1e-12)


def test_export_c_writes_header_and_source_with_the_prefix(tmp_path):
    out = tmp_path / "ctrl"
    out.mkdir()
    (out / "keep.txt").write_text("other files stay")
    assert _run(["export", str(TRUTH), "--lang", "c", "--out", str(out),
                 "--prefix", "axis2"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["axis2.c", "axis2.h", "keep.txt"]
    assert "axis2_step(" in (out / "axis2.h").read_text()
    assert not list(tmp_path.glob(".ctrl.staging-*"))


@pytest.mark.parametrize("argv, error, message", [
    (["export", "absent.json", "--lang", "c", "--out", "{tmp}/o"], ModelFileError,
     "absent.json: no such model file"),
    (["export", str(TRUTH), "--lang", "c", "--out", "{tmp}/o", "--prefix", "2axis"],
     OptionError, "prefix must be a C identifier"),
    (["export", str(TRUTH), "--lang", "c", "--out", "{tmp}/file.txt"], OptionError,
     "file.txt: exists and is not a directory"),
    (["export", str(TRUTH), "--lang", "rust", "--out", "{tmp}/o"], SparsefricError,
     "invalid choice: 'rust'"),
    (["export", str(TRUTH), "--out", "{tmp}/o"], SparsefricError, "--lang"),
    (["export", str(TRUTH), "--lang", "python", "--out", "{tmp}/o", "--prefix", "sys"],
     OptionError, "'sys' is a module of Python's standard library"),
])
def test_export_errors_name_the_file_or_option_and_write_nothing(tmp_path, argv, error,
                                                                  message):
    (tmp_path / "file.txt").write_text("")
    with pytest.raises(error, match=message) as info:
        _run([a.replace("{tmp}", str(tmp_path)) for a in argv])
    assert "\n" not in str(info.value)
    assert not (tmp_path / "o").exists()


def test_export_replaces_files_of_the_same_names_only_with_force(tmp_path):
    out = tmp_path / "ctrl"
    out.mkdir()
    edited = out / f"{EXPORT_PREFIX}.c"
    edited.write_text("/* my hand edits */")
    argv = ["export", str(TRUTH), "--lang", "c", "--out", str(out)]
    with pytest.raises(OptionError, match=rf"ctrl: holds .*\({EXPORT_PREFIX}.c\).*force"):
        _run(argv)
    assert edited.read_text() == "/* my hand edits */"
    assert not (out / f"{EXPORT_PREFIX}.h").exists()
    assert _run([*argv, "--force"]) == 0
    assert f"{EXPORT_PREFIX}_step(" in edited.read_text()


def test_export_of_a_broken_model_names_the_json_path(tmp_path):
    data = json.loads(TRUTH.read_text())
    data["friction"]["sigma0"] = -3
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(data))
    with pytest.raises(ModelFileError, match=r"broken.json: \$.friction.sigma0: -3 is less"):
        _run(["export", str(broken), "--lang", "c", "--out", str(tmp_path / "o")])
    assert not (tmp_path / "o").exists()


def test_validate_model_accepts_written_and_committed_files(tmp_path, capsys):
    saved = tmp_path / "model.json"
    JointModel.load(TRUTH).with_(axis="prismatic", kind="static").save(saved)
    assert _run(["validate-model", str(TRUTH), str(saved)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"{TRUTH}: valid sparsefric-model/1 (revolute axis, lugre friction)",
                     f"{saved}: valid sparsefric-model/2 (prismatic axis, static friction)"]


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["rigid_body"].pop("inertia"), r"\$.rigid_body: 'inertia' is a required"),
    (lambda d: d["friction"]["stribeck"][0].update(delta="1.5"),
     r"\$.friction.stribeck\[0\].delta: '1.5' is not of type 'number'"),
    (lambda d: d.update(format="sparsefric-model/9"), r"\$.format: "),
])
def test_validate_model_names_the_first_bad_json_path(tmp_path, capsys, edit, message):
    data = json.loads(TRUTH.read_text())
    edit(data)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    assert _run(["validate-model", str(TRUTH), str(bad)]) == 2
    out, err = capsys.readouterr()
    assert out.startswith(f"{TRUTH}: valid")
    assert re.fullmatch(f"sparsefric: error: {bad}: {message}[^\n]*\n", err)


def test_validate_model_refuses_what_only_the_reader_sees(tmp_path, capsys):
    bad = tmp_path / "nan.json"
    bad.write_text(TRUTH.read_text().replace('"sigma1": 60.0', '"sigma1": NaN'))
    assert _run(["validate-model", str(bad)]) == 2
    assert "nan.json: friction: key 'sigma1' must be a finite number" in capsys.readouterr().err


def test_validate_model_checks_every_file_and_fails_if_any_is_invalid(tmp_path):
    """It stopped at the first invalid file: the files after it went unchecked. Like a linter,
    it now gives one line per file, in order, and exit status 2 (that of bad input)."""
    data = json.loads(TRUTH.read_text())
    data["friction"]["sigma0"] = -3
    (tmp_path / "bad.json").write_text(json.dumps(data))
    (tmp_path / "broken.json").write_text("{oops")
    files = ["bad.json", str(TRUTH), "absent.json", "broken.json", str(TRUTH)]
    done = subprocess.run([sys.executable, "-m", "sparsefric", "validate-model", *files],
                          cwd=tmp_path, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    assert done.returncode == 2
    assert done.stdout.splitlines() == [
        "sparsefric: error: bad.json: $.friction.sigma0: -3 is less than or equal to the "
        "minimum of 0",
        f"{TRUTH}: valid sparsefric-model/1 (revolute axis, lugre friction)",
        "sparsefric: error: absent.json: no such model file",
        "sparsefric: error: broken.json: not valid JSON (line 1: Expecting property name "
        "enclosed in double quotes)",
        f"{TRUTH}: valid sparsefric-model/1 (revolute axis, lugre friction)"]


def test_commands_import_nothing_heavy_at_start_up():
    assert imported_by("sparsefric.model_commands", ("numpy", "sparsefric.model")) == []


def test_entry_point_prints_one_line_and_exits_2(tmp_path, capsys):
    from sparsefric.cli import build_parser, main

    if "validate-model" not in build_parser().format_help():
        pytest.skip("export is not wired into sparsefric.cli.build_parser yet")
    rc = main(["export", str(TRUTH), "--lang", "c", "--out", str(tmp_path), "--prefix", "9"])
    assert rc == 2
    assert capsys.readouterr().err == ("sparsefric: error: --prefix must be a C identifier "
                                       "(letters, digits, _; not starting with a digit), "
                                       "got '9'\n")
    assert main(["validate-model", str(TRUTH)]) == 0
