"""Scores kept across runs (`--cache DIR`): what a model answered for a text, so that a sweep's
cells, ablations, paraphrase runs and reruns never score the same sentence twice.

An entry is one text's answer: a template's scores over a list of candidate spans (per span:
its log-probability, its token count and, for a causal model, its sentence's), a prompt's
scores over a shared vocabulary, or a generation request's completions (JSON; greedy and
seeded sampling only: Sampling.cacheable). It is named by a fingerprint of everything the
answer depends on (tacit.core.cache): the model's identity (where its weights came from: the
hub commit, the GGUF file's sha256, a local directory's files; its class, precision, loading
options and start token; tacit's, torch's and transformers' versions), the question (span
scoring, the vocabulary's token ids, every sampling setting) and the text with its candidates
(or the request). Any change is a new name, never a stale answer.
Entries are written whole, by a rename, so processes on one machine or on a network file
system can share a directory; a damaged entry is scored again. A model handed in from memory
(one being trained) is never cached: its weights change under the same name.

A run from the cache writes the same tables as the run that filled it; its manifest counts the
entries found and scored (`cache`) and the work actually run.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from tacit.core.cache import DiskCache, fingerprint
from tacit.core.option_names import option
from tacit.models.answers import (
    Completion,
    GenerationRequest,
    Sampling,
    SpanScores,
    SpanTokens,
    VocabScores,
    cut_tokens,
    span_token_grid,
)

# a model's files whose change makes it another model (`.jinja`: a chat template of its own)
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".gguf", ".pt", ".json", ".model", ".jinja")


def _dump(arrays: dict[str, np.ndarray]) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)  # type: ignore[arg-type]
    return buffer.getvalue()


def _load(data: bytes) -> dict[str, np.ndarray]:
    with np.load(io.BytesIO(data), allow_pickle=False) as found:
        return {name: found[name] for name in found.files}


def local_files(path: str | None) -> list[tuple[str, int, int]] | None:
    """(name, size, modification time) of a local model directory's weight and config files:
    a model saved again into the same directory is another model."""
    if not path or not Path(path).is_dir():
        return None
    return sorted(
        (p.name, p.stat().st_size, p.stat().st_mtime_ns)
        for p in Path(path).iterdir()
        if p.is_file() and p.suffix in WEIGHT_SUFFIXES
    )


def identity(record: Mapping[str, Any]) -> dict[str, Any]:
    """What makes a model's answers what they are, from its manifest record: where the
    weights came from and how they were loaded and run, with the software that ran them."""
    from tacit.core.manifest import software

    versions = software()
    return {
        "source": record.get("source") or record.get("name"),
        "local_files": local_files(record.get("local_path")),
        "kind": record.get("kind"),
        "class": record.get("class"),
        "revision": record.get("resolved_revision") or record.get("revision"),
        "gguf": (record.get("gguf") or {}).get("sha256"),
        "load": record.get("load"),
        "start_token": record.get("start_token"),
        "chat_template": record.get("chat_template"),
        "server": served_identity(record.get("server")),
        "software": {k: versions.get(k) for k in ("tacit", "torch", "transformers")},
        # a random-weight control: its seed, not the files it shares with its model (said
        # only for a control, so that every other model's entries keep their names)
        **({"control": record["control"]} if record.get("control") else {}),
    }


def served_identity(server: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """What names a served model's answers (tacit.models.server): the address, the model as
    the server lists it (less vLLM's `created`, the time of the request), the engine and its
    version, and the start token. Its weights cannot be fingerprinted from here: a server that
    serves other weights under the same name and root must be given another `--cache`. How
    the requests ran (concurrency, timeouts, retries made) changes no score."""
    if not server:
        return None
    model = {k: v for k, v in (server.get("model") or {}).items() if k != "created"}
    return {
        "base_url": server.get("base_url"),
        "model": model,
        "engine": server.get("engine"),
        "start_token": server.get("start_token"),
    }


def generation_key(model: str, request: GenerationRequest, sampling: Sampling) -> str:
    """The name of a generation request's answer, for the model of fingerprint `model`: what
    the cache and the run's own answers kept (tacit.models.answered) are keyed by."""
    return fingerprint(model, "generate", request.record(), sampling.record())


class ScoreCache:
    """One model's entries in a cache directory (see the module docstring)."""

    def __init__(self, directory: str | Path, record: Mapping[str, Any]) -> None:
        self.directory = Path(directory)
        self.model = fingerprint(identity(record))
        self.store: DiskCache[dict[str, np.ndarray]] = DiskCache(
            self.directory / "scores" / self.model[:16],
            ".npz",
            _dump,
            _load,
            what="scores",
            advice=f"give {option('--cache')} a directory it can write",
        )
        self.generations: DiskCache[list[dict[str, Any]]] = DiskCache(
            self.directory / "generations" / self.model[:16],
            ".json",
            lambda value: json.dumps(value).encode("utf-8"),
            lambda data: json.loads(data.decode("utf-8")),
            what="generations",
            advice=f"give {option('--cache')} a directory it can write",
        )
        self.found = self.scored = 0

    def spans(
        self, scoring: str, template: str, spans: list[str], *, tokens: bool = False
    ) -> tuple[str, dict[str, np.ndarray] | None]:
        """(the entry's key, its arrays: `span`, `n_tokens`, maybe `sentence`, and, where a run
        asked for per-token scores, `token_text` and `token_logprob`: every span's tokens one
        after another) of a template scored over these spans; None where it is not kept (with
        `tokens`: not kept with its tokens)."""
        key = fingerprint(self.model, "spans", scoring, template, spans)

        def usable(arrays: dict[str, np.ndarray]) -> bool:
            whole = len(arrays.get("span", ())) == len(spans)
            return whole and (not tokens or "token_logprob" in arrays)

        found = self.store.read(key, usable)
        self._count(found)
        return key, found

    def vocab(self, text: str, vocab_ids: np.ndarray) -> tuple[str, dict[str, np.ndarray] | None]:
        """(the entry's key, its arrays: `shared` scores over the vocabulary, `log_z`) of a
        prompt's blank; None where it is not kept."""
        key = fingerprint(self.model, "vocab", text, np.asarray(vocab_ids).tobytes())
        found = self.store.read(key, lambda v: len(v.get("shared", ())) == len(vocab_ids))
        self._count(found)
        return key, found

    def keep(self, key: str, arrays: Mapping[str, Any]) -> None:
        self.store.write(key, {name: np.asarray(value) for name, value in arrays.items()})

    def _count(self, found: object) -> None:
        if found is None:
            self.scored += 1
        else:
            self.found += 1

    def span_scores(
        self,
        templates: list[str],
        spans: list[str],
        scoring: str,
        score: Callable[[list[str]], SpanScores],
        *,
        tokens: bool = False,
    ) -> SpanScores:
        """SpanScores of distinct templates and spans, each template's row read here where it
        is kept; the rest scored in one call of `score` (their prefixes still shared) and
        kept. With `tokens` (SpanScores.tokens asked for), a row kept without its tokens is
        scored again and kept with them; a row kept with them serves either kind of run."""
        found = [self.spans(scoring, template, spans, tokens=tokens) for template in templates]
        missing = [n for n, (_, arrays) in enumerate(found) if arrays is None]
        rows: dict[int, dict[str, np.ndarray]] = {
            n: arrays for n, (_, arrays) in enumerate(found) if arrays is not None
        }
        work: Mapping[str, int] = {}
        if missing:
            fresh = score([templates[n] for n in missing])
            work = fresh.work
            for at, n in enumerate(missing):
                arrays = {"span": fresh.span[at], "n_tokens": fresh.n_tokens[at]}
                if fresh.sentence is not None:
                    arrays["sentence"] = fresh.sentence[at]
                if fresh.tokens is not None:
                    arrays.update(_flat_tokens(fresh.tokens[at]))
                self.keep(found[n][0], arrays)
                rows[n] = arrays
        ordered = [rows[n] for n in range(len(templates))]
        sentence = (
            np.stack([row["sentence"] for row in ordered]) if "sentence" in ordered[0] else None
        )
        n_tokens = np.stack([row["n_tokens"] for row in ordered])
        grid = None
        if tokens:
            grid = span_token_grid([_row_tokens(row) for row in ordered])
        return SpanScores(
            np.stack([row["span"] for row in ordered]), n_tokens, sentence, work, grid
        )

    def vocab_scores(
        self,
        texts: list[str],
        vocab_ids: np.ndarray,
        batch_size: int,
        score: Callable[[list[str]], Iterable[VocabScores]],
    ) -> Iterator[VocabScores]:
        """VocabScores of distinct texts, each read here where it is kept (`batch_size` of them
        a batch, as numpy arrays) and the rest scored by `score` and kept. A text cut to fit
        is never kept: what was cut depends on the run."""
        found = [self.vocab(text, vocab_ids) for text in texts]
        kept = [(n, arrays) for n, (_, arrays) in enumerate(found) if arrays is not None]
        for start in range(0, len(kept), batch_size):
            batch = kept[start : start + batch_size]
            yield (
                np.array([n for n, _ in batch]),
                np.stack([arrays["shared"] for _, arrays in batch]),
                np.array([arrays["log_z"] for _, arrays in batch]),
                0,
            )
        missing = [n for n, (_, arrays) in enumerate(found) if arrays is None]
        if not missing:
            return
        for indices, shared, log_z, n_cut in score([texts[n] for n in missing]):
            if not n_cut:
                for at, i in enumerate(indices):
                    arrays = {"shared": _numpy(shared[at]), "log_z": _numpy(log_z[at])}
                    self.keep(found[missing[i]][0], arrays)
            yield np.asarray([missing[i] for i in indices]), shared, log_z, n_cut

    def find(self, request: GenerationRequest, sampling: Sampling) -> list[Completion] | None:
        """A request's completions where kept (marked `cached`), else None. Only for settings
        that give the same completions every run (Sampling.cacheable: the caller checks)."""
        kept = self.generations.read(
            generation_key(self.model, request, sampling),
            lambda v: isinstance(v, list) and len(v) == sampling.n,
        )
        self._count(kept)
        if kept is None:
            return None
        try:
            return [Completion.from_record(c, cached=True) for c in kept]
        except (KeyError, TypeError, ValueError, AttributeError):  # not an entry: asked again
            return None

    def keep_completions(
        self, request: GenerationRequest, sampling: Sampling, completions: list[Completion]
    ) -> None:
        """Keep a request's completions (as each answer comes: Scorer.generate)."""
        self.generations.write(
            generation_key(self.model, request, sampling), [c.record() for c in completions]
        )

    def record(self) -> dict[str, Any]:
        """For the manifest: where, under which model fingerprint, entries found and scored."""
        unwritten = self.store.unwritten or self.generations.unwritten
        return {
            "directory": str(self.directory),
            "model": self.model,
            "found": self.found,
            "scored": self.scored,
            **({"unwritten": unwritten} if unwritten else {}),
        }

    def __repr__(self) -> str:
        return json.dumps(self.record())


def _numpy(array: Any) -> np.ndarray:
    """A family's array (numpy, or a torch tensor on any device) as a numpy array."""
    return array.detach().cpu().numpy() if hasattr(array, "detach") else np.asarray(array)


def _flat_tokens(row: np.ndarray) -> dict[str, np.ndarray]:
    """A template's SpanTokens (one per span) as two flat arrays, span after span: their
    counts are the entry's `n_tokens`."""
    texts = [token for found in row for token in found.tokens]
    values = [found.logprob for found in row]
    return {
        "token_text": np.asarray(texts, dtype=str),
        "token_logprob": np.concatenate(values) if values else np.zeros(0),
    }


def _row_tokens(arrays: Mapping[str, np.ndarray]) -> list[SpanTokens]:
    """A kept row's SpanTokens, cut from its flat arrays by `n_tokens`."""
    counts = np.asarray(arrays["n_tokens"]).tolist()
    return cut_tokens(arrays["token_text"].tolist(), arrays["token_logprob"], counts)
