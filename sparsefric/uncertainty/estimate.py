"""The entry points: intervals of an identification result by a method, and the result's models
with the range of their data and their intervals recorded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tqdm import tqdm

from sparsefric.data import Trajectory
from sparsefric.uncertainty.bootstrap import bootstrap_uncertainty
from sparsefric.uncertainty.fast import result_fast
from sparsefric.uncertainty.findings import uncertainty_findings
from sparsefric.uncertainty.result import ParameterUncertainty, validity_range

__all__ = [
    "estimate_uncertainty",
    "with_uncertainty",
]


def estimate_uncertainty(result, train: Sequence[Trajectory],
                         validate: Sequence[Trajectory] | None = None, settings=None, *,
                         method: str = "fast", level: float = 0.95,
                         **options) -> ParameterUncertainty | None:
    """Intervals of ``result.model`` by ``method`` (``"none"``, ``"fast"``, ``"bootstrap"``).

    ``fast``: :func:`fast_uncertainty` on the prepared training and validation sets (from the
    result's cache); ``bootstrap``: :func:`bootstrap_uncertainty` (needs ``settings``).
    ``options`` go to the method's function. ``"none"`` returns None.
    """
    if method == "none":
        return None
    if method == "fast":
        data = [result.prepare(train)] + ([result.prepare(validate)] if validate else [])
        return result_fast(result, data, level, **options)
    if method == "bootstrap":
        if settings is None:
            raise ValueError("the bootstrap reruns the identification: pass its settings")
        return bootstrap_uncertainty(result, train, validate, settings, level=level, **options)
    raise ValueError(f"unknown uncertainty method {method!r}; choose none, fast or bootstrap")


def with_uncertainty(result, train: Sequence[Trajectory],
                     validate: Sequence[Trajectory] | None, settings, method: str = "fast", *,
                     progress: bool = False, **options) -> ParameterUncertainty | None:
    """Record on ``result`` the range of its data and the intervals of its model.

    Every model of ``result`` (the result, the static and the LuGre one) gets the
    :func:`validity_range` of the prepared training and validation data; ``result.model``
    also the intervals of :func:`estimate_uncertainty` by ``method`` (``"none"``: none), whose
    :func:`uncertainty_findings` join ``result.findings``. Models that were one object stay one.

    Parameters
    ----------
    result : IdentificationResult
        A fit, changed in place.
    train, validate : sequence of Trajectory
        The trajectories it was fitted on.
    settings : Settings
        The settings of the fit (the bootstrap reruns it).
    method : {"none", "fast", "bootstrap"}
    progress : bool
        Show a progress bar of the bootstrap's fits on stderr.
    **options
        Passed to the method's function (``level``, ``resamples``, ``workers``…).

    Returns
    -------
    ParameterUncertainty or None
        The intervals (None for ``"none"``).
    """
    data = [result.prepare(train)] + ([result.prepare(validate)] if validate else [])
    validity = validity_range(data, result.window)
    with tqdm(disable=not (progress and method == "bootstrap"), leave=False, unit="fit",
              desc="bootstrap") as bar:
        if method == "bootstrap":
            options.setdefault("progress", _advance(bar))
        unc = estimate_uncertainty(result, train, validate, settings, method=method, **options)
    returned = result.model
    intervals = None if unc is None else unc.to_model()
    result.map_models(lambda m: m.with_(validity=validity, uncertainty=intervals)
                      if m is returned else m.with_(validity=validity))
    if unc is not None:
        result.findings += uncertainty_findings(unc)
    return unc


def _advance(bar: tqdm) -> Callable[[int, int], None]:
    """``progress(done, total)`` that moves ``bar`` to ``done`` of ``total``."""
    def progress(done: int, total: int) -> None:
        bar.total = total
        bar.update(done - bar.n)
    return progress
