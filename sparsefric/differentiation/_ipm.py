"""Compiled primal-dual interior-point iterations for ℓ1 trend filtering (see :mod:`.trend_filter`).

One Newton step of the dual problem is a solve with the banded SPD matrix ``DDᵀ + diag(d)``
(m sub-diagonals).  With LAPACK's banded Cholesky and numpy the factorisation was cheap but the
rest of a step was some thirty vector operations, each a pass over memory with a temporary.
Here a step is four fused loops compiled by numba: (i) the banded LDLᵀ factorisation of the
Toeplitz band of ``DDᵀ`` plus the diagonal, fused with the forward substitution; (ii) the back
substitution fused with the largest feasible step; (iii) the residual for the backtracking line
search; (iv) the update fused with the duality gap of the new point.  z and dz are stored with
m zeros of padding on each side so that the band products need no boundary tests; the
reciprocals 1/(±z − λ) are computed once per step; the step bound is a branch-free running
maximum.  Sequential, no ``fastmath``: results are reproducible bit for bit; the iterates are
those of a numpy/LAPACK implementation up to rounding.
"""

from __future__ import annotations

from math import comb

import numba
import numpy as np

__all__ = ["adjoint", "ddt_band", "diff_coeffs", "pdip"]

#: Status codes returned by :func:`pdip`.
CONVERGED, MAX_ITER, NOT_POSITIVE = 0, 1, 2


def diff_coeffs(m: int) -> np.ndarray:
    """Coefficients ``c_k = (−1)^{m−k}·C(m, k)``, k = 0..m, of ``(D⁽ᵐ⁾x)_i = Σ c_k x_{i+k}``."""
    return np.array([(-1) ** (m - k) * comb(m, k) for k in range(m + 1)], dtype=float)


def ddt_band(m: int) -> np.ndarray:
    """Lag-j entries ``(−1)ʲ·C(2m, m+j)``, j = 0..m, of the symmetric Toeplitz ``DDᵀ``."""
    return np.array([(-1) ** j * comb(2 * m, m + j) for j in range(m + 1)], dtype=float)


@numba.njit(cache=True)
def _diff(y: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``D y`` (length len(y) − m)."""
    m = c.size - 1
    nd = y.size - m
    out = np.zeros(nd)
    for i in range(nd):
        s = 0.0
        for k in range(m + 1):
            s += c[k] * y[i + k]
        out[i] = s
    return out


@numba.njit(cache=True)
def adjoint(z: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``Dᵀz`` (length len(z) + m)."""
    m = c.size - 1
    nd = z.size
    out = np.zeros(nd + m)
    for j in range(nd + m):
        s = 0.0
        for k in range(max(0, j - nd + 1), min(m, j) + 1):
            s += c[k] * z[j - k]
        out[j] = s
    return out


@numba.njit(cache=True)
def _gap(z: np.ndarray, Dy: np.ndarray, DDTz: np.ndarray, c: np.ndarray, lam: float) -> float:
    """Duality gap: primal objective at x = y − Dᵀz minus dual objective at z."""
    m = c.size - 1
    nd = z.size
    sq = 0.0
    l1 = 0.0
    lin = 0.0
    for i in range(nd):
        l1 += abs(Dy[i] - DDTz[i])
        lin += Dy[i] * z[i]
    for j in range(nd + m):  # ‖Dᵀz‖²
        s = 0.0
        for k in range(max(0, j - nd + 1), min(m, j) + 1):
            s += c[k] * z[j - k]
        sq += s * s
    return (0.5 * sq + lam * l1) - (-0.5 * sq + lin)


@numba.njit(cache=True)
def _factor_forward(band, z, mu1, mu2, DDTz, Dy, lam: float, inv_t: float, F, w, g1, g2) -> float:
    """Factor the Newton matrix ``DDᵀ + diag(μ₁/(λ−z) + μ₂/(λ+z))`` = LDLᵀ and solve
    ``L w = r`` (r the Newton right-hand side), in one forward pass.

    ``F[i, 0] = 1/D_i`` and ``F[i, k] = L_{i,i−k}·D_{i−k}`` (k = 1..m): one row per sample, so
    the pass streams few bytes.  ``g1 = 1/(z − λ)`` and ``g2 = 1/(−z − λ)`` are kept for the
    later passes.  Returns the norm of the perturbed KKT residual at the current point, or −1 if
    the matrix is not numerically positive definite or z has been rounded onto the box edge.
    """
    m = band.size - 1
    res2 = 0.0
    for i in range(z.size):
        f1 = z[i] - lam
        f2 = -z[i] - lam
        if not (f1 < 0.0 and f2 < 0.0):
            # z rounded onto the box edge: λ − |z| fell below the resolution of λ
            return -1.0
        rd = DDTz[i] - Dy[i] + mu1[i] - mu2[i]
        c1 = -mu1[i] * f1 - inv_t
        c2 = -mu2[i] * f2 - inv_t
        res2 += rd * rd + c1 * c1 + c2 * c2
        h1 = 1.0 / f1
        h2 = 1.0 / f2
        g1[i] = h1
        g2[i] = h2
        ri = -DDTz[i] + Dy[i] + inv_t * (h1 - h2)
        diag = band[0] - mu1[i] * h1 - mu2[i] * h2
        kmax = min(i, m)
        for k in range(kmax, 0, -1):  # row i, column j = i − k, in increasing j
            j = i - k
            s = band[k]
            for q in range(i - kmax, j):
                s -= F[i, i - q] * F[j, j - q] * F[q, 0]
            F[i, k] = s
            lij = s * F[j, 0]
            diag -= lij * s
            ri -= lij * w[j]
        if not diag > 0.0:
            return -1.0
        F[i, 0] = 1.0 / diag
        w[i] = ri
    return np.sqrt(res2)


@numba.njit(cache=True)
def _dmu(mu1: float, mu2: float, dz: float, g1: float, g2: float, inv_t: float):
    """Newton steps of the multipliers μ₁, μ₂ given the step dz of z (g = 1/f, see
    :func:`_factor_forward`)."""
    dmu1 = -(mu1 + (inv_t + dz * mu1) * g1)
    dmu2 = -(mu2 + (inv_t - dz * mu2) * g2)
    return dmu1, dmu2


@numba.njit(cache=True)
def _backward_step(z, mu1, mu2, lam: float, inv_t: float, F, dz, g1, g2) -> float:
    """Back substitution ``DLᵀ dz = w`` in place (``dz`` holds w on entry), and the largest step
    ≤ 1 (times 0.99) keeping μ₁, μ₂ > 0 and −λ < z < λ, in one backward pass.

    The step bound is ``0.99/ρ`` with ρ the largest ratio −dμ/μ or dz/(distance to the bound):
    a running maximum without data-dependent branches (which the CPU would mispredict).
    """
    m = F.shape[1] - 1
    nd = z.size
    rho = 0.0
    for i in range(nd - 1, -1, -1):
        s = dz[i]
        for k in range(1, min(m, nd - 1 - i) + 1):
            s -= F[i + k, k] * dz[i + k]
        s *= F[i, 0]
        dz[i] = s
        # −dμ₁/μ₁ = 1 + (1/(tμ₁) + dz)·g1, likewise μ₂; dz/(λ − z) = −dz·g1, −dz/(λ + z) = dz·g2
        r1 = 1.0 + (inv_t / mu1[i] + s) * g1[i]
        r2 = 1.0 + (inv_t / mu2[i] - s) * g2[i]
        rho = max(rho, max(max(r1, r2), max(-s * g1[i], s * g2[i])))
    return min(1.0, 0.99 / rho) if rho > 0.0 else 1.0


@numba.njit(cache=True)
def _ddt_padded(vp: np.ndarray, q: int, band: np.ndarray) -> float:
    """``(DDᵀv)_q`` with ``vp`` = v padded by m zeros on each side (no boundary tests)."""
    m = band.size - 1
    s = band[0] * vp[q + m]
    for j in range(1, m + 1):
        s += band[j] * (vp[q + m - j] + vp[q + m + j])
    return s


@numba.njit(cache=True)
def _residual(
    band, z, mu1, mu2, DDTz, dzp, Dy, g1, g2, lam: float, inv_t: float, step: float
) -> float:
    """Norm of the perturbed KKT residual at (z, μ₁, μ₂) + step·(dz, dμ₁, dμ₂); ``dzp`` is dz
    padded by m zeros on each side."""
    m = band.size - 1
    acc = 0.0
    for i in range(z.size):
        dzi = dzp[i + m]
        dmu1, dmu2 = _dmu(mu1[i], mu2[i], dzi, g1[i], g2[i], inv_t)
        nz = z[i] + step * dzi
        n1 = mu1[i] + step * dmu1
        n2 = mu2[i] + step * dmu2
        rd = DDTz[i] + step * _ddt_padded(dzp, i, band) - Dy[i] + n1 - n2
        c1 = -n1 * (nz - lam) - inv_t
        c2 = -n2 * (-nz - lam) - inv_t
        acc += rd * rd + c1 * c1 + c2 * c2
    return np.sqrt(acc)


@numba.njit(cache=True)
def _update(
    band, c, zp, mu1, mu2, DDTz, dzp, Dy, g1, g2, lam: float, inv_t: float, step: float
) -> float:
    """Take the step in place and return the new duality gap (as :func:`_gap`); ``zp`` and
    ``dzp`` are z and dz padded by m zeros on each side."""
    m = c.size - 1
    nd = Dy.size
    sq = 0.0
    l1 = 0.0
    lin = 0.0
    for i in range(nd):
        dzi = dzp[i + m]
        dmu1, dmu2 = _dmu(mu1[i], mu2[i], dzi, g1[i], g2[i], inv_t)
        zi = zp[i + m] + step * dzi
        zp[i + m] = zi
        mu1[i] += step * dmu1
        mu2[i] += step * dmu2
        DDTz[i] += step * _ddt_padded(dzp, i, band)
        l1 += abs(Dy[i] - DDTz[i])
        lin += Dy[i] * zi
        s = 0.0
        for k in range(m + 1):  # (Dᵀz)_i, from updated z only
            s += c[k] * zp[i + m - k]
        sq += s * s
    for j in range(nd, nd + m):
        s = 0.0
        for k in range(m + 1):
            s += c[k] * zp[j + m - k]
        sq += s * s
    return (0.5 * sq + lam * l1) - (-0.5 * sq + lin)


@numba.njit(cache=True, nogil=True)
def pdip(y: np.ndarray, lam: float, c: np.ndarray, band: np.ndarray, tol: float, max_iter: int):
    """Primal-dual interior point (l1_tf, Kim et al. 2009) on the dual box QP.

    Returns
    -------
    z : ndarray
        Dual variable ν (length n − m).
    gap : float
        Final duality gap.
    it : int
        Newton steps taken.
    status : int
        :data:`CONVERGED`, :data:`MAX_ITER` or :data:`NOT_POSITIVE` (factorisation breakdown).
    """
    m = c.size - 1
    nd = y.size - m
    alpha, beta, mu_t = 0.01, 0.5, 2.0
    Dy = _diff(y, c)
    zp = np.zeros(nd + 2 * m)  # z and dz padded with m zeros on each side
    z = zp[m : m + nd]
    mu1 = np.ones(nd)
    mu2 = np.ones(nd)
    DDTz = np.zeros(nd)
    dzp = np.zeros(nd + 2 * m)
    dz = dzp[m : m + nd]
    F = np.zeros((nd, m + 1))
    g1 = np.empty(nd)
    g2 = np.empty(nd)
    t = 1e-10
    step = np.inf
    gap = _gap(z, Dy, DDTz, c, lam)
    status = MAX_ITER
    it = 0
    while it < max_iter:
        it += 1
        if gap <= tol:
            status = CONVERGED
            break
        if step >= 0.2:
            t = max(2.0 * nd * mu_t / gap, 1.2 * t)
        inv_t = 1.0 / t
        res_norm = _factor_forward(band, z, mu1, mu2, DDTz, Dy, lam, inv_t, F, dz, g1, g2)
        if res_norm < 0.0:
            status = NOT_POSITIVE
            break
        step = _backward_step(z, mu1, mu2, lam, inv_t, F, dz, g1, g2)
        for _ in range(30):  # backtracking on the residual norm
            new_res = _residual(band, z, mu1, mu2, DDTz, dzp, Dy, g1, g2, lam, inv_t, step)
            if new_res <= (1.0 - alpha * step) * res_norm:
                break
            step *= beta
        gap = _update(band, c, zp, mu1, mu2, DDTz, dzp, Dy, g1, g2, lam, inv_t, step)
    return z.copy(), gap, it, status
