"""docs/explore_active_terms.ipynb runs top to bottom in the venv's own kernel."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # whole identifications

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOK = Path(__file__).resolve().parent.parent / "docs" / "explore_active_terms.ipynb"


def _python3_kernel() -> str:
    """The ``python3`` kernel of this interpreter; installed into ``sys.prefix`` (offline) if the
    one found would start another Python."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        argv0 = KernelSpecManager().get_kernel_spec("python3").argv[0]
    except NoSuchKernel:
        argv0 = None
    # jupyter_client runs a bare "python" kernel with sys.executable
    if argv0 not in ("python", "python3", sys.executable):
        subprocess.run([sys.executable, "-m", "ipykernel", "install", "--sys-prefix",
                        "--name", "python3"], check=True, capture_output=True)
    return "python3"


@pytest.fixture(scope="module")
def executed():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(nb, kernel_name=_python3_kernel(), timeout=600,
                                     resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    client.execute()
    return nb


def _outputs(nb, kind: str) -> list:
    return [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
            if o.output_type == kind]


def test_no_cell_errored(executed):
    assert not _outputs(executed, "error")
    assert all(c.get("execution_count") for c in executed.cells if c.cell_type == "code")


def test_key_outputs_exist(executed):
    text = "".join(o.text for o in _outputs(executed, "stream"))
    assert Path(sys.prefix).resolve().as_posix() in Path(
        text.split("(")[1].split(")")[0]).resolve().as_posix()  # the venv's kernel ran
    assert "break-away torque" in text and "inertia: identified" in text
    assert "grid search in" in text and "60868 predicted torques for 60868 rows" in text
    assert "τ = " in text and "kg·m² q̈" in text  # print_model of the best estimator
    rich = [o["data"] for o in _outputs(executed, "display_data") + _outputs(executed,
                                                                            "execute_result")]
    html = [d["text/html"] for d in rich if "text/html" in d]
    # the report's figures (inline SVG), not plots of the notebook's own: the sweep, the
    # surviving terms and the friction curves of both data sets, each with ids of its own
    shown = [m for h in html for m in re.findall(r'<svg class="figure" id="fig-([a-z-]+)-\d+"', h)]
    assert sorted(shown) == sorted(["selection", "survival", "friction"] * 2)
    ids = [i for h in html for i in re.findall(r'<clipPath id="([^"]+)"', h)]
    assert len(ids) == len(set(ids))
    assert not any("image/png" in d for d in rich)
    stderr = [o.text for o in _outputs(executed, "stream") if o.name == "stderr"]
    assert any("FitWarning: " in t for t in stderr)  # the fits' warnings reach the notebook
    assert not [t for t in stderr if "FitWarning: " not in t]  # no TqdmWarning
    assert sum("SparseFric" in h and "Active terms" in h for h in html) == 2
    assert any("σ0 (bristle stiffness)" in h for h in html)
