"""Instruct models' chat templates: a causal LM's sentences read as the assistant's answer.

An instruct checkpoint was tuned on conversations written in its chat template; a bare
sentence is text it rarely saw. With the loading option `chat_template=true` (the template
its tokenizer carries) or `chat_template=PATH` (a Jinja file in the same language),
every sentence a causal model scores is put after the conversation the template writes for
one user turn (REQUEST) with the assistant's turn opened (`add_generation_prompt=True`), as
lm-evaluation-harness's `--apply_chat_template` opens it. Those tokens are context only: they
are conditioned on, never scored, and are the same for every sentence, so ranks compare
sentences as before, each as the assistant's answer.

The prefix is checked to be what the template writes before an assistant's message (the
template rendered with one written in place must begin with the prefix and then the message),
so that the sentence sits where the model saw its own answers. The manifest records where the
template came from, its sha256, the user turn and the prefix as text.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from tacit.core.errors import TacitError, shorten
from tacit.core.option_names import option

# the user's turn before the assistant's answer: a request any sentence answers
REQUEST = "Tell me something true about everyday things."
_PROBE = "A bear has fur."  # an answer written in place, to check where the prefix ends


def chat_prefix(tokenizer: Any, setting: str, model: str) -> tuple[str, dict[str, Any]]:
    """The text every sentence follows, and its manifest record, for `chat_template=setting`
    (`true`: the tokenizer's template; otherwise a Jinja file's path)."""
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
            template = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise TacitError(f"{where}: cannot read the template file ({error})") from None
        source = str(path.resolve())
    user = [{"role": "user", "content": REQUEST}]
    try:
        prefix = tokenizer.apply_chat_template(
            user, chat_template=template, add_generation_prompt=True, tokenize=False
        )
        answered = tokenizer.apply_chat_template(
            [*user, {"role": "assistant", "content": _PROBE}],
            chat_template=template,
            tokenize=False,
        )
    except Exception as error:  # jinja2's errors, and the template's own raise_exception
        raise TacitError(f"{where}: the template fails ({shorten(str(error))})") from None
    if not str(answered).startswith(str(prefix) + _PROBE):
        raise TacitError(
            f"{where}: the template does not write an assistant's message right after the "
            f"turn it opens ({shorten(repr(prefix))} then {shorten(repr(answered))}), so a "
            "sentence cannot be read as its answer"
        )
    record = {
        "source": source,
        "sha256": hashlib.sha256(template.encode("utf-8")).hexdigest(),
        "user": REQUEST,
        "prefix": str(prefix),
    }
    return str(prefix), record
