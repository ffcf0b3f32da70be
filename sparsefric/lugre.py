r"""LuGre friction: the bristle state, its exact exponential integration, and the friction torque.

One implementation serves the identification (z integrated along a measured velocity record),
the simulator (z integrated inside the joint dynamics) and :class:`LuGreFriction` (the friction
run sample by sample, e.g. in a controller) share the update of :func:`_advance`.

Model (ALGORITHM.md §1), with :math:`s` = sign (model A) or :math:`\tanh(K\dot q)` (model B)::

    g(q̇)   = f_c + Σ_i A_i exp(−|q̇/Ω_s|^{δ_i})                [N·m]
    τ_ss    = s(q̇) g(q̇) + Σ_p c_p q̇^p                         steady state (ż = 0)
    ż       = q̇ − σ0 |q̇| z / g_e(q̇),   g_e = g·|s(q̇)|          [rad/s]
    τ_f     = σ0 z + σ1 ż + Σ_p c_p q̇^p                          [N·m]

With :math:`g_e = g|s|` the LuGre steady state is σ0 z = s(q̇) g(q̇) for either choice of s, so
model B is the same differential equation with a smoothed bristle limit. The decay rate
a = σ0|q̇|/g_e stays finite at q̇ = 0 for model B (→ σ0/(g K)).

With a held over a step h, the z equation ż = a (z_ss − z), z_ss = q̇/a = s(q̇) g/σ0, is linear
and solved exactly: z(t+h) = z_ss + (z − z_ss) e^{−a h} for a constant z_ss (:func:`z_step`), and
with z_ss linear over the step where q̇ keeps its sign (:func:`_part`). Both are stable for any σ0
and h, which an explicit scheme is not (a·h reaches 10³ for stiff bristles at 1 kHz). The linear
z_ss matters where the bristle slides: a steady state held at the step's mid-velocity leaves z
half a step behind at the sample, and ż = q̇ − a z there a h/2 times the rate at which the steady
state moves; σ1 ż then carried a term in q̈ that the inertia absorbed (``DESIGN.md`` §94).

Sequential recurrences cannot be vectorised, so the loops are compiled with numba (≈ 10⁸
samples/s instead of ≈ 10⁶ in pure Python).
"""

from __future__ import annotations

import contextlib
import math
import numbers
import warnings
from dataclasses import dataclass

import numba
import numpy as np

from sparsefric.errors import OptionError
from sparsefric.validity import OutsideValidityWarning, ValidityRange, check_outside

__all__ = [
    "FrictionParams",
    "LuGreFriction",
    "check_record",
    "default_start",
    "g_at",
    "integrate_z",
    "lugre_torque",
    "direction_mean_curve",
    "finite_start",
    "static_curve",
    "stribeck_g",
    "presliding_stiffness",
    "steady_state_z",
    "velocities",
    "viscous_at",
    "z_step",
]


@dataclass(frozen=True)
class FrictionParams:
    """Friction parameters in SI units, packed for the compiled kernels.

    Attributes
    ----------
    coulomb : float
        f_c [N·m].
    stribeck_velocity : float
        Ω_s [rad/s], > 0.
    deltas, amplitudes : ndarray
        Stribeck exponents δ_i [-] and amplitudes A_i = f_s,i − f_c [N·m].
    powers, coefficients : ndarray
        Viscous powers p [-] and coefficients c_p [N·m·(s/rad)^p].
    sigma0 : float
        Bristle stiffness σ0 [N·m/rad] (0 for a static model).
    sigma1 : float
        Bristle damping σ1 [N·m·s/rad].
    tanh_k : float
        K [s/rad] of model B's tanh(K q̇); 0 selects model A's sign(q̇).
    """

    coulomb: float
    stribeck_velocity: float
    deltas: np.ndarray
    amplitudes: np.ndarray
    powers: np.ndarray
    coefficients: np.ndarray
    sigma0: float = 0.0
    sigma1: float = 0.0
    tanh_k: float = 0.0

    def as_tuple(self) -> tuple:
        """Arguments in the order the compiled kernels take them."""
        return (
            float(self.coulomb),
            float(self.stribeck_velocity),
            np.ascontiguousarray(self.deltas, dtype=np.float64),
            np.ascontiguousarray(self.amplitudes, dtype=np.float64),
            np.ascontiguousarray(self.powers, dtype=np.float64),
            np.ascontiguousarray(self.coefficients, dtype=np.float64),
            float(self.tanh_k),
        )


#: Pre-sliding deflections [-] the joint slides within one interval beyond which the bristle is
#: at its steady state at the sample's end (a h > 30: e^-30 ≈ 1e-13 of a deflection left).
SETTLED = 30.0
#: Smallest g [N·m] the bristle update divides by (a σ0|q̇|/g stays finite below it).
G_FLOOR = 1e-150


@numba.njit(cache=True)
def g_at(qd, fc, omega, deltas, amps):
    """g(q̇) = f_c + Σ A_i exp(−|q̇/Ω_s|^{δ_i}) [N·m] at one velocity q̇ [rad/s] (compiled)."""
    g = fc
    x = abs(qd / omega)
    for i in range(deltas.shape[0]):
        g += amps[i] * np.exp(-(x ** deltas[i]))
    return g


@numba.njit(cache=True)
def viscous_at(qd, powers, coefs):
    """τ_v(q̇) = Σ c_p q̇^p [N·m] at one velocity q̇ [rad/s] (compiled)."""
    v = 0.0
    for i in range(powers.shape[0]):
        v += coefs[i] * qd ** powers[i]
    return v


@numba.njit(cache=True)
def _rate(qd, g, sigma0, k):
    """Decay rate a = σ0|q̇|/(g|s(q̇)|) [1/s] of the bristle state.

    g is floored at :data:`G_FLOOR`: a trial g without a Coulomb level (f_c = 0) whose Stribeck
    term underflows at speed would divide by zero; z then follows its tiny steady state.
    """
    g = max(g, G_FLOOR)
    if k > 0.0:
        x = abs(k * qd)
        ratio = 1.0 / k if x < 1e-8 else abs(qd) / np.tanh(x)
        return sigma0 * ratio / g
    return sigma0 * abs(qd) / g


@numba.njit(cache=True)
def z_step(z, qd, g, sigma0, k, h):
    """Advance z by h [s] with q̇ [rad/s] held constant; exact exponential update.

    Returns the new z [rad].
    """
    a = _rate(qd, g, sigma0, k)
    if a * h < 1e-12:
        return z + qd * h
    z_ss = qd / a
    return z_ss + (z - z_ss) * np.exp(-a * h)


@numba.njit(cache=True)
def _part(z, qd0, g0, a0, qd1, g1, a1, sigma0, k, h):
    """z [rad] at the end (q̇1, g1; rate a1) of a part of h [s] that starts at z and (q̇0, g0;
    rate a0), with q̇ and g linear in between (a = :func:`_rate` at each end, given: each
    sample's rate serves three updates).

    Where q̇ keeps its sign, the steady state z_ss = q̇/a = s(q̇) g/σ0 is smooth: it is taken
    linear between its values at the ends, with the rate a held at the part's mean velocity
    and g, and ż = a (z_ss − z) solved exactly (an exponential integrator with first-order
    hold). A sliding bristle then trails its moving steady state by ż_ss/a, as the continuous
    equation's does. Where q̇ reverses or stops within the part, s(q̇) jumps: the part is
    solved with its mean velocity and g (:func:`z_step`), which integrates z by ∫q̇ dt where
    the bristle is stuck.
    """
    v = 0.5 * (qd0 + qd1)
    gm = 0.5 * (g0 + g1)
    if qd0 * qd1 <= 0.0:
        return z_step(z, v, gm, sigma0, k, h)
    x = _rate(v, gm, sigma0, k) * h
    if x < 1e-12:
        return z + v * h
    start = qd0 / a0
    end = qd1 / a1
    return end - (end - start) * (-np.expm1(-x) / x) + (z - start) * np.exp(-x)


@numba.njit(cache=True)
def _settle(z, qd0, a0, qd1, a1, h):
    """z [rad] at a sample (q̇1, rate a1) that ends a part of h [s] starting at (q̇0, rate a0):
    the steady state where the joint slides more than :data:`SETTLED` pre-sliding deflections
    within the part (a1 h > SETTLED), trailed by ż_ss/a where q̇ kept its sign; else z
    unchanged.

    ż = q̇ − a z at the sample is a difference of two large terms there: a z from the part's
    solution, whose g was interpolated, can be off by (g_mean/g − 1) q̇. Where g changes little
    within the part that is nothing; where it collapses — a fitted g without Coulomb level whose
    Stribeck term dies out past the data: 2.4e-10 → 3.0e-16 N·m between two 4 ms samples of a
    zoo joint's test record — σ1 ż was 1.7e7 N·m. A joint that slides 30 deflections g/σ0
    within the part has its bristle settled to within e^-30 of a deflection at the sample,
    wherever it started (also through a reversal within the part), so the steady state is the
    solution there, and ż the rate ż_ss = Δz_ss/h at which it moves (0 across a reversal)
    (``DESIGN.md`` §83, §94)."""
    if a1 * h <= SETTLED:
        return z
    end = qd1 / a1
    if qd0 * qd1 <= 0.0:
        return end
    return end - (end - qd0 / a0) / (a1 * h)


@numba.njit(cache=True)
def _advance(z, qd0, g0, a0, qd1, g1, a1, sigma0, k, h, substeps):  # noqa: PLR0913 - numba
    """z [rad] at a sample (q̇1, g1; rate a1) from z at the sample (q̇0, g0; rate a0) h [s]
    before it, in ``substeps`` equal parts (:func:`_part`) with q̇ and g interpolated linearly
    between the samples. Where the last part settles the bristle, z is its steady state at the
    sample (:func:`_settle`)."""
    if substeps == 1:  # the model's own rule: one part, without the loop (a quarter faster)
        qb, gb = qd0 + (qd1 - qd0), g0 + (g1 - g0)  # the loop's last end, rounded as there
        ab = a1 if qb == qd1 and gb == g1 else _rate(qb, gb, sigma0, k)
        return _settle(_part(z, qd0, g0, a0, qb, gb, ab, sigma0, k, h), qd0, a0, qd1, a1, h)
    hp = h / substeps
    qa, ga, aa = qd0, g0, a0
    for part in range(substeps):
        f = (part + 1.0) / substeps
        qb, gb = qd0 + (qd1 - qd0) * f, g0 + (g1 - g0) * f
        # the interpolated end is the sample itself but for rounding
        ab = a1 if qb == qd1 and gb == g1 else _rate(qb, gb, sigma0, k)
        z = _part(z, qa, ga, aa, qb, gb, ab, sigma0, k, hp)
        if part + 1 < substeps:
            qa, ga, aa = qb, gb, ab
    return _settle(z, qa, aa, qd1, a1, hp)


@numba.njit(cache=True, nogil=True)
def _integrate(qd, dt, sigma0, g, k, z0, substeps):
    n = qd.shape[0]
    z = np.empty(n)
    zd = np.empty(n)
    z[0] = z0
    a0 = _rate(qd[0], g[0], sigma0, k) if n else 0.0
    for i in range(n):
        zd[i] = qd[i] - a0 * z[i]
        if i + 1 < n:
            a1 = _rate(qd[i + 1], g[i + 1], sigma0, k)
            z[i + 1] = _advance(z[i], qd[i], g[i], a0, qd[i + 1], g[i + 1], a1, sigma0, k,
                                dt[i], substeps)
            a0 = a1
    return z, zd


@numba.njit(cache=True)
def _step(z, qd_prev, g_prev, started, qd, h, sigma0, sigma1,  # noqa: PLR0913 - numba
          fc, omega, deltas, amps, powers, coefs, k):
    """One sample of :class:`LuGreFriction`: (τ_f [N·m], z [rad], g [N·m]) at velocity ``qd``
    reached ``h`` [s] after the sample (``qd_prev``, ``g_prev``) if ``started``; σ0 = 0: the
    static curve."""
    g = g_at(qd, fc, omega, deltas, amps)
    viscous = viscous_at(qd, powers, coefs)
    if sigma0 == 0.0:
        return (np.tanh(k * qd) if k > 0.0 else np.sign(qd)) * g + viscous, z, g
    a = _rate(qd, g, sigma0, k)
    if started:
        z = _advance(z, qd_prev, g_prev, _rate(qd_prev, g_prev, sigma0, k), qd, g, a, sigma0,
                     k, h, 1)
    zd = qd - a * z
    return sigma0 * z + sigma1 * zd + viscous, z, g


@numba.njit(cache=True, nogil=True)
def _g_array(qd, fc, omega, deltas, amps):
    out = np.empty(qd.shape[0])
    for i in range(qd.shape[0]):
        out[i] = g_at(qd[i], fc, omega, deltas, amps)
    return out


def velocities(qd: float | np.ndarray) -> np.ndarray:
    """Velocities ``qd`` [rad/s] as a float array of no or one dimension.

    Raises
    ------
    OptionError
        ``qd`` has more dimensions (the compiled kernels run along one record).
    """
    v = np.asarray(qd, dtype=np.float64)
    if v.ndim > 1:
        raise OptionError("qd", f"must be a number or a 1-D array, got shape {v.shape}")
    return v


def stribeck_g(qd: float | np.ndarray, params: FrictionParams) -> float | np.ndarray:
    """g(q̇) = f_c + Σ A_i exp(−|q̇/Ω_s|^{δ_i}) [N·m] for velocities ``qd`` [rad/s]: a float
    for a number, an array for a 1-D array (:func:`velocities`)."""
    v = velocities(qd)
    fc, omega, deltas, amps, _, _, _ = params.as_tuple()
    g = _g_array(np.ascontiguousarray(v), fc, omega, deltas, amps)
    return float(g[0]) if v.ndim == 0 else g


def sign_function(qd: np.ndarray, tanh_k: float) -> np.ndarray:
    """s(q̇): sign(q̇) for ``tanh_k`` = 0 (model A), tanh(K q̇) otherwise (model B)."""
    qd = np.asarray(qd, dtype=float)
    return np.tanh(tanh_k * qd) if tanh_k > 0 else np.sign(qd)


def viscous_torque(qd: np.ndarray, params: FrictionParams) -> np.ndarray:
    """τ_v(q̇) = Σ c_p q̇^p [N·m]."""
    qd = np.asarray(qd, dtype=float)
    out = np.zeros_like(qd)
    for p, c in zip(params.powers, params.coefficients, strict=True):
        out += c * qd**p
    return out


def static_curve(qd: float | np.ndarray, params: FrictionParams) -> float | np.ndarray:
    """Steady-state friction τ_ss(q̇) = s(q̇) g(q̇) + τ_v(q̇) [N·m] at velocities ``qd``
    [rad/s]: a float for a number, an array for a 1-D array (:func:`velocities`)."""
    qd = velocities(qd)
    out = sign_function(qd, params.tanh_k) * stribeck_g(qd, params) + viscous_torque(qd, params)
    return float(out) if qd.ndim == 0 else out


def direction_mean_curve(speed: np.ndarray, params: FrictionParams) -> np.ndarray:
    """½[τ_ss(v) − τ_ss(−v)] at speeds v = |``speed``| [N·m]: the friction a constant-velocity
    experiment measures.

    A CVE point is half the difference of the forward and backward torques at the same
    positions and speed, which cancels gravity and offset and with them the even viscous powers
    c₂q̇², c₄q̇⁴ of the library (ALGORITHM.md §2): they push the same way in both directions.
    Compared with τ_ss(v) itself, a joint with c₂ = 0.18 N·m·(s/rad)² missed its own 1.6 rad/s
    point by 6 % (``DESIGN.md`` §87).
    """
    v = np.abs(np.asarray(speed, dtype=float))
    return 0.5 * (static_curve(v, params) - static_curve(-v, params))


def steady_state_z(qd: float, params: FrictionParams) -> float:
    """Bristle deflection z_ss = s(q̇) g(q̇)/σ0 [rad] of steady motion at ``qd`` (0 at rest)."""
    v = np.array([qd], dtype=float)
    return float(sign_function(v, params.tanh_k)[0] * stribeck_g(v, params)[0] / params.sigma0)


@numba.njit(cache=True)
def _slides_one_way(qd, dt, distance):
    """Whether the joint travels ``distance`` [rad] from the first sample before q̇ [rad/s]
    stops, reverses or the record ends (``dt`` [s]: the interval after each sample)."""
    travel = 0.0
    for i in range(qd.shape[0] - 1):
        if qd[i + 1] * qd[0] <= 0.0:
            return False
        travel += 0.5 * (abs(qd[i]) + abs(qd[i + 1])) * dt[i]
        if travel >= distance:
            return True
    return False


def default_start(qd: np.ndarray, dt: np.ndarray, params: FrictionParams) -> float:
    """Initial bristle deflection [rad] of a velocity record ``qd`` [rad/s] whose state before
    it is unknown (``dt`` [s]: the interval after each sample).

    The steady state z_ss = s(q̇₀) g(q̇₀)/σ0 of the first velocity where the record starts
    sliding — z = 0 would drop the friction of a record cut out of steady sliding — else 0, the
    bristle relaxed. A record starts sliding if its first speed exceeds 5 % of its largest and
    the joint then travels |z_ss| one way before it stops, reverses or the record ends: a joint
    held at rest moves within its bristles' deflection, less than that, however large its
    first speed against the record's own noise (``DESIGN.md`` §95).
    """
    if qd.shape[0] == 0 or abs(qd[0]) <= 0.05 * float(np.max(np.abs(qd))):
        return 0.0
    z_ss = steady_state_z(qd[0], params)
    return z_ss if _slides_one_way(qd, dt, abs(z_ss)) else 0.0


def _per_sample(dt: float | np.ndarray, n: int, lengths: tuple[int, ...]) -> np.ndarray:
    """Time steps ``dt`` [s] as a contiguous array of ``n``: a number repeated, or an array of
    one of ``lengths`` entries completed with zeros (steps not used).

    Raises
    ------
    OptionError
        ``dt`` is an array of another length or shape.
    """
    if np.ndim(dt) == 0:
        return np.full(n, _sample("dt", dt))
    h = np.asarray(dt, dtype=np.float64)
    if h.ndim != 1 or h.shape[0] not in lengths:
        counts = " or ".join(str(k) for k in sorted(set(lengths)) if k >= 0)
        raise OptionError("dt", f"must be a number or an array of {counts} time steps for "
                                f"{n} samples, got shape {h.shape}")
    return np.ascontiguousarray(h if h.shape[0] == n else np.r_[h, np.zeros(n - h.shape[0])])


def _refusal(name: str, value: object, velocity_unit: str = "rad/s") -> OptionError:
    """The error for an input the bristle update cannot take: ``name`` (``qd``, ``dt``,
    ``qd[i]``, ``dt[i]``) and its ``value`` [``velocity_unit`` | s], or what was given in its
    place."""
    must = (f"a finite velocity [{velocity_unit}]" if name.startswith("qd")
            else "a positive, finite time step [s]")
    real = isinstance(value, numbers.Real) and not isinstance(value, bool)
    shown = float(value) if real else value
    return OptionError(name, f"must be {must}, got {shown!r}")


def _sample(name: str, value: object, velocity_unit: str = "rad/s") -> float:
    """One sample's ``value`` of ``name`` (``qd`` [``velocity_unit``] or ``dt`` [s]) as a
    float; anything but one real number (a string, None, a boolean, a sequence) is refused
    (:func:`_refusal`)."""
    if np.ndim(value) == 0 and not isinstance(value, str | bytes | bool | np.bool_):
        with contextlib.suppress(TypeError, ValueError):
            return float(value)
    raise _refusal(name, value, velocity_unit)


def finite_start(z0: float) -> float:
    """The initial bristle deflection ``z0`` [rad] as a float.

    Raises
    ------
    OptionError
        ``z0`` is not finite: z would stay NaN for good.
    """
    z = float(z0)
    if not math.isfinite(z):
        raise OptionError("z0", f"must be a finite bristle deflection, got {z!r}")
    return z


def check_record(qd: np.ndarray, dt: float | np.ndarray, lengths: tuple[int, ...],
                 used: range, velocity_unit: str = "rad/s") -> np.ndarray:
    """Refuse a record the bristle update cannot take (``DESIGN.md`` §96), checked once with
    array operations; return its time steps, one per sample, for the integration.

    Parameters
    ----------
    qd : ndarray, shape (n,)
        Velocity [rad/s]; every entry must be finite.
    dt : float or ndarray
        Time steps [s]: a number, or an array of one of ``lengths`` entries (:func:`_per_sample`).
        Those at the indices ``used`` must be positive and finite (a number: if any is used).
    lengths : tuple of int
        The lengths ``dt`` may have.
    used : range
        The indices of the steps the update uses, within ``range(n)``.
    velocity_unit : str
        Unit of ``qd`` in the message.

    Returns
    -------
    ndarray, shape (n,)
        The time steps [s] as :func:`_per_sample` gives them (the integration's input).

    Raises
    ------
    OptionError
        A ``ValueError`` naming the first bad entry, ``qd[i]`` or ``dt[i]`` (``dt`` for a
        number), or ``dt`` of the wrong length.
    """
    bad = np.flatnonzero(~np.isfinite(qd))
    if bad.size:
        raise _refusal(f"qd[{bad[0]}]", qd[bad[0]], velocity_unit)
    steps = _per_sample(dt, qd.shape[0], lengths)
    h = steps[used.start:used.stop]
    bad = np.flatnonzero(~((h > 0.0) & (h < math.inf)))
    if bad.size:
        raise _refusal("dt" if np.ndim(dt) == 0 else f"dt[{used[bad[0]]}]", h[bad[0]])
    return steps


def integrate_z(
    qd: np.ndarray, dt: float | np.ndarray, params: FrictionParams, z0: float | None = None,
    g: np.ndarray | None = None, substeps: int = 1,
) -> tuple[np.ndarray, np.ndarray]:
    """Integrate the bristle state along a velocity record.

    Parameters
    ----------
    qd : ndarray, shape (n,)
        Joint velocity [rad/s] at the samples.
    dt : float or ndarray
        Sample period [s], scalar or per interval (length n − 1, or n with the last unused;
        another length raises :class:`~sparsefric.errors.OptionError`). Not checked further:
        :meth:`sparsefric.model.JointModel.friction_torque` refuses values the update cannot
        take.
    params : FrictionParams
        Uses σ0 > 0 [N·m/rad], g(q̇) and K.
    z0 : float, optional
        Initial bristle deflection [rad]. Default: :func:`default_start` — the steady state
        (:func:`steady_state_z`) of a record that starts sliding, 0 for one that starts at
        rest.
    g : ndarray, shape (n,), optional
        :func:`stribeck_g` of ``qd`` and ``params`` [N·m] if already computed: g does not
        depend on σ0, so a search over σ0 computes it once (it costs more than the integration).
    substeps : int, optional
        Parts of each sample interval, integrated one after the other with q̇ and g interpolated
        linearly between the samples (:func:`_advance`). 1 is the model's own rule, as
        :class:`LuGreFriction` and the exported code apply it; where q̇ reverses or rings
        within an interval, the rate σ0|q̇|/g held at its mean misjudges the decay, and more
        parts follow the continuous equation (:data:`sparsefric.uncertainty.INTEGRATION_SUBSTEPS`,
        ``DESIGN.md`` §48).

    Returns
    -------
    z : ndarray
        Bristle deflection [rad] at the samples.
    zdot : ndarray
        ż = q̇ − a z [rad/s] at the samples.
    """
    qd = np.ascontiguousarray(qd, dtype=np.float64)
    n = qd.shape[0]
    step = _per_sample(dt, n, (n - 1, n))
    g = stribeck_g(qd, params) if g is None else np.ascontiguousarray(g, dtype=np.float64)
    start = float(z0) if z0 is not None else default_start(qd, step, params)
    return _integrate(qd, step, float(params.sigma0), g, float(params.tanh_k), start,
                      int(substeps))


def lugre_torque(
    qd: np.ndarray, dt: float | np.ndarray, params: FrictionParams, z0: float | None = None,
    substeps: int = 1,
) -> np.ndarray:
    """LuGre friction torque τ_f = σ0 z + σ1 ż + τ_v(q̇) [N·m] along a velocity record
    (``substeps`` as in :func:`integrate_z`)."""
    z, zd = integrate_z(qd, dt, params, z0, substeps=substeps)
    return params.sigma0 * z + params.sigma1 * zd + viscous_torque(qd, params)


def presliding_stiffness(params: FrictionParams) -> float:
    """Small-displacement stiffness dτ_f/dq at rest [N·m/rad]: σ0 for the LuGre model."""
    return float(params.sigma0)


class LuGreFriction:
    r"""Friction of one joint run sample by sample, the bristle state z kept inside.

    Sample i at velocity q̇_i [rad/s], reached h_i [s] after sample i − 1::

        z_i   = _advance(z_{i−1}; q̇_{i−1}, g_{i−1} → q̇_i, g_i over h_i)             [rad]
        ż_i   = q̇_i − a(q̇_i) z_i,   a = σ0|q̇|/(g|s(q̇)|)                              [rad/s]
        τ_f,i = σ0 z_i + σ1 ż_i + τ_v(q̇_i)                                            [N·m]

    the update of :func:`integrate_z`, so that :meth:`step` along a record reproduces
    :func:`lugre_torque` with the same ``z0`` to round-off. The first sample after
    :meth:`reset` keeps z = z0. A static model (σ0 = 0) returns the static curve
    τ_ss = s(q̇) g(q̇) + τ_v(q̇) and has no state. Prismatic axes: m, m/s, N throughout.

    A velocity that is not finite, or a time step that is not positive and finite where it is
    used, raises :class:`~sparsefric.errors.OptionError` (a ``ValueError``) naming it, and the
    state stays as it was: a controller can skip the sample, where z would otherwise turn NaN
    for good or run backwards.

    Parameters
    ----------
    params : FrictionParams
        Model A (``tanh_k`` = 0) or B; σ0 = 0 selects the static model.
    validity : ValidityRange, optional
        Range of the identification data; velocities outside ``validity.velocity`` are handled
        by ``outside``.
    outside : {"warn", "clamp", "ignore"}
        ``"warn"``: one :class:`~sparsefric.validity.OutsideValidityWarning` per object until
        :meth:`reset`; ``"clamp"``: q̇ limited to the range before it is used; ``"ignore"``.
    z0 : float
        Initial bristle deflection [rad], finite (:meth:`reset`).
    velocity_unit : str
        Unit of q̇ in the warning (``"m/s"`` for a prismatic axis).

    Examples
    --------
    >>> f = JointModel.load("model.json").friction_object()
    >>> tau_f = [f.step(v, 1e-3) for v in qd]        # or: tau_f, z = f.simulate(qd, 1e-3)
    """

    def __init__(self, params: FrictionParams, *, validity: ValidityRange | None = None,
                 outside: str = "warn", z0: float = 0.0, velocity_unit: str = "rad/s"):
        self.params = params
        self.validity = validity
        self.outside = check_outside(outside)
        self.velocity_unit = velocity_unit
        self._kernel_args = (float(params.sigma0), float(params.sigma1),
                             *params.as_tuple())
        self.reset(z0)

    @property
    def dynamic(self) -> bool:
        """True for the LuGre model, False for a static one (σ0 = 0)."""
        return self.params.sigma0 > 0

    @property
    def z(self) -> float:
        """Bristle deflection [rad] at the last sample (z0 before the first)."""
        return self._z

    def reset(self, z0: float | None = None) -> None:
        """Start again from z = ``z0`` [rad] (None: 0, the joint at rest with relaxed bristles;
        a static model keeps none); the next sample has no predecessor, and the out-of-range
        warning is re-armed.

        Raises
        ------
        OptionError
            ``z0`` is not finite (:func:`finite_start`).
        """
        z0 = 0.0 if z0 is None else finite_start(z0)
        self._z = z0 if self.dynamic else 0.0
        self._qd = 0.0
        self._g = 0.0
        self._started = False
        self._warned = False

    def step(self, qd: float, dt: float | None) -> float:
        """Friction torque τ_f [N·m] at velocity ``qd`` [rad/s], ``dt`` [s] after the previous
        sample (unused on the first sample after :meth:`reset`, where it may be None).

        Raises
        ------
        OptionError
            A ``ValueError``: ``qd`` is not a finite number or ``dt`` (where used) is not a
            positive, finite number. The state is unchanged.
        """
        qd = _sample("qd", qd, self.velocity_unit)
        if not math.isfinite(qd):
            raise _refusal("qd", qd, self.velocity_unit)
        h = _sample("dt", dt) if self._started else 0.0
        if self._started and not 0.0 < h < math.inf:
            raise _refusal("dt", h)
        qd = self._admit(qd)
        tau, self._z, self._g = _step(self._z, self._qd, self._g, self._started, qd, h,
                                      *self._kernel_args)
        self._qd = qd
        self._started = True
        return float(tau)

    def simulate(self, qd: np.ndarray, dt: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Friction along a velocity record, continuing from the current state.

        Parameters
        ----------
        qd : float or ndarray, shape (n,)
            Velocity [rad/s] (a number: one sample; more dimensions raise
            :class:`~sparsefric.errors.OptionError`).
        dt : float or ndarray, shape (n,)
            Time [s] from the previous sample to each sample (the first entry is unused right
            after :meth:`reset`).

        Returns
        -------
        tau_f : ndarray
            Friction torque [N·m] at the samples.
        z : ndarray
            Bristle deflection [rad] at the samples (zeros for a static model).

        Raises
        ------
        OptionError
            A ``ValueError`` naming the first velocity that is not finite or time step (where
            used) that is not positive and finite, or ``dt`` of another length than ``qd``.
            The state is unchanged.
        """
        qd = np.atleast_1d(velocities(qd))
        n = qd.shape[0]
        step = check_record(qd, dt, (n,), range(0 if self._started else 1, n),
                            self.velocity_unit)
        qd = self._admit(qd)
        if n == 0:
            return np.zeros(0), np.zeros(0)
        if not self.dynamic:
            self._qd, self._started = float(qd[-1]), True
            return static_curve(qd, self.params), np.zeros(n)
        g = stribeck_g(qd, self.params)
        prev = int(self._started)
        v = np.concatenate([[self._qd], qd])[1 - prev:]
        gv = np.concatenate([[self._g], g])[1 - prev:]
        h = np.ascontiguousarray(np.r_[step[1 - prev:], 0.0])
        z, zd = _integrate(v, h, float(self.params.sigma0), gv, float(self.params.tanh_k),
                           self._z, 1)
        z, zd = z[prev:], zd[prev:]
        self._z, self._qd, self._g, self._started = float(z[-1]), float(qd[-1]), float(g[-1]), True
        p = self.params
        return p.sigma0 * z + p.sigma1 * zd + viscous_torque(qd, p), z

    def static_curve(self, qd: float | np.ndarray) -> float | np.ndarray:
        """Steady-state friction τ_ss(q̇) = s(q̇) g(q̇) + τ_v(q̇) [N·m] (no state, no range
        check; a float for a number, as :func:`static_curve`)."""
        return static_curve(qd, self.params)

    def _admit(self, qd: np.ndarray | float) -> np.ndarray | float:
        """Velocities after the ``outside`` policy: warned about once, clamped, or as given."""
        if self.validity is None or self.outside == "ignore":
            return qd
        if self.outside == "clamp":
            return self.validity.clamp("velocity", qd)
        if not self._warned:
            found = self.validity.check(velocity=qd)
            if found:
                self._warned = True
                warnings.warn(f"{found[0].describe(self.velocity_unit)} of the identification "
                              "data (the friction extrapolates; warned once until reset)",
                              OutsideValidityWarning, stacklevel=3)
        return qd
