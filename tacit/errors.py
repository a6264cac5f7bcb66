"""The one exception type that means "the user gave us something we cannot use"."""


class TacitError(Exception):
    """A user mistake or an unusable input: the CLI prints its message as one line, no traceback.

    The message must say what is wrong and where (file, line, option), and how to fix it.
    """


def first_line(err: BaseException) -> str:
    """The first line of an exception's message (or its type): enough for a one-line error."""
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


def shorten(text: str, limit: int = 60) -> str:
    """Text quoted in a message, cut to a readable length (a whole JSON line must not fill the
    terminal).

    >>> shorten("x" * 100, 10)
    'xxxxxxxxx…'
    """
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"
