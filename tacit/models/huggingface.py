"""The in-process Hugging Face family: a hub id, a local directory or a GGUF file, loaded with
`from_pretrained` into this process (tacit.models.runtime), scored as the kind of model its
config's architectures say: a masked LM (`*ForMaskedLM`), a causal LM (any class transformers
loads as one), a seq2seq LM (an encoder-decoder transformers loads as one: T5, mT5, Flan-T5,
scored by sentinel infilling) or an NLI classifier (`*ForSequenceClassification`).

It claims every model no other family claims. Its loading options are tacit's own
(tacit.core.modelspec.LOAD_OPTIONS) and any other keyword transformers' `from_pretrained`
takes (`subfolder`, `variant`, `low_cpu_mem_usage`, ...) or the model's config has, passed on
as given; a key that is none of these is refused in one line (a typo never goes unseen).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Protocol, cast

from tacit.core.errors import TacitError
from tacit.core.manifest import ModelRecord
from tacit.core.modelspec import LOAD_OPTIONS, ModelSpec
from tacit.core.option_names import option
from tacit.models import gguf
from tacit.models.families import Family

if TYPE_CHECKING:
    from tacit.core.options import RunOptions
    from tacit.models.base import Needs, Scorer

# its loading options: tacit's own but those only a model a server scores takes
IN_PROCESS_OPTIONS = {k: o for k, o in LOAD_OPTIONS.items() if k not in ("base_url", "tokenizer")}


class InProcessRecord(ModelRecord, total=False):
    """What the in-process Hugging Face family records of a model (ModelRuntime.record, and
    what each kind of scorer adds)."""

    # how the weights were loaded: dtype (and dtype_asked), attn_implementation,
    # trust_remote_code, quantization (8bit, 4bit), peft (the adapter), keywords passed on
    load: dict[str, Any]
    local_path: str | None
    resolved_revision: str | None
    mask_token: str | None
    device_map: dict[str, int]  # --device-map: how many modules went to each device
    batch_size_auto: bool  # --batch-size auto: batch_size_used is what it found
    # a GGUF file: file, path, sha256, quantization, architecture, how it was dequantised
    gguf: dict[str, Any]
    # a causal model's: the token its sentences start from, its id, the rule that chose it
    start_token: dict[str, Any]
    # an instruct model's chat template: source, sha256, the user turn, the prefix's text
    chat_template: dict[str, Any]
    # seq2seq: the encoder's input, the decoder's target, the decoder's start token
    infilling: dict[str, str]


class InProcessScorer(Protocol):
    """What the family asks of each kind's scorer class (tacit.models.hf_scorer.HFScorer),
    named here so that the family's declaration imports none of them: they load with a model."""

    @classmethod
    def from_options(cls, name_or_path: str, options: RunOptions, **extra: Any) -> Scorer: ...


# kind -> the scorer class of that kind, "module:class"; imported only when one is loaded
SCORERS = {
    "masked": "tacit.models.masked:MaskedLMScorer",
    "classifier": "tacit.models.classifier:NLIClassifier",
    "causal": "tacit.models.causal:CausalLMScorer",
    "seq2seq": "tacit.models.seq2seq:Seq2SeqScorer",
}
# how each kind's checkpoints name their architecture in config.json
_ARCHITECTURE_SUFFIXES = {
    "ForMaskedLM": "masked",
    "ForSequenceClassification": "classifier",
}


def scorer_class(kind: str) -> type[Scorer]:
    """The Scorer class of a kind, imported now."""
    module, _, name = SCORERS[kind].partition(":")
    scorer: type[Scorer] = getattr(importlib.import_module(module), name)
    return scorer


def kind_of_architecture(architecture: str) -> str | None:
    """`masked`, `classifier`, `causal` or `seq2seq` for an architecture class name; None for
    others (a bare encoder). Causal LMs are named unevenly (`GPT2LMHeadModel`,
    `LlamaForCausalLM`), so transformers' own causal-LM table decides; BERT-like encoders
    with a causal head (`BertLMHeadModel`) count as causal too, as that table says. Many
    `*ForConditionalGeneration` classes are not encoder-decoders (Gemma 3, LLaVA), so
    transformers' seq2seq table decides those (T5, mT5, BART, ...: the scorer then refuses a
    tokenizer without T5's sentinels)."""
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES,
    )

    for suffix, kind in _ARCHITECTURE_SUFFIXES.items():
        if architecture.endswith(suffix):
            return kind
    if architecture in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.values() or architecture.endswith(
        "ForCausalLM"
    ):
        return "causal"
    if architecture in MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES.values():
        return "seq2seq"
    return None


def model_kind(spec: ModelSpec, *, flag: str = "--model") -> str | None:
    """The kind of a checkpoint, from its config's architectures; None for a config without
    them (it loads as the kind a probe needs, and loading refuses it if that head is missing).
    A GGUF file says its architecture in its header (every one transformers reads is a causal
    LM but T5's, which tacit does not load from GGUF)."""
    from tacit.hub.model_files import check_model_source
    from tacit.models.loading import check_passed_on, read_config

    spec = gguf.resolved(spec)
    if spec.gguf_file is not None:
        check_model_source(spec.name, tokenizer=False, flag=flag, gguf_file=spec.gguf_file)
        gguf.check_readable(spec)
        if gguf.architecture(spec) in gguf.SEQ2SEQ:
            raise TacitError(
                f"{spec.text}: a seq2seq GGUF file: tacit loads seq2seq models from their "
                "transformers checkpoint (config.json and weights), not from GGUF"
            )
        return "causal"
    config = read_config(spec, flag)
    check_passed_on(spec, config)
    architectures = getattr(config, "architectures", None) or []
    for architecture in architectures:
        if kind := kind_of_architecture(architecture):
            return kind
    if not architectures:
        return None
    raise TacitError(
        f"{spec.name}: a {', '.join(architectures)} checkpoint is none of the model kinds "
        f"tacit can score ({', '.join(SCORERS)}): give a checkpoint with a masked-LM head, a "
        "causal-LM head (decoder-only), a seq2seq-LM head (T5-style) or an NLI classification "
        "head"
    )


class HuggingFaceFamily(Family):
    """Models run in this process by transformers (see the module docstring)."""

    name = "huggingface"
    description = "an in-process Hugging Face model"
    options = IN_PROCESS_OPTIONS
    record_keys = InProcessRecord

    def claims(self, spec: ModelSpec) -> bool:
        return spec.base_url is None  # every model no server scores

    def takes(self, key: str) -> bool:
        """tacit's options of other families are refused; any other key is checked against
        from_pretrained and the config when the model loads (check_passed_on)."""
        return key in self.options or key not in LOAD_OPTIONS

    def check_needs(self, spec: ModelSpec, needs: Needs) -> None:
        """`system` is the system message of the chat template's conversation: generation
        writes every chat with the template, scoring only with `chat_template`."""
        generates = all("generate" in wanted for wanted in needs.any_of)
        if spec.system is not None and spec.chat_template is None and not generates:
            raise TacitError(
                f"{option('--model')} {spec.text}: system is the system message of a chat "
                "template's conversation, which scoring writes only with it: add "
                "chat_template=true (or a Jinja file; asking by generation always writes it)"
            )

    def scorer_class(self, spec: ModelSpec, needs: Needs | None = None) -> type[Scorer]:
        kind = model_kind(spec)
        if kind is None:  # a config that does not say: the kind the probe needs, else masked
            fitting = [k for k in SCORERS if needs is not None and needs.met_by(scorer_class(k))]
            kind = fitting[0] if fitting else "masked"
        return scorer_class(kind)

    def tokenizer(self, spec: ModelSpec, flag: str = "--model") -> Any:
        from tacit.hub.model_files import load_tokenizer
        from tacit.models.loading import read_config

        spec = gguf.resolved(spec)
        return load_tokenizer(
            spec.name,
            revision=spec.revision,
            trust_remote_code=bool(spec.trust_remote_code),
            flag=flag,
            gguf_file=spec.gguf_file,
            config=read_config(spec, flag) if spec.gguf_file is None else None,
        )

    def load(self, text: str, options: RunOptions, scorer: type[Scorer], **extra: Any) -> Scorer:
        return cast(InProcessScorer, scorer).from_options(text, options, **extra)


FAMILY = HuggingFaceFamily()
