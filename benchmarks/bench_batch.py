"""Wall time of ``sparsefric batch`` on 16 joints with 1 and 2 local worker processes.

Run:  .venv/bin/python benchmarks/bench_batch.py [--joints 16] [--fast] [--workers 1,2]
                                                  [--results]

Every joint is data/example (2 train, 2 validate, 2 test trajectories, 47 k samples in all)
under another name; joints after the first get Gaussian torque noise of a different seed
(σ = 0.1 N·m) so that no two fits are identical. Default options are ``sparsefric identify``'s
(about 20–50 s per joint on this data, so 16 joints take minutes); ``--fast`` uses one σ0 and
one Ω_s start and 6 thresholds (a few seconds per joint). Each run starts from an empty output
directory; the wall time includes starting the worker processes and writing the reports.
Prints one line per worker count: wall time [s], joints per minute and speed-up over 1 worker;
``--results`` also writes them into benchmarks/RESULTS.md (section "Batch"), with each wall time
as a fraction of the first count's (issue target: 8 joints on 2 workers ≤ 0.6× 1 worker).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from run import RESULTS, machine, md_table, replace_section

from sparsefric.atomic import write_text
from sparsefric.batch import run_manifest
from sparsefric.data import load_trajectories, save_trajectory

EXAMPLE = Path(__file__).resolve().parent.parent / "data" / "example"
FAST = {"sigma0_starts": "1e4", "omega_starts": "0.05",
        "thresholds": ";".join(f"{v:.4g}" for v in np.geomspace(0.1, 20, 6))}


def _noisy_copy(src: Path, dst: Path, seed: int, sigma: float) -> str:
    traj = load_trajectories([src])[0]
    tau = traj.tau + np.random.default_rng(seed).normal(0.0, sigma, len(traj))
    save_trajectory(dst, traj.with_(tau=tau, truth={}))
    return str(dst)


def make_manifest(root: Path, joints: int, fast: bool, sigma: float = 0.1) -> Path:
    """A manifest of ``joints`` copies of data/example in ``root`` (noisy copies after #0).

    Parameters
    ----------
    root : Path
        Folder for the manifest and the noisy data files.
    joints : int
        Number of joints.
    fast : bool
        Add the fast option columns.
    sigma : float
        Torque noise [N·m] added to the copies.

    Returns
    -------
    Path
        The manifest.
    """
    rows = []
    for j in range(joints):
        row: dict[str, str] = {"joint": f"joint{j:02d}"}
        for role in ("train", "validate", "test"):
            files = sorted(EXAMPLE.glob(f"{role}_*.csv"))
            if j:
                files = [_noisy_copy(f, root / f"j{j:02d}_{f.name}", 1000 * j + i, sigma)
                         for i, f in enumerate(files)]
            row[role] = ";".join(str(f) for f in files)
        rows.append({**row, **(FAST if fast else {})})
    path = root / "manifest.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


#: The RESULTS.md heading of this benchmark's section.
HEADING = "## Batch: joints on worker processes"


def results_section(rows: list[dict], joints: int, fast: bool) -> str:
    """The RESULTS.md section of one run: a row per worker count."""
    option = " --fast" if fast else ""
    return "\n".join([
        HEADING, "",
        f"- {joints} joints (data/example each, noisy copies after the first), "
        f"{'fast' if fast else 'default'} options; machine: {machine()}",
        f"- reproduce: `python benchmarks/bench_batch.py --joints {joints}{option} --results`",
        "", md_table(pd.DataFrame(rows)), ""])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--joints", type=int, default=16)
    p.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    p.add_argument("--fast", action="store_true", help="fast identification options")
    p.add_argument("--results", action="store_true",
                   help="also write the wall times into benchmarks/RESULTS.md")
    args = p.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_batch-") as tmp:
        root = Path(tmp)
        manifest = make_manifest(root, args.joints, args.fast)
        print(f"{args.joints} joints (data/example each), "
              f"{'fast' if args.fast else 'default'} options")
        base = None
        for workers in (int(w) for w in args.workers.split(",")):
            start = time.perf_counter()
            table = run_manifest(manifest, root / f"out{workers}", workers=workers,
                                 progress=False)
            wall = time.perf_counter() - start
            base = base or wall
            ok = int((table["status"] == "ok").sum())
            print(f"  workers={workers}: {wall:7.1f} s wall, {60 * args.joints / wall:5.1f} "
                  f"joints/min, speed-up {base / wall:4.2f}x ({ok}/{args.joints} ok)")
            rows.append({"workers": workers, "wall s": f"{wall:.1f}",
                         "joints/min": f"{60 * args.joints / wall:.1f}",
                         "÷ first": f"{wall / base:.2f}", "ok": f"{ok}/{args.joints}"})
    if args.results:
        write_text(RESULTS, replace_section(RESULTS.read_text(), HEADING,
                                            results_section(rows, args.joints, args.fast)))
        print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
