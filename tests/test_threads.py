"""Independent computations on threads (sparsefric/threads.py)."""

import threading
import time

import numba
import pytest

from sparsefric import threads


def test_results_come_in_the_order_of_the_items_whatever_finishes_first(monkeypatch):
    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", 3)

    def slow_first(i: int) -> int:
        time.sleep(0.05 * (3 - i))
        return i * i

    assert list(threads.in_parallel(slow_first, range(4))) == [0, 1, 4, 9]


def test_one_thread_runs_in_the_caller_and_errors_propagate(monkeypatch):
    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", 1)
    assert threads.thread_count() == 1
    assert list(threads.in_parallel(str, [1, 2])) == ["1", "2"]
    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", 2)

    def fail(i: int) -> int:
        if i == 1:
            raise ValueError("bad item")
        return i

    results = threads.in_parallel(fail, [0, 1])
    assert next(results) == 0
    with pytest.raises(ValueError, match="bad item"):
        next(results)


def test_a_computation_ahead_overlaps_the_block_and_runs_at_most_once(monkeypatch):
    calls, started = [], threading.Event()

    def work() -> int:
        started.set()
        calls.append(1)
        return 7

    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", 2)
    with threads.ahead(work) as result:
        assert started.wait(5.0)  # running while the block runs, before it asks
        assert result() == 7 and result() == 7
    assert len(calls) == 1
    with threads.ahead(work):
        pass  # not asked for: the exit still waits for it
    assert len(calls) == 2
    started.clear()
    for count, spare in ((1, True), (2, False)):  # no thread to spare: nothing until asked
        monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", count)
        with threads.ahead(work, spare) as result:
            assert not started.is_set()
            assert result() == 7 and result() == 7
        started.clear()
    assert len(calls) == 4
