"""Model families behind one scorer interface (tacit.models.base.Scorer).

A family is one module with a Scorer subclass, registered in FAMILIES by its kind. Which
family a checkpoint belongs to is read off its config's architectures (`*ForMaskedLM`,
`*ForSequenceClassification`, or any class transformers loads as a causal or masked LM), so
`--model` takes any checkpoint and the probe says which kinds it can use.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from tacit.core.errors import TacitError

if TYPE_CHECKING:
    from tacit.core.modelspec import ModelSpec
    from tacit.core.options import RunOptions
    from tacit.models.base import Scorer

# kind -> "module:class"; imported only when a model of that kind is loaded
FAMILIES = {
    "masked": "tacit.models.masked:MaskedLMScorer",
    "classifier": "tacit.models.classifier:NLIClassifier",
    "causal": "tacit.models.causal:CausalLMScorer",
}
# how each kind's checkpoints name their architecture in config.json
_ARCHITECTURE_SUFFIXES = {
    "ForMaskedLM": "masked",
    "ForSequenceClassification": "classifier",
}


def family(kind: str) -> type[Scorer]:
    """The Scorer class of a kind."""
    module, _, name = FAMILIES[kind].partition(":")
    return getattr(importlib.import_module(module), name)


def model_kind(
    name_or_path: str | ModelSpec, revision: str | None = None, *, flag: str = "--model"
) -> str:
    """The kind of a checkpoint, from its config's architectures (no weights are loaded).
    `name_or_path`: a name or path, or a ModelSpec (its revision and trust_remote_code apply).

    A config without architectures is taken for a masked LM (loading then refuses it if its
    masked-LM head is missing).
    """
    from transformers import AutoConfig

    from tacit.core.modelspec import ModelSpec
    from tacit.vocab.hub import hub_access
    from tacit.vocab.tokenizers import check_model_source, not_found, quiet_transformers

    spec = name_or_path if isinstance(name_or_path, ModelSpec) else ModelSpec(name_or_path)
    name, revision = spec.name, spec.revision or revision
    check_model_source(name, tokenizer=False, flag=flag)
    remote = {"trust_remote_code": True} if spec.trust_remote_code else {}
    try:
        with quiet_transformers(), hub_access(name) as hub:
            config = AutoConfig.from_pretrained(name, revision=revision, **remote, **hub)
    except (OSError, ValueError) as err:
        raise not_found(name, err, flag) from err
    architectures = getattr(config, "architectures", None) or []
    for architecture in architectures:
        if kind := _kind_of_architecture(architecture):
            return kind
    if not architectures:
        return "masked"
    raise TacitError(
        f"{name}: a {', '.join(architectures)} checkpoint is none of the model kinds "
        f"tacit can score ({', '.join(FAMILIES)}): give a checkpoint with a masked-LM head, a "
        "causal-LM head (decoder-only) or an NLI classification head"
    )


def _kind_of_architecture(architecture: str) -> str | None:
    """`masked`, `classifier` or `causal` for an architecture class name; None for others (a
    bare encoder, a seq2seq model). Causal LMs are named unevenly (`GPT2LMHeadModel`,
    `LlamaForCausalLM`), so transformers' own causal-LM table decides; BERT-like encoders
    with a causal head (`BertLMHeadModel`) count as causal too, as that table says."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    for suffix, kind in _ARCHITECTURE_SUFFIXES.items():
        if architecture.endswith(suffix):
            return kind
    if architecture in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.values() or architecture.endswith(
        "ForCausalLM"
    ):
        return "causal"
    return None


def check_kind(
    name: str, kind: str, kinds: Sequence[str], probe: str, hints: Mapping[str, str] | None = None
) -> None:
    """A one-line error unless a model of `kind` is one the probe can use; `hints`: what to do
    instead, by kind (the probe says)."""
    if kind not in kinds:
        hint = (hints or {}).get(kind, "")
        raise TacitError(
            f"{name} is a {kind} model; {probe} takes {' or '.join(kinds)} models{hint}"
        )


def load_scorer(
    name_or_path: str,
    options: RunOptions,
    *,
    kinds: Sequence[str] = ("masked",),
    probe: str = "this probe",
    tokenizer: Any = None,
    load_options: Mapping[str, Mapping[str, Any]] | None = None,
    hints: Mapping[str, str] | None = None,
) -> Scorer:
    """Load a model (its text: a name or path with its own loading options, if any) as the
    run's options say, as the family its checkpoint belongs to, if that
    is one of the `kinds` the probe can use (else a one-line error, with the probe's `hints`).
    `load_options` gives each kind's own keyword arguments (the classifier's label names)."""
    kind = model_kind(options.model_spec(name_or_path))
    if kind == "masked" and kind not in kinds and len(kinds) == 1:
        kind = kinds[0]  # a config without architectures: let loading check the head
    check_kind(name_or_path, kind, kinds, probe, hints)
    extra = dict((load_options or {}).get(kind, {}))
    if tokenizer is not None:
        extra["tokenizer"] = tokenizer
    return family(kind).from_options(name_or_path, options, **extra)  # type: ignore[return-value]
