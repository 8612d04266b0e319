"""Errors a user can fix. Their message is one line that names the file and key; the CLI prints it and exits 2."""


class TfscaleError(Exception):
    """Base class: an error caused by the user's input, shown without a traceback."""


class SuiteError(TfscaleError):
    """A suite file that cannot be read, parsed or expanded."""


class ResultsError(TfscaleError):
    """A results path that holds no readable records."""


class RecordWarning(UserWarning):
    """A records line that could not be read (torn write): skipped."""
