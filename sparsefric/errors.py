"""Errors that reach the user as one line (the CLI turns them into exit status 2)."""


class SparsefricError(Exception):
    """A problem with the user's input or options, stated in the user's terms.

    The message is a single line that names the file, column, row or option at fault.
    """


class DataError(SparsefricError):
    """A data file that cannot be used as a trajectory."""


class ModelFileError(SparsefricError):
    """A model file (``model.json``) that does not follow the ``sparsefric-model/1`` schema."""
