"""Write the corpus of bad input files used by ``tests/test_fuzz.py``.

Run ``python tests/corpus/make_corpus.py`` to regenerate ``tests/corpus/csv/*.csv`` (bad
trajectory files, each rejected by ``sparsefric identify --static-only``) and
``tests/corpus/model/*.json`` (bad model files, each rejected by ``sparsefric predict``). The output
is deterministic: no randomness, fixed number formatting.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
N = 120  # rows of a well-formed trajectory (≥ the loader's 50-sample minimum)
PERIOD = 1e-3


def _rows(n: int = N, period: float = PERIOD) -> list[tuple[float, float, float]]:
    """A small well-formed trajectory: back-and-forth motion, friction-like torque."""
    out = []
    for i in range(n):
        t = i * period
        w = 2 * math.pi * 4.0
        out.append((t, 0.3 * math.sin(w * t), 2.0 * math.copysign(1.0, math.cos(w * t))
                    + 0.5 * math.cos(w * t)))
    return out


def _csv(rows, header: str = "t,q,tau", sep: str = ",") -> str:
    lines = [header.replace(",", sep)]
    lines += [sep.join(v if isinstance(v, str) else f"{v:.9g}" for v in r) for r in rows]
    return "\n".join(lines) + "\n"


def _replace(col: int, row: int, value: str) -> str:
    rows = [list(r) for r in _rows()]
    rows[row][col] = value
    return _csv(rows)


def _with_time(times) -> str:
    return _csv([(t, q, tau) for t, (_, q, tau) in zip(times, _rows(), strict=True)])


def _bad_csvs() -> dict[str, str | bytes]:
    good = _rows()
    half = N // 2
    irregular = [r[0] for r in good]
    irregular[half:] = [t + 0.5 * PERIOD for t in irregular[half:]]
    decreasing = [r[0] for r in good]
    decreasing[half], decreasing[half + 1] = decreasing[half + 1], decreasing[half]
    # back by 5 periods: a stamp out of order, not a clock restarted for a new record (the
    # loader reads a time running back by more than 10 periods as the next record)
    back = [r[0] for r in good]
    back[half:] = [t - 6 * PERIOD for t in back[half:]]
    gaps = ["a" if (i // 30) % 2 == 0 else "b" for i in range(N)]
    return {
        "empty": "",
        "header_only": "t,q,tau\n",
        "binary_garbage": bytes((i * 37 + 11) % 256 for i in range(2048)),
        "utf16": _csv(good).encode("utf-16-le"),  # no byte-order mark: with one, it is read
        "latin1_header": "t,q,tau,Drehmoment \xb5\n".encode("latin-1") + b"0,0,0,0\n" * 60,
        "missing_tau": _csv([r[:2] for r in good], header="t,q"),
        "missing_time": _csv([r[1:] for r in good], header="q,tau"),
        "renamed_columns": _csv(good, header="time,angle,torque"),
        "text_in_number": _replace(1, 40, "abc"),
        "decimal_comma": _replace(2, 7, '"1,5"'),
        "nan_value": _replace(1, 33, "nan"),
        "inf_value": _replace(2, 12, "inf"),
        "overflow_literal": _replace(2, 12, "1e999"),
        "empty_cell": _replace(2, 99, ""),
        "huge_values": _csv([(t, q, 1e308 * (tau / 3)) for t, q, tau in good]),
        "huge_position": _csv([(t, 1e300 * q, tau) for t, q, tau in good]),
        "time_back_five_periods": _with_time(back),
        "repeated_time_row": _with_time([r[0] for r in good[:half + 1]]
                                        + [r[0] for r in good[half:-1]]),
        "decreasing_time": _with_time(decreasing),
        "irregular_sampling": _with_time(irregular),
        "time_in_nanoseconds": _with_time([str(1_700_000_000_000_000_000 + i * 1_000_000)
                                             for i in range(N)]),
        "tiny_period": _with_time([i * 1e-13 for i in range(N)]),
        "too_few_rows": _csv(good[:10]),
        "constant_position": _csv([(t, 0.25, tau) for t, _, tau in good]),
        "zero_torque": _csv([(t, q, 0.0) for t, q, _ in good]),
        "constant_torque": _csv([(t, q, 1.5) for t, q, _ in good]),
        "mixed_types": _csv([(t, q if i % 2 else "x", tau) for i, (t, q, tau) in enumerate(good)]),
        "boolean_column": _csv([(t, "True" if i % 2 else "False", tau)
                                for i, (t, _, tau) in enumerate(good)]),
        "complex_numbers": _csv([(t, f"{q:.6f}+0j", tau) for t, q, tau in good]),
        "nul_bytes": _replace(1, 3, "0.1\x00"),
        "ragged_rows": _csv(good[:30] + [(*good[30], 1.0, 2.0)] + good[31:]),
        "trajectory_gaps": _csv([(*r, g) for r, g in zip(good, gaps, strict=True)],
                                header="t,q,tau,trajectory"),
        "trajectory_missing_label": _csv([(*r, "" if i == 70 else "a")
                                          for i, r in enumerate(good)],
                                         header="t,q,tau,trajectory"),
        "trajectory_short_part": _csv([(*r, "a" if i < N - 5 else "b")
                                       for i, r in enumerate(good)],
                                      header="t,q,tau,trajectory"),
        "truth_column_text": _csv([(*r, "unknown") for r in good], header="t,q,tau,qd_true"),
        "newline_in_header": '"t\nx",q,tau\n' + _csv(good).split("\n", 1)[1],
        "html_page": "<!DOCTYPE html>\n<html><body><p>404 Not Found</p></body></html>\n",
        "json_document": json.dumps({"t": [0, 1], "q": [0, 1], "tau": [0, 1]}) + "\n",
    }


def _model() -> dict:
    """A valid ``sparsefric-model/1`` dictionary (the bundled example truth)."""
    return {
        "format": "sparsefric-model/1",
        "axis": "revolute",
        "rigid_body": {"inertia": 1.5, "gravity_cos": 25.0, "gravity_sin": -6.0, "offset": 0.0},
        "friction": {
            "kind": "lugre", "sign": {"type": "sign"}, "coulomb": 18.0,
            "stribeck_velocity": 0.08, "stribeck": [{"delta": 1.5, "amplitude": 7.0}],
            "viscous": [{"power": 1, "coefficient": 9.0}, {"power": 3, "coefficient": 0.8}],
            "sigma0": 15000.0, "sigma1": 60.0,
        },
    }


def _mutated(change: Callable[[dict], object]) -> str:
    m = _model()
    change(m)
    return json.dumps(m, indent=2) + "\n"


def _bad_models() -> dict[str, str | bytes]:
    text = json.dumps(_model(), indent=2)
    fr = "friction"
    rb = "rigid_body"
    return {
        "empty": "",
        "truncated": text[: len(text) // 2],
        "wrong_format_tag": _mutated(lambda m: m.update(format="sparsefric-model/3")),
        "no_format": _mutated(lambda m: m.pop("format")),
        "negative_sigma0": _mutated(lambda m: m[fr].update(sigma0=-15000.0)),
        "zero_sigma0_lugre": _mutated(lambda m: m[fr].update(sigma0=0)),
        "missing_friction": _mutated(lambda m: m.pop(fr)),
        "missing_inertia": _mutated(lambda m: m[rb].pop("inertia")),
        "negative_inertia": _mutated(lambda m: m[rb].update(inertia=-1.5)),
        "inertia_string": _mutated(lambda m: m[rb].update(inertia="1.5")),
        "coulomb_bool": _mutated(lambda m: m[fr].update(coulomb=True)),
        "rigid_body_null": _mutated(lambda m: m.update(rigid_body=None)),
        "bad_axis": _mutated(lambda m: m.update(axis="spherical")),
        "bad_kind": _mutated(lambda m: m[fr].update(kind="dahl")),
        "stribeck_not_list": _mutated(lambda m: m[fr].update(stribeck={"delta": 1.5})),
        "stribeck_item_number": _mutated(lambda m: m[fr].update(stribeck=[1.5])),
        "viscous_fractional_power": _mutated(lambda m: m[fr]["viscous"][0].update(power=1.5)),
        "tanh_without_k": _mutated(lambda m: m[fr].update(sign={"type": "tanh"})),
        "negative_stribeck_velocity": _mutated(lambda m: m[fr].update(stribeck_velocity=-0.1)),
        "nan_literal": text.replace('"sigma1": 60.0', '"sigma1": NaN'),
        "infinity_literal": text.replace('"coulomb": 18.0', '"coulomb": Infinity'),
        "huge_integer": text.replace('"offset": 0.0', '"offset": 1' + "0" * 400),
        "overlong_integer": text.replace('"offset": 0.0', '"offset": 1' + "0" * 5000),
        "top_level_array": "[" + text + "]\n",
        "deep_nesting": "[" * 5000 + "]" * 5000 + "\n",
        "utf16": text.encode("utf-16"),
        "binary_garbage": bytes((i * 53 + 7) % 256 for i in range(1024)),
        "csv_instead": _csv(_rows()),
    }


def write_corpus(root: Path = HERE) -> list[Path]:
    """Write every corpus file under ``root``; return their paths."""
    written = []
    for sub, files, ext in (("csv", _bad_csvs(), "csv"), ("model", _bad_models(), "json")):
        (root / sub).mkdir(parents=True, exist_ok=True)
        for name, content in files.items():
            path = root / sub / f"{name}.{ext}"
            data = content.encode("utf-8") if isinstance(content, str) else content
            path.write_bytes(data)
            written.append(path)
    return written


if __name__ == "__main__":
    paths = write_corpus()
    print(f"{len(paths)} corpus files written under {HERE}")
