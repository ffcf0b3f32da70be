r"""Viscous powers the data do not determine: dropped, the group first, then the highest.

Not in the paper (``DESIGN.md`` §100). AICc judges a power by the training error it removes,
and over a narrow speed range the columns q̇, q̇², …, q̇⁵ are nearly collinear: a polynomial
fitted to the noise costs little there and explodes beyond it. A zoo joint recorded at
0.017–0.12 rad/s with 4.7 % noise left the LuGre stage with 0.57 q̇ − 2.75 q̇² − 25.8 q̇³ +
108 q̇⁴ + 713 q̇⁵: under 0.05 N·m over the recorded speeds against 0.7 N·m of noise, 2.3e4 N·m
at 2 rad/s, and a test torque error 8340 × the true model's. Every coefficient's interval
held 0, but so did q̇³'s and q̇⁵'s on data/example, whose sum is the truth's 0.8 q̇³: a test
per coefficient cannot tell the two apart. A test of the group can
(:func:`~sparsefric.uncertainty.wald.wald_tests`: W = 0.03 on that joint, 1e4 on data/example).

So, while the model has powers p ≥ 2: where the data leave them jointly at 0, all are dropped;
else the highest, where it alone is left at 0 (the collinear pair of data/example keeps its
lower member, refitted: 0.78 q̇³). Each drop is iterated again from the run's own coefficients
(the identification's ``_fit_lugre``); a run that is inadmissible, or whose inertia falls to 0
or below, is not taken, and the next group is tried. The linear term q̇ always stays: a powers'
model has it (``DESIGN.md`` §99), and a lubricant's shear is linear. The static model's powers
are not tested here: its residuals on the stops and transitions, which it does not model, would
inflate the covariance (``DESIGN.md``, Known limits).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from sparsefric.model import JointModel
from sparsefric.preprocessing import Prepared
from sparsefric.uncertainty.wald import wald_tests

T = TypeVar("T")

#: Level of the Wald tests [-]: a group whose W stays below its 95 % critical value is dropped.
LEVEL = 0.95


def undetermined_powers(model: JointModel, data: Sequence[Prepared]) -> list[tuple[int, ...]]:
    """The groups of viscous powers p ≥ 2 of ``model`` that the prepared ``data`` do not
    determine, in the order to drop them: all the powers, where their Wald test as a group does
    not reject 0; then the highest alone, where its own does not."""
    powers = tuple(p for p, _ in model.viscous if p >= 2)
    if not powers:
        return []
    groups = [powers] if len(powers) == 1 else [powers, powers[-1:]]
    tests = wald_tests(model, data, [[f"viscous:{p}" for p in g] for g in groups], LEVEL)
    return [g for g, (w, critical) in zip(groups, tests, strict=True) if w < critical]


def drop_powers(state: T, to_model: Callable[[T], JointModel],
                without: Callable[[T, tuple[int, ...]], T | None],
                checked: Sequence[Prepared]) -> tuple[T, tuple[int, ...]]:
    """``state`` (a fit) without the viscous powers the ``checked`` records do not determine
    (:func:`undetermined_powers`), with the powers dropped.

    ``to_model`` makes the :class:`JointModel` of a fit; ``without(state, powers)`` fits
    ``state``'s structure without ``powers`` again, or returns None where that fit may not
    replace it: the next group is tried, and where none may, the dropping ends. Returns
    ``state`` itself where nothing is dropped.
    """
    dropped: tuple[int, ...] = ()
    while True:
        for group in undetermined_powers(to_model(state), checked):
            if (new := without(state, group)) is not None:
                state, dropped = new, dropped + group
                break
        else:
            return state, dropped


def dropped_note(dropped: Sequence[int], whose: str = "") -> str:
    """The clause of the convergence reason that names the powers dropped ("" for none);
    ``whose`` names the model where it is not the one returned, e.g. "the LuGre model's "."""
    if not dropped:
        return ""
    terms = ", ".join(f"q̇^{p}" for p in sorted(dropped))
    return f"; {whose or 'the '}viscous powers {terms} dropped: the data do not determine " \
           f"them (Wald test at {LEVEL:.0%})"
