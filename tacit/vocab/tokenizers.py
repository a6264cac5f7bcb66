"""Where a model's files come from, and its tokenizer: a hub id or a local directory, checked
before transformers says something cryptic, loaded by `from_pretrained` conventions. The shared
vocabulary needs only tokenizers; the models (tacit.models.runtime) load theirs from here too.
transformers is imported only when a tokenizer is loaded."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from tacit.core.errors import TacitError, first_line

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "vocab.json", "tokenizer.model", "spiece.model")
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")


def check_model_source(name_or_path: str, *, config: bool = True, tokenizer: bool = True) -> None:
    """Fail with a message a user can act on when `name_or_path` cannot be a model: a path that
    does not exist (and is not a hub id either), a directory without the config.json a model
    needs, or without tokenizer files. Hub ids pass: from_pretrained reports on them."""
    path = Path(name_or_path).expanduser()
    if path.is_dir():
        missing = [] if not config or (path / "config.json").is_file() else ["config.json"]
        if tokenizer and not any((path / f).is_file() for f in TOKENIZER_FILES):
            missing.append("tokenizer files (" + ", ".join(TOKENIZER_FILES[:3]) + ", ...)")
        if missing:
            inside = sorted(p.name for p in path.iterdir())[:5]
            raise TacitError(
                f"--model {name_or_path}: not a model directory: no {' and no '.join(missing)} "
                f"in it (it holds {', '.join(inside) or 'nothing'}"
                f"{', ...' if len(inside) == 5 else ''})"
            )
        return
    if path.exists():
        raise TacitError(f"--model {name_or_path}: a file, not a model directory")
    looks_local = name_or_path.startswith((".", "/", "~")) or name_or_path.count("/") > 1
    if looks_local or not _HUB_ID.match(name_or_path):
        raise TacitError(
            f"--model {name_or_path}: no such directory (and not a Hugging Face hub id "
            "such as roberta-base or org/name)"
        )


@contextmanager
def quiet_transformers() -> Iterator[None]:
    """Silence transformers' own warnings and progress bars while loading: tacit reports what
    matters itself (a missing head is an error, not a warning in a table), and a user error
    stays one line."""
    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()


def not_found(name_or_path: str, err: Exception) -> TacitError:
    """A loading error in one line; a hub id that cannot be reached says so plainly."""
    message = first_line(err)
    if not Path(name_or_path).exists() and ("not a valid model identifier" in message
                                            or "huggingface.co" in message):  # fmt: skip
        return TacitError(
            f"--model {name_or_path}: not a local directory, and the Hugging Face hub does not "
            f"have it or cannot be reached ({message})"
        )
    return TacitError(f"cannot load {name_or_path!r}: {message}")


def load_tokenizer(name_or_path: str, *, revision: str | None = None) -> PreTrainedTokenizerBase:
    """Load a tokenizer the way `from_pretrained` does: hub name or local directory (a
    tokenizer saved on its own, without a model's config.json, will do)."""
    from transformers import AutoTokenizer

    check_model_source(name_or_path, config=False)
    try:
        with quiet_transformers():
            return AutoTokenizer.from_pretrained(name_or_path, revision=revision)
    except (OSError, ValueError) as err:
        raise not_found(name_or_path, err) from err
