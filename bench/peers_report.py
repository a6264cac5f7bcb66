"""bench_peers.py's checks and tables: the peers' scores against tacit's, one row per tool
and grid point (whole process, scoring, peak memory, each over tacit's, each over tacit's
floor), and a summary of each tool's scoring over tacit's floor by size."""

from __future__ import annotations

import numpy as np
from scipy.stats import spearmanr

HEADER = [
    "job",
    "prompts x candidates",
    "tool (quantity)",
    "whole process s",
    "scoring s",
    "peak MB",
    "whole process / tacit's",
    "scoring / tacit's floor",
    "scoring ms / sentence",
    "work run (a plain loop's)",
    "scores against tacit's",
]
QUANTITY = {
    ("causal", "tacit"): "log P(sentence), prefix cache",
    ("masked", "tacit"): "span l2r",
    ("masked", "tacit independent"): "span independent",
    ("causal", "minicons"): "sequence_score, bos_token",
    ("masked", "minicons"): "sentence PLL",
    ("causal", "lm-eval"): "loglikelihood_rolling",
    ("causal", "lm-pub-quiz"): "causal evaluator",
    ("masked", "lm-pub-quiz"): "sentence PLL within_word_l2r",
}


def check(point: dict, tolerance: float) -> bool:
    """Put each peer's agreement with tacit into its run: causal, the largest difference in
    nats (which must stay within `tolerance`); masked, Spearman's rho with tacit's l2r over each
    prompt's candidates, averaged (different quantities: reported, not required)."""
    runs, ok = point["runs"], True
    ours = np.asarray(runs["tacit"]["scores"]).reshape(point["prompts"], -1)
    for name, run in runs.items():
        theirs = np.asarray(run["scores"]).reshape(ours.shape)
        if name == "tacit":
            continue
        if point["kind"] == "causal":
            run["max_abs_diff"] = float(np.abs(theirs - ours).max())
            ok &= run["max_abs_diff"] <= tolerance
            run["agrees"] = f"max diff {run['max_abs_diff']:.1e} nats"
        else:
            rho = np.mean([spearmanr(a, b).statistic for a, b in zip(ours, theirs)])
            run["spearman"] = float(rho)
            run["agrees"] = f"rho {rho:.2f} (ranks)"
    return ok


def table(points: list[dict]) -> list[list[str]]:
    """One row per grid point and tool, tacit's floor after tacit (see HEADER)."""
    rows = [HEADER]
    for point in points:
        runs = point["runs"]
        tacit = runs["tacit"]
        sentences = point["prompts"] * point["candidates"]
        size = f"{point['prompts']} x {point['candidates']}"
        job = point_job(point)
        for name, run in runs.items():
            floor = floor_of(run, runs)
            rows.append(
                [
                    job,
                    size,
                    f"{name} ({QUANTITY[point['kind'], name]})",
                    f"{run['wall_s']:.1f}",
                    f"{run['score_s']:.2f}",
                    f"{run['peak_mb']:,.0f}",
                    f"{run['wall_s'] / tacit['wall_s']:.2f}x",
                    f"{run['score_s'] / floor:.2f}x",
                    f"{1000 * run['score_s'] / sentences:.1f}",
                    work(run),
                    run.get("agrees", ""),
                ]
            )
            if "floor_s" in run:
                rows.append(
                    [
                        job,
                        size,
                        f"{name}'s floor (its forward passes, bare)",
                        "",
                        f"{run['floor_s']:.2f}",
                        "",
                        "",
                        "1.00x",
                        f"{1000 * run['floor_s'] / sentences:.1f}",
                        "",
                        "",
                    ]
                )
    return rows


def summary(points: list[dict]) -> list[list[str]]:
    """The growth with candidates and prompts at a glance: one row per job and tool, one column
    per size (prompts x candidates), each cell the tool's scoring time over tacit's floor and
    its milliseconds per sentence ("-" where it did not run)."""
    jobs = {point_job(p): None for p in points}
    sizes = {(p["prompts"], p["candidates"]): None for p in points}
    rows = [["job", "tool", *(f"{a} x {b}" for a, b in sorted(sizes))]]
    for job in jobs:
        at = {(p["prompts"], p["candidates"]): p for p in points if point_job(p) == job}
        tools = {name: None for p in at.values() for name in p["runs"]}
        for name in tools:
            cells = []
            for size in sorted(sizes):
                run = at[size]["runs"].get(name) if size in at else None
                if run is None:
                    cells.append("-")
                    continue
                floor = floor_of(run, at[size]["runs"])
                per = 1000 * run["score_s"] / (size[0] * size[1])
                cells.append(f"{run['score_s'] / floor:.2f}x ({per:.1f} ms)")
            rows.append([job, name, *cells])
    return rows


def floor_of(run: dict, runs: dict[str, dict]) -> float:
    """The floor a run's scoring is measured against: tacit's runs their own, a peer's tacit's."""
    return run.get("floor_s", runs["tacit"]["floor_s"])


def point_job(point: dict) -> str:
    """The job a grid point measures: its kind, and its template where not the paper's."""
    if point.get("template", "paper") == "paper":
        return point["kind"]
    return f"{point['kind']}, template {point['template']}"  # the blank last


def work(run: dict) -> str:
    """tacit's work against a plain loop's: a causal LM's input tokens against a whole-sentence
    loop's (start + every token but the last), a masked LM's forward rows against one per span
    token per sentence."""
    counts = run.get("work") or {}
    for what in ("tokens", "rows"):
        if f"span_{what}" in counts:
            return f"{counts[f'span_{what}']:,} {what} ({counts[f'span_{what}_naive']:,})"
    return ""
