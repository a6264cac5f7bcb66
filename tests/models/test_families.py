"""Model families (tacit.models.families): a family claims a model by its text before anything
loads, its loading options are checked in one line, and a probe's needs are checked against the
scorer class the model would load as; GGUF files are read by their header (tacit.models.gguf).
"""

from __future__ import annotations

import re
import struct
from pathlib import Path

import numpy as np
import pytest

import tacit
from tacit.core.errors import TacitError
from tacit.core.modelspec import LoadOption, ModelSpec
from tacit.core.options import RunOptions
from tacit.models import gguf
from tacit.models.base import VOCAB_ANYWHERE, Needs, Scorer, SpanScores
from tacit.models.families import (
    FAMILIES,
    Family,
    family_of,
    register_family,
    resolve,
)
from tacit.models.huggingface import FAMILY as HUGGING_FACE
from tacit.models.huggingface import model_kind
from tacit.models.masked import MaskedLMScorer
from tacit.models.resolved import load_scorer


class TableScorer(Scorer):
    """Scores spans from a table of log-probabilities (a stand-in for a remote model)."""

    kind = "table"
    capabilities = frozenset({"spans"})

    def __init__(self, name: str) -> None:
        self.name, self.tokenizer, self.batch_size = name, None, 1

    def record(self):  # type: ignore[override]
        return {"name": self.name, "kind": self.kind}

    def _span_scores(self, templates, spans, scoring, progress, cache):
        scores = np.array([[-float(len(t) + len(s)) for s in spans] for t in templates])
        return SpanScores(scores, np.ones_like(scores, dtype=int))


class TableFamily(Family):
    name = "table"
    description = "a lookup table"
    options = {"size": LoadOption("how big the table is", "N", int, 3, 1)}

    def claims(self, spec: ModelSpec) -> bool:
        return spec.name.startswith("table://")

    def scorer_class(self, spec: ModelSpec, needs=None) -> type[Scorer]:
        return TableScorer

    def tokenizer(self, spec: ModelSpec, flag: str = "--model"):
        return None

    def load(self, text, options, scorer, **extra):
        return TableScorer(text)


@pytest.fixture
def table_family():
    register_family(TableFamily())
    yield
    FAMILIES.unregister("table")


def test_a_family_claims_its_models_before_tacits_own(table_family):
    family, spec = resolve("table://colours,size=3", RunOptions().model_defaults())
    assert family.name == "table" and spec.get("size") == 3
    assert "dtype" not in spec.given()  # the run's options fill only what the family takes
    assert family_of(ModelSpec("roberta-base")) is HUGGING_FACE
    with pytest.raises(TacitError, match="'colour' is not a loading option of a lookup table"):
        resolve("table://x,colour=red", {})


def test_a_probes_needs_are_checked_before_anything_loads(table_family):
    scorer = load_scorer("table://x", RunOptions(), needs=Needs.of("spans"), probe="items")
    assert scorer.score_spans(["A <mask>."], ["b", "cc"], progress=False).span.shape == (1, 2)
    with pytest.raises(TacitError) as refused:
        load_scorer(
            "table://x",
            RunOptions(),
            needs=Needs.of(VOCAB_ANYWHERE, asks="the vocabulary", instead={"spans": "use spans"}),
            probe="retrieve",
        )
    assert str(refused.value) == (
        "table://x is a table model: it cannot score a <mask> inside a sentence over a "
        "vocabulary, which retrieve asks of it (the vocabulary): use spans"
    )


@pytest.mark.slow
def test_a_family_of_ones_own_runs_a_probe_end_to_end(table_family, tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text('{"text": "A [Y] has fur.", "candidates": ["bear", "dog"], "answer": "dog"}\n')
    result = tacit.items(items, ["table://x"])
    assert result.summary.loc[0, "accuracy"] == 1.0  # the shorter span scores higher
    assert result.manifest["models"][0]["kind"] == "table"


def test_from_pretrained_keywords_pass_on_and_a_typo_is_refused(tiny_bert):
    spec = ModelSpec.parse(f"{tiny_bert},low_cpu_mem_usage=true")
    assert model_kind(spec) == "masked"
    scorer = MaskedLMScorer(spec.text, device="cpu")
    assert scorer.record()["load"]["passed_on"] == {"low_cpu_mem_usage": True}
    with pytest.raises(
        TacitError, match=r"'revison' is not a loading option.*did you mean revision"
    ):
        model_kind(ModelSpec.parse(f"{tiny_bert},revison=main"))
    # a field of the model's config is a keyword from_pretrained sets on it
    assert model_kind(ModelSpec.parse(f"{tiny_bert},hidden_dropout_prob=0.0")) == "masked"


def _gguf_file(path: Path, values: dict[str, object]) -> Path:
    """A GGUF header with `values` (text and whole numbers) and a token list, no tensors."""

    def text(s: str) -> bytes:
        return struct.pack("<Q", len(s.encode())) + s.encode()

    body = b""
    for key, value in values.items():
        body += text(key)
        if isinstance(value, str):
            body += struct.pack("<I", 8) + text(value)
        else:
            body += struct.pack("<II", 4, int(value))  # type: ignore[call-overload]
    tokens = ["<s>", "a", "bear"]
    body += text("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, len(tokens))
    body += b"".join(text(t) for t in tokens)
    body += text("tokenizer.ggml.scores") + struct.pack("<IIQ", 9, 6, 3) + bytes(12)
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, len(values) + 2) + body)
    return path


def test_a_gguf_header_is_read_without_its_arrays(tmp_path):
    file = _gguf_file(
        tmp_path / "m.Q4_K_M.gguf", {"general.architecture": "llama", "general.file_type": 15}
    )
    assert gguf.read_metadata(file) == {"general.architecture": "llama", "general.file_type": 15}
    spec = gguf.resolved(ModelSpec.parse(f"{file},start_token=eos"))
    assert (spec.name, spec.gguf_file, spec.start_token) == (str(tmp_path), file.name, "eos")
    record = gguf.record(spec)
    assert record["quantization"] == "Q4_K_M" and record["architecture"] == "llama"
    assert len(record["sha256"]) == 64
    (tmp_path / "bad.gguf").write_bytes(b"GGML....")
    with pytest.raises(TacitError, match="bad.gguf: not a GGUF file"):
        gguf.read_metadata(tmp_path / "bad.gguf")
    (tmp_path / "cut.gguf").write_bytes(file.read_bytes()[:60])
    with pytest.raises(TacitError, match="cut short or damaged"):
        gguf.read_metadata(tmp_path / "cut.gguf")


def test_a_gguf_that_transformers_cannot_read_is_one_line_naming_it(tmp_path):
    pytest.importorskip("gguf", reason="the gguf package (pip install 'tacit-probe[gguf]')")
    file = _gguf_file(tmp_path / "m.gguf", {"general.architecture": "rwkv7"})
    with pytest.raises(TacitError, match="cannot read a GGUF of architecture 'rwkv7'"):
        model_kind(ModelSpec(str(file)))
    with pytest.raises(TacitError, match="no such GGUF file"):
        gguf.resolved(ModelSpec(str(tmp_path / "missing.gguf")))
    with pytest.raises(TacitError, match="no GGUF file other.gguf in it"):
        model_kind(ModelSpec(str(tmp_path), gguf_file="other.gguf"))


def test_every_loading_option_is_one_declaration():
    """Loading options through one mechanism (issue 45): every family's are LoadOption
    declarations, tacit's own shared by identity, never copied, and `--model`'s help and the
    docs' tables (docs/hooks.py) are made from them, defaults included."""
    import sys

    from tacit.core.modelspec import LOAD_OPTIONS, LoadOption
    from tacit.models.families import FAMILIES, loading_options, model_help

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "docs"))
    try:
        import hooks
    finally:
        sys.path.pop(0)
    declared = {}
    for name in FAMILIES.names():
        options = FAMILIES.get(name).options
        table = hooks.load_options(name)
        for key, option in options.items():
            assert isinstance(option, LoadOption), (name, key)
            assert LOAD_OPTIONS.get(key, option) is option, (name, key)  # the same object
            assert f"| `{key}={option.value}` |" in table
            if option.default is not None:
                assert f"(default {option.default:g})" in table
            declared[key] = option
    assert set(loading_options()) == set(LOAD_OPTIONS) | set(declared)
    assert all(key in model_help() for key in declared)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (
            "m,base_url=http://h/v1,timeout=0",
            "m,base_url=http://h/v1,timeout=0: timeout=0: expected a number >= 0.001",
        ),
        ("m,base_url=http://h/v1,retries=1.5", "retries=1.5: expected a whole number >= 0"),
        (
            "m,base_url=http://h/v1,concurrency=true",
            "concurrency=True: expected a whole number >= 1",
        ),
    ],
)
def test_a_family_option_reads_as_declared(text, error):
    """A family's own option is checked as its declaration says, in one line naming it."""
    from tacit.models.server import FAMILY

    with pytest.raises(TacitError, match=re.escape(error)):
        FAMILY.check_options(ModelSpec.parse(text))
