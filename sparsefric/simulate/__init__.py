"""Simulated joints with a known truth: the simulator, its excitations and recorded experiments.

* :mod:`.joint` — the joint (rigid body + LuGre friction) under a sampled position loop or in
  open loop, with sensor models (:func:`simulate`, :func:`simulate_moves`, :func:`free_run`);
* :mod:`.excitation` — reference moves and open-loop torques;
* :mod:`.recordings` — whole experiments as sets of trajectories: the main paper's
  train/validate/test split of back-and-forth moves (:func:`paper_experiment`) and the joint of
  ``data/example``.
"""

from sparsefric.simulate.excitation import chirp, multisine, stop_and_go_moves, trapezoid_moves
from sparsefric.simulate.joint import (
    NO_FRICTION_LEVEL,
    Controller,
    Sensors,
    as_lugre,
    free_run,
    simulate,
    simulate_moves,
)
from sparsefric.simulate.recordings import (
    EXAMPLE_SENSORS,
    EXAMPLE_TRUTH,
    PAPER_SPLIT,
    MoveSpec,
    move_name,
    paper_experiment,
    write_experiment,
)

__all__ = [
    "EXAMPLE_SENSORS",
    "EXAMPLE_TRUTH",
    "NO_FRICTION_LEVEL",
    "PAPER_SPLIT",
    "Controller",
    "MoveSpec",
    "Sensors",
    "as_lugre",
    "chirp",
    "free_run",
    "move_name",
    "multisine",
    "paper_experiment",
    "simulate",
    "simulate_moves",
    "stop_and_go_moves",
    "trapezoid_moves",
    "write_experiment",
]
