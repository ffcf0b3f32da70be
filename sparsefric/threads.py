"""Independent computations run side by side on threads.

The heavy kernels are compiled with numba and release the GIL (``nogil=True``), as do numpy's
large array operations, so threads overlap most of the work of independent fits. The number of
threads is numba's (``NUMBA_NUM_THREADS``, by default the number of CPUs); ``sparsefric batch``
sets it to 1 in its worker processes, which then run their joint on one thread each.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
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
