"""HAC standard errors: the Newey–West sum, the correlation time and lag window, the sandwich
covariance and the fixed-b critical values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sparsefric.hac import (
    bandwidth,
    correlation_time,
    critical_value,
    hac_covariance,
    newey_west,
    paired_gain,
    sandwich,
)

from .noise import ar1


def test_newey_west_is_the_bartlett_weighted_sum_of_lagged_products():
    rng = np.random.default_rng(0)
    u = rng.normal(size=(40, 3))
    lag = 4
    brute = sum((1 - abs(k) / (lag + 1)) * sum(np.outer(u[t], u[t - k])
                                                for t in range(max(k, 0), 40 + min(k, 0)))
                for k in range(-lag, lag + 1))
    assert np.allclose(newey_west(u, lag), brute)
    assert np.allclose(newey_west(u, 0), u.T @ u)


def test_correlation_time_of_white_and_ar1_noise():
    rng = np.random.default_rng(1)
    assert correlation_time(rng.normal(size=20_000)) == pytest.approx(1.0, abs=0.15)
    rho = 0.9  # τ = (1 + ρ)/(1 − ρ) = 19
    assert correlation_time(ar1(rng, 50_000, rho, 1.0)) == pytest.approx(19.0, rel=0.2)
    both = correlation_time(np.column_stack([rng.normal(size=5000), np.ones(5000)]))
    assert both.shape == (2,) and both[1] == 1.0



def test_bandwidth_of_a_long_record_from_windows():
    """A 400k-sample record's lag window from three 100k-sample windows: within 10 % of the
    whole record's for AR(1) scores (τ = 19), and the same where the record is short."""
    rng = np.random.default_rng(3)
    n = 400_000
    r = ar1(rng, n, 0.9, 1.0)
    u = np.column_stack([r * rng.normal(1.0, 0.1, n), ar1(rng, n, 0.5, 1.0)])
    tau = float(np.max(correlation_time(np.column_stack([r, u]))))
    (lag,) = bandwidth(r, u, [(0, n)])
    assert lag == pytest.approx(5 * tau, rel=0.1)
    short = slice(0, 80_000)
    (whole,) = bandwidth(r[short], u[short], [(0, 80_000)])
    assert whole == math.ceil(5 * float(np.max(correlation_time(np.column_stack([r, u])[short]))))

def test_hac_intervals_cover_under_autocorrelated_errors_where_ols_does_not():
    """Linear regression with AR(1) errors (ρ = 0.97): HAC 95 % intervals cover ≈ 95 %."""
    rng = np.random.default_rng(2)
    n, beta = 3000, np.array([1.0, -0.5])
    t = np.linspace(0, 30, n)
    X = np.column_stack([np.sin(t), np.sign(np.sin(0.7 * t))])
    hac, ols = [], []
    for _ in range(150):
        r = ar1(rng, n, 0.97, 0.3)
        b = np.linalg.lstsq(X, X @ beta + r, rcond=None)[0]
        res = X @ beta + r - X @ b
        cov, lags = sandwich(X, res)
        hac.append(np.abs(b - beta) <= critical_value(0.95, lags[0] / n) * np.sqrt(np.diag(cov)))
        assert np.allclose(cov, hac_covariance(X, res, [(0, n)],
                                               bandwidth(res, X * res[:, None], [(0, n)])))
        plain = res @ res / (n - 2) * np.linalg.inv(X.T @ X)
        ols.append(np.abs(b - beta) <= 1.96 * np.sqrt(np.diag(plain)))
    assert np.all(np.mean(hac, axis=0) >= 0.85)
    assert np.all(np.mean(ols, axis=0) <= 0.6)


# ---------------------------------------------------------------------------- parameters


def test_fixed_b_critical_values():
    assert critical_value(0.95, 0.0) == pytest.approx(1.95996, abs=1e-4)
    assert critical_value(0.95, 0.25) == pytest.approx(2.72, abs=0.01)  # simulated: 2.69
    assert critical_value(0.90, 0.1) == pytest.approx(1.866, abs=0.01)
    assert critical_value(0.95, 0.1) < critical_value(0.95, 0.2) < critical_value(0.99, 0.2)


def test_paired_gain_counts_correlated_residuals_as_fewer_samples():
    """A prediction 0.1 % closer with an autocorrelated error of its own: as independent
    samples the gain would be over 3 standard errors, but with the correlation time of the loss
    differential (~60 samples) it is under 1. Where the better prediction
    gains a tenth of its squared error everywhere, the statistic stays large; identical
    residuals give 0, and the sign says which one predicts better."""
    rng = np.random.default_rng(3)
    n = 20_000
    before = ar1(rng, n, 0.98, 1.0)
    after = 0.999 * before + 0.02 * ar1(rng, n, 0.98, 1.0)
    d = before**2 - after**2
    naive = d.mean() / math.sqrt(d.var() / n)
    assert naive > 3 and 0 < paired_gain(before, after) < 1.0
    white = rng.normal(size=n)
    assert paired_gain(white, math.sqrt(0.9) * white) > 20
    assert paired_gain(white, white) == 0.0
    assert paired_gain(math.sqrt(0.9) * white, white) < -20
