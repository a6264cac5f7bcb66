"""RunOptions crosses the api -> engine -> models seams only: every other function that takes
it reads a field of it. A function that takes the bag to pass it on, or not at all, is listed
here as a seam or fails (hand it the fields it reads instead).

Read from the source (ast): a parameter annotated RunOptions whose name the body never reads
an attribute of."""

from __future__ import annotations

import ast
from pathlib import Path

import tacit

PACKAGE = Path(tacit.__file__).parent
# function -> why it takes the whole bag without reading a field of it
SEAMS = {
    "tacit/probe_api.py:run_probe": "the API seam: checks it, hands it to the engine and models",
    "tacit/models/families.py:load": "the models seam: Family.load, declared (no body)",
    "tacit/models/huggingface.py:from_options": "Family.load's scorer classes, declared",
    "tacit/models/huggingface.py:load": "the models seam: the in-process family's Family.load",
    "tacit/models/resolved.py:load_scorer": "the models seam: one model loaded outside a run",
    "tacit/core/options.py:build": "RunOptions' own constructor (defaults, then overrides)",
}


def unread() -> set[str]:
    """Each function (`path:name`) with a RunOptions parameter it reads no field of."""
    found = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text()
        if "RunOptions" not in text:
            continue
        for node in ast.walk(ast.parse(text)):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            arguments = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
            for argument in arguments:
                annotation = ast.unparse(argument.annotation) if argument.annotation else ""
                if "RunOptions" not in annotation or "type[" in annotation:
                    continue
                reads = any(
                    isinstance(n, ast.Attribute)
                    and isinstance(n.value, ast.Name)
                    and n.value.id == argument.arg
                    for n in ast.walk(node)
                )
                if not reads:
                    found.add(f"{path.relative_to(PACKAGE.parent).as_posix()}:{node.name}")
    return found


def test_run_options_stop_at_the_seams():
    found = unread()
    assert found - set(SEAMS) == set(), "hand these the RunOptions fields they read instead"
    assert set(SEAMS) - found == set(), "no longer a seam: take it out of SEAMS"
