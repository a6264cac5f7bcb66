"""The one exception type that means "the user gave us something we cannot use"."""

from tacit.core.secrets import redact


class TacitError(Exception):
    """A user mistake or an unusable input: the CLI prints its message as one line, no traceback.

    The message must say what is wrong and where (file, line, option), and how to fix it. It
    never holds a secret: a model's text quoted in it is redacted (tacit.core.secrets).
    """

    def __init__(self, *args: object) -> None:
        super().__init__(*(redact(a) if isinstance(a, str) else a for a in args))


class Terminated(KeyboardInterrupt):
    """SIGTERM, turned into an exception so that a run stops the way Ctrl-C stops it."""


SIGTERM_SEEN = {"seen": False}  # whether this process was sent SIGTERM (on_sigterm)


def on_sigterm(signum: int, frame: object) -> None:
    """The SIGTERM handler of a `probe` process: stop like Ctrl-C (tacit.console)."""
    SIGTERM_SEEN["seen"] = True
    raise Terminated()


def last_interruption() -> KeyboardInterrupt:
    """The interruption to name when the exception itself is lost (typer turns one raised while
    the command line is parsed into a bare exit status 130): SIGTERM if this process got one."""
    return Terminated() if SIGTERM_SEEN["seen"] else KeyboardInterrupt()


class TacitWarning(UserWarning):
    """Something a reader of the output must know that does not stop the command (a file among
    run directories left out, a run that could not be read): the commands across runs say each
    as one `warning:` line on stderr (tacit.cli.common.warnings_said)."""


def first_line(err: BaseException) -> str:
    """The first line of an exception's message (or its type): enough for a one-line error."""
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


def shorten(text: object, limit: int = 60) -> str:
    """Text quoted in a one-line error, cut to `limit` characters: whitespace runs (newlines
    included) become one space, and a cut ends in `...`, so an 8 KB line cannot flood the message.

    Examples:
        >>> shorten("has fur")
        'has fur'
        >>> shorten('[{"concept": "bear",\\n "feature": "has fur", "pf": 3}, ' * 3, limit=30)
        '[{"concept": "bear", "featu...'
    """
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: max(limit - 3, 1)] + "..."
