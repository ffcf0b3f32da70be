"""The paper's Fig. 14 and Fig. 15 views: free-run relative errors of several models on one
plot, and the dynamic friction along a record split into accelerating and decelerating
motion against the CVE points, the ż = 0 curve and the step-1 static curve."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sparsefric.cli import main
from sparsefric.data import Trajectory, load_trajectories
from sparsefric.figures import Evaluation, free_run_errors, friction_branches, motion_phases
from sparsefric.model import JointModel, units
from sparsefric.preprocessing import prepare
from sparsefric.simulate.excitation import trapezoid_moves
from sparsefric.validation import FreeRunResult

EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "example"
ACCEL, DECEL = ("dynamic model, accelerating (|q̇| rising)",
                "dynamic model, decelerating (|q̇| falling)")


def _series(panel, label):
    return [s for s in panel.series if s.label == label]


def _finite(series) -> tuple[np.ndarray, np.ndarray]:
    x = np.concatenate([s.x for s in series])
    y = np.concatenate([s.y for s in series])
    ok = np.isfinite(x) & np.isfinite(y)
    return x[ok], y[ok]


# ----------------------------------------------------------------------------- phases
def test_a_sine_sweep_accelerates_in_the_first_and_third_quarter():
    phase = np.linspace(0, 4 * np.pi, 4001)
    accelerating, decelerating = motion_phases(np.sin(phase), np.cos(phase))
    quarter = (phase // (np.pi / 2)).astype(int) % 4
    # |q̈| ≤ 5 % of its 99th percentile (the turning points of |q̇|) is in neither phase;
    # at the zero crossings the quarter is decided by rounding
    clear = (np.abs(np.cos(phase)) > 0.06) & (np.abs(np.sin(phase)) > 1e-6)
    assert np.all(accelerating[clear] == np.isin(quarter[clear], (0, 2)))
    assert np.all(decelerating[clear] == np.isin(quarter[clear], (1, 3)))
    assert not np.any(accelerating & decelerating)
    assert not np.any((accelerating | decelerating)[np.abs(np.cos(phase)) < 0.04])


def test_trapezoidal_moves_split_at_their_ramps_in_both_directions():
    t, _, qd, qdd = trapezoid_moves(-0.5, 0.5, 0.5, 2.0, dwell=0.3, cycles=1)
    accelerating, decelerating = motion_phases(qd, qdd)
    moving = qd != 0
    # the profile is integrated exactly: |q̇| of the next sample tells the phase
    rising = np.r_[np.abs(qd[1:]) > np.abs(qd[:-1]), False]
    falling = np.r_[np.abs(qd[1:]) < np.abs(qd[:-1]), False]
    assert np.array_equal(accelerating[moving], rising[moving])
    assert np.array_equal(decelerating[moving], falling[moving])
    assert not np.any((accelerating | decelerating)[qdd == 0])  # plateaus and rests
    backward = qd < 0
    assert accelerating[backward].sum() == pytest.approx(accelerating[~backward].sum(), abs=2)
    assert accelerating.sum() == pytest.approx(decelerating.sum(), abs=4)


# ----------------------------------------------------------------------------- Fig. 15
@pytest.fixture(scope="module")
def truth() -> JointModel:
    return JointModel.load(EXAMPLE / "truth.json")


@pytest.fixture(scope="module")
def moves(truth) -> Evaluation:
    """Two back-and-forth trapezoidal moves at 0.5 rad/s, the truth's torque, q̇ and q̈ given."""
    t, q, qd, qdd = trapezoid_moves(-0.5, 0.5, 0.5, 2.0, dwell=0.3, cycles=2)
    dt = float(t[1] - t[0])
    tau = truth.torque(q, qd, qdd, dt, outside="ignore")
    traj = Trajectory(t, q, tau, qd=qd, qdd=qdd, name="runs/moves.csv")
    return Evaluation("train", [traj], prepare([traj], method="given"))


def test_friction_branches_draw_each_model_with_its_own_curves(truth, moves):
    model_b = truth.with_(tanh_k=150.0)
    static = truth.with_(kind="static", sigma0=0.0, sigma1=0.0, coulomb=0.8 * truth.coulomb)
    fig = friction_branches({"model A": (truth, static), "model B": (model_b, static)}, moves,
                            units("revolute"))
    assert [p.title for p in fig.panels] == ["model A", "model B"]
    for panel, model in zip(fig.panels, (truth, model_b), strict=True):
        (zdot0,) = _series(panel, "dynamic model with ż = 0")
        np.testing.assert_allclose(zdot0.y, model.static_friction(zdot0.x), rtol=1e-12)
        (step1,) = _series(panel, "static (step 1)")
        np.testing.assert_allclose(step1.y, static.static_friction(step1.x), rtol=1e-12)
        assert panel.xlog
    # model B's tanh(150 q̇) softens the low-speed curve: the panels differ where it matters
    a, b = (_series(p, "dynamic model with ż = 0")[0] for p in fig.panels)
    low = a.x < 0.003
    assert low.any() and np.all(b.y[low] < a.y[low] - 1.0)


def test_the_branches_follow_the_bristle_not_the_static_curve(truth, moves):
    fig = friction_branches({"LuGre (final)": (truth, truth.with_(kind="static"))}, moves,
                            units("revolute"))
    (panel,) = fig.panels
    v_acc, f_acc = _finite(_series(panel, ACCEL))
    v_dec, f_dec = _finite(_series(panel, DECEL))
    steady = truth.static_friction(v_acc)
    # leaving a rest after a move the other way, the bristle still pulls backwards ...
    assert f_acc.min() < -0.5 * truth.breakaway_torque()
    # ... and at the end of each ramp up the friction has reached the steady state
    top = v_acc > 0.45
    assert top.any()
    np.testing.assert_allclose(f_acc[top], steady[top], rtol=0.05)
    # braking from the plateau, the bristle is already deflected: near the steady state
    fast = v_dec > 0.3
    np.testing.assert_allclose(f_dec[fast], truth.static_friction(v_dec[fast]), rtol=0.05)
    assert v_acc.max() <= 0.5 + 1e-9 and v_acc.min() >= 0.5e-3 - 1e-12


def test_cve_points_of_the_records_and_of_a_file_are_on_every_panel(truth, moves):
    cve = pd.DataFrame({"trajectory": ["a", "b"], "velocity": [0.1, 0.4],
                        "friction": [20.0, 24.0], "friction_std": [0.1, 0.2]})
    cve_file = pd.DataFrame({"trajectory": ["mine.csv"] * 2, "velocity": [0.05, -0.2],
                             "friction": [21.0, -22.0]})
    fig = friction_branches({"model A": (truth, truth), "model B": (truth, truth)}, moves,
                            units("revolute"), cve, cve_file)
    for panel in fig.panels:
        (records,) = _series(panel, "constant-velocity points")
        np.testing.assert_allclose(records.x, [0.1, 0.4])
        (mine,) = _series(panel, "CVE file")
        np.testing.assert_allclose(mine.x, [0.05, 0.2])
        np.testing.assert_allclose(mine.y, [21.0, 22.0])  # in the direction of motion
        np.testing.assert_allclose(mine.err, [0.0, 0.0])


# ----------------------------------------------------------------------------- Fig. 14
def _run(t: np.ndarray, q_offset: float, qd_offset: float) -> FreeRunResult:
    q, qd = np.sin(t), np.cos(t)
    q_sim, qd_sim = q - q_offset * t, qd - qd_offset
    return FreeRunResult(t, q, qd, q_sim, qd_sim, np.array([0]), 0.0, 0.0, 0.0)


def test_free_run_errors_put_every_model_on_the_same_axes():
    t = np.linspace(0, 2 * np.pi, 400)
    runs = {"model A": [_run(t, 0.01, 0.02), _run(t, 0.0, 0.0)],
            "model B": [_run(t, 0.03, -0.05), _run(t, 0.01, 0.01)]}
    fig = free_run_errors(runs, ["d/test_1.csv", "d/test_2.csv"], units("revolute"), 1.0)
    assert len(fig.panels) == 4  # q and q̇ of each record
    assert fig.panels[0].title.startswith("test_1.csv: q ")
    assert fig.panels[1].title.startswith("test_1.csv: q̇ ")
    for panel, (attr, k) in zip(fig.panels, (("q", 0), ("qd", 0), ("q", 1), ("qd", 1)),
                                strict=True):
        assert [s.label for s in panel.series] == ["model A", "model B"]
        for s, label in zip(panel.series, runs, strict=True):
            r = runs[label][k]
            measured, simulated = getattr(r, attr), getattr(r, attr + "_sim")
            expected = 100 * (measured - simulated) / np.max(np.abs(measured))
            np.testing.assert_allclose(s.y, expected, atol=1e-12)
    assert "every 1 s" in fig.title
    assert fig.panels[0].series[0].color != fig.panels[0].series[1].color


# ----------------------------------------------------------------------------- end to end
def _head(src: Path, out: Path, n: int) -> str:
    traj = load_trajectories([src])[0]
    pd.DataFrame({"t": traj.t[:n], "q": traj.q[:n], "tau": traj.tau[:n]}).to_csv(out,
                                                                                 index=False)
    return str(out)


@pytest.mark.slow
def test_identify_both_models_writes_the_paper_views(tmp_path, capsys):
    train = _head(EXAMPLE / "train_v2p13.csv", tmp_path / "train.csv", 4000)
    test = _head(EXAMPLE / "test_v1p4.csv", tmp_path / "test.csv", 3000)
    cve = tmp_path / "cve.csv"
    pd.DataFrame({"velocity": [0.2, -1.0], "friction": [20.5, -29.0]}).to_csv(cve, index=False)
    out = tmp_path / "both"
    rc = main(["identify", train, "--test", test, "--model", "both", "--sigma0-starts", "1e4",
               "--omega-starts", "0.05", "--uncertainty", "none", "--cve", str(cve),
               "--quiet", "--out", str(out)])
    assert rc == 0, capsys.readouterr().err
    page = (out / "report.html").read_text()
    for name in ("A", "B"):
        assert f'href="{name}/report.html"' in page
        assert (out / name / "model.json").exists()
        own = (out / name / "report.html").read_text()
        assert 'id="fig-branches-train"' in own and "LuGre (final)" in own
    errors = re.search(r'<svg class="figure" id="fig-free-run-errors".*?</svg>', page, re.S)
    branches = re.search(r'<svg class="figure" id="fig-branches-train".*?</svg>', page, re.S)
    assert errors and branches
    for fig in (errors.group(0), branches.group(0)):
        assert "model A" in fig and "model B" in fig
    assert "test.csv: q̇" in errors.group(0)
    for label in (ACCEL, DECEL, "dynamic model with ż = 0", "static (step 1)", "CVE file"):
        assert label in branches.group(0)
    assert page.count("[model A] test torque error") == 1
    assert page.count("[model B] test torque error") == 1
