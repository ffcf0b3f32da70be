"""Least squares under the friction's shape constraints (optimizers/constrained.py, sr3.py)."""

import numpy as np
import pytest
from scipy.linalg import lstsq

from sparsefric.feature_library import SignalLibrary, StribeckLibrary, ViscousLibrary
from sparsefric.optimizers.constrained import (
    FixedColumnsLstsq,
    constrained_lstsq,
    shape_constraints,
    slope_rows,
    small_lstsq,
    speed_grid,
)
from sparsefric.optimizers.sr3 import GramCache, lsq_on_support
from sparsefric.signals import Signals


def test_speed_grid_is_symmetric_and_reaches_past_the_data():
    qd = np.r_[np.linspace(-2.0, 2.0, 1001)]
    v = speed_grid(qd)
    assert v.min() == pytest.approx(-v.max())
    assert 0.0 in v
    assert v.max() == pytest.approx(1.5 * np.quantile(np.abs(qd), 0.999))


def test_slope_rows_are_the_derivative_of_the_power_series():
    v = np.array([-1.0, 0.0, 0.5, 2.0])
    rows = slope_rows((1, 3), v)
    c = np.array([2.0, -0.3])
    # each row is a positive multiple of τ_v'(v) = c1 + 3 c3 v² at one of the speeds
    slopes = c[0] + 3 * c[1] * np.unique(np.abs(v)) ** 2
    assert sorted(np.sign(rows @ c)) == sorted(np.sign(slopes))


def test_unconstrained_solution_is_kept_when_it_satisfies_the_shape():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(500, 3))
    y = A @ np.array([1.0, 2.0, 3.0]) + 0.01 * rng.normal(size=500)
    C = np.eye(3)  # all ≥ 0: satisfied by the fit
    np.testing.assert_array_equal(constrained_lstsq(A, y, C), constrained_lstsq(A, y))


@pytest.mark.parametrize("shaped", [False, True])
def test_fixed_columns_solve_is_the_least_squares_on_the_whole_matrix(shaped):
    """Solving with the fixed columns copied once equals the fit on [new columns, F] to the last
    bit (the iterations' decisions may turn on round-off), with the constraint binding (σ1 ≥ 0
    on a column whose free coefficient is negative) or not, and for a second target."""
    rng = np.random.default_rng(3)
    n = 4000
    F = np.column_stack([rng.normal(size=n), rng.normal(size=n) ** 3, np.ones(n)])
    fixed = FixedColumnsLstsq(F, rng.normal(size=n))
    A = fixed.design(2)
    C = np.eye(5)[[1]] if shaped else None
    for scale in (1.0, 3.0):
        Z = rng.normal(size=(2, n)) * np.array([[100.0], [0.01]]) * scale
        y = Z.T @ np.array([0.02, -50.0]) + F @ np.array([1.0, 0.5, -2.0]) + rng.normal(size=n)
        A[:, :2] = Z.T
        coef, err = fixed.solve(A, 2, C, y)
        whole = np.column_stack([Z.T, F])
        np.testing.assert_array_equal(coef, constrained_lstsq(whole, y, C))
        assert err == np.linalg.norm(whole @ coef - y)
        if shaped:
            assert coef[1] == pytest.approx(0.0, abs=1e-12)
        else:
            assert coef[1] == pytest.approx(-50.0, rel=0.1)


def test_fixed_columns_solve_drops_non_finite_rows_as_the_whole_matrix_fit():
    rng = np.random.default_rng(4)
    F = rng.normal(size=(300, 2))
    y = F @ np.array([1.0, -1.0]) + 0.1 * rng.normal(size=300)
    fixed = FixedColumnsLstsq(F, y)
    A = fixed.design(1)
    A[:, 0] = rng.normal(size=300)
    A[7, 0] = np.nan
    coef, err = fixed.solve(A, 1)
    np.testing.assert_array_equal(coef, constrained_lstsq(A, y))
    assert np.isnan(err)


def test_two_speeds_cannot_be_fitted_with_a_negative_viscous_slope():
    """Coulomb + c1 q̇ through two steady speeds whose friction falls with speed (a Stribeck knee
    the library cannot see): without the shape constraint c1 < 0, with it c1 = 0."""
    qd = np.repeat([0.2, 1.0, -0.2, -1.0], 200)
    tau = np.sign(qd) * np.where(np.abs(qd) < 0.5, 12.0, 10.0)
    A = np.column_stack([np.sign(qd), qd])
    free = constrained_lstsq(A, tau)
    C = shape_constraints(2, {1: 1}, speed_grid(qd))
    shaped = constrained_lstsq(A, tau, C)
    assert free[1] < -1.0
    assert shaped[1] == pytest.approx(0.0, abs=1e-9)
    assert shaped[0] == pytest.approx(11.0, rel=1e-6)


def test_gram_refit_keeps_the_viscous_part_non_decreasing_and_sigma1_non_negative():
    rng = np.random.default_rng(1)
    qd = np.concatenate([np.full(300, v) for v in (0.1, 0.4, 1.0, -0.1, -0.4, -1.0)])
    zd = 0.01 * rng.normal(size=qd.size)
    x = Signals(np.zeros_like(qd), qd, np.zeros_like(qd), multiplier=np.sign(qd),
                extra={"zdot": zd})
    # friction that falls then rises, and a ż coefficient that would come out negative
    tau = np.sign(qd) * (10 - 4 * np.abs(qd) + 3 * np.abs(qd) ** 3) - 50 * zd
    library = ViscousLibrary((1, 3)) + StribeckLibrary((), 0.0) + SignalLibrary(["zdot"])
    cache = GramCache(library, x, tau)
    coef = lsq_on_support(cache, np.ones(4, bool), 0.0)
    v = np.linspace(-1.5, 1.5, 301)
    assert np.all(np.diff(coef[0] * v + coef[1] * v**3) >= -1e-9)
    assert coef[3] >= 0.0


def test_a_qp_on_which_quadprog_cycled_is_solved():
    """A shape-constrained refit of a bootstrap resample (zoo seed 2024 joint 3): quadprog's
    dual active set cycled for ever on it as posed (b ≈ 6e3, G of condition 8e8). Scaled, it
    is solved at once; run in a child process so that a regression fails instead of hanging."""
    import subprocess
    import sys
    from pathlib import Path

    data = Path(__file__).with_name("quadprog_cycle.npz")
    code = ("import sys, numpy as np\n"
            "from sparsefric.optimizers.constrained import qp_normal\n"
            "d = np.load(sys.argv[1])\n"
            "x = qp_normal(d['G'], d['b'], d['C'])\n"
            "print(float((d['C'] @ x).min() / np.abs(x).max()))\n"
            "print(float(0.5 * x @ d['G'] @ x - d['b'] @ x))\n")
    out = subprocess.run([sys.executable, "-c", code, str(data)], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    slack, objective = map(float, out.stdout.split())
    assert slack > -1e-9  # feasible
    d = np.load(data)
    free = np.linalg.solve(d["G"], d["b"])
    assert (d["C"] @ free).min() < 0  # the constraints bind: the QP path is the one tested
    assert objective < 0.0  # better than ξ = 0, which is feasible with objective 0


def test_a_constraint_row_with_huge_entries_still_binds():
    """Slopes of q̇⁵ over scaled columns reach 1e200: a row's 2-norm would overflow to ∞ and
    scale the row to nothing; scaled by its largest entry it still holds ξ₀ ≥ 0."""
    from sparsefric.optimizers.constrained import qp_normal

    x = qp_normal(np.eye(2), np.array([-1.0, 1.0]), np.array([[1e200, 1e190]]))
    np.testing.assert_allclose(x, [0.0, 1.0], atol=1e-8)


@pytest.mark.parametrize("cond", [1e-12, 1e-13, 1e-14])
def test_small_lstsq_is_scipy_lstsq_to_the_last_bit(cond):
    """The direct dgelsd call gives scipy's coefficients exactly, also on a nearly collinear or
    tall matrix (the iterations' decisions can turn on round-off)."""
    rng = np.random.default_rng(3)
    for n in range(1, 26):
        A = rng.normal(size=(n + n % 3, n))
        if n > 1:
            A[:, -1] = A[:, 0] * (1 + 1e-10)  # below the cut-off: a dropped direction
        b = rng.normal(size=len(A))
        np.testing.assert_array_equal(small_lstsq(A, b, cond),
                                      lstsq(A, b, cond=cond, check_finite=False)[0])
    assert small_lstsq(np.zeros((3, 0)), np.ones(3), cond).shape == (0,)
