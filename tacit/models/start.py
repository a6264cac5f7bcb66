"""The token a causal model's sentences start from: a sentence's first token is scored given
it, and which one it is changes every score (docs/probes/causal.md, "The start token"). One
rule per kind of tokenizer, a loading option (`start_token`) to choose another, and a record
of the choice for the manifest."""

from __future__ import annotations

from dataclasses import dataclass

from transformers import PreTrainedTokenizerBase

from tacit.core.errors import TacitError
from tacit.core.option_names import option

END_OF_TEXT = "<|endoftext|>"  # GPT-2's end of text, which its family's data put between texts
START_CHOICES = ("bos", "eos")


@dataclass(frozen=True)
class StartToken:
    """The token a causal model's sentences start from, and why (`rule`)."""

    id: int
    text: str
    rule: str


def own_start(tokenizer: PreTrainedTokenizerBase) -> int | None:
    """The special token the tokenizer itself puts before every text (Llama's `<s>`, Gemma's
    `<bos>`, OPT's `</s>`), or None (GPT-2's adds none)."""
    with_specials = tokenizer("a")["input_ids"]
    alone = tokenizer("a", add_special_tokens=False)["input_ids"]
    first = with_specials[0] if with_specials else None
    if first in tokenizer.all_special_ids and with_specials[1 : 1 + len(alone)] == alone:
        return first
    return None


def token_text(tokenizer: PreTrainedTokenizerBase, token: int) -> str:
    """A token's own text, as its vocabulary writes it."""
    return str(tokenizer.convert_ids_to_tokens(token))


def start_token(
    tokenizer: PreTrainedTokenizerBase, asked: str | None, name: str = "the model"
) -> StartToken:
    """The start token of a causal model's sentences (docs/probes/causal.md, "The start
    token"): the one `asked` (`bos`, `eos` or a token's text); by default the tokenizer's own
    BOS where it adds one itself (the token the model saw before every text); else GPT-2's
    `<|endoftext|>` where the vocabulary has it (the family's separator between texts: GPT-2,
    Pythia, SmolLM2, Qwen; a chat model may declare its chat tokens as BOS and EOS, which the
    model saw before a role's name, not a sentence); else the EOS, else the BOS."""
    where = f"{option('--model')} {name}: start_token"
    vocab = tokenizer.get_vocab()
    if asked is not None:
        key = asked.strip()
        if key.lower() == "none":
            raise TacitError(
                f"{where}=none: a causal model scores a sentence's first token only given a "
                "token before it; give bos, eos or a token's text"
            )
        if key.lower() in START_CHOICES:
            found = getattr(tokenizer, f"{key.lower()}_token_id")
            if found is None:
                raise TacitError(f"{where}={key}: the tokenizer has no {key.upper()} token")
            return StartToken(found, token_text(tokenizer, found), f"asked: {key}")
        if key not in vocab:
            raise TacitError(
                f"{where}={key}: not a token of its tokenizer; give bos, eos or a token's text "
                f"(its special tokens: {', '.join(tokenizer.all_special_tokens)})"
            )
        return StartToken(vocab[key], key, "asked")
    own = own_start(tokenizer)
    if own is not None:
        return StartToken(own, token_text(tokenizer, own), "the tokenizer's own BOS")
    if END_OF_TEXT in vocab:
        return StartToken(
            vocab[END_OF_TEXT], END_OF_TEXT, "end of text (the tokenizer adds no BOS)"
        )
    for key in ("eos", "bos"):
        found = getattr(tokenizer, f"{key}_token_id")
        if found is not None:
            text = token_text(tokenizer, found)
            return StartToken(found, text, f"{key.upper()} (the tokenizer adds no BOS)")
    raise TacitError(
        f"the tokenizer of {name!r} adds no BOS and has neither {END_OF_TEXT}, an EOS nor a "
        "BOS: a causal model needs a token to condition a sentence's first token on (give "
        "start_token=TOKEN)"
    )
