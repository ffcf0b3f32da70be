"""Ctrl-C and SIGTERM during a command: an exception where they arrive, and again before any
result is published.

Python runs a signal handler in the main thread between two steps of its code, and the
exception the handler raises goes up from that step. Where the step is Python code that C code
called and whose errors it discards (likely a pandas dtype's ``__eq__`` or ``__hash__``
behind a dictionary lookup in numpy; ``DESIGN.md`` §112), the exception is lost: about one
run in twenty interrupted during the fit went on, wrote its results and exited with
status 0. So the handlers installed by :func:`handled` also note the signal, and
:func:`check`, which every publication of results calls (:mod:`sparsefric.atomic`), raises it
again there.

Outside :func:`handled` (a notebook, a library caller) nothing is noted and :func:`check` does
nothing.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator

#: The signals handled: Ctrl-C, and SIGTERM (``kill``, batch schedulers).
HANDLED = (signal.SIGINT, signal.SIGTERM)

_noted: list[int] = []


class Terminated(KeyboardInterrupt):
    """SIGTERM received: unwinds like Ctrl-C, so that staged results are removed."""


def _exception(signum: int) -> KeyboardInterrupt:
    return Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


def _note_and_raise(signum: int, frame: object) -> None:
    _noted.append(signum)
    raise _exception(signum)


@contextlib.contextmanager
def handled() -> Iterator[None]:
    """SIGINT raises ``KeyboardInterrupt`` and SIGTERM :class:`Terminated` while the block
    runs, and both are noted for :func:`check`. Main thread of the main interpreter only;
    elsewhere the handlers in place stay."""
    try:
        previous = {s: signal.signal(s, _note_and_raise) for s in HANDLED}
    except ValueError:  # not the main thread of the main interpreter
        yield
        return
    _noted.clear()
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        _noted.clear()


def check() -> None:
    """Raise the interrupt of a signal noted since :func:`handled` began, whether or not its
    first exception was lost on the way: called just before results are published."""
    if _noted:
        raise _exception(_noted[0])
