r"""Code export: the identified friction as dependency-free C99 or as a numpy-only Python module.

A controller compensates friction sample by sample; a simulation steps the joint. Both need
the friction with its bristle state and none of the identification machinery, so the model is
written out as code with its parameters baked in:

* ``lang="c"``: ``PREFIX.h`` and ``PREFIX.c`` (C99 with the standard headers ``<math.h>``,
  ``<stdint.h>`` and ``<string.h>`` only, no allocation, no mutable globals). A parameter
  struct with the identified values as a ``static const`` initialiser, an instance struct
  (parameters, precomputed values, state), ``init``/``reset``, ``step`` at the fixed period
  given to ``init`` and ``step_dt`` with the period per call, and ``static`` for the
  steady-state curve; each in ``double`` and, with the suffix ``f``, ``float``.
* ``lang="python"``: ``PREFIX.py`` with the API of :class:`sparsefric.lugre.LuGreFriction`
  (``step``, ``simulate``, ``reset``, ``z``, ``static_curve``) on numpy alone.

Both apply the update of :class:`~sparsefric.lugre.LuGreFriction`: over the interval h from the
previous sample, z is integrated exactly with the rate of the mean velocity v and mean g_m of its
ends and, where q̇ keeps its sign, the steady state linear between the samples' values z_0, z_1,

.. math:: z \leftarrow z_1 - (z_1 - z_0)\frac{1 - e^{-a h}}{a h} + (z - z_0) e^{-a h},\quad
          a = \sigma_0 r(v)/g_m,\quad z_j = s(\dot q_j) g(\dot q_j)/\sigma_0

(where q̇ reverses or stops, z_0 = z_1 = s(v) g_m/\sigma_0),
then :math:`\tau_f = \sigma_0 z + \sigma_1 (\dot q - \sigma_0 r(\dot q) z/g) + \tau_v(\dot q)`
with r(q̇) = q̇/s(q̇). The C step skips only what cannot change the result in its precision: a
Stribeck term below half an ulp of f_c (|q̇| above a speed precomputed by ``init``; this
includes e^{−u} underflowing to 0) and tanh(y) where it rounds to 1; δ = k/4 (the library's
grid 0.5, 0.75, …, 4) uses products and square roots instead of ``pow``. What remains per
sample is one exp per Stribeck term that is not negligible at that speed, one exp for the bristle
decay (two more for model B's tanh) and two divisions (three where q̇ keeps its sign). The exp
is the code's own, inline (a table of 2^(−j/128) and a Taylor polynomial, within 1.2e-15
(double) of e^{−x} beyond rounding), rather than libm's function call: no call, 128/ln 2 and
the term's factor folded into the step's constants, and the compiler schedules it with the rest
of the step — a shorter chain of dependent operations per sample, which is what bounds the step
(see benchmarks/bench_export.py).
"""

from __future__ import annotations

import math
import os
import pprint
import re
import struct
from decimal import Decimal, localcontext
from importlib import resources
from pathlib import Path

from sparsefric.atomic import write_text
from sparsefric.errors import SparsefricError
from sparsefric.lugre import G_FLOOR, SETTLED
from sparsefric.model import FORMAT, JointModel, units

#: Languages of :func:`export_model`.
LANGS = ("c", "python")
#: Default name of the generated files and prefix of the C identifiers.
DEFAULT_PREFIX = "sparsefric_friction"
#: Smallest capacity of the C parameter arrays (a loaded parameter set may have more terms).
C_CAPACITY = {"stribeck": 4, "viscous": 6, "power": 8}
#: Per C type: the suffix of its functions, types and literals; tanh(y) == 1 beyond TANH_ONE;
#: exp(−u) == 0 beyond LN_TINY; LN_HALF_ULP = ln 2^(mantissa bits + 1).
#: The exponential (see ``exp_`` in friction.c.in) has a table of 2^(-j/EXP_STEPS) and a
#: polynomial of EXP_DEGREE; UINT holds the type's bits, MANT is their number below the exponent
#: and BIAS its bias; 2^(-t/EXP_STEPS) is normal for t <= EXP_TOP.
C_TYPES = (
    {"REAL": "double", "F": "", "TANH_ONE": "20.0", "LN_TINY": "746.0",
     "LN_HALF_ULP": "37.42994775023705", "MANTISSA_PLUS_ONE": "54",
     "UINT": "uint64_t", "MANT": "52", "BIAS": "1023", "EXP_TOP": "130000", "EXP_DEGREE": "4"},
    {"REAL": "float", "F": "f", "TANH_ONE": "10.0", "LN_TINY": "104.0",
     "LN_HALF_ULP": "17.328679513998633", "MANTISSA_PLUS_ONE": "25",
     "UINT": "uint32_t", "MANT": "23", "BIAS": "127", "EXP_TOP": "16000", "EXP_DEGREE": "2"},
)
#: Entries of the exponential's table (a power of 2): exp(-x) = 2^(-t/EXP_STEPS) with
#: t = x EXP_STEPS/ln 2.
EXP_STEPS = 128
_TOKEN = re.compile(r"@([A-Z][A-Z0-9_]*)@")
_REAL_BLOCK = re.compile(r"/\*@BEGIN_REAL@\*/\n(.*?)/\*@END_REAL@\*/\n", re.S)


def file_names(lang: str, prefix: str = DEFAULT_PREFIX) -> list[str]:
    """The names of the files :func:`export_model` writes for ``lang`` and ``prefix``."""
    return [f"{prefix}.h", f"{prefix}.c"] if lang == "c" else [f"{prefix}.py"]


def export_model(model: JointModel, lang: str, out_dir: str | os.PathLike, *,
                 prefix: str = DEFAULT_PREFIX) -> list[Path]:
    """Write the friction of ``model`` as code.

    Parameters
    ----------
    model : JointModel
        A LuGre or static model (model A or B); its validity range of q̇ is kept.
    lang : {"c", "python"}
        ``"c"``: ``PREFIX.h`` and ``PREFIX.c``; ``"python"``: ``PREFIX.py``.
    out_dir : path
        Directory of the files (created if missing).
    prefix : str
        File name and prefix of the C identifiers (a C identifier).

    Returns
    -------
    list of Path
        The files written.
    """
    if lang not in LANGS:
        raise SparsefricError(f"export language must be one of {', '.join(LANGS)}, got {lang!r}")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", prefix):
        raise SparsefricError(f"export prefix must be a C identifier, got {prefix!r}")
    files = _c_files(model, prefix) if lang == "c" else _python_files(model, prefix)
    out = Path(out_dir)
    for name, text in files.items():
        write_text(out / name, text)
    return [out / name for name in files]


def _template(name: str) -> str:
    return resources.files("sparsefric").joinpath("templates", name).read_text("utf-8")


def _fill(text: str, tokens: dict[str, str], *, partial: bool = False) -> str:
    """Replace ``@NAME@`` by ``tokens[NAME]``; ``partial`` leaves unknown names for later."""
    def value(m: re.Match) -> str:
        return tokens.get(m.group(1), m.group(0)) if partial else tokens[m.group(1)]
    return _TOKEN.sub(value, text)


def _provenance(model: JointModel) -> str:
    """Which model the code comes from: the writer's ``software`` and ``created`` keys."""
    known = [f"{key}: {model.extra[key]}" for key in ("software", "created", "provenance")
             if key in model.extra]
    return "; ".join(known) if known else "origin not recorded in the model"


def _description(model: JointModel, comment: str) -> list[str]:
    """Lines of the generated files' header: origin, model, units (``comment`` marks ASCII)."""
    from sparsefric import __version__

    u = units(model.axis)
    sign = (f"model B, s(qd) = tanh(K qd), K = {model.tanh_k!r} s/{u['q']}" if model.tanh_k > 0
            else "model A, s(qd) = sign(qd)")
    kind = (["LuGre: tau_f = sigma0 z + sigma1 zdot + tau_v(qd),",
             "zdot = qd - sigma0 |qd| z / (g(qd) |s(qd)|) (z: bristle deflection),"]
            if model.kind == "lugre" else ["static: tau_f = s(qd) g(qd) + tau_v(qd),"])
    v = model.validity.velocity if model.validity is not None else None
    lines = [
        f"Joint friction generated by sparsefric {__version__} from a {FORMAT} model",
        f"({_provenance(model)}).",
        "Do not edit: export the model again.",
        "",
        f"Friction of a {model.axis} axis, {kind[0]}",
        *kind[1:],
        "g(qd) = f_c + sum_i A_i exp(-|qd/Omega_s|^delta_i), tau_v(qd) = sum_p c_p qd^p;",
        f"{sign}.",
        f"Units: position and z [{u['q']}], velocity qd [{u['qd']}], friction [{u['tau']}], "
        "time [s].",
        ("Validity: the identification data covered qd in "
         f"[{v[0]!r}, {v[1]!r}] {u['qd']}." if v else "Validity: no range recorded."),
    ]
    return [_safe(line, comment) for line in lines]


def _safe(line: str, comment: str) -> str:
    """A line that cannot end the comment it is in, ASCII for C."""
    if comment == "c":
        line = line.replace("·", "*").replace("²", "^2").replace("*/", "* /").replace("/*", "/ *")
        line = line.encode("ascii", "backslashreplace").decode()
    return line.replace('"""', "'''").replace("\\", "/")


# ------------------------------------------------------------------------------------------ C
def _c_number(x: float, suffix: str) -> str:
    return f"{float(x)!r}{suffix}"


def _c_array(values: list[str]) -> str:
    return "{" + ", ".join(values or ["0"]) + "}"


def _c_params(model: JointModel, prefix: str, t: dict[str, str]) -> str:
    """The designated initialiser of the parameter struct in one C type."""
    f = t["F"]
    v = model.validity.velocity if model.validity is not None else None
    low, high = (_c_number(x, f) for x in v) if v else (f"-HUGE_VAL{f.upper()}",
                                                         f"HUGE_VAL{f.upper()}")
    fields = {
        "kind": f"{prefix.upper()}_{model.kind.upper()}",
        "tanh_k": _c_number(model.tanh_k, f),
        "coulomb": _c_number(model.coulomb, f),
        "stribeck_velocity": _c_number(model.stribeck_velocity, f),
        "n_stribeck": str(len(model.stribeck)),
        "delta": _c_array([_c_number(d, f) for d, _ in model.stribeck]),
        "amplitude": _c_array([_c_number(a, f) for _, a in model.stribeck]),
        "n_viscous": str(len(model.viscous)),
        "power": _c_array([str(p) for p, _ in model.viscous]),
        "coefficient": _c_array([_c_number(c, f) for _, c in model.viscous]),
        "sigma0": _c_number(model.sigma0 if model.kind == "lugre" else 0.0, f),
        "sigma1": _c_number(model.sigma1 if model.kind == "lugre" else 0.0, f),
        "velocity_min": low,
        "velocity_max": high,
        "clamp": "0",
    }
    return "{\n" + "".join(f"    .{k} = {x},\n" for k, x in fields.items()) + "}"


def _c_real(x: Decimal | float, t: dict[str, str]) -> str:
    """``x`` rounded to the C type of ``t`` as a literal of that type."""
    value = float(x)
    if t["REAL"] == "float":
        value = struct.unpack("f", struct.pack("f", value))[0]
    return _c_number(value, t["F"])


def _c_exp_tokens(t: dict[str, str]) -> dict[str, str]:
    """Table, polynomial and constants of the inline exponential in the C type of ``t``.

    exp(−x) = 2^(−t/N), t = x N/ln 2 = N m + j + d (N = EXP_STEPS; m, j integers, 0 ≤ j < N,
    |d| ≤ 1/2) is 2^−m (exponent bits) times 2^(−j/N) (table) times exp(−d ln 2/N) (Taylor
    polynomial of EXP_DEGREE, see :func:`_c_exp_poly`).

    A Taylor polynomial rather than a minimax one: its error, EXP_ERROR at |d| = 1/2, falls as
    |d|^(EXP_DEGREE + 1) towards d = 0, where the slow bristle decay (small t, d = t) takes it
    sample after sample and z keeps the sum of the errors. The largest deviation of the double
    step from the Python object on the tests' records (tests/test_export.py), as a share of the
    tests' tolerance, model A / model B: 0.5 % / 0.4 % with 128 entries and degree 4 (this code);
    1.3 % / 77 % with 64 entries and degree 4; 0.2 % / 0.1 % with 64 entries and degree 5 (5 %
    slower); 26 % (model A) with 64 entries and the minimax polynomial of degree 4 (16 times
    better at |d| = 1/2, but not exact at 0); 4 and 33 times the tolerance (model A) with 256 and 64
    entries and degree 3. Float: degree 2 is within 0.03 ulp.
    """
    degree = int(t["EXP_DEGREE"])
    with localcontext() as ctx:
        ctx.prec = 40
        ln2 = Decimal(2).ln()
        table = [(-ln2 * j / EXP_STEPS).exp() for j in range(EXP_STEPS)]
        c = -ln2 / EXP_STEPS
        coef = [c ** n / math.factorial(n) for n in range(degree + 1)]
        per_e = EXP_STEPS / ln2
    poly = _c_exp_poly([_c_real(x, t) for x in coef])
    rows = [", ".join(_c_real(x, t) for x in table[i:i + 4]) for i in range(0, len(table), 4)]
    double = t["F"] == ""
    return {"EXP_TABLE": "{\n    " + ",\n    ".join(rows) + ",\n}", "EXP_POLY": poly,
            "PER_E": _c_real(per_e, t), "SHIFT": "0x1.8p52" if double else "0x1.8p23f",
            "SHIFT_BITS": "0x4338000000000000u" if double else "0x4B400000u",
            "EXP_STEPS": str(EXP_STEPS), "EXP_MASK": str(EXP_STEPS - 1),
            "EXP_SHIFT": str(EXP_STEPS.bit_length() - 1),
            "MANT_LESS_ONE": str(int(t["MANT"]) - 1),
            "EXP_ERROR": f"{exp_truncation_error(degree):.1e}",
            # g below this divides the bristle rate as this (lugre.G_FLOOR); in float 1e-150 is
            # 0, and σ1 σ0 r/g must stay below FLT_MAX for σ0 σ1 r up to 1e18
            "G_FLOOR": _c_real(G_FLOOR, t) if double else "1e-20f",
            "SETTLED": _c_real(SETTLED, t)}


def exp_truncation_error(degree: int) -> float:
    """Bound [-] of the relative error of the C code's exponential beyond rounding: its Taylor
    polynomial of ``degree`` at |d| = 1/2, (ln 2/(2 EXP_STEPS))^(degree+1)/(degree+1)! (about
    (d ln 2/EXP_STEPS)^(degree+1)/(degree+1)! at smaller |d|)."""
    return (math.log(2) / (2 * EXP_STEPS)) ** (degree + 1) / math.factorial(degree + 1)


def _c_exp_poly(c: list[str]) -> str:
    """C expression of c_0 + c_1 d + ... + c_n d^n (n = 2 .. 5; d2 = d·d) whose longest chain
    has at most four operations after d·d (Horner's rule has 2n after d): the terms up to d²
    are summed while d³ times the rest is formed, then one addition."""
    low = f"(({c[0]} + d * {c[1]}) + d2 * {c[2]})"
    if len(c) == 3:
        return low
    if len(c) == 4:
        high = f"(d * {c[3]}) * d2"
    else:
        rest = f"({c[3]} + d * {c[4]})"
        if len(c) == 6:
            rest = f"({rest}\n              + d2 * {c[5]})"
        high = f"(d * d2) * {rest}"
    return f"({low}\n           + {high})"


def _c_usage(prefix: str, model: JointModel) -> list[str]:
    u = units(model.axis)
    return [
        "",
        "Use (fixed period, e.g. 1 kHz):",
        f'    #include "{prefix}.h"',
        f"    {prefix}_state f;",
        f"    {prefix}_init(&f, &{prefix}_model, 0.001, 0.0);  // dt [s], z0 [{u['q']}]",
        f"    each period: tau_f = {prefix}_step(&f, qd);  // qd [{u['qd']}]",
        f"Variable period: {prefix}_step_dt(&f, qd, dt) with dt [s] since the last sample.",
        "float: the same names with the suffix f (_statef, _modelf, _initf, _stepf, ...).",
        f"Other parameters: copy {prefix}_model, change fields, pass the copy to init; set",
        ".clamp = 1 to clamp qd to [velocity_min, velocity_max]; f.outside counts the samples",
        "outside that range. A qd that is not finite or a dt that is not positive and finite",
        "is refused (f.rejected counts it): the state stays and the last friction is returned.",
        "Compile with the C99 compiler of the target and link libm (-lm).",
    ]


def _c_files(model: JointModel, prefix: str) -> dict[str, str]:
    comment = "\n".join(f" * {line}".rstrip()
                        for line in _description(model, "c") + _c_usage(prefix, model))
    u = units(model.axis)
    tokens = {
        "PREFIX": prefix, "PREFIX_UC": prefix.upper(), "GUARD": f"{prefix.upper()}_H",
        "HEADER_COMMENT": comment,
        "MAX_STRIBECK": str(max(C_CAPACITY["stribeck"], len(model.stribeck))),
        "MAX_VISCOUS": str(max(C_CAPACITY["viscous"], len(model.viscous))),
        "MAX_POWER": str(max([C_CAPACITY["power"], *(p for p, _ in model.viscous)])),
        "Q": u["q"], "QD": u["qd"], "INV_QD": u["vel"], "TAU": u["tau"].replace("·", "*"),
    }
    variants = [{**t, **_c_exp_tokens(t), "MODEL_INIT": _c_params(model, prefix, t)}
                for t in C_TYPES]

    def render(name: str) -> str:
        text = _REAL_BLOCK.sub(
            lambda m: "\n".join(_fill(m.group(1), v, partial=True) for v in variants),
            _template(name))
        return _fill(text, tokens)

    header, source = file_names("c", prefix)
    return {header: render("friction.h.in"), source: render("friction.c.in")}


# ------------------------------------------------------------------------------------ Python
def _python_files(model: JointModel, prefix: str) -> dict[str, str]:
    friction = model.to_dict()["friction"]
    v = model.validity.velocity if model.validity is not None else None
    baked = {**friction, "axis": model.axis, "validity": list(v) if v else None}
    usage = [
        "",
        "Use::",
        "",
        f"    from {prefix} import LuGreFriction",
        "    f = LuGreFriction()                    # outside='warn' | 'clamp' | 'ignore'",
        "    tau_f = f.step(qd, dt)                 # one sample: qd, dt [s] since the last",
        "    tau_f, z = f.simulate(qd_array, dt)    # a record, continuing from the state",
        "    f.reset()                              # z = 0, no previous sample",
        "",
        "Needs numpy only.",
    ]
    text = _template("friction_module.py")
    text = text.replace('"""@HEADER_COMMENT@\n',
                        '"""' + "\n".join(_description(model, "python") + usage) + "\n")
    literal = "".join(f"    {k!r}: {pprint.pformat(x, sort_dicts=False, width=88)},\n"
                      for k, x in baked.items())
    text = text.replace("MODEL: dict = {}  # @MODEL@", "MODEL: dict = {\n" + literal + "}")
    return {file_names("python", prefix)[0]: text}
