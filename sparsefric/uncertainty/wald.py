r"""Whether the data determine a group of a model's coefficients: a HAC Wald test.

For the coefficients ĉ of k terms of the final model, with Cov(ĉ) their block of the sandwich
covariance of the fast intervals (:func:`~sparsefric.uncertainty.fast.fast_uncertainty`: the
simulated torque linearised in every parameter, Newey–West long-run scores),

.. math:: W = \hat c^\top \operatorname{Cov}(\hat c)^{-1} \hat c .

Under c = 0, W is χ²_k in the limit of a short lag window. The long windows these residuals
need leave few effective blocks, which the fixed-b critical value of the intervals accounts
for in one dimension (:func:`~sparsefric.hac.critical_value`); here the χ²_k quantile is scaled
by the same ratio squared, (c(b)/c(0))², which is exact for k = 1 and an approximation above.

A test of the group as a whole sees what a test per coefficient cannot: on data/example the
coefficients of q̇³ and q̇⁵ each have an interval that holds 0 (over one speed range the two
columns are nearly one), while their sum, the truth's 0.8 q̇³, is determined (W ≈ 1e4 against
a critical value of 6–9).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# scipy.special, not scipy.stats: the χ² quantile alone, without ~0.3 s of start-up per command
from scipy.special import chdtri, ndtri

from sparsefric.hac import critical_value, sandwich
from sparsefric.model import JointModel
from sparsefric.preprocessing import Prepared
from sparsefric.uncertainty.jacobian import Records, torque_jacobian
from sparsefric.uncertainty.parameters import parameter_names, parameter_values

__all__ = ["wald_test"]


def wald_test(model: JointModel, data: Sequence[Prepared], names: Sequence[str],
              level: float = 0.95) -> tuple[float, float]:
    """W of the hypothesis that the parameters ``names`` of ``model`` are all 0, and its
    critical value at ``level``.

    Parameters
    ----------
    model : JointModel
        The identified model (its structure and exponents held fixed).
    data : sequence of Prepared
        The prepared records; the residuals are of the measured torque [N·m | N].
    names : sequence of str
        Parameters of :func:`parameter_names` that the torque is linear in (e.g.
        ``viscous:3``).
    level : float
        1 − the size of the test [-].

    Returns
    -------
    W, critical : float
        W ≥ ``critical`` rejects the hypothesis: the data determine the group. A singular block
        of the covariance is inverted in the least-squares sense (its null directions add 0).
    """
    every = parameter_names(model)
    rec = Records.of(data, "measured")
    tau_hat, J = torque_jacobian(model, rec, every)
    cov, lags = sandwich(J, rec.tau - tau_hat, rec.bounds)
    index = [every.index(n) for n in names]
    values = parameter_values(model, names)
    w = float(values @ np.linalg.pinv(cov[np.ix_(index, index)]) @ values)
    scale = critical_value(level, sum(lags) / len(rec)) / ndtri(0.5 + 0.5 * level)
    return w, float(chdtri(len(index), 1.0 - level) * scale ** 2)  # χ²_k quantile at level
