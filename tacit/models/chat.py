"""Instruct models' chat templates: a causal LM's sentences read as the assistant's answer.

An instruct checkpoint was tuned on conversations written in its chat template; a bare
sentence is text it rarely saw. With the loading option `chat_template=true` (the template
its tokenizer carries) or `chat_template=PATH` (a Jinja file in the same language),
every sentence a causal model scores is put after the conversation the template writes for
one user turn (REQUEST) with the assistant's turn opened (`add_generation_prompt=True`), as
lm-evaluation-harness's `--apply_chat_template` opens it. Those tokens are context only: they
are conditioned on, never scored, and are the same for every sentence, so ranks compare
sentences as before, each as the assistant's answer.

Many templates write a system turn of their own when the conversation has none (SmolLM2's:
"You are a helpful AI assistant named SmolLM, trained by Hugging Face"; Qwen's likewise): the
prefix then holds it. The loading option `system=TEXT` puts a system message of your own
first (the template writes it as it writes any: it must appear in the prefix), and
`system=none` writes no system turn at all: where the template writes its default, that turn
is cut out, found from the shape the template gives every turn (an opening naming the role,
the message, a closing); a template whose default turn has another shape is refused in one
line (write a Jinja file without it). Without the option the template's own default stays.

The prefix is checked to be what the template writes before an assistant's message (the
template rendered with one written in place must begin with the prefix and then the message),
so that the sentence sits where the model saw its own answers. The manifest records where the
template came from, its sha256, the system message asked for (`system`: the text, `none`, or
`default`), the user turn and the prefix as text.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tacit.core.errors import TacitError, shorten
from tacit.core.files import regular_file
from tacit.core.option_names import option

# the user's turn before the assistant's answer: a request any sentence answers
REQUEST = "Tell me something true about everyday things."
_PROBE = "A bear has fur."  # an answer written in place, to check where the prefix ends
NO_SYSTEM = "none"  # system=none: no system turn at all
# messages no template writes by itself, to find where each turn's text sits
_MARKS = ("\u2042system\u2042", "\u2042user\u2042", "\u2042assistant\u2042")


def chat_template_of(tokenizer: Any, setting: str, model: str) -> tuple[str, str]:
    """(the template, where it came from: `tokenizer` or the file's path) for
    `chat_template=setting` (`true`: the tokenizer's template; otherwise a Jinja file's path)."""
    where = f"{option('--model')} {model}: chat_template={setting}"
    if str(setting).lower() in ("true", "1", "yes"):
        template = getattr(tokenizer, "chat_template", None)
        if isinstance(template, dict):  # several named templates: the default one
            template = template.get("default")
        if not template:
            raise TacitError(
                f"{where}: its tokenizer carries no chat template (a base model?); give a "
                "Jinja file (chat_template=path/to/template.jinja) or leave the option out"
            )
        source = "tokenizer"
    else:
        path = Path(setting).expanduser()
        try:
            regular_file(path, f"{where}", missing_ok=True, directory_ok=True)
            template = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise TacitError(f"{where}: cannot read the template file ({error})") from None
        source = str(path.resolve())
    return template, source


def render(
    tokenizer: Any, template: str, messages: Sequence[Mapping[str, str]], opened: bool = False
) -> str:
    """The conversation as the template writes it (`opened`: the assistant's turn opened
    after it, add_generation_prompt)."""
    return str(
        tokenizer.apply_chat_template(
            [dict(m) for m in messages],
            chat_template=template,
            add_generation_prompt=opened,
            tokenize=False,
        )
    )


def chat_prefix(
    tokenizer: Any, setting: str, model: str, system: str | None = None
) -> tuple[str, dict[str, Any]]:
    """The text every sentence follows, and its manifest record, for `chat_template=setting`
    (`true`: the tokenizer's template; otherwise a Jinja file's path) and `system=system`
    (a system message; `none`: no system turn; None: the template's default)."""
    where = f"{option('--model')} {model}: chat_template={setting}"
    template, source = chat_template_of(tokenizer, setting, model)
    user = [{"role": "user", "content": REQUEST}]
    if system is not None and system.lower() != NO_SYSTEM:
        user = [{"role": "system", "content": system}, *user]

    def written(messages: list[dict[str, str]], opened: bool = False) -> str:
        return render(tokenizer, template, messages, opened)

    try:
        prefix = written(user, opened=True)
        answered = written([*user, {"role": "assistant", "content": _PROBE}])
    except Exception as error:  # jinja2's errors, and the template's own raise_exception
        raise TacitError(f"{where}: the template fails ({shorten(str(error))})") from None
    if system is not None and system.lower() == NO_SYSTEM:
        start, end = _default_system_turn(written, prefix, f"{where},system={system}")
        prefix, answered = prefix[:start] + prefix[end:], answered[:start] + answered[end:]
    elif system is not None and system not in prefix:
        raise TacitError(
            f"{where},system=...: the template leaves the system message out (it takes none)"
        )
    if not str(answered).startswith(str(prefix) + _PROBE):
        raise TacitError(
            f"{where}: the template does not write an assistant's message right after the "
            f"turn it opens ({shorten(repr(prefix))} then {shorten(repr(answered))}), so a "
            "sentence cannot be read as its answer"
        )
    record = {
        "source": source,
        "sha256": hashlib.sha256(template.encode("utf-8")).hexdigest(),
        "system": "default" if system is None else system,
        "user": REQUEST,
        "prefix": str(prefix),
    }
    return str(prefix), record


def with_system(messages: Sequence[Mapping[str, str]], system: str | None) -> list[dict[str, str]]:
    """The messages with `system=`'s text first, where it gives one and they hold no system
    message of their own (`none`, or no option: as they are)."""
    asked = [dict(m) for m in messages]
    own_system = any(m["role"] == "system" for m in asked)
    if system is not None and system.lower() != NO_SYSTEM and not own_system:
        asked = [{"role": "system", "content": system}, *asked]
    return asked


def conversation(
    tokenizer: Any,
    setting: str | None,
    model: str,
    messages: Sequence[Mapping[str, str]],
    system: str | None = None,
) -> str:
    """A generation request's messages as the model reads them: written by the chat template
    (`chat_template=setting`, as for scoring; None: the tokenizer's own, refused in one line
    where it has none) with the assistant's turn opened. `system=` applies as it does to
    scoring's prefix, where the messages hold no system message of their own: its text put
    first, or (`none`) the template's default system turn cut out."""
    where = f"{option('--model')} {model}"
    if setting is None and not getattr(tokenizer, "chat_template", None):
        raise TacitError(
            f"{where}: its tokenizer carries no chat template (a base model?), so chat "
            "messages cannot be written for it: ask it with a plain prompt, or give "
            "chat_template=path/to/template.jinja"
        )
    template, _ = chat_template_of(tokenizer, setting or "true", model)
    asked = with_system(messages, system)
    own_system = any(m["role"] == "system" for m in messages)

    def written(chosen: list[dict[str, str]], opened: bool = False) -> str:
        return render(tokenizer, template, chosen, opened)

    try:
        text = written(asked, opened=True)
    except Exception as error:  # jinja2's errors, and the template's own raise_exception
        raise TacitError(f"{where}: the chat template fails ({shorten(str(error))})") from None
    if system is not None and system.lower() == NO_SYSTEM and not own_system:
        start, end = _default_system_turn(written, text, where, asked)
        text = text[:start] + text[end:]
    return text


def _default_system_turn(
    render: Any, prefix: str, where: str, messages: Sequence[Mapping[str, str]] | None = None
) -> tuple[int, int]:
    """Where the system turn the template writes by itself sits in `prefix` (the conversation
    `messages`, by default scoring's one user turn, rendered without a system message and the
    assistant's turn opened): (start, end), empty where it writes none.

    A template that writes a system message in place of its default (rather than beside
    it) has one; its turn's shape comes from the turns the template writes around its
    marks: between a message and the next turn's message stand the closing and the next
    opening, `CLOSE OPEN(role)`, with the role's name in the opening (`<|im_end|>\n` and
    `<|im_start|>user\n`)."""
    system, user, assistant = _MARKS
    try:
        asked = messages if messages is not None else [{"role": "user", "content": REQUEST}]
        marked = render([{"role": "system", "content": system}, *asked], True)
        turns = render(
            [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
                {"role": "assistant", "content": assistant},
            ]
        )
    except Exception:  # a template that takes no system message writes none of its own
        return 0, 0
    same = len(_common_prefix(prefix, marked))
    if same + len(_common_prefix(prefix[same:][::-1], marked[same:][::-1])) >= len(prefix):
        return 0, 0  # the system message is written beside what it writes anyway: no default
    refused = TacitError(
        f"{where}: cannot tell where the template's own system turn ends (it writes one "
        "whose shape its other turns do not share); give a Jinja file without it "
        "(chat_template=path/to/template.jinja)"
    )
    if any(turns.count(mark) != 1 for mark in _MARKS):
        raise refused
    between_user = turns[turns.index(system) + len(system) : turns.index(user)]
    between_assistant = turns[turns.index(user) + len(user) : turns.index(assistant)]
    close_open = _common_prefix(between_user, between_assistant)  # CLOSE and OPEN's start
    after = between_user[len(close_open) :]
    if (
        not after.startswith("user")
        or between_assistant[len(close_open) :] != "assistant" + after[4:]
    ):
        raise refused
    after = after[4:]  # what follows the role's name in an opening
    before = turns[: turns.index(system)]
    for cut in range(len(close_open) + 1):  # the longest start of an opening that fits
        opening = close_open[cut:] + "system" + after
        if before.endswith(opening):
            close = close_open[:cut]
            break
    else:
        raise refused
    start = len(before) - len(opening)
    next_turn = close + close_open[len(close) :] + "user" + after
    if prefix[:start] != before[:start] or not prefix[start:].startswith(opening):
        raise refused
    end = prefix.find(next_turn, start + len(opening))
    if end < 0:
        raise refused
    return start, end + len(close)


def _common_prefix(a: str, b: str) -> str:
    """The longest text both begin with."""
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]
