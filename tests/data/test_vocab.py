"""The shared vocabulary: single-token words per tokenizer, intersections, vocab files."""

import json

import pytest
from support import COMMON_VOCAB, needs_shared, real_bert_tokenizer, real_roberta_tokenizer

from tacit.core.errors import TacitError
from tacit.hub.model_files import load_tokenizer
from tacit.vocab import build_vocabulary, read_vocab_file, single_token_words
from tacit.vocab.cache import cached_words, tokenizer_key


def test_wordpiece_words_exclude_pieces_and_specials(tiny_bert):
    tokenizer = load_tokenizer(tiny_bert)
    words = single_token_words(tokenizer)
    assert words["bear"] == tokenizer.convert_tokens_to_ids("bear")
    assert "##s" not in words and "s" not in words
    assert not {"[MASK]", "[CLS]", "[PAD]", "MASK"} & set(words)
    assert "..." not in words  # in the vocab file, but BERT always splits it into three dots
    assert "." in words


def test_bpe_words_take_the_leading_space_form(tiny_roberta):
    tokenizer = load_tokenizer(tiny_roberta)
    words = single_token_words(tokenizer)
    assert tokenizer.convert_ids_to_tokens(words["bear"]) == "\u0120bear"  # Ġbear
    assert not {"<mask>", "<s>", "</s>"} & set(words)


def test_intersection_and_token_ids(tiny_bert, tiny_roberta):
    bert, roberta = load_tokenizer(tiny_bert), load_tokenizer(tiny_roberta)
    vocab = build_vocabulary({"b": bert, "r": roberta})
    assert list(vocab.words) == sorted(vocab.words)
    assert set(vocab.words) == set(single_token_words(bert)) & set(single_token_words(roberta))
    i = vocab.index("bear")
    assert vocab.token_ids["b"][i] == bert.convert_tokens_to_ids("bear")
    assert vocab.token_ids["r"][i] == roberta.convert_tokens_to_ids("\u0120bear")
    coverage = vocab.coverage.set_index("source")
    assert coverage.loc["tokenizer b", "in_shared"] == len(vocab)
    assert vocab.text().splitlines() == list(vocab.words)


def test_vocab_file_restricts(tiny_bert, tmp_path):
    bert = load_tokenizer(tiny_bert)
    path = tmp_path / "words.txt"
    path.write_text("bear\ncat\nunicorn\n\ncat\n")
    vocab = build_vocabulary({"b": bert}, vocab_file=path)
    assert vocab.words == ("bear", "cat")
    assert vocab.file_words == {"bear", "cat", "unicorn"}


def test_bad_vocab_files(tiny_bert, tmp_path):
    bert = load_tokenizer(tiny_bert)
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n")
    with pytest.raises(TacitError, match="empty vocabulary file"):
        read_vocab_file(empty)
    disjoint = tmp_path / "disjoint.txt"
    disjoint.write_text("unicorn\ndragon\n")
    with pytest.raises(TacitError, match="shares no word"):
        build_vocabulary({"b": bert}, vocab_file=disjoint)
    two = tmp_path / "two.txt"
    two.write_text("bear\npolar bear\n")
    with pytest.raises(TacitError, match=r"two.txt:2: 'polar bear' is not one word"):
        read_vocab_file(two)
    with pytest.raises(TacitError, match="no such vocabulary file"):
        read_vocab_file(tmp_path / "missing.txt")


def test_unloadable_tokenizer_is_a_clear_error(tmp_path):
    with pytest.raises(TacitError, match="no-such-model: no such directory"):
        load_tokenizer(str(tmp_path / "no-such-model"))
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(TacitError, match="not a model directory: no tokenizer files"):
        load_tokenizer(str(tmp_path))


@pytest.mark.slow
@needs_shared
def test_real_bert_and_roberta_share_18542_words():
    """bert-base-cased x roberta-base: 18,542 words.

    The 18,506 quoted in the first issue compared RoBERTa's byte-level symbols without
    decoding them: it counted 14 mojibake strings (RoBERTa's `ĠÃ` is the byte 0xC3, not `Ã`)
    and missed 50 real words such as `café`, `José`, `£` and `—`.
    """
    vocab = build_vocabulary({"bert": real_bert_tokenizer(), "roberta": real_roberta_tokenizer()})
    assert len(vocab) == 18542
    assert {"bear", "café", "José", "£", "—"} <= set(vocab.words)
    assert not {"...", "Ã", "[MASK]", "<mask>"} & set(vocab.words)
    assert sum(not w.isascii() for w in vocab.words) == 52
    with_file = build_vocabulary(
        {"bert": real_bert_tokenizer(), "roberta": real_roberta_tokenizer()},
        vocab_file=COMMON_VOCAB,
    )
    assert len(with_file) == 18137


def test_single_token_words_are_cached_by_tokenizer_content(tiny_roberta, tmp_path, monkeypatch):
    monkeypatch.setenv("TACIT_CACHE_DIR", str(tmp_path / "cache"))
    tokenizer = load_tokenizer(tiny_roberta)
    first = build_vocabulary({"r": tokenizer})
    second = build_vocabulary({"r": load_tokenizer(tiny_roberta)})
    assert first.found_by["r"].startswith("computed, cached as ")
    assert second.found_by["r"] == "cache " + first.found_by["r"].split()[-1]
    assert second.words == first.words and (second.token_ids["r"] == first.token_ids["r"]).all()
    assert len(list((tmp_path / "cache" / "single-token-words").glob("*.json"))) == 1
    # a changed tokenizer is another entry, never the old answer
    tokenizer.add_tokens(["grizzly"])
    changed = build_vocabulary({"r": tokenizer})
    assert changed.found_by["r"].startswith("computed, cached as ")
    assert set(changed.words) == set(single_token_words(tokenizer))
    assert tokenizer_key(tokenizer) != tokenizer_key(load_tokenizer(tiny_roberta))


def test_a_damaged_cache_entry_is_recomputed(tiny_bert, tmp_path, monkeypatch):
    monkeypatch.setenv("TACIT_CACHE_DIR", str(tmp_path))
    tokenizer = load_tokenizer(tiny_bert)
    entry = tmp_path / "single-token-words" / f"{tokenizer_key(tokenizer)}.json"
    entry.parent.mkdir()
    for damage in ('{"bear": 5', '["bear"]', '{"bear": "5"}', "{}"):
        entry.write_text(damage)
        words, how = cached_words(tokenizer, single_token_words)
        assert words == single_token_words(tokenizer) and how.startswith("computed, cached")
        assert json.loads(entry.read_text()) == words


def test_an_unwritable_cache_still_builds(tiny_bert, tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("TACIT_CACHE_DIR", str(blocker))
    with pytest.warns(UserWarning, match="cannot cache single-token words there"):
        vocab = build_vocabulary({"b": load_tokenizer(tiny_bert)})
    assert vocab.found_by == {
        "b": f"computed, not cached ({blocker}/single-token-words: Not a directory)"
    }
    assert "bear" in vocab.words


def test_the_words_filter_keeps_words_of_letters(tiny_bert):
    """--vocab-words: `all` (the default, unchanged), `alpha` (letters only) or `lower`; how
    many shared words each left out is recorded."""
    from tacit.vocab.shared import WORD_FILTERS

    tokenizers = {tiny_bert: load_tokenizer(tiny_bert)}
    every = build_vocabulary(tokenizers)
    alpha = build_vocabulary(tokenizers, words="alpha")
    lower = build_vocabulary(tokenizers, words="lower")
    assert set(alpha.words) == {w for w in every.words if w.isalpha()}
    assert set(lower.words) == {w for w in alpha.words if w.islower()}
    assert {".", ","} <= set(every.words) - set(alpha.words)
    assert {"A", "Everyone"} <= set(alpha.words) - set(lower.words)
    assert alpha.filtered_out == len(every) - len(alpha)
    assert alpha.record()["words_filter"] == {"words": "alpha", "left_out": alpha.filtered_out}
    assert "words_filter" not in every.record()  # the default records what it always did
    assert WORD_FILTERS["lower"]("bear") and not WORD_FILTERS["lower"]("Brah")
    with pytest.raises(TacitError, match="vocab_words 'letters': expected one of all, alpha"):
        build_vocabulary(tokenizers, words="letters")


@pytest.mark.slow
def test_the_words_filter_from_a_run(tiny_bert, toy_norms_path):
    import tacit

    result = tacit.retrieve(
        [tiny_bert], norms=toy_norms_path, max_props=1, vocab_words="alpha", quiet=True
    )
    assert result.vocab.words and all(w.isalpha() for w in result.vocab.words)
    assert result.manifest["vocabulary"]["words_filter"]["words"] == "alpha"
    assert result.manifest["vocab_words"] == "alpha"


@pytest.mark.slow
@needs_shared
def test_the_words_filter_on_roberta_base_alone():
    """A single RoBERTa's shared vocabulary: punctuation and capitalised word pieces out."""
    tokenizers = {"roberta": real_roberta_tokenizer()}
    every = build_vocabulary(tokenizers)
    alpha = build_vocabulary(tokenizers, words="alpha")
    lower = build_vocabulary(tokenizers, words="lower")
    assert {"!", "!="} <= set(every.words) and not {"!", "!="} & set(alpha.words)
    assert {"Brah", "Mamm"} <= set(alpha.words) and not {"Brah", "Mamm"} & set(lower.words)
    assert {"bear", "fur", "claws"} <= set(lower.words)
    assert len(every) > len(alpha) > len(lower)
