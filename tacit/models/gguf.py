"""GGUF files (llama.cpp's format, most quantised community checkpoints): given by path
(`--model path/to/model.Q4_K_M.gguf`) or in a directory or hub repository
(`DIR,gguf_file=NAME`), loaded by transformers, which dequantises the weights to float.

The scores are those of the dequantised float weights run by transformers, not of llama.cpp's
quantised kernels (whose arithmetic differs): what a GGUF records in the manifest says so, with
the file, its sha256 and its quantisation type. The file's header is read here, in a few
milliseconds, to tell the architecture before transformers parses the whole file (which takes
seconds per hundred megabytes).
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any, BinaryIO

from tacit.core.errors import TacitError
from tacit.core.files import file_sha256
from tacit.core.modelspec import ModelSpec
from tacit.core.option_names import option

SUFFIX = ".gguf"
# GGUF's value types: struct format of each scalar; 8 is a string, 9 an array
_SCALARS = {
    0: "B",
    1: "b",
    2: "H",
    3: "h",
    4: "I",
    5: "i",
    6: "f",
    7: "?",
    10: "Q",
    11: "q",
    12: "d",
}
_STRING, _ARRAY = 8, 9
# general.file_type: llama.cpp's LLAMA_FTYPE numbers, as quantisation types are named
# fmt: off  (a table: it reads as llama.cpp's list does, several to a line)
FILE_TYPES = {
    0: "F32",
    1: "F16",
    2: "Q4_0",
    3: "Q4_1",
    7: "Q8_0",
    8: "Q5_0",
    9: "Q5_1",
    10: "Q2_K",
    11: "Q3_K_S",
    12: "Q3_K_M",
    13: "Q3_K_L",
    14: "Q4_K_S",
    15: "Q4_K_M",
    16: "Q5_K_S",
    17: "Q5_K_M",
    18: "Q6_K",
    19: "IQ2_XXS",
    20: "IQ2_XS",
    21: "Q2_K_S",
    22: "IQ3_XS",
    23: "IQ3_XXS",
    24: "IQ1_S",
    25: "IQ4_NL",
    26: "IQ3_S",
    27: "IQ3_M",
    28: "IQ2_S",
    29: "IQ2_M",
    30: "IQ4_XS",
    31: "IQ1_M",
    32: "BF16",
    36: "TQ1_0",
    37: "TQ2_0",
}
# fmt: on
SEQ2SEQ = ("t5", "umt5", "t5encoder")  # GGUF architectures that are encoder-decoders


def is_gguf(name: str) -> bool:
    """Is this model's text a GGUF file (by its suffix; whether it exists is checked on use)?"""
    return name.lower().endswith(SUFFIX)


def resolved(spec: ModelSpec) -> ModelSpec:
    """A spec whose name is a .gguf file as transformers takes it: its directory, with the
    file as `gguf_file`. A directory or hub id with `gguf_file` is kept as it is."""
    if not is_gguf(spec.name):
        return spec
    path = Path(spec.name).expanduser()
    if not path.is_file():
        raise TacitError(f"{option('--model')} {spec.name}: no such GGUF file")
    if spec.gguf_file is not None and spec.gguf_file != path.name:
        raise TacitError(
            f"{option('--model')} {spec.text}: a GGUF file given twice (by path and gguf_file)"
        )
    options = {k: v for k, v in spec.given().items() if k != "gguf_file"}
    return ModelSpec(str(path.parent), gguf_file=path.name, **options)


def local_file(spec: ModelSpec) -> Path | None:
    """The GGUF file of a resolved spec when it is on this machine (None for a hub repository's,
    which transformers downloads)."""
    if spec.gguf_file is None:
        return None
    file = Path(spec.name).expanduser() / spec.gguf_file
    return file if file.is_file() else None


def read_metadata(path: Path) -> dict[str, Any]:
    """The header's key-value pairs (arrays left out: the tokenizer's, tens of thousands of
    entries, are read past, not kept); a one-line error for a file that is not GGUF."""
    try:
        with open(path, "rb") as handle:
            if handle.read(4) != b"GGUF":
                raise TacitError(f"{option('--model')} {path}: not a GGUF file (no GGUF magic)")
            version, _tensors, count = struct.unpack("<IQQ", handle.read(20))
            if version < 2:
                raise TacitError(f"{option('--model')} {path}: GGUF version {version} is too old")
            metadata: dict[str, Any] = {}
            for _ in range(count):
                key = _string(handle)
                (kind,) = struct.unpack("<I", handle.read(4))
                value = _value(handle, kind)
                if value is not None:
                    metadata[key] = value
            return metadata
    except (struct.error, UnicodeDecodeError) as err:
        where = f"{option('--model')} {path}"
        raise TacitError(f"{where}: the GGUF header is cut short or damaged") from err


def _string(handle: BinaryIO) -> str:
    (length,) = struct.unpack("<Q", handle.read(8))
    return handle.read(length).decode("utf-8")


def _value(handle: BinaryIO, kind: int) -> Any:
    """One value (an array is read past and gives None)."""
    if kind in _SCALARS:
        fmt = "<" + _SCALARS[kind]
        return struct.unpack(fmt, handle.read(struct.calcsize(fmt)))[0]
    if kind == _STRING:
        return _string(handle)
    if kind != _ARRAY:
        raise struct.error(f"unknown GGUF value type {kind}")
    item, count = struct.unpack("<IQ", handle.read(12))
    if item in _SCALARS:
        handle.seek(count * struct.calcsize("<" + _SCALARS[item]), 1)
    else:
        for _ in range(count):
            _value(handle, item)
    return None


def architecture(spec: ModelSpec) -> str | None:
    """The architecture a local GGUF file declares (`llama`, `gemma3`, ...); None for one on
    the hub (transformers reads it there)."""
    file = local_file(spec)
    return None if file is None else str(read_metadata(file).get("general.architecture", ""))


def check_readable(spec: ModelSpec) -> None:
    """A one-line error where transformers cannot load this GGUF: no `gguf` package, or an
    architecture it cannot convert (named, with the ones it can)."""
    try:
        import gguf  # noqa: F401
        from transformers.modeling_gguf_pytorch_utils import GGUF_SUPPORTED_ARCHITECTURES
    except ImportError:
        raise TacitError(
            f"{option('--model')} {spec.text}: a GGUF file needs the gguf package: "
            "pip install 'tacit-probe[gguf]' (or gguf and accelerate)"
        ) from None
    arch = architecture(spec)
    if arch is not None and arch not in GGUF_SUPPORTED_ARCHITECTURES:
        raise TacitError(
            f"{option('--model')} {spec.text}: transformers cannot read a GGUF of architecture "
            f"{arch!r} (it reads {', '.join(sorted(GGUF_SUPPORTED_ARCHITECTURES))}): convert the "
            "original checkpoint instead, or score it through a server (base_url=...)"
        )


def record(spec: ModelSpec) -> dict[str, Any]:
    """The GGUF for the manifest: the file, its sha256, its quantisation type, and how it was
    run (dequantised by transformers)."""
    file = local_file(spec)
    entry: dict[str, Any] = {"file": spec.gguf_file, "dequantized": "transformers, to float"}
    if file is not None:
        metadata = read_metadata(file)
        file_type = metadata.get("general.file_type")
        entry.update(
            path=str(file.resolve()),
            sha256=file_sha256(file),
            quantization=FILE_TYPES.get(file_type, f"type {file_type}")
            if file_type is not None
            else None,
            architecture=metadata.get("general.architecture"),
        )
    return entry
