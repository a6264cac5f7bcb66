"""Real numbers: the paper's probes on real pretrained causal LMs, beside random-weight
controls of the same shapes and the chance level.

For each model given (a local folder: the GGUF checkpoints of tests/support_real.py,
dequantised to float32, or any causal LM) and its control (`--control random-weights`: its own
config and tokenizer with random weights, torch seeded with --seed), on the same seeded sample
of CSLB concepts (`--limit N --limit-by random --seed S`):

- elicitation, every relation of the paper (is, is a, has, has a, made of), with the prefix,
  ranking every answer people gave to the relation (`--candidates answers`: exact span
  scores, multi-token answers included): mAP over those answers and Spearman's rho, each with
  its 95% bootstrap interval over concepts;
- retrieval with concept spans (`--candidates concepts`, every concept of the norms a
  candidate) from `--max-props` properties, on the `paraphrases` templates: the paper's
  ("A <mask> has fur, ...", the blank first, so every sentence is scored whole) and the two
  blank-last paraphrases ("Something that has fur, ... is called a <mask>.", which share
  the text before the blank): MRR, P@1 and hits@10 with their intervals.

Chance is what a uniformly random ranking of the N candidates scores, exactly, as every
summary has it (`mrr_chance` H_N / N, `p_at_1_chance` 1/N, `hits_at_10_chance` 10/N,
`map_vocab_chance` the expected AP given each prompt's answers; Spearman's rho 0). Each
model's seconds are its scoring time as its manifest records it. Writes bench/results/real.json
(tables `elicit` and `retrieve`), which docs/real-models.md renders. Run, e.g.:
`python bench/bench_real.py --model SmolLM2-135M-Instruct=DIR --model gemma-3-270m=DIR2`
(--quick: a tiny random GPT-2 as "the model", 3 concepts).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

import pandas as pd
import torch
from bench_causal import SHARED, build_model

import tacit

BENCH = Path(__file__).resolve().parent
RELATIONS = ["is", "is a", "has", "has a", "made of"]
PRETRAINED, CONTROL = "pretrained", "random (same shape)"


def interval(row: pd.Series, name: str, ci: str | None = None) -> str:
    """A mean and its interval (`ci`: the interval's column prefix, where it differs)."""
    low, high = row[f"{ci or name}_ci_low"], row[f"{ci or name}_ci_high"]
    if pd.isna(row[name]):
        return "undefined"
    return f"{row[name]:.3f} [{low:.3f}, {high:.3f}]"


def sample(args: argparse.Namespace) -> dict:
    """What every run shares: the norms, the seeded sample of concepts, the threads, and each
    model's random-weight control beside it (seeded with the same --seed)."""
    return {
        "norms": args.norms,
        "limit": args.concepts,
        "limit_by": "random",
        "seed": args.seed,
        "threads": args.threads,
        "progress": False,
        **({} if args.skip_controls else {"control": "random-weights"}),
    }


def each_model(result: tacit.ProbeResult) -> list[tuple[str, str, float]]:
    """(name, weights, scoring seconds) of each model of a run: the model, then its control."""
    return [
        (r["name"], CONTROL if "control" in r else PRETRAINED, r["timing"]["scoring_seconds"])
        for r in result.manifest["models"]
    ]


def elicit(label: str, model: str, args: argparse.Namespace, seconds: dict) -> list[dict]:
    """The elicitation rows of a model and its control: a row per relation, with chance."""
    result = tacit.elicit([model], relations=RELATIONS, candidates="answers", **sample(args))
    rows = []
    for name, kind, took in each_model(result):
        seconds[f"{label}, {kind}"] = round(seconds.get(f"{label}, {kind}", 0) + took, 1)
        summary = result.summary[result.summary["model"] == name].set_index("relation")
        prompts = result.prompts[result.prompts["model"] == name]
        for relation in RELATIONS:
            if relation not in summary.index:
                continue
            row = summary.loc[relation]
            asked = prompts[prompts["relation"] == relation]
            rows.append(
                {
                    "model": label,
                    "weights": kind,
                    "relation": relation,
                    "prompts": len(asked),
                    "candidates": int(asked["n_candidates"].iloc[0]),
                    "mAP [95% CI]": interval(row, "map_vocab"),
                    "chance mAP": f"{row['map_vocab_chance']:.3f}",
                    "Spearman rho [95% CI]": interval(row, "spearman_mean", "spearman"),
                }
            )
    return rows


def retrieve(label: str, model: str, args: argparse.Namespace, seconds: dict) -> list[dict]:
    """The retrieval rows of a model and its control: a row per template at --max-props
    properties, with chance."""
    result = tacit.retrieve(
        [model],
        candidates="concepts",
        templates="paraphrases",
        max_props=args.max_props,
        **sample(args),
    )
    n = int(result.prompts["n_candidates"].iloc[0])
    rows = []
    for name, kind, took in each_model(result):
        seconds[f"{label}, {kind}"] = round(seconds.get(f"{label}, {kind}", 0) + took, 1)
        summary = result.summary[result.summary["model"] == name]
        last = summary[summary["n_props"] == summary["n_props"].max()]
        rows += [
            {
                "model": label,
                "weights": kind,
                "template": row["template"],
                "properties": int(row["n_props"]),
                "concepts": int(row["n_concepts"]),
                "candidates": n,
                "MRR [95% CI]": interval(row, "mrr"),
                "P@1 [95% CI]": interval(row, "p_at_1"),
                "hits@10 [95% CI]": interval(row, "hits_at_10"),
                "chance MRR / P@1 / hits@10": f"{row['mrr_chance']:.4f} / "
                f"{row['p_at_1_chance']:.4f} / {row['hits_at_10_chance']:.4f}",
            }
            for _, row in last.iterrows()
        ]
    return rows


def write(args: argparse.Namespace, seconds: dict, elicit_rows: list, retrieve_rows: list) -> None:
    """The results so far; with --add, after those of the earlier runs the file holds."""
    command = "python bench/bench_real.py " + " ".join(sys.argv[1:])
    earlier = args.earlier or {"command": "", "seconds": {}, "elicit": [], "retrieve": []}
    record = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cpu(s), torch {torch.__version__}",
        "date": str(date.today()),
        "command": "; ".join(c for c in (earlier["command"], command) if c),
        "seed": args.seed,
        "seconds": {**earlier["seconds"], **seconds},
        "elicit": earlier["elicit"] + elicit_rows,
        "retrieve": earlier["retrieve"] + retrieve_rows,
    }
    args.json.write_text(json.dumps(record, indent=2) + "\n")
    print(f"wrote {args.json}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--model", action="append", default=[], help="LABEL=DIR (a causal LM folder); repeat"
    )
    parser.add_argument("--norms", type=Path, default=SHARED / "cslb" / "norms.dat")
    parser.add_argument("--tokenizer", type=Path, default=SHARED / "tokenizers" / "roberta-base")
    parser.add_argument("--concepts", type=int, default=8, help="concepts sampled (seeded)")
    parser.add_argument("--max-props", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--skip-controls", action="store_true", help="pretrained models only")
    parser.add_argument("--quick", action="store_true", help="a tiny random GPT-2, 3 concepts")
    parser.add_argument("--json", type=Path, default=BENCH / "results" / "real.json")
    parser.add_argument(
        "--add", action="store_true", help="keep the file's earlier rows (another model's)"
    )
    args = parser.parse_args()
    args.earlier = json.loads(args.json.read_text()) if args.add else None
    elicit_rows: list[dict] = []
    retrieve_rows: list[dict] = []
    seconds: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        models = dict(m.split("=", 1) for m in args.model)
        if args.quick:
            args.concepts, args.max_props = 3, 2
            models = {"tiny GPT-2": build_model(args.tokenizer, "tiny", tmp / "tiny")}
        for label, directory in models.items():
            start = time.perf_counter()
            elicit_rows += elicit(label, directory, args, seconds)
            retrieve_rows += retrieve(label, directory, args, seconds)
            print(f"{label} and its control: {time.perf_counter() - start:.0f} s", flush=True)
            if not args.quick:  # after each model: a run stopped later keeps these
                write(args, seconds, elicit_rows, retrieve_rows)
    print(pd.DataFrame(elicit_rows).to_string(), pd.DataFrame(retrieve_rows).to_string(), sep="\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
