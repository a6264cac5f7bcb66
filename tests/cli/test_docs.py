"""The documentation cannot drift from the code: the command-line reference is the one typer
generates, and every `probe` command and Python block of the docs runs here, on the tiny test
models and test data substituted for the real model names and data paths the docs use.

A block that needs a real model or the internet says so with a marker on the line before it,
`<!-- docs-test: skip (why) -->`; its commands are still checked to name real options.
"""

from __future__ import annotations

import glob
import re
import shlex
from dataclasses import dataclass

import pytest
from support import (
    REPO,
    TINY_MCRAE,
    save_tiny_gpt2,
    toy_gpt2_tokenizer,
    with_chat_template,
    write_mcrae,
    write_mlama,
    write_norms,
)
from support_nli import (
    PRAGMEVAL_WORDS,
    save_nli_classifier,
    save_nli_masked_lm,
    write_impli,
    write_imppres,
    write_jsonl,
    write_nope,
    write_pragmeval,
)
from typer.testing import CliRunner

from tacit.cli import app

DOCS = REPO / "docs"
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)
SKIP = re.compile(r"<!-- docs-test: skip \((.+?)\) -->\s*$")


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    language: str
    text: str
    skip: str | None


def doc_blocks(language: str) -> list[Block]:
    """Every fenced block of that language in docs/ and the README, in page order."""
    blocks = []
    pages = [p for p in sorted(DOCS.rglob("*.md")) if p.parent.name != "reference"]  # generated
    for path in [REPO / "README.md", *pages]:
        text = path.read_text()
        for match in FENCE.finditer(text):
            if match.group(1) != language:
                continue
            before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
            skip = SKIP.search(before)
            line = text[: match.start()].count("\n") + 1
            blocks.append(
                Block(
                    str(path.relative_to(REPO)),
                    line,
                    language,
                    match.group(2),
                    skip.group(1) if skip else None,
                )
            )
    return blocks


@pytest.fixture(scope="module")
def world(tmp_path_factory, tiny_bert, tiny_roberta):
    """The real names the docs use -> the test models and data that stand in for them."""
    root = tmp_path_factory.mktemp("docs-world")
    norms = write_norms(root / "norms.dat")
    mlm = save_nli_masked_lm(root / "pragmatics-mlm", words=PRAGMEVAL_WORDS)
    classifier = save_nli_classifier(
        root / "nli-classifier", {0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}
    )
    nope = write_nope(root / "nope")
    predictions = root / "model_results" / "RoBERTa-large" / "mnli-snli-anli-fever" / "seed1"
    from tacit.pragmatics import SUITES

    uids = SUITES["nope"].load(nope)["uid"]
    write_jsonl(predictions / "nope_main.jsonl", [{"uid": u, "logits": [1, 0, 0]} for u in uids])
    reference = root / "paper_table.csv"
    reference.write_text("task,bert,human\nSarcasm,70.5,\nPDTB,51.2,\n")
    comps = root / "comps.jsonl"  # docs/probes/items.md's examples
    comps.write_text(
        '{"group": "has fur", "text": "[Y] has fur.", "candidates": ["A bear", "A table"], '
        '"answer": "A bear"}\n{"text": "[Y] has stripes.", "candidates": ["A zebra", "An apple"], '
        '"answer": "A zebra"}\n'
    )
    bear = root / "bear.csv"
    bear.write_text(
        "text,candidates,answer\nA knife is made of [Y].,metal | fur,metal\n"
        "A dog has [Y].,fur | a blade | a tail,fur | a tail\n"
    )
    garden = root / "garden-paths.txt"  # docs/probes/surprisal.md's examples
    garden.write_text("The old man the boats.\nThe horse raced past the barn fell.\n")
    released = root / "raw_answers.csv"  # Hansen & Hebart's layout (../shared/data/llm-norms)
    released.write_text(
        'bear,"It has fur, it is big and it eats fish.",bear,22\n'
        'cat,"It is a pet, it has a tail or "brush", it has claws",cat,22\n'
    )
    lab = root / "lab-norms.csv"
    lab.write_text("concept,feature,pf\nbear,has fur,3\nbear,is big,2\ncat,has a tail,4\n")
    concepts = root / "concepts.dat"  # docs/probes/structure.md's: CSLB's concept table
    concepts.write_text(
        "Num\tCategory\tConcept\tIn McRae\tMcRae label\n1\tanimal\tbear\tyes\tbear\n"
        "2\tanimal\tcat\tyes\tcat\n3\tanimal\tdog\tno\t\n4\ttool\tknife\tyes\tknife\n"
        "5\tfood\tapple\tno\t\n"
    )
    data = {
        "path/to/concepts.dat": str(concepts),
        "path/to/norms.dat": str(norms),
        "norms.dat": str(norms),
        "path/to/CONCS_FEATS_concstats_brm.xlsx": str(write_mcrae(root / "mcrae.xlsx", TINY_MCRAE)),
        "path/to/lab-norms.csv": str(lab),
        "path/to/nope": str(nope),
        "path/to/imppres": str(write_imppres(root / "imppres")),
        "path/to/impli": str(write_impli(root / "impli")),
        "path/to/model_results": str(root / "model_results"),
        "path/to/pragmeval": str(write_pragmeval(root / "pragmeval")),
        "paper_table.csv": str(reference),
        "comps.jsonl": str(comps),
        "bear.csv": str(bear),
        "path/to/mlama1.1": str(write_mlama(root / "mlama1.1")),
        "garden-paths.txt": str(garden),
        "../shared/data/llm-norms/chatgpt-gpt3.5-turbo/raw_answers.csv": str(released),
    }
    gpt2 = str(save_tiny_gpt2(root / "gpt2", toy_gpt2_tokenizer(root / "gpt2")))
    # an instruct model: a chat template, and room for a question and its answer
    tokens = toy_gpt2_tokenizer(root / "gpt2-long")
    long = str(save_tiny_gpt2(root / "gpt2-long", tokens, n_positions=512))
    chat = with_chat_template(long, root / "chat")
    models = {
        "HuggingFaceTB/SmolLM2-135M-Instruct": chat,
        "roberta-large": tiny_roberta,
        "roberta-base": tiny_roberta,
        "bert-base-cased": tiny_bert,
        "bert-base-multilingual-cased": tiny_bert,
        "gpt2": gpt2,
    }
    pragmatics = {
        "roberta-large-mnli": classifier,
        "roberta-large": mlm,
        "roberta-base": mlm,
        "bert-base-uncased": mlm,
        "gpt2": gpt2,
    }
    return {"data": data, "models": models, "pragmatics": pragmatics}


def substituted(text: str, world: dict) -> str:
    """The text with the test's stand-ins for real model names and data paths (the pragmatics
    suites get a tiny model that knows their verbalizer words)."""
    pragmatics = re.search(r"probe (nli|pragmeval)|tacit\.(nli|pragmeval)\(", text)
    models = world["pragmatics"] if pragmatics else world["models"]
    for real, stand_in in sorted({**world["data"], **models}.items(), key=lambda kv: -len(kv[0])):
        text = re.sub(rf"(?<![\w./-]){re.escape(real)}(?![\w-])", stand_in, text)
    return text


def probe_lines(block: Block) -> list[str]:
    """The `$ probe ...` commands of a console block (installation lines are run by CI)."""
    return [
        line[2:].split("  #")[0].strip()
        for line in block.text.splitlines()
        if line.startswith("$ probe ")
    ]


def _options_exist(args: list[str]) -> None:
    """Every --option of the command line is one the command takes."""
    import typer

    command = typer.main.get_command(app)
    words = args[1:]
    while words and hasattr(command, "commands") and words[0] in command.commands:
        command = command.commands[words.pop(0)]
    known = {opt for param in command.params for opt in param.opts}
    unknown = [w.split("=")[0] for w in words if w.startswith("-") and w.split("=")[0] not in known]
    assert not unknown, f"{' '.join(args)}: no such option {unknown}"


CONSOLE = doc_blocks("console")
PYTHON = doc_blocks("python")


@pytest.mark.slow
@pytest.mark.parametrize("page", sorted({b.page for b in CONSOLE if probe_lines(b)}))
def test_documented_commands_run(page, world, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # default run directories land here
    monkeypatch.setenv("TACIT_NORMS", world["data"]["norms.dat"])  # as if installed
    for block in [b for b in CONSOLE if b.page == page]:
        for command in probe_lines(block):
            args = [
                expanded
                for arg in shlex.split(substituted(command, world))
                for expanded in (sorted(glob.glob(arg)) if "*" in arg else [arg]) or [arg]
            ]
            _options_exist(args)
            if block.skip:
                continue
            result = CliRunner().invoke(app, args[1:])
            assert result.exit_code == 0, f"{page}:{block.line}: {command}\n{result.output}"


@pytest.mark.slow
@pytest.mark.parametrize(
    "block", [b for b in PYTHON if not b.skip], ids=lambda b: f"{b.page}:{b.line}"
)
def test_documented_python_runs(block, world, tmp_path, monkeypatch):
    """Each block as a reader runs it; what a block registers (docs/extending.md's probe,
    family and norms format) is gone after it, as it would be in the reader's next session:
    a format registered here made later tests' unknown formats known."""
    from tacit.models.families import FAMILIES
    from tacit.norms.formats import NORM_FORMATS
    from tacit.probes.registry import PROBES

    for registry in (FAMILIES, NORM_FORMATS, PROBES):
        monkeypatch.setattr(registry, "_added", dict(registry._added))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TACIT_NORMS", world["data"]["norms.dat"])
    code = substituted(block.text, world)
    exec(compile(code, f"{block.page}:{block.line}", "exec"), {})  # noqa: S102


@pytest.mark.slow
def test_the_sweep_examples_make_cells_that_compare(world, tmp_path, monkeypatch):
    """docs/scaling.md's sweeps gave each model its own vocabulary, so `probe leaderboard`
    showed 4 groups of 1: the file shares one vocabulary among its models (`vocab_models`),
    and the Python example's cells rank every model together in each group."""
    import tomllib

    import tacit

    (toml,) = [b for b in doc_blocks("toml") if b.page == "docs/scaling.md" and "[run]" in b.text]
    grid = tomllib.loads(toml.text)
    assert grid["run"]["vocab_models"] == grid["models"]
    (python,) = [b for b in PYTHON if b.page == "docs/scaling.md" and "run_sweep" in b.text]
    monkeypatch.chdir(tmp_path)
    exec(compile(substituted(python.text, world), python.page, "exec"), {})  # noqa: S102
    board = tacit.leaderboard("results/grid")
    models = board["model"].nunique()
    assert models == 2 and (board.groupby("group")["model"].nunique() == models).all()


def test_the_cli_reference_is_current(tmp_path):
    from typer.cli import app as typer_app

    out = tmp_path / "cli.md"
    result = CliRunner().invoke(
        typer_app, ["tacit.cli", "utils", "docs", "--name", "probe", "--output", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert (DOCS / "reference" / "cli.md").read_text() == out.read_text(), (
        "docs/reference/cli.md is stale: typer tacit.cli utils docs --name probe "
        "--output docs/reference/cli.md"
    )


def test_every_page_is_in_the_navigation():
    nav = (REPO / "mkdocs.yml").read_text()
    pages = [p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")]
    assert [p for p in pages if p not in nav] == []


def test_the_readme_fits_on_two_screens():
    assert len((REPO / "README.md").read_text().splitlines()) <= 150


def test_skip_markers_say_why():
    for block in CONSOLE + PYTHON:
        if block.skip is not None:
            assert len(block.skip) > 10, f"{block.page}:{block.line}: say why it is skipped"
