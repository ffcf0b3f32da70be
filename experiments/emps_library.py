"""EMPS: the reference model (Coulomb + viscous + offset) against the full candidate library.

Trains on the first 70 % of the real EMPS estimation record and scores the torque prediction on
the last 30 %: ``python experiments/emps_library.py``. Prints the terms AICc keeps with the full
library and the held-out relative RMS error of each model.
"""

from pathlib import Path

from sparsefric.data import load_trajectories
from sparsefric.estimator import SparseFric

EMPS = Path(__file__).resolve().parent.parent / "data" / "emps" / "emps_estimation.csv"


def split(fraction: float = 0.7):
    """(train, test) pieces of the EMPS record."""
    (traj,) = load_trajectories([EMPS])
    cut = int(fraction * len(traj))
    return ([traj.with_(t=traj.t[:cut], q=traj.q[:cut], tau=traj.tau[:cut])],
            [traj.with_(t=traj.t[cut:], q=traj.q[cut:], tau=traj.tau[cut:])])


def main() -> None:
    train, test = split()
    for library, static_only in (("coulomb-viscous-offset", True), ("full", True),
                                 ("full", False)):
        est = SparseFric(axis="prismatic", library=library, static_only=static_only)
        est.fit(train)
        kept = est.terms_[est.terms_.active]
        label = f"{library}{' (static)' if static_only else ' (LuGre)'}"
        print(f"{label}: held-out ‖τ−τ̂‖/‖τ‖ = {est.relative_error(test):.4f}; terms: "
              + ", ".join(f"{r.term}={r.coefficient:.4g}" for r in kept.itertuples()))
        if not static_only:
            m = est.model_
            print(f"   σ0 = {m.sigma0:.4g} N/m, σ1 = {m.sigma1:.4g} N·s/m, "
                  f"{est.convergence_reason_}; refined: {est.refined_}")


if __name__ == "__main__":
    main()
