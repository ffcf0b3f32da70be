r"""How sure is an identified model: intervals of its parameters, of derived quantities and of the
static curve, and how often each candidate term survives a resampling of the data.

Two methods, both returning :class:`ParameterUncertainty` (whose :meth:`~ParameterUncertainty.
to_dict` is the ``uncertainty`` section of ``model.json``):

``fast`` (:func:`fast_uncertainty`, the file's method ``asymptotic``)
    Linearise the final model's simulated torque τ̂(θ) (bristle state z integrated along every
    record) in all its parameters θ and take a heteroscedasticity- and autocorrelation-consistent
    (HAC) sandwich covariance of the least-squares prediction-error estimator::

        r_t = τ_t − τ̂_t(θ̂),    J_t = ∂τ̂_t/∂θ,    u_t = J_t r_t
        B   = Σ_t J_tᵀ J_t
        S   = Σ_records Σ_{|l|≤L} (1 − |l|/(L+1)) Σ_t u_t u_{t−l}ᵀ         (Newey–West)
        Cov(θ̂) = B⁻¹ S B⁻¹

    Torque residuals of this pipeline are strongly autocorrelated (the smoothed derivatives and
    the model error move slowly), so the plain least-squares covariance σ̂² B⁻¹ is far too
    narrow; the lag window L of each record comes from the integrated autocorrelation time of
    its residuals and scores (:func:`hac.bandwidth`), and the intervals use the fixed-b critical
    value of the Bartlett kernel at b = ΣL/n (:func:`critical_value`), which accounts for the few
    effective blocks a long window leaves. Ω_s and σ0 are linearised in their logarithm;
    derived quantities (break-away torque, g(0), the static curve) by the delta method. The
    covariance is that of the prediction-error optimum θ* with the selected structure fixed;
    the pipeline's estimate θ̂ lies a Gauss–Newton step away from it (its iterations stop at a
    tolerance and fit subsets of the samples), and every interval reaches from θ̂ to θ* before
    adding ± c·sd, and to the optima of the denoised torque and of a lighter-smoothed angle
    (what the preprocessing moves) and of z integrated in parts (what the model's sampling of
    the bristle moves). The structures the selection's own sweep supports about as
    well (Akaike confidence set) widen f_c and the break-away (:func:`structure_shifts`), and
    a LuGre model's inertia reaches step 1's with the static friction (:func:`static_estimates`),
    and σ1 reaches below by the torque timing's bias (:func:`timing_bias`);
    **the rest of the structure selection's uncertainty is not included**, nor biases of the
    model class. Cost: ≈ 40 evaluations of the friction along the data and one TV solve per
    record, 0.3 s on data/example.

``bootstrap`` (:func:`bootstrap_uncertainty`)
    A moving-block bootstrap of the prepared records: each training and validation record is cut
    inside its constant-direction passes (where the joint slides steadily, so a block starts
    with the bristle at its steady state, the default start of
    :func:`sparsefric.lugre.integrate_z`) into pieces longer than the residual correlation,
    circular blocks of pieces are drawn with replacement within each record (records are
    strata: the speed design is kept) and the whole identification — step-1 selection by AICc,
    LuGre iterations, refinement — is rerun on each resample, warm-started at the estimate, on
    a process pool, seeded. Percentile intervals (widened to their copy centred by a
    reference refit of all pieces once, and to the fast method's intervals), and the inclusion
    frequency of every candidate term.
    The derivatives of the first fit are reused (``differentiation="given"``), so the
    differentiation's own variability is not resampled. Cost: R + 1 identifications on the
    available cores.

Both methods condition on the recorded excitation; neither covers a model error the data cannot
reveal.

The package: :mod:`.parameters` (names, values, linearisation coordinates, derived quantities),
:mod:`.result` (:class:`ParameterUncertainty`, the validity range, the report's interval table),
:mod:`.jacobian` (the simulated torque and its Jacobian), :mod:`.fast` (the fast method),
:mod:`.shifts` (moves of the intervals the covariance does not see), :mod:`.hidden` (the
largest rise below the slowest steady speed the records' transients leave possible),
:mod:`.bootstrap` and :mod:`.inclusion` (the bootstrap and its term inclusion frequencies),
:mod:`.findings` (the warnings the intervals give) and :mod:`.estimate` (the entry points).
"""

from sparsefric.uncertainty.bootstrap import bootstrap_uncertainty
from sparsefric.uncertainty.estimate import estimate_uncertainty, with_uncertainty
from sparsefric.uncertainty.fast import fast_uncertainty
from sparsefric.uncertainty.findings import uncertainty_findings
from sparsefric.uncertainty.inclusion import path_with_inclusion, stribeck_family, viscous_family
from sparsefric.uncertainty.result import (
    METHODS,
    ParameterUncertainty,
    interval_table,
    validity_range,
)

__all__ = [
    "bootstrap_uncertainty",
    "estimate_uncertainty",
    "fast_uncertainty",
    "interval_table",
    "METHODS",
    "ParameterUncertainty",
    "path_with_inclusion",
    "stribeck_family",
    "uncertainty_findings",
    "validity_range",
    "viscous_family",
    "with_uncertainty",
]
