"""Regenerate ``data/example/`` byte for byte: ``python experiments/make_example.py``.

A simulated revolute joint that mimics the main paper's experiment (Mahmoudkhani et al. 2023,
§5.2): 1 kHz closed-loop trapezoidal moves; training at 0.127 and 2.13 rad/s, validation at 0.03
and 1.75 rad/s, test at 0.81 and 1.4 rad/s; 20-bit encoder with 5 µrad noise and 0.3 N·m torque
noise; a Stribeck curve with a visible peak and odd viscous powers as the paper found.
"""

from pathlib import Path

from sparsefric.experiment import paper_experiment, write_experiment
from sparsefric.model import JointModel
from sparsefric.simulate import Sensors

TRUTH = JointModel(
    axis="revolute",
    inertia=1.5,  # kg·m²
    gravity_cos=25.0,  # N·m
    gravity_sin=-6.0,  # N·m
    kind="lugre",
    coulomb=18.0,  # N·m
    stribeck_velocity=0.08,  # rad/s
    stribeck=((1.5, 7.0),),  # δ, amplitude f_s − f_c [N·m]
    viscous=((1, 9.0), (3, 0.8)),  # N·m·s/rad, N·m·s³/rad³
    sigma0=1.5e4,  # N·m/rad
    sigma1=60.0,  # N·m·s/rad
    extra={"provenance": "experiments/make_example.py"},
)

SENSORS = Sensors(position_noise=5e-6, torque_noise=0.3, seed=2023)

if __name__ == "__main__":
    out = Path(__file__).resolve().parent.parent / "data" / "example"
    paths = write_experiment(TRUTH, paper_experiment(TRUTH, sensors=SENSORS), out)
    for p in paths:
        print(p.relative_to(out.parent.parent))
