"""What the tests share that is not a fixture: paths to ../shared, the toy norms, builders of
tiny tokenizers and models (random weights, saved for the real from_pretrained code), and
assertion helpers. Nothing here is downloaded."""

from __future__ import annotations

import json
import os
import string
from pathlib import Path

import numpy as np
import pytest
import torch
from tokenizers import ByteLevelBPETokenizer
from transformers import (
    AutoModelForMaskedLM,
    AutoTokenizer,
    BertConfig,
    BertForMaskedLM,
    BertTokenizerFast,
    GPT2Config,
    GPT2LMHeadModel,
    GPT2TokenizerFast,
    LlamaConfig,
    LlamaForCausalLM,
    RobertaConfig,
    RobertaForMaskedLM,
    RobertaTokenizerFast,
    T5Config,
    T5ForConditionalGeneration,
    T5Tokenizer,
)
from typer.testing import CliRunner

from tacit.models.answers import Completion, GenerationRequest, Sampling
from tacit.models.base import Scorer

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("TACIT_SHARED_DATA", REPO.parent / "shared" / "data"))
REAL_NORMS = SHARED_DATA / "cslb" / "norms.dat"
REAL_BERT_VOCAB = SHARED_DATA / "tokenizers" / "bert-base-cased" / "vocab.txt"
REAL_ROBERTA_DIR = SHARED_DATA / "tokenizers" / "roberta-base"
COMMON_VOCAB = SHARED_DATA / "vocab" / "common_vocab_cased.txt"

needs_shared = pytest.mark.skipif(
    not REAL_NORMS.is_file() or not REAL_BERT_VOCAB.is_file(),
    reason=f"../shared/data (CSLB norms, real tokenizer files) not found at {SHARED_DATA}",
)

REAL_MCRAE = SHARED_DATA / "mcrae" / "CONCS_FEATS_concstats_brm.xlsx"
needs_mcrae = pytest.mark.skipif(
    not REAL_MCRAE.is_file(), reason=f"McRae's norms workbook not found at {REAL_MCRAE}"
)

HEADER = "domain\tfeature type\tconcept\tfeature\tpf\tfeature alternatives\tparticipant list"

# A made-up norms table in CSLB's format: (concept, feature type, feature, pf[, participants]).
# Participants default to "p 1 2 ... pf"; dog / has a tail occurs twice, as four real pairs do.
TOY_NORMS = [
    ("bear", "visual perceptual", "has fur_hair", 20),
    ("bear", "visual perceptual", "is big_large", 18),
    ("bear", "visual perceptual", "has claws", 12),
    ("bear", "encyclopaedic", "does live in forests_woods", 9),
    ("bear", "functional", "does eat fish", 9),
    ("bear", "taxonomic", "is an animal", 7),
    ("cat", "visual perceptual", "has fur_hair", 25),
    ("cat", "visual perceptual", "has a tail", 15),
    ("cat", "encyclopaedic", "is a pet", 14),
    ("cat", "functional", "does purr", 11),
    ("cat", "functional", "does catch mice", 6),
    ("dog", "visual perceptual", "has fur_hair", 22),
    ("dog", "encyclopaedic", "is a pet", 20),
    ("dog", "functional", "does bark", 19),
    ("dog", "functional", "does fetch", 8),
    ("dog", "visual perceptual", "has a tail", 8),
    ("dog", "encyclopaedic", "has a tail", 3, "p 7 8 / 9"),
    ("knife", "functional", "does cut", 24),
    ("knife", "visual perceptual", "made of metal", 20),
    ("knife", "visual perceptual", "is sharp", 19),
    ("knife", "visual perceptual", "has a handle", 10),
    ("apple", "visual perceptual", "is red", 20),
    ("apple", "functional", "is eaten_edible", 18),
    ("bat_(animal)", "functional", "does fly", 20),
    ("coffee_machine", "functional", "does make coffee", 20),
    ("zebra", "visual perceptual", "has stripes", 25),
    # more properties, so that bear, cat, dog and knife reach ten (the paper's maximum)
    ("bear", "visual perceptual", "is brown", 6),
    ("bear", "functional", "does hibernate", 6),
    ("bear", "functional", "does climb trees", 5),
    ("bear", "encyclopaedic", "is dangerous", 5),
    ("bear", "visual perceptual", "has a nose", 4),
    ("bear", "functional", "does roar", 3),
    ("bear", "encyclopaedic", "is wild", 2),
    ("cat", "visual perceptual", "is small", 5),
    ("cat", "visual perceptual", "has whiskers", 5),
    ("cat", "functional", "does sleep", 4),
    ("cat", "visual perceptual", "has claws", 3),
    ("cat", "other perceptual", "is soft", 3),
    ("cat", "visual perceptual", "has paws", 2),
    ("dog", "encyclopaedic", "is loyal", 7),
    ("dog", "functional", "does wag its tail", 6),
    ("dog", "visual perceptual", "has paws", 4),
    ("dog", "functional", "does run", 3),
    ("dog", "encyclopaedic", "is friendly", 2),
    ("knife", "encyclopaedic", "is dangerous", 9),
    ("knife", "functional", "is used for cooking", 8),
    ("knife", "visual perceptual", "has a blade", 7),
    ("knife", "visual perceptual", "is long", 4),
    ("knife", "visual perceptual", "is shiny", 3),
    ("knife", "encyclopaedic", "is found in kitchens", 2),
]

# the files of a retrieval run in vocabulary mode (the run directory: docs/run-directory.md)
RETRIEVAL_RUN_FILES = [
    "dropped.csv",
    "manifest.json",
    "prompts.csv",
    "result.json",
    "summary.csv",
    "vocab.txt",
]

TOY_WORDS = [
    "bear",
    "cat",
    "dog",
    "knife",
    "zebra",
    "apple",
    "animal",
    "pet",
    "fur",
    "big",
    "claws",
    "tail",
    "handle",
    "metal",
    "sharp",
    "red",
    "stripes",
    "fish",
    "mice",
    "coffee",
    "has",
    "is",
    "a",
    "an",
    "A",
    "and",
    "made",
    "of",
    "lives",
    "live",
    "in",
    "forests",
    "eats",
    "purrs",
    "catches",
    "barks",
    "fetches",
    "cuts",
    "eaten",
    "flies",
    "makes",
    "the",
    "Everyone",
    "knows",
    "that",
    "it",
    "with",
]


def write_norms(path: Path, rows=TOY_NORMS, line_end: str = "\r\n") -> Path:
    """Write rows in CSLB's format (tab-separated, CRLF line ends by default)."""
    lines = [HEADER]
    for concept, ftype, feature, pf, *who in rows:
        participants = who[0] if who else "p " + " ".join(str(i) for i in range(1, pf + 1))
        lines.append("\t".join(["living", ftype, concept, feature, str(pf), feature, participants]))
    path.write_bytes(line_end.join(lines + [""]).encode("utf-8"))
    return path


def random_rows(seed: int, concepts: int = 9, features: int = 12, people: int = 10):
    """CSLB rows whose concepts share features by group of three, listed by random people."""
    rng = np.random.default_rng(seed)
    rows = []
    for c in range(concepts):
        for f in range(features):
            who = [
                p for p in range(1, people + 1) if rng.random() < (0.6 if f % 3 == c % 3 else 0.1)
            ]
            if who:
                rows.append(
                    (
                        f"c{c}",
                        "encyclopaedic",
                        f"has f{f}",
                        len(who),
                        "p " + " ".join(map(str, who)),
                    )
                )
    return rows


# A made-up table in McRae's format: (Concept, Feature, BR_Label, Prod_Freq); pen / used_for_
# writing occurs twice, as it does in the real file.
TOY_MCRAE = [
    ("accordion", "a_musical_instrument", "taxonomic", 28),
    ("accordion", "has_keys", "visual-form_and_surface", 17),
    ("accordion", "inbeh_-_produces_music", "sound", 11),
    ("bat_(animal)", "beh_-_flies", "visual-motion", 20),
    ("bear", "is_furry/fuzzy", "tactile", 9),
    ("bear", "an_animal", "taxonomic", 12),
    ("bear", "is_brown", "visual-colour", 14),
    ("dog", "has_4_legs", "visual-form_and_surface", 15),
    ("dog", "has_a_tail", "visual-form_and_surface", 12),
    ("dog", "beh_-_barks", "sound", 21),
    ("knife", "made_of_metal", "visual-form_and_surface", 20),
    ("knife", "used_for_cutting", "function", 25),
    ("knife", "is_sharp", "tactile", 19),
    ("lemon", "tastes_sour", "taste", 18),
    ("lemon", "is_yellow", "visual-colour", 22),
    ("onion", "smells_bad", "smell", 6),
    ("pen", "used_for_writing", "function", 16),
    ("pen", "used_for_writing", "function", 5),
    ("pen", "lives_in_desks", "encyclopaedic", 5),
]


# McRae-style features of concepts the tiny test tokenizers hold as one token
TINY_MCRAE = [
    ("bear", "has_fur", "visual-form_and_surface", 20),
    ("bear", "is_big", "visual-form_and_surface", 18),
    ("bear", "has_claws", "visual-form_and_surface", 12),
    ("bear", "beh_-_eats_fish", "visual-motion", 9),
    ("bear", "an_animal", "taxonomic", 7),
    ("bear", "lives_in_forests", "encyclopaedic", 6),
    ("cat", "has_fur", "visual-form_and_surface", 25),
    ("cat", "has_a_tail", "visual-form_and_surface", 15),
    ("cat", "a_pet", "encyclopaedic", 14),
    ("cat", "beh_-_purrs", "sound", 11),
    ("cat", "used_for_catching_mice", "function", 6),
    ("knife", "used_for_cutting", "function", 24),
    ("knife", "made_of_metal", "visual-form_and_surface", 20),
    ("knife", "is_sharp", "tactile", 19),
    ("knife", "has_a_handle", "visual-form_and_surface", 10),
]


def mcrae_frame(rows=TOY_MCRAE):
    """Rows as McRae's sheet has them: its column names, with some of the columns we ignore."""
    import pandas as pd

    frame = pd.DataFrame(rows, columns=["Concept", "Feature", "BR_Label", "Prod_Freq"])
    frame.insert(2, "WB_Label", "made_up")
    frame["Rank_PF"] = frame.groupby("Concept").cumcount() + 1
    return frame


def write_mcrae(path: Path, rows=TOY_MCRAE, sheet: str = "concepts_features") -> Path:
    """Write rows as McRae's workbook (.xlsx, with its second sheet), or as a CSV or TSV export
    of its concepts_features sheet (by the path's suffix)."""
    import pandas as pd

    frame = mcrae_frame(rows)
    if path.suffix == ".xlsx":
        with pd.ExcelWriter(path, engine="openpyxl") as writer:
            frame.to_excel(writer, sheet_name=sheet, index=False)
            pd.DataFrame({"Variable": ["Concept"]}).to_excel(
                writer, sheet_name="variable_explanations", index=False
            )
    else:
        frame.to_csv(path, sep="\t" if path.suffix == ".tsv" else ",", index=False)
    return path


def toy_sentences() -> list[str]:
    """Sentences over TOY_WORDS, used to train the tiny BPE tokenizer."""
    words = " ".join(TOY_WORDS)
    return [
        words,
        "A bear has fur, is big, and has claws.",
        "Everyone knows that a cat has a tail.",
    ] * 3


def tiny_bert_tokenizer(directory: Path) -> BertTokenizerFast:
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    pieces = ["##s", "##es", "##ing", ".", ",", "...", "!"]
    vocab_file = directory / "wordpiece.txt"
    vocab_file.write_text("\n".join(specials + TOY_WORDS + pieces) + "\n")
    tokenizer = BertTokenizerFast(vocab=str(vocab_file), do_lower_case=False)
    assert len(tokenizer) == len(specials) + len(TOY_WORDS) + len(pieces)
    return tokenizer


def tiny_roberta_tokenizer(directory: Path) -> RobertaTokenizerFast:
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        toy_sentences(),
        vocab_size=400,
        min_frequency=1,
        special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
        show_progress=False,
    )
    bpe.save_model(str(directory))
    tokenizer = RobertaTokenizerFast(
        vocab=str(directory / "vocab.json"), merges=str(directory / "merges.txt")
    )
    assert len(tokenizer) > 200
    return tokenizer


def _tiny_config(config_class, tokenizer, **extra):
    # roberta-base's vocab.json has gaps (50,262 entries, ids up to 50,264): size by largest id
    shape = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)
    return config_class(
        vocab_size=max(tokenizer.get_vocab().values()) + 1,
        max_position_embeddings=128,
        pad_token_id=tokenizer.pad_token_id,
        **{**shape, **extra},
    )


def save_tiny_bert(directory: Path, tokenizer, seed: int = 0) -> Path:
    """A random-weight BERT masked LM with this tokenizer, saved for from_pretrained."""
    torch.manual_seed(seed)
    model = BertForMaskedLM(_tiny_config(BertConfig, tokenizer))
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def save_tiny_roberta(directory: Path, tokenizer, seed: int = 0, **shape) -> Path:
    """A random-weight RoBERTa masked LM with this tokenizer, saved for from_pretrained
    (`shape`: hidden_size and the like, in place of the tiny ones)."""
    torch.manual_seed(seed)
    config = _tiny_config(
        RobertaConfig,
        tokenizer,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        **shape,
    )
    config.max_position_embeddings = 130  # RoBERTa's positions start after the padding index
    model = RobertaForMaskedLM(config)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def real_tokenizer_file(path: Path) -> str:
    """A file of a real tokenizer under ../shared/data; the test skips, with the place looked
    in, where it is absent (a clone without ../shared)."""
    if not path.is_file():
        pytest.skip(f"real tokenizer files not found under {SHARED_DATA}")
    return str(path)


def real_bert_tokenizer() -> BertTokenizerFast:
    tokenizer = BertTokenizerFast(vocab=real_tokenizer_file(REAL_BERT_VOCAB), do_lower_case=False)
    assert len(tokenizer) == 28996
    return tokenizer


def real_roberta_tokenizer() -> RobertaTokenizerFast:
    tokenizer = RobertaTokenizerFast(
        vocab=real_tokenizer_file(REAL_ROBERTA_DIR / "vocab.json"),
        merges=real_tokenizer_file(REAL_ROBERTA_DIR / "merges.txt"),
    )
    assert len(tokenizer) > 50000
    return tokenizer


def real_gpt2_tokenizer(*, bos: str | None = None) -> GPT2TokenizerFast:
    """GPT-2's byte-level BPE (roberta-base's vocab.json and merges.txt are GPT-2's), with its
    `<|endoftext|>` as BOS and EOS; with `bos`, another BOS (a Llama-shaped model's `<s>`)."""
    extra = {"bos_token": bos, "eos_token": "</s>"} if bos else {}
    tokenizer = GPT2TokenizerFast(
        vocab=real_tokenizer_file(REAL_ROBERTA_DIR / "vocab.json"),
        merges=real_tokenizer_file(REAL_ROBERTA_DIR / "merges.txt"),
        **extra,
    )
    assert len(tokenizer) == 50262
    return tokenizer


def toy_gpt2_tokenizer(directory: Path) -> GPT2TokenizerFast:
    """A GPT-2 tokenizer on the toy byte-level BPE (needs no ../shared), `<s>` as BOS."""
    directory.mkdir(parents=True, exist_ok=True)
    tiny_roberta_tokenizer(directory)  # writes vocab.json and merges.txt there
    return GPT2TokenizerFast(
        vocab=str(directory / "vocab.json"),
        merges=str(directory / "merges.txt"),
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        pad_token="<pad>",
    )


def sentencepiece_style_tokenizer():
    """A Llama-2-style tokenizer (`▁` put before the text and for every space, as SentencePiece
    does; no byte-level pre-tokenizer) on GPT-2's merges with `Ġ` written `▁`."""
    import json

    from tokenizers import Tokenizer, decoders, models, normalizers
    from transformers import PreTrainedTokenizerFast

    vocab = json.loads(Path(real_tokenizer_file(REAL_ROBERTA_DIR / "vocab.json")).read_text())
    vocab = {token.replace("Ġ", "▁"): i for token, i in vocab.items()}
    lines = Path(real_tokenizer_file(REAL_ROBERTA_DIR / "merges.txt")).read_text().splitlines()[1:]
    merges = [tuple(line.replace("Ġ", "▁").split(" ")) for line in lines if line]
    backend = Tokenizer(models.BPE(vocab, merges, unk_token="<unk>"))
    backend.normalizer = normalizers.Sequence(
        [normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")]
    )
    backend.decoder = decoders.Sequence(
        [decoders.Replace("▁", " "), decoders.Fuse(), decoders.Strip(" ", 1, 0)]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        pad_token="<pad>",
    )


def save_tiny_gpt2(directory: Path, tokenizer, seed: int = 0, n_positions: int = 128) -> Path:
    """A random-weight GPT-2 (causal LM) with this tokenizer, saved for from_pretrained."""
    torch.manual_seed(seed)
    config = GPT2Config(
        vocab_size=max(tokenizer.get_vocab().values()) + 1,
        n_embd=32,
        n_layer=2,
        n_head=2,
        n_positions=n_positions,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    GPT2LMHeadModel(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def save_peaked_gpt2(directory: Path, tokenizer, seed: int = 0) -> Path:
    """A tiny GPT-2 whose scores look like a trained model's where causal vocabulary mode
    prunes: the next token's log-probabilities spread over tens of nats (the final layer
    norm's scale times 30), and "." follows any word with a probability that varies from word
    to word (its embedding and the final norm's bias share a direction), so that the text
    after the blank reorders the words and most of them can be left unscored."""
    from transformers import AutoModelForCausalLM

    save_tiny_gpt2(directory, tokenizer, seed)
    model = AutoModelForCausalLM.from_pretrained(directory)
    direction = torch.randn(model.config.n_embd, generator=torch.Generator().manual_seed(seed))
    direction /= direction.norm()
    with torch.no_grad():
        model.transformer.ln_f.weight.mul_(30.0)
        model.transformer.ln_f.bias.copy_(150.0 * direction)
        model.transformer.wte.weight[tokenizer.convert_tokens_to_ids(".")] = 0.1 * direction
    model.save_pretrained(directory)
    return directory


def save_tiny_llama(directory: Path, tokenizer, seed: int = 0) -> Path:
    """A random-weight Llama-shaped causal LM (rotary positions, RMSNorm, gated MLP, grouped
    key/value heads, untied head) with this tokenizer, saved for from_pretrained."""
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=max(tokenizer.get_vocab().values()) + 1,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=128,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        tie_word_embeddings=False,
    )
    LlamaForCausalLM(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def tiny_t5_tokenizer() -> T5Tokenizer:
    """transformers' own T5 tokenizer (a SentencePiece-style Unigram: `▁` before every word,
    `</s>` after every text, 100 sentinels `<extra_id_N>` at the end of the vocabulary with
    `<extra_id_0>` last, as T5's) on a made-up vocabulary: TOY_WORDS whole, punctuation and
    single letters as pieces (needs no ../shared)."""
    pieces = {"<pad>": 0.0, "</s>": 0.0, "<unk>": 0.0, "▁": -6.0}
    pieces.update({f"▁{word}": -3.0 for word in TOY_WORDS})
    pieces.update({piece: -4.0 for piece in [".", ",", "!", "s", "es"]})
    for letter in sorted(set("".join(TOY_WORDS)) | set(string.ascii_letters)):
        pieces.setdefault(letter, -8.0)
    pieces.update({f"<extra_id_{i}>": 0.0 for i in range(99, -1, -1)})
    tokenizer = T5Tokenizer(vocab=list(pieces.items()), extra_ids=100)
    assert tokenizer.convert_tokens_to_ids("<extra_id_0>") == len(pieces) - 1
    return tokenizer


def real_bpe_t5_tokenizer() -> GPT2TokenizerFast:
    """GPT-2's byte-level BPE (roberta-base's files) with `<pad>`, `</s>` and T5's first two
    sentinels added as special tokens: a T5-shaped model on a real 50,000-word vocabulary whose
    words are `Ġword` (no `</s>` is appended: the encoder reads what this tokenizer gives)."""
    tokenizer = GPT2TokenizerFast(
        vocab=real_tokenizer_file(REAL_ROBERTA_DIR / "vocab.json"),
        merges=real_tokenizer_file(REAL_ROBERTA_DIR / "merges.txt"),
        pad_token="<pad>",
        eos_token="</s>",
    )
    taken = set(tokenizer.get_vocab().values())
    tokenizer.add_special_tokens({"additional_special_tokens": ["<extra_id_0>", "<extra_id_1>"]})
    added = tokenizer.convert_tokens_to_ids(["<extra_id_0>", "<extra_id_1>"])
    assert not taken & set(added), added  # ids of their own (vocab.json has gaps)
    return tokenizer


def save_tiny_t5(directory: Path, tokenizer, seed: int = 0) -> Path:
    """A random-weight T5 (encoder-decoder, relative positions, tied embeddings scaled as T5
    scales them) with this tokenizer, saved for from_pretrained."""
    torch.manual_seed(seed)
    config = T5Config(
        vocab_size=max(tokenizer.get_vocab().values()) + 1,
        d_model=32,
        d_kv=8,
        d_ff=64,
        num_layers=2,
        num_decoder_layers=2,
        num_heads=4,
        relative_attention_num_buckets=8,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.pad_token_id,
    )
    T5ForConditionalGeneration(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def seq2seq_reference(model_dir, templates, spans):
    """Every span in every template's blank, scored the plain way, one pair at a time, as
    lm-evaluation-harness's seq2seq loglikelihood(context, continuation) does: the encoder reads
    the template with `<extra_id_0>` in its blank (the tokenizer's special tokens added; a
    token of whitespace alone beside the sentinel left out, as tacit documents), the labels are `<extra_id_0>`, ` SPAN` tokenised without them, `<extra_id_1>`; one forward pass
    with `labels`, log_softmax (float64), gather. Returns [templates x spans] arrays: the
    target's log-probability, its span tokens' (between the sentinels), and their number."""
    from transformers import AutoModelForSeq2SeqLM

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForSeq2SeqLM.from_pretrained(model_dir).eval()
    opening, closing = tokenizer.convert_tokens_to_ids(["<extra_id_0>", "<extra_id_1>"])
    total, span, n = [], [], []
    for template in templates:
        context = tokenizer(template.replace("<mask>", "<extra_id_0>"))["input_ids"]
        at = context.index(opening)
        glued = not template.partition("<mask>")[2][:1].isspace()
        beside = {at - 1} | ({at + 1} if glued else set())
        context = [
            t for i, t in enumerate(context) if i not in beside or tokenizer.decode(t).strip() != ""
        ]
        for text in spans:
            inner = tokenizer(" " + text, add_special_tokens=False)["input_ids"]
            labels = [opening, *inner, closing]
            with torch.no_grad():
                logits = model(input_ids=torch.tensor([context]), labels=torch.tensor([labels]))
            logprobs = torch.log_softmax(logits.logits[0].double(), -1)
            lp = logprobs.gather(1, torch.tensor(labels).unsqueeze(1)).squeeze(1).numpy()
            total.append(lp.sum())
            span.append(lp[1:-1].sum())
            n.append(len(labels) - 2)
    shape = (len(templates), len(spans))
    return np.reshape(total, shape), np.reshape(span, shape), np.reshape(n, shape)


# a made-up chat template of the common shape (a role marker, the message, an end marker)
CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}"
    "{% if m['role'] == 'assistant' %}{{ eos_token }}{% endif %}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


def with_chat_template(model_dir, directory: Path, template: str = CHAT_TEMPLATE) -> str:
    """A copy of a model directory whose tokenizer carries `template` as its chat template."""
    import shutil

    shutil.copytree(model_dir, directory, dirs_exist_ok=True)
    tokenizer = AutoTokenizer.from_pretrained(directory)
    tokenizer.chat_template = template
    tokenizer.save_pretrained(directory)
    return str(directory)


def start_of(tokenizer) -> int:
    """The start token tacit puts before a causal model's sentences (its rule is tested on its
    own in tests/models/test_start_token.py)."""
    from tacit.models.start import start_token

    return start_token(tokenizer, None).id


def plain_causal(model_dir):
    """A causal LM directory loaded the plain way (transformers alone, eval mode): (model,
    tokenizer), for the reference computations below."""
    from transformers import AutoModelForCausalLM

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    return AutoModelForCausalLM.from_pretrained(model_dir).eval(), tokenizer


def causal_logprobs(model, tokenizer, sentences, start=None):
    """The plain way, one sentence at a time: start token + the sentence's tokens, one forward
    pass, log_softmax (float64), gather; per-token log-probabilities of the sentence's tokens.
    `start`: the token id to begin from (None: tacit's rule, start_of)."""
    if start is None:
        start = start_of(tokenizer)
    out = []
    for sentence in sentences:
        ids = torch.tensor([[start, *tokenizer(sentence, add_special_tokens=False)["input_ids"]]])
        with torch.no_grad():
            logprobs = torch.log_softmax(model(input_ids=ids).logits[0].double(), -1)
        out.append(logprobs[:-1].gather(1, ids[0, 1:].unsqueeze(1)).squeeze(1).numpy())
    return out


def chat_logprobs(model_dir, sentences):
    """The plain way for an instruct model's chat template: transformers renders the
    conversation (the user's turn tacit.models.chat.REQUEST, the assistant's turn opened), its
    tokens then the sentence's, one forward pass, log_softmax (float64); each of the
    sentence's tokens' log-probability."""
    from tacit.models.chat import REQUEST

    model, tokenizer = plain_causal(model_dir)
    prefix = tokenizer.apply_chat_template(
        [{"role": "user", "content": REQUEST}], add_generation_prompt=True, tokenize=False
    )
    context = tokenizer(prefix, add_special_tokens=False)["input_ids"]
    out = []
    for sentence in sentences:
        ids = tokenizer(sentence, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([context + ids])).logits[0].double()
        logprobs = torch.log_softmax(logits, -1)[len(context) - 1 : -1]
        out.append(logprobs.gather(1, torch.tensor(ids).unsqueeze(1)).squeeze(1).numpy())
    return out


def sentence_of(template: str, span: str) -> tuple[str, int, int]:
    """The sentence with `span` in the template's blank, and the characters of the span with
    its leading space (as tacit's causal scorer counts them)."""
    before, after = template.split("<mask>")
    prefix = before.rstrip()
    return prefix + before[len(prefix) :] + span + after, len(prefix), len(before) + len(span)


def causal_span_reference(plain, templates, spans, *, start=None):
    """Every span in every template's blank, scored the plain way (causal_logprobs): [templates
    x spans] arrays of the span's tokens' log-probability, the whole sentence's, and the
    number of the span's tokens. `plain`: a model directory, or its (model, tokenizer)
    already loaded (plain_causal); `start` as for causal_logprobs."""
    model, tokenizer = plain_causal(plain) if isinstance(plain, (str, Path)) else plain
    sentences = [sentence_of(t, s) for t in templates for s in spans]
    logprobs = causal_logprobs(model, tokenizer, [text for text, _, _ in sentences], start)
    span, total, n = [], [], []
    for (text, first, last), lp in zip(sentences, logprobs):
        offsets = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        inside = [a < last and b > first for a, b in offsets["offset_mapping"]]
        span.append(lp[inside].sum())
        total.append(lp.sum())
        n.append(sum(inside))
    shape = (len(templates), len(spans))
    return (np.reshape(span, shape), np.reshape(total, shape), np.reshape(n, shape))


def causal_reference(model_dir, sentences):
    """causal_logprobs of a model directory loaded the plain way (plain_causal)."""
    return causal_logprobs(*plain_causal(model_dir), sentences)


def causal_vocab_reference(model_dir, prompts, vocab_ids):
    """The brute force of a causal model's vocabulary mode, the plain way: for every prompt and
    word, the sentence with the word's token in the blank (the text after it tokenised as the
    whole sentence tokenises it), a forward pass over the start token and the sentence
    (sentences of one length stacked, no padding), log_softmax, gather, and the sum of the
    log-probabilities of the word's token and every token after it: log P(w | before) +
    log P(after | before, w) (log_softmax only where a token is read: the positions of the
    text before the blank are read by none). Returns [prompts x words]."""
    from transformers import AutoModelForCausalLM

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    start = start_of(tokenizer)
    out = np.zeros((len(prompts), len(vocab_ids)))
    first: dict[str, int] = {}  # a repeated prompt's row is its first one's
    for row, prompt in enumerate(prompts):
        if prompt in first:
            out[row] = out[first[prompt]]
            continue
        first[prompt] = row
        before, after = prompt.split("<mask>")
        prefix_ids = tokenizer(before.rstrip(), add_special_tokens=False)["input_ids"]
        after_ids = tokenizer(after, add_special_tokens=False)["input_ids"] if after else []
        n = len(prefix_ids)
        by_length: dict[int, list[tuple[int, list[int]]]] = {}
        for column, word in enumerate(vocab_ids):
            text = tokenizer.decode([int(word)]).lstrip()
            ids = tokenizer(before + text + after, add_special_tokens=False)["input_ids"]
            rest = ids[n + 1 :] if ids[:n] == prefix_ids and ids[n] == word else after_ids
            sentence = [start, *prefix_ids, int(word), *rest]
            by_length.setdefault(len(sentence), []).append((column, sentence))
        for group in by_length.values():
            tokens = torch.tensor([sentence for _, sentence in group])
            with torch.no_grad():
                kept = model(input_ids=tokens, logits_to_keep=tokens.shape[1] - n).logits
            logits = kept[:, :-1]  # the positions n, n + 1, ... predicting tokens n + 1, ...
            logprobs = torch.log_softmax(logits.double(), -1)
            picked = logprobs.gather(2, tokens[:, n + 1 :].unsqueeze(2)).squeeze(2)
            out[row, [column for column, _ in group]] = picked.sum(1).numpy()
    return out


def out_of_memory_above(forward, rows: int):
    """`forward` (bound or not), made to run out of device memory on batches of more than `rows`
    inputs, as a GPU does on a batch too large: OutOfMemoryError simulated on the CPU."""
    from tacit.models.batching import OUT_OF_MEMORY

    def wrapped(*args, **kwargs):
        if kwargs["input_ids"].shape[0] > rows:
            raise OUT_OF_MEMORY("simulated")
        return forward(*args, **kwargs)

    return wrapped


def probe_in_one_thread(args):
    """`probe ARGS` in this process at one torch thread, as the tests' own `probe` processes
    run (OMP_NUM_THREADS=1): the same numbers as theirs, without another interpreter importing
    torch, where the process boundary is not what a test checks (a kill -9, torchrun)."""
    from tacit.cli import app

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return CliRunner().invoke(app, [str(a) for a in args])
    finally:
        torch.set_num_threads(threads)


def fails_cleanly(args, message, out=None):
    """Run `probe ARGS`: exit status 1, one line on stderr that names the problem (contains
    `message`), no traceback, and with `out`, no run directory left behind."""
    from tacit.cli import app

    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 1, (args, result.output)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert message in lines[0], lines[0]
    assert "Traceback" not in result.output
    if out is not None:
        assert not out.exists()
    return lines[0]


def reference(model_dir, prompts, vocab_ids):
    """The plain way: whole model, full logits, softmax over the whole vocabulary.

    The mask token is glued to the word before it, so that whatever the tokenizer does with
    spaces, the mask stands for the space-prefixed word.
    """
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForMaskedLM.from_pretrained(model_dir).eval()
    probs = []
    for prompt in prompts:
        text = prompt.replace(" <mask>", "<mask>").replace("<mask>", tokenizer.mask_token)
        enc = tokenizer(text, return_tensors="pt")
        with torch.no_grad():
            logits = model(**enc).logits[0]
        position = (enc["input_ids"][0] == tokenizer.mask_token_id).nonzero().item()
        probs.append(logits[position].softmax(-1).numpy())
    probs = np.stack(probs)
    return probs, probs[:, vocab_ids]


def plain_span_scores(
    model_dir: str, templates, spans, scoring: str
) -> tuple[np.ndarray, np.ndarray]:
    """The plain way: for each pair and each of the span's tokens, its own forward pass of the
    whole model (full logits), log_softmax, the token's value, summed."""
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForMaskedLM.from_pretrained(model_dir).eval()
    scores = np.zeros((len(templates), len(spans)))
    lengths = np.zeros((len(templates), len(spans)), dtype=int)
    for t, template in enumerate(templates):
        start = template.index("<mask>")
        for s, span in enumerate(spans):
            sentence = template.replace("<mask>", span)
            encoded = tokenizer(sentence, return_offsets_mapping=True)
            ids, offsets = encoded["input_ids"], encoded["offset_mapping"]
            inside = [
                n
                for n, (a, b) in enumerate(offsets)
                if b > a and b > start and a < start + len(span)
            ]
            first, last = inside[0], inside[-1] + 1
            lengths[t, s] = last - first
            steps = range(last - first) if scoring == "l2r" else [0]
            for i in steps:
                masked = list(ids)
                masked[first + i : last] = [tokenizer.mask_token_id] * (last - first - i)
                with torch.no_grad():
                    logits = model(input_ids=torch.tensor([masked])).logits[0]
                log_probs = logits.log_softmax(-1)
                read = [first + i] if scoring == "l2r" else range(first, last)
                scores[t, s] += sum(log_probs[p, ids[p]].item() for p in read)
    return scores, lengths


def interrupt_after_one_chunk(patch) -> None:
    """Score the first chunk (of 4 texts), then Ctrl-C: a run with something to resume."""
    import tacit.engine.runner
    from tacit.models.masked import MaskedLMScorer

    score = MaskedLMScorer.score_vocab
    calls = []

    def interrupted_second_time(*args, **kwargs):
        calls.append(1)
        if len(calls) > 1:
            raise KeyboardInterrupt
        return score(*args, **kwargs)

    patch.setattr(tacit.engine.runner, "CHUNK_TEXTS", 4)
    patch.setattr(MaskedLMScorer, "score_vocab", interrupted_second_time)


def run_as_two_ranks(args: list[str], env: dict[str, str]) -> tuple[list, list[tuple[str, str]]]:
    """`python -m tacit.cli ARGS` as ranks 0 and 1 of a torchrun-style launch (`env` has its
    MASTER_* and WORLD_SIZE), without torchrun's agent: (the processes, their (stdout, stderr))."""
    import subprocess
    import sys

    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "tacit.cli", *args],
            env={**env, "RANK": str(rank), "LOCAL_RANK": str(rank)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for rank in (0, 1)
    ]
    try:
        outputs = [p.communicate(timeout=240) for p in processes]
    finally:
        for p in processes:
            p.kill()
    return processes, outputs


MLAMA_TEMPLATES = [
    {"relation": "P1", "template": "[X] hat [Y] ."},
    {"relation": "P2", "template": "[X] ist aus [Y] ."},
    {"relation": "P3", "template": "[X] ohne Lücke ."},  # no [Y]: dropped
    {"relation": "P5", "template": "[X] mag [Y] ."},
]
MLAMA_TRIPLES = {
    "P1": [
        ("bear", "fur"),
        ("cat", "claws"),
        ("zebra", "fur"),
        ("cat", "claws"),  # repeated
        ("", "fur"),  # empty subject
        ("dog", "[Y]"),  # bracketed
    ],
    "P2": [("knife", "metal"), ("apple", "fur")],
    "P3": [("bear", "cat")],
    "P4": [("bear", "dog"), ("cat", "dog")],  # no template
    "P5": [("bear", "apple"), ("cat", "apple")],  # one object only
}


def write_mlama(root: Path, language: str = "de") -> Path:
    """A small release in mLAMA's layout (invented rows, not mLAMA's data): one language's
    templates.jsonl and a file of triples per relation, with a triple of each kind the
    converter drops."""
    folder = root / language
    folder.mkdir(parents=True)
    lines = [json.dumps(t, ensure_ascii=False) for t in MLAMA_TEMPLATES]
    (folder / "templates.jsonl").write_text("\n".join(lines) + "\n")
    for relation, triples in MLAMA_TRIPLES.items():
        rows = [
            {"sub_label": s, "obj_label": o, "lineid": n, "uuid": f"{relation}-{n}"}
            for n, (s, o) in enumerate(triples)
        ]
        (folder / f"{relation}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


class Scripted(Scorer):
    """A model that answers a question by the first of `script`'s keys it contains (`default`
    else), so that what is said, and every number made from it, is known by hand. An answer
    ending `...` is cut (finish reason `length`); a list of answers gives one per draw."""

    kind = "scripted"
    capabilities = frozenset({"generate"})

    def __init__(self, script: dict[str, str | list[str]], default: str = "I don't know.") -> None:
        self.name, self.script, self.default = "scripted", script, default
        self.tokenizer, self.batch_size, self.asked = None, 1, []

    def record(self):
        return {"name": self.name, "kind": self.kind, "class": "Scripted"}

    def chats(self) -> bool:
        return True

    def _generate(self, requests: list[GenerationRequest], sampling: Sampling, progress):
        said = []
        for request in requests:
            text = request.messages[-1]["content"]
            self.asked.append(text)
            answer = next((a for key, a in self.script.items() if key in text), self.default)
            draws = answer if isinstance(answer, list) else [answer] * sampling.n
            said.append(
                [
                    Completion(a, "length" if a.endswith("...") else "stop", None, 10, 5)
                    for a in draws
                ]
            )
        return said


def assert_declared(manifest: dict) -> None:
    """Every key of a run's manifest is declared: by every run's (Manifest) or by its probe
    (Probe.manifest_keys); every key of a model's record by the engine's (ModelRecord), the
    family that ran it (Family.record_keys) or the probe (Probe.model_keys)."""
    from tacit.core.manifest import declared_keys
    from tacit.core.modelspec import ModelSpec
    from tacit.models.families import family_of
    from tacit.probes import registry

    probe = registry.of_run(manifest)
    undeclared = set(manifest) - declared_keys(probe.manifest_keys)
    assert not undeclared, f"{probe.name}: undeclared manifest keys {sorted(undeclared)}"
    for model in manifest["models"]:
        family = family_of(ModelSpec.parse(model["name"]))
        undeclared = set(model) - declared_keys(family.record_keys, probe.model_keys)
        assert not undeclared, f"{probe.name}, {family.name}: undeclared {sorted(undeclared)}"


def vocabulary_prompts(norms, vocab, *args, a_rule=True, **options):
    """Retrieval's prompts over the shared vocabulary `vocab`, as a run builds them: the
    concepts that can be targets, those left out with their reasons."""
    from tacit.probes.retrieve.prompts import build_prompts, eligible_concepts

    eligible, dropped = eligible_concepts(norms, vocab, a_rule=a_rule)
    return build_prompts(norms, eligible, *args, dropped=dropped, **options)
