"""One exit-status rule for every command, whoever runs the command line (the `probe` script,
`python -m tacit.cli`, a test's CliRunner): 0 done (help included), 1 a user mistake, found by
tacit or by the command-line parser (one `error:` line on stderr, never a boxed message and
status 2), 130 Ctrl-C and 143 SIGTERM (one line each: tacit.cli.common.interrupted)."""

from __future__ import annotations

import functools
import sys
from collections.abc import Sequence
from typing import Any

import typer.core

USAGE = 1  # the exit status of every user mistake, the parser's included


class ProbeGroup(typer.core.TyperGroup):
    """The `probe` command group: typer's, with the parser's mistakes said tacit's way."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        run = functools.partial(
            super().main, args, prog_name, complete_var, False, windows_expand_args, **extra
        )
        if not standalone_mode:  # the caller handles what the parser raises
            return run()
        try:
            status = run()
        except Exception as err:
            given = list(sys.argv[1:] if args is None else args)
            sys.exit(parser_status(err, given))
        sys.exit(status if isinstance(status, int) else 0)


def _named(err: BaseException, name: str) -> bool:
    """Whether the exception is of the parser's class `name` (click's, or the copy of click
    that recent typer versions carry)."""
    return any(cls.__name__ == name for cls in type(err).__mro__)


def parser_status(err: Exception, given: Sequence[str] = ()) -> int:
    """What the command-line parser raised, as an exit status: a group's help when it is
    called with nothing (0), Ctrl-C while it parsed (130, one line), a usage mistake as one
    `error:` line (1). Anything else is a bug: re-raised, traceback and all."""
    if _named(err, "NoArgsIsHelpError"):
        err.show()  # type: ignore[attr-defined]  # prints the group's help
        return 0
    if _named(err, "Abort"):  # the parser turns Ctrl-C into Abort
        from tacit.cli.common import INTERRUPTION, interrupted
        from tacit.core.errors import Terminated, last_interruption

        stop = last_interruption()
        if not INTERRUPTION["said"]:
            interrupted(stop)
        return 143 if isinstance(stop, Terminated) else 130
    if _named(err, "ClickException"):
        from tacit.core.secrets import redact

        typer.echo(redact(f"error: {_usage_line(err, given)}"), err=True)
        return USAGE
    raise err


def _usage_line(err: Any, given: Sequence[str] = ()) -> str:
    """The parser's message in one line, with where to read the command's options; an option
    another command takes says which (tacit.cli.exits.elsewhere)."""
    context = getattr(err, "ctx", None)
    if context is not None and _named(err, "NoSuchOption"):
        said = elsewhere(err.option_name, context, given)
        if said:
            return said
    message = " ".join(str(err.format_message()).split())
    if context is not None and _named(err, "UsageError"):
        message += f" (see `{context.command_path} --help`)"
    return message


def _commands(group: Any, path: str) -> dict[str, Any]:
    """Every command under a group, by its full name (`probe elicit`, `probe norms show`)."""
    found = {}
    for name, command in getattr(group, "commands", {}).items():
        if getattr(command, "hidden", False):
            continue
        if hasattr(command, "commands"):
            found.update(_commands(command, f"{path} {name}"))
        else:
            found[f"{path} {name}"] = command
    return found


def elsewhere(flag: str, context: Any, given: Sequence[str]) -> str:
    """What to say of an option the command at hand does not take but others do: given before
    the command (`probe --limit 2 elicit`), where it goes; given to a command that does not
    take it (`probe retrieve --prefix-ablation`), which commands do. Empty where none does."""
    root = context.find_root()
    commands = _commands(root.command, root.info_name or "probe")
    takers = [
        name
        for name, command in commands.items()
        if any(flag in (*p.opts, *p.secondary_opts) for p in command.params)
    ]
    if not takers:
        return ""
    if context.command is root.command:  # before the command
        chosen = next(
            (f"{root.info_name} {a}" for a in given if f"{root.info_name} {a}" in takers), takers[0]
        )
        at = list(given).index(flag) if flag in given else -1
        value = (
            given[at + 1] if 0 <= at < len(given) - 1 and not given[at + 1].startswith("-") else ""
        )
        value = "" if f"{root.info_name} {value}" in commands else value
        shown = " ".join(filter(None, [chosen, flag, value]))
        from tacit.probes import registry

        probes = {f"{root.info_name} {name}" for name in registry.names()}
        kind = (
            "the probe commands" if len(takers) > 2 and set(takers) <= probes else _listed(takers)
        )
        return f"{flag} is an option of {kind}: put it after the command, e.g. `{shown} ...`"
    return (
        f"No such option: {flag}: it is an option of {_listed(takers)}, not of "
        f"`{context.command_path}` (see `{context.command_path} --help`)"
    )


def _listed(commands: Sequence[str]) -> str:
    """`probe elicit`, or the first three and how many more."""
    shown = ", ".join(f"`{c}`" for c in commands[:3])
    return shown + (f" and {len(commands) - 3} more" if len(commands) > 3 else "")
