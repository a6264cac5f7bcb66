"""Where a model's files come from, and its tokenizer: a hub id or a local directory, checked
before transformers says something cryptic (and, when loading fails, the first damaged file
named: one cut short by an interrupted download or a full disk), loaded by `from_pretrained`
conventions. The shared vocabulary needs only tokenizers; the models (tacit.models.runtime)
load theirs from here too. transformers is imported only when a tokenizer is loaded."""

from __future__ import annotations

import json
import re
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tacit.core.errors import TacitError, first_line, shorten
from tacit.core.files import beside
from tacit.core.option_names import option
from tacit.hub.access import hub_access, not_cached

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "vocab.json", "tokenizer.model", "spiece.model")
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")


def check_model_source(
    name_or_path: str,
    *,
    config: bool = True,
    tokenizer: bool = True,
    flag: str = "--model",
    gguf_file: str | None = None,
) -> None:
    """Fail with a message a user can act on when `name_or_path` cannot be a model: a path that
    does not exist (and is not a hub id either), a directory without the config.json a model
    needs, or without tokenizer files (a GGUF file, `gguf_file`, holds both), a PEFT adapter
    given as a model. Hub ids pass: from_pretrained reports on them. `flag`: the option that
    named it (--model, --vocab-model), as errors say."""
    label = option(flag)
    path = Path(name_or_path).expanduser()
    try:
        is_dir, exists = path.is_dir(), path.exists()
    except OSError as err:  # a name too long for the file system, a directory we may not read
        raise TacitError(f"{label} {name_or_path}: cannot read it ({err.strerror})") from None
    if is_dir and gguf_file is not None:
        if not (path / gguf_file).is_file():
            raise TacitError(f"{label} {name_or_path}: no GGUF file {gguf_file} in it")
        return
    if is_dir and (path / "adapter_config.json").is_file() and not (path / "config.json").is_file():
        raise TacitError(
            f"{label} {name_or_path}: a PEFT adapter, not a model: give its base model with the "
            f"adapter as an option, BASE,peft={name_or_path}"
        )
    if is_dir:
        missing = [] if not config or (path / "config.json").is_file() else ["config.json"]
        if tokenizer and not any((path / f).is_file() for f in TOKENIZER_FILES):
            missing.append("tokenizer files (" + ", ".join(TOKENIZER_FILES[:3]) + ", ...)")
        if missing:
            inside = sorted(p.name for p in path.iterdir())[:5]
            raise TacitError(
                f"{label} {name_or_path}: not a model directory: no {' and no '.join(missing)} "
                f"in it (it holds {', '.join(inside) or 'nothing'}"
                f"{', ...' if len(inside) == 5 else ''})"
            )
        return
    if exists:
        raise TacitError(
            f"{label} {name_or_path}: a file, not a model directory (a GGUF file ends in .gguf; "
            "a directory's GGUF file is given as DIR,gguf_file=NAME)"
        )
    looks_local = name_or_path.startswith((".", "/", "~")) or name_or_path.count("/") > 1
    near = beside(name_or_path) if looks_local or path.suffix else None
    if near is not None:  # a file's or directory's name mistyped (`.ggfu` for `.gguf`)
        raise TacitError(f"{label} {name_or_path}: no such file or directory; did you mean {near}?")
    if looks_local or not _HUB_ID.match(name_or_path):
        raise TacitError(
            f"{label} {name_or_path}: no such directory (and not a Hugging Face hub id "
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


def not_found(name_or_path: str, err: Exception, flag: str = "--model") -> TacitError:
    """A loading error in one line naming the option; a hub id the hub does not have (or that
    cannot be fetched) says so plainly, and one the hub is not asked for (offline) says where
    the cache is (tacit.hub.access.not_cached)."""
    if (missing := not_cached(name_or_path, flag)) is not None:
        return missing
    message = shorten(first_line(err), 200)
    if "trust_remote_code" in str(err) or "contains custom code" in str(err):
        return TacitError(
            f"{option(flag)} {name_or_path}: the model's classes are its own code, in its "
            f"repository: read that code, then run it with {name_or_path},trust_remote_code=true "
            f"(or {option('--model-args')} trust_remote_code=true)"
        )
    if not Path(name_or_path).exists():
        return TacitError(
            f"{option(flag)} {name_or_path}: not a local directory, and the Hugging Face hub does "
            f"not have it or cannot give it ({message})"
        )
    return TacitError(f"{option(flag)} {name_or_path}: cannot load it ({message})")


def _model_dir(name_or_path: str, revision: str | None) -> Path | None:
    """The local directory, or the hub cache's snapshot; None if neither (no network call)."""
    path = Path(name_or_path).expanduser()
    if path.is_dir():
        return path
    try:
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(name_or_path, "config.json", revision=revision)
    except Exception:  # not a hub id, or no cache: nothing to look at
        return None
    return Path(cached).parent if isinstance(cached, str) else None


def _file_problem(file: Path) -> str | None:
    """Why a model's file cannot be read whole: JSON that does not parse, a safetensors header
    not covering the file, a torch zip cut short or failing a checksum; else None."""
    try:
        if file.suffix == ".json":
            json.loads(file.read_text(encoding="utf-8"))
        elif file.suffix == ".safetensors":
            from safetensors import safe_open

            with safe_open(str(file), framework="pt"):
                pass
        elif file.suffix == ".bin":
            with open(file, "rb") as handle:
                if handle.read(2) != b"PK":  # torch's legacy format: nothing to check
                    return None
                bad = zipfile.ZipFile(handle).testzip()  # BadZipFile when cut short
            return f"member {bad} fails its checksum" if bad else None
    except OSError:  # not the file's content: the loader's own error names it
        return None
    except Exception as err:  # any reader's error means the file cannot be read
        return shorten(first_line(err), 100)
    return None


def damaged_file(
    name_or_path: str, revision: str | None, flag: str = "--model"
) -> TacitError | None:
    """After loading failed: the model's first file that is damaged or cut short, in one line
    saying what to do; None when every file reads whole (the failure is about something else)."""
    directory = _model_dir(name_or_path, revision)
    try:
        files = sorted(directory.iterdir()) if directory is not None else []
    except OSError:  # an unreadable directory: the loader's own error says so
        return None
    found = [(file, problem) for file in files if (problem := _file_problem(file))]
    if directory is None or not found:
        return None
    if directory.parent.name == "snapshots":  # the hub cache: models--org--name/snapshots/
        fix = (
            f"delete {directory.parents[1]} (the model's folder in the Hugging Face cache) "
            "and run again to download it anew"
        )
    else:
        fix = f"copy, download or save the model into {directory} again"
    file, problem = found[0]
    return TacitError(
        f"{option(flag)} {name_or_path}: {file} is damaged or cut short ({problem}); {fix}"
    )


def explain_load_error(
    name_or_path: str, revision: str | None, err: Exception, flag: str = "--model"
) -> None:
    """Raise one line for a failed load: a damaged file named, or a hub id or path that cannot
    be loaded; return (the caller re-raises `err`) when it is neither, a bug not the user's."""
    if (damaged := damaged_file(name_or_path, revision, flag)) is not None:
        raise damaged from err
    if isinstance(err, (OSError, ValueError)):
        raise not_found(name_or_path, err, flag) from err


def load_tokenizer(
    name_or_path: str,
    *,
    revision: str | None = None,
    trust_remote_code: bool = False,
    flag: str = "--model",
    gguf_file: str | None = None,
    config: Any = None,
) -> PreTrainedTokenizerBase:
    """Load a tokenizer the way `from_pretrained` does: hub name or local directory (a
    tokenizer saved on its own, without a model's config.json, will do), or the GGUF file
    `gguf_file` in it; the hub is asked as tacit.hub.access says (once, briefly). `flag`: the
    option that named it, as errors say; `config`: the model's, read already (else transformers
    reads it where the tokenizer's files do not name their class)."""
    from transformers import AutoTokenizer

    check_model_source(name_or_path, config=False, flag=flag, gguf_file=gguf_file)
    extra: dict[str, Any] = {"gguf_file": gguf_file} if gguf_file is not None else {}
    if config is not None:
        extra["config"] = config
    try:
        with quiet_transformers(), hub_access(name_or_path) as hub:
            return AutoTokenizer.from_pretrained(
                name_or_path,
                revision=revision,
                trust_remote_code=trust_remote_code,
                **extra,
                **hub,
            )
    except Exception as err:
        explain_load_error(name_or_path, revision, err, flag)
        raise
