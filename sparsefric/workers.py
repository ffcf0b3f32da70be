"""Worker processes that start whole and stop at once: the process pools of ``batch`` and of
the bootstrap.

Ctrl-C reaches the whole process group, so a worker ignores SIGINT and the parent, which
gets it too (or SIGTERM alone, from a scheduler), stops the workers: the tasks not started
are cancelled and the running ones ended, not waited for (a bootstrap resample is a whole
identification). A signal that arrives while the parent starts a worker waits until the start
is done: cut short, the start leaves a process the pool does not know of yet, which outlives
the parent, or one with a truncated copy of its task's state, which dies printing the
traceback of an unpickling error.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import signal
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor

__all__ = ["DEFERRED", "process_pool", "ready", "starting"]

#: The signals :func:`starting` defers.
DEFERRED = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def starting() -> Iterator[None]:
    """Defer :data:`DEFERRED` while the block starts worker processes
    (``ProcessPoolExecutor.submit`` and ``map`` start them): a signal that arrives meanwhile
    is raised again when the block ends, to the handler it would have met.

    Two holds, as the kernel hands a signal to any thread that does not block it (BLAS and
    progress-bar threads too) and Python runs the handler in the main thread between two
    steps of its code: a handler that notes the signal instead, and SIGINT blocked in this
    thread, which the workers inherit until :func:`ready` (a Ctrl-C reaches them too). Outside
    the main thread, or without POSIX signal masks, less or nothing is held.
    """
    with _noted() as noted, _sigint_blocked():
        yield
    for signum in dict.fromkeys(noted):
        signal.raise_signal(signum)


@contextlib.contextmanager
def _noted() -> Iterator[list[int]]:
    """Note :data:`DEFERRED` in the yielded list instead of handling them (main thread)."""
    noted: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield noted
        return
    previous = {s: signal.signal(s, lambda signum, frame: noted.append(signum))
                for s in DEFERRED}
    try:
        yield noted
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


@contextlib.contextmanager
def _sigint_blocked() -> Iterator[None]:
    """SIGINT blocked in this thread (and in the processes it starts)."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def ready() -> None:
    """In a worker, before anything else (:func:`process_pool`'s workers call it): ignore
    SIGINT (the parent stops the workers) and release the block :func:`starting` passed on;
    a SIGINT that came meanwhile is dropped."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _stop(pool: ProcessPoolExecutor) -> None:
    """Cancel the tasks of ``pool`` that have not started and end its workers now."""
    processes = list((getattr(pool, "_processes", None) or {}).values())  # no public API
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in processes:
        proc.terminate()
    for proc in processes:
        proc.join(timeout=5.0)


def _start(initializer: Callable[..., None] | None, *initargs: object) -> None:
    """A worker's start: :func:`ready`, then ``initializer(*initargs)``."""
    ready()
    if initializer is not None:
        initializer(*initargs)


@contextlib.contextmanager
def process_pool(workers: int, initializer: Callable[..., None] | None = None,
                 initargs: tuple = ()) -> Iterator[ProcessPoolExecutor]:
    """A pool of ``workers`` processes, each a fresh interpreter (``spawn``: no copy of this
    process's threads or locks) that calls :func:`ready`, then ``initializer(*initargs)``.
    Submit under :func:`starting`. When the block raises (Ctrl-C, SIGTERM turned into an
    exception) the tasks not started are cancelled and the workers ended at once; otherwise
    its tasks are waited for."""
    with starting():  # its queues' locks start the resource tracker, a process too
        pool = ProcessPoolExecutor(max_workers=workers, initializer=_start,
                                   initargs=(initializer, *initargs),
                                   mp_context=multiprocessing.get_context("spawn"))
    try:
        yield pool
    except BaseException:
        _stop(pool)
        raise
    pool.shutdown()
