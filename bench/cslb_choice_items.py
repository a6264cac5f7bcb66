"""Multiple-choice items from a norms file, for `probe items` by scoring and by generation
(docs/real-models.md, "Multiple choice"): for each of N concepts drawn at random (one-word
names, seeded), a sentence of its three most-listed features and a blank for the concept
("It is a bird, is grey and does fly. It is the [Y]."), its candidates the concept and three
other concepts of its domain, in a seeded order.

    python bench/cslb_choice_items.py ../shared/data/cslb/norms.dat items.jsonl --items 40
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import tacit


def choice_items(norms_path: str, n: int, seed: int) -> list[dict[str, object]]:
    """The items (see the module docstring)."""
    norms = tacit.read_norms(norms_path)
    table, domains = norms.table, norms.domains
    rng = random.Random(seed)
    concepts = sorted(c for c in table["concept"].unique() if "_" not in c)
    items = []
    for concept in rng.sample(concepts, n):
        top = table[table["concept"] == concept].sort_values("pf", ascending=False)["feature"]
        said = [
            ("is " if f.startswith("made of") else "") + f.replace("_", " or ") for f in top[:3]
        ]
        same_domain = [c for c in concepts if c != concept and domains[c] == domains[concept]]
        candidates = [concept, *rng.sample(same_domain, 3)]
        rng.shuffle(candidates)
        text = f"It {said[0]}, {said[1]} and {said[2]}. It is the [Y]."
        items.append({"id": concept, "text": text, "candidates": candidates, "answer": concept})
    return items


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("norms", help="a norms file tacit reads (CSLB's norms.dat)")
    parser.add_argument("out", type=Path, help="the items file to write (JSON lines)")
    parser.add_argument("--items", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    lines = [json.dumps(item) for item in choice_items(args.norms, args.items, args.seed)]
    args.out.write_text("\n".join(lines) + "\n")
    print(f"{len(lines)} items written to {args.out}")


if __name__ == "__main__":
    main()
