"""Bad input never ends in a traceback: a valid result, or one line with exit status 2.

The corpus in ``tests/corpus`` (written by ``make_corpus.py``) is run through the command line;
hypothesis then mutates well-formed files and options at random. The CLI is fuzzed on inputs that
fail while loading (a real identification takes 20 s), so every case is fast.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sparsefric.cli import main
from sparsefric.data import MIN_SAMPLES, Columns, Trajectory, load_trajectories
from sparsefric.errors import DataError, ModelFileError, OptionError
from sparsefric.model import JointModel

from .conftest import EXAMPLE
from .corpus.make_corpus import _csv, _model, _rows, write_corpus

CORPUS = Path(__file__).resolve().parent / "corpus"
BAD_CSVS = sorted((CORPUS / "csv").glob("*.csv"))
BAD_MODELS = sorted((CORPUS / "model").glob("*.json"))
#: Files that fail to load under any column options (so that a fuzzed CLI run stays fast).
ALWAYS_BAD = [CORPUS / "csv" / f"{n}.csv" for n in ("empty", "binary_garbage", "utf16",
                                                      "too_few_rows", "header_only")]
GOOD_DATA = EXAMPLE / "test_v1p4.csv"
GOOD_MODEL = EXAMPLE / "truth.json"
#: The suite runs a fixed set of examples (derandomised, no example database);
#: ``SPARSEFRIC_FUZZ_EXAMPLES=2000 pytest tests/test_fuzz.py`` runs a longer, random session.
_LONG = os.environ.get("SPARSEFRIC_FUZZ_EXAMPLES")
FUZZ = settings(max_examples=int(_LONG or 40), deadline=None, derandomize=_LONG is None,
                database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def _run(argv: list[str]) -> tuple[int, str, str]:
    """``sparsefric argv`` in-process: exit status, stdout, stderr (argparse exits count too)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else 2
    return rc, out.getvalue(), err.getvalue()


def _assert_one_line_error(rc: int, stderr: str, name: str | None = None) -> None:
    assert rc == 2, stderr
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("sparsefric: error: ") and "Traceback" not in stderr
    if name is not None:
        assert name in lines[0]


def _assert_one_line(exc: Exception) -> None:
    text = str(exc)
    assert text and "\n" not in text and "\r" not in text, repr(text)


# ------------------------------------------------------------------------------------ corpus
def test_corpus_is_reproducible_and_large_enough(tmp_path):
    written = write_corpus(tmp_path)
    assert len(BAD_CSVS) >= 30 and len(BAD_MODELS) >= 20
    assert len(written) == len(BAD_CSVS) + len(BAD_MODELS)
    for path in written:
        committed = CORPUS / path.relative_to(tmp_path)
        assert committed.read_bytes() == path.read_bytes(), f"regenerate {committed}"


@pytest.mark.parametrize("path", BAD_CSVS, ids=lambda p: p.stem)
def test_bad_csv_through_identify(tmp_path, path):
    out = tmp_path / "out"
    rc, stdout, stderr = _run(["identify", str(path), "--static-only", "--out", str(out)])
    _assert_one_line_error(rc, stderr, path.name)
    assert stdout == "" and not out.exists()
    assert not list(tmp_path.glob(".out.staging-*"))


@pytest.mark.parametrize("path", BAD_MODELS, ids=lambda p: p.stem)
def test_bad_model_through_predict(tmp_path, path):
    pred = tmp_path / "pred.csv"
    rc, stdout, stderr = _run(["predict", str(path), str(GOOD_DATA), "--out", str(pred)])
    _assert_one_line_error(rc, stderr, path.name)
    assert stdout == "" and not pred.exists()


# ------------------------------------------------------------------------------------ loader
def _check_loaded(trajs: list[Trajectory]) -> None:
    for tr in trajs:
        assert len(tr) >= MIN_SAMPLES and np.all(np.diff(tr.t) > 0)
        for x in (tr.t, tr.q, tr.tau):
            assert x.dtype == float and np.all(np.isfinite(x)) and len(x) == len(tr.t)


def _load_or_error(path: Path, **kwargs) -> None:
    try:
        _check_loaded(load_trajectories(path, **kwargs))
    except DataError as exc:
        _assert_one_line(exc)


CELLS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(-10**20, 10**20).map(str),
    st.sampled_from(["", "nan", "NaN", "inf", "-inf", "1e308", "-1e309", "abc", "1,5", "True",
                     "0x1f", "1+2j", '"', "'", "\x00", " ", "NULL", "#"]),
    st.text(max_size=6),
)


@FUZZ
@given(data=st.binary(max_size=400), suffix=st.sampled_from([".csv", ".txt", ".parquet", ""]))
def test_loader_on_random_bytes(data, suffix):
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / f"f{suffix}"
        path.write_bytes(data)
        _load_or_error(path)


@FUZZ
@given(header=st.lists(st.sampled_from(["t", "q", "tau", "trajectory", "qd_true", "x", "t",
                                        "", "q d"]), max_size=5),
       rows=st.lists(st.lists(CELLS, max_size=5), max_size=8),
       repeat=st.integers(1, 12), sep=st.sampled_from([",", ";", "\t"]))
def test_loader_on_random_tables(header, rows, repeat, sep):
    text = sep.join(header) + "\n" + "\n".join(sep.join(r) for r in rows * repeat) + "\n"
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "f.csv"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        _load_or_error(path)


MUTATIONS = st.lists(st.tuples(st.sampled_from(["cell", "drop", "dup", "swap", "cut", "col"]),
                               st.integers(0, 10**6), st.integers(0, 3), CELLS), max_size=4)


def _mutate(rows: list[list[str]], header: list[str], mutations) -> str:
    cut = None
    for kind, i, j, value in mutations:
        i %= len(rows)
        if kind == "cell":
            rows[i][j % len(rows[i])] = value
        elif kind == "drop":
            rows.pop(i)
        elif kind == "dup":
            rows.insert(i, list(rows[i]))
        elif kind == "swap":
            rows[i], rows[i - 1] = rows[i - 1], rows[i]
        elif kind == "col":
            header = [*header, "trajectory"]
            rows = [[*r, "a" if (k // (i % 70 + 1)) % 2 else value] for k, r in enumerate(rows)]
        else:
            cut = i
        if len(rows) < 2:
            break
    text = ",".join(header) + "\n" + "\n".join(",".join(r) for r in rows) + "\n"
    return text if cut is None else text[: cut % len(text)]


@FUZZ
@given(mutations=MUTATIONS, n=st.integers(40, 160), resample=st.booleans(),
       unit=st.sampled_from(["rad", "deg"]))
def test_loader_on_mutated_trajectories(mutations, n, resample, unit):
    rows = [[f"{v:.9g}" for v in r] for r in _rows(n)]
    text = _mutate(rows, ["t", "q", "tau"], mutations)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "f.csv"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        _load_or_error(path, resample=resample, angle_unit=unit)


NAMES = st.one_of(st.sampled_from(["t", "q", "tau", "trajectory", "qd_true", "missing"]),
                  st.text(max_size=4))


@FUZZ
@given(time=NAMES, position=NAMES, torque=NAMES, velocity=st.none() | NAMES,
       trajectory=st.none() | NAMES, unit=st.sampled_from(["rad", "deg", "grad", ""]),
       resample=st.booleans())
def test_loader_with_random_column_options(time, position, torque, velocity, trajectory, unit,
                                           resample):
    cols = Columns(time, position, torque, velocity, None, trajectory)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "f.csv"
        path.write_text(_csv([(*r, i // 60) for i, r in enumerate(_rows())],
                             header="t,q,tau,trajectory"))
        try:
            _check_loaded(load_trajectories(path, cols, angle_unit=unit, resample=resample))
        except (DataError, OptionError) as exc:  # a bad file, or an angle unit we do not know
            _assert_one_line(exc)


# ------------------------------------------------------------------------------------ model
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-10**30, 10**30) | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=3),
    max_leaves=6)


def _paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, (*prefix, i))


def _set(obj, path, value, delete: bool):
    if not path:
        return value
    parent = obj
    for key in path[:-1]:
        parent = parent[key]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return obj


def _load_model_or_error(path: Path) -> None:
    try:
        model = JointModel.load(path)
    except ModelFileError as exc:
        _assert_one_line(exc)
        return
    text = model.to_json()  # a loaded model always writes back as valid JSON
    assert JointModel.from_dict(json.loads(text)) == model
    qd = np.linspace(-1.0, 1.0, 64)
    with np.errstate(all="ignore"):
        model.torque(np.zeros(64), qd, np.zeros(64), 1e-3)


@FUZZ
@given(edits=st.lists(st.tuples(st.integers(0, 10**6), JSON, st.booleans()), min_size=1,
                      max_size=3))
def test_model_loader_on_mutated_models(edits):
    obj = _model()
    for index, value, delete in edits:
        paths = list(_paths(obj))
        path = paths[index % len(paths)]
        obj = _set(obj, path, value, delete and bool(path))
    text = json.dumps(obj, allow_nan=True)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "model.json"
        path.write_text(text)
        _load_model_or_error(path)


@FUZZ
@given(data=st.binary(max_size=300) | st.text(max_size=300).map(str.encode),
       cut=st.integers(0, 2000))
def test_model_loader_on_random_and_truncated_text(data, cut):
    with tempfile.TemporaryDirectory() as d:
        for i, content in enumerate((data, json.dumps(_model()).encode()[:cut])):
            path = Path(d) / f"model{i}.json"
            path.write_bytes(content)
            _load_model_or_error(path)


def test_model_values_at_float_limits(tmp_path):
    for value in (10**400, 1e308, -1e308, 5e-324, 2**53 + 1):
        for section, key in (("rigid_body", "inertia"), ("friction", "coulomb"),
                             ("friction", "stribeck_velocity"), ("friction", "sigma0")):
            obj = _model()
            obj[section][key] = value
            path = tmp_path / "m.json"
            path.write_text(json.dumps(obj))
            _load_model_or_error(path)


# ------------------------------------------------------------------------------------ CLI
DATA_OPTIONS = st.lists(st.one_of(
    st.tuples(st.sampled_from(["--time", "--position", "--torque", "--velocity",
                               "--acceleration", "--trajectory-column"]), NAMES),
    st.tuples(st.sampled_from(["--angle-unit"]), st.sampled_from(["rad", "deg", "rads"])),
    st.tuples(st.sampled_from(["--differentiation"]),
              st.sampled_from(["tv", "butterworth", "savgol", "given", "spline"])),
    st.tuples(st.sampled_from(["--regularization", "--cutoff-hz"]),
              st.sampled_from(["1", "0", "-1", "nan", "inf", "x", "1e400"])),
    st.just(("--resample",)),
), max_size=3)
IDENTIFY_OPTIONS = st.lists(st.one_of(
    st.tuples(st.sampled_from(["--axis"]), st.sampled_from(["revolute", "prismatic", "linear"])),
    st.tuples(st.sampled_from(["--library"]), st.sampled_from(["full", "stribeck", "none"])),
    st.tuples(st.sampled_from(["--model"]), st.sampled_from(["A", "B", "both", "C"])),
    st.tuples(st.sampled_from(["--tanh-k", "--nu", "--presliding-distance"]),
              st.sampled_from(["150", "0", "-3", "nan", "abc"])),
    st.tuples(st.sampled_from(["--omega-starts", "--sigma0-starts"]),
              st.sampled_from(["0.01,0.1", "", ",", "1,-1", "inf", "a,b"])),
    st.tuples(st.sampled_from(["--aic-parts"]), st.sampled_from(["10", "3", "x", "-1"])),
    st.just(("--offset",)), st.just(("--quiet",)), st.just(("--json",)),
    st.just(("--static-only",)), st.just(("--unknown-option",)),
), max_size=3)


def _flat(options) -> list[str]:
    return [part for opt in options for part in opt]


def _check_cli(argv: list[str], out: Path, model_file: bool = True) -> None:
    rc, stdout, stderr = _run(argv)
    assert "Traceback" not in stderr
    if rc == 0:
        return
    _assert_one_line_error(rc, stderr)
    assert not (out / "model.json").exists() if model_file else not out.exists()
    assert not list(out.parent.glob(f".{out.name}.staging-*"))


@FUZZ
@given(bad=st.sampled_from(ALWAYS_BAD), others=st.lists(st.sampled_from(BAD_CSVS), max_size=2),
       role=st.sampled_from(["train", "--validate", "--test"]), data=DATA_OPTIONS,
       opts=IDENTIFY_OPTIONS)
def test_cli_identify_fuzz(bad, others, role, data, opts):
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "out"
        files = [str(p) for p in (bad, *others)]
        train = files if role == "train" else [str(GOOD_DATA)]
        extra = [] if role == "train" else [role, *files]
        argv = ["identify", *train, *extra, "--out", str(out), *_flat(data), *_flat(opts)]
        _check_cli(argv, out)


@FUZZ
@given(model=st.sampled_from([*BAD_MODELS, GOOD_MODEL]),
       data_file=st.sampled_from([*BAD_CSVS, GOOD_DATA]), opts=DATA_OPTIONS)
def test_cli_predict_fuzz(model, data_file, opts):
    if model == GOOD_MODEL and data_file == GOOD_DATA:
        data_file = ALWAYS_BAD[0]  # keep every case on the fast failing path
    with tempfile.TemporaryDirectory() as d:
        pred = Path(d) / "pred.csv"
        argv = ["predict", str(model), str(data_file), "--out", str(pred), *_flat(opts)]
        _check_cli(argv, pred, model_file=False)


@FUZZ
@given(model=st.sampled_from(BAD_MODELS), open_loop=st.sampled_from([None, *ALWAYS_BAD]),
       opts=st.lists(st.tuples(
           st.sampled_from(["--velocities", "--amplitude", "--duration", "--torque-noise",
                            "--position-noise", "--encoder-bits", "--seed"]),
           st.sampled_from(["0.5", "0", "-1", "nan", "x", "1,2", "999"])), max_size=3))
def test_cli_simulate_fuzz(model, open_loop, opts):
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "sim"
        argv = ["simulate", str(model), "--out", str(out), *_flat(opts)]
        if open_loop is not None:
            argv = ["simulate", "--open-loop", str(open_loop), "--out", str(out), *_flat(opts)]
        _check_cli(argv, out, model_file=False)


def test_float_limits_are_rejected_by_the_loader(tmp_path):
    rows = _rows()
    for value in ("1e308", "-1.7976931348623157e308", "5e-324"):
        path = tmp_path / "f.csv"
        path.write_text(_csv([(t, q, tau) for t, q, tau in rows[:-1]] + [(value, 0.0, 1.0)]))
        with pytest.raises(DataError):
            load_trajectories(path)


def test_cli_simulate_rejects_absurd_encoder_bits(tmp_path):
    out = tmp_path / "sim"
    rc, _, stderr = _run(["simulate", "--open-loop", str(ALWAYS_BAD[0]), "--out", str(out),
                          "--encoder-bits", "99999999999"])
    _assert_one_line_error(rc, stderr)


def test_cli_simulate_rejects_absurd_duration(tmp_path):
    out = tmp_path / "sim"
    rc, _, stderr = _run(["simulate", "--open-loop", "multisine", "--duration", "1e9", "--out",
                          str(out)])
    _assert_one_line_error(rc, stderr)
