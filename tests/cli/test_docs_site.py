"""The documentation site builds without a warning, and CI's build is one that can fail.

The API reference is rendered from the docstrings by mkdocstrings: griffe parses them (Google
style) and each part that is Markdown goes through the site's Markdown extensions and autorefs.
A doctest written as prose there renders as a paragraph, and its output line can read as a
cross-reference (`[f(v) for v in x]` then `['a', 'b']` on the next line is Markdown's
`[text][id]`): the strict build fails on it. So every docstring is checked here the way the
site reads it, and `.ci/docs`, the strict build CI runs, is shown failing on a planted warning.
griffe reads the package from its source, with mkdocs.yml's extensions (the functions tacit.api
makes at import are inspected: docs/made_at_import.py), so the site builds in an environment
that has the docs toolchain and not tacit's runtime, as `.ci/docs-newest` builds it.
"""

from __future__ import annotations

import copy
import inspect
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from support import REPO

from tacit.core.manifest import DISTRIBUTION

griffe = pytest.importorskip("griffe", reason="the docs extra is not installed")
markdown = pytest.importorskip("markdown", reason="the docs extra is not installed")
autorefs = pytest.importorskip("mkdocs_autorefs", reason="the docs extra is not installed")

CONFIG = yaml.safe_load((REPO / "mkdocs.yml").read_text())
(MKDOCSTRINGS,) = [p["mkdocstrings"] for p in CONFIG["plugins"] if isinstance(p, dict)]
OPTIONS = MKDOCSTRINGS["handlers"]["python"]["options"]
STYLE = OPTIONS["docstring_style"]
EXTENSIONS = [str(REPO / path) for path in OPTIONS["extensions"]]  # griffe's, by file path
FENCED = re.compile(r"^\s*```.*?^\s*```", re.S | re.M)

PROSE = '''"""A module whose example is prose."""


def format_number(value: float) -> str:
    """A number as printed.

    >>> [format_number(v) for v in (0.05719, 0.5)]
    ['0.0572', '0.500']
    """
    return f"{value:.3g}"
'''
EXAMPLES = PROSE.replace("    >>>", "    Examples:\n        >>>").replace(
    "    ['0.0572'", "        ['0.0572'"
)


def site_load(package: str, search_path: Path):
    """The package as the site reads it: statically, with mkdocs.yml's griffe extensions."""
    extensions = griffe.load_extensions(*EXTENSIONS)
    return griffe.load(
        package, search_paths=[str(search_path)], docstring_parser=STYLE, extensions=extensions
    )


def site_markdown() -> markdown.Markdown:
    """Markdown as the site converts a docstring: mkdocs.yml's extensions, and autorefs, which
    turns `[text][id]` and `[id][]` into references the build must resolve."""
    names, configs = [], {}
    for extension in CONFIG["markdown_extensions"]:
        name, config = (
            next(iter(extension.items())) if isinstance(extension, dict) else (extension, {})
        )
        names.append(name)
        configs[name] = config or {}
    return markdown.Markdown(
        extensions=[*names, autorefs.AutorefsExtension()], extension_configs=configs
    )


def markdown_parts(section) -> list[str]:
    """The Markdown of a parsed docstring section: its text, its items' descriptions, an
    admonition's body; an Examples section's code is not Markdown, its text between is."""
    value = section.value
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        parts = []
        for item in value:
            if isinstance(item, tuple):
                kind, text = item
                if kind is griffe.DocstringSectionKind.text:
                    parts.append(text)
            elif getattr(item, "description", None):
                parts.append(item.description)
        return parts
    description = getattr(value, "description", None)
    return [description] if description else []


def docstring_problems(package: str, search_path: Path) -> tuple[list[str], int]:
    """What the strict site build would warn about in a package's docstrings, one line each:
    griffe's warnings, a `>>>` example outside an Examples section (it renders as prose) and
    text that autorefs reads as a reference to no object of the package; and how many objects
    were read."""
    problems: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.levelno >= logging.WARNING:
                problems.append(f"griffe: {record.getMessage()}")

    handler = Collect()
    logging.getLogger("griffe").addHandler(handler)
    try:
        loaded = site_load(package, search_path)
    finally:
        logging.getLogger("griffe").removeHandler(handler)
    md = site_markdown()

    def exists(identifier: str) -> bool:
        try:
            return loaded.modules_collection.get_member(identifier) is not None
        except (KeyError, ValueError):
            return False

    seen: set[str] = set()

    def read(obj) -> None:
        if obj.path in seen:
            return
        seen.add(obj.path)
        if obj.docstring is not None:
            logging.getLogger("griffe").addHandler(handler)
            try:
                sections = obj.docstring.parsed
            finally:
                logging.getLogger("griffe").removeHandler(handler)
            for section in sections:
                for text in markdown_parts(section):
                    if re.search(r"^\s*>>>", FENCED.sub("", text), re.M):
                        problems.append(
                            f"{obj.path}: a >>> example outside an Examples: section "
                            "renders as prose"
                        )
                    html = md.reset().convert(text)
                    for identifier in re.findall(r'<autoref [^>]*identifier="([^"]*)"', html):
                        if not exists(identifier):
                            problems.append(
                                f"{obj.path}: {identifier!r} reads as a cross-reference to nothing"
                            )
        for member in obj.members.values():
            if not member.is_alias:
                read(member)

    read(loaded)
    return problems, len(seen)


@pytest.mark.slow
def test_every_docstring_renders_without_a_warning():
    """Every docstring of the package, rendered or not on the site today, reads as the strict
    build reads it: a new release of the docs toolchain that reads them differently fails this
    test, not a user's `mkdocs serve`."""
    problems, seen = docstring_problems("tacit", REPO)
    assert seen > 100  # the walk reached the package's members
    assert problems == []


def test_the_reference_names_real_objects():
    loaded = site_load("tacit", REPO)
    reference = (REPO / "docs" / "reference" / "api.md").read_text()
    paths = re.findall(r"^::: ([\w.]+)", reference, re.M)
    assert len(paths) > 20
    for path in paths:
        assert loaded.modules_collection.get_member(path) is not None, path


def test_the_probe_functions_are_read_as_made_at_import():
    """Their source is `retrieve = probe_function("retrieve")`: the site shows the function
    made from the probe's declaration, with its signature and docstring."""
    from tacit.api import retrieve

    documented = site_load("tacit", REPO)["api.retrieve"]
    assert documented.is_function
    assert [p.name for p in documented.parameters] == list(inspect.signature(retrieve).parameters)
    assert documented.docstring.value == inspect.cleandoc(retrieve.__doc__)


def test_a_doctest_written_as_prose_is_caught(tmp_path):
    (tmp_path / "planted").mkdir()
    (tmp_path / "planted" / "__init__.py").write_text(PROSE)
    problems, _ = docstring_problems("planted", tmp_path)
    assert problems == [
        "planted.format_number: a >>> example outside an Examples: section renders as prose",
        "planted.format_number: \"'0.0572', '0.500'\" reads as a cross-reference to nothing",
    ]
    (tmp_path / "planted" / "__init__.py").write_text(EXAMPLES)
    assert docstring_problems("planted", tmp_path)[0] == []


def one_page_site(root: Path, module: str) -> Path:
    """A site of one page rendering `module`'s format_number with the project's theme, Markdown
    extensions and mkdocstrings options (mkdocs.yml's, less its pages and hooks and its own
    `strict`, so that only the command line makes the build strict; griffe's extensions found
    where mkdocs.yml has them): its config file."""
    (root / "planted").mkdir(parents=True)
    (root / "planted" / "__init__.py").write_text(module)
    (root / "docs").mkdir()
    (root / "docs" / "index.md").write_text("# Planted\n\n::: planted.format_number\n")
    config = copy.deepcopy({k: v for k, v in CONFIG.items() if k not in ("hooks", "strict", "nav")})
    (plugin,) = [p["mkdocstrings"] for p in config["plugins"] if isinstance(p, dict)]
    plugin["handlers"]["python"]["options"]["extensions"] = EXTENSIONS
    config["nav"] = [{"Home": "index.md"}]
    (root / "mkdocs.yml").write_text(yaml.safe_dump(config))
    return root / "mkdocs.yml"


def ci_docs(config: Path, **env: str) -> subprocess.CompletedProcess:
    """`.ci/docs` as CI runs it, with this environment's mkdocs (and `env` set)."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return subprocess.run(
        ["bash", str(REPO / ".ci" / "docs"), str(config)],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": path, **env},
        timeout=600,
    )


def runtime_modules() -> set[str]:
    """The top-level modules of tacit's own requirements (torch, numpy, pandas, ...; not its
    extras), which an environment with only the docs toolchain lacks."""
    from importlib.metadata import packages_distributions, requires

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    needed = {Requirement(r) for r in requires(DISTRIBUTION) or []}
    names = {canonicalize_name(r.name) for r in needed if r.marker is None}
    return {
        module
        for module, distributions in packages_distributions().items()
        if module.isidentifier() and any(canonicalize_name(d) in names for d in distributions)
    }


@pytest.mark.slow
def test_the_site_builds_without_tacits_runtime(tmp_path):
    """`.ci/docs-newest` builds the site with the docs toolchain alone: here each of tacit's
    requirements fails to import, and the strict build still passes (it imports tacit.api and
    tacit's own modules, which load none of them)."""
    blocked = runtime_modules()
    assert {"torch", "numpy", "pandas", "transformers"} <= blocked
    for module in blocked:
        (tmp_path / f"{module}.py").write_text(f"raise ImportError('{module} is blocked')\n")
    build = ci_docs(REPO / "mkdocs.yml", PYTHONPATH=str(tmp_path))
    assert build.returncode == 0, build.stdout + build.stderr


@pytest.mark.slow
def test_the_ci_docs_build_fails_on_a_planted_warning(tmp_path):
    prose = ci_docs(one_page_site(tmp_path / "prose", PROSE))
    log = prose.stdout + prose.stderr
    assert prose.returncode != 0, log
    assert "Could not find cross-reference target" in log
    assert "Aborted with 1 warnings in strict mode" in log
    examples = ci_docs(one_page_site(tmp_path / "examples", EXAMPLES))
    assert examples.returncode == 0, examples.stdout + examples.stderr
