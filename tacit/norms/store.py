"""Remember installed norm sets under names, and find the norms a run should use.

The registry is `norms.json` in tacit.core.paths.config_dir(): each name's file (as named:
a link is not followed), sha256, format, columns and counts, and the default. A norm set is
read again every run, after checking its file has not changed since it was installed; a
registry from before names reads as the set `cslb`. Every change holds a lock (tacit.core.locks)
so that two installs at once both land; it is written whole, so reading needs no lock.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tacit.core.errors import TacitError, shorten
from tacit.core.files import RECORD_LIMIT, file_sha256, regular_file, write_atomic
from tacit.core.locks import file_lock
from tacit.core.option_names import option as named
from tacit.core.paths import config_dir
from tacit.hub.dataset_files import Fetched, is_hub_url, local_file
from tacit.norms.reader import NormSet, read_norms

NORMS_ENV = "TACIT_NORMS"

# A copy of McRae et al. (2005)'s norms (CONCS_FEATS_concstats_brm, as a CSV export of its
# concepts_features sheet) in a public Hugging Face dataset, pinned to its commit: the one set
# of norms with relations a first run can fetch without registering anywhere. Not McRae's own
# distribution, and it states no licence (nor does McRae's): docs/norms.md says so.
MCRAE_HUB = (
    "hf://datasets/metaeval/semantic-feature-production-norms"
    "@a17b82862975b09a6064d7ad7eeeffdc41de1bc7/CONCS_FEATS_concstats_brm.csv"
)
HOW_TO_GET_NORMS = (
    "the CSLB norms are handed out by the Centre for Speech, Language and the Brain (Cambridge) "
    "after registration; download norms.dat, then run `probe norms install PATH/TO/norms.dat` "
    f"once, or pass --norms PATH, or set {NORMS_ENV}=PATH (McRae's norms or a CSV/TSV table "
    "of your own work the same way: `probe norms install [NAME] PATH`); without registering, "
    f"McRae's norms from a copy on the Hugging Face Hub: `probe norms install mcrae {MCRAE_HUB}`"
)
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_RECORD_KEYS = ("path", "sha256", "format")
REGISTRY_WAIT = 10.0  # seconds an install waits for another one to finish with the registry


@dataclass(frozen=True)
class InstalledNorms:
    """One installed norm set, as the registry remembers it (for `probe norms show`)."""

    name: str
    path: Path
    format: str
    sha256: str
    columns: Mapping[str, str] | None
    concepts: int | None
    rows: int | None
    default: bool
    source: str | None = None  # installed from a Hub dataset: its hf:// URL (path: the cache)


@dataclass(frozen=True)
class Installation:
    """What an install did: the norm set read, its registry entry, and the entry of another
    file it replaced under the same name (None when the name was free or named this file)."""

    norms: NormSet
    entry: InstalledNorms
    replaced: InstalledNorms | None


def _config_file() -> Path:
    return config_dir() / "norms.json"


def _cannot_write(target: Path, err: OSError) -> TacitError:
    return TacitError(
        f"{target}: cannot remember norms there ({err.strerror}); make {target.parent} "
        "writable, or set TACIT_CONFIG_DIR to a directory that is"
    )


@contextmanager
def _registry_changed() -> Iterator[dict[str, Any]]:
    """The registry, for changing: read under its lock, written back whole (tacit.core.files)
    when the block ends without an error, before the lock is released."""
    target = _config_file()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise _cannot_write(target, err) from None
    with file_lock(
        target.with_name(target.name + ".lock"), "the norms registry", wait=REGISTRY_WAIT
    ):
        registry = _read_registry()
        yield registry
        try:
            write_atomic(target, json.dumps(registry, indent=2) + "\n")
        except OSError as err:
            raise _cannot_write(target, err) from None


def _read_registry() -> dict[str, Any]:
    """`{"default": name or None, "norms": {name: record}}`; an old one-file registry reads as
    the norm set `cslb`."""
    target = _config_file()
    if not target.is_file():
        return {"default": None, "norms": {}}
    try:
        regular_file(target, limit=RECORD_LIMIT)
        text = target.read_text()
    except OSError as err:
        raise TacitError(
            f"{target}: cannot read it ({err.strerror}); make it readable, or set "
            "TACIT_CONFIG_DIR to another directory"
        ) from None
    try:
        registry = json.loads(text)
        if "norms" not in registry:  # written before names: one CSLB file
            old = {"path": registry["path"], "sha256": registry["sha256"], "format": "cslb"}
            registry = {"default": "cslb", "norms": {"cslb": old}}
        records = registry["norms"].values()
        valid = all(isinstance(r[key], str) for r in records for key in _RECORD_KEYS)
    except (ValueError, KeyError, TypeError, AttributeError):
        valid = False
    if not valid:
        raise TacitError(
            f"{target}: unreadable (damaged, or edited by hand); move it away, then run `probe "
            "norms install [NAME] PATH` again for each norm set"
        )
    return registry


def default_name(norms: NormSet) -> str:
    """The name a norm set is installed under unless one is given: `cslb`, `mcrae`, or for a
    generic table the file's stem made a valid name (`my norms.csv` -> `my_norms`)."""
    if norms.format != "generic":
        return norms.format
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", norms.path.stem).strip("_.-")
    return name[:64] or "norms"


def install_norms(
    path: str | Path,
    name: str | None = None,
    *,
    format: str | None = None,
    columns: Mapping[str, str] | None = None,
    default: bool = False,
) -> NormSet:
    """Validate a norms file and remember it under `name` (default: default_name) with its
    absolute path, sha256, format and column mapping. Installing under a name already taken
    replaces that entry. The first norm set installed is the default, unless `default` makes
    this one the default. (register_norms says also what was replaced.)"""
    return register_norms(path, name, format=format, columns=columns, default=default).norms


def register_norms(
    path: str | Path,
    name: str | None = None,
    *,
    format: str | None = None,
    columns: Mapping[str, str] | None = None,
    default: bool = False,
) -> Installation:
    """install_norms, saying what it did: the entry written, and the entry of another file it
    replaced under the same name. Reading the file comes first, outside the registry's lock;
    the registry is then read, changed and written under it, so that installs at once all land
    (one of two under the same name wins, the other is reported as replaced). A Hub dataset's
    file (`hf://datasets/...`, tacit.hub.dataset_files) is fetched into the Hugging Face cache and
    installed from there, remembered with its URL and commit, which runs then record."""
    local, fetched = local_file(path, "probe norms install")
    norms = read_norms(local, format=format, columns=columns)
    name = default_name(norms) if name is None else name
    if not _NAME.fullmatch(name):
        raise TacitError(
            f"norms name {shorten(name)!r}: use letters, digits, '_', '.' and '-' (up to 64, "
            "starting with a letter or digit)"
        )
    record = {
        "path": str(local.expanduser().absolute()),  # a link stays the name given
        "sha256": norms.sha256,
        "format": norms.format,
        "columns": dict(norms.columns) if norms.columns else None,
        "concepts": len(norms.concepts),
        "rows": len(norms.table),
        **(fetched.record() if fetched else {}),  # source (the hf:// URL) and commit
    }
    with _registry_changed() as registry:
        old = registry["norms"].get(name)
        replaced = _entry(name, old, registry) if old and old["path"] != record["path"] else None
        registry["norms"][name] = record
        if default or registry.get("default") not in registry["norms"]:
            registry["default"] = name
        entry = _entry(name, record, registry)
    return Installation(norms, entry, replaced)


def set_default_norms(name: str) -> None:
    """Make an installed norm set the one runs use without --norms."""
    with _registry_changed() as registry:
        if name not in registry["norms"]:
            raise TacitError(f"no installed norms named {shorten(name)!r}{_known(registry)}")
        registry["default"] = name


def remove_norms(name: str) -> tuple[InstalledNorms, str | None]:
    """Forget an installed norm set (its file is left alone): what it was, and the default
    now (the first norm set left, if the removed one was the default; None when none is)."""
    with _registry_changed() as registry:
        if name not in registry["norms"]:
            raise TacitError(f"no installed norms named {shorten(name)!r}{_known(registry)}")
        removed = _entry(name, registry["norms"].pop(name), registry)
        if registry.get("default") not in registry["norms"]:
            registry["default"] = next(iter(registry["norms"]), None)
        default = registry["default"]
    return removed, default


def installed_norms() -> list[InstalledNorms]:
    """Every installed norm set, in the order they were installed."""
    registry = _read_registry()
    return [_entry(name, record, registry) for name, record in registry["norms"].items()]


def _entry(name: str, record: dict[str, Any], registry: dict[str, Any]) -> InstalledNorms:
    return InstalledNorms(
        name=name,
        path=Path(record["path"]),
        format=record["format"],
        sha256=record["sha256"],
        columns=record.get("columns"),
        concepts=record.get("concepts"),
        rows=record.get("rows"),
        default=name == registry.get("default"),
        source=record.get("source"),
    )


def _known(registry: dict[str, Any]) -> str:
    names = ", ".join(registry["norms"])
    return f" (installed: {names})" if names else " (none installed)"


def _checked(name: str, record: dict[str, Any]) -> Path:
    """An installed norm set's file, checked to be there and unchanged since installation."""
    path = Path(record["path"])
    again = f"run `probe norms install {name} {record.get('source') or 'PATH'}` again"
    if not path.is_file():
        raise TacitError(f"the installed norms file {path} ({name}) is gone; {again}")
    try:
        sha256 = file_sha256(path)
    except OSError as err:
        raise TacitError(
            f"the installed norms file {path} ({name}): cannot read it ({err.strerror})"
        ) from None
    if sha256 != record["sha256"]:
        raise TacitError(
            f"the installed norms file {path} ({name}) changed since it was installed; {again} "
            "to validate it"
        )
    return path


@dataclass(frozen=True)
class NormsSource:
    """Where a run's norms come from: a file, how to read it, and its installed name if any."""

    path: Path
    format: str | None = None
    columns: Mapping[str, str] | None = None
    name: str | None = None
    hub: Fetched | None = None  # a Hub dataset's file: its URL and commit


def resolve_norms(option: str | Path | None) -> NormsSource:
    """--norms, else $TACIT_NORMS, else the installed default, else a clear error: the nearer
    the choice is to the run, the more it counts (an environment variable set for a session or
    a job wins over what was installed once).

    --norms and $TACIT_NORMS name an existing file, else an installed norm set: a file of the
    same name as an installed norm set wins (give another path, e.g. `./NAME`, to say a file).
    """
    registry = _read_registry()
    if option:
        return _source(option, registry)
    if os.environ.get(NORMS_ENV):
        return _source(os.environ[NORMS_ENV], registry)
    default = registry.get("default")
    if isinstance(default, str) and default in registry["norms"]:
        return _installed(default, registry)
    raise TacitError(f"no norms file: {HOW_TO_GET_NORMS}")


def _source(given: str | Path, registry: dict[str, Any]) -> NormsSource:
    if is_hub_url(given):
        path, fetched = local_file(given, named("--norms"))
        return NormsSource(path, hub=fetched)
    path = Path(given)
    try:
        exists = path.exists()
    except OSError:  # a name too long to look up: reading it says so in one line
        exists = False
    if not exists and str(given) in registry["norms"]:
        return _installed(str(given), registry)
    if not exists and _NAME.fullmatch(str(given)):
        raise TacitError(
            f"{given}: no such norms file, nor installed norms of that name{_known(registry)}"
        )
    return NormsSource(path)


def _installed(name: str, registry: dict[str, Any]) -> NormsSource:
    record = registry["norms"][name]
    path = _checked(name, record)
    hub = Fetched(record["source"], path, record.get("commit")) if record.get("source") else None
    return NormsSource(path, record["format"], record.get("columns"), name, hub)


def resolve_norms_path(option: str | Path | None) -> Path:
    """The norms file a run should use (see resolve_norms)."""
    return resolve_norms(option).path


def load_norms(
    option: str | Path | None = None,
    *,
    format: str | None = None,
    columns: Mapping[str, str] | None = None,
) -> NormSet:
    """Read the norms a run should use (see resolve_norms). `format` and `columns` say how to
    read a file given by path; an installed norm set is read as it was installed."""
    source = resolve_norms(option)
    if source.name is None:
        norms = read_norms(source.path, format=format, columns=columns)
        return replace(norms, hub=source.hub.record()) if source.hub else norms
    asked = (format or source.format, dict(columns or source.columns or {}))
    if asked != (source.format, dict(source.columns or {})):
        raise TacitError(
            f"{named('--norms')} {source.name}: installed as {source.format} norms"
            + (f" with columns {dict(source.columns)}" if source.columns else "")
            + f"; {named('--norms-format')} and {named('--norms-columns')} apply to a norms "
            "file given by path"
        )
    norms = read_norms(source.path, format=source.format, columns=source.columns)
    return replace(norms, name=source.name, hub=source.hub.record() if source.hub else {})
