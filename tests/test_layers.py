"""Where things live: layers import downward only, no cycle between tacit's packages, building
prompts and reading norms load no torch, a module past 500 lines is flagged for review (a
warning: a prompt to look for a seam, not a line budget), and nothing outside a
probe's own package (and the registry) compares against a probe's name.

The import graph is read from the source (ast), every import counted: those inside functions
and those only for type checkers too, since each is a dependency a reader has to follow.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from tacit.probes import registry

PACKAGE = Path(__file__).resolve().parents[1] / "tacit"
# each part of tacit and its layer; a module may import from its own layer or below
LAYERS = {
    "core": 0,
    "norms": 1,
    "templates": 1,
    "lexicon": 1,
    "vocab": 1,
    "hub": 1,
    "pragmatics": 1,  # data
    "matching": 1,  # a model's answers parsed, normalised and matched to the norms
    "structure": 1,  # concept x feature matrices and the analyses that read them, no model
    "models": 2,
    "ranking": 3,  # between the models and the probes: ranks, scores, top k, ties
    "ask": 4,  # how a probe's blank is asked: the shared vocabulary, spans, answers in words
    "probes": 5,
    "engine": 6,
    "results": 7,
    "api": 8,
    "probe_api": 8,  # run_probe and the probe functions made from declarations
    "api_stub": 8,  # writes tacit/api.pyi from the same declarations
    "sweep": 8,
    "integrations": 8,
    "cli": 9,
    "console": 9,
    "__init__": 10,  # tacit/__init__.py: the public names, loaded lazily
}
# what a probe may take from tacit.models: the contract's plain types, nothing that runs a model
MODEL_CONTRACT = {"tacit.models.base", "tacit.models.answers"}


def modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


MODULES = modules()


def part_of(module: str) -> str:
    """The layer key of a tacit module: its first part under tacit (`tacit` itself: __init__)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def imports_of(module: str, path: Path) -> set[str]:
    """The tacit modules `module` imports, anywhere in its file."""
    tree = ast.parse(path.read_text())
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # `from tacit.x import y`: the module y where there is one, else what x defines
            names = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names
            ]
        else:
            continue
        for name in names:
            while name and name not in MODULES:
                name = name.rpartition(".")[0]
            if name and name != module and name.startswith("tacit"):
                found.add(name)
    return found


GRAPH = {module: imports_of(module, path) for module, path in MODULES.items()}


def test_every_part_of_tacit_has_a_layer():
    assert {part_of(m) for m in MODULES} <= set(LAYERS)


def test_imports_point_down():
    upward = [
        f"{module} ({part_of(module)}) imports {target} ({part_of(target)})"
        for module, targets in GRAPH.items()
        if not module.endswith("__main__")  # an entry script: nothing imports it
        for target in targets
        if LAYERS[part_of(target)] > LAYERS[part_of(module)]
    ]
    assert upward == []


def test_no_cycle_between_packages():
    """Parts of tacit (core, models, probes, ...) and, inside probes, each probe's package."""

    def group(module: str) -> str:
        parts = module.split(".")
        probe = ".".join(parts[:3])
        if parts[1:2] == ["probes"] and probe in MODULES and MODULES[probe].name == "__init__.py":
            return probe  # a probe's package
        return ".".join(parts[:2])

    edges: dict[str, set[str]] = {}
    for module, targets in GRAPH.items():
        if module.endswith("__main__"):
            continue
        for target in targets:
            if group(target) != group(module):
                edges.setdefault(group(module), set()).add(group(target))

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in edges.get(start, ()):
            if nxt == goal or (nxt not in seen and reaches(nxt, goal, seen | {nxt})):
                return True
        return False

    cycles = sorted(g for g in edges if reaches(g, g, {g}))
    assert cycles == []


def test_no_two_modules_import_each_other_in_a_loop():
    """Module by module, every import counted (inside functions and for type checkers too):
    a loop means neither module can be read, tested or moved without the other."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    loops = []

    def visit(module: str) -> None:  # Tarjan's strongly connected components
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in GRAPH[module]:
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while (member := stack.pop()) != module:
                component.append(member)
            if component:
                loops.append(sorted([module, *component]))

    for module in GRAPH:
        if module not in index:
            visit(module)
    assert loops == []


# what the Ask stage may take from tacit.models besides the contract: the families' light
# declarations (a --vocab-model's tokenizer is read through its family)
ASK_MODELS = MODEL_CONTRACT | {"tacit.models.families"}


def heavy_imports(module: str) -> list[str]:
    """`module: NAME` for each import of torch or transformers in a module, however late."""
    heavy = []
    for node in ast.walk(ast.parse(MODULES[module].read_text())):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names = [node.module or ""]
        else:
            continue
        heavy += [f"{module}: {n}" for n in names if n.split(".")[0] in ("torch", "transformers")]
    return heavy


def test_probes_import_no_torch_and_only_the_model_contract():
    """Ranking (tacit.ranking) and scoring (tacit.models) live below the probes and the Ask
    stage: neither imports torch or transformers, and from tacit.models a probe takes only the
    contract's plain types (an Ask, the families' declarations too), however late (an import
    inside a function counts)."""
    heavy, beyond = [], []
    for module in MODULES:
        if part_of(module) not in ("probes", "ask"):
            continue
        allowed = MODEL_CONTRACT if part_of(module) == "probes" else ASK_MODELS
        heavy += heavy_imports(module)
        beyond += [
            f"{module}: {target}"
            for target in GRAPH[module]
            if part_of(target) == "models" and target not in allowed
        ]
    assert heavy == []
    assert beyond == []


@pytest.mark.slow
def test_prompts_norms_and_declarations_load_no_torch():
    script = (
        "import sys\n"
        "import tacit.norms, tacit.lexicon, tacit.core.params, tacit.probes.registry\n"
        "from tacit.probes import registry\n"
        "for name in registry.names():\n"
        "    registry.get(name)\n"  # every probe's declaration
        "import tacit.probes.retrieve.prompts, tacit.probes.elicit.prompts\n"
        "import tacit.ask.options, tacit.ask.base, tacit.vocab.shared, tacit.ranking\n"
        "import tacit.ask.shots, tacit.probes.retrieve.spans, tacit.probes.elicit.plans\n"
        "import tacit.probes.items.scoring, tacit.ask.vocabulary, tacit.ask.spans\n"
        "import tacit.ask.words\n"
        "from tacit.models.families import FAMILIES, loading_options\n"
        "for name in FAMILIES.names():\n"
        "    FAMILIES.get(name)\n"  # every family's declaration: its scorers load with a model
        "loading_options()\n"
        "heavy = sorted(m for m in ('torch', 'transformers') if m in sys.modules)\n"
        "print(' '.join(heavy))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


def test_structure_reads_matrices_never_a_model():
    """tacit.structure (concept structure) takes from tacit only core and the data it reads
    (norms, matching, the lexicon), and imports no torch or transformers, however late."""
    allowed = {"core", "norms", "matching", "lexicon", "structure"}
    beyond, heavy = [], []
    for module in MODULES:
        if part_of(module) == "structure":
            beyond += [f"{module}: {t}" for t in GRAPH[module] if part_of(t) not in allowed]
            heavy += heavy_imports(module)
    assert beyond == []
    assert heavy == []


REVIEW_LINES = 500  # past this, a module is worth a look for a seam to split it along


def test_long_modules_are_flagged_for_review():
    """A warning, never a failure: `ruff format` owns the layout, and packing lines to stay
    under a count would make the code harder to read than a longer file."""
    long = {
        m: n for m, p in MODULES.items() if (n := len(p.read_text().splitlines())) > REVIEW_LINES
    }
    for module, lines in sorted(long.items()):
        warnings.warn(f"{module}: {lines} lines: look for a seam to split it along", stacklevel=1)


PROBE_NAMES = set(registry.names())  # every probe tacit registers, read from the registry


@pytest.mark.parametrize("module", sorted(MODULES))
def test_only_a_probe_compares_against_its_name(module):
    """`probe == "retrieve"` outside tacit/probes/retrieve/ (and the registry) would be a probe's
    knowledge living elsewhere."""
    parts = module.split(".")
    if parts[1:2] == ["probes"] and (len(parts) > 3 or parts[-1] == "registry"):
        return  # inside a probe's own package, or the registry
    tree = ast.parse(MODULES[module].read_text())
    compared = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Compare)
        for side in (node.left, *node.comparators)
        if isinstance(side, ast.Constant)
        and side.value in PROBE_NAMES
        or isinstance(side, ast.Tuple | ast.List | ast.Set)
        and any(isinstance(e, ast.Constant) and e.value in PROBE_NAMES for e in side.elts)
    ]
    assert compared == [], f"{module} compares against a probe's name on lines {compared}"
