"""Concept structure on the real norms, no model: how long each analysis takes on all of CSLB
(638 concepts x 5,928 features) with the defaults (1,000 resamples, 1,000 permutations, 100
split halves), against the usual way of computing the same numbers (each bootstrap resample
written out and scored by scipy.stats.spearmanr or sklearn's roc_auc_score; each split half's
matrices dense, with sklearn's cosine_similarity), and the numbers themselves: CSLB's
split-half ceiling and McRae against CSLB on their shared concepts. Checks that both ways give
the same values. Writes bench/results/structure.json, which docs/probes/structure.md shows.
Run: `python bench/bench_structure.py` (--quick: 20 draws of each, a smoke run).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from datetime import date
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr
from sklearn.metrics import roc_auc_score
from sklearn.metrics.pairwise import cosine_similarity

from tacit.norms import read_norms
from tacit.structure import (
    category_structure,
    compare_norms,
    feature_verification,
    from_norms,
    noise_ceiling,
    read_concepts,
    rsa,
    split_halves,
    verification_items,
)
from tacit.structure.similarity import similarity_of
from tacit.structure.stats import Codes, concept_counts, weighted_auc

BENCH = Path(__file__).resolve().parent
SHARED = Path(os.environ.get("TACIT_SHARED_DATA", BENCH.parents[1] / "shared" / "data"))


def seconds(work):
    start = time.perf_counter()
    done = work()
    return done, time.perf_counter() - start


def naive_rsa_bootstrap(sim_a, sim_b, seed, n):
    """Each resample's pairs written out, Spearman's rho by scipy."""
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(sim_a), size=(n, len(sim_a)))
    iu = np.triu_indices(len(sim_a), 1)
    found = []
    for b in picks:
        keep = b[iu[0]] != b[iu[1]]
        found.append(spearmanr(sim_a[np.ix_(b, b)][iu][keep], sim_b[np.ix_(b, b)][iu][keep])[0])
    return np.array(found)


def ours_rsa_bootstrap(sim_a, sim_b, seed, n):
    from tacit.structure.stats import weighted_spearman

    iu, ju = np.triu_indices(len(sim_a), 1)
    codes_a, codes_b = Codes.of(sim_a[iu, ju]), Codes.of(sim_b[iu, ju])
    counts = concept_counts(np.random.default_rng(seed), len(sim_a), n)
    return np.array([weighted_spearman(codes_a, codes_b, c[iu] * c[ju]) for c in counts])


def naive_ceiling(norms, seed, n):
    """Each split's halves as dense matrices, sklearn's cosine, scipy's Spearman (the same
    draw as split_halves)."""
    from tacit.structure.build import feature_columns
    from tacit.structure.participants import Listings

    listings = Listings.of(norms)
    columns = {f: j for j, f in enumerate(feature_columns(norms.table)["feature"])}
    feature = norms.table["feature"].map(columns).to_numpy()[listings.rows]
    slots, slot_of = np.unique(
        np.column_stack([listings.concepts, listings.participants]), axis=0, return_inverse=True
    )
    rng = np.random.default_rng(seed)
    iu = np.triu_indices(len(listings.names), 1)
    found = []
    for _ in range(n):
        draw = rng.random(len(slots))
        half = np.full(len(slots), -1)
        for c in range(len(listings.names)):
            mine = np.flatnonzero(slots[:, 0] == c)
            ordered = mine[np.argsort(draw[mine], kind="stable")]
            k = len(mine) // 2
            half[ordered[:k]], half[ordered[k : 2 * k]] = 0, 1
        dense = [np.zeros((len(listings.names), len(columns))) for _ in range(2)]
        for h in (0, 1):
            chosen = half[slot_of.ravel()] == h
            np.add.at(dense[h], (listings.concepts[chosen], feature[chosen]), 1)
        a, b = cosine_similarity(dense[0]), cosine_similarity(dense[1])
        found.append(spearmanr(a[iu], b[iu])[0])
    return np.array(found)


def timing_table(timings: dict[str, float], versus: dict[str, dict]) -> list[list[str]]:
    """Rows for the docs: each analysis's seconds on CSLB, then ours against the usual way."""
    rows = [["on all of CSLB", "seconds", "the usual way", "ratio"]]
    rows += [[name, f"{value:.1f}", "", ""] for name, value in timings.items()]
    rows += [
        [
            f"{name} (per draw)",
            f"{v['ours_ms'] / 1000:.4f}",
            f"{v['usual_ms'] / 1000:.4f} ({v['usual']})",
            f"{v['ratio']:.1f}x",
        ]
        for name, v in versus.items()
    ]
    return rows


def numbers_table(numbers: dict) -> list[list[str]]:
    """Rows for the docs: the real numbers, with their intervals."""

    def shown(record: dict) -> str:
        return f"{record['value']:.3f} [{record['ci_low']:.3f}, {record['ci_high']:.3f}]"

    ceiling = numbers["cslb_ceiling"]
    versus = numbers["mcrae_vs_cslb"]
    rows = [["what", "value [95% interval]", "chance"]]
    rows.append(
        [
            f"CSLB split-half reliability ({int(ceiling['n_concepts'])} concepts, Spearman-Brown)",
            f"{ceiling['reliability']:.3f} [{ceiling['ci_low']:.3f}, {ceiling['ci_high']:.3f}]",
            "",
        ]
    )
    for row in versus["rsa"]:
        rows.append(
            [
                f"McRae vs CSLB RSA, {row['group']} ({row['n_concepts']} concepts)",
                shown(row),
                f"{row['chance']:.3f}",
            ]
        )
    on = versus["cslb_ceiling_on_them"]
    rows.append(
        [
            "CSLB reliability on those concepts",
            f"{on['reliability']:.3f} [{on['ci_low']:.3f}, {on['ci_high']:.3f}]",
            "",
        ]
    )
    rows.append(["McRae's RSA over CSLB's ceiling", shown(versus["rsa_over_ceiling"]), ""])
    for row in versus["verification_auc"]:
        rows.append(
            [
                f"McRae's pf verifying CSLB's features, AUC ({row['negatives']})",
                shown(row),
                f"{row['chance']:.3f}",
            ]
        )
    for row in versus["categories"]:
        rows.append([f"{row['matrix']}: {row['metric']}", shown(row), f"{row['chance']:.3f}"])
    rows.append(["McRae's answer-space prior, mean rho", shown(versus["prior_rho"]), ""])
    rows.append(
        ["McRae vs CSLB RSA, McRae's prior divided out", shown(versus["rsa_without_prior"]), ""]
    )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--norms", type=Path, default=SHARED / "cslb" / "norms.dat")
    parser.add_argument("--concepts", type=Path, default=SHARED / "cslb" / "concepts.dat")
    parser.add_argument(
        "--mcrae", type=Path, default=SHARED / "mcrae" / "CONCS_FEATS_concstats_brm.xlsx"
    )
    parser.add_argument("--quick", action="store_true", help="20 draws of each: a smoke run")
    parser.add_argument("--json", type=Path, default=BENCH / "results" / "structure.json")
    args = parser.parse_args()
    n = 20 if args.quick else 1000
    splits = 5 if args.quick else 100
    naive_n = 5 if args.quick else 20  # the usual way is timed on fewer draws, per draw
    cslb = read_norms(args.norms)
    people = from_norms(cslb, categories=args.concepts)
    model_like = from_norms(cslb, participants=range(1, 16))  # half of every concept's people
    people_on = people.select(concepts=list(model_like.concepts))
    draws = {"n_resamples": n, "n_permutations": n}
    timings: dict[str, float] = {}
    _, timings["rsa, all scopes (CSLB, participants 1-15 against all)"] = seconds(
        lambda: rsa(model_like, people_on, **draws)
    )
    _, timings[f"ceiling ({splits} split halves)"] = seconds(
        lambda: noise_ceiling(cslb, n_splits=splits)
    )
    _, timings["verification"] = seconds(
        lambda: feature_verification(
            people, from_norms(cslb, value="proportion", categories=args.concepts), **draws
        )
    )
    _, timings["category structure"] = seconds(lambda: category_structure(people, **draws))
    # against the usual way, per draw
    sim_a, sim_b = similarity_of(model_like), similarity_of(people_on)
    ours, ours_s = seconds(lambda: ours_rsa_bootstrap(sim_a, sim_b, 0, naive_n))
    theirs, theirs_s = seconds(lambda: naive_rsa_bootstrap(sim_a, sim_b, 0, naive_n))
    same_rsa = bool(np.allclose(ours, theirs))
    halves, halves_s = seconds(lambda: split_halves(cslb, n_splits=min(naive_n, 5), seed=0))
    dense, dense_s = seconds(lambda: naive_ceiling(cslb, 0, min(naive_n, 5)))
    same_ceiling = bool(np.allclose(halves, dense))
    items, _ = verification_items(people)
    scores = from_norms(cslb, value="proportion").values
    rows = items["concept"].map({c: i for i, c in enumerate(people.concepts)}).to_numpy()
    cols = items["feature"].map({f: j for j, f in enumerate(people.features)}).to_numpy()
    s, y = (
        scores[rows, cols] + np.random.default_rng(1).normal(0, 0.05, len(rows)),
        items["label"].to_numpy() == 1,
    )
    counts = concept_counts(np.random.default_rng(0), len(people.concepts), naive_n)
    codes = Codes.of(s)
    ours_auc, ours_auc_s = seconds(lambda: [weighted_auc(codes, y, c[rows]) for c in counts])
    theirs_auc, theirs_auc_s = seconds(
        lambda: [roc_auc_score(y, s, sample_weight=c[rows]) for c in counts]
    )
    same_auc = bool(np.allclose(ours_auc, theirs_auc))
    versus = {
        "rsa bootstrap resample (CSLB, 638 concepts)": {
            "ours_ms": 1000 * ours_s / naive_n,
            "usual_ms": 1000 * theirs_s / naive_n,
            "usual": "pairs written out, scipy.stats.spearmanr",
            "same": same_rsa,
        },
        "split half": {
            "ours_ms": 1000 * halves_s / min(naive_n, 5),
            "usual_ms": 1000 * dense_s / min(naive_n, 5),
            "usual": "dense halves, sklearn cosine_similarity, scipy.stats.spearmanr",
            "same": same_ceiling,
        },
        "verification AUC resample": {
            "ours_ms": 1000 * ours_auc_s / naive_n,
            "usual_ms": 1000 * theirs_auc_s / naive_n,
            "usual": "sklearn roc_auc_score(sample_weight=)",
            "same": same_auc,
        },
    }
    for entry in versus.values():
        entry["ratio"] = entry["usual_ms"] / entry["ours_ms"]
    # the real numbers
    concepts = read_concepts(args.concepts)
    named = concepts[concepts["mcrae label"] != ""]
    (found, compare_s) = seconds(
        lambda: compare_norms(
            args.mcrae,
            args.norms,
            categories=args.concepts,
            concept_map=dict(zip(named["mcrae label"], named["concept"])),
            n_participants_a=30,
            names=("McRae", "CSLB"),
            n_splits=splits,
            **draws,
        )
    )
    ceiling = noise_ceiling(cslb, n_splits=splits).iloc[0]
    table = found.tables
    numbers = {
        "cslb_ceiling": {
            k: ceiling[k]
            for k in ("n_concepts", "n_splits", "split_half", "reliability", "ci_low", "ci_high")
        },
        "mcrae_vs_cslb": {
            "concepts": found.a.shape[0],
            "features_aligned": found.record["shape"]["a_features_aligned"][1],
            "rsa": table["rsa"]
            .head(3)[["group", "n_concepts", "value", "ci_low", "ci_high", "chance", "p_value"]]
            .to_dict("records"),
            "cslb_ceiling_on_them": table["ceiling"]
            .iloc[0][["reliability", "ci_low", "ci_high"]]
            .to_dict(),
            "rsa_over_ceiling": table["ceiling_fraction"]
            .iloc[0][["value", "ci_low", "ci_high"]]
            .to_dict(),
            "verification_auc": table["verification"]
            .query("metric == 'auc'")[["negatives", "value", "ci_low", "ci_high", "chance"]]
            .to_dict("records"),
            "categories": table["categories"][
                ["matrix", "metric", "value", "ci_low", "ci_high", "chance"]
            ].to_dict("records"),
            "prior_rho": table["prior"].iloc[0][["value", "ci_low", "ci_high"]].to_dict(),
            "rsa_without_prior": table["rsa_without_prior"]
            .iloc[0][["value", "ci_low", "ci_high"]]
            .to_dict(),
            "seconds": found.record["seconds"],
            "compare_norms_seconds": compare_s,
        },
    }
    result = {
        "table": timing_table(timings, versus),
        "numbers": numbers_table(numbers),
        "details": numbers,
        "machine": f"{platform.machine()}, {os.cpu_count()} cpu(s), numpy {np.__version__}",
        "date": date.today().isoformat(),
        "command": "python bench/bench_structure.py" + (" --quick" if args.quick else ""),
        "draws": {"resamples": n, "permutations": n, "splits": splits},
        "seconds": timings,
        "versus_the_usual_way": versus,
    }
    text = json.dumps(result, indent=2, default=float)
    print(text)
    if not (same_rsa and same_ceiling and same_auc):
        print("error: tacit's values differ from the usual way's", file=sys.stderr)
        return 1
    if not args.quick:
        args.json.write_text(text + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
