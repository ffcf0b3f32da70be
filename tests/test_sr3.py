"""SR3 with Newton updates of Ω_s: derivatives, agreement with pysindy, joint optimality."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from pysindy.optimizers import SR3

from sparsefric.feature_library import (
    DEFAULT_DELTAS,
    RigidBodyLibrary,
    Signals,
    StribeckLibrary,
    ViscousLibrary,
    static_library,
)
from sparsefric.optimizers.sr3 import (
    GramCache,
    SR3Newton,
    _sr3_iterate,
    data_theta_bounds,
    l0_weight,
    newton_terms,
    prox_l0_nonneg,
    sr3_gram,
)


def _signals(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(n) * 1e-3
    qd = 0.6 * np.sin(2 * np.pi * 0.5 * t) + 0.05 * rng.normal(size=n)
    return Signals(0.5 * np.sin(t), qd, rng.normal(size=n))


def _torque(x, omega=0.08):
    s = np.sign(x.qd)
    return (1.5 * x.qdd + 20 * np.cos(x.q) + 9 * x.qd + s * (18 + 7 * np.exp(
        -np.abs(x.qd / omega) ** 1.5)))


def test_gradient_and_hessian_match_finite_differences():
    x = _signals()
    lib = StribeckLibrary((0.75, 1.5, 3.0))
    xi = np.array([10.0, 4.0, -2.0, 3.0])
    rf = -_torque(x)
    theta, h = np.log(0.05), 1e-5
    f, g, H = newton_terms(lib, x, rf, xi, theta)
    fp, gp, _ = newton_terms(lib, x, rf, xi, theta + h)
    fm, gm, _ = newton_terms(lib, x, rf, xi, theta - h)
    assert g == pytest.approx((fp - fm) / (2 * h), rel=1e-6)
    assert pytest.approx((gp - gm) / (2 * h), rel=1e-5) == H
    assert pytest.approx((fp - 2 * f + fm) / h**2, rel=1e-3) == H


def test_our_alternation_reproduces_pysindy_sr3():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(500, 8))
    y = X @ np.array([3.0, 0, 0, -2.0, 0, 0.05, 0, 1.0]) + 0.01 * rng.normal(size=500)
    thr, nu = 0.5, 0.1
    opt = SR3(reg_weight_lam=l0_weight(thr, nu), regularizer="L0", relax_coeff_nu=nu,
              max_iter=10000, tol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt.fit(X, y)
    _, W, _ = sr3_gram(X.T @ X, X.T @ y, thr, nu)
    np.testing.assert_allclose(W, opt.coef_.ravel(), rtol=1e-6, atol=1e-9)


def test_joint_solution_beats_every_fixed_omega_on_the_grid():
    x = _signals(seed=2)
    tau = _torque(x) + 0.3 * np.random.default_rng(3).normal(size=len(x))
    lib = RigidBodyLibrary() + ViscousLibrary((1,)) + StribeckLibrary((1.5,))
    cache = GramCache(lib, x, tau)
    joint = SR3Newton(threshold=0.0).fit(cache, np.log(0.02))
    assert joint.omega == pytest.approx(0.08, rel=0.05)
    for omega in np.geomspace(0.002, 0.2, 25):
        fixed = SR3Newton(threshold=0.0, max_outer=1, theta_bounds=(np.log(omega),) * 2)
        assert joint.error <= fixed.fit(cache, np.log(omega)).error + 1e-9


def test_threshold_drops_small_terms_and_keeps_signs():
    x = _signals(seed=4)
    tau = _torque(x) + 0.3 * np.random.default_rng(5).normal(size=len(x))
    lib = static_library(deltas=DEFAULT_DELTAS)
    res = SR3Newton(threshold=0.5).fit(GramCache(lib, x, tau), np.log(0.05))
    names = [t.name for t, a in zip(lib.terms(), res.support, strict=True) if a]
    assert {"qdd", "cos(q)", "qd", "sign(qd)"} <= set(names)
    assert "sin(q)" not in names and "qd^4" not in names
    kinds = [t.kind for t in lib.terms()]
    assert all(c >= 0 for c, k in zip(res.coef, kinds, strict=True)
               if k in ("coulomb", "stribeck"))


def test_compiled_prox_matches_the_pysindy_based_prox():
    rng = np.random.default_rng(3)
    xi = rng.normal(size=40)
    nonneg, keep = rng.random(40) < 0.4, rng.random(40) < 0.2
    lam_nu = 0.3
    cut = np.sqrt(2 * lam_nu)
    _, W, _, _ = _sr3_iterate(np.eye(40), xi, 0.01, cut, np.zeros(40), nonneg, keep,
                              np.zeros((0, 40), bool), 0, 1)
    np.testing.assert_array_equal(W, prox_l0_nonneg(xi, lam_nu, nonneg, keep))
    assert (W == 0).sum() > 10 and (W != 0).sum() > 10  # both branches exercised


def test_weighted_sum_matches_the_columns():
    x = _signals()
    lib = static_library()
    coef = np.random.default_rng(4).normal(size=len(lib))
    for got, cols in zip(lib.combine(x, np.log(0.05), coef, 2),
                         lib.evaluate(x, np.log(0.05), 2), strict=True):
        np.testing.assert_allclose(got, cols @ coef, rtol=1e-10, atol=1e-10)


def test_omega_stays_where_the_data_can_see_a_stribeck_term():
    """Sliding-only samples (|q̇| ≥ 0.05 rad/s) and no Stribeck effect: Ω_s must not drift to
    where its columns are spikes on the slowest samples."""
    rng = np.random.default_rng(5)
    n = 5000
    qd = rng.choice([-1, 1], n) * rng.uniform(0.05, 1.0, n)
    x = Signals(rng.uniform(-1, 1, n), qd, rng.normal(size=n))
    tau = 1.5 * x.qdd + 20 * np.cos(x.q) + 9 * qd + 18 * np.sign(qd) + 0.3 * rng.normal(size=n)
    lo, hi = data_theta_bounds(qd)
    assert np.exp(lo) == pytest.approx(np.quantile(np.abs(qd), 0.01) / 10)
    assert np.exp(hi) == pytest.approx(10 * np.abs(qd).max())
    cache = GramCache(static_library(), x, tau)
    for omega0 in (1e-4, 0.002, 0.02):
        res = SR3Newton(threshold=0.01).fit(cache, np.log(omega0))
        assert lo <= res.theta <= hi and res.converged


def test_profile_step_finds_a_stribeck_velocity_the_fixed_coefficient_newton_loses():
    """Two steady speeds (0.127 and 2.13 rad/s) plus ramps through the speeds between, and a
    Stribeck term at Ω_s = 0.35 rad/s (zoo joint 16's design): with SR3's coefficients held
    fixed, Newton walks Ω_s down to a spike on the slowest samples from every start; the
    variable-projection step lands at the truth and the noise floor."""
    rng = np.random.default_rng(16)
    n = 6000
    speed = np.where(rng.random(n) < 0.2, rng.uniform(0.02, 2.13, n),
                     rng.choice([0.127, 2.13], n, p=[0.45, 0.55]))
    qd = rng.choice([-1, 1], n) * speed
    x = Signals(rng.uniform(-1, 1, n), qd, rng.normal(size=n))
    g = 29.7 + 14.9 * np.exp(-(speed / 0.35) ** 3)
    tau = 1.4 * x.qdd + 80 * np.cos(x.q) + np.sign(qd) * g + 4.4 * qd + 0.5 * rng.normal(size=n)
    cache = GramCache(static_library(), x, tau)
    floor = 0.5 * np.sqrt(n)  # ‖noise‖
    for omega0 in (0.002, 0.02, 0.2):
        res = SR3Newton(threshold=0.2, omega_step="profile").fit(cache, np.log(omega0))
        assert res.omega == pytest.approx(0.35, rel=0.1)
        assert res.error < 1.15 * floor
        paper = SR3Newton(threshold=0.2, omega_step="newton").fit(cache, np.log(omega0))
        assert paper.omega < 0.1 and paper.error > 2 * floor


def _spike_cache() -> GramCache:
    """Coulomb 10 N·m at 0.1–1 rad/s, 1 N·m more on the slowest 1 % of the samples, and the
    library [sign(q̇), Stribeck δ = 4]."""
    rng = np.random.default_rng(7)
    n = 3000
    speed = rng.uniform(0.1, 1.0, n)
    qd = rng.choice([-1, 1], n) * speed
    tau = np.sign(qd) * (10.0 + (speed < np.quantile(speed, 0.01)))
    x = Signals(np.zeros(n), qd, np.zeros(n))
    cache = GramCache(StribeckLibrary((4.0,)), x, tau)
    return cache


def test_profile_refuses_a_dry_friction_level_the_motor_never_applied():
    """A Stribeck column far below the data is a spike on the slowest samples: least squares
    gives it an amplitude of ~1e50 N·m to fit 1 N·m on them. The profile is +∞ there (g(0) above
    G0_LIMIT × max|τ|), finite where the column is a friction shape."""
    cache = _spike_cache()
    profile = SR3Newton._profile(cache, np.ones(2, dtype=bool))
    assert profile(np.log(0.03)) == np.inf
    assert np.isfinite(profile(np.log(0.3)))


def test_refit_drops_a_stribeck_term_whose_dry_level_no_motor_applied():
    """Where every Ω_s within reach makes the Stribeck column a spike on the slowest samples,
    the refit keeps the Coulomb level alone rather than an amplitude of ~1e50 N·m."""
    cache = _spike_cache()
    bounds = (np.log(0.01), np.log(0.04))
    res = SR3Newton(threshold=0.0, theta_bounds=bounds).fit(cache, np.log(0.02))
    coulomb, stribeck = res.coef
    assert stribeck == 0.0 and not res.support[1]
    assert coulomb == pytest.approx(10.0, abs=0.05)
    free = SR3Newton(threshold=0.0).fit(cache, np.log(0.3))  # a friction shape: kept
    assert free.support.all() and free.coef.sum() < cache.g0_limit


def test_profile_values_are_stored_apart_for_the_shape_constrained_search():
    """A revisited point of a profile search is served from the cache's store, and the profiles
    with and without the shape constraints (which differ where the viscous part would fall)
    never share a stored value."""
    x = _signals()
    lib = static_library()
    cache = GramCache(lib, x, _torque(x) - 40 * x.qd)  # a falling viscous part: shape binds
    support = np.ones(len(lib), dtype=bool)
    theta = float(np.log(0.08))
    shaped, free = (SR3Newton._profile(cache, support, shape=s) for s in (True, False))
    values = shaped(theta), free(theta)
    assert values[0] > values[1]  # the constraints cost fit
    assert len(cache.profiles) == 2
    fresh = GramCache(lib, x, _torque(x) - 40 * x.qd)
    assert (SR3Newton._profile(fresh, support, shape=True)(theta),
            SR3Newton._profile(fresh, support, shape=False)(theta)) == values
    assert (shaped(theta), free(theta)) == values and len(cache.profiles) == 2
