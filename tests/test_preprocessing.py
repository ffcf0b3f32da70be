"""Step 0 (stacking, the prepared-set cache, the sliding window) and the stop regimes."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from sparsefric.data import Trajectory
from sparsefric.errors import OptionError
from sparsefric.model import JointModel
from sparsefric.preprocessing import Preprocessor, choose_window, prepare
from sparsefric.regimes import default_stop_speed, distance_from_stops


def _record(n: int, shift: float = 0.0, name: str = "r") -> Trajectory:
    t = np.arange(n) * 1e-3
    q = shift + 0.5 * np.sin(2 * np.pi * 0.5 * t)
    qd = np.gradient(q, t)
    return Trajectory(t, q, 2.0 * np.gradient(qd, t) + np.sign(qd) + 0.3 * qd, qd=qd,
                      qdd=np.gradient(qd, t), name=name)


def test_prepare_stacks_records_with_their_bounds_and_periods():
    a, b = _record(400, name="a"), _record(300, 1.0, name="b")
    prep = prepare([a, b], method="given")
    assert prep.bounds == [(0, 400), (400, 700)] and prep.dt == pytest.approx([1e-3, 1e-3])
    assert prep.names == ["a", "b"] and len(prep) == 700
    np.testing.assert_array_equal(prep.signals.qd[400:], b.qd)
    np.testing.assert_array_equal(prep.tau_raw, np.r_[a.tau, b.tau])
    assert [p["method"] for p in prep.params] == ["given", "given"]


def test_joined_sets_are_the_set_of_both_lists():
    """Each record is differentiated on its own (TV here), so two prepared sets joined are,
    sample for sample, the set prepared from both lists."""
    a, b, c = _record(400, name="a"), _record(300, 1.0, name="b"), _record(350, 2.0, name="c")
    both = prepare([a, b, c])
    joined = prepare([a]).join(prepare([b, c]))
    assert joined.bounds == both.bounds and joined.dt == both.dt and joined.names == both.names
    for field in ("q", "qd", "qdd"):
        np.testing.assert_array_equal(getattr(joined.signals, field),
                                      getattr(both.signals, field))
    for field in ("tau", "tau_raw", "stop_distance", "span"):
        np.testing.assert_array_equal(getattr(joined, field), getattr(both, field))
    assert joined.params == both.params and joined.pieces == both.pieces


def test_prepared_torque_is_the_model_along_each_record():
    a, b = _record(400), _record(300, 1.0)
    prep = prepare([a, b], method="given")
    model = JointModel(inertia=2.0, coulomb=1.0, viscous=((1, 0.3),))
    tau_hat = prep.torque(model)
    assert [len(t) for t in tau_hat] == [400, 300]
    np.testing.assert_allclose(np.concatenate(tau_hat), prep.tau_raw, rtol=1e-12, atol=1e-12)
    assert prep.relative_error(model) < 1e-12


def test_the_preprocessor_prepares_each_set_once_and_forgets_them_when_pickled():
    pre = Preprocessor("given")
    records = [_record(400)]
    first = pre.prepare(records, remember=True)
    assert pre.prepare(records) is first
    assert pre.prepare([_record(400)]) is not first  # other Trajectory objects
    assert pickle.loads(pickle.dumps(pre))._cache == []


def test_given_derivatives_must_be_in_every_record():
    bare = _record(400).with_(qd=None, qdd=None)
    with pytest.raises(OptionError, match="differentiation given needs .*velocity"):
        Preprocessor("given").prepare([bare])


def test_distance_from_stops_counts_travel_since_the_last_stop_and_to_the_next():
    # rest, move +1 rad at constant speed, rest
    q = np.r_[np.zeros(10), np.linspace(0, 1, 101), np.ones(10)]
    qd = np.r_[np.zeros(10), np.full(101, 1.0), np.zeros(10)]
    d = distance_from_stops(q, qd, v_stop=1e-3)
    assert np.all(d[:10] == 0) and np.all(d[-10:] == 0)
    np.testing.assert_allclose(d[10:111], np.minimum(np.linspace(0, 1, 101),
                                                     1 - np.linspace(0, 1, 101)), atol=1e-12)


def test_a_reversal_counts_as_a_stop():
    q = np.r_[np.linspace(0, 1, 51), np.linspace(1, 0, 51)[1:]]
    qd = np.r_[np.ones(51), -np.ones(50)]
    d = distance_from_stops(q, qd, v_stop=1e-3)
    assert d[50] == pytest.approx(0.0, abs=0.03) and d[25] == pytest.approx(0.5, abs=0.03)


def test_default_stop_speed_is_a_thousandth_of_the_top_speed():
    qd = np.r_[np.zeros(50), np.full(950, 2.0)]
    assert default_stop_speed(qd) == pytest.approx(2e-3)


def test_choose_window_grows_when_the_stops_bias_the_static_fit():
    """Samples right after each stop carry a friction transient a static model cannot fit: the
    window then leaves them out; without transients the smallest window is kept."""
    t = np.arange(20000) * 1e-3
    q = 0.5 * np.sin(2 * np.pi * 0.25 * t)
    qd = np.gradient(q, t)
    qdd = np.gradient(qd, t)
    noise = 0.01 * np.random.default_rng(0).normal(size=t.size)
    clean = 2.0 * qdd + np.cos(q) + np.sign(qd) + 0.3 * qd + noise
    prep = prepare([Trajectory(t, q, clean, qd=qd, qdd=qdd)], method="given")
    rigid = np.column_stack([qdd, np.cos(q), np.sin(q)])
    assert choose_window(prep, rigid) == 0.0
    span = np.ptp(q)
    transient = np.where(prep.stop_distance < 0.004 * span, 3.0 * np.sign(qd), 0.0)
    biased = prepare([Trajectory(t, q, clean + transient, qd=qd, qdd=qdd)], method="given")
    assert choose_window(biased, rigid) >= 0.005


def _paused(n: int = 2000, tail: int = 60) -> Trajectory:
    """:func:`_record` at 1 kHz with a pause of 0.5 s before its last ``tail`` samples."""
    record = _record(n)
    t = record.t.copy()
    t[-tail:] += 0.5
    return record.with_(t=t)


def test_a_delay_that_suits_the_record_suits_each_piece_that_stays_usable():
    """The delay is checked against the records as given (a tenth of 2.5 s); a piece cut at
    the pause keeps what the shift leaves of it, and one the shift would leave shorter than
    a piece may be is left out with a note, as the cut leaves out short pieces: the 6 ms that
    suit the record took more than a tenth of the 60-sample tail and failed the fit."""
    from sparsefric.options import check_torque_delay
    from sparsefric.segments import MIN_PIECE

    record = _paused()
    assert check_torque_delay(-0.006, [record]) == -0.006
    prep = prepare([record], method="given", torque_delay=-0.006)
    assert [len(p) for p in prep.pieces] == [1940 - 6, 60 - 6]
    lost = 60 - MIN_PIECE + 1  # the shift that leaves the tail one sample short
    prep = prepare([record], method="given", torque_delay=-lost * 1e-3)
    assert [len(p) for p in prep.pieces] == [1940 - lost]
    assert prep.notes[-1] == (f"r[1940:2000]: {60 - lost} samples after the torque's alignment "
                              f"by {-lost * 1e-3:g} s, fewer than {MIN_PIECE}: left out")
