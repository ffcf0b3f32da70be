"""Errors that reach the user as one line (the CLI turns them into exit status 2), and where
the package's warnings point."""

import os
import sys

#: Directory of the package's modules: frames of files below it are the package's own.
_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep

#: Exit status of the command line for bad input: a usage mistake, a :class:`SparsefricError`.
EXIT_USAGE = 2


class SparsefricError(Exception):
    """A problem with the user's input or options, stated in the user's terms.

    The message is a single line that names the file, column, row or option at fault.
    """


class DataError(SparsefricError):
    """A data file that cannot be used as a trajectory."""


class ModelFileError(SparsefricError):
    """A model file (``model.json``) that does not follow the ``sparsefric-model`` schema."""


class OptionError(SparsefricError, ValueError):
    """An option with a value it cannot take; names the Python parameter.

    ``str(err)`` is ``"<parameter> <problem>"``; the CLI shows the parameter as its flag
    (``aic_parts`` → ``--aic-parts``).
    """

    def __init__(self, parameter: str, problem: str):
        super().__init__(f"{parameter} {problem}")
        self.parameter = parameter
        self.problem = problem

    def __reduce__(self):  # picklable across worker processes
        return (type(self), (self.parameter, self.problem))


class FitWarning(UserWarning):
    """What the data or a fit leave uncertain (a finding of level warning), as a Python warning.

    :meth:`sparsefric.estimator.SparseFric.fit` issues one per finding (they also stay in its
    ``warnings_``); ``warnings.simplefilter("ignore", FitWarning)`` silences them.
    """


def user_stacklevel() -> int:
    """The ``stacklevel`` of :func:`warnings.warn`, called by the caller of this function, that
    attributes the warning to the first frame outside this package: the user's own line,
    whichever of the package's functions led to the warning (what Python 3.12's
    ``skip_file_prefixes`` does)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level
