"""The notes a reader must see beside a run's numbers, shared by the probes' reports: what was
dropped and why, batches halved, vocabulary warnings, what targets were ranked among.

Each probe's report (its package's report module) gives the summary as text and its notes; the
API puts both on the ProbeResult and the CLI prints them (notes on stderr), so the two always
say the same. A note is one line that starts with `note:` or `warning:`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from tacit.core.manifest import Manifest
    from tacit.probes.manifest_keys import AskedManifest, RankedManifest

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from tacit.core.option_names import option


def listed(names: Sequence[str], limit: int = 8) -> str:
    """The first `limit` names, comma-separated, with ' ...' when there are more."""
    return ", ".join(names[:limit]) + (" ..." if len(names) > limit else "")


def run_notes(manifest: Manifest) -> list[str]:
    """Notes every probe shares: vocabulary warnings, batches halved on out of memory,
    --revision given for a local directory (where it has no effect), what a random-weight
    control is (--control), a server whose answers name another model than the one asked
    for, and ranks bounded by --suffix-top."""
    notes = [f"warning: {w}" for w in manifest.get("vocabulary", {}).get("warnings", [])]
    for record in manifest.get("models", []):
        control = record.get("control")
        if control:
            notes.append(
                f"note: {record['name']} is the control of {control['of']}: its architecture and "
                f"tokenizer with {control['weights']} weights (seed {control['seed']}), what "
                "length and tokens alone give; read the model's numbers against it, not only "
                "against chance"
            )
        server = cast("dict[str, Any]", record.get("server") or {})  # a served model's
        answered = server.get("answered_as") or {}
        others = {name: n for name, n in answered.items() if name != record.get("source")}
        if others:
            said = ", ".join(f"{name} ({n} answer(s))" for name, n in others.items())
            notes.append(
                f"note: {record['name']}: the server's answers named {said}, not "
                f"{record.get('source')}, the model asked for: they may come from another model"
            )
    from tacit.probes.suffix_top import suffix_top_notes

    notes += suffix_top_notes(manifest)
    if manifest.get("launch_warning"):
        notes.append(f"warning: {manifest.get('launch_warning')}")
    for record in manifest.get("models", []):
        if record.get("local_path") and record.get("revision"):
            notes.append(
                f"warning: {record['name']}: {option('--revision')} {record['revision']} "
                "has no effect on a local directory (it was loaded as it is)"
            )
    asked = manifest.get("batch_size")
    for record in manifest.get("models", []):
        used = record.get("batch_size_used")
        if used is not None and asked == "auto":
            notes.append(
                f"note: {record['name']}: {option('--batch-size')} auto: {used} at a "
                "time fitted (scores do not depend on it)"
            )
        elif used is not None and isinstance(asked, int) and used < asked:
            notes.append(
                f"note: {record['name']}: ran out of device memory at {option('--batch-size')} "
                f"{asked} and went on {used} at a time (scores do not depend on it)"
            )
    return notes


def masked_ran(manifest: Manifest) -> bool:
    """Whether a masked LM scored in the run: span scoring (`l2r`, `independent`) is a masked
    LM's option, said only where one ran."""
    return any(record.get("kind") == "masked" for record in manifest.get("models", []))


def span_scoring_said(manifest: Manifest) -> str:
    """`scored l2r, normalised sum`; `normalised sum` where no masked LM ran (a decoder-only
    model scores the whole sentence, whatever `--span-scoring` says)."""
    scored = f"scored {manifest.get('span_scoring')}, " if masked_ran(manifest) else ""
    return f"{scored}normalised {manifest.get('normalize')}"


def ranked_among(manifest: Manifest) -> str:
    """What targets were ranked among: the shared vocabulary, or candidate spans (with the
    work their scoring took against the naive count), or the answers a model generated."""
    if "generation" in manifest:
        asked = cast("AskedManifest", manifest)["generation"]
        sampling = asked["sampling"]
        how = (
            "greedy"
            if not sampling.get("temperature")
            else f"{sampling['n']} samples at temperature {sampling['temperature']}"
        )
        return f"by generation: the answers each model gave, {how} (answers.csv)"
    if "candidates" not in manifest:
        return f"shared vocabulary: {manifest['vocabulary']['size']} words"
    sizes = ", ".join(
        f"{s['size']} ({s['source']}" + (f", {name})" if name != "all" else ")")
        for name, s in manifest["candidates"].items()
    )
    work = cast("RankedManifest", manifest)["span_work"]
    done = [
        f"{what}: {work[f'span_{what}']:,} (naive {work[f'span_{what}_naive']:,})"
        for what in ("rows", "tokens")
        if f"span_{what}" in work
    ]
    return f"candidates: {sizes}, {span_scoring_said(manifest)}; " + "; ".join(done)


def describe_drops(dropped: pd.DataFrame, kept: int) -> str:
    """'concepts: 5 kept, 3 dropped (reason: n, ...)'."""
    counts = dropped["reason"].value_counts()
    detail = ", ".join(f"{reason}: {n}" for reason, n in counts.items())
    return f"concepts: {kept} kept, {len(dropped)} dropped" + (f" ({detail})" if detail else "")


def scored_over(manifest: Manifest) -> dict[str, str]:
    """What a run of a norms-based probe scored, each as a short printable value: the
    vocabulary or the candidate sets (with their sha256), the span scoring (where a masked LM
    ran: empty, it matches any) and normalisation, the norms, the concepts, the templates (a
    run from before template files used the paper's). Two runs stand side by side like for
    like when these match. A run by generation ranks among the model's own words: it has no
    vocabulary, candidates or normalisation, and stands beside a scoring run of the same
    norms, concepts and templates (tacit.results.like_for_like)."""
    from tacit.templates import load_templates

    vocabulary = manifest.get("vocabulary") or {}
    templates = manifest.get("templates") or load_templates().record()
    candidates = manifest.get("candidates") or {}
    norms = manifest.get("norms") or {}
    options = manifest.get("options") or {}
    masked = candidates and masked_ran(manifest)  # span scoring is a masked LM's option
    if options.get("by") == "generation":  # its own words: nothing to rank among
        return {
            "norms": f"{Path(str(norms.get('path'))).name} ({str(norms.get('sha256'))[:8]})"
            if norms
            else "",
            "concepts": ",".join(options.get("concepts") or []) or "all",
            "templates": f"{templates.get('file')} ({str(templates.get('sha256'))[:8]})",
        }
    return {
        "vocabulary": f"{vocabulary.get('size')} words ({str(vocabulary.get('sha256'))[:8]})"
        if vocabulary
        else "",
        "candidates": ", ".join(
            f"{c.get('size')} {c.get('source')} ({str(c.get('sha256'))[:8]})"
            for c in candidates.values()
        ),
        "span scoring": str(manifest.get("span_scoring")) if masked else "",
        "normalisation": str(manifest.get("normalize")) if candidates else "",
        "norms": f"{Path(str(norms.get('path'))).name} ({str(norms.get('sha256'))[:8]})"
        if norms
        else "",
        "concepts": ",".join(options.get("concepts") or []) or "all",
        "templates": f"{templates.get('file')} ({str(templates.get('sha256'))[:8]})",
    }


def norms_brief(manifest: Manifest) -> list[tuple[str, str]]:
    """A norms-based run's norms in brief: the file, its format and sha256."""
    norms = manifest.get("norms")
    if not norms:
        return []
    return [
        (
            "norms",
            f"{norms.get('path')} ({norms.get('format', 'cslb')}, "
            f"sha256 {str(norms.get('sha256', ''))[:12]})",
        )
    ]


def counts_listed(manifest: Manifest, *keys: str) -> list[str]:
    """The manifest's counts under `keys` (concepts dropped by reason, prompts by relation), a
    line each: `concepts dropped by reason: no answer: 3, ...`."""
    counts = manifest.get("counts") or {}
    return [
        f"{key.replace('_', ' ')}: " + ", ".join(f"{k}: {v}" for k, v in counts[key].items())
        for key in keys
        if counts.get(key)
    ]
