"""Asking a model in words (`--by generation`, issue 46): the options every probe that asks
takes, the question a cloze prompt becomes, the requests sent, the messages kept in
messages.jsonl, and the answers read back (tacit.matching).

A probe by generation asks about exactly what its scoring run scores: each prompt's cloze text
("A <mask> has fur, is big, and has claws.") with its blank written `___`, wrapped in a
question (tacit.templates.questions). An instruct model (a chat template, a chat server) gets
it as a chat's user message; a base model as a plain prompt ending `Answer:`. Greedy by
default; `--samples N` draws N completions per prompt, each request seeded from `--seed`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, get_args

from tacit.core.blank import MASK
from tacit.core.errors import TacitError
from tacit.core.option_names import option
from tacit.core.params import Param

if TYPE_CHECKING:
    import pandas as pd
    from tqdm.auto import tqdm

    from tacit.matching.match import Matcher
    from tacit.models.answers import Completion, GenerationRequest, Sampling
    from tacit.models.base import Scorer
    from tacit.templates.questions import Questions

By = Literal["scoring", "generation"]
BY_WAYS: tuple[By, ...] = get_args(By)
BLANK = "___"  # the cloze's blank as a question writes it

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
GENERATION_PARAMS = (BY, GUESSES, SAMPLES, TEMPERATURE, MAX_TOKENS)

# what a probe asks for (tacit.templates.questions: `concept`, retrieval's; `answers`,
# elicitation's of one relation; `listing`, a free listing of every property) in the words of
# a questions file (`--questions`; tacit's own by default)


def check_generation_options(values: Any, probe: str) -> None:
    """Refuse generation options without --by generation, and samples that would all be one
    greedy completion; one line each, naming the option."""
    if values.by != "generation":
        for param in GENERATION_PARAMS[1:]:
            if getattr(values, param.name) != param.default:
                raise TacitError(
                    f"{probe}: {option(param.flag)} is an option of {option('--by')} generation"
                )
        return
    if values.samples > 1 and values.temperature == 0:
        raise TacitError(
            f"{option('--samples')} {values.samples} at {option('--temperature')} 0: greedy "
            f"decoding gives one completion {values.samples} times; give a temperature above 0"
        )


def refuse_scoring_options(values: Any, probe: str, params: Sequence[Param]) -> None:
    """--by generation reads what a model says: the options that set what its scores rank
    among (`params`) have no place; one line, naming the option."""
    for param in params:
        if getattr(values, param.name) != param.default:
            raise TacitError(
                f"{probe}: {option(param.flag)} sets what a model's scores rank among; "
                f"{option('--by')} generation reads what the model says"
            )


def sampling_of(values: Any, seed: int) -> Sampling:
    """The sampling settings of a run (recorded in the manifest)."""
    from tacit.models.answers import Sampling

    return Sampling(
        n=values.samples,
        temperature=values.temperature,
        max_tokens=values.max_tokens,
        seed=seed,
    )


def question_key(cloze: str, asks: str, k: int) -> str:
    """Which question asks this prompt: for a concept, `Which concept has fur ...?` where the
    prompt starts at its blank, else a fill-in-the-blank; one guess or K."""
    if asks != "concept":
        return asks
    key = "concept" if cloze.startswith(MASK + " ") else "concept-blank"
    return key + ("-one" if k == 1 else "")


def question(cloze: str, asks: str, k: int, questions: Questions | None = None) -> str:
    """A prompt asked as a question (`asks`: `concept`, `answers` or `listing`; `questions`:
    their wording, tacit's own by default): a cloze text with its blank written ___, or, for
    a listing, the concept with its article."""
    from tacit.templates.questions import load_questions

    chosen = questions or load_questions()
    key = question_key(cloze, asks, k)
    if asks == "listing":
        return chosen.text(key, concept=cloze, k=k)
    rest = cloze[len(MASK) :].strip().rstrip(".!?")
    return chosen.text(key, cloze=cloze.replace(MASK, BLANK), rest=rest, k=k)


def answers_asked(cloze: str, asks: str, k: int, questions: Questions | None = None) -> int | None:
    """How many answers a question asks for: `k` where its words say so (they change with
    k: `up to {k} properties`), else None (a question that sets no number, as Hansen &
    Hebart's `What are the properties of a bear?`: every answer is read)."""
    return (
        k
        if question(cloze, asks, k, questions) != question(cloze, asks, k + 1, questions)
        else None
    )


def request_for(
    text: str,
    chats: bool,
    shown: Sequence[tuple[str, str]] = (),
    about: Mapping[str, Any] | None = None,
) -> GenerationRequest:
    """The question as a chat's user message (an instruct model) or a plain prompt, after
    its demonstrations (`--shots`: tacit.probes.shots.turns), each a question answered: a
    user and an assistant turn, or a `Question: ...\nAnswer: ...` block and a blank line;
    `about`: the prompt's key columns (GenerationRequest.about)."""
    from tacit.models.answers import GenerationRequest

    if chats:
        messages = [
            {"role": role, "content": content}
            for asked, answer in shown
            for role, content in (("user", asked), ("assistant", answer))
        ]
        return GenerationRequest.chat([*messages, {"role": "user", "content": text}], about)
    blocks = "".join(f"Question: {asked}\nAnswer: {answer}\n\n" for asked, answer in shown)
    return GenerationRequest.text(f"{blocks}Question: {text}\nAnswer:", about)


def messages_file(rows: pd.DataFrame, keys: Sequence[str], sampling: Sampling) -> str:
    """messages.jsonl: one object per prompt and model, its key columns, what was sent
    (`messages`, or `prompt` for a base model) and the sampling settings."""
    lines = []
    for row in rows.to_dict("records"):
        sent = json.loads(row["request"])
        lines.append(
            json.dumps(
                {**{k: row[k] for k in keys}, **sent, "sampling": sampling.record()},
                ensure_ascii=False,
                default=str,
            )
        )
    return "\n".join(lines) + "\n"


def ask(
    scorer: Scorer,
    sampling: Sampling,
    texts: Sequence[str],
    progress: bool | tqdm,
    shown: Sequence[Sequence[tuple[str, str]]] | None = None,
    about: Sequence[Mapping[str, Any]] | None = None,
) -> tuple[list[list[Completion]], list[GenerationRequest]]:
    """Each question sent to the model (after its demonstrations, `shown`, where there are):
    its completions, and the requests (`about`: each prompt's key columns)."""
    chats = scorer.chats()
    shown = shown or [()] * len(texts)
    keys = about or [{}] * len(texts)
    requests = [
        request_for(text, chats, demos, key) for text, demos, key in zip(texts, shown, keys)
    ]
    return scorer.generate(requests, sampling, progress=progress), requests


def with_completions(
    rows: pd.DataFrame, completions: Sequence[Sequence[Completion]], requests: Sequence[Any]
) -> pd.DataFrame:
    """The rows with what was sent (`request`) and said (`completions`, JSON), kept in the
    checkpoint so that answers.csv and messages.jsonl are made from the rows alone."""
    return rows.assign(
        request=[json.dumps(r.record(), ensure_ascii=False) for r in requests],
        completions=[
            json.dumps([c.record() for c in said], ensure_ascii=False) for said in completions
        ],
    )


def read_answers(
    rows: pd.DataFrame,
    keys: Sequence[str],
    matchers: Matcher | Sequence[Matcher],
    at_most: int | None = None,
) -> pd.DataFrame:
    """The answers frame (tacit.matching.answers_frame) of rows that hold their completions,
    at most `at_most` answers of each read (what was asked for: the rest are counted)."""
    from tacit.matching import answers_frame
    from tacit.models.answers import Completion

    said = [[Completion.from_record(c) for c in json.loads(text)] for text in rows["completions"]]
    return answers_frame(rows, list(keys), said, matchers, at_most)


def generation_record(
    sampling: Sampling,
    asks: str,
    k: int,
    clozes: Sequence[str],
    questions: Questions | None = None,
) -> dict[str, Any]:
    """The manifest's record of how the models were asked: the questions used and where
    their wording came from, the answers asked for, the sampling, how answers were read."""
    from tacit.matching import record
    from tacit.templates.questions import load_questions

    keys = list(dict.fromkeys(question_key(cloze, asks, k) for cloze in clozes))
    return {
        "by": "generation",
        **(questions or load_questions()).record(keys),
        "guesses": k,
        "sampling": sampling.record(),
        "matching": record(),
    }
