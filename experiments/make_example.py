"""Regenerate ``data/example/`` byte for byte: ``python experiments/make_example.py``.

A simulated revolute joint that mimics the main paper's experiment (Mahmoudkhani et al. 2023,
§5.2): 1 kHz closed-loop trapezoidal moves; training at 0.127 and 2.13 rad/s, validation at 0.03
and 1.75 rad/s, test at 0.81 and 1.4 rad/s; 20-bit encoder with 5 µrad noise and 0.3 N·m torque
noise; a Stribeck curve with a visible peak and odd viscous powers as the paper found.
"""

from pathlib import Path

from sparsefric.simulate import EXAMPLE_SENSORS, EXAMPLE_TRUTH, paper_experiment, write_experiment

if __name__ == "__main__":
    out = Path(__file__).resolve().parent.parent / "data" / "example"
    experiment = paper_experiment(EXAMPLE_TRUTH, sensors=EXAMPLE_SENSORS)
    paths = write_experiment(EXAMPLE_TRUTH, experiment, out)
    for p in paths:
        print(p.relative_to(out.parent.parent))
