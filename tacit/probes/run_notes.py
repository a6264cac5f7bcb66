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

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from tacit.ask.base import asked_by
from tacit.ask.vocabulary import suffix_top_notes
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
    # a model as the tables name it, by its whole text (a control records the text of its model)
    named = {str(r.get("text", r["name"])): str(r["name"]) for r in manifest.get("models", [])}
    for record in manifest.get("models", []):
        control = record.get("control")
        if control:
            of = named.get(str(control["of"]), control["of"])
            notes.append(
                f"note: {record['name']} is the control of {of}: its architecture and "
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
    notes += thinking_notes(manifest)
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


def thinking_notes(manifest: Manifest) -> list[str]:
    """A note per model some of whose completions spent their whole --max-tokens thinking
    (a think that never closed: no answer read from them)."""
    limit = cast("dict[str, Any]", manifest).get("generation", {}).get("sampling", {})
    notes = []
    for record in manifest.get("models", []):
        spent = cast("dict[str, Any]", record).get("generation_thought_to_limit", 0)
        if spent:
            notes.append(
                f"note: {record['name']}: {spent} completion(s) spent the whole "
                f"{option('--max-tokens')} {limit.get('max_tokens', '')} thinking (the think "
                "never closed): no answer was read from them; give a larger "
                f"{option('--max-tokens')}"
            )
    return notes


def ranked_among(manifest: Manifest) -> str:
    """What targets were ranked among, as the run's Ask says (Ask.ranked_among)."""
    return asked_by(manifest).ranked_among(manifest)


def describe_drops(dropped: pd.DataFrame, kept: int) -> str:
    """'concepts: 5 kept, 3 dropped (reason: n, ...)'."""
    counts = dropped["reason"].value_counts()
    detail = ", ".join(f"{reason}: {n}" for reason, n in counts.items())
    return f"concepts: {kept} kept, {len(dropped)} dropped" + (f" ({detail})" if detail else "")


def scored_over(manifest: Manifest) -> dict[str, str]:
    """What a run of a norms-based probe scored, each as a short printable value: what its
    Ask compares (the vocabulary or the candidate sets with their sha256, the span scoring
    where a masked LM ran, the normalisation: Ask.compared), the norms, the concepts, the
    templates (a run from before template files used the paper's). Two runs stand side by
    side like for like when these match (tacit.results.like_for_like)."""
    from tacit.templates import load_templates

    templates = manifest.get("templates") or load_templates().record()
    norms = manifest.get("norms") or {}
    options = manifest.get("options") or {}
    asked = asked_by(manifest)
    return {
        **(asked.compared(manifest) if asked is not None else {}),
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
