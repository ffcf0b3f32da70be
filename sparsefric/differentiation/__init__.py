"""Denoised q̇, q̈ and τ from measured angle and torque (step 0 of the pipeline).

Entry point: :func:`differentiate` (methods ``"tv"``, ``"butterworth"``, ``"savgol"``,
``"given"``); the TV method's solver is :func:`trend_filter`.

Why trend filtering by a banded primal-dual interior-point method
-----------------------------------------------------------------
The paper differentiates the angle to the acceleration with TVRegDiff (Chartrand): total
variation of q̈ plus a least-squares fit of its double integral to the data.  Written on the
signal x (q̈ = D²x/h²) this is ℓ1 trend filtering, ``min ½‖y − x‖² + λ‖D³x‖₁``.  What exists:

* pynumdiff 0.3 ``tvrdiff`` poses exactly this (its ``order=2``) to cvxpy with cumulative-sum
  variables (a dense-ish integration operator): general conic solvers take seconds for 10,000
  samples and stop at modest accuracy.
* pynumdiff ``iterative_velocity`` (Chartrand's lagged diffusivity) only does the first
  derivative, with conjugate gradients on an ill-conditioned operator.
* The specialised ADMM of Ramdas & Tibshirani (2016) needs an O(n) fused-lasso prox
  (a compiled loop) and hundreds of iterations to converge tightly.
* The primal-dual interior point of Kim, Koh, Boyd & Gorinevsky (2009) needs 20–50 Newton
  steps, each a banded SPD solve with DDᵀ + diag (bandwidth 3), O(n) time and memory, and a
  duality-gap certificate of accuracy (‖x − x*‖² ≤ 2·gap).

We use the last, compiled with numba (``_ipm.py``: the banded LDLᵀ factorisation, solves, line
search and gap in four fused loops per Newton step), with the signal rescaled by its noise level
so that the conditioning and tolerances do not depend on units. Its speed against pynumdiff's own
problem solved to the same accuracy is measured by ``benchmarks/bench_differentiation.py``
(``docs/DESIGN.md`` §16).
"""

from sparsefric.differentiation.derivatives import (
    METHODS,
    Derivatives,
    DifferentiationError,
    differentiate,
    held_average,
    sample_average,
    select_tv_weight,
    spaced_windows,
    torque_average,
    tv_fit,
)
from sparsefric.differentiation.trend_filter import TrendFilterResult, noise_std, trend_filter

__all__ = [
    "METHODS",
    "Derivatives",
    "DifferentiationError",
    "TrendFilterResult",
    "differentiate",
    "held_average",
    "noise_std",
    "sample_average",
    "select_tv_weight",
    "spaced_windows",
    "torque_average",
    "trend_filter",
    "tv_fit",
]
