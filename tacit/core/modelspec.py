"""A model and how to load it, as one plain value: a hub id or a local directory, then loading
options named as transformers and lm-evaluation-harness name them, per model:

    EleutherAI/pythia-160m,revision=step1000,dtype=bfloat16
    bert-base-cased,peft=path/to/adapter
    org/model,trust_remote_code=true,attn_implementation=sdpa,load_in_4bit=true

The same text works on the command line (`--model`), in Python (`models=[...]`, or a
ModelSpec) and in sweep files, and names the model in tables and manifests. Options for every
model of a run come from RunOptions (`revision`, `dtype`, `model_args`); a model's own win.
Nothing heavy is imported here: whether a GPU is there, whether peft or bitsandbytes are
installed, is checked when the model loads (tacit.models.loading).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tacit.core.choices import LOAD_DTYPES, check_choice
from tacit.core.errors import TacitError, shorten
from tacit.core.interface import option

# the loading options, in the order a model's text lists them, and what each does
LOAD_OPTIONS = {
    "revision": "branch, tag or commit of a hub model (e.g. a training checkpoint, step1000)",
    "dtype": "the weights' precision: float32, float16, bfloat16, or auto (the checkpoint's)",
    "trust_remote_code": "run the model's own code from its hub repository (read it first)",
    "attn_implementation": "transformers' attention kernel: eager, sdpa, flash_attention_2, ...",
    "peft": "a PEFT adapter (LoRA, ...) put on the model: a directory or a hub id",
    "load_in_8bit": "8-bit weights through bitsandbytes (CUDA GPUs only)",
    "load_in_4bit": "4-bit (NF4) weights through bitsandbytes (CUDA GPUs only)",
}
_BOOLEANS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}
_FLAGS = ("trust_remote_code", "load_in_8bit", "load_in_4bit")


@dataclass(frozen=True)
class ModelSpec:
    """A model (`name`: a hub id or a local directory) and its loading options; None: not
    given (the run's option, else transformers' default, applies).

    Examples:
        >>> spec = ModelSpec.parse("EleutherAI/pythia-160m,revision=step1000,dtype=bfloat16")
        >>> spec.name, spec.revision, spec.dtype
        ('EleutherAI/pythia-160m', 'step1000', 'bfloat16')
        >>> spec.text
        'EleutherAI/pythia-160m,revision=step1000,dtype=bfloat16'
    """

    name: str
    revision: str | None = None
    dtype: str | None = None
    trust_remote_code: bool | None = None
    attn_implementation: str | None = None
    peft: str | None = None
    load_in_8bit: bool | None = None
    load_in_4bit: bool | None = None

    def __post_init__(self) -> None:
        label = option("--model")
        if not isinstance(self.name, str) or not self.name:
            raise TacitError(f"{label} {self.name!r}: expected a hub id or a local directory")
        for key in _FLAGS:
            value = getattr(self, key)
            if value is not None and not isinstance(value, bool):
                object.__setattr__(self, key, _boolean(value, f"{label} {self.name}: {key}"))
        if self.dtype is not None:
            check_choice(f"{label} {self.name}: dtype", self.dtype, LOAD_DTYPES)
        if self.load_in_8bit and self.load_in_4bit:
            raise TacitError(f"{label} {self.name}: load_in_8bit and load_in_4bit: pick one")

    @classmethod
    def parse(cls, text: str, *, flag: str = "--model") -> ModelSpec:
        """`NAME[,KEY=VALUE...]` -> a ModelSpec. An existing path is a name whatever it holds (a
        directory may have a comma in its name); a KEY that is not a loading option is a
        one-line error naming the option and the ones there are."""
        if not isinstance(text, str):
            raise TacitError(f"{option(flag)} {text!r}: expected a model's name or path")
        if "=" not in text or _exists(text):
            return cls(text.strip())
        where = f"{option(flag)} {shorten(text)}"
        parts = text.split(",")
        cut = len(parts)  # the options are the KEY=VALUE parts at the end
        while (
            cut > 1
            and "=" in parts[cut - 1]
            and parts[cut - 1].split("=")[0].strip() in LOAD_OPTIONS
        ):
            cut -= 1
        name = ",".join(parts[:cut]).strip()
        if cut > 1 and not _exists(name):  # NAME,typo=1: say which part is not an option
            _options(parts[1:cut], where)
        return cls(name, **_options(parts[cut:], where))

    @classmethod
    def of(cls, model: str | ModelSpec | Mapping[str, Any]) -> ModelSpec:
        """A model as the API takes it: its text, a ModelSpec, or a mapping with `name`."""
        if isinstance(model, ModelSpec):
            return model
        if isinstance(model, Mapping):
            unknown = sorted(set(model) - {"name", *LOAD_OPTIONS})
            if unknown or "name" not in model:
                raise TacitError(
                    f"{option('--model')} {dict(model)!r}: expected `name` and any of "
                    f"{', '.join(LOAD_OPTIONS)}"
                )
            return cls(**model)
        return cls.parse(model)

    def given(self) -> dict[str, Any]:
        """The loading options given, in declared order."""
        return {k: getattr(self, k) for k in LOAD_OPTIONS if getattr(self, k) is not None}

    @property
    def text(self) -> str:
        """The model as one line of text (how tables and manifests name it)."""
        pairs = [
            f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in self.given().items()
        ]
        return ",".join([self.name, *pairs])

    def over(self, defaults: Mapping[str, Any]) -> ModelSpec:
        """This model's options, the run's `defaults` where it gives none."""
        filled = {k: v for k, v in defaults.items() if v is not None and getattr(self, k) is None}
        return replace(self, **filled) if filled else self

    @property
    def quantization(self) -> str | None:
        """`8bit`, `4bit` or None."""
        return "8bit" if self.load_in_8bit else "4bit" if self.load_in_4bit else None


def model_text(model: str | ModelSpec | Mapping[str, Any]) -> str:
    """A model given to the API as its text (a name, or a name with options): a string is kept
    as the caller wrote it (it names the model in tables), the others are written out."""
    return model if isinstance(model, str) else ModelSpec.of(model).text


def parse_model_args(value: str | Mapping[str, Any] | None) -> dict[str, Any]:
    """Loading options for every model of a run: `KEY=VALUE,...` (lm-evaluation-harness's
    `--model_args`) or a mapping; checked as a model's own are."""
    label = option("--model-args")
    if value is None:
        return {}
    if isinstance(value, str):
        pairs = [part.strip() for part in value.split(",") if part.strip()]
        given = _options(pairs, f"{label} {shorten(value)}", "KEY=VALUE,...")
    elif isinstance(value, Mapping):
        pairs = [f"{k}={v}" for k, v in value.items()]
        given = _options(pairs, f"{label} {shorten(dict(value))}", "KEY=VALUE,...")
    else:
        raise TacitError(f"{label} {value!r}: expected KEY=VALUE pairs or a mapping")
    ModelSpec("model", **given)  # the same checks as a model's own options
    return given


def _options(pairs: list[str], where: str, form: str = "NAME,KEY=VALUE,...") -> dict[str, Any]:
    """KEY=VALUE texts -> the options they give (booleans read; each key once)."""
    given: dict[str, Any] = {}
    for pair in pairs:
        key, equals, value = (s.strip() for s in pair.partition("="))
        if key not in LOAD_OPTIONS or not equals:
            raise TacitError(
                f"{where}: {shorten(pair, 30)!r} is not a loading option: expected {form} with "
                f"KEY one of {', '.join(LOAD_OPTIONS)}"
            )
        if key in given:
            raise TacitError(f"{where}: {key} is given twice")
        if not value:
            raise TacitError(f"{where}: {key} needs a value")
        given[key] = _boolean(value, f"{where}: {key}") if key in _FLAGS else value
    return given


def _boolean(value: Any, where: str) -> bool:
    if isinstance(value, bool):
        return value
    if str(value).lower() not in _BOOLEANS:
        raise TacitError(f"{where}={value}: expected true or false")
    return _BOOLEANS[str(value).lower()]


def _exists(text: str) -> bool:
    try:
        return Path(text).expanduser().exists()
    except OSError:  # a name too long to look up: not a path
        return False
