"""PragmEval's options, declared once (tacit.core.params)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

from tacit.core.choices import POOLINGS
from tacit.core.manifest import Manifest, ModelRecord
from tacit.core.params import Options, Param

if TYPE_CHECKING:
    from tacit.core.choices import Pooling

PragmevalMode = Literal["linear", "cloze"]
PRAGMEVAL_MODES: tuple[PragmevalMode, ...] = get_args(PragmevalMode)

DATA = Param(
    "data",
    None,
    kind="path",
    leading=True,
    help="The PragmEval folder: `<Task>/{train,dev,test}.tsv`.",
)
TASKS = Param(
    "tasks",
    None,
    kind="list",
    flags=("--task", "-t"),
    help="A task (Persuasiveness: all its configurations) or one configuration "
    "(EmoBank-Valence). Repeatable; default all.",
)
MODE = Param(
    "mode",
    "linear",
    choices=PRAGMEVAL_MODES,
    help="linear (probe frozen features) or cloze (zero-shot).",
)
POOLING = Param(
    "pooling",
    "mask",
    choices=POOLINGS,
    help="Linear mode: the hidden state at `<mask>` (masked LMs), at the last token (causal "
    "LMs), or the mean.",
)
TEMPLATE = Param(
    "template",
    None,
    help="Linear: the features template (default `{sentence1} <mask> {sentence2}` or "
    "`{sentence} <mask>`). Cloze: the template, instead of each task's default.",
)
VERBALIZER = Param("verbalizer", None, help="Cloze: label=word,... instead of each task's default.")
MAX_TRAIN = Param(
    "max_train",
    None,
    kind="int",
    minimum=2,
    help="Linear: use a seeded sample of this many train rows.",
)
CACHE_DIR = Param(
    "cache_dir",
    None,
    kind="path",
    help="Where features are cached (default $TACIT_CACHE_DIR, else ~/.cache/tacit).",
)
REFERENCE = Param(
    "reference",
    None,
    kind="path",
    help="CSV `task,bert,human` (percent) printed beside ours, e.g. the paper's table.",
)


class PragmevalManifest(Manifest, total=False):
    """What a pragmeval run records beyond every run's keys."""

    data: dict[str, Any]  # the suite's path and its files (sha256, rows)
    mode: str  # linear or cloze
    pooling: str | None
    template: str | None
    max_train: int | None
    c_grid: list[float] | None
    skipped_configs: dict[str, str]
    reference: str | None
    paper_bert_average: float


class PragmevalModelRecord(ModelRecord, total=False):
    """What a pragmeval run records of each model beyond the engine's and its family's keys."""

    feature_cache: dict[str, Any] | None  # linear: the features' cache and its hits
    texts_cut_to_fit: int
    configs: dict[str, Any]  # each configuration's setting and record


@dataclass(frozen=True)
class PragmevalOptions(Options):
    """PragmEval's options."""

    data: str | Path | None = DATA.field()
    tasks: Sequence[str] | None = TASKS.field()
    mode: PragmevalMode = MODE.field()
    pooling: Pooling = POOLING.field()
    template: str | None = TEMPLATE.field()
    verbalizer: str | None = VERBALIZER.field()
    max_train: int | None = MAX_TRAIN.field()
    cache_dir: str | Path | None = CACHE_DIR.field()
    reference: str | Path | None = REFERENCE.field()
