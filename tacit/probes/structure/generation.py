"""The matrix by generation: the norming task (elicitation's free listing, `--relation all`)
asked of each model `--samples` times; each draw is a participant, and a feature's cell is
how many draws named it. The model's listing is written as CSLB's norms (its run's
`norms/NAME.dat`, and `--write-norms`) and read back as any norm set is."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from tacit.core.errors import TacitError
from tacit.norms import NormSet, read_norms
from tacit.probes.base import Outcome, Plan
from tacit.probes.structure.common import draws, options_record, reference_matrix, say_left_out
from tacit.structure import ConceptFeatureMatrix, from_norms, write_model_norms

if TYPE_CHECKING:
    from tacit.core.manifest import Manifest
    from tacit.core.options import Planning
    from tacit.probes.elicit.options import ElicitOptions
    from tacit.probes.structure.options import StructureOptions

OK = "ok"


def listing_options(values: StructureOptions) -> ElicitOptions:
    """Elicitation's options of the free listing the structure probe asks."""
    from tacit.probes.elicit.free_listing import FREE_LISTING
    from tacit.probes.elicit.options import ElicitOptions

    return ElicitOptions(
        relations=[FREE_LISTING],
        norms=values.norms,
        norms_format=values.norms_format,
        norms_columns=values.norms_columns,
        concepts=values.concepts,
        by="generation",
        guesses=values.guesses,
        samples=values.samples,
        temperature=values.temperature,
        max_tokens=values.max_tokens,
        questions=values.questions,
    )


def draw_counts(answers: pd.DataFrame) -> pd.DataFrame:
    """One row per (concept, feature, draw) a model's answers matched, with its wording:
    `concept, feature, draw, count, wording` (draws numbered from 1: participants)."""
    matched = answers[(answers["status"] == OK) & answers["matched"].fillna("").astype(bool)]
    return pd.DataFrame(
        {
            "concept": matched["concept"].to_numpy(),
            "feature": matched["matched"].to_numpy(),
            "draw": matched["draw"].astype(int).to_numpy() + 1,
            "count": 1,
            "wording": matched["normal"].fillna("").astype(str).to_numpy(),
        }
    ).drop_duplicates(["concept", "feature", "draw"])


def model_norms(counts: pd.DataFrame, people: NormSet) -> tuple[NormSet, str, dict[str, object]]:
    """The model's listing as CSLB's norms: the NormSet read back, the file's text, and what
    was written and left out (`counts` holds at least one match)."""
    types = dict(zip(people.table["feature"], people.table["feature_type"]))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "norms.dat"
        record = write_model_norms(counts, path, feature_types=types, domains=people.domains)
        text = path.read_text(encoding="utf-8")
        norms = read_norms(path)
    return norms, text, record


def listing_matrix(norms: NormSet, draws: Mapping[str, int]) -> ConceptFeatureMatrix:
    """A model's listing as a matrix of proportions: of each concept's `draws` (a recorded
    model's may differ from concept to concept), how many named each feature."""
    return from_norms(
        norms, value="proportion", n_participants={c: int(draws[c]) for c in norms.concepts}
    )


NOTHING_MATCHED = "no answer matched a feature of the norms: no matrix to compare"


@dataclass
class GenerationState:
    norms: NormSet


def finish_listing(plan: Plan, rows: pd.DataFrame, manifest: Manifest, run: Planning) -> Outcome:
    """The listing's answers as each model's norms and matrix, against people's: each
    draw a participant (`--write-norms` writes them too)."""
    from tacit.core.files import write_atomic
    from tacit.probes.structure.outcome import parts, slug
    from tacit.structure import compare_matrices

    values: StructureOptions = plan.values
    people: NormSet = plan.state.norms
    done = plan.asked.finish(rows, manifest["models"], keys=["concept"])
    answers = done.extra["answers"]
    reference = reference_matrix(people, values)
    similarity = values.similarity or "cosine"
    name = people.name or people.path.name
    compared, files = [], {}
    written: dict[str, dict[str, object]] = {}
    models = list(dict.fromkeys(done.rows["model"]))
    unmatched: list[str] = []
    for model in models:
        counts = draw_counts(answers[answers["model"] == model])
        if counts.empty:  # nothing to compare (a random-weight control, often): said, kept
            unmatched.append(str(model))
            written[str(model)] = {"left_out": NOTHING_MATCHED}
            continue
        norms, text, record = model_norms(counts, people)
        files[f"norms/{slug(str(model))}.dat"] = text
        if values.write_norms is not None:
            target = Path(values.write_norms)
            if len(models) > 1:
                target = target.with_name(f"{target.stem}-{slug(str(model))}{target.suffix}")
            try:
                write_atomic(target, text)
            except OSError as err:
                raise TacitError(f"{target}: cannot write the norms ({err.strerror})") from None
            record = {**record, "path": str(target)}
        written[str(model)] = record
        asked = done.rows[done.rows["model"] == model]
        matrix = listing_matrix(norms, dict(zip(asked["concept"], asked["n_draws"])))
        found = compare_matrices(
            matrix,
            reference,
            reference_norms=people,
            a_norms=norms,
            names=(str(model), name),
            similarity=similarity,  # type: ignore[arg-type]
            **draws(values, run),
        )
        compared.append((str(model), found))
    say_left_out(unmatched, NOTHING_MATCHED.replace("the norms", name), bool(compared))
    made = parts(compared, reference)
    if unmatched:  # a row each, with no numbers: n_concepts 0
        import pandas as pd

        rows_of = pd.DataFrame({"model": unmatched, "n_concepts": 0})
        made.summary = pd.concat([made.summary, rows_of], ignore_index=True)
    added: dict[str, Any] = dict(done.record)
    added["structure"] = made.record
    added["options"] = {
        **options_record(values, similarity),
        **done.options,
        "samples": values.samples,
        "temperature": values.temperature,
    }
    added["counts"] = {"prompts_per_model": len(plan.work.rows) if plan.work else 0}
    added["model_norms"] = written
    return Outcome(
        done.rows,
        made.summary,
        added,
        {**done.extra, **made.extra},
        {**made.files, **files},
        made.figures,
    )
