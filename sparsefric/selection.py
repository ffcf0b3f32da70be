r"""Model selection: an SR3 sweep over λ, scored by the corrected AIC on validation data.

For every λ of a log grid (ranged from the data) SR3–Newton runs from several starting Ω_s and keeps
the lowest training error; each support of that path with a viscous power ≥ 2 also enters with
its viscous part cut to c₁q̇ (``DESIGN.md`` §30), and the best support with each Stribeck
exponent exchanged for another (§36) or, if it has no Stribeck term, with each one added (§56);
where the choice has a Stribeck term and no Coulomb level, that support with the Coulomb level
added, Ω_s searched over its whole range (§114).
Each model is scored on the validation samples, concatenated and cut into m equal parts, each
part one observation (Mangan et al. 2017; ALGORITHM.md §2)::

    RSS  = Σ_parts Σ_samples |τ − τ̂|
    AICc = 2k + m ln(RSS/m) + 2(k+1)(k+2)/(m − k − 2)

with k the number of active terms. The selected model is the AICc minimum of the models that
may be selected (a viscous power only with q̇: :func:`hierarchical`), or of those it does not
set apart (within :data:`TIE_AICC`) and that have its other terms, the one of the lowest
viscous degree (:func:`lowest_degree_row`); given the constant-velocity friction levels of the
records (:class:`SteadyLevels`), of the models AICc does not set apart, the one whose static
curve meets those levels clearly best (:func:`steady_tie_break`). AIC_r = AICc − the selected
model's.

Choice of m: the paper uses m = 10, for which the correction term is undefined or negative as
soon as k ≥ 8 (the paper's own selected model has k = 9, where it equals −220 and rewards the
larger model). We use m = max(10, 4(p + 2)) for a library of p candidates, so that AICc is defined
and penalising for every candidate size; ``aic_parts=10`` with ``aic_domain="literal"`` reproduces
the paper's choice (:class:`SelectionRule`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sparsefric.errors import SparsefricError
from sparsefric.feature_library import FeatureLibrary, SignalLibrary
from sparsefric.optimizers.sr3 import GramCache, SR3Newton, SR3Result, l0_weight
from sparsefric.signals import Signals


def default_parts(n_candidates: int) -> int:
    """m = max(10, 4(p + 2)) observations for AICc."""
    return max(10, 4 * (n_candidates + 2))


def aicc(k: int, rss: float, m: int, literal: bool = False) -> float:
    """Corrected AIC of a model with k terms.

    Where m − k − 2 ≤ 0 the correction 2(k+1)(k+2)/(m−k−2) is no penalty: by default the model
    then scores +inf (never selected). ``literal`` evaluates eq. 22 of the paper as printed —
    negative, i.e. a reward, for k > m − 2 (largest at k = m − 1) — and +inf only at k = m − 2,
    where it divides by zero (``DESIGN.md`` §27).
    """
    if m - k - 2 == 0 or (m - k - 2 < 0 and not literal):
        return float("inf")
    return 2 * k + m * np.log(max(rss, 1e-300) / m) + 2 * (k + 1) * (k + 2) / (m - k - 2)


@dataclass(frozen=True)
class SelectionRule:
    """How a sweep thresholds and scores.

    Attributes
    ----------
    parts : int, optional
        m of AICc; default :func:`default_parts`.
    literal : bool
        Evaluate AICc outside its domain as printed (:func:`aicc`).
    scaled : bool
        Threshold coefficients of unit-RMS columns (True), or physical coefficients (the paper).
    omega_step : str
        How Ω_s moves between SR3 solves (:data:`~sparsefric.options.OMEGA_STEPS`).
    """

    parts: int | None = None
    literal: bool = False
    scaled: bool = True
    omega_step: str = "newton"


#: sparsefric's rule: scaled columns, m = :func:`default_parts`, AICc within its domain.
DEFAULT_RULE = SelectionRule()


def absolute_rss(residual: np.ndarray, m: int) -> float:
    """Σ over m equal parts of Σ |τ − τ̂| (the samples that do not fill a part are dropped)."""
    n = (residual.shape[0] // m) * m
    return float(np.abs(residual[:n]).reshape(m, -1).sum())


def threshold_grid(tau: np.ndarray, n: int = 20) -> np.ndarray:
    """Log grid of thresholds [N·m RMS], 10⁻³·RMS(τ) to 2·RMS(τ).

    A scaled coefficient is the RMS torque its column contributes, so no term of a sensible model
    exceeds a few RMS(τ) and none below 10⁻³ of it is worth a parameter.
    """
    tau_rms = float(np.sqrt(np.mean(np.square(tau))))
    if not tau_rms > 0:
        raise SparsefricError("the torque is zero in every sample: nothing to identify")
    return np.geomspace(1e-3 * tau_rms, 2.0 * tau_rms, n)


@dataclass
class SweepResult:
    """The λ sweep: one row per λ and the selected model.

    Attributes
    ----------
    table : DataFrame
        Columns ``threshold`` [N·m], ``lambda``, ``n_active``, ``n_eliminated``, ``omega_s``
        [rad/s], ``train_error`` [N·m], ``rss`` [N·m], ``aicc``, ``aic_r`` (AICc − the selected
        model's), ``steady_chi2`` (where steady levels were given: the χ² of the static curve
        against them), ``selected``, ``variant`` (empty on the λ path, :data:`LINEAR_VISCOUS`
        for a path support with its viscous part cut to q̇, listed at that support's
        threshold, :data:`EXPONENT` for the best support with a Stribeck exponent exchanged,
        :data:`LINEAR_EXPONENT` with its viscous part cut to q̇ and an exponent exchanged,
        :data:`ADDED` with a Stribeck term added, :data:`VISCOUS_ADDED` with the linear viscous
        term added, at its threshold, :data:`LINEAR_ADDED` for a path support with c₁q̇
        added to its powers, :data:`LOWER_POWER` for the best support with a viscous power
        lowered by 2), ``hierarchical`` (whether the row may be selected:
        :func:`hierarchical`), ``viscous_degree`` (:func:`viscous_degree`, which breaks ties
        of AICc: :func:`lowest_degree_row`), then one column per candidate term with its
        coefficient (0 if eliminated), and last ``aicc_choice`` (the row AICc and the
        viscous degree chose, before the steady levels judged: :func:`steady_tie_break`).
    results : list of SR3Result
        The solution for every λ, in table order.
    selected : int
        Row of the selected model.
    parts : int
        m, the number of observations.
    validation_source : str
        The data AICc scored: ``"training"`` (no validation data), ``"validation"`` or
        ``"training + validation"``; "validation" reads "held-out (n blocks, p % of the
        samples)" where blocks of the training records stood in for validation data.
    kinds : tuple of str
        The kind of each candidate term (:attr:`~sparsefric.feature_library.Term.kind`), in
        the order of the coefficients of ``results``.
    """

    table: pd.DataFrame
    results: list[SR3Result]
    selected: int
    parts: int
    validation_source: str
    kinds: tuple[str, ...] = ()

    @property
    def best(self) -> SR3Result:
        """The selected solution."""
        return self.results[self.selected]


@dataclass(frozen=True)
class SteadyLevels:
    """Constant-velocity friction levels the static curve of a selected model should meet.

    Attributes
    ----------
    velocity : ndarray
        Steady sliding speeds [rad/s | m/s], > 0.
    friction : ndarray
        The friction measured there [N·m | N], the mean of both directions
        (:func:`~sparsefric.validation.cve_points`).
    error : ndarray
        Its standard error [N·m | N], systematic floor included
        (:func:`~sparsefric.steps.checks.steady_levels`).
    distinct : int
        The number of distinct speeds among them (a level recorded twice counts once).
    """

    velocity: np.ndarray
    friction: np.ndarray
    error: np.ndarray
    distinct: int

    def curve(self, library: FeatureLibrary, res: SR3Result) -> np.ndarray:
        """½[τ(v) − τ(−v)] [N·m | N] of the friction columns of ``library`` with the
        coefficients of ``res`` at the levels' speeds: at rest in q̈, at the steady bristle
        state (m = s(q̇), ż = 0), the mean of both directions, as a level measures it (the
        position columns, an offset and even viscous powers cancel)."""
        if not res.support.any():
            return np.zeros(len(self.velocity))
        sub = library.select(res.support)
        names = {t.kind for t in sub.terms() if t.kind in SignalLibrary.COLUMNS}
        if names - {"zdot", "udot"}:
            raise ValueError(f"no steady value of the columns {sorted(names)}")
        zero = np.zeros(len(self.velocity))
        torque = [sub.evaluate(Signals(zero, side * self.velocity, zero,
                                       extra={n: zero for n in names}), res.theta)[0]
                  @ res.coef[res.support] for side in (1.0, -1.0)]
        return 0.5 * (torque[0] - torque[1])

    def chi2(self, library: FeatureLibrary, res: SR3Result) -> float:
        """:meth:`misfit` of the static curve of ``library`` with the coefficients of ``res``."""
        return self.misfit(self.curve(library, res))

    def residuals(self, curve: np.ndarray) -> np.ndarray:
        """(curve − friction)/error [-] of a static curve's values at the levels' speeds (the
        mean of both directions) [N·m | N]."""
        return (curve - self.friction) / self.error

    def misfit(self, curve: np.ndarray) -> float:
        """χ² = Σ :meth:`residuals`² of a static curve's values at the levels' speeds."""
        return float(np.sum(self.residuals(curve) ** 2))

    def missed(self, curve: np.ndarray, tolerance: float) -> np.ndarray:
        """Which levels a static curve's values at their speeds [N·m | N] miss
        (:func:`beyond_scatter`)."""
        return beyond_scatter(curve - self.friction, self.friction, self.error, tolerance)


def beyond_scatter(off: np.ndarray, measured: np.ndarray, error: np.ndarray,
                   tolerance: float) -> np.ndarray:
    """Where a curve ``off`` [N·m | N] from the ``measured`` friction misses it: by more than
    ``tolerance`` [-] of it and by more than three of its ``error`` [N·m | N]."""
    return (np.abs(off) > tolerance * np.abs(measured)) & (np.abs(off) > 3 * error)


#: AICc differences up to this do not set two models apart (Burnham and Anderson's rule of
#: thumb: within 2 of the minimum, a model has substantial support).
TIE_AICC = 2.0
#: A model within :data:`TIE_AICC` of the AICc minimum replaces it only where its χ² against the
#: steady levels is lower by more than this: one level met two standard errors closer.
STEADY_MARGIN = 4.0


def steady_tie_break(aicc: np.ndarray, chi2: np.ndarray, shape: np.ndarray, best: int,
                     distinct: int) -> int:
    """Of the rows within :data:`TIE_AICC` of the AICc minimum that the levels can judge, the
    one whose χ² against the steady levels is lowest, where it is lower than row ``best``'s
    (AICc's choice, :func:`lowest_degree_row`) by more than :data:`STEADY_MARGIN`; else
    ``best``. Rows with a NaN AICc (not selectable) take no part.

    AICc scores the torque of m parts of the samples, which the transients dominate; a
    constant-velocity level averages thousands of steady samples and measures the static curve
    to a fraction of a per cent. Where AICc cannot tell two models apart, the levels can: a
    zoo joint recorded in one file at 0.016–0.42 rad/s (truth 3.99 N·m + 0.16 q̇) kept its
    Coulomb level alone over the same with c₁q̇ by ΔAICc = 0.33, 1.2 % (96 standard errors)
    below its 0.42 rad/s level, and predicted test moves at 0.74 and 1.5 rad/s with 3.3 × the
    truth's error (``DESIGN.md`` §89). The levels judge a model only where they outnumber its
    static curve's parameters (``shape``, :func:`shape_parameters`) or it has no more of them
    than row ``best``: a viscous polynomial passes through two levels whatever it does between
    and beyond them (a zoo joint went from 1.14 to 2.58 × the truth's test error so).
    """
    judged = (shape <= shape[best]) | (shape < distinct)
    finite = np.isfinite(aicc)
    if not finite.any():
        return best
    tied = finite & (aicc <= aicc[finite].min() + TIE_AICC) & np.isfinite(chi2) & judged
    if not tied.any():
        return best
    alternative = int(np.flatnonzero(tied)[np.argmin(chi2[tied])])
    return alternative if chi2[alternative] < chi2[best] - STEADY_MARGIN else best


def hierarchical(cache: GramCache, support: np.ndarray) -> bool:
    """Whether ``support``'s viscous part holds c₁q̇ wherever it holds a power ≥ 2.

    The linear term is the viscous friction of a lubricated contact; the powers above it bend
    the curve. A power without it fits the recorded speeds and leaves the physics: a
    single-file zoo joint recorded at 0.017–0.56 rad/s (truth 11.0 q̇ + 0.86 q̇³) came out
    with 222 q̇⁵ alone, 358 N·m of viscous friction at the 1.1 rad/s test speed where the
    truth has 13 N·m (54 × the truth's test error); with the linear term required, the same
    data give 13.9 q̇ and a model within 1 % of the truth."""
    return bool((support & _linear_viscous_column(cache)).any()
                or not (support & _high_viscous_columns(cache)).any())


def viscous_degree(cache: GramCache, support: np.ndarray) -> int:
    """The highest viscous power of ``support``, at least 1 (no viscous term, or c₁q̇)."""
    powers = [int(t.param) for t, on in zip(cache.library.terms(), support, strict=True)
              if on and t.kind == "viscous"]
    return max(powers, default=1)


def lowest_degree_row(aicc: np.ndarray, hierarchical: np.ndarray, degree: np.ndarray,
                      others: np.ndarray) -> int:
    """The selected row: the AICc minimum of the :func:`hierarchical` rows, or, of the rows
    within :data:`TIE_AICC` of it whose terms other than the viscous ones are its own
    (``others``, one row of flags per row), the one with the lowest AICc among those of the
    lowest viscous degree.

    Where AICc cannot tell a q̇³ from a q̇⁵ beside the same other terms
    (:func:`lower_power_variants`), the lower power is the safer guess: the two agree over the
    recorded speeds, and beyond them the higher one grows faster than any friction measured
    there. Rows with other terms are no such tie: a Stribeck term that fits a little worse
    than a viscous power is no reason to take it.
    """
    score = np.where(hierarchical & np.isfinite(aicc), aicc, np.inf)
    best = int(np.argmin(score))
    tied = (np.isfinite(score) & (score <= score[best] + TIE_AICC)
            & (others == others[best]).all(axis=1))
    if not tied.any():
        return best
    low = tied & (degree == degree[tied].min())
    return best if low[best] else int(np.flatnonzero(low)[np.argmin(score[low])])


def shape_parameters(kinds: np.ndarray, support: np.ndarray) -> int:
    """The parameters of a static curve: its Coulomb, Stribeck and viscous terms of
    ``support`` (``kinds``: the library's term kinds), and Ω_s if it has a Stribeck term."""
    active = np.asarray(kinds)[np.asarray(support, dtype=bool)]
    return int(np.isin(active, ("coulomb", "stribeck", "viscous")).sum()
               + (active == "stribeck").any())


def multistart(solver: SR3Newton, cache: GramCache, thetas: list[float]) -> SR3Result:
    """Run ``solver`` from every θ₀ and keep the lowest training error."""
    best: SR3Result | None = None
    memo: dict = {}
    for th in dict.fromkeys(round(t, 12) for t in thetas):
        res = solver.fit(cache, th, memo=memo)
        if best is None or res.error < best.error * (1 - 1e-12):
            best = res
    assert best is not None
    return best


#: Rows the sweep regresses on at most (see :func:`thin`).
MAX_ROWS = 5000


def thin(x: Signals, tau: np.ndarray, max_rows: int = MAX_ROWS) -> tuple[Signals, np.ndarray]:
    """Every k-th row, k = ⌈n / max_rows⌉ (parallel decimation of the regression).

    Rows of smoothed signals sampled at 1 kHz are strongly correlated, so a uniform stride keeps
    the information that selects the structure at a fraction of the cost — the robotics practice
    of decimating the IDIM regression (EMPS's reference model decimates by 10). The model that
    is finally kept is refitted on every sample.
    """
    stride = max(1, -(-len(x) // max_rows))
    return (x, tau) if stride == 1 else (x.take(slice(None, None, stride)), tau[::stride])


def sweep(library: FeatureLibrary, train: Signals, tau: np.ndarray, *,  # noqa: PLR0913
          validate: tuple[Signals, np.ndarray] | None = None, omega_starts: tuple[float, ...],
          nu: float = 0.01, thresholds: np.ndarray | None = None,
          rule: SelectionRule = DEFAULT_RULE, keep_kinds: tuple[str, ...] = (),
          theta_bounds: tuple[float, float] | None = None,
          steady: SteadyLevels | None = None) -> SweepResult:
    """SR3–Newton over a λ grid with multi-start in Ω_s, and the path's supports with a linear
    viscous part (:func:`linear_viscous_variants`), all scored by AICc.

    Parameters
    ----------
    library : FeatureLibrary
        The candidates.
    train : Signals
        Training samples; ``tau`` their torque [N·m].
    validate : (Signals, ndarray), optional
        Validation samples and torque; without them the training data are scored.
    omega_starts : tuple of float
        Initial Ω_s [rad/s] of the multi-start.
    nu : float
        SR3 relaxation.
    thresholds : ndarray, optional
        Thresholds [N·m RMS, or physical units of the coefficients when ``rule.scaled`` is
        False]; default :func:`threshold_grid`.
    rule : SelectionRule
        Column scaling, m and domain of AICc.
    keep_kinds : tuple of str
        Kinds of terms that are part of the model's structure rather than candidates: never
        thresholded (the refinement keeps the Coulomb level and ż).
    theta_bounds : (float, float), optional
        Bounds on θ = ln Ω_s [ln(rad/s)]; default what the training velocities resolve
        (:func:`~sparsefric.optimizers.sr3.data_theta_bounds`).
    steady : SteadyLevels, optional
        The records' constant-velocity friction levels: the table gets their χ² per model
        (column ``steady_chi2``), and they break ties of AICc (:func:`steady_tie_break`).
    """
    train, tau = thin(train, tau)  # each thinned to MAX_ROWS rows
    if validate is not None:
        validate = thin(*validate)
    cache = GramCache(library, train, tau, keep_kinds, theta_bounds, scaled=rule.scaled)
    grid = threshold_grid(tau) if thresholds is None else np.asarray(thresholds, dtype=float)
    terms = library.terms()
    m = rule.parts or default_parts(len(terms))
    source = "validation" if validate is not None else "training"
    x_val, tau_val = validate if validate is not None else (train, tau)
    if len(tau_val) < 5 * m:
        raise SparsefricError(f"the {source} data have only {len(tau_val)} usable samples; "
                              f"AICc with {m} parts needs at least {5 * m}")
    starts = [float(np.log(w)) for w in omega_starts]
    path: list[tuple[float, SR3Result]] = []
    previous: float | None = None
    res: SR3Result | None = None
    for thr in grid:
        # past the smallest model (only the unpenalised terms left), larger λ change nothing
        if res is None or (res.support & ~cache.keep).any():
            solver = SR3Newton(threshold=float(thr), nu=nu, omega_step=rule.omega_step)
            res = multistart(solver, cache, starts + ([previous] if previous is not None else []))
            previous = res.theta
        path.append((float(thr), res))
    refit = SR3Newton(0.0, nu=nu, omega_step=rule.omega_step)
    scored = _Scored(cache, refit, (x_val, tau_val), m, rule)
    scored.add([(thr, r, "") for thr, r in path])
    scored.add([(thr, r, LINEAR_VISCOUS)
                for thr, r in linear_viscous_variants(cache, path, refit)])
    scored.add([(thr, r, LINEAR_ADDED) for thr, r in linear_added_variants(cache, path, refit)])
    rows, candidates = scored.rows, scored.candidates
    if not np.isfinite([r["aicc"] for r in rows if r["hierarchical"]]).any():
        raise SparsefricError(f"AICc is undefined for every λ with {m} parts (m ≤ k + 2); "
                              "use a larger --aic-parts")
    scored.seen = {r.support.tobytes() for _, r, _ in candidates}
    scored.explore(EXCHANGES)
    # only where the choice has no Coulomb level: a rise carrying the whole dry friction
    if scored.explore(((COULOMB_ADDED, coulomb_addition),), rounds=1):
        scored.explore(EXCHANGES)
    table = pd.DataFrame(rows)
    first = scored.chosen()
    best = first if steady is None else _steady_choice(table, library, candidates, steady, first)
    table["aicc_choice"] = np.arange(len(table)) == first
    table.insert(table.columns.get_loc("aicc") + 1, "aic_r",
                 table["aicc"] - table["aicc"].iloc[best])
    table.insert(table.columns.get_loc("aic_r") + 1, "selected", np.arange(len(table)) == best)
    return SweepResult(table, [r for _, r, _ in candidates], best, m, source,
                       tuple(t.kind for t in terms))


def _steady_choice(table: pd.DataFrame, library: FeatureLibrary,
                   candidates: list[tuple[float, SR3Result, str]], steady: SteadyLevels,
                   best: int) -> int:
    """The row :func:`steady_tie_break` selects from AICc's choice ``best``, among the rows
    that may be selected; adds the ``steady_chi2`` column to ``table``."""
    chi2 = np.array([steady.chi2(library, r) for _, r, _ in candidates])
    table.insert(table.columns.get_loc("aicc") + 1, "steady_chi2", chi2)
    kinds = np.array([t.kind for t in library.terms()])
    shape = np.array([shape_parameters(kinds, r.support) for _, r, _ in candidates])
    aicc = table["aicc"].where(table["hierarchical"]).to_numpy(float)
    return steady_tie_break(aicc, chi2, shape, best, steady.distinct)


#: ``variant`` of a sweep row that is a λ-path support with its viscous part cut to q̇ alone.
LINEAR_VISCOUS = "linear viscous"


def linear_viscous_variants(cache: GramCache, path: list[tuple[float, SR3Result]],
                            solver: SR3Newton) -> list[tuple[float, SR3Result]]:
    """Each distinct support of the λ path that holds a viscous power ≥ 2, with its viscous
    part cut to c₁q̇ and refitted (Ω_s jointly), paired with its threshold [N·m].

    The powers q̇²…q̇⁵ fitted on a narrow range of speeds bend the curve to the training
    levels (where a Stribeck term and a viscous slope trade off) and explode outside it; the
    λ path drops them only together with the Stribeck term. A zoo joint with training at
    0.039–0.32 rad/s and validation at 1.7 rad/s (friction falling from 7.2 to 3.4 N·m, then
    rising linearly) kept a Coulomb level alone: every path model with a Stribeck term carried
    c₃q̇³ ≈ −17 N·m·(s/rad)³, −85 N·m at 1.7 rad/s. AICc scores the variants with the path
    models, on the validation data when given.
    """
    high = _high_viscous_columns(cache)
    linear = _linear_viscous_column(cache)
    seen = {r.support.tobytes() for _, r in path}
    out = []
    for thr, r in path:
        support = (r.support & ~high) | linear
        if not (r.support & high).any() or support.tobytes() in seen:
            continue
        seen.add(support.tobytes())
        out.append((thr, _refit(cache, support, solver, r.theta)))
    return out


#: ``variant`` of a sweep row: a λ-path support with a viscous power ≥ 2 and no c₁q̇, with c₁q̇.
LINEAR_ADDED = "linear viscous added"


def linear_added_variants(cache: GramCache, path: list[tuple[float, SR3Result]],
                          solver: SR3Newton) -> list[tuple[float, SR3Result]]:
    """Each distinct support of the λ path that is not :func:`hierarchical` (a viscous power
    ≥ 2 without c₁q̇), with c₁q̇ added and refitted (Ω_s jointly), paired with its threshold
    [N·m]: the candidates that take the place of those the selection passes over."""
    seen = {r.support.tobytes() for _, r in path}
    linear, out = _linear_viscous_column(cache), []
    for thr, r in path:
        support = r.support | linear
        if hierarchical(cache, r.support) or support.tobytes() in seen:
            continue
        seen.add(support.tobytes())
        added = _refit(cache, support, solver, r.theta)
        if hierarchical(cache, added.support):  # else the constraints held c₁ at 0
            out.append((thr, added))
    return out


#: ``variant`` of a sweep row: the selected support with one Stribeck exponent exchanged.
EXPONENT = "exponent"
#: Rounds of exponent exchanges and additions: one per Stribeck term the library may select,
#: and one more.
MAX_EXCHANGES = 3


def exponent_variants(cache: GramCache, res: SR3Result, solver: SR3Newton,
                      seen: set[bytes]) -> list[SR3Result]:
    """The support of ``res`` with one active Stribeck column exchanged for an inactive one,
    for each pair, refitted with Ω_s jointly; supports in ``seen`` are skipped (and added).

    The λ path chooses δ by the order in which the columns survive the threshold, not by the
    fit: a Stribeck column enters once, as whichever δ correlates best with what the other
    terms leave, and AICc only compares the supports the path visits. The flattest shape
    (δ = 0.5, reaching over decades of speed) usually enters first, and trades off with the
    viscous part between a few speed levels. On a zoo joint with δ = 2.63 in the truth, the
    path kept δ = 0.5 (break-away +23 %) although δ = 4, with the same number of terms, fitted
    the sliding samples better by a likelihood ratio of 170 (``DESIGN.md`` §36; AICc on its
    scoring samples still prefers δ = 0.5 there). Exchanging exponents puts every δ of the
    same model size before AICc.
    """
    return _exchanges(cache, res.support, res.theta, solver, seen)


#: ``variant`` of a sweep row: the selected support with its viscous part cut to q̇ and one
#: Stribeck exponent exchanged.
LINEAR_EXPONENT = "linear viscous, exponent"


def linear_exponent_variants(cache: GramCache, res: SR3Result, solver: SR3Newton,
                             seen: set[bytes]) -> list[SR3Result]:
    """The support of ``res``, if it holds a viscous power ≥ 2, with its viscous part cut to
    c₁q̇ and one active Stribeck column exchanged for an inactive one, each refitted with Ω_s
    searched anew; supports in ``seen`` are skipped (and added).

    Powers q̇³…q̇⁵ bend a curve whose Stribeck shape is wrong to the speed levels, and then
    neither move alone reaches the right model: with the powers kept, another δ fits worse
    than the bent curve; with them cut (:func:`linear_viscous_variants`), the δ that the
    powers compensated fits worse still. A fixed-seed zoo joint (one file at 0.12, 0.37 and
    0.62 rad/s, validation at 0.065 rad/s; truth δ 2.63, Ω_s 0.056 rad/s, 1.57 q̇) came out
    with δ 1 and 14.8 q̇ − 43.6 q̇³ + 57.9 q̇⁵: 20 N·m too much friction at the 0.94 rad/s test
    speed (test error 4.9 × the truth's), break-away +8 %. Cut to q̇ with δ 2.5 it is the truth
    to 0.2 % (``DESIGN.md`` §86).
    """
    high = _high_viscous_columns(cache)
    if not (res.support & high).any():
        return []
    linear = (res.support & ~high) | _linear_viscous_column(cache)
    return _exchanges(cache, linear, res.theta, solver, seen)


def _exchanges(cache: GramCache, support: np.ndarray, theta: float, solver: SR3Newton,
               seen: set[bytes]) -> list[SR3Result]:
    """``support`` with one active Stribeck column exchanged for an inactive one, for each
    pair, refitted with θ = ln Ω_s searched anew from ``theta``; supports in ``seen`` are
    skipped (and added)."""
    stribeck = _stribeck_columns(cache)
    out = []
    for i in np.flatnonzero(support & stribeck):
        for j in np.flatnonzero(stribeck & ~support):
            exchanged = support.copy()
            exchanged[i], exchanged[j] = False, True
            if exchanged.tobytes() not in seen:
                seen.add(exchanged.tobytes())
                out.append(_refit_anew(cache, exchanged, solver, theta))
    return out


#: ``variant`` of a sweep row: the selected support, which has no Stribeck term, with one added.
ADDED = "stribeck added"


def stribeck_additions(cache: GramCache, res: SR3Result, solver: SR3Newton,
                       seen: set[bytes]) -> list[SR3Result]:
    """The support of ``res``, if it holds no Stribeck column, with each Stribeck column added,
    alone and with the linear viscous term c₁q̇, and refitted with Ω_s searched over its whole
    range; a refit that zeroes the new Stribeck column (the start again) or one of the
    support's own terms (an exchange in disguise: the constrained Coulomb level traded for the
    new column) is left out. Supports in ``seen`` are skipped (and added).

    The linear viscous term may come with the addition because a curve that falls between the
    training levels holds c₁ at its bound 0 without a Stribeck term (the viscous part is
    constrained dissipative), so the path's Stribeck-free supports have lost it; without it,
    because c₁ fitted to slow training levels alone may miss a fast validation level.

    Where the path's first Stribeck column is the wrong shape, the path drops it again and
    settles on a model without one, and :func:`exponent_variants` then has nothing to
    exchange. A fixed-seed zoo joint with the paper's split (truth δ 2.95, Ω_s 0.35 rad/s,
    friction 44.5 N·m at 0.127 rad/s and 39.1 N·m at 2.13 rad/s) kept a Coulomb level alone:
    the path's δ = 0.5, fitted to the two training levels, missed the 0.03 rad/s validation
    level by 20 %, and the model without it missed 1.75 rad/s by 16 %; δ = 4 added to the
    Coulomb level fitted every level (``DESIGN.md`` §56).
    """
    stribeck = _stribeck_columns(cache)
    if (res.support & stribeck).any():
        return []
    linear = _linear_viscous_column(cache)
    out = []
    for j, viscous in itertools.product(np.flatnonzero(stribeck), (False, True)):
        support = res.support | linear if viscous else res.support.copy()
        support[j] = True
        if support.tobytes() in seen:
            continue
        seen.add(support.tobytes())
        added = _refit_anew(cache, support, solver, res.theta)
        if _keeps(added, support):
            out.append(added)
    return out


#: ``variant`` of a sweep row: the selected support, which has a Stribeck term and no Coulomb
#: level, with the Coulomb level added.
COULOMB_ADDED = "coulomb added"


def coulomb_addition(cache: GramCache, res: SR3Result, solver: SR3Newton,
                     seen: set[bytes]) -> list[SR3Result]:
    """The support of ``res``, if it holds a Stribeck column and lacks the Coulomb column
    where that is a candidate (step 1; the LuGre steps keep it, ``DESIGN.md`` §8), with the
    Coulomb column added, alone and with each viscous power it lacks, each refitted from
    every Ω_s of the grid of
    :meth:`~sparsefric.optimizers.sr3.SR3Newton.theta_grid`, one variant per distinct Ω_s
    reached: the training error alone does not choose the knee, AICc on the scoring data
    does. A refit that zeroes a column of the support is left out, and so is a support in
    ``seen`` (then added).

    Without the Coulomb level a Stribeck rise must carry the whole dry friction: its knee
    moves above the recorded speeds, where e^(−|q̇/Ω_s|^δ) is a level that falls with a
    power of the speed, and a larger viscous slope makes up the fall; the decaying rise bends
    the curve upwards as a viscous q̇³ would, which the path dropped. The λ path can hold
    that reading from its first λ on, and Ω_s, refitted near the path's value, stays at that
    knee: the low-speed minimum of the profile, where the rise is the Stribeck effect the
    ramps show, is never visited. A run-time zoo joint with the paper's split (truth 4.83 N·m
    + 2.33 q̇ + 0.077 q̇³, a rise of 0.34 N·m at Ω_s 0.028 rad/s) was selected as 5.05
    e^(−|q̇/3.86|^0.75) + 3.69 q̇ N·m, no Coulomb level, at AICc 9.2; the Coulomb level with
    q̇, q̇³ and that rise at Ω_s 0.014 rad/s scores 1.2, with f_c within 0.1 % (``DESIGN.md``
    §114). Beyond the records the two part: the rise decays and takes the dry friction with
    it.
    """
    coulomb = np.array([t.kind == "coulomb" for t in cache.library.terms()], dtype=bool)
    if not (res.support & _stribeck_columns(cache)).any() or (res.support & coulomb).any() \
            or not coulomb.any() or cache.keep[coulomb].any():
        return []
    powers = [None, *np.flatnonzero(_viscous_columns(cache) & ~res.support)]
    out = []
    for i in powers:
        support = res.support | coulomb
        if i is not None:
            support[i] = True
        if support.tobytes() in seen:
            continue
        seen.add(support.tobytes())
        found: set[float] = set()
        for theta in solver.theta_grid(cache):
            added = _refit(cache, support, solver, theta)
            if _keeps(added, support) and round(added.theta, 3) not in found:
                found.add(round(added.theta, 3))
                out.append(added)
    return out


#: ``variant`` of a sweep row: the selected support, which has no viscous term, with c₁q̇ added.
VISCOUS_ADDED = "viscous added"


def viscous_addition(cache: GramCache, res: SR3Result, solver: SR3Newton,
                     seen: set[bytes]) -> list[SR3Result]:
    """The support of ``res``, if it holds a Stribeck column and no viscous one, with the
    linear viscous term c₁q̇ added and refitted with Ω_s jointly; left out where the refit
    zeroes c₁ or one of the support's own terms, or the support is in ``seen`` (then added).

    The λ path can pass from supports whose Stribeck columns a poor Ω_s start zeroed (a
    polynomial in q̇ bending through the levels) to the Stribeck term without any viscous
    slope, never visiting both together. A run-time zoo joint (truth f_c 33 N·m, a Stribeck
    term with Ω_s 0.26 rad/s, 4.1 q̇ + 0.8 q̇³) kept f_c + Stribeck alone: its curve stays at
    40.7 N·m where the training record slides at 45.7 N·m at 1.8 rad/s, and the inertia came
    out −7.5 % from the misfit (``DESIGN.md`` §84).
    """
    viscous = _viscous_columns(cache)
    if not (res.support & _stribeck_columns(cache)).any() or (res.support & viscous).any():
        return []
    support = res.support | _linear_viscous_column(cache)
    if support.tobytes() in seen:
        return []
    seen.add(support.tobytes())
    added = _refit(cache, support, solver, res.theta)
    return [added] if _keeps(added, support) else []


#: ``variant`` of a sweep row: the selected support with a viscous power p ≥ 4 exchanged for p − 2.
LOWER_POWER = "lower viscous power"


def lower_power_variants(cache: GramCache, res: SR3Result, solver: SR3Newton,
                         seen: set[bytes]) -> list[SR3Result]:
    """The support of ``res`` with one active viscous power p ≥ 4 exchanged for p − 2 (the
    same parity: odd powers are odd in q̇, even ones even) where that one is inactive, refitted
    with Ω_s jointly; supports in ``seen`` are skipped (and added).

    Over one range of speeds q̇³ and q̇⁵ are nearly the same column (cosine 0.999 on the
    sliding samples of a single-file zoo joint at 0.076–0.91 rad/s), and the λ path keeps
    whichever enters first; beyond the range they part: that joint's 1.32 q̇⁵ (truth 1.40 q̇³)
    put 17 N·m too much friction at its 1.8 rad/s test speed, 15.7 × the truth's test error.
    These variants put the lower power before AICc, and :func:`lowest_degree_row` takes it
    where AICc cannot tell the two apart.
    """
    terms = cache.library.terms()
    power = {int(t.param): i for i, t in enumerate(terms) if t.kind == "viscous"}
    out = []
    for p, i in power.items():
        j = power.get(p - 2)
        if p < 4 or j is None or not res.support[i] or res.support[j]:
            continue
        support = res.support.copy()
        support[i], support[j] = False, True
        if support.tobytes() not in seen:
            seen.add(support.tobytes())
            out.append(_refit(cache, support, solver, res.theta))
    return out


def _keeps(res: SR3Result, support: np.ndarray) -> bool:
    """Whether the refit ``res`` holds every column of ``support`` (round-off is no term)."""
    kept = np.abs(res.coef) > 1e-9 * np.abs(res.coef).max()
    return bool(kept[support].all())


def _viscous_columns(cache: GramCache) -> np.ndarray:
    return np.array([t.kind == "viscous" for t in cache.library.terms()], dtype=bool)


def _stribeck_columns(cache: GramCache) -> np.ndarray:
    return np.array([t.kind == "stribeck" for t in cache.library.terms()], dtype=bool)


def _high_viscous_columns(cache: GramCache) -> np.ndarray:
    return np.array([t.kind == "viscous" and int(t.param) >= 2 for t in cache.library.terms()],
                    dtype=bool)


def _linear_viscous_column(cache: GramCache) -> np.ndarray:
    return np.array([t.kind == "viscous" and int(t.param) == 1 for t in cache.library.terms()],
                    dtype=bool)


def _refit(cache: GramCache, support: np.ndarray, solver: SR3Newton,
           theta: float) -> SR3Result:
    """``support`` refitted by least squares, θ = ln Ω_s jointly optimal near ``theta``."""
    coef, theta = solver.refit_support(cache, support, theta)
    return SR3Result(coef, coef != 0, theta, solver.fit_error(cache, coef, theta), 0, True)


def _refit_anew(cache: GramCache, support: np.ndarray, solver: SR3Newton,
                theta: float) -> SR3Result:
    """``support`` refitted with θ = ln Ω_s searched over its whole range from ``theta``."""
    return _refit(cache, support, solver, solver.scan_theta(cache, support, theta))


def collinear_pairs(cache: GramCache, theta: float, mask: np.ndarray,
                    tol: float = 0.999) -> list[tuple[str, str, float]]:
    """Pairs of the ``mask`` columns whose cosine similarity on the data exceeds ``tol``.

    Such columns cannot be told apart by the data: their coefficients trade off against each
    other (e.g. cos q and a constant when the joint barely moves, q̇ and q̇³ at one speed).
    """
    G, _, _ = cache.at(theta)
    d = np.sqrt(np.maximum(np.diag(G), 1e-300))
    C = G / np.outer(d, d)  # cosine similarity of the columns
    names = [t.name for t in cache.library.terms()]
    idx = np.flatnonzero(mask)
    return [(names[i], names[j], float(abs(C[i, j])))
            for a, i in enumerate(idx) for j in idx[a + 1:] if abs(C[i, j]) > tol]


def predict(library: FeatureLibrary, x: Signals, res: SR3Result) -> np.ndarray:
    """Θ(θ)ξ on the active columns only."""
    if not res.support.any():
        return np.zeros(len(x))
    return library.select(res.support).evaluate(x, res.theta)[0] @ res.coef[res.support]


class _Scored:
    """The candidate models of a sweep, each with its row of the table: scored by AICc on the
    samples ``scoring`` (signals, torque [N·m]) in ``m`` parts under ``rule``."""

    def __init__(self, cache: GramCache, refit: SR3Newton,
                 scoring: tuple[Signals, np.ndarray], m: int, rule: SelectionRule):
        self.cache, self.refit, self.scoring, self.m, self.rule = cache, refit, scoring, m, rule
        self.candidates: list[tuple[float, SR3Result, str]] = []
        self.rows: list[dict] = []
        #: supports the variants skip (they add the ones they try)
        self.seen: set[bytes] = set()
        self._viscous = _viscous_columns(cache)

    def add(self, new: list[tuple[float, SR3Result, str]]) -> None:
        """Candidates ``(threshold [N·m], solution, variant)``, scored."""
        self.candidates.extend(new)
        self.rows.extend(self._row(*c) for c in new)

    def _row(self, thr: float, r: SR3Result, variant: str) -> dict:
        library, terms = self.cache.library, self.cache.library.terms()
        x_val, tau_val = self.scoring
        k = int(r.support.sum())
        rss = absolute_rss(tau_val - predict(library, x_val, r), self.m)
        out = {"threshold": thr, "lambda": l0_weight(thr, self.refit.nu), "n_active": k,
               "n_eliminated": len(terms) - k, "omega_s": r.omega, "train_error": r.error,
               "rss": rss, "aicc": aicc(k, rss, self.m, self.rule.literal),
               "converged": r.converged, "variant": variant,
               "hierarchical": hierarchical(self.cache, r.support),
               "viscous_degree": viscous_degree(self.cache, r.support)}
        out.update({t.name: c for t, c in zip(terms, r.coef, strict=True)})
        return out

    def chosen(self) -> int:
        """The row :func:`lowest_degree_row` selects."""
        others = np.array([r.support & ~self._viscous for _, r, _ in self.candidates])
        return lowest_degree_row(*(np.array([r[k] for r in self.rows]) for k in
                                   ("aicc", "hierarchical", "viscous_degree")), others)

    def explore(self, variants: tuple, rounds: int = MAX_EXCHANGES) -> bool:
        """Up to ``rounds`` rounds: the ``variants`` (``(name, function)`` pairs, as
        :data:`EXCHANGES`) of the chosen row added, until the choice repeats; whether it
        moved."""
        first = self.chosen()
        for _ in range(rounds):
            best = self.chosen()
            thr, res = self.candidates[best][:2]
            self.add([(thr, r, name) for name, make in variants
                      for r in make(self.cache, res, self.refit, self.seen)])
            if self.chosen() == best:
                break
        return self.chosen() != first


#: The variants of the chosen row that each round of the sweep's exchanges puts before AICc,
#: by ``variant`` name; :data:`COULOMB_ADDED` comes after them, and only where the choice they
#: end at has no Coulomb level (:func:`coulomb_addition`).
EXCHANGES = ((EXPONENT, exponent_variants), (LINEAR_EXPONENT, linear_exponent_variants),
             (ADDED, stribeck_additions), (VISCOUS_ADDED, viscous_addition),
             (LOWER_POWER, lower_power_variants))
