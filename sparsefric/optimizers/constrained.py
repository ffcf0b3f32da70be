r"""Least squares with the physical shape of friction as linear inequality constraints.

A fit on a few steady speeds can explain the data with a friction curve no joint has: Coulomb
plus a *negative* viscous slope matches two speeds exactly, and a polynomial fitted to a Stribeck
knee turns down beyond the fastest sample (``DESIGN.md`` §24). The constraints that rule this out
are linear in the coefficients:

* the viscous part τ_v(q̇) = Σ c_p q̇^p is non-decreasing on a grid of speeds v_k covering the
  recorded range and half as much again: τ_v'(v_k) = Σ p c_p v_k^{p−1} ≥ 0. With τ_v(0) = 0 this
  also makes it dissipative there (q̇ τ_v(q̇) ≥ 0);
* sign constraints: σ1 ≥ 0, f_c ≥ 0, A_i ≥ 0.

Every solve here is small (≤ 30 unknowns) but there are hundreds per identification, so the
constrained problem is posed on the normal equations and solved by the Goldfarb–Idnani dual
active-set method of ``quadprog`` (microseconds per solve; a modelling layer such as cvxpy
spends milliseconds per problem on canonicalisation). The unconstrained solution is returned
unchanged whenever it already satisfies the constraints, so physically shaped fits are exactly
the ordinary least squares they were.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import quadprog
from scipy.linalg import lapack, lstsq

#: Speeds of the shape grid reach this multiple of the fastest recorded speed.
SHAPE_REACH = 1.5
#: Points of the shape grid on each side of zero.
SHAPE_POINTS = 24
#: Constraint violations below this fraction of a row's scale count as satisfied.
SHAPE_TOL = 1e-9
#: Ridge added to the unit-diagonal scaled Gram matrix so that the QP's matrix is positive
#: definite where columns are collinear (far below the 1e-13 pseudo-inverse cut-off in effect).
RIDGE = 1e-10


def speed_grid(qd: np.ndarray, reach: float = SHAPE_REACH,
               points: int = SHAPE_POINTS) -> np.ndarray:
    """Signed speeds v_k [rad/s] from −reach·max|q̇| to +reach·max|q̇| (zero included).

    The 99.9th percentile of |q̇| stands for the fastest speed, so that a differentiation spike
    does not stretch the grid.
    """
    speed = np.abs(np.asarray(qd, dtype=float))
    v_max = float(np.quantile(speed, 0.999)) if speed.size else 0.0
    if not v_max > 0:
        return np.zeros(1)
    half = np.linspace(0.0, reach * v_max, points + 1)
    return np.r_[-half[:0:-1], half]


def slope_rows(powers: tuple[int, ...], speeds: np.ndarray) -> np.ndarray:
    """Rows of τ_v'(v_k) = Σ_p p c_p v_k^{p−1} in the coefficients c_p, shape (k, len(powers)).

    Rows that vanish (v = 0 for p ≥ 2 only) are dropped; each row is scaled to unit max-norm.
    """
    if not powers:
        return np.zeros((0, 0))
    v = np.asarray(speeds, dtype=float)[:, None]
    p = np.asarray(powers, dtype=float)[None, :]
    rows = p * np.where(p > 1, v ** np.maximum(p - 1, 0), 1.0)
    norm = np.max(np.abs(rows), axis=1)
    rows = rows[norm > 0] / norm[norm > 0, None]
    return np.unique(rows, axis=0)


def shape_constraints(n_columns: int, viscous: dict[int, int], speeds: np.ndarray,
                      nonneg: tuple[int, ...] = ()) -> np.ndarray:
    """Constraint matrix C (C ξ ≥ 0) over ``n_columns`` coefficients in physical units.

    Parameters
    ----------
    n_columns : int
        Number of coefficients.
    viscous : dict of int to int
        Position of each viscous column → its power p.
    speeds : ndarray
        The shape grid (:func:`speed_grid`) [rad/s].
    nonneg : tuple of int
        Positions of coefficients that must be ≥ 0.
    """
    blocks = []
    if viscous:
        at, powers = zip(*viscous.items(), strict=True)
        slopes = slope_rows(tuple(powers), speeds)
        rows = np.zeros((len(slopes), n_columns))
        rows[:, list(at)] = slopes
        blocks.append(rows)
    if nonneg:
        blocks.append(np.eye(n_columns)[list(nonneg)])
    return np.vstack(blocks) if blocks else np.zeros((0, n_columns))


@cache
def _gelsd_work(m: int, n: int, cond: float) -> tuple[int, int]:
    """The workspace sizes LAPACK's dgelsd asks for an m × n matrix, one right-hand side and
    ``cond``, as :func:`scipy.linalg.lstsq` passes them (a double-precision query is exact)."""
    work, iwork, _ = lapack.dgelsd_lwork(m, n, 1, cond)
    return int(work), int(iwork)


def small_lstsq(a: np.ndarray, b: np.ndarray, cond: float) -> np.ndarray:
    """``scipy.linalg.lstsq(a, b, cond, check_finite=False)[0]`` for a float m × n matrix
    (m ≥ n) and a vector, bit for bit: the same LAPACK driver (dgelsd, SVD with the cut-off
    ``cond``) with the same workspace.

    The solves here are tiny (n ≤ 30) and a sweep makes ~10⁴ of them; scipy's wrapper spends
    ~50 µs a call validating and sizing the workspace, several times the solve itself.
    """
    m, n = a.shape
    if m == 0 or n == 0:
        return np.zeros(n)
    lwork, iwork = _gelsd_work(m, n, float(cond))
    x, _, _, info = lapack.dgelsd(a, b, lwork, iwork, cond, False, False)
    if info != 0:  # what scipy raises, through scipy
        return lstsq(a, b, cond=cond, check_finite=False)[0]
    return x[:n]


def satisfied(C: np.ndarray, coef: np.ndarray) -> bool:
    """Whether C ξ ≥ 0 holds to :data:`SHAPE_TOL` of each row's scale."""
    if C.size == 0:
        return True
    scale = np.abs(C) @ np.abs(coef)
    return bool(np.all(C @ coef >= -SHAPE_TOL * np.maximum(scale, 1e-300)))


def qp_normal(G: np.ndarray, b: np.ndarray, C: np.ndarray) -> np.ndarray | None:
    """argmin ½ξᵀGξ − bᵀξ subject to C ξ ≥ 0, for a unit-diagonal (scaled) Gram matrix G.

    Returns None where the problem has no solution the solver accepts (inconsistent
    constraints, or G not positive definite even with :data:`RIDGE`).

    The constraint rows and b are scaled to a largest |entry| of 1 (neither changes the
    solution, which scales with b): quadprog 0.1.14's dual active set cycled for ever on a
    bootstrap resample of a zoo joint, b ≈ 6e3 against a unit-diagonal G of condition 8e8,
    and solves the scaled problem at once (``tests/test_constrained.py``).
    """
    p = b.shape[0]
    peaks = np.max(np.abs(C), axis=1) if C.size else np.zeros(len(C))
    rows = C[peaks > 0] / peaks[peaks > 0, None]  # the largest |entry|: no overflow
    scale = float(np.max(np.abs(b))) if np.any(b) else 1.0
    try:
        return scale * quadprog.solve_qp(G + RIDGE * np.eye(p), b / scale, rows.T.copy(),
                                         np.zeros(len(rows)))[0]
    except ValueError:
        return None


def constrained_lstsq(A: np.ndarray, y: np.ndarray, C: np.ndarray | None = None) -> np.ndarray:
    """Least squares of y on the few columns of A subject to C ξ ≥ 0.

    Solved on the normal equations with the columns scaled to unit norm (A has 2–12 columns and
    10⁴–10⁶ rows; the Gram matrix costs a fraction of a QR of A). The pseudo-inverse cut-off
    1e-13 drops a direction only where A's columns are collinear to ~3e-7. Rows of A that are
    not finite would poison every coefficient, so they are left out.
    """
    finite = np.isfinite(y) & np.all(np.isfinite(A), axis=1)
    if not finite.all():
        A, y = A[finite], y[finite]
    return _finite_lstsq(A, y, C)


def _finite_lstsq(A: np.ndarray, y: np.ndarray, C: np.ndarray | None) -> np.ndarray:
    """:func:`constrained_lstsq` of finite A and y."""
    G = A.T @ A
    if not np.all(np.isfinite(G)):  # products overflowed: solve on A itself (QR)
        return lstsq(A, y, cond=1e-13)[0]
    scale = np.sqrt(np.diag(G))
    scale[~(scale > 0)] = 1.0
    Gs, bs = G / np.outer(scale, scale), (A.T @ y) / scale
    coef = small_lstsq(Gs, bs, 1e-13) / scale
    if C is None or satisfied(C, coef):
        return coef
    sol = qp_normal(Gs, bs, C / scale)
    return coef if sol is None else sol / scale


class FixedColumnsLstsq:
    """:func:`constrained_lstsq` of y on [k new columns, F] for many new columns, one F and y.

    The iterations of the LuGre stage refit the same viscous and rigid-body columns F (n × m)
    with new z, ż columns every time. :meth:`design` copies F once into a matrix whose first k
    columns the caller overwrites before each solve; :meth:`solve` checks only those for
    non-finite values (F and y are checked here, once). The arithmetic is
    :func:`constrained_lstsq`'s, operation for operation, so the coefficients are the same to
    the last bit: the iterations' decisions (an error that rises, σ1 on its bound) can turn on
    round-off.

    Parameters
    ----------
    F : ndarray, shape (n, m)
        The fixed columns (physical units).
    y : ndarray, shape (n,)
        The target.
    """

    def __init__(self, F: np.ndarray, y: np.ndarray):
        self.F = np.asarray(F, dtype=float)
        self.y = np.asarray(y, dtype=float)
        self.finite = bool(np.isfinite(self.y).all() and np.isfinite(self.F).all())

    def design(self, k: int) -> np.ndarray:
        """A new (n, k + m) matrix [·, F] whose first k columns are for the caller to fill."""
        A = np.empty((self.F.shape[0], k + self.F.shape[1]))
        A[:, k:] = self.F
        return A

    def solve(self, A: np.ndarray, k: int, C: np.ndarray | None = None,
              y: np.ndarray | None = None) -> tuple[np.ndarray, float]:
        """Coefficients of ``A`` (from :meth:`design`, its first ``k`` columns filled) subject to
        C ξ ≥ 0, and their residual norm ‖Aξ − y‖ [units of y]; ``y``: another target than
        the one given at construction."""
        coef, residual = self.fit(A, k, C, y)
        return coef, float(np.linalg.norm(residual))

    def fit(self, A: np.ndarray, k: int, C: np.ndarray | None = None,
            y: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`solve`'s coefficients and their residual Aξ − y itself [units of y]."""
        y = self.y if y is None else y
        if self.finite and np.isfinite(A[:, :k]).all() and np.isfinite(y).all():
            coef = _finite_lstsq(A, y, C)
        else:
            coef = constrained_lstsq(A, y, C)
        return coef, A @ coef - y


def sign_shape_lstsq(G: np.ndarray, b: np.ndarray, nonneg: np.ndarray,
                     C: np.ndarray) -> np.ndarray:
    """argmin ξᵀGξ − 2bᵀξ with ξ ≥ 0 on ``nonneg`` and C ξ ≥ 0, from the normal equations.

    First the plain solution with every negative sign-constrained coefficient eliminated and the
    rest refitted (what the ℓ0 + sign prox of SR3 does); if that violates C ξ ≥ 0, the QP with
    both the shape and the sign constraints. G is scaled to unit diagonal inside, so any column
    scaling of the caller gives the same coefficients (in the caller's scaling).
    """
    scale = np.sqrt(np.abs(np.diag(G)))
    scale[~(scale > 0)] = 1.0
    Gs, bs = G / np.outer(scale, scale), b / scale
    active = np.ones(len(b), dtype=bool)
    x = np.zeros(len(b))
    while active.any():
        x[:] = 0.0
        x[active] = small_lstsq(Gs if active.all() else Gs[np.ix_(active, active)],
                                bs[active], 1e-12)
        negative = active & nonneg & (x < 0)
        if not negative.any():
            break
        active &= ~negative
    coef = x / scale
    if satisfied(C, coef):
        return coef
    rows = np.vstack([C, np.eye(len(b))[nonneg]]) / scale
    sol = qp_normal(Gs, bs, rows)
    if sol is None:
        return coef
    sol[nonneg] = np.maximum(sol[nonneg], 0.0)  # the dual method's rounding: −1e-15 is 0
    return sol / scale
