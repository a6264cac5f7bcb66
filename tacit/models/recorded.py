"""The recorded family: a model whose completions are read from a file, not generated, named
`--model NAME,recorded=PATH` (NAME: the model that gave them, as tables name it). The file is
a tacit run's answers.csv, or a table of concepts and answers (a header with `concept` and
`answer`; or none, read as Hansen & Hebart released theirs: concept, answer, concept id, run
number). Each request gets every completion recorded for what it asks about
(GenerationRequest.about): published outputs and earlier runs read, matched and scored again
under new rules, without a request to any model. docs/models.md says how a file is read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tacit.core.modelspec import LoadOption, ModelSpec
from tacit.models.families import Family, resolve
from tacit.models.recorded_record import RecordedRecord

if TYPE_CHECKING:
    from tacit.core.options import RunOptions
    from tacit.models.base import Needs, Scorer

RECORDED = LoadOption(
    "a file of the model's completions, read instead of generating: a tacit run's "
    "answers.csv, or a table of concept and answer (docs/models.md, 'Recorded answers')",
    "PATH",
)


class RecordedFamily(Family):
    """Models whose completions a file holds (see the module docstring)."""

    name = "recorded"
    description = "completions recorded in a file"
    record_keys = RecordedRecord
    options = {"recorded": RECORDED}

    def claims(self, spec: ModelSpec) -> bool:
        return spec.get("recorded") is not None

    def scorer_class(self, spec: ModelSpec, needs: Needs | None = None) -> type[Scorer]:
        from tacit.models.recorded_answers import RecordedScorer

        return RecordedScorer

    def tokenizer(self, spec: ModelSpec, flag: str = "--model") -> Any:
        return None  # nothing is tokenised: the completions are read whole

    def load(self, text: str, options: RunOptions, scorer: type[Scorer], **extra: Any) -> Scorer:
        from tacit.models.recorded_answers import RecordedScorer, read_recorded

        _, spec = resolve(text, options.model_defaults())
        recorded = read_recorded(str(spec.get("recorded")), spec.name)
        batch = options.batch_size if isinstance(options.batch_size, int) else 1
        return RecordedScorer(text, recorded, batch_size=batch)


FAMILY = RecordedFamily()
