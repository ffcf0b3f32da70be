"""Simulator physics: steady sliding, pre-sliding, sticking, reproducibility."""

from __future__ import annotations

import numpy as np
import pytest

from sparsefric.simulate import Sensors, free_run, simulate, simulate_moves
from sparsefric.simulate.joint import stable_substeps

QUIET = Sensors(0.0, 0.0, 0.0)


def test_constant_velocity_friction_is_the_static_curve(truth):
    traj = simulate_moves(truth, 0.0, 1.0, 0.5, 5.0, dwell=0.2, sensors=QUIET)
    qd = traj.truth["qd_true"]
    steady = (qd > 0.45) & (np.abs(traj.truth["qdd_true"]) < 1e-2)
    assert steady.sum() > 500
    friction = traj.tau - truth.rigid_body_torque(traj.truth["q_true"], traj.truth["qdd_true"])
    np.testing.assert_allclose(friction[steady], truth.static_friction(qd[steady]), atol=0.05)


def test_small_torque_gives_presliding_displacement_tau_over_sigma0(truth):
    flat = truth.with_(gravity_cos=0.0, gravity_sin=0.0)
    tau = np.minimum(np.arange(3000) * 1e-3, 1.0)  # slow ramp to 1 N·m ≪ f_c = 18 N·m
    traj = simulate(flat, tau_ff=tau, sensors=QUIET, q0=0.0)
    q = traj.truth["q_true"]
    # LuGre pre-sliding: z(q) = (g/σ0)(1 − e^{−σ0 q/g}) ≈ q for σ0 q ≪ g, so q ≈ τ/σ0
    assert q[-1] == pytest.approx(1.0 / truth.sigma0, rel=0.05)
    assert np.max(np.abs(traj.truth["qd_true"][-500:])) < 1e-6  # no gross sliding


def test_joint_sticks_below_coulomb_and_slides_above(truth):
    flat = truth.with_(gravity_cos=0.0, gravity_sin=0.0)
    stuck = simulate(flat, tau_ff=np.full(2000, 0.9 * truth.coulomb), sensors=QUIET, q0=0.0)
    sliding = simulate(flat, tau_ff=np.full(2000, 1.5 * truth.breakaway_torque()),
                       sensors=QUIET, q0=0.0)
    g0 = truth.breakaway_torque()
    assert abs(stuck.truth["q_true"][-1]) < 5 * g0 / truth.sigma0  # a few bristle lengths
    assert np.max(np.abs(stuck.truth["qd_true"][-500:])) < 1e-6
    assert sliding.truth["q_true"][-1] > 0.1


def test_reproducible_with_a_seed(truth):
    a = simulate_moves(truth, 0.0, 0.5, 0.3, 4.0, sensors=Sensors(seed=3))
    b = simulate_moves(truth, 0.0, 0.5, 0.3, 4.0, sensors=Sensors(seed=3))
    c = simulate_moves(truth, 0.0, 0.5, 0.3, 4.0, sensors=Sensors(seed=4))
    np.testing.assert_array_equal(a.tau, b.tau)
    assert not np.array_equal(a.tau, c.tau)


def test_example_data_match_their_truth_to_the_noise(example, truth):
    traj = example["train"][1]
    resid = traj.tau - truth.torque(traj.truth["q_true"], traj.truth["qd_true"],
                                    traj.truth["qdd_true"], traj.dt)
    assert np.std(resid) == pytest.approx(0.3, rel=0.05)


def test_a_stiff_model_runs_free_without_diverging(truth):
    """An inertia far too small for σ1 (time constant I/σ1 = 2 µs, as a fit on resampled
    jittery data gave) needs sub-steps shorter than 10 per 1 ms sample: the run stays finite
    and slides where the torque balances the static friction."""
    stiff = truth.with_(inertia=2.5e-4, sigma1=128.0, gravity_cos=0.0, gravity_sin=0.0)
    assert stable_substeps(stiff, 1e-3, 10, 3000, 1.0) > 200
    tau = np.full(3000, 1.5 * truth.breakaway_torque())
    q, qd = free_run(stiff, tau, 0.0, dt=1e-3)
    assert np.isfinite(q).all() and np.isfinite(qd).all()
    assert stiff.static_friction(qd[-1:])[0] == pytest.approx(tau[-1], rel=1e-3)


def test_a_model_integrated_stably_keeps_the_sub_steps_asked_for(truth):
    assert stable_substeps(truth, 1e-3, 10, 10_000, 3.0) == 10
