r"""Output-error LuGre identification: every LuGre and rigid-body parameter by bounded nonlinear
least squares (``scipy.optimize.least_squares``, trust-region reflective) on the torque error, with
the bristle state z integrated along the measured velocity.

The velocity comes from a Butterworth filter (the baseline) or from the TV differentiation of
sparsefric's own pipeline (``differentiation="tv"`` or ``"tv-averaged"``,
:class:`~sparsefric.preprocessing.Preprocessor`), so that a fit started at a known truth finds the
optimum of the prediction error that the pipeline's signals define.

Model (ALGORITHM.md §1), SI units (rad, rad/s, N·m; m, m/s, N for a prismatic axis)::

    τ = I q̈ + a_c cos q + a_s sin q + o + σ0 z + σ1 ż + Σ_p c_p q̇^p
    ż = q̇ − σ0 |q̇| z / g(q̇),   g(q̇) = f_c + A exp(−|q̇/Ω_s|^δ)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import least_squares

from sparsefric.data import Trajectory
from sparsefric.differentiation import differentiate, sample_average, torque_average
from sparsefric.model import JointModel
from sparsefric.options import check_choice
from sparsefric.preprocessing import Prepared, Preprocessor

#: Where the velocity and acceleration of the torque-error fit come from (see
#: :func:`output_error_lugre`).
DIFFERENTIATIONS = ("butterworth", "tv", "tv-averaged")


@dataclass(frozen=True)
class _Record:
    """One trajectory prepared for the torque-error fit: filtered q, q̇, q̈, τ and steps."""

    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    dt: float


@dataclass(frozen=True)
class _Layout:
    """Which free parameters the vector x holds, in order (see :func:`_pack`)."""

    axis: str
    fit_offset: bool
    n_stribeck: int
    powers: tuple[int, ...]
    tanh_k: float


def _prepare(trajectories: Sequence[Trajectory], cutoff_hz: float) -> list[_Record]:
    out = []
    for tr in trajectories:
        d = differentiate(tr.t, tr.q, tr.tau, method="butterworth", cutoff_hz=cutoff_hz)
        out.append(_Record(d.q, d.qd, d.qdd, d.tau, tr.dt))
    return out


def _complete_start(start: JointModel, sigma0: float, omega: float) -> JointModel:
    """Fill what a static start lacks: Stribeck term (δ = 2, A = f_c/4), Ω_s, σ0, σ1, c1."""
    m = start
    fc = max(abs(m.coulomb), 1e-3)
    if not m.stribeck or all(a <= 0 for _, a in m.stribeck):
        m = m.with_(stribeck=((2.0, 0.25 * fc),), stribeck_velocity=omega)
    m = m.with_(coulomb=fc, stribeck=tuple((d, max(a, 1e-3 * fc)) for d, a in m.stribeck))
    if m.kind != "lugre" or m.sigma0 <= 0:
        s0 = sigma0
        s1 = np.sqrt(s0 * max(m.inertia, 1e-6))
        m = m.with_(kind="lugre", sigma0=s0, sigma1=float(s1))
    if m.sigma1 <= 0:
        m = m.with_(sigma1=1e-3)
    if not m.viscous:
        m = m.with_(viscous=((1, 0.0),))
    return m


def _pack(m: JointModel, lay: _Layout) -> np.ndarray:
    r"""x = [I, a_c, a_s | o, ln f_c, ln A_i…, ln Ω_s, ln δ_i…, c_p…, ln σ0, ln σ1] (no Ω_s
    without a Stribeck term)."""
    x = [m.inertia]
    if lay.axis == "revolute":
        x += [m.gravity_cos, m.gravity_sin]
    if lay.fit_offset:
        x.append(m.offset)
    x.append(np.log(m.coulomb))
    x += [np.log(a) for _, a in m.stribeck]
    if lay.n_stribeck:
        x.append(np.log(m.stribeck_velocity))
    x += [np.log(d) for d, _ in m.stribeck]
    x += [c for _, c in m.viscous]
    x += [np.log(m.sigma0), np.log(m.sigma1)]
    return np.array(x, dtype=float)


def _unpack(x: np.ndarray, lay: _Layout, template: JointModel) -> JointModel:
    i = 0

    def take(n: int) -> np.ndarray:
        nonlocal i
        v = x[i: i + n]
        i += n
        return v

    inertia = float(take(1)[0])
    a_c, a_s = (take(2) if lay.axis == "revolute" else (template.gravity_cos,
                                                        template.gravity_sin))
    offset = float(take(1)[0]) if lay.fit_offset else template.offset
    fc = float(np.exp(take(1)[0]))
    amps = np.exp(take(lay.n_stribeck))
    omega = float(np.exp(take(1)[0])) if lay.n_stribeck else template.stribeck_velocity
    deltas = np.exp(take(lay.n_stribeck))
    coefs = take(len(lay.powers))
    s0, s1 = np.exp(take(2))
    return template.with_(
        inertia=inertia, gravity_cos=float(a_c), gravity_sin=float(a_s), offset=offset,
        kind="lugre", coulomb=fc, stribeck_velocity=omega,
        stribeck=tuple((float(d), float(a)) for d, a in zip(deltas, amps, strict=True)),
        viscous=tuple((p, float(c)) for p, c in zip(lay.powers, coefs, strict=True)),
        sigma0=float(s0), sigma1=float(s1))


def _bounds(x0: np.ndarray, lay: _Layout) -> tuple[np.ndarray, np.ndarray]:
    """Bounds: I ≥ 0; Ω_s ∈ [1e-4, 10]; δ ∈ [0.3, 5]; σ0 ∈ [1, 1e9]; σ1 ∈ [1e-4, 1e6]."""
    lo = np.full_like(x0, -np.inf)
    hi = np.full_like(x0, np.inf)
    lo[0] = 0.0
    j = 1 + (2 if lay.axis == "revolute" else 0) + int(lay.fit_offset)
    lo[j], hi[j] = np.log(1e-6), np.log(1e6)  # f_c
    j += 1
    lo[j: j + lay.n_stribeck], hi[j: j + lay.n_stribeck] = np.log(1e-6), np.log(1e6)
    j += lay.n_stribeck
    if lay.n_stribeck:
        lo[j], hi[j] = np.log(1e-4), np.log(10.0)
        j += 1
    lo[j: j + lay.n_stribeck], hi[j: j + lay.n_stribeck] = np.log(0.3), np.log(5.0)
    lo[-2], hi[-2] = np.log(1.0), np.log(1e9)
    lo[-1], hi[-1] = np.log(1e-4), np.log(1e6)
    return lo, hi


def _torque_residual(m: JointModel, records: Sequence[_Record]) -> np.ndarray:
    """τ̂ − τ over all records, z integrated from 0 along the filtered velocity [N·m]."""
    return np.concatenate([m.torque(r.q, r.qd, r.qdd, r.dt) - r.tau for r in records])


def _prepared_residual(prep: Prepared, averaged: bool) -> Callable[[JointModel], np.ndarray]:
    """τ̂ − τ [N·m] over all records of ``prep`` as a function of the model: τ̂ as
    :meth:`Prepared.torque <sparsefric.preprocessing.Prepared.torque>` predicts it (z
    integrated per record along the differentiated velocity, no validity range enforced), τ
    the measured torque. ``averaged`` (where ``prep``'s q̈ is a second difference of fitted
    positions): the sample-averaged equation, τ̂ − I q̈ averaged by
    :func:`~sparsefric.differentiation.sample_average` and τ by
    :func:`~sparsefric.differentiation.torque_average` (``DESIGN.md`` §35, §68)."""
    if not (averaged and prep.sampled_acceleration):
        return lambda m: np.concatenate(prep.torque(m, outside="ignore")) - prep.tau_raw
    tau = torque_average(prep.tau_raw, prep.bounds, prep.torque_held)
    qdd = prep.signals.qdd

    def residual(m: JointModel) -> np.ndarray:
        inertial = m.inertia * qdd
        rest = np.concatenate(prep.torque(m, outside="ignore")) - inertial
        return sample_average(rest, prep.bounds) + inertial - tau
    return residual


def _least_squares(residual: Callable[[JointModel], np.ndarray], n: int, m0: JointModel,
                   lay: _Layout, max_nfev: int, ftol: float) -> tuple[JointModel, dict]:
    """Minimise ‖``residual``(model)‖²/``n`` over the parameters ``lay`` frees in ``m0``.

    Returns the fitted model and the solver's figures (``extra["output_error"]`` of
    :func:`output_error_lugre`, but for the settings of the signals)."""
    x0 = _pack(m0, lay)
    lo, hi = _bounds(x0, lay)
    x0 = np.clip(x0, lo + 1e-12, hi - 1e-12)
    calls = [0]

    def fun(x: np.ndarray) -> np.ndarray:
        calls[0] += 1
        res = residual(_unpack(x, lay, m0))
        return np.nan_to_num(res, nan=1e6, posinf=1e6, neginf=-1e6) / np.sqrt(n)

    t0 = time.perf_counter()
    sol = least_squares(fun, x0, bounds=(lo, hi), x_scale="jac", max_nfev=max_nfev,
                        ftol=ftol, xtol=1e-10, method="trf")
    wall = time.perf_counter() - t0
    info = {"nfev": int(sol.nfev), "njev": int(sol.njev or 0), "evaluations": calls[0],
            "wall_time_s": wall, "rmse_start": float(np.sqrt(np.mean(fun(x0) ** 2) * n)),
            "rmse": float(np.sqrt(np.mean(sol.fun**2) * n)), "status": int(sol.status),
            "message": str(sol.message), "samples": int(n), "parameters": int(x0.size)}
    return _unpack(sol.x, lay, m0), info


def output_error_lugre(trajectories: Sequence[Trajectory], axis: str,  # noqa: PLR0913 - keyword options
                       start: JointModel, *, max_nfev: int = 200, cutoff_hz: float = 20.0,
                       sigma0_start: float = 1e4, stribeck_velocity_start: float = 0.05,
                       fit_offset: bool | None = None, ftol: float = 1e-8,
                       differentiation: str = "butterworth",
                       preprocessor: Preprocessor | None = None,
                       complete_start: bool = True) -> JointModel:
    r"""All LuGre and rigid-body parameters by bounded nonlinear least squares on the torque error.

    .. math:: \min_x \sum_k \big(I\ddot q_k + a_c\cos q_k + a_s\sin q_k + o
              + \sigma_0 z_k + \sigma_1 \dot z_k + \textstyle\sum_p c_p \dot q_k^p - \tau_k\big)^2

    with z integrated along the measured velocity by :func:`sparsefric.lugre.integrate_z`
    (exact exponential update, z(0) = 0).  With ``differentiation="butterworth"`` q̇, q̈ and τ
    come from a zero-phase 4th-order Butterworth low-pass (``cutoff_hz``) and central
    differences; with ``"tv"`` q, q̇ and q̈ are those of sparsefric's pipeline
    (:meth:`Preprocessor.prepare <sparsefric.preprocessing.Preprocessor.prepare>`: the records
    cut at jumps, TV-differentiated) and τ_k is the measured torque, so that the cost is
    (‖τ − τ̂‖/‖τ‖)² ‖τ‖² with the relative error of :meth:`Prepared.relative_error
    <sparsefric.preprocessing.Prepared.relative_error>`, the score of a sparsefric model.
    ``"tv-averaged"`` fits the same signals by the sample-averaged equation of sparsefric's
    final refit where q̈ is a second difference of fitted positions (``DESIGN.md`` §35): the
    measured τ and every term but I q̈ averaged over ±h as that q̈ is (else as ``"tv"``).
    Regressing the instantaneous torque on that q̈ puts I +2.4…3 % high on records logged at
    250 Hz; averaged, the equation holds sample by sample.
    Positive parameters (f_c, A_i, Ω_s, δ_i, σ0, σ1) are optimised by their logarithm and all
    are bounded (see ``_bounds``); the solver is ``scipy.optimize.least_squares``
    (trust-region reflective, finite-difference Jacobian, ``x_scale="jac"``).

    Parameters
    ----------
    trajectories : sequence of Trajectory
    axis : {"revolute", "prismatic"}
    start : JointModel
        Initial guess, typically :func:`idim_ls`.  A static start gets σ0 = ``sigma0_start``
        [N·m/rad], σ1 = √(σ0 I) [N·m·s/rad], and if it has no Stribeck term one with δ = 2,
        A = f_c/4 and Ω_s = ``stribeck_velocity_start`` [rad/s].  Its viscous powers are kept.
    max_nfev : int
        Largest number of residual evaluations (a Jacobian costs one per parameter).
    cutoff_hz : float
        Butterworth cutoff [Hz] of the differentiation (``"butterworth"`` only).
    fit_offset : bool, optional
        Fit the offset o (default: for a prismatic axis only).
    ftol : float
        Relative cost tolerance of the solver.
    differentiation : {"butterworth", "tv", "tv-averaged"}
        Where q̇ and q̈ come from, and which equation is fitted (see above).
    preprocessor : Preprocessor, optional
        The pipeline's settings for ``"tv…"`` (default ``Preprocessor()``, sparsefric's
        defaults); the set it prepares is remembered, so fits sharing one preprocessor and
        the same trajectory objects differentiate them once.
    complete_start : bool
        False: ``start`` is used as it is, its structure fitted (a LuGre model with σ0, σ1 > 0;
        its Stribeck terms, none included, and viscous powers), e.g. a known truth.

    Returns
    -------
    JointModel
        ``kind="lugre"``; ``extra["output_error"]`` holds nfev and njev (solver counts),
        ``evaluations`` (all residual evaluations, finite-difference Jacobians included), wall
        time [s] of the solver, the start and final torque RMS errors [N·m] (against the
        filtered torque, or the measured one, averaged where the equation is, with
        ``"tv…"``), the solver status and message, ``differentiation``, ``averaged`` (whether
        the sample-averaged equation was fitted) and ``cutoff_hz`` (None with ``"tv…"``).

    Raises
    ------
    OptionError
        If ``differentiation`` is not one of :data:`DIFFERENTIATIONS`.
    ValueError
        If ``complete_start`` is False and ``start`` is not a LuGre model with σ0, σ1 > 0.
    """
    check_choice("differentiation", differentiation, DIFFERENTIATIONS)
    if complete_start:
        m0 = _complete_start(start.with_(axis=axis), sigma0_start, stribeck_velocity_start)
    elif start.kind != "lugre" or not (start.sigma0 > 0 and start.sigma1 > 0):
        raise ValueError(f"complete_start=False needs a LuGre start with σ0, σ1 > 0, got "
                         f"kind {start.kind!r}, σ0 {start.sigma0:g}, σ1 {start.sigma1:g}")
    else:
        m0 = start.with_(axis=axis)
    lay = _Layout(axis=axis, fit_offset=(axis == "prismatic") if fit_offset is None
                  else bool(fit_offset), n_stribeck=len(m0.stribeck),
                  powers=tuple(int(p) for p, _ in m0.viscous), tanh_k=m0.tanh_k)
    if differentiation == "butterworth":
        records = _prepare(trajectories, cutoff_hz)
        model, info = _least_squares(lambda m: _torque_residual(m, records),
                                     sum(r.q.size for r in records), m0, lay, max_nfev, ftol)
        info.update(averaged=False, cutoff_hz=cutoff_hz)
    else:
        prep = (preprocessor or Preprocessor()).prepare(trajectories, remember=True)
        averaged = differentiation == "tv-averaged" and prep.sampled_acceleration
        model, info = _least_squares(_prepared_residual(prep, averaged), len(prep), m0, lay,
                                     max_nfev, ftol)
        info.update(averaged=averaged, cutoff_hz=None)
    info["differentiation"] = differentiation
    return model.with_(extra={"method": "output_error_lugre", "output_error": info})


def output_error_multistart(trajectories: Sequence[Trajectory], axis: str, start: JointModel,
                            sigma0_starts: Sequence[float], **options: Any) -> JointModel:
    """:func:`output_error_lugre` from each σ0 start, keeping the lowest torque RMS error.

    The comparison with sparsefric on equal terms when σ0 is not known beforehand: the same
    starts as its multi-start (:func:`sparsefric.identify.default_sigma0_starts`). ``options``
    go to every fit; with a TV ``differentiation`` the fits share one ``preprocessor`` (the
    given one, else a new default one), so the records are differentiated once.
    ``extra["output_error"]`` is the kept fit's, with ``starts`` and the summed
    ``wall_time_s`` and ``evaluations`` of all fits.
    """
    if options.get("differentiation", "butterworth") != "butterworth" and \
            options.get("preprocessor") is None:
        options = {**options, "preprocessor": Preprocessor()}
    fits = [output_error_lugre(trajectories, axis, start, sigma0_start=float(s0), **options)
            for s0 in sigma0_starts]
    best = min(fits, key=lambda m: m.extra["output_error"]["rmse"])
    info = dict(best.extra["output_error"], starts=[float(s) for s in sigma0_starts],
                wall_time_s=sum(m.extra["output_error"]["wall_time_s"] for m in fits),
                evaluations=sum(m.extra["output_error"]["evaluations"] for m in fits))
    return best.with_(extra={"method": "output_error_multistart", "output_error": info})
