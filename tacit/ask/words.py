"""Asking in words (`--by generation`): each prompt's cloze text, its blank written `___`, asked
as a question (QUESTIONS): a chat's user message for an instruct model, a plain prompt ending
`Answer:` for a base model, after its demonstrations (`--shots`); greedy by default, `--samples N`
draws seeded from `--seed`. The answers are read and matched (tacit.matching, the probe's
matcher handed in); what was sent and said is kept (messages.jsonl, answers.csv)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from tacit.ask.base import (
    Answered,
    Ask,
    Asking,
    Column,
    Finished,
    Scored,
    Work,
    with_model,
    written,
)
from tacit.ask.judge import (
    JUDGE_FEATURES,
    JUDGE_QUESTION,
    JUDGE_SAMPLING,
    JUDGED_COLUMNS,
    agreement,
    judge_answers,
)
from tacit.core.blank import MASK
from tacit.core.errors import TacitError
from tacit.core.option_names import option
from tacit.core.secrets import redact
from tacit.matching import answers_frame
from tacit.matching import record as matching_record
from tacit.models.answers import Completion, GenerationRequest, Sampling, generation_counts
from tacit.models.base import Needs
from tacit.ranking.generated import GENERATED_COLUMNS, LIST, VOTES, rank_generated
from tacit.templates.questions import DEFAULT_QUESTIONS, Questions, load_questions

if TYPE_CHECKING:
    from tqdm.auto import tqdm

    from tacit.ask.shots import Demonstrations, Shot
    from tacit.core.manifest import ModelRecord
    from tacit.matching.match import Matcher
    from tacit.models.base import RunModel, Scorer
    from tacit.templates import Template

BLANK = "___"  # the cloze's blank as a question writes it
JUDGED = "judged"  # a row's judged pairs (tacit.ask.judge), kept in the checkpoint
RAW = ["request", "completions"]  # kept in the checkpoint, written as messages and answers
# how sampled draws are seeded, for the manifest (tacit.models.answers.request_seed)
SEEDS = (
    "a request's N draws in one call (in process: generate's num_return_sequences; a server: "
    "its n), seeded by request_seed(seed, request); a server that refuses n: each draw its "
    "own request, seeded by draw_seed(seed, request, draw)"
)


def question_key(cloze: str, asks: str, k: int) -> str:
    """Which question asks this prompt: for a concept, `Which concept has fur ...?` where the
    prompt starts at its blank, else a fill-in-the-blank; one guess or K."""
    if asks != "concept":
        return asks
    key = "concept" if cloze.startswith(MASK + " ") else "concept-blank"
    return key + ("-one" if k == 1 else "")


def question(
    cloze: str,
    asks: str,
    k: int,
    questions: Questions | None = None,
    fills: Mapping[str, str] | None = None,
) -> str:
    """A prompt asked as a question (`asks`: `concept`, `answers`, `listing`, `choice` or
    `verify`, whose prompt is the statement verified;
    `questions`: their wording, tacit's own by default): a cloze text with its blank written
    ___, or, for a listing, the concept with its article; `fills`: the row's placeholders of
    its own (a choice's `options`)."""
    chosen = questions or load_questions()
    key = question_key(cloze, asks, k)
    if asks == "listing":
        return chosen.text(key, concept=cloze, k=k)
    if asks == "choice":
        return chosen.text(key, cloze=cloze.replace(MASK, BLANK), **(fills or {}))
    if asks == "verify":
        return chosen.text(key, statement=cloze)
    rest = cloze[len(MASK) :].strip().rstrip(".!?")
    return chosen.text(key, cloze=cloze.replace(MASK, BLANK), rest=rest, k=k)


def answers_asked(cloze: str, asks: str, k: int, questions: Questions | None = None) -> int | None:
    """How many answers a question asks for: `k` where its words say so (they change with
    k: `up to {k} properties`), else None (a question that sets no number, as Hansen &
    Hebart's `What are the properties of a bear?`: every answer is read)."""
    if asks == "concept":
        return k
    if asks == "choice":  # every answer read: two letters are no choice
        return None
    if asks == "verify":  # a verdict is the reply's first answer
        return 1
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
    its demonstrations (`--shots`: turns), each a question answered: a user and an assistant
    turn, or a `Question: ...\nAnswer: ...` block and a blank line; `about`: the prompt's key
    columns (GenerationRequest.about)."""
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
    (`messages`, or `prompt` for a base model) and the sampling settings; where a thinking
    model thought, `reasoning`: each draw's thinking (None where a draw gave none)."""
    said = [json.loads(text) for text in rows["completions"]]
    thought = any("reasoning" in c for draws in said for c in draws)
    lines = []
    for row, draws in zip(rows.to_dict("records"), said):
        sent = json.loads(row["request"])
        extra = {"reasoning": [c.get("reasoning") for c in draws]} if thought else {}
        lines.append(
            json.dumps(
                {**{k: row[k] for k in keys}, **sent, "sampling": sampling.record(), **extra},
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
    rows: pd.DataFrame,
    completions: Sequence[Sequence[Completion]],
    sent: Sequence[Mapping[str, Any]],
) -> pd.DataFrame:
    """The rows with what was sent (`request`: each request as the model was sent it,
    Scorer.sent) and said (`completions`, JSON), kept in the checkpoint so that answers.csv
    and messages.jsonl are made from the rows alone."""
    return rows.assign(
        request=[json.dumps(dict(r), ensure_ascii=False) for r in sent],
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
    keys = list(dict.fromkeys(question_key(cloze, asks, k) for cloze in clozes))
    seeds = {} if sampling.greedy or sampling.seed is None else {"seeds": SEEDS}
    return {
        "by": "generation",
        **(questions or load_questions()).record(keys),
        "guesses": k,
        "sampling": sampling.record(),
        **seeds,
        "matching": matching_record(),
    }


def turns(
    shots: Sequence[Shot], asks: str, k: int, questions: Questions | None = None
) -> list[tuple[str, str]]:
    """Each demonstration as a question and its answer: the question its prompt is asked as,
    and the answer in the form the question asks for: a numbered list (retrieval's one name,
    elicitation's answers up to K), the name alone for one guess, or a sentence where the
    questions say so (`It is a fruit, it has a stem and it is red.`)."""
    found = []
    for shot in shots:
        named = shot.named[:k]
        form = questions.answer_form(question_key(shot.cloze, asks, k)) if questions else "list"
        if form == "sentence":
            answer = sentence(named)
        elif asks == "concept" and k == 1:
            answer = named[0]
        else:
            answer = "\n".join(f"{n}. {a}" for n, a in enumerate(named, 1))
        found.append((question(shot.cloze, asks, k, questions), answer))
    return found


def sentence(phrases: Sequence[str]) -> str:
    """Verb phrases as one sentence about `it`, as Hansen & Hebart (2022) wrote their priming
    answers: `It has fur, it is big and it eats fish.`

    Examples:
        >>> sentence(["has fur", "is big", "eats fish"])
        'It has fur, it is big and it eats fish.'
    """
    said = [f"it {p}" for p in phrases]
    text = said[0] if len(said) == 1 else ", ".join(said[:-1]) + " and " + said[-1]
    return text[:1].upper() + text[1:] + "."


def asked_shots(
    shots: Demonstrations | None,
    rows: pd.DataFrame,
    asks: str,
    k: int,
    questions: Questions | None = None,
) -> list[list[tuple[str, str]]] | None:
    """Each prompt row's demonstrations as questions answered (turns), or None without."""
    if shots is None:
        return None
    return [turns(drawn, asks, k, questions) for drawn in shots.of_rows(rows)]


class WordsAsk(Ask):
    """Each prompt asked in words, its answers read and matched (see the module docstring)."""

    name = "words"
    form = "phrase"
    said = "asking in words"
    takes = (
        "by",
        "guesses",
        "samples",
        "temperature",
        "max_tokens",
        "questions",
        "judge",
        "judge_features",
    )
    yields = "answers"
    over = "the answers each model gave"
    recorded_as = "generation"
    recorded = ("by",)

    probability_note = "prob –: asked by generation, what a model says has no probability"

    @classmethod
    def ranked_among(cls, manifest: Mapping[str, Any]) -> str:
        sampling = manifest["generation"]["sampling"]
        how = (
            "greedy"
            if not sampling.get("temperature")
            else f"{sampling['n']} samples at temperature {sampling['temperature']}"
        )
        return f"by generation: the answers each model gave, {how} (answers.csv)"

    @classmethod
    def no_probability(cls, manifest: Mapping[str, Any], model: Mapping[str, Any]) -> str:
        return "asked by generation: what a model says has no probability"

    def __init__(self, values: Any, probe: str) -> None:
        super().__init__(values, probe)
        self.guesses = int(self.value("guesses", 5))
        samples, temperature = int(self.value("samples", 1)), float(self.value("temperature", 0))
        if samples > 1 and temperature == 0:
            raise TacitError(
                f"{option('--samples')} {samples} at {option('--temperature')} 0: greedy "
                f"decoding gives one completion {samples} times; give a temperature above 0"
            )
        self.samples, self.temperature = samples, temperature
        self.max_tokens = int(self.value("max_tokens", 64))
        self.questions = load_questions(self.value("questions", DEFAULT_QUESTIONS))
        self.sampling: Sampling | None = None
        self.judge_text: str | None = self.value("judge")
        self.judge_features = int(self.value("judge_features", JUDGE_FEATURES))
        self.judge: Callable[[], Scorer] | None = None
        self.shots: Any = None
        self.asking: Asking | None = None

    @classmethod
    def named(cls) -> str:
        return f"{cls.said} ({option('--by')} generation)"

    @classmethod
    def chosen(cls, values: Any) -> bool:
        return getattr(values, "by", "scoring") == "generation"

    def needs(self, templates: Sequence[Template], instead: str, in_place: bool = False) -> Needs:
        return Needs.of("generate")

    def prepare(self, models: Sequence[RunModel], needs: Needs, run: Any = None) -> None:
        """The sampling settings, each request seeded from the run's seed."""
        super().prepare(models, needs)
        self.sampling = Sampling(
            n=self.samples, temperature=self.temperature, max_tokens=self.max_tokens, seed=run.seed
        )
        if self.judge_text is not None:
            if run.judge is None:
                raise TacitError(f"{option('--judge')}: only a run (run_probe) has a judge")
            self.judge = run.judge(self.judge_text)

    def shown(self, prompts: pd.DataFrame, shots: Any) -> tuple[pd.DataFrame, dict[str, str]]:
        """The prompts with their demonstration concepts listed; each is asked as a question
        answered, before the prompt's own (tacit.ask.shots.turns)."""
        self.shots = shots
        if shots is None:
            return prompts, {}
        shown, _ = shots.apply(prompts, scoring=False)
        return shown, {}

    def way(self, asks: str) -> tuple[str, int]:
        """How a concept's answers rank it: (`list`, K guesses) or, with several samples,
        (`votes`, one guess each); the answers to a prompt: K guesses."""
        if asks == "concept" and self.samples > 1:
            return VOTES, 1
        return LIST, self.guesses

    def work(
        self,
        rows: pd.DataFrame,
        asking: Asking,
        columns: Sequence[Column] | Callable[[pd.DataFrame, Answered], pd.DataFrame],
        *,
        key: str | None = None,
        baseline: Callable[[str], str] | None = None,
    ) -> Work:
        assert not callable(columns), "asked in words, a prompt is a row: its columns say it"
        sampling, self.asking = self.sampling, asking
        assert sampling is not None, "the sampling is made by prepare()"
        way, k = self.way(asking.asks)

        questions = self.questions

        def score(scorer: Scorer, chunk: pd.DataFrame, bar: tqdm | bool) -> Scored:
            fills = asking.fills(chunk) if asking.fills else [{}] * len(chunk)
            texts = [
                question(prompt, asking.asks, k, questions, filled)
                for prompt, filled in zip(chunk["prompt"], fills)
            ]
            shown = asked_shots(self.shots, chunk, asking.asks, k, questions)
            keys = asking.keys(chunk)
            about = chunk[keys].to_dict("records")
            completions, requests = ask(scorer, sampling, texts, bar, shown, about)
            table = with_completions(chunk, completions, [scorer.sent(r) for r in requests])
            asked = answers_asked(chunk["prompt"].iloc[0], asking.asks, k, questions)
            matchers = _matchers(asking, table)
            answers = read_answers(table, keys, matchers, asked)
            counts = generation_counts(completions, requests)
            if self.judge is not None:
                verdicts, cost = judge_answers(
                    self.judge(), table, answers, keys, matchers, self.judge_features
                )
                table = table.assign(judged=[json.dumps(v, ensure_ascii=False) for v in verdicts])
                counts.update(cost)
            answered = Answered(table, _fields(table, answers, keys, asking, way, k))
            return Scored(with_model(scorer, written(table, answered, columns)), counts)

        return Work(rows, key or "prompt", score, needs=Needs.of("generate"), sampling=sampling)

    def finish(
        self, rows: pd.DataFrame, models: Sequence[ModelRecord], keys: Sequence[str] = ("prompt",)
    ) -> Finished:
        """answers.csv (each raw answer beside its match), messages.jsonl, and the manifest's
        record of how the models were asked and what they said."""
        asking, sampling = self.asking, self.sampling
        assert asking is not None and sampling is not None
        way, k = self.way(asking.asks)
        named = ["model", *asking.keys(rows)]
        asked = (
            answers_asked(rows["prompt"].iloc[0], asking.asks, k, self.questions)
            if len(rows)
            else None
        )
        answers = read_answers(rows, named, _matchers(asking, rows), asked)
        clozes = list(rows["prompt"].unique())
        record = generation_record(sampling, asking.asks, k, clozes, self.questions)
        if asking.asks == "concept":
            record["way"] = way
        record["answers_by_status"] = {
            str(s): int(n) for s, n in answers["status"].value_counts().sort_index().items()
        }
        thinking = thinking_record(rows)
        if thinking:
            record["thinking"] = thinking
        if asking.asks == "concept":
            record["prompts_missed"] = int(rows["rank"].isna().sum())
        else:
            record["answers_unmatched"] = int(
                ((answers["status"] == "ok") & (answers["matched"] == "")).sum()
            )
        frames = {"answers": answers}
        if JUDGED in rows:
            judged = judged_frame(rows, named)
            frames[JUDGED] = judged
            record["judge"] = {
                "model": redact(str(self.judge_text)),
                "features": self.judge_features,
                "question": JUDGE_QUESTION,
                "sampling": JUDGE_SAMPLING.record(),
                **agreement(judged),
            }
        return Finished(
            rows.drop(columns=[*RAW, *([JUDGED] if JUDGED in rows else [])]),
            frames,
            {"messages.jsonl": messages_file(rows, named, sampling)},
            {"generation": record},
            self.options_record(),
        )


def judged_frame(rows: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """judged.csv: each pair the judge was asked (tacit.ask.judge), after the prompt's `keys`."""
    found = [
        {**{k: row[k] for k in keys if k != "concept"}, **pair}
        for row in rows.to_dict("records")
        for pair in json.loads(row[JUDGED])
    ]
    columns = [k for k in keys if k != "concept"] + ["draw", *JUDGED_COLUMNS]
    return pd.DataFrame.from_records(found, columns=columns)


def thinking_record(rows: pd.DataFrame) -> dict[str, int]:
    """What a thinking model's completions hold (none: an empty record): the completions
    that thought, their reasoning tokens where the model says, and those that spent their
    whole max_tokens thinking (no answer)."""
    said = [Completion.from_record(c) for text in rows["completions"] for c in json.loads(text)]
    thought = [c for c in said if c.reasoning is not None]
    if not thought:
        return {}
    return {
        "completions_thought": len(thought),
        "reasoning_tokens": sum(c.reasoning_tokens or 0 for c in thought),
        "thought_to_limit": sum(c.thought_to_limit for c in thought),
    }


def _matchers(asking: Asking, rows: pd.DataFrame) -> Matcher | list[Matcher]:
    assert asking.matchers is not None, "asking in words needs what its answers can name"
    found: Matcher | list[Matcher] = asking.matchers(rows)
    return found


# the fields a row's first answer ranked among the model's answers gives, by its column there
RANKED = {
    "rank": "rank",
    "prob": "target_prob",
    "share": "target_prob_shared",
    "n_candidates": "n_candidates",
    "answer": "target_answer",
    "rule": "target_rule",
    "listed": "top5",
    **{c: c for c in GENERATED_COLUMNS[8:]},  # status and the draws' counts
}


def _fields(
    table: pd.DataFrame,
    answers: pd.DataFrame,
    keys: list[str],
    asking: Asking,
    way: str,
    k: int,
) -> dict[str, Callable[[], Any]]:
    """What the answers tell of each row: the answers frame, and the row's first answer
    ranked among them (tacit.ranking.generated: its rank, the answer that matched it and by
    which rule, the top five, the draws' statuses counted; no probability, no candidates)."""
    made: dict[str, pd.DataFrame] = {}

    def ranked() -> pd.DataFrame:
        if not made:
            target = [names[0] for names in asking.answers(table)]
            made["ranked"] = rank_generated(
                table.assign(_target=target),
                answers,
                keys,
                way=way,
                k=k if way == LIST else None,
                target="_target",
            )
        return made["ranked"]

    def field(column: str) -> Callable[[], Any]:
        return lambda: ranked()[column].to_numpy()

    fields: dict[str, Callable[[], Any]] = {"answers": lambda: answers}
    if asking.asks == "concept":  # a concept asked for: its rank among the answers
        fields.update({name: field(column) for name, column in RANKED.items()})
    return fields
