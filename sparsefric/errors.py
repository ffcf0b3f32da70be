"""Errors that reach the user as one line (the CLI turns them into exit status 2)."""

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
