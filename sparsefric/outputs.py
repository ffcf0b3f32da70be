"""The files of an identification's result folder (``identify`` and ``batch`` write the same).

They are written into a staging folder and published by :func:`sparsefric.atomic.staged`,
``model.json`` last: its presence marks a complete run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from sparsefric.data import Trajectory
from sparsefric.model import JointModel
from sparsefric.report import write_report
from sparsefric.result import IdentificationResult

#: Everything a run may write into its folder; a rerun removes those it does not write again.
RESULT_NAMES = ("model.json", "lugre_model.json", "static_model.json", "selection.csv",
                "refinement.csv", "history.csv", "terms.csv", "preprocessing.csv",
                "report.html", "summary.md", "summary.json", "A", "B")


def stamped(model: JointModel) -> JointModel:
    """The model with a ``created`` timestamp (the only field that differs between reruns)."""
    created = datetime.now(UTC).isoformat(timespec="seconds")
    return model.with_(extra={**model.extra, "created": created})


def write_results(result: IdentificationResult, stage: Path, train: Sequence[Trajectory],
                  validate: Sequence[Trajectory] | None, test: Sequence[Trajectory] | None,
                  title: str | None = None, *, known: Mapping[str, JointModel] | None = None,
                  compare: Mapping[str, JointModel] | None = None,
                  cve_file: pd.DataFrame | None = None) -> dict:
    """Every result file of one identification into ``stage``, ``model.json`` last; returns
    the report's summary (:func:`sparsefric.report.summary_dict`).

    ``terms.csv`` holds every candidate with its coefficient in the final model beside step
    1's (:attr:`~sparsefric.result.IdentificationResult.final_terms`), the model the report
    and ``model.json`` describe. ``known`` (truth, reference) and ``compare`` (other methods'
    models) and ``cve_file`` (a user's constant-velocity points) go to
    :func:`~sparsefric.report.write_report`. Test records outside the model's validity range
    are a finding of ``result`` (:meth:`~sparsefric.result.IdentificationResult.check_test`)
    before the report and its summary list the warnings.
    """
    if test:
        result.check_test(test)
    result.selection.to_csv(stage / "selection.csv", index=False)
    result.final_terms.to_csv(stage / "terms.csv", index=False)
    if len(result.history):
        result.history.to_csv(stage / "history.csv", index=False)
    refinement = result.lugre.refinement.table if result.lugre is not None else None
    if refinement is not None:
        refinement.table.to_csv(stage / "refinement.csv", index=False)
    result.preprocessing.to_csv(stage / "preprocessing.csv", index=False)
    stamped(result.static_model).save(stage / "static_model.json")
    if result.lugre_model is not None and result.lugre_model is not result.model:
        stamped(result.lugre_model).save(stage / "lugre_model.json")
    options = {"title": title} if title else {}
    summary = write_report(result, stage, train, validate=validate, test=test, known=known,
                           compare=compare, cve_file=cve_file, **options)
    stamped(result.model).save(stage / "model.json")
    return summary
