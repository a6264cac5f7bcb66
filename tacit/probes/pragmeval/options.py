"""PragmEval's options, declared once (tacit.core.params)."""

from __future__ import annotations

from typing import Literal, get_args

from tacit.core.choices import POOLINGS
from tacit.core.params import Param

PragmevalMode = Literal["linear", "cloze"]
PRAGMEVAL_MODES: tuple[PragmevalMode, ...] = get_args(PragmevalMode)

DATA = Param("data", None, kind="path", help="The PragmEval folder: `<Task>/{train,dev,test}.tsv`.")
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
PARAMS = (DATA, TASKS, MODE, POOLING, TEMPLATE, VERBALIZER, MAX_TRAIN, CACHE_DIR, REFERENCE)
