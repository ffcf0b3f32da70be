"""Worker pools under signals: a signal while workers start waits until they have started, and
an interrupted pool leaves no process behind."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time

import pytest

from sparsefric.workers import process_pool, starting


def _wait_for(done: list, what: object) -> None:
    """Let Python run the handlers of signals that are due (they run between two steps)."""
    for _ in range(200):
        if what in done:
            return
        time.sleep(0.005)


def _children_after(seconds: float) -> list:
    """The live child processes once they are gone or ``seconds`` have passed: the pool's own
    thread may reap a stopped worker first, and the worker's record shows it a moment later."""
    for _ in range(int(seconds / 0.01)):
        if not multiprocessing.active_children():
            break
        time.sleep(0.01)
    return multiprocessing.active_children()


def test_ctrl_c_while_workers_start_is_raised_when_the_start_is_done():
    finished = []
    with pytest.raises(KeyboardInterrupt), starting():
        signal.raise_signal(signal.SIGINT)
        time.sleep(0.05)  # a handler would have run here
        finished.append("start")
    assert finished == ["start"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_signal_another_thread_receives_is_deferred_too():
    """The kernel hands a process's signal to any thread that does not block it: here the
    thread that sends it, started before the block (a thread started inside inherits the
    block), while this one blocks SIGINT."""
    finished, go = [], threading.Event()

    def send() -> None:
        go.wait()
        os.kill(os.getpid(), signal.SIGINT)

    sender = threading.Thread(target=send)
    sender.start()
    with pytest.raises(KeyboardInterrupt), starting():
        go.set()
        sender.join()
        time.sleep(0.05)  # the main thread runs the handler here
        finished.append("start")
    assert finished == ["start"]


def test_sigterm_reaches_the_handler_it_would_have_met_after_the_start():
    handled = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: handled.append(signum))
    try:
        with starting():
            os.kill(os.getpid(), signal.SIGTERM)
            _wait_for(handled, signal.SIGTERM)
            assert handled == []
        _wait_for(handled, signal.SIGTERM)
        assert handled == [signal.SIGTERM]
        assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == set()  # nothing left blocked
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_without_a_signal_the_start_passes_unchanged():
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    with starting():
        pass
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


@pytest.mark.slow  # starts worker processes
def test_a_pool_interrupted_as_its_workers_start_stops_them_all():
    """Ctrl-C as the tasks are submitted: every worker started is stopped, the tasks (30 s
    each) are not waited for and none outlives the pool."""
    with pytest.raises(KeyboardInterrupt), process_pool(2) as pool, starting():
        futures = [pool.submit(time.sleep, 30.0) for _ in range(4)]
        os.kill(os.getpid(), signal.SIGINT)
    assert _children_after(5.0) == []  # the tasks take 30 s
    assert not any(f.done() and not f.cancelled() and f.exception() is None for f in futures)


@pytest.mark.slow  # starts worker processes
def test_a_pool_runs_its_tasks_and_ends_with_them():
    with process_pool(2) as pool:
        assert list(pool.map(abs, [-1, 2, -3])) == [1, 2, 3]
    assert _children_after(5.0) == []
