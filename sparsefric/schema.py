"""Validation of model files against the JSON Schema of the format (``model.schema.json``).

The schema (draft 2020-12, shipped with the package and linked from ``docs/``) lets another
program check a ``model.json`` without sparsefric; it covers formats ``sparsefric-model/1`` and
``/2`` and states the unit of every key. What a schema cannot say (numbers that fit a float,
min ≤ max, equal-length arrays) is checked by the reader, :meth:`JointModel.load
<sparsefric.model.JointModel.load>`.

>>> validate_model_file("model.json")   # raises ModelFileError on the first violation
"""

from __future__ import annotations

import functools
import json
import os
from importlib import resources
from typing import Any

import jsonschema

from sparsefric.errors import ModelFileError
from sparsefric.model import read_json

#: Longest message of a schema violation kept in the error (the offending value can be large).
MESSAGE_LIMIT = 200


@functools.cache
def model_schema() -> dict[str, Any]:
    """The JSON Schema of the model file, as a dictionary."""
    text = resources.files("sparsefric").joinpath("model.schema.json").read_text("utf-8")
    return json.loads(text)


@functools.cache
def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(model_schema())


def validate_model_dict(data: Any, source: str = "model") -> None:
    """Check a model file's JSON value against the schema.

    Parameters
    ----------
    data : Any
        The parsed JSON.
    source : str
        Name of the file, for the message.

    Raises
    ------
    ModelFileError
        One line: ``source``, the JSON path of the first violation the validator meets (keys in
        the order of the schema, which is the order the writer writes) and its message, e.g.
        ``model.json: $.friction.sigma0: -3 is less than or equal to the minimum of 0``.
    """
    error = next(iter(_validator().iter_errors(data)), None)
    if error is not None:
        message = " ".join(error.message.split())
        if len(message) > MESSAGE_LIMIT:
            message = message[: MESSAGE_LIMIT - 1] + "…"
        raise ModelFileError(f"{source}: {error.json_path}: {message}")


def validate_model_file(path: str | os.PathLike) -> None:
    """Read ``path`` and check it against the schema (:func:`validate_model_dict`)."""
    validate_model_dict(read_json(path), str(path))
