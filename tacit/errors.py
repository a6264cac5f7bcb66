"""The one exception type that means "the user gave us something we cannot use"."""


class TacitError(Exception):
    """A user mistake or an unusable input: the CLI prints its message as one line, no traceback.

    The message must say what is wrong and where (file, line, option), and how to fix it.
    """
