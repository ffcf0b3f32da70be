"""The JSON Schema of the model file: what the code writes validates, errors name the JSON path."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from sparsefric.baselines import idim_ls
from sparsefric.data import load_trajectories
from sparsefric.errors import ModelFileError
from sparsefric.estimator import SparseFric
from sparsefric.model import INTERVAL_NAMES, INTERVAL_PATTERN, JointModel
from sparsefric.schema import model_schema, validate_model_dict, validate_model_file
from sparsefric.validity import ValidityRange

from .conftest import EMPS, ROOT, example_files
from .test_model_format import UNCERTAINTY

CORPUS = Path(__file__).resolve().parent / "corpus" / "model"
#: Corpus files whose fault is one a schema cannot see (the JSON reader turns the literal into a
#: non-finite or over-long number); the reader refuses them.
READER_ONLY = {"nan_literal", "infinity_literal", "huge_integer"}


@pytest.fixture(scope="module")
def estimator():
    return SparseFric(sigma0_starts=(1.5e4,)).fit(load_trajectories(example_files("train")))


def _written(model: JointModel, tmp_path: Path) -> Path:
    path = tmp_path / "model.json"
    model.save(path)
    return path


def test_fitted_models_validate(estimator, tmp_path):
    fitted = estimator.model_
    assert fitted.kind == "lugre" and "software" in fitted.extra
    samples = ValidityRange(velocity=(-2.1, 2.1), speed=(0.01, 2.1), position=(-1.2, 0.4),
                            torque=(-60.0, 70.0))
    stamped = fitted.with_(extra={**fitted.extra, "created": "2025-01-01T00:00:00+00:00",
                                  "method": "sparsefric"},
                           validity=samples, uncertainty=UNCERTAINTY)
    for model in (fitted, estimator.static_model_, stamped, fitted.with_(tanh_k=150.0)):
        validate_model_file(_written(model, tmp_path))


def test_prismatic_baseline_and_truth_files_validate(tmp_path):
    validate_model_file(_written(idim_ls(load_trajectories(EMPS), axis="prismatic"), tmp_path))
    truths = sorted((ROOT / "data").rglob("*.json"))
    assert truths
    for path in truths:
        validate_model_file(path)  # format 1 as committed
        validate_model_file(_written(JointModel.load(path), tmp_path))  # and saved as format 2


def test_first_error_is_named_by_its_json_path(truth):
    data = truth.to_dict()
    data["friction"]["sigma0"] = -3
    with pytest.raises(ModelFileError) as info:
        validate_model_dict(data, "model.json")
    assert str(info.value) == ("model.json: $.friction.sigma0: -3 is less than or equal to the "
                               "minimum of 0")
    data["friction"]["stribeck"][0]["delta"] = "1.5"
    with pytest.raises(ModelFileError, match=r"^model.json: \$.friction.stribeck\[0\].delta: "
                                             "'1.5' is not of type 'number'$"):
        validate_model_dict(data, "model.json")


@pytest.mark.parametrize("mutate, path", [
    (lambda d: d.update(format="sparsefric-model/3"), "$.format"),
    (lambda d: d["rigid_body"].pop("inertia"), "$.rigid_body"),
    (lambda d: d["friction"]["viscous"][1].update(power=0), "$.friction.viscous[1].power"),
    (lambda d: d.update(validity={"velocity": [1.0]}), "$.validity.velocity"),
    (lambda d: d.update(validity={"sped": [0, 1]}), "$.validity"),
    (lambda d: d.update(uncertainty={**UNCERTAINTY.to_dict(), "level": 95}),
     "$.uncertainty.level"),
    (lambda d: d.update(uncertainty={**UNCERTAINTY.to_dict(), "intervals": {"mass": [1, 2]}}),
     "$.uncertainty.intervals"),
    (lambda d: d.update(uncertainty={"method": "bootstrap", "level": 0.9, "intervals": {}}),
     "$.uncertainty"),
    (lambda d: d.update(uncertainty={**UNCERTAINTY.to_dict(), "random_state": -1}),
     "$.uncertainty.random_state"),
    (lambda d: d.update(uncertainty={"method": "asymptotic", "level": 0.9, "intervals": {},
                                     "random_state": 0}), "$.uncertainty"),
])
def test_broken_sections_fail_at_their_path(truth, tmp_path, mutate, path):
    data = truth.to_dict()
    mutate(data)
    (tmp_path / "m.json").write_text(json.dumps(data))
    with pytest.raises(ModelFileError, match=re.escape(f"m.json: {path}: ")) as info:
        validate_model_file(tmp_path / "m.json")
    assert "\n" not in str(info.value)
    with pytest.raises(ModelFileError):  # the reader refuses them too
        JointModel.load(tmp_path / "m.json")


@pytest.mark.parametrize("path", sorted(CORPUS.glob("*.json")), ids=lambda p: p.stem)
def test_schema_and_reader_refuse_the_same_corpus(path):
    with pytest.raises(ModelFileError):
        JointModel.load(path)
    if path.stem not in READER_ONLY:
        with pytest.raises(ModelFileError, match=re.escape(str(path))):
            validate_model_file(path)


def test_every_description_states_units():
    def walk(node):
        if isinstance(node, dict):
            if "description" in node:
                yield node["description"]
            for v in node.values():
                yield from walk(v)
        elif isinstance(node, list):
            for v in node:
                yield from walk(v)

    descriptions = list(walk(model_schema()))
    assert len(descriptions) > 40
    missing = [d for d in descriptions if not re.search(r"\[[^\]]+\]|unit", d)]
    assert not missing


def test_interval_names_agree_with_the_reader():
    pattern = model_schema()["properties"]["uncertainty"]["properties"]["intervals"][
        "propertyNames"]["pattern"]
    assert pattern == f"^({'|'.join(INTERVAL_NAMES)}|{INTERVAL_PATTERN})$"


def test_docs_link_is_the_packaged_schema():
    link = ROOT / "docs" / "model.schema.json"
    assert link.is_symlink() and not os.path.isabs(os.readlink(link))
    assert json.loads(link.read_text()) == model_schema()
