"""The README's Python and C examples run as written (on data/example, from a scratch folder)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT

README = ROOT / "README.md"
#: The sections whose examples are executed, in README order.
SECTIONS = ("Use the model in a controller", "From Python/Jupyter")


def _blocks(section: str, lang: str) -> list[str]:
    """The fenced ``lang`` blocks of the README section headed ``## section``."""
    text = README.read_text(encoding="utf-8")
    body = re.split(r"^## ", text, flags=re.M)
    matching = [part for part in body if part.startswith(section + "\n")]
    assert len(matching) == 1, f"README has no single section '## {section}'"
    return re.findall(rf"^```{lang}\n(.*?)^```$", matching[0], flags=re.M | re.S)


def _run_python(section: str, cwd: Path) -> str:
    """Run the section's Python blocks in order as one script in ``cwd``; its stdout."""
    blocks = _blocks(section, "python")
    assert blocks
    script = cwd / "snippets.py"
    script.write_text("\n".join(blocks), encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], cwd=cwd, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def scratch(tmp_path) -> Path:
    """A folder where the README's relative paths (data/example) resolve."""
    (tmp_path / "data").symlink_to(ROOT / "data")
    return tmp_path


def test_controller_examples_run_and_the_c_example_compiles(scratch):
    out = _run_python(SECTIONS[0], scratch)
    assert re.search(r"z = \S+ rad, friction \S+ N·m", out)
    generated = scratch / "out" / "controller"
    assert {"sparsefric_friction.h", "sparsefric_friction.c", "sparsefric_friction.py",
            "axis2_friction.h"} <= {p.name for p in generated.iterdir()}
    cc = shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler found as 'cc': the README's C example is not compiled")
    (c_example,) = _blocks(SECTIONS[0], "c")
    (scratch / "controller.c").write_text(c_example, encoding="utf-8")
    subprocess.run([cc, "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{generated}",
                    "-c", "controller.c", str(generated / "sparsefric_friction.c")],
                   cwd=scratch, check=True, capture_output=True, text=True)


@pytest.mark.slow  # a fresh interpreter imports scikit-learn and numba, then fits four times
def test_python_and_jupyter_examples_run(scratch):
    out = _run_python(SECTIONS[1], scratch)
    assert out.startswith("τ = ") and "kg·m² q̈" in out.splitlines()[0]
    r2 = float(re.search(r"R² = (\S+),", out).group(1))
    assert 0.8 < r2 < 1
    assert "held-out R²" in out and "{'model': '" in out


def _result_table() -> dict[str, str]:
    """The README's table of the files ``identify`` writes: file name → its description."""
    text = README.read_text(encoding="utf-8")
    rows = re.findall(r"^\| (`[^|]+`) \| (.+) \|$", text, flags=re.M)
    return {name: what for names, what in rows for name in re.findall(r"`([^`]+)`", names)}


def test_the_table_of_result_files_matches_what_identify_writes(example, tmp_path):
    from sparsefric.estimator import SparseFric
    from sparsefric.outputs import RESULT_NAMES, write_results

    table = _result_table()
    assert set(table) <= set(RESULT_NAMES)  # no file that is never written
    est = SparseFric(differentiation="butterworth", static_only=True,
                     library="coulomb-viscous").fit(example["train"])
    write_results(est.result_, tmp_path, example["train"], None, None)
    written = {p.name for p in tmp_path.iterdir()}
    assert written <= set(table)
    columns = (tmp_path / "terms.csv").read_text(encoding="utf-8").splitlines()[0].split(",")
    assert [c for c in columns if f"`{c}`" not in table["terms.csv"]] == []
    assert f"`{est.model_.to_dict()['format']}`" in table["model.json"]
