"""Progress bars: every long loop has its total and its unit. A causal model that puts each
vocabulary word in a blank inside a sentence counts those sentences on a bar of its own, and
advances the run's bar (which counts prompts) a prompt at a time."""

from __future__ import annotations

import io

from support import save_tiny_gpt2, toy_gpt2_tokenizer
from tqdm.auto import tqdm

from tacit.models.causal import CausalLMScorer
from tacit.vocab import build_vocabulary


def test_words_in_the_blank_count_sentences_and_advance_the_prompt_bar(tmp_path, monkeypatch):
    directory = tmp_path / "gpt2"
    save_tiny_gpt2(directory, toy_gpt2_tokenizer(directory))
    scorer = CausalLMScorer(str(directory), device="cpu")
    vocab = build_vocabulary({"m": scorer.tokenizer})
    words = list(vocab.words)
    prompts = ["A <mask> has fur.", "Everyone knows that a <mask> barks.", "A <mask> has fur."]
    bars: list[tqdm] = []
    made = tqdm.__init__

    def recording(self, *args, **kwargs):
        made(self, *args, **kwargs)
        bars.append(self)

    monkeypatch.setattr(tqdm, "__init__", recording)
    with tqdm(total=2, desc="scoring", unit="prompt", file=io.StringIO()) as run_bar:
        for _ in scorer.score_words(prompts, vocab.token_ids["m"], words, progress=run_bar):
            pass
        assert run_bar.n == 2  # the two distinct prompts, not their words
    inner = [bar for bar in bars if bar.desc.startswith("words in the blank")]
    assert len(inner) == 1
    assert inner[0].total == 2 * len(words) and inner[0].n == inner[0].total
    assert inner[0].unit == "sentence"
