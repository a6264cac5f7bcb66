"""The options of the Asks, declared once (tacit.core.params) and light: a probe declares its
fields with them before anything heavy loads; the Asks themselves load when a run plans."""

from __future__ import annotations

from typing import Literal, get_args

from tacit.core.choices import NORMALIZATIONS, SPAN_SCORINGS
from tacit.core.params import Param

By = Literal["scoring", "generation"]
BY_WAYS: tuple[By, ...] = get_args(By)
BY = Param(
    "by",
    "scoring",
    choices=BY_WAYS,
    help="How each model is probed: `scoring` reads its probabilities of the candidates at the "
    "blank (the paper's); `generation` asks it the same prompt in words and reads what it "
    "answers (docs/probes/generation.md).",
)
GUESSES = Param(
    "guesses",
    5,
    kind="int",
    minimum=1,
    help="With --by generation: how many answers each prompt asks for, most likely first.",
)
SAMPLES = Param(
    "samples",
    1,
    kind="int",
    minimum=1,
    help="With --by generation: completions per prompt (retrieval: above 1, one guess each, "
    "ranked by how many gave it; elicitation: N participants, each listing up to --guesses "
    "answers). Above 1 needs --temperature above 0.",
)
TEMPERATURE = Param(
    "temperature",
    0.0,
    kind="float",
    minimum=0,
    help="With --by generation: sampling temperature; 0, the default, is greedy (reproducible).",
)
MAX_TOKENS = Param(
    "max_tokens",
    64,
    kind="int",
    minimum=1,
    help="With --by generation: the longest completion, in tokens; one cut there is counted "
    "as truncated and its last answer left out.",
)
JUDGE = Param(
    "judge",
    None,
    help="With --by generation (elicitation): a MODEL (any that generates, as --model names "
    "one) asked whether each answer means each of up to --judge-features of its concept's "
    "features, beside the lexical matcher (the default, still the one scored): its verdicts "
    "go to judged.csv, its requests to the cost, and how often the two agree to the manifest "
    "(docs/probes/generation.md).",
)
JUDGE_FEATURES = Param(
    "judge_features",
    5,
    kind="int",
    minimum=1,
    help="With --judge: the features each answer is asked against, at most (the ones the "
    "lexical matcher matched first, then the others in the norms' order): requests per answer.",
)
SPAN_SCORING = Param(
    "span_scoring",
    "l2r",
    choices=SPAN_SCORINGS,
    help="How a candidate span of several tokens is scored by a masked LM: `l2r`, the exact "
    "chain rule left to right (one mask per token still to come), or `independent` (all masked "
    "at once, mLAMA's).",
)
NORMALIZE = Param(
    "normalize",
    "sum",
    choices=NORMALIZATIONS,
    help="What candidate spans are ranked by: their log-probability (`sum`), per token "
    "(`mean`), or against the prompt without its properties (`pmi`).",
)
TOKEN_SCORES = Param(
    "token_scores",
    False,
    kind="bool",
    help="Keep the per-token log-probabilities of the candidates each row lists (an item's "
    "every candidate; a prompt's target or gold answers and its top 5) in tokens.csv: one row "
    "per token, in nats and bits, as `probe surprisal` writes them. Scored in the same pass.",
)
SUFFIX_TOP = Param(
    "suffix_top",
    0,
    kind="int",
    minimum=0,
    help="A causal LM's vocabulary mode on a CPU: score the text after the blank only for the "
    "golds and the K words most likely before it, not for every word a gold's rank could "
    "meet. A rank (or top 5) that a word left unscored could change is an upper bound (the "
    "best of those scored), counted (ranks_bounded) and flagged approximate. 0: exact "
    "(docs/probes/causal.md).",
)
SHOTS = Param(
    "shots",
    0,
    kind="int",
    minimum=0,
    help="Few-shot demonstrations: before each prompt, this many prompts of the same kind about "
    "other concepts (never the concept or one of its category), filled with their answers, "
    "drawn with --seed; by scoring as text before the prompt, by generation as questions "
    "answered (docs/probes/causal.md).",
)
