"""A model and how to load it, as one plain value: a hub id, a local directory, a GGUF file or
a served model's name, then loading options named as transformers and lm-evaluation-harness
name them (`EleutherAI/pythia-160m,revision=step1000,dtype=bfloat16`,
`meta-llama/Llama-3.1-70B,base_url=http://localhost:8000/v1`). The same text works on the
command line, in Python and in sweep files. Which options a model takes is its family's to
say (tacit.models.families); values are typed as they are read; a run's options (`revision`,
`dtype`, `model_args`: RunOptions) fill in what a model's own do not give. Nothing heavy is
imported here; docs/models.md lists the options.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tacit.core.choices import LOAD_DTYPES, check_choice
from tacit.core.errors import TacitError, shorten
from tacit.core.option_names import option
from tacit.core.secrets import redact


@dataclass(frozen=True)
class LoadOption:
    """A loading option a model's text may give (NAME,KEY=VALUE), declared once: what it does
    (`help`), the value it takes as the docs show it (`value`), how that value reads (`kind`:
    a text, never read as a number; a boolean; a whole number; a number) and, for a number,
    its default and least value. tacit's own are LOAD_OPTIONS; a family declares its own the
    same way (tacit.models.families.Family.options), and every help and check comes from
    these declarations."""

    help: str
    value: str = "VALUE"
    kind: type = str
    default: Any = None
    least: float | None = None
    expected: str = ""  # what an error says the value must be, where the kind's words are not

    @property
    def described(self) -> str:
        """What it does, with its default where it has one (docs, help)."""
        if self.default is None:
            return self.help
        shown = f"{self.default:g}" if isinstance(self.default, float) else self.default
        return f"{self.help} (default {shown})"

    def read(self, key: str, value: Any, where: str) -> Any:
        """`value` as this option's kind reads it; else a one-line error naming `where` and
        `key` (`where`: the model, as --model gave it)."""
        if self.kind is str:
            return value
        if self.kind is bool:
            return _boolean(value, f"{where}: {key}")
        try:
            number = float(value)
            read = self.kind(number)
            if isinstance(value, bool) or read != number:
                raise ValueError
        except (TypeError, ValueError, OverflowError):
            read = None
        if read is None or (self.least is not None and read < self.least):
            words = self.expected or ("a whole number" if self.kind is int else "a number")
            least = "" if self.least is None else f" >= {self.least:g}"
            raise TacitError(f"{where}: {key}={value}: expected {words}{least}")
        return read


# tacit's own loading options, in the order a model's text lists them
LOAD_OPTIONS = {
    "revision": LoadOption(
        "a branch, tag or commit of a hub model (training checkpoints: revision=step1000)", "REV"
    ),
    "dtype": LoadOption(
        "the weights' precision: float32, float16, bfloat16, or auto (the checkpoint's own)", "D"
    ),
    "trust_remote_code": LoadOption(
        "run the model's own code from its hub repository (read it first)", "true", bool
    ),
    "attn_implementation": LoadOption(
        "transformers' attention kernel: eager, sdpa, flash_attention_2, ...", "A"
    ),
    "peft": LoadOption(
        "a PEFT adapter (LoRA, ...) put on the model: a directory or a hub id", "DIR"
    ),
    "load_in_8bit": LoadOption("8-bit weights through bitsandbytes (CUDA GPUs only)", "true", bool),
    "load_in_4bit": LoadOption(
        "4-bit (NF4) weights through bitsandbytes (CUDA GPUs only)", "true", bool
    ),
    "gguf_file": LoadOption(
        "a GGUF file in the model's directory or hub repository, dequantised to float", "NAME"
    ),
    "start_token": LoadOption(
        "what a causal model's sentences start from: bos, eos or a token's text (e.g. "
        "<|endoftext|>); default: one rule per kind of tokenizer (docs/probes/causal.md, "
        "'The start token')",
        "T",
    ),
    "chat_template": LoadOption(
        "an instruct causal LM's sentences read as its chat answer: true, or a Jinja file",
        "true",
    ),
    "system": LoadOption(
        "with chat_template, the conversation's system message: TEXT, or none for no system "
        "turn (default: what the template writes, often a system turn of its own)",
        "TEXT",
    ),
    "base_url": LoadOption(
        "an OpenAI-compatible server that scores the model: http://HOST:PORT/v1", "URL"
    ),
    "tokenizer": LoadOption(
        "the tokenizer to plan with, where the model's own is elsewhere (hub id or path)", "ID"
    ),
    "label": LoadOption(
        "a short name for the model in every table, title and leaderboard (the manifest keeps "
        "its whole text beside it, redacted)",
        "NAME",
    ),
    "random_weights": LoadOption(
        "a control: the model's architecture and tokenizer with weights drawn at random, torch "
        "seeded with this number (--control random-weights); its text ends "
        "' (random weights, seed N)'",
        "SEED",
        int,
        least=0,
        expected="a seed, a whole number",
    ),
}
# a random-weight control's text: the model's, then this (ModelSpec.text, ModelSpec.parse)
RANDOM_WEIGHTS = re.compile(r"\s+\(random weights, seed (\d+)\)$")
_BOOLEANS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}
_KEY = re.compile(r"^\s*[A-Za-z_][A-Za-z0-9_]*\s*=")


class ModelSpec:
    """A model (`name`: a hub id, a local directory or file, a served model's name) and its
    loading options as given (`options`, in order); an option not given: the run's, else the
    family's default, applies.

    Examples:
        >>> spec = ModelSpec.parse("EleutherAI/pythia-160m,revision=step1000,dtype=bfloat16")
        >>> spec.name, spec.revision, spec.dtype
        ('EleutherAI/pythia-160m', 'step1000', 'bfloat16')
        >>> spec.text
        'EleutherAI/pythia-160m,revision=step1000,dtype=bfloat16'
        >>> ModelSpec.parse("gpt2,subfolder=step1,low_cpu_mem_usage=true").given()
        {'subfolder': 'step1', 'low_cpu_mem_usage': True}
    """

    __slots__ = ("name", "_options")
    name: str
    _options: dict[str, Any]

    def __init__(self, name: str, **options: Any) -> None:
        label = option("--model")
        if not isinstance(name, str) or not name:
            raise TacitError(f"{label} {name!r}: expected a hub id or a local directory")
        given = {k: v for k, v in options.items() if v is not None}
        for key, declared in LOAD_OPTIONS.items():
            if key in given:
                given[key] = declared.read(key, given[key], f"{label} {name}")
        if "dtype" in given:
            check_choice(f"{label} {name}: dtype", given["dtype"], LOAD_DTYPES)
        if given.get("load_in_8bit") and given.get("load_in_4bit"):
            raise TacitError(f"{label} {name}: load_in_8bit and load_in_4bit: pick one")
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "_options", given)

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError("a ModelSpec does not change: make another (over, with_options)")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ModelSpec) and (self.name, self._options) == (
            other.name,
            other._options,
        )

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return f"ModelSpec({self.public!r})"  # never a secret, even in a traceback

    @classmethod
    def parse(cls, text: str, *, flag: str = "--model") -> ModelSpec:
        """`NAME[,KEY=VALUE...]` -> a ModelSpec. An existing path is a name whatever it holds (a
        directory may have a comma in its name); the KEY=VALUE parts at the end are options."""
        if not isinstance(text, str):
            raise TacitError(f"{option(flag)} {text!r}: expected a model's name or path")
        control = RANDOM_WEIGHTS.search(text)
        if control is not None and not _exists(text):  # `NAME (random weights, seed N)`
            model = cls.parse(text[: control.start()], flag=flag)
            return cls(model.name, **model.given(), random_weights=int(control[1]))
        if "=" not in text or _exists(text):
            return cls(text.strip())
        where = f"{option(flag)} {shorten(text)}"
        parts = text.split(",")
        cut = len(parts)  # the options are the KEY=VALUE parts at the end
        while cut > 1 and _KEY.match(parts[cut - 1]):
            cut -= 1
        for longer in range(len(parts) - 1, cut, -1):  # a path with `,KEY=` in its own name
            if _exists(",".join(parts[:longer]).strip()):
                cut = longer
                break
        name = ",".join(parts[:cut]).strip()
        if cut > 1 and not _exists(name):  # NAME,x=1,oops: say which part is not an option
            bad = next(p for p in parts[1:cut] if not _KEY.match(p))
            raise TacitError(
                f"{where}: {shorten(bad, 30)!r} is not a loading option: expected "
                "NAME,KEY=VALUE,..."
            )
        return cls(name, **_options(parts[cut:], where))

    @classmethod
    def of(cls, model: str | ModelSpec | Mapping[str, Any]) -> ModelSpec:
        """A model as the API takes it: its text, a ModelSpec, or a mapping with `name`."""
        if isinstance(model, ModelSpec):
            return model
        if isinstance(model, Mapping):
            if "name" not in model:
                raise TacitError(
                    f"{option('--model')} {dict(model)!r}: expected `name` and its loading "
                    f"options (tacit's: {', '.join(LOAD_OPTIONS)})"
                )
            return cls(**model)
        return cls.parse(model)

    def given(self) -> dict[str, Any]:
        """The loading options given, tacit's own first (in LOAD_OPTIONS' order)."""
        order = {key: n for n, key in enumerate(LOAD_OPTIONS)}
        ordered = sorted(self._options, key=lambda key: order.get(key, len(order)))
        return {key: self._options[key] for key in ordered}

    def get(self, key: str, default: Any = None) -> Any:
        return self._options.get(key, default)

    @property
    def text(self) -> str:
        """The model as one line of text, as given (what loads it; it may hold a secret: what
        is written or shown of it is `public`)."""
        pairs = [
            f"{k}={str(v).lower() if isinstance(v, bool) else v}"
            for k, v in self.given().items()
            if k != "random_weights"
        ]
        text = ",".join([self.name, *pairs])
        if self.random_weights is not None:
            text += f" (random weights, seed {self.random_weights})"
        return text

    @property
    def public(self) -> str:
        """The text without its secrets (tacit.core.secrets): what may be written or shown."""
        return redact(self.text)

    def over(self, defaults: Mapping[str, Any]) -> ModelSpec:
        """This model's options, the run's `defaults` where it gives none."""
        filled = {k: v for k, v in defaults.items() if v is not None and k not in self._options}
        return ModelSpec(self.name, **self._options, **filled) if filled else self

    def without(self, *keys: str) -> ModelSpec:
        """This model without some of its options (what a family reads itself)."""
        return ModelSpec(self.name, **{k: v for k, v in self._options.items() if k not in keys})

    # tacit's own options, read by name
    revision = property(lambda self: self.get("revision"))
    dtype = property(lambda self: self.get("dtype"))
    trust_remote_code = property(lambda self: self.get("trust_remote_code"))
    attn_implementation = property(lambda self: self.get("attn_implementation"))
    peft = property(lambda self: self.get("peft"))
    load_in_8bit = property(lambda self: self.get("load_in_8bit"))
    load_in_4bit = property(lambda self: self.get("load_in_4bit"))
    gguf_file = property(lambda self: self.get("gguf_file"))
    start_token = property(lambda self: self.get("start_token"))
    chat_template = property(lambda self: self.get("chat_template"))
    system = property(lambda self: self.get("system"))
    base_url = property(lambda self: self.get("base_url"))
    label = property(lambda self: self.get("label"))
    random_weights = property(lambda self: self.get("random_weights"))

    @property
    def quantization(self) -> str | None:
        """`8bit`, `4bit` or None."""
        return "8bit" if self.load_in_8bit else "4bit" if self.load_in_4bit else None


def model_name(text: str, spec: ModelSpec) -> str:
    """How tables, titles, leaderboards and messages name a model given as `text` (`spec`: the
    text read): its `label=`, a control's followed by ` (random weights, seed N)`; else the
    text as given, without its secrets (tacit.core.secrets).

    Examples:
        >>> model_name("m,base_url=http://u:pw@h/v1", ModelSpec.parse("m,base_url=http://u:pw@h/v1"))
        'm,base_url=http://h/v1'
        >>> model_name("gpt2,label=GPT-2 (random weights, seed 0)",
        ...            ModelSpec.parse("gpt2,label=GPT-2 (random weights, seed 0)"))
        'GPT-2 (random weights, seed 0)'
    """
    if spec.label is None:
        return redact(text)
    seed = spec.random_weights
    return spec.label + ("" if seed is None else f" (random weights, seed {seed})")


def model_text(model: str | ModelSpec | Mapping[str, Any]) -> str:
    """A model given to the API as its text (a name, or a name with options): a string is kept
    as the caller wrote it (it names the model in tables), the others are written out."""
    return model if isinstance(model, str) else ModelSpec.of(model).text


def parse_model_args(value: str | Mapping[str, Any] | None) -> dict[str, Any]:
    """Loading options for every model of a run: `KEY=VALUE,...` (lm-evaluation-harness's
    `--model_args`) or a mapping; read and checked as a model's own are."""
    label = option("--model-args")
    if value is None:
        return {}
    if isinstance(value, str):
        pairs = [part.strip() for part in value.split(",") if part.strip()]
    elif isinstance(value, Mapping):
        pairs = [f"{k}={v}" for k, v in value.items()]
        value = dict(value)
    else:
        raise TacitError(f"{label} {value!r}: expected KEY=VALUE pairs or a mapping")
    given = _options(pairs, f"{label} {shorten(value)}", "KEY=VALUE,...")
    ModelSpec("model", **given)  # the same checks as a model's own options
    return given


def typed(key: str, value: str, where: str = "") -> Any:
    """A loading option's text as its value: tacit's own texts and booleans as their
    declaration reads them (LoadOption.read: a bad boolean is a one-line error naming `where`),
    any other `true`/`false` as a boolean, a whole number or a decimal as a number (as
    lm-evaluation-harness reads `--model_args`), else the text.

    Examples:
        >>> typed("revision", "1000"), typed("low_cpu_mem_usage", "true"), typed("top_k", "5")
        ('1000', True, 5)
    """
    declared = LOAD_OPTIONS.get(key)
    if declared is not None and declared.kind in (str, bool):
        return declared.read(key, value, where or "--model")
    if value.lower() in ("true", "false"):
        return _boolean(value, key)
    for number in (int, float):
        try:
            return number(value)
        except ValueError:
            pass
    return value


def _options(pairs: list[str], where: str, form: str = "NAME,KEY=VALUE,...") -> dict[str, Any]:
    """KEY=VALUE texts -> the options they give (typed; each key once)."""
    given: dict[str, Any] = {}
    for pair in pairs:
        key, equals, value = (s.strip() for s in pair.partition("="))
        if not equals or not key.isidentifier():
            raise TacitError(
                f"{where}: {shorten(pair, 30)!r} is not a loading option: expected {form}"
            )
        if key in given:
            raise TacitError(f"{where}: {key} is given twice")
        if not value:
            raise TacitError(f"{where}: {key} needs a value")
        given[key] = typed(key, value, where)
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
