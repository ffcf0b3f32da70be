"""Model selection: the corrected AIC, its observations, the λ grid and the sweep's table."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from sparsefric.errors import SparsefricError
from sparsefric.feature_library import static_library
from sparsefric.optimizers.sr3 import GramCache, SR3Newton, SR3Result
from sparsefric.selection import (
    ADDED,
    EXPONENT,
    LINEAR_VISCOUS,
    STEADY_MARGIN,
    TIE_AICC,
    SteadyLevels,
    absolute_rss,
    aicc,
    coulomb_addition,
    default_parts,
    exponent_variants,
    hierarchical,
    linear_added_variants,
    linear_exponent_variants,
    lower_power_variants,
    lowest_degree_row,
    shape_parameters,
    steady_tie_break,
    stribeck_additions,
    sweep,
    thin,
    threshold_grid,
    viscous_addition,
    viscous_degree,
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


def _stribeck_delta_2_5(n_viscous: int = 1) -> tuple[GramCache, np.ndarray, np.ndarray]:
    """A prismatic joint with friction 3 + 2 e^{−|q̇/0.05|^2.5} + 1.5 q̇ N, levels and ramps
    over 0.005–0.4 m/s: the cache of the library with ``n_viscous`` viscous powers, its terms'
    kinds, and the support of inertia, viscous and Coulomb terms."""
    rng = np.random.default_rng(5)
    n = 6000
    speed = np.where(rng.random(n) < 0.5, rng.uniform(0.005, 0.4, n),
                     rng.choice([0.03, 0.06, 0.12, 0.4], n))
    qd = rng.choice([-1, 1], n) * speed
    x = Signals(rng.uniform(-1, 1, n), qd, rng.normal(size=n))
    tau = (0.5 * x.qdd + np.sign(qd) * (3.0 + 2.0 * np.exp(-(speed / 0.05) ** 2.5))
           + 1.5 * qd + 0.01 * rng.normal(size=n))
    library = static_library("prismatic", n_viscous=n_viscous)
    kinds = np.array([t.kind for t in library.terms()])
    return GramCache(library, x, tau), kinds, np.isin(kinds, ["inertia", "viscous", "coulomb"])


def _refitted(cache: GramCache, support: np.ndarray) -> SR3Result:
    solver = SR3Newton(0.0)
    coef, theta = solver.refit_support(cache, support, np.log(0.01))
    return SR3Result(coef, coef != 0, theta, solver.fit_error(cache, coef, theta), 0, True)


def _stribeck_deltas(cache: GramCache, res: SR3Result) -> list[float]:
    return [t.param for t, on in zip(cache.library.terms(), res.support, strict=True)
            if on and t.kind == "stribeck"]


def test_exponent_variants_refit_every_delta_of_the_same_model_size():
    """From a support holding the flattest Stribeck column (δ = 0.5), each exchange for
    another δ is refitted with its own Ω_s, found anew (δ = 0.5 and 2.5 fit the same
    friction with Ω_s far apart): the true δ's variant fits best, with the true Ω_s."""
    cache, kinds, support = _stribeck_delta_2_5()
    terms = cache.library.terms()
    support[[i for i, t in enumerate(terms) if t.kind == "stribeck" and t.param == 0.5]] = True
    solver = SR3Newton(0.0)
    start = _refitted(cache, support)
    seen = {support.tobytes()}
    variants = exponent_variants(cache, start, solver, seen)
    n_stribeck = int((kinds == "stribeck").sum())
    assert len(variants) == n_stribeck - 1 and len(seen) == n_stribeck
    assert all(v.support.sum() == support.sum() for v in variants)
    best = min(variants, key=lambda v: v.error)
    assert _stribeck_deltas(cache, best) == [2.5]
    assert best.omega == pytest.approx(0.05, rel=0.05)
    assert best.error < 0.5 * start.error
    assert exponent_variants(cache, start, solver, seen) == []  # each support once


def test_a_bent_viscous_part_is_cut_to_its_slope_with_every_other_delta():
    """From δ = 0.5 with q̇, q̇³ and q̇⁵, which bend the flat rise towards the true knee
    (δ = 2.5), the viscous part is cut to q̇ and δ exchanged, each support once, refitted with
    its own Ω_s: the true δ fits best, with the true Ω_s and slope, better than the bent
    curve; a support with q̇ alone gets none (the plain exchanges cover it)."""
    cache, kinds, support = _stribeck_delta_2_5(n_viscous=5)
    terms = cache.library.terms()
    powers = np.array([int(t.param) if t.kind == "viscous" else 0 for t in terms])
    support[np.isin(powers, (2, 4))] = False
    support[[i for i, t in enumerate(terms) if t.kind == "stribeck" and t.param == 0.5]] = True
    solver = SR3Newton(0.0)
    start = _refitted(cache, support)
    assert start.support[np.isin(powers, (3, 5))].any()
    seen = {start.support.tobytes()}
    variants = linear_exponent_variants(cache, start, solver, seen)
    assert len(variants) == int((kinds == "stribeck").sum()) - 1
    assert all(np.flatnonzero(v.support & (kinds == "viscous")).tolist()
               == np.flatnonzero(powers == 1).tolist() for v in variants)
    best = min(variants, key=lambda v: v.error)
    assert _stribeck_deltas(cache, best) == [2.5]
    assert best.omega == pytest.approx(0.05, rel=0.05)
    assert best.coef[powers == 1].item() == pytest.approx(1.5, rel=0.05)
    assert best.error < 0.5 * start.error
    assert linear_exponent_variants(cache, start, solver, seen) == []  # each support once
    assert linear_exponent_variants(cache, best, solver, set()) == []


def test_stribeck_additions_add_every_delta_to_a_support_without_one():
    """From inertia, viscous and Coulomb terms alone — the friction falls over the speeds, so
    the dissipative viscous term is refitted to 0 — each Stribeck column is added, alone and
    with the viscous term, and refitted with its own Ω_s: the true δ's addition fits best,
    with the true Ω_s and viscous term, and keeps every term of the start; a support that
    already holds a Stribeck column gets none."""
    cache, kinds, support = _stribeck_delta_2_5()
    solver = SR3Newton(0.0)
    start = _refitted(cache, support)
    assert not start.support[kinds == "viscous"].any()
    seen = {start.support.tobytes()}
    added = stribeck_additions(cache, start, solver, seen)
    assert 0 < len(added) <= 2 * int((kinds == "stribeck").sum())  # with and without c₁q̇
    assert all(a.support[start.support].all() and len(_stribeck_deltas(cache, a)) == 1
               for a in added)
    best = min(added, key=lambda v: v.error)
    assert _stribeck_deltas(cache, best) == [2.5]
    assert best.omega == pytest.approx(0.05, rel=0.05)
    assert best.coef[kinds == "viscous"].item() == pytest.approx(1.5, rel=0.05)
    assert best.error < 0.1 * start.error
    assert stribeck_additions(cache, start, solver, seen) == []  # each support once
    assert stribeck_additions(cache, best, solver, set()) == []


def test_a_viscous_slope_is_added_to_a_stribeck_support_without_one():
    """From inertia, Coulomb and the true Stribeck term alone, the linear viscous term is
    added and refitted with Ω_s: the true slope, and every term of the start kept; a support
    that holds a viscous term, or no Stribeck term, gets none, and each support comes once."""
    cache, kinds, support = _stribeck_delta_2_5()
    terms = cache.library.terms()
    support[kinds == "viscous"] = False
    support[[i for i, t in enumerate(terms) if t.kind == "stribeck" and t.param == 2.5]] = True
    solver = SR3Newton(0.0)
    start = _refitted(cache, support)
    seen = {start.support.tobytes()}
    (added,) = viscous_addition(cache, start, solver, seen)
    assert added.support[start.support].all() and added.support.sum() == support.sum() + 1
    assert added.coef[kinds == "viscous"].item() == pytest.approx(1.5, rel=0.05)
    assert added.omega == pytest.approx(0.05, rel=0.05)
    assert added.error < 0.1 * start.error
    assert viscous_addition(cache, start, solver, seen) == []  # each support once
    assert viscous_addition(cache, added, solver, set()) == []
    no_stribeck = _refitted(cache, np.isin(kinds, ["inertia", "coulomb"]))
    assert viscous_addition(cache, no_stribeck, solver, set()) == []


def test_a_coulomb_level_is_added_to_a_rise_that_carries_the_dry_friction_alone():
    """From inertia, q̇ and the true Stribeck column refitted with Ω_s far above the recorded
    speeds and no Coulomb level — the rise then stands for the level 3 N, and c₁ is refitted
    to 0 — the Coulomb column is added, alone and with each viscous power the support lacks,
    and refitted from every Ω_s of the grid: the variant with q̇ back is the truth (f_c 3 N,
    the rise's knee at 0.05 m/s), every variant keeps the start's columns, and a support
    with a Coulomb level gets none, nor one whose Coulomb column is kept (not a candidate)."""
    cache, kinds, _ = _stribeck_delta_2_5(n_viscous=3)
    terms = cache.library.terms()
    power = np.array([t.param if t.kind == "viscous" else 0 for t in terms])
    support = (kinds == "inertia") | (power == 1)
    support[[i for i, t in enumerate(terms) if t.kind == "stribeck" and t.param == 2.5]] = True
    solver = SR3Newton(0.0)
    coef, theta = solver.refit_support(cache, support, np.log(5.0))
    start = SR3Result(coef, coef != 0, theta, solver.fit_error(cache, coef, theta), 0, True)
    assert start.omega > 1.0 and not start.support[power > 0].any()
    seen = {start.support.tobytes()}
    variants = coulomb_addition(cache, start, solver, seen)
    coulomb = kinds == "coulomb"
    assert variants and all(v.support[start.support].all() and v.support[coulomb]
                            for v in variants)
    assert len(seen) == 1 + 4  # alone, with q̇, q̇² or q̇³
    linear = [v for v in variants if v.support[power > 0].tolist() == [True, False, False]]
    best = min(linear, key=lambda v: v.error)
    assert best.coef[coulomb].item() == pytest.approx(3.0, rel=0.01)
    assert best.omega == pytest.approx(0.05, rel=0.02)
    assert best.coef[power == 1].item() == pytest.approx(1.5, rel=0.02)
    assert best.error < 0.1 * start.error
    assert coulomb_addition(cache, start, solver, seen) == []  # each support once
    assert coulomb_addition(cache, best, solver, set()) == []
    kept = GramCache(cache.library, cache.signals, cache.tau, ("inertia", "coulomb"))
    assert coulomb_addition(kept, start, solver, set()) == []  # the LuGre steps keep it


def _two_levels_and_ramps(speeds: list[float], n: int, rng: np.random.Generator
                          ) -> tuple[Signals, np.ndarray]:
    """Steady levels at ``speeds`` [rad/s] and 2 % of samples on ramps below the fastest;
    friction 29.7 + 14.9 e^{−|q̇/0.346|^2.95} + 4.41|q̇| N·m (fixed-seed zoo joint 16's truth),
    0.5 N·m noise."""
    speed = np.where(rng.random(n) < 0.02, rng.uniform(0.0, max(speeds), n),
                     rng.choice(speeds, n))
    qd = rng.choice([-1, 1], n) * speed
    x = Signals(rng.uniform(-0.6, 0.85, n), qd, rng.normal(size=n))
    g = 29.7 + 14.9 * np.exp(-(speed / 0.346) ** 2.95)
    tau = 1.36 * x.qdd + 83.6 * np.cos(x.q) + np.sign(qd) * g + 4.41 * qd
    return x, tau + 0.5 * rng.normal(size=n)


def _friction_of_row(row: pd.Series, speed: float) -> float:
    """The static friction [N·m] of a sweep row at ``speed`` [rad/s] > 0."""
    f = row["sign(qd)"] + row.get("qd", 0.0) * speed
    for name, value in row.items():
        if str(name).startswith("qd^"):
            f += value * speed ** int(str(name)[3:])
        elif str(name).startswith("sign(qd)*exp"):
            delta = float(str(name).split("^")[-1].rstrip(")"))
            f += value * np.exp(-(speed / row["omega_s"]) ** delta)
    return float(f)


def test_a_stribeck_term_the_path_drops_is_added_back_with_its_own_exponent():
    """The paper's split on a joint whose friction falls from 44.5 N·m at 0.127 rad/s to
    39.1 N·m at 2.13 rad/s (training) and is 44.6 and 37.4 N·m at 0.03 and 1.75 rad/s
    (validation): without an addition the sweep kept a Coulomb level alone (break-away
    −3 %, the 1.75 rad/s level +16 %); the Coulomb level with a steep Stribeck term added
    describes every level."""
    rng = np.random.default_rng(16)
    train = _two_levels_and_ramps([0.127, 2.13], 6000, rng)
    val = _two_levels_and_ramps([0.03, 1.75], 3000, rng)
    res = sweep(static_library(), *train, validate=val, omega_starts=(0.002, 0.02, 0.2))
    best = res.table[res.table["selected"]].iloc[0]
    stribeck = [c for c in res.table.columns if c.startswith("sign(qd)*exp")]
    assert best["variant"] in (ADDED, EXPONENT)  # added, then perhaps its δ exchanged
    assert (best[stribeck] > 0).any()
    speeds = np.array([0.03, 0.127, 1.75, 2.13])
    fitted = [_friction_of_row(best, v) for v in speeds]
    truth = 29.7 + 14.9 * np.exp(-(speeds / 0.346) ** 2.95) + 4.41 * speeds
    assert np.abs(np.array(fitted) / truth - 1).max() < 0.02


def test_steady_levels_measure_the_static_curve_as_a_cve_point_does():
    """½[τ(v) − τ(−v)] of the chosen columns at rest in q̈: gravity, the inertia and the even
    viscous power cancel, the Coulomb, Stribeck and odd viscous terms remain."""
    lib = static_library("revolute", name="full", n_viscous=3, deltas=(1.0,))
    names = [t.name for t in lib.terms()]
    values = {"qdd": 2.0, "cos(q)": 3.0, "qd": 1.2, "qd^2": 0.7, "qd^3": 0.1, "sign(qd)": 4.0,
              "sign(qd)*exp(-|qd/Ws|^1)": 1.5}
    coef = np.array([values.get(n, 0.0) for n in names])
    res = SR3Result(coef, coef != 0, math.log(0.05), 0.0, 0, True)
    v = np.array([0.01, 0.05, 0.4, 2.0])
    levels = SteadyLevels(v, np.zeros(4), np.ones(4), 4)
    expected = 4.0 + 1.5 * np.exp(-v / 0.05) + 1.2 * v + 0.1 * v**3
    assert levels.curve(lib, res) == pytest.approx(expected)
    assert levels.chi2(lib, res) == pytest.approx(np.sum(expected**2))


def test_of_models_aicc_cannot_tell_apart_the_one_that_meets_the_steady_levels_is_kept():
    aicc = np.array([10.0, 10.0 + 0.5 * TIE_AICC, 10.0 + 1.5 * TIE_AICC, np.inf])
    shape = np.array([1, 2, 2, 2])
    assert steady_tie_break(aicc, np.array([50.0, 1.0, 0.0, 0.0]), shape, 0, 5) == 1
    # beyond the tie the levels do not overrule AICc; within it only a clear gain does
    assert steady_tie_break(aicc, np.array([50.0, 60.0, 0.0, 0.0]), shape, 0, 5) == 0
    assert steady_tie_break(aicc, np.array([5.0, 5.0 - 0.9 * STEADY_MARGIN, 0.0, 0.0]), shape,
                            0, 5) == 0


def test_the_steady_levels_judge_no_model_richer_than_they_are():
    """Two levels say nothing of a curve with more parameters than the AICc minimum's and as
    many as they are: it passes through both whatever it does elsewhere."""
    aicc, chi2 = np.array([10.0, 11.0, 11.0]), np.array([500.0, 1.0, 100.0])
    assert steady_tie_break(aicc, chi2, np.array([2, 5, 2]), 0, 2) == 2
    assert steady_tie_break(aicc, chi2, np.array([2, 5, 2]), 0, 6) == 1


def test_the_steady_levels_keep_the_choice_where_no_row_has_an_aicc():
    nan = np.full(3, np.nan)
    assert steady_tie_break(nan, np.array([5.0, 1.0, 9.0]), np.array([2, 2, 2]), 1, 3) == 1


def test_a_static_curve_has_its_terms_and_the_stribeck_velocity_as_parameters():
    kinds = np.array(["inertia", "viscous", "viscous", "coulomb", "stribeck", "stribeck",
                      "zdot"])
    assert shape_parameters(kinds, [1, 1, 0, 1, 0, 0, 1]) == 2
    assert shape_parameters(kinds, [1, 1, 1, 1, 1, 1, 1]) == 6


def test_a_sweep_given_steady_levels_scores_them_and_keeps_the_tie_they_favour():
    """The path's supports with their χ² against the levels of the truth's curve: the selected
    model is within the tie of the AICc minimum, and none there meets them clearly better."""
    x, tau = _coulomb_viscous_data()
    lib = static_library("revolute", name="full", n_viscous=3, deltas=(1.0, 2.0))
    v = np.array([0.1, 0.3, 0.55])
    levels = SteadyLevels(v, 4.0 + 1.2 * v, np.full(3, 0.01), 3)
    res = sweep(lib, x, tau, omega_starts=(0.05, 0.2), steady=levels,
                keep_kinds=("inertia", "gravity_cos", "gravity_sin"))
    table = res.table
    chosen = table[table.selected].iloc[0]
    assert chosen["aicc"] <= table["aicc"].min() + TIE_AICC
    tied = table[table["aicc"] <= table["aicc"].min() + TIE_AICC]
    assert chosen["steady_chi2"] <= tied["steady_chi2"].min() + STEADY_MARGIN
    assert chosen["steady_chi2"] < 9.0  # within 3 standard errors on each level


def test_lowest_degree_row_passes_over_powers_without_the_linear_term_and_breaks_ties_low():
    aicc = np.array([5.0, 10.0, 11.0, 11.5, 20.0])
    ok = np.array([False, True, True, True, True])  # row 0: e.g. q̇⁵ without q̇
    same = np.zeros((5, 3), dtype=bool)  # the same dry friction in every row
    assert lowest_degree_row(aicc, ok, np.array([5, 5, 5, 5, 1]), same) == 1  # no tie lower
    assert lowest_degree_row(aicc, ok, np.array([5, 5, 3, 3, 1]), same) == 2  # q̇³ in the tie
    assert lowest_degree_row(aicc, ok, np.array([5, 3, 5, 1, 1]), same) == 3  # lowest first
    assert lowest_degree_row(aicc, np.ones(5, bool), np.array([5, 5, 3, 3, 1]), same) == 0
    other = same.copy()
    other[2, 1] = True  # row 2 has another Stribeck term: no tie with row 1
    assert lowest_degree_row(aicc, ok, np.array([5, 5, 3, 3, 1]), other) == 3
    # undefined AICc (m ≤ k + 2) is no minimum, and no selectable row with one is no crash
    inf = np.array([np.inf, 12.0, np.nan, 13.0, 20.0])
    assert lowest_degree_row(inf, np.ones(5, bool), np.array([1, 5, 1, 3, 1]), same) == 3
    assert lowest_degree_row(inf, np.array([True, False, True, False, False]),
                             np.ones(5, int), same) in (0, 2)


def test_the_viscous_part_must_hold_the_linear_term_and_its_degree_counts_from_one():
    lib = static_library("revolute", name="full", n_viscous=5, deltas=(1.0,))
    x, tau = _coulomb_viscous_data()
    cache = GramCache(lib, x, tau)
    names = [t.name for t in lib.terms()]

    def support(*on):
        return np.isin(names, ["qdd", "sign(qd)", *on])

    assert hierarchical(cache, support()) and viscous_degree(cache, support()) == 1
    assert hierarchical(cache, support("qd", "qd^5")) and not hierarchical(cache, support("qd^5"))
    assert not hierarchical(cache, support("qd^2", "qd^3"))
    assert viscous_degree(cache, support("qd", "qd^2", "qd^3")) == 3


def test_a_sweep_selects_a_hierarchical_row_of_the_lowest_degree_within_the_tie():
    """Every row says whether it may be selected (its viscous powers come with q̇) and its
    viscous degree; the selected row may be, and no row within the tie of AICc has a lower
    degree."""
    x, tau = _coulomb_viscous_data()
    lib = static_library("revolute", name="full", n_viscous=5, deltas=(1.0, 2.0))
    t = sweep(lib, x, tau, omega_starts=(0.05, 0.2),
              keep_kinds=("inertia", "gravity_cos", "gravity_sin")).table
    powers = t[[f"qd^{p}" for p in range(2, 6)]].to_numpy() != 0
    assert (t["hierarchical"] == ((t["qd"] != 0) | ~powers.any(axis=1))).all()
    degree = np.where(powers, np.arange(2, 6), 1).max(axis=1)
    assert (t["viscous_degree"] == degree).all()
    best = t[t["selected"]].iloc[0]
    dry = [c for c in t.columns if c.startswith("sign(")]
    same = ((t[dry] != 0) == (best[dry] != 0)).all(axis=1)
    tied = t[t["hierarchical"] & same & (t["aicc"] <= best["aicc"] + TIE_AICC)]
    assert best["hierarchical"] and best["viscous_degree"] == tied["viscous_degree"].min()


def test_lower_power_variants_exchange_a_power_for_the_one_two_below():
    """q̇⁵ → q̇³ (and q̇⁴ → q̇², the same parity), each support once, the linear term kept."""
    x, tau = _coulomb_viscous_data()
    lib = static_library("revolute", name="full", n_viscous=5, deltas=(1.0,))
    cache = GramCache(lib, x, tau)
    names = [t.name for t in lib.terms()]
    start = np.isin(names, ["qdd", "cos(q)", "sin(q)", "qd", "qd^4", "qd^5", "sign(qd)"])
    fit = SR3Result(np.where(start, 1.0, 0.0), start, np.log(0.1), 1.0, 0, True)
    seen = {start.tobytes()}
    lowered = lower_power_variants(cache, fit, SR3Newton(0.0), seen)
    active = [{n for n, on in zip(names, r.support, strict=True) if on and n[:3] in ("qd", "qd^")}
              for r in lowered]
    assert sorted(map(sorted, active)) == [["qd", "qd^2", "qd^5"], ["qd", "qd^3", "qd^4"]]
    assert lower_power_variants(cache, fit, SR3Newton(0.0), seen) == []  # each support once


def test_linear_added_variants_refit_a_power_without_the_linear_term_with_it():
    """A path support with q̇⁵ and no q̇ gets a twin with q̇ (refitted, selectable); supports
    that hold q̇, or no power, get none."""
    x, tau = _coulomb_viscous_data()
    lib = static_library("revolute", name="full", n_viscous=5, deltas=(1.0,))
    cache = GramCache(lib, x, tau)
    names = [t.name for t in lib.terms()]
    rigid = ["qdd", "cos(q)", "sin(q)", "sign(qd)"]

    def result(*on):
        support = np.isin(names, [*rigid, *on])
        return SR3Result(np.where(support, 1.0, 0.0), support, np.log(0.1), 1.0, 0, True)

    path = [(0.1, result("qd^5")), (0.2, result("qd", "qd^3")), (0.3, result())]
    added = linear_added_variants(cache, path, SR3Newton(0.0))
    assert [thr for thr, _ in added] == [0.1]
    refit = added[0][1]
    assert hierarchical(cache, refit.support) and refit.support[names.index("qd")]
    assert refit.coef[names.index("qd")] == pytest.approx(1.2, rel=0.05)  # the truth's slope
