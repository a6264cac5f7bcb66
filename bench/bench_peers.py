"""Candidate ranking against the peers a user would pick: tacit, minicons, lm-evaluation-harness
and lm-pub-quiz on the same sentences, each a whole process, with tacit's floor.

The job is CSLB concept retrieval over candidate spans: a retrieval prompt's blank filled with
every concept ("An accordion has keys, is a musical instrument, and makes music."), for the
first P prompts (the first concept's, with 1 to P properties) x S candidates (spread over the
636 CSLB concepts). Models have random weights and the real shapes (GPT-2 small,
roberta-base) on the real roberta-base/GPT-2 byte-level BPE; the compute is the real models'.

- causal (GPT-2-small-shaped): every tool computes log P(sentence) with the first token after
  `<|endoftext|>` (tacit `CausalLMScorer.score_spans`, minicons `sequence_score(bos_token=True)`,
  lm-evaluation-harness `loglikelihood_rolling`, lm-pub-quiz's causal evaluator): the scores
  must agree to --tolerance nats, checked in the run.
- masked (roberta-base-shaped): tacit scores the span given the rest of the sentence (`l2r`,
  and `independent`), minicons and lm-pub-quiz the whole sentence's pseudo-log-likelihood:
  different quantities, so only their ranking of the candidates is compared (Spearman's rho
  with tacit's l2r, per prompt, averaged).
- causal@called: the causal job on the shipped paraphrase "Something that has keys, is a
  musical instrument, and makes music is called <mask>.", whose blank comes last: tacit runs
  the property text once per prompt and only the candidates after it, the peers every
  sentence whole. It asks another question (a definition, not the paper's statement), so it
  is a table of its own, not a speed-up of the paper's job.

Each tool runs in its own environment (bench/peers/run_*.py, which import the tool and nothing
of tacit's bench), found by --minicons-python etc., the TACIT_BENCH_<TOOL> variables, or
../peers/<tool>/.venv/bin/python beside this checkout; a tool not found is skipped with the
reason. Processes take turns (A B C A B C ...) and each grid point's medians count; peak memory
is the process's maximum resident set. tacit's floor is its own forward passes replayed bare
(bench/peers/run_tacit.py). Writes bench/results/peers.json, whose `table` (every tool at every
grid point) and `summary` (scoring over tacit's floor, by size) docs/performance.md renders.
Run: `python bench/bench_peers.py` (`--quick`: a smoke run).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import numpy as np
import torch
from bench_causal import build_model as build_causal
from bench_retrieve import SHARED, timed_command
from bench_retrieve import build_model as build_masked
from peers_report import check, summary, table

from tacit.norms import read_norms
from tacit.probes.retrieve.fills import retrieval_fills
from tacit.probes.retrieve.prompts import build_prompts, concept_candidates
from tacit.templates import load_templates

BENCH = Path(__file__).resolve().parent
PEERS = BENCH.parents[1] / "peers"
# "PxS:R[:tacit]": P prompts x S candidates, R rounds (0: --repeats), tacit only where the peers
# would take too long for one run (docs/performance.md says how long and why). A kind may name a
# retrieval template of the shipped paraphrases ("causal@called": "Something that has keys is
# called <mask>."); the paper's ("<mask> has keys.") by default.
GRID = {
    "causal": [
        "1x50:0",
        "1x200:1",
        "1x636:1",
        "3x50:0",
        "3x200:1",
        "3x636:1",
        "9x50:1",
        "9x636:1:tacit",
    ],
    "causal@called": ["1x50:1", "1x636:1", "9x50:1", "9x636:1:tacit"],
    "masked": ["1x50:0", "1x200:1", "1x636:1", "3x50:1", "9x50:1:tacit", "9x636:1:tacit"],
}
PAPER = "paper"
TACIT = ("tacit", "tacit independent")


@dataclass
class Tool:
    """One tool's runner, its environment's Python and the jobs it takes."""

    name: str
    script: str
    kinds: tuple[str, ...]
    python: str = sys.executable
    options: tuple[tuple[str, str], ...] = ()  # extra job keys
    skipped: str = ""  # why it does not run

    def command(self, job: Path, out: Path) -> list[str]:
        return [self.python, str(BENCH / "peers" / self.script), str(job), str(out)]


def tools(args: argparse.Namespace) -> list[Tool]:
    """tacit's two span scorings and the peers found (each peer checked by importing it)."""
    found = [
        Tool("tacit", "run_tacit.py", ("causal", "masked")),
        Tool(
            "tacit independent", "run_tacit.py", ("masked",), options=(("scoring", "independent"),)
        ),
    ]
    for name, script, module, kinds in (
        ("minicons", "run_minicons.py", "minicons", ("causal", "masked")),
        ("lm-eval", "run_lmeval.py", "lm_eval", ("causal",)),
        ("lm-pub-quiz", "run_pubquiz.py", "lm_pub_quiz", ("causal", "masked")),
    ):
        variable = "TACIT_BENCH_" + name.upper().replace("-", "_")
        given = getattr(args, name.replace("-", "_") + "_python")
        default = PEERS / name / ".venv" / "bin" / "python"
        python = str(given or os.environ.get(variable) or default)
        tool = Tool(name, script, kinds, python)
        if not Path(python).exists():
            tool.skipped = f"no {python} (give --{name}-python or {variable})"
        elif subprocess.run([python, "-c", f"import {module}"], capture_output=True).returncode:
            tool.skipped = f"{python} cannot import {module}"
        found.append(tool)
    return found


def job_texts(
    norms: Path, prompts: int, spans: int, template: str = PAPER
) -> tuple[list[str], list[str]]:
    """The first `prompts` retrieval prompts of `template` as a run has them (the first
    concept's, with 1, 2, ... properties), and `spans` of the 636 concept candidates spread over
    the alphabet."""
    norm_set = read_norms(norms)
    templates = load_templates(None if template == PAPER else "paraphrases")
    fills = retrieval_fills(templates, spans=True)
    if template not in fills:
        raise SystemExit(f"no retrieval template {template!r}: one of {', '.join(fills)}")
    table = build_prompts(norm_set, list(norm_set.concepts), max_props=10, fills=fills).prompts
    if "template" in table:  # several templates: this one's prompts
        table = table[table["template"] == template]
    candidates, _ = concept_candidates(norm_set, list(table["concept"]))
    take = np.linspace(0, len(candidates.spans) - 1, spans).round().astype(int)
    return list(dict.fromkeys(table["prompt"]))[:prompts], [candidates.spans[i] for i in take]


def run_point(
    kind: str,
    model: str,
    texts: tuple[list[str], list[str]],
    chosen: list[Tool],
    rounds: int,
    args: argparse.Namespace,
    tmp: Path,
) -> dict[str, dict]:
    """Each tool's runs at one grid point, taking turns: per tool the list of results."""
    templates, spans = texts
    sentences = [t.replace("<mask>", s) for t in templates for s in spans]
    runs: dict[str, list[dict]] = {tool.name: [] for tool in chosen}
    for _ in range(rounds):
        for tool in chosen:
            job = {
                "kind": kind,
                "model": model,
                "templates": templates,
                "spans": spans,
                "sentences": sentences,
                "batch_size": args.batch_size,
                "threads": args.threads,
                **dict(tool.options),
            }
            job_path, out = tmp / "job.json", tmp / "out.json"
            job_path.write_text(json.dumps(job))
            seconds, peak_mb = timed_command(tool.command(job_path, out), {"TQDM_DISABLE": "1"})
            result = json.loads(out.read_text())
            result["wall_s"] = seconds - result.get("floor_s", 0.0)
            result["peak_mb"] = peak_mb
            runs[tool.name].append(result)
            done = f"{result['wall_s']:.1f} s (scoring {result['score_s']:.2f} s), {peak_mb:.0f} MB"
            print(f"  {kind} {len(templates)}x{len(spans)} {tool.name}: {done}", file=sys.stderr)
    return {name: summarize(results) for name, results in runs.items()}


def summarize(results: list[dict]) -> dict:
    """Medians over the rounds; the last round's scores and counts."""
    keys = ("wall_s", "score_s", "load_s", "peak_mb", "floor_s")
    medians = {k: statistics.median(r[k] for r in results) for k in keys if k in results[0]}
    return {**results[-1], **medians, "rounds": len(results)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--norms", type=Path, default=SHARED / "cslb" / "norms.dat")
    parser.add_argument(
        "--tokenizer-dir", type=Path, default=SHARED / "tokenizers" / "roberta-base"
    )
    for name in ("minicons", "lm-eval", "lm-pub-quiz"):
        parser.add_argument(f"--{name}-python", help=f"the Python of {name}'s environment")
    parser.add_argument(
        "--kinds", nargs="+", default=["causal", "masked"], choices=["causal", "masked"]
    )
    parser.add_argument("--tools", nargs="+", help="only these tools (default: every one found)")
    parser.add_argument(
        "--points",
        nargs="+",
        metavar="KIND:PxS[:R[:tacit]]",
        help="grid points instead of the default grid (e.g. causal:3x636 masked:9x636:1:tacit "
        "causal@called:9x50)",
    )
    parser.add_argument("--repeats", type=int, default=3, help="rounds per grid point")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="CPU threads per process (1: on a shared machine a time then measures the work)",
    )
    parser.add_argument("--tolerance", type=float, default=1e-4, help="nats (causal scores)")
    parser.add_argument("--quick", action="store_true", help="tiny models, 2 x 8: a smoke run")
    parser.add_argument("--json", type=Path, default=BENCH / "results" / "peers.json")
    args = parser.parse_args()
    points = args.points or [
        f"{job}:{cell}" for job in GRID if job.split("@")[0] in args.kinds for cell in GRID[job]
    ]
    if args.quick:
        points, args.repeats = [f"{kind}:2x8:1" for kind in args.kinds], 1
        points += ["causal@called:2x8:1"] if "causal" in args.kinds else []
    found = [t for t in tools(args) if not args.tools or t.name in args.tools]
    for tool in found:
        if tool.skipped:
            print(f"skipping {tool.name}: {tool.skipped}")
    done, agree = [], True
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        shape = "tiny" if args.quick else None
        models = {
            "causal": build_causal(args.tokenizer_dir, shape or "gpt2", tmp / "causal"),
            "masked": build_masked(args.tokenizer_dir, shape or "roberta-base", tmp / "masked"),
        }
        for spec in points:
            job, size, *rest = spec.split(":")
            kind, _, template = job.partition("@")
            prompts, spans = map(int, size.split("x"))
            rounds = int(rest[0]) if rest and int(rest[0]) else args.repeats
            only = rest[1:] == ["tacit"]
            chosen = [
                t
                for t in found
                if kind in t.kinds and not t.skipped and (not only or t.name in TACIT)
            ]
            texts = job_texts(args.norms, prompts, spans, template or PAPER)
            runs = run_point(kind, models[kind], texts, chosen, rounds, args, tmp)
            point = {
                "kind": kind,
                "template": template or PAPER,
                "prompts": prompts,
                "candidates": spans,
                "runs": runs,
                "tacit_only": only,
            }
            agree &= check(point, args.tolerance)
            done.append(point)
            save(args, found, done, complete=len(done) == len(points))
    for rows in (table(done), summary(done)):
        print()
        for row in rows:
            print(" | ".join(str(cell) for cell in row))
    return 0 if agree else 1


def save(args: argparse.Namespace, found: list[Tool], points: list[dict], complete: bool):
    """The results so far (each grid point as it is done: a stopped run keeps what it did)."""
    record = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cpu(s) ({args.threads} thread per "
        f"process), torch {torch.__version__}",
        "date": date.today().isoformat(),
        "command": " ".join(["python", "bench/bench_peers.py", *sys.argv[1:]]),
        "complete": complete,
        "versions": {name: run["version"] for p in points for name, run in p["runs"].items()},
        "skipped": {t.name: t.skipped for t in found if t.skipped},
        "batch_size": args.batch_size,
        "repeats": args.repeats,
        "points": [{**p, "runs": {n: trimmed(r) for n, r in p["runs"].items()}} for p in points],
        "table": table(points),
        "summary": summary(points),
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(record, indent=1) + "\n")


def trimmed(run: dict) -> dict:
    """A run's record without its scores (the JSON stays small)."""
    return {k: v for k, v in run.items() if k != "scores"}


if __name__ == "__main__":
    sys.exit(main())
