"""Independent computations on threads (sparsefric/threads.py)."""

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
