"""Real numbers: the paper's probes on real pretrained causal LMs, beside random-weight
controls of the same shapes and the chance level.

For each model given (a local folder: the GGUF checkpoints of tests/support_real.py,
dequantised to float32, or any causal LM) and a control built from its own config with random
weights (seeded, the same tokenizer), on the same seeded sample of CSLB concepts
(`--limit N --limit-by random --seed S`):

- elicitation, every relation of the paper (is, is a, has, has a, made of), with the prefix,
  ranking every answer people gave to the relation (`--candidates answers`: exact span
  scores, multi-token answers included): mAP over those answers and Spearman's rho, each with
  its 95% bootstrap interval over concepts;
- retrieval with concept spans (`--candidates concepts`, every concept of the norms a
  candidate) from `--max-props` properties, on the `paraphrases` templates: the paper's
  ("A <mask> has fur, ...", the blank first, so every sentence is scored whole) and the two
  blank-last paraphrases ("Something that has fur, ... is called a <mask>.", which share
  the text before the blank): MRR, P@1 and hits@10 with their intervals.

Chance is exact where it can be: a uniformly random ranking of N candidates has MRR H_N / N,
P@1 1/N, hits@10 10/N; mAP by simulation (the same number of answers among the same number of
candidates, 200 seeded draws per prompt), Spearman's rho 0. Writes bench/results/real.json
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

import numpy as np
import pandas as pd
import torch
from bench_causal import SHARED, build_model
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

import tacit

BENCH = Path(__file__).resolve().parent
RELATIONS = ["is", "is a", "has", "has a", "made of"]
CHANCE_DRAWS = 200


def control(model_dir: str, where: Path, seed: int) -> str:
    """A model of the same config with random weights (seeded), and the same tokenizer."""
    torch.manual_seed(seed)
    config = AutoConfig.from_pretrained(model_dir)
    AutoModelForCausalLM.from_config(config).save_pretrained(where)
    AutoTokenizer.from_pretrained(model_dir).save_pretrained(where)
    return str(where)


def expected_ap(golds: int, candidates: int, rng: np.random.Generator) -> float:
    """Mean AP of `golds` answers placed uniformly at random among `candidates` ranks."""
    aps = []
    for _ in range(CHANCE_DRAWS):
        ranks = np.sort(rng.choice(candidates, size=golds, replace=False)) + 1
        aps.append(float(np.mean(np.arange(1, golds + 1) / ranks)))
    return float(np.mean(aps))


def interval(row: pd.Series, name: str, ci: str | None = None) -> str:
    """A mean and its interval (`ci`: the interval's column prefix, where it differs)."""
    low, high = row[f"{ci or name}_ci_low"], row[f"{ci or name}_ci_high"]
    if pd.isna(row[name]):
        return "undefined"
    return f"{row[name]:.3f} [{low:.3f}, {high:.3f}]"


def sample(args: argparse.Namespace) -> dict:
    """What every run shares: the norms, the seeded sample of concepts, the threads."""
    return {
        "norms": args.norms,
        "limit": args.concepts,
        "limit_by": "random",
        "seed": args.seed,
        "threads": args.threads,
        "progress": False,
    }


def elicit(label: str, kind: str, model: str, args: argparse.Namespace) -> list[dict]:
    """One model's elicitation rows: a row per relation, with its chance level."""
    result = tacit.elicit(
        [model],
        relations=RELATIONS,
        candidates="answers",
        **sample(args),
    )
    summary = result.summary.set_index("relation")
    prompts = result.prompts
    rng = np.random.default_rng(args.seed)
    rows = []
    for relation in RELATIONS:
        if relation not in summary.index:
            continue
        row = summary.loc[relation]
        asked = prompts[prompts["relation"] == relation]
        chance = np.mean(
            [
                expected_ap(int(g), int(n), rng)
                for g, n in zip(asked["n_gold"], asked["n_candidates"])
            ]
        )
        rows.append(
            {
                "model": label,
                "weights": kind,
                "relation": relation,
                "prompts": len(asked),
                "candidates": int(asked["n_candidates"].iloc[0]),
                "mAP [95% CI]": interval(row, "map_vocab"),
                "chance mAP": f"{chance:.3f}",
                "Spearman rho [95% CI]": interval(row, "spearman_mean", "spearman"),
            }
        )
    return rows


def retrieve(label: str, kind: str, model: str, args: argparse.Namespace) -> list[dict]:
    """One model's retrieval rows: a row per template at --max-props properties."""
    result = tacit.retrieve(
        [model],
        candidates="concepts",
        templates="paraphrases",
        max_props=args.max_props,
        **sample(args),
    )
    summary = result.summary
    n = int(result.prompts["n_candidates"].iloc[0])
    harmonic = float(np.sum(1.0 / np.arange(1, n + 1)))
    last = summary[summary["n_props"] == summary["n_props"].max()]
    return [
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
            "chance MRR / P@1 / hits@10": f"{harmonic / n:.4f} / {1 / n:.4f} / {10 / n:.4f}",
        }
        for _, row in last.iterrows()
    ]


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
            runs = [("pretrained", directory)]
            if not args.skip_controls:
                built = control(directory, tmp / f"control-{len(seconds)}", 1000 + args.seed)
                runs.append(("random (same shape)", built))
            for kind, model in runs:
                start = time.perf_counter()
                elicit_rows += elicit(label, kind, model, args)
                retrieve_rows += retrieve(label, kind, model, args)
                seconds[f"{label}, {kind}"] = round(time.perf_counter() - start, 1)
                print(f"{label}, {kind}: {seconds[f'{label}, {kind}']} s", flush=True)
                if not args.quick:  # after each model: a run stopped later keeps these
                    write(args, seconds, elicit_rows, retrieve_rows)
    print(pd.DataFrame(elicit_rows).to_string(), pd.DataFrame(retrieve_rows).to_string(), sep="\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
