"""Fixtures: tiny tokenizers, tiny random-weight models and a small norms file, all built here
(the builders are in support.py).

Nothing is downloaded. Models are saved to temporary directories and loaded back through the
real `from_pretrained` code. Where ../shared/data exists (our machines and CI), fixtures also
build tiny models on the real bert-base-cased and roberta-base tokenizer files; tests that need
them skip with a reason elsewhere.
"""

from __future__ import annotations

import os

# Under pytest-xdist (python -m pytest -n auto), each worker takes its share of the CPUs for
# torch's threads and the processes tests start: workers that each used every core would
# oversubscribe them. Set before torch is imported (support imports it); an OMP_NUM_THREADS
# of your own wins.
if os.environ.get("PYTEST_XDIST_WORKER") and "OMP_NUM_THREADS" not in os.environ:
    _workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    os.environ["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // _workers))

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from support import (  # noqa: E402
    real_bert_tokenizer,
    real_bpe_t5_tokenizer,
    real_gpt2_tokenizer,
    real_roberta_tokenizer,
    save_tiny_bert,
    save_tiny_gpt2,
    save_tiny_llama,
    save_tiny_roberta,
    save_tiny_t5,
    tiny_bert_tokenizer,
    tiny_roberta_tokenizer,
    tiny_t5_tokenizer,
    write_norms,
)
from support_nli import PRAGMEVAL_WORDS, save_nli_masked_lm, write_pragmeval  # noqa: E402


@pytest.fixture(scope="session")
def toy_norms_path(tmp_path_factory) -> Path:
    return write_norms(tmp_path_factory.mktemp("norms") / "norms.dat")


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory) -> str:
    directory = tmp_path_factory.mktemp("tiny-bert")
    return str(save_tiny_bert(directory, tiny_bert_tokenizer(directory)))


@pytest.fixture(scope="session")
def tiny_roberta(tmp_path_factory) -> str:
    directory = tmp_path_factory.mktemp("tiny-roberta")
    return str(save_tiny_roberta(directory, tiny_roberta_tokenizer(directory)))


@pytest.fixture(scope="session")
def real_bert(tmp_path_factory) -> str:
    """A tiny random BERT on the real bert-base-cased tokenizer (tokenisation as the real one)."""
    directory = tmp_path_factory.mktemp("real-bert")
    return str(save_tiny_bert(directory, real_bert_tokenizer()))


@pytest.fixture(scope="session")
def real_roberta(tmp_path_factory) -> str:
    """A tiny random RoBERTa on the real roberta-base tokenizer."""
    directory = tmp_path_factory.mktemp("real-roberta")
    return str(save_tiny_roberta(directory, real_roberta_tokenizer()))


@pytest.fixture(scope="session")
def tiny_gpt2(tmp_path_factory) -> str:
    """A tiny random GPT-2 on GPT-2's real byte-level BPE (roberta-base's files)."""
    directory = tmp_path_factory.mktemp("tiny-gpt2")
    return str(save_tiny_gpt2(directory, real_gpt2_tokenizer()))


@pytest.fixture(scope="session")
def tiny_llama(tmp_path_factory) -> str:
    """A tiny random Llama-shaped model on the same BPE, with `<s>` as its BOS."""
    directory = tmp_path_factory.mktemp("tiny-llama")
    return str(save_tiny_llama(directory, real_gpt2_tokenizer(bos="<s>")))


@pytest.fixture(scope="session")
def tiny_t5(tmp_path_factory) -> str:
    """A tiny random T5 on transformers' T5 tokenizer with a made-up vocabulary (no ../shared)."""
    return str(save_tiny_t5(tmp_path_factory.mktemp("tiny-t5"), tiny_t5_tokenizer()))


@pytest.fixture(scope="session")
def bpe_t5(tmp_path_factory) -> str:
    """A tiny random T5 on GPT-2's real byte-level BPE with T5's sentinels added."""
    return str(save_tiny_t5(tmp_path_factory.mktemp("bpe-t5"), real_bpe_t5_tokenizer()))


@pytest.fixture(scope="module")
def pragmeval_data(tmp_path_factory) -> Path:
    """A made-up PragmEval folder: every configuration, a few rows each."""
    return write_pragmeval(tmp_path_factory.mktemp("pragmeval"))


@pytest.fixture(scope="module")
def mlm(tmp_path_factory) -> str:
    """A tiny masked LM that knows PragmEval's verbalizer words."""
    return save_nli_masked_lm(tmp_path_factory.mktemp("pragmeval-mlm"), words=PRAGMEVAL_WORDS)


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path, monkeypatch):
    """Every test gets its own config and cache dirs and no $TACIT_NORMS, so none sees the
    user's."""
    monkeypatch.setenv("TACIT_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("TACIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TACIT_NORMS", raising=False)


@pytest.fixture(autouse=True)
def _signal_handlers_restored():
    """A test that runs the console entry point in this process (tacit.console.run) leaves
    Ctrl-C and SIGTERM ignored, as a finished `probe` process does while Python shuts down: put
    the handlers back for the next test."""
    import signal

    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    yield
    for signum, handler in saved.items():
        signal.signal(signum, handler)


TIERS = ("real", "browser", "faults")  # each also `slow`: the fast tier is -m "not slow"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test of the real-weight, browser or faults tier is slow too, so that `-m "not slow"`
    leaves out every heavy tier at once (docs/development.md, the tiers)."""
    for item in items:
        if any(item.get_closest_marker(tier) for tier in TIERS):
            item.add_marker(pytest.mark.slow)


def pytest_configure(config: pytest.Config) -> None:
    """Under CI, a skip for want of something CI provides fails the run (tests/ci_skips.py)."""
    import ci_skips

    if not config.pluginmanager.has_plugin("ci_skips"):
        config.pluginmanager.register(ci_skips, "ci_skips")
