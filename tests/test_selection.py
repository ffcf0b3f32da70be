"""Model selection: the corrected AIC, its observations, the λ grid and the sweep's table."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sparsefric.errors import SparsefricError
from sparsefric.feature_library import static_library
from sparsefric.optimizers.sr3 import GramCache, SR3Newton, SR3Result
from sparsefric.selection import (
    EXPONENT,
    LINEAR_VISCOUS,
    absolute_rss,
    aicc,
    default_parts,
    exponent_variants,
    sweep,
    thin,
    threshold_grid,
)
from sparsefric.signals import Signals


def test_aicc_against_a_hand_computation():
    # k = 3 terms, RSS = 20 over m = 10 parts:
    # 2·3 + 10·ln(20/10) + 2·4·5/(10 − 3 − 2) = 6 + 6.931472 + 8 = 20.931472
    assert aicc(3, 20.0, 10) == pytest.approx(6 + 10 * math.log(2.0) + 8.0, rel=1e-12)
    assert aicc(3, 20.0, 10) == pytest.approx(20.931471805599453, rel=1e-12)


def test_aicc_is_undefined_where_the_correction_is():
    """m − k − 2 ≤ 0: the correction term is infinite or negative (it would reward size)."""
    assert aicc(8, 1.0, 10) == math.inf
    assert aicc(9, 1.0, 10) == math.inf
    assert math.isfinite(aicc(7, 1.0, 10))


def test_aicc_penalises_every_extra_term_at_equal_fit():
    m = default_parts(23)
    values = [aicc(k, 5.0, m) for k in range(1, 24)]
    assert np.all(np.diff(values) > 0)


def test_default_parts_keeps_aicc_defined_for_every_candidate_size():
    for p in (3, 10, 23, 40):
        m = default_parts(p)
        assert m == max(10, 4 * (p + 2)) and m - p - 2 > 0


def test_absolute_rss_sums_whole_parts_and_drops_the_remainder():
    residual = np.r_[np.full(10, -1.0), np.full(10, 2.0), 100.0]  # 21 samples, 2 parts of 10
    assert absolute_rss(residual, 2) == pytest.approx(30.0)


def test_threshold_grid_spans_the_torque_rms():
    tau = np.array([3.0, -4.0] * 50)  # RMS √12.5
    grid = threshold_grid(tau, n=7)
    rms = math.sqrt(12.5)
    assert grid[0] == pytest.approx(1e-3 * rms) and grid[-1] == pytest.approx(2 * rms)
    assert np.allclose(np.diff(np.log(grid)), np.log(grid[1] / grid[0]))
    with pytest.raises(SparsefricError, match="zero in every sample"):
        threshold_grid(np.zeros(10))


def test_thin_keeps_a_uniform_stride():
    x = Signals(np.arange(12.0), np.arange(12.0), np.zeros(12))
    xt, tt = thin(x, np.arange(12.0), max_rows=5)
    assert list(xt.qd) == [0.0, 3.0, 6.0, 9.0] and list(tt) == list(xt.qd)


def _coulomb_viscous_data(n: int = 4000, seed: int = 0):
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 8 * np.pi, n)
    q = 0.5 * np.sin(t)
    qd = 0.5 * np.cos(t) + 0.05
    qdd = -0.5 * np.sin(t)
    tau = 2.0 * qdd + 3.0 * np.cos(q) + 1.5 * np.sin(q) + 4.0 * np.sign(qd) + 1.2 * qd
    return Signals(q, qd, qdd), tau + 0.01 * rng.normal(size=n)


def test_sweep_selects_the_true_terms_and_reports_each_lambda():
    x, tau = _coulomb_viscous_data()
    lib = static_library("revolute", name="full", n_viscous=3, deltas=(1.0, 2.0))
    res = sweep(lib, x, tau, omega_starts=(0.05, 0.2), keep_kinds=("inertia", "gravity_cos",
                                                                    "gravity_sin"))
    names = [t.name for t in lib.terms()]
    chosen = {n for n, a in zip(names, res.best.support, strict=True) if a}
    assert chosen == {"qdd", "cos(q)", "sin(q)", "qd", "sign(qd)"}
    table = res.table
    assert table["selected"].sum() == 1 and table.loc[table.selected, "aic_r"].item() == 0.0
    assert (table["aic_r"] >= 0).all()
    assert (table["n_active"] + table["n_eliminated"] == len(names)).all()
    assert res.validation_source == "training"


def _falling_then_linear(speeds: list[float], n: int, rng: np.random.Generator
                         ) -> tuple[Signals, np.ndarray]:
    """Steady levels at ``speeds`` [rad/s] and ramps below them; friction
    3.2 + 4.6 e^{−|q̇/0.113|^1.75} + 0.57|q̇| N·m (run-time-seed zoo joint 17's truth), 0.03 N·m
    noise."""
    speed = np.where(rng.random(n) < 0.2, rng.uniform(0.02, max(speeds), n), rng.choice(speeds, n))
    qd = rng.choice([-1, 1], n) * speed
    x = Signals(rng.uniform(-1, 1, n), qd, rng.normal(size=n))
    g = 3.2 + 4.6 * np.exp(-(speed / 0.113) ** 1.75)
    tau = 0.27 * x.qdd + 2.1 * np.cos(x.q) + np.sign(qd) * g + 0.57 * qd
    return x, tau + 0.03 * rng.normal(size=n)


def test_a_linear_viscous_variant_wins_where_the_path_bends_the_curve_to_the_training_speeds():
    """Training at 0.039, 0.077 and 0.32 rad/s, validation at 1.7 rad/s: the λ path's models
    with the Stribeck term carry q̇²…q̇⁵ that fit the slow levels and miss 1.7 rad/s; the same
    supports with c₁q̇ alone predict it, and AICc on the validation samples takes one of them."""
    rng = np.random.default_rng(17)
    train = _falling_then_linear([0.039, 0.077, 0.32], 6000, rng)
    val = _falling_then_linear([1.7], 2000, rng)
    res = sweep(static_library(), *train, validate=val, omega_starts=(0.002, 0.02, 0.2))
    t = res.table
    variants = t[t["variant"] == LINEAR_VISCOUS]
    powers = [c for c in t.columns if c.startswith("qd^")]
    assert len(variants) > 0 and (variants[powers] == 0).all().all()
    best = t[t["selected"]].iloc[0]
    # a linear-viscous support, or the same with its δ exchanged (truth 1.75)
    assert best["variant"] in (LINEAR_VISCOUS, EXPONENT) and (best[powers] == 0).all()
    assert best["aicc"] < t.loc[t["variant"] == "", "aicc"].min() - 100
    stribeck = [c for c in t.columns if c.startswith("sign(qd)*exp")]
    assert best["qd"] == pytest.approx(0.57, rel=0.1)
    assert best["sign(qd)"] == pytest.approx(3.2, rel=0.05)
    assert best[stribeck].sum() == pytest.approx(4.6, rel=0.05)
    assert best["omega_s"] == pytest.approx(0.113, rel=0.1)


def test_exponent_variants_refit_every_delta_of_the_same_model_size():
    """From a support holding the flattest Stribeck column (δ = 0.5), each exchange for
    another δ is refitted with its own Ω_s, found anew (δ = 0.5 and 2.5 fit the same
    friction with Ω_s far apart): the true δ's variant fits best, with the true Ω_s."""
    rng = np.random.default_rng(5)
    n = 6000
    speed = np.where(rng.random(n) < 0.5, rng.uniform(0.005, 0.4, n),
                     rng.choice([0.03, 0.06, 0.12, 0.4], n))
    qd = rng.choice([-1, 1], n) * speed
    x = Signals(rng.uniform(-1, 1, n), qd, rng.normal(size=n))
    tau = (0.5 * x.qdd + np.sign(qd) * (3.0 + 2.0 * np.exp(-(speed / 0.05) ** 2.5))
           + 1.5 * qd + 0.01 * rng.normal(size=n))
    library = static_library("prismatic", n_viscous=1)
    cache = GramCache(library, x, tau)
    terms = library.terms()
    kinds = np.array([t.kind for t in terms])
    support = np.isin(kinds, ["inertia", "viscous", "coulomb"])
    support[[i for i, t in enumerate(terms) if t.kind == "stribeck" and t.param == 0.5]] = True
    solver = SR3Newton(0.0)
    coef, theta = solver.refit_support(cache, support, np.log(0.01))
    start = SR3Result(coef, coef != 0, theta, solver.fit_error(cache, coef, theta), 0, True)
    seen = {support.tobytes()}
    variants = exponent_variants(cache, start, solver, seen)
    n_stribeck = int((kinds == "stribeck").sum())
    assert len(variants) == n_stribeck - 1 and len(seen) == n_stribeck
    assert all(v.support.sum() == support.sum() for v in variants)
    best = min(variants, key=lambda v: v.error)
    assert [t.param for t, on in zip(terms, best.support, strict=True)
            if on and t.kind == "stribeck"] == [2.5]
    assert best.omega == pytest.approx(0.05, rel=0.05)
    assert best.error < 0.5 * start.error
    assert exponent_variants(cache, start, solver, seen) == []  # each support once
