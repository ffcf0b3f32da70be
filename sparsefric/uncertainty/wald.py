r"""Whether the data determine groups of a model's coefficients: HAC Wald tests.

For the coefficients ĉ of k terms of the final model, with Cov(ĉ) their block of the sandwich
covariance of the fast intervals (:func:`~sparsefric.uncertainty.fast.fast_uncertainty`: the
simulated torque linearised in every parameter, Newey–West long-run scores),

.. math:: W = \hat c^\top \operatorname{Cov}(\hat c)^{-1} \hat c .

Under c = 0, W is χ²_k in the limit of a short lag window. The long windows these residuals
need leave few effective blocks, which the fixed-b critical value of the intervals accounts
for in one dimension (:func:`~sparsefric.hac.critical_value`); here the χ²_k quantile is scaled
by the same ratio squared, (c(b)/c(0))² (:func:`~sparsefric.hac.fixed_b_ratio`), which is exact
for k = 1 and an approximation above.

A test of the group as a whole sees what a test per coefficient cannot: on data/example the
coefficients of q̇³ and q̇⁵ each have an interval that holds 0 (over one speed range the two
columns are nearly one), while their sum, the truth's 0.8 q̇³, is determined (W ≈ 1e4 against
a critical value of 6–9).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# scipy.special, not scipy.stats: the χ² quantile alone, without ~0.3 s of start-up per command
from scipy.special import chdtri

from sparsefric.hac import fixed_b_ratio, sandwich
from sparsefric.model import JointModel
from sparsefric.preprocessing import Prepared
from sparsefric.uncertainty.jacobian import Records, torque_jacobian
from sparsefric.uncertainty.parameters import parameter_names, parameter_values

__all__ = ["wald_tests"]


def wald_tests(model: JointModel, data: Sequence[Prepared], groups: Sequence[Sequence[str]],
               level: float) -> list[tuple[float, float]]:
    """W of the hypothesis that the parameters of each group are all 0, and its critical value
    at ``level``: one linearisation of ``model`` along ``data`` for every group.

    Parameters
    ----------
    model : JointModel
        The identified model (its structure and exponents held fixed).
    data : sequence of Prepared
        The prepared records; the residuals are of the measured torque [N·m | N].
    groups : sequence of sequences of str
        Parameters of :func:`parameter_names` that the torque is linear in (e.g.
        ``viscous:3``), a group each.
    level : float
        1 − the size of the tests [-].

    Returns
    -------
    list of (W, critical)
        Per group; W ≥ ``critical`` rejects the hypothesis: the data determine the group. W is
        computed on the correlations (each coefficient over its standard deviation), a singular
        block inverted in the least-squares sense; a coefficient ≠ 0 whose variance is 0 or not
        finite counts as determined (W = ∞).

    Raises
    ------
    ValueError
        ``data`` hold no sample, or a name is not a parameter of ``model``.
    """
    every = parameter_names(model)
    if unknown := [n for group in groups for n in group if n not in every]:
        raise ValueError(f"{', '.join(unknown)}: not parameters of the model ({', '.join(every)})")
    rec = Records.of(data, "measured") if data else None
    if rec is None or not len(rec):
        raise ValueError("the Wald tests need prepared records with samples")
    tau_hat, J = torque_jacobian(model, rec, every)
    cov, lags = sandwich(J, rec.tau - tau_hat, rec.bounds)
    scale = fixed_b_ratio(level, sum(lags) / len(rec))
    out = []
    for group in groups:
        index = [every.index(n) for n in group]
        w = _statistic(parameter_values(model, group), cov[np.ix_(index, index)])
        out.append((w, float(chdtri(len(index), 1.0 - level) * scale ** 2)))  # χ²_k quantile
    return out


def _statistic(values: np.ndarray, cov: np.ndarray) -> float:
    """cᵀ Cov⁻¹ c, on the correlation scale; ∞ where a coefficient ≠ 0 has no finite, positive
    variance (a noise-free fit determines it exactly)."""
    sd = np.sqrt(np.diag(cov))
    if not (np.all(np.isfinite(cov)) and np.all(sd > 0)):
        return 0.0 if not np.any(values) else float("inf")
    z = values / sd
    return float(z @ np.linalg.pinv(cov / np.outer(sd, sd)) @ z)
