"""Throughput and memory of retrieval scoring against the usual ways of doing it.

Builds a masked LM with random weights in a chosen shape (roberta-base by default: the same
compute as the real model) on a real tokenizer, takes the first N retrieval prompts of the
real norms, and times on the same prompts:

- tacit: tacit.ranking.rank_targets (length-sorted batches, LM head at mask rows only);
- encoder: the base model's forward pass alone on the same batches (the floor for this work),
  with its FLOPs and, in the same process, the machine's rate on one feed-forward-shaped
  matrix product (how close the encoder comes to what the hardware gives);
- tacit --compile: the same with torch.compile, its first pass (compiling) apart;
- lama: LAMA-style scoring (bench/lama_style.py: length-sorted batches, full [batch x tokens x
  vocab] logits, log_softmax over the vocabulary, then the shared-vocabulary columns);
- pipeline: transformers' fill-mask pipeline asked for the shared vocabulary (targets=,
  top_k=len(vocab)), on a small subset because it is slow.

Each method runs once per round in a fresh process, the methods taking turns (--repeats rounds,
default 3), and each method's fastest round counts: a shared machine's slow spells then fall
on every method alike. End to end, start-up included, the `probe retrieve` command (on the
same prompts) and `python bench/lama_style.py` take turns the same way, each as a user runs
it, in a fresh interpreter, the fastest of --end-to-end-repeats each. It checks that tacit's
ranks equal the LAMA-style ranks (where scores are not tied within float error) and the
pipeline's, prints prompts/s, ratios and peak memory, and writes a JSON record. Run:
`python bench/bench_retrieve.py` (or `--quick` for a smoke run).
"""

from __future__ import annotations

import argparse
import datetime
import json
import multiprocessing
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import transformers
from lama_style import lama_ranks, load
from transformers import RobertaConfig, RobertaForMaskedLM, RobertaTokenizerFast, pipeline

from tacit.core.blank import MASK
from tacit.models.batching import longest_first_batches
from tacit.models.masked import MaskedLMScorer
from tacit.norms import read_norms
from tacit.probes.retrieve.prompts import build_prompts, eligible_concepts
from tacit.ranking import rank_targets
from tacit.vocab import build_vocabulary

BENCH = Path(__file__).resolve().parent
SHARED = BENCH.parents[1] / "shared" / "data"
SHAPES = {
    "roberta-base": dict(
        hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072
    ),
    "tiny": dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128),
}


def peak_rss_mb() -> float:
    """This process's peak resident memory (each method runs in a fresh process)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def build_model(tokenizer_dir: Path, shape: str, where: Path, init: float = 0.02) -> str:
    """A random-weight RoBERTa of `shape` on the real tokenizer, weights drawn with standard
    deviation `init` (transformers' 0.02: logits within a nat or so, near ties everywhere;
    wider, they spread over tens of nats as a trained model's do)."""
    tokenizer = RobertaTokenizerFast(
        vocab=str(tokenizer_dir / "vocab.json"), merges=str(tokenizer_dir / "merges.txt")
    )
    assert len(tokenizer) > 50000, "pass the real roberta-base tokenizer files"
    torch.manual_seed(0)
    config = RobertaConfig(
        vocab_size=max(tokenizer.get_vocab().values()) + 1,
        max_position_embeddings=514,
        pad_token_id=tokenizer.pad_token_id,
        initializer_range=init,
        **SHAPES[shape],
    )
    RobertaForMaskedLM(config).save_pretrained(where)
    tokenizer.save_pretrained(where)
    return str(where)


def timed(score):
    """Run `score()` once: its result and its time in seconds (rounds do the repeating, see
    interleaved)."""
    start = time.perf_counter()
    result = score()
    return result, time.perf_counter() - start


def encoder_flops(config, batch_shapes: list[tuple[int, int]]) -> float:
    """Floating-point operations of the encoder's matrix products on padded batches of
    (prompts, tokens): per layer and position the four attention projections and the two
    feed-forward ones, plus the attention scores and weighted values (2 per multiply-add)."""
    hidden, inner, layers = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    per_layer = sum(
        2 * rows * width * (4 * hidden * hidden + 2 * hidden * inner)
        + 2 * 2 * rows * width * width * hidden
        for rows, width in batch_shapes
    )
    return layers * per_layer


def matmul_rate(rows: int, hidden: int, inner: int, repeats: int = 30) -> float:
    """This machine's best FLOP/s on one feed-forward-shaped float32 matrix product: the rate
    the hardware gives such work, against which the encoder's rate is read."""
    a, b = torch.randn(rows, hidden), torch.randn(hidden, inner)
    best = float("inf")
    with torch.inference_mode():
        for _ in range(repeats):
            start = time.perf_counter()
            a @ b
            best = min(best, time.perf_counter() - start)
    return 2 * rows * hidden * inner / best


def run_tacit(model_dir, prompts, targets, vocab_ids, batch_size):
    """tacit's scoring and, interleaved with it in the same process, the encoder's forward pass
    alone on the same batches (their ratio is then not at the mercy of the machine's noise),
    that pass's FLOPs, and the machine's matrix-product rate."""
    scorer = MaskedLMScorer(model_dir, device="cpu", batch_size=batch_size)
    pad = scorer.tokenizer.pad_token_id
    shapes = []

    def forward_only():
        """The encoder on the scorer's own batches (longest_first_batches), no hook, no head."""
        encoded = scorer.encode_prompts(list(dict.fromkeys(prompts)))

        def run(indices):
            width = len(encoded[indices[0]])
            ids = torch.tensor([encoded[i] + [pad] * (width - len(encoded[i])) for i in indices])
            scorer.model.base_model(input_ids=ids, attention_mask=(ids != pad).long())
            shapes.append((len(indices), width))

        with torch.inference_mode():
            for _ in longest_first_batches([len(ids) for ids in encoded], scorer, run):
                pass

    scores, scoring = timed(
        lambda: rank_targets(scorer, prompts, targets, vocab_ids, progress=False)
    )
    encoder = timed(forward_only)[1]
    config = scorer.model.config
    flops = encoder_flops(config, shapes)
    rows = sum(r * w for r, w in shapes) // len(shapes)  # an average batch's positions
    rate = matmul_rate(rows, config.hidden_size, config.intermediate_size)
    return {
        "ranks": scores.rank[:, 0],
        "ties": tie_cost(scores.counts, "tacit_"),
        "encoder_s": encoder,
        "flops": flops,
        "matmul_rate": rate,
    }, scoring


def run_compiled(model_dir, prompts, targets, vocab_ids, batch_size):
    """tacit with --compile: the first pass (compiling included) timed apart from the pass
    after it (the steady state a long run reaches)."""
    scorer = MaskedLMScorer(model_dir, device="cpu", batch_size=batch_size, compile=True)

    def score():
        return rank_targets(scorer, prompts, targets, vocab_ids, progress=False)

    first = timed(score)[1]
    scores, steady = timed(score)
    return (scores.rank[:, 0], first), steady


def run_lama(model_dir, prompts, targets, vocab_ids, batch_size):
    """Ranks the way LAMA computes them (bench/lama_style.py): full logits, log_softmax, select."""
    model, tokenizer = load(model_dir)
    return timed(lambda: lama_ranks(model, tokenizer, prompts, targets, vocab_ids, batch_size))


def timed_command(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """Run a command as a user would, in a fresh interpreter: (wall s, its peak RSS MB).

    The peak is the child's own high-water mark (VmHWM, read every 20 ms while it runs), not
    its rusage: Linux carries the parent's resident size over into a child's ru_maxrss across
    fork and exec, so a parent holding a model would set every child's floor."""
    with tempfile.TemporaryFile() as errors:  # a pipe could fill up and stall the child
        start = time.perf_counter()
        process = subprocess.Popen(
            argv, stdout=subprocess.DEVNULL, stderr=errors, env={**os.environ, **(env or {})}
        )
        peak_kb, status = 0, None
        while status is None:
            peak_kb = max(peak_kb, high_water_kb(process.pid))
            pid, waited, _ = os.wait4(process.pid, os.WNOHANG)
            if pid:
                status = waited
            else:
                time.sleep(0.02)
        seconds = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            errors.seek(0)
            raise RuntimeError(f"{' '.join(argv)} failed: {errors.read().decode()[-2000:]}")
    return seconds, peak_kb / 1024


def high_water_kb(pid: int) -> int:
    """A running process's peak resident set so far (kB; 0 once it has exited)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    found = re.search(r"^VmHWM:\s+(\d+) kB", status, re.MULTILINE)
    return int(found.group(1)) if found else 0


def probe_command() -> list[str]:
    """The `probe` console script of this environment (what a user types)."""
    script = Path(sys.executable).with_name("probe")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from tacit.console import run; sys.exit(run())"]


def run_pipeline(model_dir, prompts, targets, vocab_ids, batch_size):
    """transformers' fill-mask pipeline, asked for the whole shared vocabulary."""
    fill = pipeline("fill-mask", model=model_dir, tokenizer=model_dir, device="cpu")
    tokens = fill.tokenizer.convert_ids_to_tokens([int(i) for i in vocab_ids])

    def score():
        ranks = []
        for prompt, target in zip(prompts, targets):
            text = prompt.replace(f" {MASK}", fill.tokenizer.mask_token)
            out = fill(text, targets=tokens, top_k=len(tokens))
            ranked = [o["token"] for o in out]
            ranks.append(ranked.index(int(vocab_ids[target])) + 1)
        return np.array(ranks)

    return timed(score)


def _child(method, args, queue):
    torch.set_num_threads(os.cpu_count() or 1)
    transformers.logging.set_verbosity_error()
    start = time.perf_counter()
    try:
        ranks, scoring_s = method(*args)
    except BaseException as err:
        queue.put(err)
        raise
    queue.put((ranks, scoring_s, time.perf_counter() - start, peak_rss_mb()))


def in_fresh_process(method, *args):
    """Run one method in a spawned process.

    Returns (result, scoring s, s inside the process, peak RSS MB, wall s from the parent:
    interpreter start-up and imports included).
    """
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    start = time.perf_counter()
    process = context.Process(target=_child, args=(method, args, queue))
    process.start()
    result = queue.get()
    process.join()
    if isinstance(result, BaseException):
        raise RuntimeError(f"{method.__name__} failed in its process") from result
    return (*result, time.perf_counter() - start)


def interleaved(methods: dict, rounds: int) -> dict[str, list[tuple]]:
    """Run each method once per round, each time in a fresh process, the methods taking turns:
    a shared machine that slows down for a while then slows every method alike, and the
    fastest round of each method is compared. Returns every run of each method."""
    runs: dict[str, list[tuple]] = {name: [] for name in methods}
    for _ in range(rounds):
        for name, (method, args) in methods.items():
            runs[name].append(in_fresh_process(method, *args))
    return runs


def compare_scoring(args, model_dir, prompts, targets, ids) -> tuple[dict, bool, np.ndarray]:
    """Every method on the same prompts, in interleaved fresh processes: (record, ranks agree,
    tacit's ranks)."""
    n, n_pipe = len(prompts), args.pipeline_prompts
    common = (model_dir, prompts, targets, ids, args.batch_size)
    methods = {"tacit": (run_tacit, common), "lama": (run_lama, common)}
    if not args.no_compile:
        methods["tacit_compiled"] = (run_compiled, common)
    methods["pipeline"] = (
        run_pipeline,
        (model_dir, prompts[:n_pipe], targets[:n_pipe], ids, args.batch_size),
    )
    every = interleaved(methods, args.repeats)
    runs = {name: min(results, key=lambda r: r[1]) for name, results in every.items()}
    tacit_rounds = [r[0] for r in every["tacit"]]
    encoder_s = min(r["encoder_s"] for r in tacit_rounds)  # interleaved with tacit per process
    encoder_flops_ = tacit_rounds[0]["flops"]  # the same batches every round
    matmul_flops_per_s = max(r["matmul_rate"] for r in tacit_rounds)
    tacit_ranks, (lama_ranks_, lama_near) = runs["tacit"][0]["ranks"], runs["lama"][0]
    rank_gap = np.abs(tacit_ranks - lama_ranks_)
    per_prompt = {name: r[1] / (n_pipe if name == "pipeline" else n) for name, r in runs.items()}
    per_prompt["encoder_only"] = encoder_s / n
    record = {
        **{f"{name}_prompts_per_s": round(1 / t, 2) for name, t in per_prompt.items()},
        **{f"{name}_process_s": round(r[2], 2) for name, r in runs.items()},
        **{f"{name}_peak_rss_mb": round(r[3]) for name, r in runs.items()},
        "scoring_time_over_encoder_forward": round(
            per_prompt["tacit"] / per_prompt["encoder_only"], 3
        ),
        "encoder_gflop": round(encoder_flops_ / 1e9, 1),
        "encoder_gflop_per_s": round(encoder_flops_ / encoder_s / 1e9, 1),
        "matmul_gflop_per_s": round(matmul_flops_per_s / 1e9, 1),
        "encoder_rate_over_matmul_rate": round(encoder_flops_ / encoder_s / matmul_flops_per_s, 2),
        "speedup_vs_lama_scoring": round(per_prompt["lama"] / per_prompt["tacit"], 2),
        "peak_memory_lama_over_tacit_scoring": round(runs["lama"][3] / runs["tacit"][3], 2),
        "speedup_vs_pipeline": round(per_prompt["pipeline"] / per_prompt["tacit"], 1),
        "ranks_equal_lama": int((rank_gap == 0).sum()),
        "ranks_differing_beyond_float_ties": int((rank_gap > lama_near).sum()),
        "ranks_equal_pipeline": bool((tacit_ranks[:n_pipe] == runs["pipeline"][0]).all()),
        "pipeline_prompts": n_pipe,
        **runs["tacit"][0]["ties"],
    }
    ok = record["ranks_differing_beyond_float_ties"] == 0 and record["ranks_equal_pipeline"]
    if "tacit_compiled" in runs:
        compiled_ranks = runs["tacit_compiled"][0][0]
        first_pass_s = [r[0][1] for r in every["tacit_compiled"]]  # compiling included
        record["tacit_compiled_first_pass_s"] = [round(t, 1) for t in first_pass_s]
        record["compiled_speedup_vs_tacit_steady_state"] = round(
            per_prompt["tacit"] / per_prompt["tacit_compiled"], 2
        )
        compiled_gap = np.abs(compiled_ranks - lama_ranks_)
        record["compiled_ranks_differing_beyond_float_ties"] = int((compiled_gap > lama_near).sum())
        ok = ok and record["compiled_ranks_differing_beyond_float_ties"] == 0
    return record, ok, tacit_ranks


def compare_end_to_end(args, tmp, model_dir, built, targets, ids) -> tuple[dict, bool, np.ndarray]:
    """`probe retrieve` against the LAMA-style script, each a command in a fresh interpreter
    as a user runs it, the fastest of a few runs each: (record, ranks agree, probe's ranks).
    probe starts with an empty cache: its first run finds the single-token words, later runs
    read them from the cache, as a user's later runs do; the first run is recorded too."""
    prompts = list(built.prompt)
    job = Path(tmp) / "job.json"
    lama_job = {"prompts": prompts, "targets": targets, "vocab_ids": ids.tolist()}
    job.write_text(json.dumps({**lama_job, "batch_size": args.batch_size}))
    concepts = ",".join(dict.fromkeys(built.concept))
    clis, lamas = [], []
    for attempt in range(args.end_to_end_repeats):
        out = Path(tmp) / f"run{attempt}"
        clis.append(
            timed_command(
                [
                    *probe_command(),
                    "retrieve",
                    "--model",
                    model_dir,
                    "--norms",
                    str(args.norms),
                    "--concepts",
                    concepts,
                    "--max-props",
                    "10",
                    "--batch-size",
                    str(args.batch_size),
                    "--device",
                    "cpu",
                    "--out",
                    str(out),
                    "--quiet",
                ],
                env={"TACIT_CACHE_DIR": str(Path(tmp) / "cache")},
            )
        )
        lamas.append(
            timed_command(
                [
                    sys.executable,
                    str(BENCH / "lama_style.py"),
                    model_dir,
                    str(job),
                    str(Path(tmp) / f"lama{attempt}.json"),
                ]
            )
        )
    probe_ranks = pd.read_csv(Path(tmp) / "run0" / "prompts.csv")["rank"].to_numpy()
    lama = json.loads((Path(tmp) / "lama0.json").read_text())
    (cli_s, cli_mb), (lama_s, lama_mb) = min(clis), min(lamas)
    fastest = Path(tmp) / f"run{clis.index(min(clis))}" / "manifest.json"
    model = json.loads(fastest.read_text())["models"][0]
    beyond_ties = np.abs(probe_ranks - np.array(lama["rank"])) > np.array(lama["near"])
    record = {
        "end_to_end_prompts": len(prompts),
        "probe_retrieve_end_to_end_s": round(cli_s, 2),
        "probe_retrieve_peak_rss_mb": round(cli_mb),
        "probe_retrieve_first_run_s": round(clis[0][0], 2),
        "lama_end_to_end_s": round(lama_s, 2),
        "lama_end_to_end_peak_rss_mb": round(lama_mb),
        "speedup_vs_lama_end_to_end": round(lama_s / cli_s, 2),
        "peak_memory_lama_over_probe_retrieve": round(lama_mb / cli_mb, 2),
        "probe_retrieve_ranks_differing_from_lama_script_beyond_float_ties": int(beyond_ties.sum()),
        **tie_cost(model, "probe_retrieve_"),
    }
    return record, not beyond_ties.any(), probe_ranks


def tie_cost(counts: dict, prefix: str) -> dict:
    """What the tie rule cost a run (tacit.ranking.ties, from its counts: the manifest's model
    record, or Ranking.counts): the distinct prompts it scored again alone, the rows and
    scores settled, and the seconds it took (finding the near scores and the passes alone: the
    record's timing, Ranking.counts' milliseconds)."""
    return {
        f"{prefix}tie_prompts": counts.get("tie_prompts", 0),
        f"{prefix}tie_rows": counts.get("tie_rows", 0),
        f"{prefix}tie_scores": counts.get("tie_scores", 0),
        f"{prefix}tie_seconds": round(
            (counts.get("timing") or {}).get("tie_seconds")
            or counts.get("tie_milliseconds", 0) / 1000,
            2,
        ),
    }


def table(record: dict) -> list[list[str]]:
    """The rows the performance page shows (docs/hooks.py renders them): prompts/s, time and
    peak memory of each method against tacit, on the same prompts."""
    rows = [["method (same prompts)", "prompts/s", "time vs tacit", "peak memory"]]
    tacit = record.get("tacit_prompts_per_s")
    names = {
        "tacit": "**tacit** `MaskedLMScorer` (LM head at mask rows only)",
        "encoder_only": "encoder forward pass alone (no LM head: the floor)",
        "lama": "LAMA-style (full logits, log_softmax, select)",
        "pipeline": f'`pipeline("fill-mask")` ({record.get("pipeline_prompts")} prompts)',
    }
    for name, label in names.items():
        rate = record.get(f"{name}_prompts_per_s")
        if rate is None or tacit is None:
            continue
        memory = record.get(f"{name}_peak_rss_mb")
        rows.append(
            [
                label,
                f"{rate:,.2f}",
                f"{tacit / rate:.2f}x",
                f"{memory:,} MB" if memory is not None else "(same process)",
            ]
        )
    if "probe_retrieve_end_to_end_s" in record:
        cli, lama = record["probe_retrieve_end_to_end_s"], record["lama_end_to_end_s"]
        rows.append(
            [
                "`probe retrieve`, end to end (start-up included)",
                "",
                f"{cli:.1f} s",
                f"{record['probe_retrieve_peak_rss_mb']:,} MB",
            ]
        )
        if record.get("probe_retrieve_tie_prompts"):
            rows.append(
                [
                    f"of which near ties settled ({record['probe_retrieve_tie_prompts']} "
                    f"prompts scored again alone)",
                    "",
                    f"{record['probe_retrieve_tie_seconds']:.1f} s",
                    "",
                ]
            )
        rows.append(
            [
                "`bench/lama_style.py`, end to end",
                "",
                f"{lama:.1f} s ({lama / cli:.2f}x)",
                f"{record['lama_end_to_end_peak_rss_mb']:,} MB",
            ]
        )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=520, help="retrieval prompts to score")
    parser.add_argument("--pipeline-prompts", type=int, default=16)
    parser.add_argument("--shape", choices=sorted(SHAPES), default="roberta-base")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument(
        "--init",
        type=float,
        default=0.02,
        help="the random weights' standard deviation (0.2: logits spread as a trained model's)",
    )
    parser.add_argument("--norms", type=Path, default=SHARED / "cslb" / "norms.dat")
    parser.add_argument(
        "--tokenizer-dir", type=Path, default=SHARED / "tokenizers" / "roberta-base"
    )
    parser.add_argument(
        "--repeats", type=int, default=3, help="interleaved rounds; each method's fastest counts"
    )
    parser.add_argument("--end-to-end-repeats", type=int, default=3)
    parser.add_argument(
        "--end-to-end-only", action="store_true", help="only probe retrieve vs the LAMA script"
    )
    parser.add_argument(
        "--no-compile", action="store_true", help="leave out the tacit --compile row"
    )
    parser.add_argument("--quick", action="store_true", help="tiny model, 40 prompts: a smoke run")
    parser.add_argument("--json", type=Path, default=BENCH / "results" / "retrieve.json")
    args = parser.parse_args()
    if args.quick:
        args.shape, args.prompts, args.pipeline_prompts = "tiny", 40, 2
        args.repeats, args.end_to_end_repeats, args.no_compile = 1, 1, True

    record = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cpu(s), torch {torch.__version__}",
        "shape": args.shape,
        "init": args.init,
        "batch_size": args.batch_size,
        "repeats": args.repeats,
    }
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = build_model(args.tokenizer_dir, args.shape, Path(tmp) / "model", args.init)
        tokenizer = RobertaTokenizerFast.from_pretrained(model_dir)
        vocab = build_vocabulary({model_dir: tokenizer})
        norms = read_norms(args.norms)
        eligible, dropped = eligible_concepts(norms, vocab)
        built = build_prompts(norms, eligible, dropped=dropped, max_props=10).prompts
        built = built.iloc[: args.prompts]
        record["prompts"] = len(built)
        prompts, targets = list(built.prompt), [vocab.index(t) for t in built.target]
        ids = vocab.token_ids[model_dir]
        ok = True
        if not args.end_to_end_only:
            scoring, ok, tacit_ranks = compare_scoring(args, model_dir, prompts, targets, ids)
            record.update(scoring)
        end_to_end, e2e_ok, probe_ranks = compare_end_to_end(
            args, tmp, model_dir, built, targets, ids
        )
        record.update(end_to_end)
        ok = ok and e2e_ok
        if not args.end_to_end_only:
            record["probe_retrieve_ranks_equal_scorer"] = bool((probe_ranks == tacit_ranks).all())
            ok = ok and record["probe_retrieve_ranks_equal_scorer"]
    for key, value in record.items():
        print(f"{key:>42}: {value}")
    record.update(
        date=datetime.date.today().isoformat(),
        command="python bench/bench_retrieve.py " + " ".join(sys.argv[1:]),
        table=table(record),
    )
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(record, indent=2) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
