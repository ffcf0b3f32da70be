"""Independent computations run side by side on threads.

The heavy kernels are compiled with numba and release the GIL (``nogil=True``), as do numpy's
large array operations, so threads overlap most of the work of independent fits. The number of
threads is numba's (``NUMBA_NUM_THREADS``, by default the number of CPUs); ``sparsefric batch``
sets it to 1 in its worker processes, which then run their joint on one thread each.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import cache
from typing import TypeVar

import numba

T = TypeVar("T")
R = TypeVar("R")


def thread_count() -> int:
    """Threads for independent computations: numba's thread count."""
    return max(1, int(numba.config.NUMBA_NUM_THREADS))


def in_parallel(fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
    """``fn(item)`` for every item, on up to :func:`thread_count` threads; results in order.

    Results are yielded as they come due, so a caller can report progress; an exception of
    ``fn`` is raised when its result is reached.
    """
    items = list(items)
    workers = min(len(items), thread_count())
    if workers <= 1:
        yield from map(fn, items)
        return
    with ThreadPoolExecutor(workers) as pool:
        yield from pool.map(fn, items)


@contextmanager
def ahead(fn: Callable[[], R], spare: bool = True) -> Iterator[Callable[[], R]]:
    """Start ``fn()`` on a thread while the ``with`` block runs, where ``spare`` and there is a
    thread to spare (:func:`thread_count` > 1): the block gets a function that returns its
    result (waiting for it), and the block's exit waits for ``fn`` whether or not the result
    was asked for. Otherwise ``fn`` runs only if and when the block asks, in the caller, once.

    For a computation the caller may need after another one that decides whether it does: the
    two overlap, and where it is needed it is ready.
    """
    if not spare or thread_count() <= 1:
        yield cache(fn)
        return
    with ThreadPoolExecutor(1) as pool:
        yield pool.submit(fn).result
