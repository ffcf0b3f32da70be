"""@HEADER_COMMENT@
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np

#: The identified friction: the ``friction`` section of the model file (SI units: rad, rad/s,
#: N·m; m, m/s, N for a prismatic axis) and the validity range of q̇ (None: none recorded).
MODEL: dict = {}  # @MODEL@
#: Choices of the ``outside`` option.
OUTSIDE = ("warn", "clamp", "ignore")
#: Pre-sliding deflections g/σ0 slid within one interval past which the bristle is at the
#: steady state of the sample ending it (sparsefric.lugre.SETTLED).
SETTLED = 30.0
#: Smallest g [N·m] divided by: a g that underflows at speed (sparsefric.lugre.G_FLOOR).
G_FLOOR = 1e-150


class OutsideValidityWarning(UserWarning):
    """The friction evaluated at a velocity beyond the range of the identification data."""


def _number(value: object, name: str, must: str) -> float:
    """``value`` as a float; ValueError "``name`` must be ``must``" for anything but one real
    number (a string, None, a boolean, a sequence)."""
    if np.ndim(value) == 0 and not isinstance(value, str | bytes | bool | np.bool_):
        with contextlib.suppress(TypeError, ValueError):
            return float(value)
    raise ValueError(f"{name} must be {must}, got {value!r}")


class LuGreFriction:
    r"""Friction of the joint run sample by sample, the bristle state z kept inside.

    Sample i at velocity q̇_i, reached h_i [s] after sample i − 1::

        g(q̇)  = f_c + Σ A_j exp(−|q̇/Ω_s|^{δ_j})                                  [N·m]
        z_i   = z_1 − (z_1 − z_0) (1 − e)/(a h_i) + (z_{i−1} − z_0) e,  e = exp(−a h_i) [rad]
                a = σ0 r(v)/g_m with v, g_m the means of q̇ and g over the interval;
                z_0, z_1 the steady states q̇/a_j of the samples i − 1 and i (own rates
                a_j = σ0 r(q̇_j)/g(q̇_j)) where q̇ keeps its sign, both v/a where it does not;
                z_i = z_1 − (z_1 − z_0)/(a_i h_i) (z_1 where q̇ changed sign) where the
                sample's own rate has a_i h_i > SETTLED
        τ_f,i = σ0 z_i + σ1 (q̇_i − σ0 r(q̇_i) z_i / g(q̇_i)) + Σ c_p q̇_i^p          [N·m]

    r(q̇) = |q̇| (model A, s = sign) or |q̇|/tanh(K|q̇|) (model B, s = tanh(K q̇)). A static
    model returns τ_ss = s(q̇) g(q̇) + Σ c_p q̇^p and has no state.

    A velocity that is not finite, or a time step that is not positive and finite where it is
    used, raises ValueError naming it, and the state stays as it was: the caller can skip the
    sample.

    Parameters
    ----------
    outside : {"warn", "clamp", "ignore"}
        Velocities beyond the validity range: one :class:`OutsideValidityWarning` until
        :meth:`reset`, q̇ limited to the range, or nothing.
    z0 : float
        Initial bristle deflection [rad].
    model : dict
        Parameters in the form of :data:`MODEL` (default: the identified model).
    """

    def __init__(self, *, outside: str = "warn", z0: float = 0.0, model: dict | None = None):
        if outside not in OUTSIDE:
            raise ValueError(f"option outside must be one of {', '.join(OUTSIDE)}, "
                             f"got {outside!r}")
        m = MODEL if model is None else model
        self.outside = outside
        self.validity = m["validity"]
        self.unit = "m/s" if m["axis"] == "prismatic" else "rad/s"
        self.dynamic = m["kind"] == "lugre"
        self.k = float(m["sign"].get("K", 0.0)) if m["sign"]["type"] == "tanh" else 0.0
        self.coulomb = float(m["coulomb"])
        self.omega = float(m["stribeck_velocity"])
        self.stribeck = [(float(t["delta"]), float(t["amplitude"])) for t in m["stribeck"]]
        self.viscous = [(int(t["power"]), float(t["coefficient"])) for t in m["viscous"]]
        self.sigma0 = float(m["sigma0"]) if self.dynamic else 0.0
        self.sigma1 = float(m["sigma1"]) if self.dynamic else 0.0
        self.reset(z0)

    @property
    def z(self) -> float:
        """Bristle deflection [rad] at the last sample (z0 before the first)."""
        return self._z

    def reset(self, z0: float | None = None) -> None:
        """Start again from z = ``z0`` [rad] (None: 0); the next sample has no predecessor.
        ValueError for a ``z0`` that is not finite."""
        if z0 is not None and not np.isfinite(z0):
            raise ValueError(f"z0 must be a finite deflection [{self.unit.split('/')[0]}], "
                             f"got {z0!r}")
        self._z = float(z0) if z0 is not None and self.dynamic else 0.0
        self._last: tuple[float, float] | None = None  # q̇ [rad/s] and g [N·m] of the last sample
        self._warned = False

    def step(self, qd: float, dt: float) -> float:
        """Friction torque τ_f [N·m] at velocity ``qd`` [rad/s], ``dt`` [s] after the previous
        sample (unused on the first sample after :meth:`reset`). ValueError for a ``qd`` that
        is not a finite number or a ``dt`` (where used) that is not a positive, finite number,
        the state unchanged."""
        qd = np.array([_number(qd, "qd", f"a finite velocity [{self.unit}]")])
        dt = 0.0 if self._last is None else _number(dt, "dt", "a positive, finite time step [s]")
        self._check(qd, dt, "qd")
        return float(self._run(qd, dt)[0][0])

    def simulate(self, qd: np.ndarray, dt: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Friction τ_f [N·m] and deflection z [rad] along velocities ``qd`` [rad/s], continuing
        from the current state; ``dt`` [s]: time from the previous sample to each sample.
        ValueError naming the first velocity that is not finite or time step (where used) that
        is not positive and finite, the state unchanged."""
        qd = np.array(qd, dtype=float, ndmin=1)
        self._check(qd, dt, "qd[{}]")
        return self._run(qd, dt)

    def _check(self, qd: np.ndarray, dt: float | np.ndarray, label: str) -> None:
        """ValueError for the first velocity of ``qd`` [rad/s] that is not finite (named
        ``label`` with its index) or time step of ``dt`` [s] that is not positive and finite
        among those used (all but the first after :meth:`reset`)."""
        bad = np.flatnonzero(~np.isfinite(qd))
        if bad.size:
            raise ValueError(f"{label.format(bad[0])} must be a finite velocity [{self.unit}], "
                             f"got {float(qd[bad[0]])!r}")
        first = 0 if self._last is not None else 1
        if np.ndim(dt) and np.shape(dt) != qd.shape:
            raise ValueError(f"dt must be a number or hold one time step per velocity "
                             f"({qd.size}), got {np.size(dt)}")
        h = np.broadcast_to(np.asarray(dt, dtype=float), qd.shape)
        bad = first + np.flatnonzero(~((h[first:] > 0.0) & (h[first:] < np.inf)))
        if bad.size:
            name = f"dt[{bad[0]}]" if np.ndim(dt) else "dt"
            raise ValueError(f"{name} must be a positive, finite time step [s], "
                             f"got {float(h[bad[0]])!r}")

    def _run(self, qd: np.ndarray, dt: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`simulate`, also behind :meth:`step` (a range warning points at their caller)."""
        qd = self._admit(qd)
        n = qd.size
        h = np.broadcast_to(np.asarray(dt, dtype=float), (n,))
        if n == 0:
            return np.zeros(0), np.zeros(0)
        g = self.g(qd)
        r, s = self._ratio(qd)
        viscous = self.viscous_torque(qd)
        if not self.dynamic:
            self._last = (float(qd[-1]), float(g[-1]))
            return s * g + viscous, np.zeros(n)
        g = np.maximum(g, G_FLOOR)
        if self._last is None:
            z = self._interpolate(qd, g, h[1:], self._z)
        else:
            z = self._interpolate(np.r_[self._last[0], qd], np.r_[self._last[1], g], h,
                                  self._z)[1:]
        self._z, self._last = float(z[-1]), (float(qd[-1]), float(g[-1]))
        zdot = qd - self.sigma0 * r / g * z
        return self.sigma0 * z + self.sigma1 * zdot + viscous, z

    def static_curve(self, qd: np.ndarray) -> np.ndarray:
        """Steady-state friction τ_ss(q̇) = s(q̇) g(q̇) + Σ c_p q̇^p [N·m]."""
        qd = np.asarray(qd, dtype=float)
        return self._ratio(qd)[1] * self.g(qd) + self.viscous_torque(qd)

    def g(self, qd: np.ndarray) -> np.ndarray:
        """g(q̇) = f_c + Σ A_j exp(−|q̇/Ω_s|^{δ_j}) [N·m]."""
        x = np.abs(np.asarray(qd, dtype=float) / self.omega)
        out = np.full(x.shape, self.coulomb)
        for delta, amplitude in self.stribeck:
            out += amplitude * np.exp(-(x**delta))
        return out

    def viscous_torque(self, qd: np.ndarray) -> np.ndarray:
        """τ_v(q̇) = Σ c_p q̇^p [N·m]."""
        qd = np.asarray(qd, dtype=float)
        out = np.zeros(qd.shape)
        for power, coefficient in self.viscous:
            out += coefficient * qd**power
        return out

    def _ratio(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """r(x) = x/s(x) [rad/s] and s(x): |x|, sign(x) (model A); |x|/tanh(K|x|) (1/K where
        K|x| < 1e-8), tanh(K x) (model B)."""
        if self.k == 0.0:
            return np.abs(x), np.sign(x)
        y = np.abs(self.k * x)
        t = np.tanh(y)
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(y < 1e-8, 1.0 / self.k, np.abs(x) / t)
        return r, np.copysign(t, x)

    def _interpolate(self, qd: np.ndarray, g: np.ndarray, h: np.ndarray, z0: float) -> np.ndarray:
        """z at the samples from z0 at the first (h[i]: the interval after sample i); each
        interval solved exactly with the rate a of its mean velocity and g, and the steady
        state z_ss = q̇/a linear between its ends where q̇ keeps its sign (its mean-velocity
        value where q̇ reverses or stops)."""
        v = 0.5 * (qd[:-1] + qd[1:])
        a = self.sigma0 * self._ratio(v)[0] / (0.5 * (g[:-1] + g[1:]))
        ah = a * h
        slow = ah < 1e-12
        ends = self.sigma0 * self._ratio(qd)[0] / g  # the samples' own rates
        with np.errstate(divide="ignore", invalid="ignore"):
            mid = np.where(slow, 0.0, v / a)
            steady = np.where(ends > 0, qd / ends, 0.0)
            hold = np.where(slow, 1.0, -np.expm1(-ah) / ah)
        same = qd[:-1] * qd[1:] > 0.0
        start, end = np.where(same, steady[:-1], mid), np.where(same, steady[1:], mid)
        decay = np.exp(-ah)
        drift = v * h
        # where the joint slides over SETTLED deflections within the interval, the bristle is
        # at the steady state of the sample ending it, trailing it by ż_ss/a where q̇ kept its
        # sign
        a_end = ends[1:]
        settled = (a_end * h > SETTLED).tolist()
        with np.errstate(divide="ignore", invalid="ignore"):
            trail = np.where(same, (steady[1:] - steady[:-1]) / (a_end * h), 0.0)
        rest = (steady[1:] - trail).tolist()
        z = [z0]
        for i, (is_slow, s0, s1, e, c, dz) in enumerate(zip(
                slow.tolist(), start.tolist(), end.tolist(), decay.tolist(), hold.tolist(),
                drift.tolist(), strict=True)):
            z.append(rest[i] if settled[i] else z[i] + dz if is_slow else
                     s1 - (s1 - s0) * c + (z[i] - s0) * e)
        return np.array(z)

    def _admit(self, qd: np.ndarray) -> np.ndarray:
        """Velocities after the ``outside`` policy."""
        if self.validity is None or self.outside == "ignore" or qd.size == 0:
            return qd
        low, high = self.validity
        if self.outside == "clamp":
            return np.clip(qd, low, high)
        lo, hi = float(np.min(qd)), float(np.max(qd))
        if not self._warned and (lo < low or hi > high):
            self._warned = True
            extreme = lo if low - lo >= hi - high else hi
            warnings.warn(f"velocity {extreme:.4g} {self.unit} is outside the validity range "
                          f"[{low:.4g}, {high:.4g}] {self.unit} of the identification data "
                          "(the friction extrapolates; warned once until reset)",
                          OutsideValidityWarning, stacklevel=4)
        return qd

