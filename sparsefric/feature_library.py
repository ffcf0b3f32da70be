r"""Candidate-function libraries Θ(q, q̇, q̈; Ω_s) with analytic derivatives in θ = ln Ω_s.

Each column carries a name (plain text and LaTeX), the unit of its coefficient, and, for the
Stribeck columns, the first and second derivatives with respect to θ = ln Ω_s [ln(rad/s)]. Newton
works in θ so that Ω_s = e^θ stays positive without constraints (ALGORITHM.md §2).

For E = exp(−x^δ), x = |q̇|/Ω_s and u = x^δ:

    ∂E/∂θ  = δ u E
    ∂²E/∂θ² = δ² u (u − 1) E

Libraries compose with ``+`` (as pysindy's ``ConcatLibrary``), and every library evaluates the
same :class:`Signals`, so the static step, the dynamic LuGre steps and user columns share one
interface. The Coulomb/Stribeck columns are ``m(t)·[1, E_δ1, E_δ2, …]`` with the multiplier m
= s(q̇) in the static step and m = s(q̇)(1 − ż/q̇) = σ0 z / g(q̇) in the dynamic steps (the
division-free identity of ALGORITHM.md §1).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numba
import numpy as np

from sparsefric.lugre import sign_function
from sparsefric.signals import Signals

#: Default δ grid of the Stribeck exponentials: 0.5, 0.75, …, 4 (the main paper's range).
DEFAULT_DELTAS = tuple(np.round(np.arange(0.5, 4.0001, 0.25), 2))


@dataclass(frozen=True)
class Term:
    """One candidate column.

    Attributes
    ----------
    name : str
        Plain-text name, e.g. ``"qd^3"`` or ``"s(qd)*exp(-|qd/Ws|^1.5)"``.
    latex : str
        LaTeX for reports.
    unit : str
        Unit of the coefficient, e.g. ``"N·m·s/rad"``.
    kind : str
        ``inertia``, ``gravity_cos``, ``gravity_sin``, ``offset``, ``viscous``, ``coulomb``,
        ``stribeck``, ``zdot``, ``u``, ``udot`` or ``custom``.
    param : float
        The power p of a viscous term or the δ of a Stribeck term; 0 otherwise.
    """

    name: str
    latex: str
    unit: str
    kind: str
    param: float = 0.0

    @property
    def nonlinear(self) -> bool:
        """Whether the column depends on Ω_s."""
        return self.kind == "stribeck"


class FeatureLibrary:
    """Base class: a list of :class:`Term` and their evaluation."""

    def terms(self) -> list[Term]:
        """The columns, in order."""
        raise NotImplementedError

    def evaluate(self, x: Signals, theta: float, order: int = 0) -> list[np.ndarray]:
        """Θ and its θ-derivatives up to ``order`` (0, 1 or 2), each of shape (n, p)."""
        raise NotImplementedError

    def combine(self, x: Signals, theta: float, coef: np.ndarray,
                order: int = 0) -> list[np.ndarray]:
        """Θξ and its θ-derivatives ∂ᵏ(Θξ)/∂θᵏ up to ``order``, each of shape (n,).

        What Newton needs; libraries override it where the weighted sum is cheaper than the
        columns (the Stribeck exponentials).
        """
        return [M @ coef for M in self.evaluate(x, theta, order)]

    def select(self, mask: Sequence[bool]) -> FeatureLibrary:
        """The library restricted to the columns where ``mask`` is true."""
        return _Selected(self, np.asarray(mask, dtype=bool))

    def __add__(self, other: FeatureLibrary) -> FeatureLibrary:
        return ConcatLibrary([self, other])

    def __len__(self) -> int:
        return len(self.terms())


class _Selected(FeatureLibrary):
    """Some columns of a library (evaluates the parent and slices)."""

    def __init__(self, parent: FeatureLibrary, mask: np.ndarray):
        self.parent, self.mask = parent, mask

    def terms(self) -> list[Term]:
        return [t for t, keep in zip(self.parent.terms(), self.mask, strict=True) if keep]

    def evaluate(self, x: Signals, theta: float, order: int = 0) -> list[np.ndarray]:
        return [m[:, self.mask] for m in self.parent.evaluate(x, theta, order)]


def _constant_in_theta(cols: np.ndarray, order: int) -> list[np.ndarray]:
    zero = np.zeros_like(cols)
    return [cols] + [zero] * order


class ConcatLibrary(FeatureLibrary):
    """Columns of several libraries side by side."""

    def __init__(self, libraries: Sequence[FeatureLibrary]):
        self.libraries = []
        for lib in libraries:
            self.libraries.extend(lib.libraries if isinstance(lib, ConcatLibrary) else [lib])

    def terms(self) -> list[Term]:
        return [t for lib in self.libraries for t in lib.terms()]

    def select(self, mask: Sequence[bool]) -> FeatureLibrary:
        mask = np.asarray(mask, dtype=bool)
        parts, start = [], 0
        for lib in self.libraries:
            part = mask[start:start + len(lib)]
            start += len(lib)
            if part.all():
                parts.append(lib)
            elif part.any():
                parts.append(lib.select(part))
        return ConcatLibrary(parts)

    def evaluate(self, x: Signals, theta: float, order: int = 0) -> list[np.ndarray]:
        if not self.libraries:
            return [np.zeros((len(x), 0))] * (order + 1)
        if len(self.libraries) == 1:
            return self.libraries[0].evaluate(x, theta, order)
        parts = [lib.evaluate(x, theta, order) for lib in self.libraries]
        return [np.hstack([p[i] for p in parts]) for i in range(order + 1)]

    def combine(self, x: Signals, theta: float, coef: np.ndarray,
                order: int = 0) -> list[np.ndarray]:
        out = [np.zeros(len(x)) for _ in range(order + 1)]
        start = 0
        for lib in self.libraries:
            stop = start + len(lib)
            for acc, part in zip(out, lib.combine(x, theta, coef[start:stop], order), strict=True):
                acc += part
            start = stop
        return out


class RigidBodyLibrary(FeatureLibrary):
    """q̈, cos q, sin q (revolute) or q̈, 1 (prismatic)."""

    def __init__(self, axis: str = "revolute"):
        if axis not in ("revolute", "prismatic"):
            raise ValueError(f"axis must be 'revolute' or 'prismatic', got {axis!r}")
        self.axis = axis

    def terms(self) -> list[Term]:
        inertia_unit = "kg·m²" if self.axis == "revolute" else "kg"
        torque = "N·m" if self.axis == "revolute" else "N"
        out = [Term("qdd", r"\ddot q", inertia_unit, "inertia")]
        if self.axis == "revolute":
            out += [Term("cos(q)", r"\cos q", torque, "gravity_cos"),
                    Term("sin(q)", r"\sin q", torque, "gravity_sin")]
        else:
            out += [Term("1", "1", torque, "offset")]
        return out

    def evaluate(self, x: Signals, theta: float, order: int = 0) -> list[np.ndarray]:
        if self.axis == "revolute":
            cols = np.column_stack([x.qdd, x.cos_q, x.sin_q])
        else:
            cols = np.column_stack([x.qdd, np.ones_like(x.q)])
        return _constant_in_theta(cols, order)


class OffsetLibrary(FeatureLibrary):
    """A constant torque offset (e.g. for a revolute joint with a biased torque sensor)."""

    def terms(self) -> list[Term]:
        return [Term("1", "1", "N·m", "offset")]

    def evaluate(self, x: Signals, theta: float, order: int = 0) -> list[np.ndarray]:
        return _constant_in_theta(np.ones((len(x), 1)), order)


class ViscousLibrary(FeatureLibrary):
    """Viscous power series q̇^p, p in ``powers`` (default 1…5)."""

    def __init__(self, powers: Sequence[int] = (1, 2, 3, 4, 5), axis: str = "revolute"):
        self.powers = tuple(int(p) for p in powers)
        self.axis = axis

    def terms(self) -> list[Term]:
        force, length = ("N·m", "rad") if self.axis == "revolute" else ("N", "m")
        return [Term("qd" if p == 1 else f"qd^{p}", r"\dot q" if p == 1 else rf"\dot q^{{{p}}}",
                     f"{force}·s/{length}" if p == 1 else f"{force}·s^{p}/{length}^{p}",
                     "viscous", p)
                for p in self.powers]

    def evaluate(self, x: Signals, theta: float, order: int = 0) -> list[np.ndarray]:
        cols = np.column_stack([x.qd_power(p) for p in self.powers]) if self.powers else \
            np.zeros((len(x), 0))
        return _constant_in_theta(cols, order)


class StribeckLibrary(FeatureLibrary):
    """Coulomb and Stribeck columns m(t)·[1, exp(−|q̇/Ω_s|^δ) for δ in ``deltas``].

    Parameters
    ----------
    deltas : sequence of float
        Stribeck exponents (default 0.5 to 4 by 0.25).
    tanh_k : float
        0 for model A's s = sign(q̇); K [s/rad] for model B's s = tanh(K q̇).
    coulomb : bool
        Include the Coulomb column m(t)·1.
    """

    def __init__(self, deltas: Sequence[float] = DEFAULT_DELTAS, tanh_k: float = 0.0,
                 coulomb: bool = True, axis: str = "revolute"):
        self.deltas = tuple(float(d) for d in deltas)
        self.tanh_k = float(tanh_k)
        self.coulomb = coulomb
        self.axis = axis

    def select(self, mask: Sequence[bool]) -> FeatureLibrary:
        mask = np.asarray(mask, dtype=bool)
        first = int(self.coulomb)
        deltas = [d for d, keep in zip(self.deltas, mask[first:], strict=True) if keep]
        return StribeckLibrary(deltas, self.tanh_k, coulomb=bool(self.coulomb and mask[0]),
                               axis=self.axis)

    def _s_name(self) -> tuple[str, str]:
        if self.tanh_k > 0:
            return f"tanh({self.tanh_k:g}qd)", rf"\tanh({self.tanh_k:g}\dot q)"
        return "sign(qd)", r"\mathrm{sign}(\dot q)"

    def terms(self) -> list[Term]:
        s, s_tex = self._s_name()
        force = "N·m" if self.axis == "revolute" else "N"
        out = [Term(s, s_tex, force, "coulomb")] if self.coulomb else []
        out += [Term(f"{s}*exp(-|qd/Ws|^{d:g})", rf"{s_tex}\,e^{{-|\dot q/\Omega_s|^{{{d:g}}}}}",
                     force, "stribeck", d) for d in self.deltas]
        return out

    def _multiplier(self, x: Signals) -> np.ndarray:
        m = x.multiplier if x.multiplier is not None else sign_function(x.qd, self.tanh_k)
        return np.ascontiguousarray(m, dtype=np.float64)

    def evaluate(self, x: Signals, theta: float, order: int = 0) -> list[np.ndarray]:
        m = self._multiplier(x)
        n, k = len(x), len(self.deltas)
        out = list(_stribeck(*x.speed_powers(self.deltas), m, float(theta),
                             np.asarray(self.deltas, dtype=np.float64), np.ones(k), False,
                             order))[: order + 1]
        if self.coulomb:
            first = [m[:, None]] + [np.zeros((n, 1))] * order
            out = [np.hstack([f, o]) for f, o in zip(first, out, strict=True)]
        assert out[0].shape == (n, k + int(self.coulomb))
        return out

    def combine(self, x: Signals, theta: float, coef: np.ndarray,
                order: int = 0) -> list[np.ndarray]:
        m = self._multiplier(x)
        first = int(self.coulomb)
        out = [v[:, 0] for v in _stribeck(
            *x.speed_powers(self.deltas), m, float(theta),
            np.asarray(self.deltas, dtype=np.float64),
            np.ascontiguousarray(coef[first:], dtype=np.float64), True, order)[: order + 1]]
        if self.coulomb:
            out[0] = out[0] + coef[0] * m
        return out


#: u = |q̇/Ω_s|^δ beyond which E = e^{−u} is 0 in double precision (u > 745): those entries skip
#: the exponential (``e**6.62``: the kernel's bound on ln u when it took u = e^{δ(ln|q̇| − θ)}).
U_ZERO = math.exp(6.62)


@numba.njit(cache=True, nogil=True)
def _stribeck(powers, columns, m, theta, deltas, weights, summed, order):
    """m·E, ∂θ(m·E), ∂²θ(m·E) with E = exp(−u), u = |q̇|^δ e^{−δθ}, in one pass.

    ``powers[:, columns[j]]`` holds |q̇|^δ of ``deltas[j]`` per sample (the table of
    :meth:`Signals.speed_powers <sparsefric.signals.Signals.speed_powers>`). Column j is scaled by
    ``weights[j]``; with ``summed`` the columns are added into one (n, 1) column (Θξ and its
    derivatives for Newton, without the n×k matrices). Fused and compiled because the Newton
    and multi-start loops evaluate these columns thousands of times; numpy would allocate five
    n×k temporaries per call. E underflows to 0 for u > :data:`U_ZERO`, which at high speed is
    most of the entries: those skip the exponential.
    """
    n, k = powers.shape[0], deltas.shape[0]
    width = 1 if summed else k
    E0 = np.zeros((n, width))
    E1 = np.zeros((n, width)) if order >= 1 else np.zeros((0, width))
    E2 = np.zeros((n, width)) if order >= 2 else np.zeros((0, width))
    scale = np.exp(-deltas * theta)
    for i in range(n):
        for j in range(k):
            u = powers[i, columns[j]] * scale[j]
            if u > U_ZERO:
                continue
            c = 0 if summed else j
            e = np.exp(-u) * m[i] * weights[j]
            E0[i, c] += e
            if order >= 1:
                E1[i, c] += deltas[j] * u * e
            if order >= 2:
                E2[i, c] += deltas[j] * deltas[j] * u * (u - 1.0) * e
    return E0, E1, E2


class SignalLibrary(FeatureLibrary):
    """Columns taken from ``Signals.extra`` by name (the LuGre ż, u, u̇ columns)."""

    #: name → (LaTeX, unit of the coefficient: ż's is σ1's, u and u̇ are scaled by σ0)
    COLUMNS = {"zdot": (r"\dot z", {"revolute": "N·m·s/rad", "prismatic": "N·s/m"}),
               "u": ("u", {"revolute": "-", "prismatic": "-"}),
               "udot": (r"\dot u", {"revolute": "s", "prismatic": "s"})}

    def __init__(self, names: Sequence[str], axis: str = "revolute"):
        unknown = [n for n in names if n not in self.COLUMNS]
        if unknown:
            raise ValueError(f"unknown signal columns {unknown}; known: {list(self.COLUMNS)}")
        self.names = tuple(names)
        self.axis = axis

    def terms(self) -> list[Term]:
        return [Term(n, self.COLUMNS[n][0], self.COLUMNS[n][1][self.axis], n)
                for n in self.names]

    def evaluate(self, x: Signals, theta: float, order: int = 0) -> list[np.ndarray]:
        cols = np.column_stack([x.extra[n] for n in self.names])
        return _constant_in_theta(cols, order)


class CustomLibrary(FeatureLibrary):
    """User-supplied columns, in the spirit of pysindy's ``CustomLibrary``.

    Parameters
    ----------
    functions : sequence of callable
        Each ``f(q, qd, qdd) -> ndarray`` of shape (n,), independent of Ω_s.
    names : sequence of str
        One name per function.
    units : sequence of str, optional
        Units of the coefficients (default ``"N·m"``).
    """

    def __init__(self, functions: Sequence[Callable[..., np.ndarray]], names: Sequence[str],
                 units: Sequence[str] | None = None):
        if len(functions) != len(names):
            raise ValueError("CustomLibrary needs one name per function")
        self.functions = tuple(functions)
        self.names = tuple(names)
        self.units = tuple(units) if units is not None else ("N·m",) * len(names)

    def terms(self) -> list[Term]:
        return [Term(n, rf"\mathrm{{{n}}}", u, "custom") for n, u in
                zip(self.names, self.units, strict=True)]

    def evaluate(self, x: Signals, theta: float, order: int = 0) -> list[np.ndarray]:
        cols = np.column_stack([np.broadcast_to(np.asarray(f(x.q, x.qd, x.qdd), dtype=float),
                                                (len(x),)) for f in self.functions])
        return _constant_in_theta(cols, order)


#: Named restrictions of the static library (``--library NAME``).
NAMED_LIBRARIES = ("full", "coulomb-viscous", "coulomb-viscous-offset", "stribeck")


def static_library(axis: str = "revolute", *, name: str = "full", n_viscous: int = 5,
                   deltas: Sequence[float] = DEFAULT_DELTAS, tanh_k: float = 0.0,
                   offset: bool = False) -> FeatureLibrary:
    """The step-1 candidate library.

    Parameters
    ----------
    axis : {"revolute", "prismatic"}
        Rigid-body columns q̈, cos q, sin q (revolute) or q̈, 1 (prismatic).
    name : str
        ``full``: viscous powers 1…``n_viscous`` and Coulomb + Stribeck on the δ grid;
        ``coulomb-viscous``: q̇ and s(q̇) only; ``coulomb-viscous-offset``: the same plus a
        constant offset (the EMPS reference model); ``stribeck``: q̇, s(q̇) and the δ grid.
    offset : bool
        Add a constant offset column to a revolute joint's library.
    """
    if name not in NAMED_LIBRARIES:
        raise ValueError(f"unknown library {name!r}; choose one of {', '.join(NAMED_LIBRARIES)}")
    lib: FeatureLibrary = RigidBodyLibrary(axis)
    wants_offset = offset or name == "coulomb-viscous-offset"
    if wants_offset and axis == "revolute":
        lib = lib + OffsetLibrary()
    powers = range(1, n_viscous + 1) if name == "full" else (1,)
    grid = deltas if name in ("full", "stribeck") else ()
    return lib + ViscousLibrary(powers, axis) + StribeckLibrary(grid, tanh_k, axis=axis)
