"""A joint model written as equations with units, as a reader would write it down.

>>> print("\\n".join(model_equations(JointModel.load("data/example/truth.json"))))
τ = 1.50 kg·m² q̈ + 25.0 N·m cos q − 6.00 N·m sin q + σ0 z + σ1 ż + 9.00 N·m·s/rad q̇ + …
ż = q̇ − σ0 |q̇| z / g(q̇)
g(q̇) = 18.0 N·m + 7.00 N·m exp(−|q̇ / 0.0800 rad/s|^1.5)
σ0 = 1.50·10⁴ N·m/rad, σ1 = 60.0 N·m·s/rad

Each coefficient carries its unit, so a term reads as a torque [N·m] (a force [N] for a
prismatic axis); terms with a zero coefficient are left out. ``unicode=False`` writes the same in
ASCII (``tau = 1.50 kg*m^2 qdd + ...``) for logs and C comments.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sparsefric.model import JointModel

_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
_NORMAL = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")
#: Plain-text spelling of the symbols and units (superscripts become ^n after these).
_PLAIN = (("τ", "tau"), ("q̈", "qdd"), ("q̇", "qd"), ("ż", "zd"), ("σ", "sigma"), ("−", "-"),
          ("·", "*"), ("cos q", "cos(q)"), ("sin q", "sin(q)"))


def model_equations(model: JointModel, precision: int = 3, *,
                    unicode: bool = True) -> list[str]:
    """The equations of ``model``: the torque, then the friction's state and curve.

    Parameters
    ----------
    model : JointModel
        A static or LuGre model (model A or B), revolute or prismatic.
    precision : int
        Significant digits of the coefficients.
    unicode : bool
        Symbols as in the documentation (τ, q̇, σ0, kg·m²); False: ASCII.

    Returns
    -------
    list of str
        τ = rigid body + friction; for LuGre ż; g(q̇) when the Coulomb–Stribeck level enters
        the model; s(q̇) for model B; for LuGre the parameters σ0, σ1.
    """
    f = _Formatter(model, precision, unicode)
    u = f.u
    lines = [f"τ = {f.torque()}"]
    if model.kind == "lugre":
        lines.append(f"ż = q̇ − σ0 |q̇| z / {f.level_product()}")
    if model.kind == "lugre" or model.coulomb or model.stribeck:
        lines.append(f"g(q̇) = {f.level()}")
    if model.tanh_k > 0:
        lines.append(f"s(q̇) = tanh({f.number(model.tanh_k)} {u['vel']} · q̇)")
    if model.kind == "lugre":
        lines.append(f"σ0 = {f.number(model.sigma0)} {u['stiff']}, "
                     f"σ1 = {f.number(model.sigma1)} {u['damp']}")
    return lines if unicode else [_plain(line) for line in lines]


#: A term of a sum: (coefficient, what it multiplies) or a symbolic term (always added).
Term = tuple[float, str] | str


class _Formatter:
    """Numbers and sums of terms of one model at one precision."""

    def __init__(self, model: JointModel, precision: int, unicode: bool):
        self.m = model
        self.precision = precision
        self.unicode = unicode
        self.u = model.units

    def number(self, x: float) -> str:
        """``x`` with ``precision`` significant digits (a power of ten as ·10ⁿ or e±n)."""
        text = f"{x:#.{self.precision}g}"
        mantissa, _, exponent = text.partition("e")
        mantissa = mantissa.rstrip(".")
        if not exponent:
            return mantissa
        if not self.unicode:
            return f"{mantissa}e{exponent}"
        return f"{mantissa}·10{str(int(exponent)).translate(_SUPERSCRIPT)}"

    def sum(self, terms: list[Term]) -> str:
        """``c₁ x₁ + c₂ x₂ − …`` of the symbolic terms and the non-zero coefficients."""
        parts: list[tuple[str, str]] = []
        for term in terms:
            if isinstance(term, str):
                parts.append(("+", term))
            elif term[0] != 0:
                coef, rest = term
                parts.append(("−" if coef < 0 else "+", f"{self.number(abs(coef))} {rest}"))
        if not parts:
            return "0"
        first_sign, first = parts[0]
        return ("−" if first_sign == "−" else "") + first + "".join(
            f" {sign} {body}" for sign, body in parts[1:])

    def torque(self) -> str:
        """I q̈ + gravity + offset + friction (+ the viscous terms)."""
        m, u = self.m, self.u
        terms: list[Term] = [(m.inertia, f"{u['inertia']} q̈")]
        if m.axis == "revolute":
            terms += [(m.gravity_cos, f"{u['tau']} cos q"), (m.gravity_sin, f"{u['tau']} sin q")]
        terms.append((m.offset, u["tau"]))
        if m.kind == "lugre":
            terms.append("σ0 z + σ1 ż")
        elif m.coulomb or m.stribeck:
            terms.append(f"{'s(q̇)' if m.tanh_k > 0 else 'sign(q̇)'} g(q̇)")
        terms += [(c, f"{u['tau']}·{u['vel']} q̇" if p == 1 else
                   f"{u['tau']}·({u['vel']}){_power(p)} q̇{_power(p)}") for p, c in m.viscous]
        return self.sum(terms)

    def level_product(self) -> str:
        """The denominator of ż: g(q̇), times |s(q̇)| for model B."""
        return "(g(q̇) |s(q̇)|)" if self.m.tanh_k > 0 else "g(q̇)"

    def level(self) -> str:
        """The Coulomb–Stribeck level f_c + Σ A exp(−|q̇/Ω_s|^δ)."""
        m, u = self.m, self.u
        omega = f"{self.number(m.stribeck_velocity)} {u['qd']}"
        return self.sum([(m.coulomb, u["tau"])]
                        + [(a, f"{u['tau']} exp(−|q̇ / {omega}|^{d:g})") for d, a in m.stribeck])


def _power(p: int) -> str:
    return str(p).translate(_SUPERSCRIPT)


def _plain(line: str) -> str:
    """``line`` in ASCII: symbols spelled out, superscripts as ^n."""
    for fancy, plain in _PLAIN:
        line = line.replace(fancy, plain)
    return re.sub("[⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+", lambda m: "^" + m.group(0).translate(_NORMAL), line)
