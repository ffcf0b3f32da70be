"""Exported friction code: compiled C and the numpy-only module match the Python object."""

from __future__ import annotations

import functools
import importlib.util
import re
import shutil
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pytest

from sparsefric import lugre
from sparsefric.errors import SparsefricError
from sparsefric.export import C_TYPES, exp_truncation_error, export_model
from sparsefric.model import JointModel
from sparsefric.validity import ValidityRange

from .conftest import EXAMPLE
from .recorded import DT, recorded_velocity

N = 100_000
DRIVER = Path(__file__).resolve().parent / "export_driver.c"
#: Agreement with the Python object: double to 1e-9 relative (1e-12 of the largest torque where
#: the torque crosses zero); float to its own precision.
TOLERANCE = {"double": (1e-9, 1e-12), "float": (1e-4, 2e-5)}


def _truth() -> JointModel:
    return JointModel.load(EXAMPLE / "truth.json")


#: The models exported: A and B, a static one, two Stribeck terms without viscous terms, and
#: one with no Coulomb level whose g(q̇) collapses from 11 N·m to 1e-120 within the record.
MODELS = {
    "model_A": _truth(),
    "model_B": _truth().with_(tanh_k=150.0),
    "static": _truth().with_(kind="static", sigma0=0.0, sigma1=0.0),
    "two_stribeck_no_viscous": _truth().with_(
        stribeck=((0.5, 0.3165), (1.5, 6.748)), viscous=(), coulomb=17.94,
        stribeck_velocity=0.0801),
    "collapsing_g": _truth().with_(coulomb=0.0, stribeck_velocity=0.02, stribeck=((3.0, 11.0),),
                                   viscous=((1, 1.0),), sigma0=1e4, sigma1=60.0),
}


@functools.cache
def _inputs() -> tuple[np.ndarray, np.ndarray]:
    """The recorded velocity [rad/s] and a sample period varying by ±1 % [s]."""
    return recorded_velocity(N), DT * (1 + 0.01 * np.sin(np.arange(N)))


@pytest.fixture(scope="module")
def cc() -> str:
    found = shutil.which("cc")
    if found is None:
        pytest.skip("no C compiler found as 'cc': the exported C code cannot be compiled here")
    return found


def _build(cc: str, model: JointModel, out: Path, prefix: str = "sparsefric_friction",
           optimise: str = "-O2") -> Path:
    """Export ``model`` as C into ``out`` and compile it with the test driver (``optimise``:
    the optimisation options), warnings as errors."""
    export_model(model, "c", out, prefix=prefix)
    exe = out / "driver"
    subprocess.run([cc, "-std=c99", *optimise.split(), "-Wall", "-Wextra", "-pedantic", "-Werror",
                    f"-DPREFIX={prefix}", f'-DHEADER="{prefix}.h"', f"-I{out}", str(DRIVER),
                    str(out / f"{prefix}.c"), "-lm", "-o", str(exe)],
                   check=True, capture_output=True, text=True)
    return exe


def _run(exe: Path, kind: str, real: str,
         qd: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, int]:
    """(τ_f, z or the second instance's τ_f, samples outside the range) of the driver on ``qd``
    [rad/s] (the recorded velocity if None)."""
    qd, h = _inputs() if qd is None else (qd, np.full(len(qd), DT))
    return _drive(exe, kind, real, qd, h)[:3]


def _drive(exe: Path, kind: str, real: str, qd: np.ndarray,
           h: np.ndarray) -> tuple[np.ndarray, np.ndarray, int, int]:
    """(τ_f, z or the second instance's τ_f, samples outside the range, samples refused) of the
    driver on ``qd`` [rad/s] with periods ``h`` [s]."""
    np.r_[len(qd), DT, qd, h].tofile(exe.parent / "in.bin")
    done = subprocess.run([str(exe), kind, real, "in.bin", "out.bin"], cwd=exe.parent,
                          check=True, capture_output=True, text=True)
    out = np.fromfile(exe.parent / "out.bin").reshape(2, len(qd))
    outside, refused = map(int, done.stdout.split())
    return out[0], out[1], outside, refused


def _assert_matches(actual: np.ndarray, expected: np.ndarray, real: str = "double") -> None:
    rtol, atol = TOLERANCE[real]
    np.testing.assert_allclose(actual, expected, rtol=rtol,
                               atol=atol * float(np.max(np.abs(expected))))


@pytest.fixture(scope="module", params=list(MODELS))
def built(request, cc, tmp_path_factory):
    model = MODELS[request.param]
    return model, _build(cc, model, tmp_path_factory.mktemp(request.param))


@pytest.mark.parametrize("real", ["double", "float"])
def test_c_fixed_and_variable_step_match_the_python_object(built, real):
    model, exe = built
    qd, h = _inputs()
    fixed, z, outside = _run(exe, "fixed", real)
    _assert_matches(fixed, model.friction_object().simulate(qd, DT)[0], real)
    variable, _, _ = _run(exe, "variable", real)
    _assert_matches(variable, model.friction_object().simulate(qd, h)[0], real)
    assert outside == 0  # no validity range recorded
    if model.kind == "static":
        assert not np.any(z)


def test_c_instances_are_independent(built):
    model, exe = built
    qd, _ = _inputs()
    first, second, _ = _run(exe, "pair", "double")
    _assert_matches(first, model.friction_object().simulate(qd, DT)[0])
    _assert_matches(second, model.friction_object().simulate(-qd, DT)[0])


def test_c_static_curve(built):
    model, exe = built
    curve, _, _ = _run(exe, "static", "double")
    _assert_matches(curve, model.static_friction(_inputs()[0]))


@pytest.mark.parametrize("real, ulp, normal", [("double", 2.0 ** -52, 708.39),
                                                ("float", 2.0 ** -23, 87.33)])
def test_c_exponential_is_within_its_truncation_error(cc, tmp_path, real, ulp, normal):
    """The C code's own exp(−x), seen through the static curve sign(q̇) exp(−|q̇|/Ω_s) of a model
    without Coulomb level and with one Stribeck term of δ = 1: relative error within the Taylor
    polynomial's bound plus (2 + x) ulp while exp(−x) is a normal number (libm's exp takes over
    for its last 0.7), and within (2 + x) ulp alone for x < ln 2/512, where the polynomial is
    near its exact centre (the slow bristle decay, whose errors z accumulates)."""
    model = _truth().with_(kind="static", sigma0=0.0, sigma1=0.0, coulomb=0.0, viscous=(),
                           stribeck=((1.0, 1.0),), stribeck_velocity=1.0)
    exe = _build(cc, model, tmp_path)
    x = np.r_[np.geomspace(1e-9, 1.0, 1000), np.linspace(1.0, normal, 20_000)]
    if real == "float":
        x = x.astype(np.float32).astype(float)
    curve, _, _ = _run(exe, "static", real, np.r_[x, -x])
    error = np.abs(curve - np.r_[np.exp(-x), -np.exp(-x)]) / np.exp(-np.r_[x, x])
    rounding = (2.0 + np.r_[x, x]) * ulp
    degree = int(next(t for t in C_TYPES if t["REAL"] == real)["EXP_DEGREE"])
    assert np.max(error - rounding) <= exp_truncation_error(degree)
    near_centre = np.r_[x, x] < np.log(2) / 512
    assert np.max(error[near_centre] - rounding[near_centre]) <= 0.0


@pytest.mark.parametrize("optimise", ["-O2 -ffast-math", "-O0 -ffast-math",
                                      "-O2 -funsafe-math-optimizations"])
def test_c_keeps_its_precision_where_the_compiler_may_reassociate(cc, tmp_path, optimise):
    """The inline exp rounds by adding and subtracting 1.5 2^52, which these options would
    cancel (a 0.7 % error in exp): there it rounds by integer conversions."""
    model = MODELS["model_B"]
    exe = _build(cc, model, tmp_path, optimise=optimise)
    qd, h = _inputs()
    for real in ("double", "float"):
        _assert_matches(_run(exe, "variable", real)[0],
                        model.friction_object().simulate(qd, h)[0], real)


def test_c_counts_and_clamps_velocities_outside_the_range(cc, tmp_path):
    qd, _ = _inputs()
    bounded = _truth().with_(validity=ValidityRange(velocity=(-0.1, 0.12)))
    exe = _build(cc, bounded, tmp_path, prefix="joint3_friction")
    free, _, outside = _run(exe, "fixed", "double")
    assert outside == np.count_nonzero((qd < -0.1) | (qd > 0.12)) > 0
    _assert_matches(free, bounded.friction_object(outside="ignore").simulate(qd, DT)[0])
    clamped, _, _ = _run(exe, "clamp", "double")
    _assert_matches(clamped,
                    bounded.friction_object(outside="clamp").simulate(qd, DT)[0])


def _with_bad_samples(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The recorded velocity [rad/s] and period [s] of n samples with bad ones among them:
    velocities NaN and ±inf, periods NaN, inf, negative and 0."""
    qd, h = recorded_velocity(n), np.full(n, DT)
    qd[[300, 301, 900]] = [np.nan, np.inf, -np.inf]
    h[[500, 1200, 1201, 1500]] = [np.nan, np.inf, -DT, 0.0]
    return qd, h


def _skipping(f, qd: np.ndarray, h: np.ndarray) -> tuple[np.ndarray, int]:
    """τ_f [N·m] of a friction object stepped along ``qd``, ``h``, a refused sample skipped and
    given the last friction (0 before the first), and the count of refused samples."""
    tau, last, refused = [], 0.0, 0
    for v, dt in zip(qd, h, strict=True):
        try:
            last = f.step(v, dt)
        except ValueError:
            refused += 1
        tau.append(last)
    return np.array(tau), refused


@pytest.mark.parametrize("optimise", ["-O2", "-O2 -ffast-math"])
@pytest.mark.parametrize("real", ["double", "float"])
def test_c_refuses_a_bad_sample_as_python_does(cc, tmp_path, optimise, real):
    """A NaN or infinite velocity or a bad period leaves the state as it was and returns the
    last friction, where it made every later friction NaN or ran z backwards; the Python object
    raises there, and both go on alike."""
    model = MODELS["model_B"]
    exe = _build(cc, model, tmp_path, optimise=optimise)
    qd, h = _with_bad_samples(2000)
    tau, z, outside, refused = _drive(exe, "variable", real, qd, h)
    expected, count = _skipping(model.friction_object(), qd, h)
    assert refused == count == 7 and outside == 0
    _assert_matches(tau, expected, real)
    assert np.all(np.isfinite(z))


def test_c_init_refuses_a_period_that_is_not_finite(cc, tmp_path):
    exe = _build(cc, MODELS["model_A"], tmp_path)
    for dt in (np.inf, np.nan, -DT):
        np.r_[1, dt, 0.1, DT].tofile(tmp_path / "in.bin")
        done = subprocess.run([str(exe), "fixed", "double", "in.bin", "out.bin"], cwd=tmp_path,
                              capture_output=True, text=True)
        assert done.returncode == 3, dt


def test_c_files_say_where_they_come_from_and_how_to_use_them(tmp_path):
    model = _truth().with_(extra={"software": "sparsefric 0.1.0",
                                  "created": "2025-01-02T03:04:05+00:00"})
    header, source = export_model(model, "c", tmp_path, prefix="arm_j2")
    assert [header.name, source.name] == ["arm_j2.h", "arm_j2.c"]
    text = header.read_text()
    assert text.isascii()
    for needed in ("software: sparsefric 0.1.0", "created: 2025-01-02T03:04:05+00:00",
                   "velocity qd [rad/s]", "friction [N*m]", "arm_j2_init(&f, &arm_j2_model",
                   "arm_j2_step(&f, qd)", "model A", "static const arm_j2_params arm_j2_model",
                   "static const arm_j2_paramsf arm_j2_modelf", ".coulomb = 18.0f,"):
        assert needed in text, needed
    assert "software: sparsefric 0.1.0" in source.read_text()
    prismatic = export_model(model.with_(axis="prismatic", tanh_k=150.0), "c", tmp_path)[0]
    assert "friction [N]" in prismatic.read_text() and "K [s/m]" in prismatic.read_text()


def _module(model: JointModel, out: Path):
    (path,) = export_model(model, "python", out, prefix="joint_friction")
    spec = importlib.util.spec_from_file_location(f"exported_{out.name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, path.read_text()


@pytest.mark.parametrize("name", list(MODELS))
def test_python_module_matches_the_python_object(name, tmp_path):
    model = MODELS[name]
    module, text = _module(model, tmp_path)
    imports = re.findall(r"^(?:from|import) (\S+)", text, flags=re.M)
    assert set(imports) == {"__future__", "contextlib", "warnings", "numpy"}
    qd, h = _inputs()
    f = module.LuGreFriction()
    ours = model.friction_object()
    _assert_matches(f.simulate(qd, h)[0], ours.simulate(qd, h)[0])
    f.reset(1e-4)
    ours.reset(1e-4)
    stepped = [f.step(v, DT) for v in qd[:300]]
    _assert_matches(np.r_[stepped, f.simulate(qd[300:2000], DT)[0]],
                    ours.simulate(qd[:2000], DT)[0])
    assert f.z == pytest.approx(ours.z, rel=1e-9, abs=1e-15)
    _assert_matches(f.static_curve(qd[:500]), model.static_friction(qd[:500]))
    assert (module.SETTLED, module.G_FLOOR) == (lugre.SETTLED, lugre.G_FLOOR)


def test_python_module_honours_the_validity_range(tmp_path):
    bounded = _truth().with_(validity=ValidityRange(velocity=(-0.1, 0.12)))
    module, text = _module(bounded, tmp_path)
    assert "qd in [-0.1, 0.12] rad/s" in text
    qd = np.r_[0.0, 0.05, 0.3, -0.5, 0.1]
    f = module.LuGreFriction()
    with pytest.warns(module.OutsideValidityWarning, match=r"velocity 0.2 rad/s is outside the "
                      r"validity range \[-0.1, 0.12\] rad/s") as record:
        f.step(0.2, DT)
        f.simulate(qd, DT)
    assert len(record) == 1 and record[0].filename == __file__
    f.reset()
    with pytest.warns(module.OutsideValidityWarning, match="velocity -0.5 rad/s") as record:
        f.simulate(qd, DT)
    assert record[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clamped, _ = module.LuGreFriction(outside="clamp").simulate(qd, DT)
    ours = bounded.friction_object(outside="clamp")
    _assert_matches(clamped, ours.simulate(qd, DT)[0])
    with pytest.raises(ValueError, match="option outside must be one of"):
        module.LuGreFriction(outside="stop")


@pytest.mark.parametrize("name", ["model_A", "static"])
def test_python_module_refuses_a_bad_sample_as_the_object_does(name, tmp_path):
    model = MODELS[name]
    module, _ = _module(model, tmp_path)
    qd, h = _with_bad_samples(2000)
    tau, refused = _skipping(module.LuGreFriction(), qd, h)
    expected, count = _skipping(model.friction_object(), qd, h)
    assert refused == count == 7
    _assert_matches(tau, expected)
    f = module.LuGreFriction()
    f.step(0.1, np.nan)  # the period before the first sample is not used
    z = f.z
    for qd_bad, dt_bad, message in [
            (np.nan, DT, r"^qd must be a finite velocity \[rad/s\], got nan$"),
            (0.1, -DT, r"^dt must be a positive, finite time step \[s\], got -0.001$"),
            ("fast", DT, r"^qd must be a finite velocity \[rad/s\], got 'fast'$"),
            (None, DT, r"^qd must be a finite velocity \[rad/s\], got None$"),
            ([0.1, 0.2], DT, r"^qd must be a finite velocity \[rad/s\], got \[0.1, 0.2\]$"),
            (0.1, "fast", r"^dt must be a positive, finite time step \[s\], got 'fast'$")]:
        with pytest.raises(ValueError, match=message):
            f.step(qd_bad, dt_bad)
    with pytest.raises(ValueError, match=r"^qd\[2\] must be a finite velocity"):
        f.simulate([0.1, 0.1, np.inf], DT)
    with pytest.raises(ValueError, match=r"^dt\[1\] must be a positive, finite time step"):
        f.simulate([0.1, 0.1], [DT, 0.0])
    with pytest.raises(ValueError, match=r"^dt must be a number or hold one time step per "
                                         r"velocity \(3\), got 2$"):
        f.simulate([0.1, 0.1, 0.1], [DT, DT])
    assert f.z == z
    with pytest.raises(ValueError, match=r"^z0 must be a finite deflection \[rad\], got nan$"):
        f.reset(np.nan)


@pytest.mark.parametrize("lang, prefix, message", [
    ("fortran", "f", "export language must be one of c, python, got 'fortran'"),
    ("c", "my-friction", "export prefix must be a C identifier, got 'my-friction'"),
])
def test_bad_options_are_named(tmp_path, lang, prefix, message):
    with pytest.raises(SparsefricError, match=re.escape(message)):
        export_model(_truth(), lang, tmp_path, prefix=prefix)
    assert not any(tmp_path.iterdir())
