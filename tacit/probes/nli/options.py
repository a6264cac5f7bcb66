"""The NLI suites' options, declared once (tacit.core.params)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

from tacit.core.choices import SUITES
from tacit.core.errors import TacitError
from tacit.core.manifest import Manifest, ModelRecord
from tacit.core.params import Options, Param

if TYPE_CHECKING:
    from tacit.core.choices import Suite

NLIMode = Literal["auto", "cloze", "classifier"]
NLI_MODES: tuple[NLIMode, ...] = get_args(NLIMode)
# how `probe nli` asks a masked LM by default (tacit.probes.nli.predict)
NLI_TEMPLATE = "{premise}? <mask>, {hypothesis}"
NLI_VERBALIZER = "entailment=Yes,neutral=Maybe,contradiction=No"


FIELDS = ("premise", "hypothesis")


def check_template(template: str) -> str:
    """A template has `{premise}`, `{hypothesis}` and `<mask>` once each, and no other field."""
    from tacit.ask import cloze  # numpy and pandas: not while options are declared

    return cloze.check_template(template, FIELDS)


def parse_verbalizer(value: str) -> dict[str, str]:
    """`entailment=Yes,neutral=Maybe,contradiction=No` (or E=, N=, C=), or `Yes,Maybe,No` in
    that label order."""
    from tacit.ask import cloze
    from tacit.pragmatics.labels import LABELS, normalize_label

    return cloze.parse_verbalizer(
        value, LABELS, label_of=lambda key: normalize_label(key, "--verbalizer")
    )


@dataclass(frozen=True)
class ClozeSetup:
    """How a masked LM is asked: the template, the verbalizer and whether to calibrate."""

    template: str = NLI_TEMPLATE
    verbalizer: str = NLI_VERBALIZER
    calibrate: bool = False

    def check(self) -> None:
        """Fail on a bad template or verbalizer before any model loads."""
        check_template(self.template)
        parse_verbalizer(self.verbalizer)


def _cloze(value: Any, label: str) -> Any:
    if not isinstance(value, ClozeSetup):
        raise TacitError(f"{label} {value!r}: expected a ClozeSetup")
    return value


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


SUITE = Param("suite", None, choices=SUITES, leading=True, help="Which suite.")
DATA = Param(
    "data",
    None,
    kind="path",
    leading=True,
    help="The suite's files as published: its folder, a part of it, or one file.",
)
PREDICTIONS = Param(
    "predictions",
    None,
    kind="path",
    help="Released predictions instead of a model: a .jsonl file (uid + logits in E, N, C "
    "order, or predicted_label), a folder of them, or a folder of seed folders (averaged, "
    "with their spread).",
)
MODE = Param(
    "mode",
    "auto",
    choices=NLI_MODES,
    help="auto (from the checkpoint's architecture), cloze or classifier.",
)
TEMPLATE = Param(
    "template",
    None,
    shown_default=NLI_TEMPLATE,
    help="Cloze mode: where premise, hypothesis and `<mask>` go.",
)
VERBALIZER = Param(
    "verbalizer",
    None,
    shown_default=NLI_VERBALIZER,
    help="Cloze mode: one single-token word per label.",
)
CALIBRATE = Param(
    "calibrate",
    False,
    kind="bool",
    help="Cloze mode: divide by the label distribution of content-free inputs (Zhao et al. 2021).",
)
CLOZE = Param(
    "cloze",
    None,
    kind="any",
    check=_cloze,
    cli=False,
    help="Template, verbalizer and calibrate in one ClozeSetup (the API's, instead of the three).",
)
LABEL_NAMES = Param(
    "label_names",
    None,
    kind="list",
    parse=_names,
    help="Classifier mode: what its outputs mean, in order (e.g. "
    "contradiction,neutral,entailment), when its config's id2label does not say.",
)
MAX_ITEMS = Param(
    "max_items",
    None,
    kind="int",
    minimum=1,
    help="Score a seeded random sample of this many items.",
)


class NLIManifest(Manifest, total=False):
    """What an nli run records beyond every run's keys."""

    suite: str
    data: dict[str, Any]  # the suite's path, its files, items loaded and sampled
    mode: str | None  # classifier, cloze, or predictions (released ones read)
    cloze: dict[str, Any]  # the cloze template, verbalizer and calibration
    dropped: dict[str, Any]  # items not sampled, and those without a prediction
    paper_column: str | None  # the paper's numbers shown beside (NOPE's released predictions)


class NLIModelRecord(ModelRecord, total=False):
    """What an nli run records of each model beyond the engine's and its family's keys."""

    seed: str  # released predictions: the seed folder
    mode: str
    labels: dict[str, str]  # a classifier's labels, as its config names them
    max_tokens: int
    prompts_cut_to_fit: int  # cloze: prompts cut around the mask
    truncated_pairs: int  # classifier: pairs whose premise was cut
    records_not_in_data: int  # released predictions of items not in the suite
    # cloze: the template, the verbalizer and its token ids, the words' mean probability, and
    # with calibration the content-free inputs and their distribution
    template: str
    verbalizer: list[str]
    verbalizer_token_ids: dict[str, Any]
    mean_verbalizer_probability: float | None
    content_free_inputs: list[str]
    content_free_distribution: dict[str, float]


@dataclass(frozen=True)
class NLIOptions(Options):
    """The NLI suites' options."""

    suite: Suite | None = SUITE.field()
    data: str | Path | None = DATA.field()
    predictions: str | Path | None = PREDICTIONS.field()
    mode: NLIMode = MODE.field()
    template: str | None = TEMPLATE.field()
    verbalizer: str | None = VERBALIZER.field()
    calibrate: bool = CALIBRATE.field()
    cloze: ClozeSetup | None = CLOZE.field()
    label_names: Sequence[str] | None = LABEL_NAMES.field()
    max_items: int | None = MAX_ITEMS.field()
