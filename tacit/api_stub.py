"""Write tacit/api.pyi: the probe functions tacit.api makes at import, with their signatures
(each probe's options, then the run options: typed and defaulted as declared) and docstrings,
for type checkers and IDEs. `python -m tacit.api_stub` writes it; `--check` says whether the
checked-in file is current (tests/test_api_stub.py checks the same).
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import inspect
import sys
from pathlib import Path
from typing import Any

from tacit.api import probe_function
from tacit.core.options import RunOptions
from tacit.probes import registry

STUB = Path(__file__).with_name("api.pyi")
# what the stub takes from tacit.probe_api, re-exported as tacit.api has them
REEXPORTED = ("MODELS_HELP", "Models", "probe_function", "run_probe")
# the names the signatures use beyond their options' own: where each is defined
KNOWN = {name: "tacit.probe_api" for name in REEXPORTED}
KNOWN |= {"RunOptions": "tacit.core.options", "ProbeResult": "tacit.results.result"}
BUILTINS = frozenset({"bool", "int", "float", "str", "None"})
SIMPLE = (type(None), bool, int, float, str, tuple, dict)


def stub_text() -> str:
    """The text of tacit/api.pyi, made from every registered tacit probe's declaration."""
    names = registry.builtin()
    functions, used = [], dict(KNOWN)
    for name in names:
        probe = registry.get(name)
        function = probe_function(name)
        homes = {**_declared_in(probe.options), **_declared_in(RunOptions)}
        parameters = inspect.signature(function).parameters.values()
        for parameter in parameters:
            home = homes.get(parameter.name, "tacit.probe_api")
            for used_name in _names(str(parameter.annotation)):
                _use(used, used_name, _home(home, used_name))
        functions.append(_function(name, function))
    imports = _imports(used)
    # a renamed probe (tacit.structure is the analyses' package) stays out of the star import
    # that tacit/__init__.py types itself with; it imports the function under its top name
    starred = [n for n in names if n not in registry.TOP_NAMES]
    everything = [f'    "{n}",' for n in [*REEXPORTED, *starred]]
    header = [
        "# Written by `python -m tacit.api_stub` from the probes' declarations: do not edit.",
        "# tacit.api makes these functions at import (tacit.probe_api.probe_function).",
        "",
        *imports,
        "",
        "__all__ = [",
        *everything,
        "]",
    ]
    return "\n".join(header) + "\n\n" + "\n".join(functions)


def _function(name: str, function: Any) -> str:
    """One probe function's stub: its signature, one parameter a line, and its docstring."""
    lines, star = [f"def {name}("], False
    for parameter in inspect.signature(function).parameters.values():
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY and not star:
            lines.append("    *,")
            star = True
        text = f"    {parameter.name}: {_quoted(str(parameter.annotation))}"
        if parameter.default is not inspect.Parameter.empty:
            text += f" = {_default(parameter.default)}"
        lines.append(text + ",")
    lines.append(f") -> {inspect.signature(function).return_annotation}:")  # ProbeResult
    doc = inspect.getdoc(function) or ""
    if '"""' in doc or "\\" in doc:
        raise ValueError(f"{name}: a docstring with quotes or backslashes cannot be written")
    body = [f"    {line}" if line else "" for line in doc.splitlines()]
    lines += [f'    """{body[0].strip()}', *body[1:], '    """']
    return "\n".join(lines) + "\n"


def _default(value: Any) -> str:
    """A default as the stub writes it: the value where it reads back as itself, else `...`."""
    text = _quoted(repr(value))
    try:
        simple = isinstance(value, SIMPLE) and ast.literal_eval(text) == value
    except ValueError:
        simple = False
    return text if simple else "..."


def _quoted(text: str) -> str:
    """Python's text with double quotes, as ruff writes it (`Literal['auto']`: `"auto"`)."""
    return text if '"' in text else text.replace("'", '"')


def _names(annotation: str) -> list[str]:
    """The names an annotation uses (`Mapping[str, Any] | None`: Mapping, Any)."""
    tree = ast.parse(annotation, mode="eval")
    found = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    return sorted(found - BUILTINS)


def _declared_in(cls: type) -> dict[str, str]:
    """Each field of an options class -> the module whose source writes its annotation."""
    homes: dict[str, str] = {}
    for base in reversed(cls.__mro__):
        for field in base.__dict__.get("__annotations__", {}):
            homes[field] = base.__module__
    return homes


def _home(module: str, name: str) -> str:
    """The module that defines `name` as `module` sees it: followed through tacit's imports."""
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None, module
    tree = ast.parse(Path(spec.origin).read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    if alias.asname and alias.asname != alias.name:
                        raise ValueError(f"{module}: {name} is imported under another name")
                    if node.module.split(".")[0] == "tacit":
                        return _home(node.module, name)
                    return node.module
    return module


def _use(used: dict[str, str], name: str, home: str) -> None:
    if used.setdefault(name, home) != home:
        raise ValueError(f"{name} is defined in both {used[name]} and {home}: rename one")


def _imports(used: dict[str, str]) -> list[str]:
    """The stub's imports, grouped, sorted and wrapped as ruff writes them (isort's rules):
    a name re-exported (`from M import X as X`) on a line of its own."""
    by_module: dict[str, list[str]] = {}
    for name, module in used.items():
        by_module.setdefault(module, []).append(name)
    standard = sorted(m for m in by_module if m.split(".")[0] in sys.stdlib_module_names)
    own = sorted(m for m in by_module if m not in standard)
    text = []
    for group in (standard, own):
        for module in group:
            names = sorted(by_module[module], key=_isort_key)
            plain = [n for n in names if n not in REEXPORTED]
            text += [f"from {module} import {n} as {n}" for n in names if n in REEXPORTED]
            line = f"from {module} import {', '.join(plain)}"
            if len(line) > 100:
                line = "\n".join([f"from {module} import (", *(f"    {n}," for n in plain), ")"])
            text += [line] if plain else []
        text.append("")
    return text[:-1]


def _isort_key(name: str) -> tuple[int, str]:
    """isort's order of imported names: constants, then classes, then the rest."""
    kind = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    return kind, name


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tacit.api_stub", description=__doc__)
    parser.add_argument("--check", action="store_true", help="only say whether it is current")
    check = parser.parse_args(argv).check
    text = stub_text()
    if check:
        current = STUB.exists() and STUB.read_text() == text
        print(f"{STUB}: {'current' if current else 'out of date: run python -m tacit.api_stub'}")
        return 0 if current else 1
    STUB.write_text(text)
    print(f"wrote {STUB}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
