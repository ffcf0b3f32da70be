"""The model written as equations with units, in Unicode and in ASCII."""

from __future__ import annotations

import pytest

from sparsefric.model import JointModel

from .conftest import EXAMPLE


@pytest.fixture(scope="module")
def truth() -> JointModel:
    return JointModel.load(EXAMPLE / "truth.json")


def test_lugre_model_a(truth):
    assert truth.equations() == [
        "τ = 1.50 kg·m² q̈ + 25.0 N·m cos q − 6.00 N·m sin q + σ0 z + σ1 ż "
        "+ 9.00 N·m·s/rad q̇ + 0.800 N·m·(s/rad)³ q̇³",
        "ż = q̇ − σ0 |q̇| z / g(q̇)",
        "g(q̇) = 18.0 N·m + 7.00 N·m exp(−|q̇ / 0.0800 rad/s|^1.5)",
        "σ0 = 1.50·10⁴ N·m/rad, σ1 = 60.0 N·m·s/rad",
    ]


def test_plain_text_is_ascii(truth):
    lines = truth.equations(precision=2, unicode=False)
    assert lines == [
        "tau = 1.5 kg*m^2 qdd + 25 N*m cos(q) - 6.0 N*m sin(q) + sigma0 z + sigma1 zd "
        "+ 9.0 N*m*s/rad qd + 0.80 N*m*(s/rad)^3 qd^3",
        "zd = qd - sigma0 |qd| z / g(qd)",
        "g(qd) = 18 N*m + 7.0 N*m exp(-|qd / 0.080 rad/s|^1.5)",
        "sigma0 = 1.5e+04 N*m/rad, sigma1 = 60 N*m*s/rad",
    ]
    assert all(line.isascii() for line in lines)


def test_model_b_has_the_tanh_and_its_state_equation(truth):
    lines = truth.with_(tanh_k=150.0, offset=-0.3).equations()
    assert " − 0.300 N·m + σ0 z" in lines[0]
    assert lines[1] == "ż = q̇ − σ0 |q̇| z / (g(q̇) |s(q̇)|)"
    assert lines[3] == "s(q̇) = tanh(150 s/rad · q̇)"


def test_static_prismatic_in_its_units(truth):
    model = truth.with_(axis="prismatic", kind="static", inertia=95.1,
                        viscous=((1, -203.5), (2, 0.5)))
    assert model.equations() == [
        "τ = 95.1 kg q̈ + sign(q̇) g(q̇) − 204 N·s/m q̇ + 0.500 N·(s/m)² q̇²",
        "g(q̇) = 18.0 N + 7.00 N exp(−|q̇ / 0.0800 m/s|^1.5)",
    ]


def test_terms_with_zero_coefficients_are_left_out(truth):
    empty = truth.with_(kind="static", inertia=0.0, gravity_cos=0.0, gravity_sin=0.0,
                        coulomb=0.0, stribeck=(), viscous=())
    assert empty.equations() == ["τ = 0"]
    leading_minus = empty.with_(offset=-2.5)
    assert leading_minus.equations() == ["τ = −2.50 N·m"]
