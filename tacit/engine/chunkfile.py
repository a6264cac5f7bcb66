"""How the checkpoint keeps a scored chunk and a model's record on disk: as data that nothing
can turn into code when it is read back (a run directory may be shared, so `--resume` must
never run what someone else left there). A chunk is an `.npz` of plain arrays read with
`allow_pickle=False` (text as UTF-8 bytes and offsets) and a JSON header; a record is JSON.
Both carry the plan's key, their own key and a sha256 of their content, so a file of another
run, renamed or damaged, is `Unusable`. Every column comes back bit for bit, so a resumed run
writes the same bytes as an uninterrupted one.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Mapping
from typing import Any, cast

import numpy as np
import pandas as pd

FORMAT = 1  # bump when what is written changes: older files are then scored again
CHUNK_SUFFIX = ".npz"
RECORD_SUFFIX = ".json"
_HEADER = "header"  # the array holding the JSON header's bytes


class Unusable(ValueError):
    """A file that is not a usable chunk or record of this run; the message says why."""


def plan_key(plan_text: str) -> str:
    """The key every file of a run carries: the sha256 of its plan.json."""
    return hashlib.sha256(plan_text.encode("utf-8")).hexdigest()


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _texts(values: list[Any], arrays: dict[str, np.ndarray], name: str) -> None:
    """Strings (None where missing) as one byte array and the offsets that cut it."""
    encoded = [_utf8(v) if isinstance(v, str) else b"" for v in values]
    arrays[f"{name}.bytes"] = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    arrays[f"{name}.offsets"] = np.cumsum([0] + [len(e) for e in encoded], dtype=np.int64)


def _read_texts(arrays: Mapping[str, np.ndarray], name: str) -> list[str]:
    data, offsets = arrays[f"{name}.bytes"].tobytes(), arrays[f"{name}.offsets"]
    return [
        data[start:end].decode("utf-8", "surrogatepass")
        for start, end in zip(offsets[:-1].tolist(), offsets[1:].tolist())
    ]


def _encode(values: pd.Series | pd.Index, name: str, arrays: dict[str, np.ndarray]) -> dict:
    """A column's (or the index's) values into `arrays`; returns how to read them back."""
    dtype = values.dtype
    if isinstance(values, pd.RangeIndex):
        return {"as": "range", "start": values.start, "stop": values.stop, "step": values.step}
    if isinstance(dtype, np.dtype) and dtype.kind in "biufcmM":
        arrays[name] = np.asarray(values)
        return {"as": "numpy", "dtype": dtype.str}
    cells = list(values)
    missing = [c is None or (isinstance(c, float) and c != c) or c is pd.NA for c in cells]
    if isinstance(dtype, pd.StringDtype):
        _texts(cells, arrays, name)
        arrays[f"{name}.missing"] = np.array(missing, dtype=bool)
        na = "nan" if getattr(dtype, "na_value", pd.NA) is not pd.NA else "NA"
        return {"as": "string", "storage": dtype.storage, "na": na}
    if dtype == np.dtype(object) and all(isinstance(c, str) or m for c, m in zip(cells, missing)):
        _texts(cells, arrays, name)
        # 0: a string, 1: None, 2: NaN, 3: pd.NA
        kinds = [
            0 if not m else 1 if c is None else 3 if c is pd.NA else 2
            for c, m in zip(cells, missing)
        ]
        arrays[f"{name}.missing"] = np.array(kinds, dtype=np.int8)
        return {"as": "object-text"}
    if isinstance(dtype, pd.api.extensions.ExtensionDtype) and hasattr(values.array, "_mask"):
        masked = values.array  # nullable integers, floats, booleans: values and a mask
        arrays[name] = np.asarray(masked._data)
        arrays[f"{name}.missing"] = np.asarray(masked._mask)
        return {"as": "masked", "dtype": dtype.name}
    raise TypeError(f"the checkpoint cannot keep column {name!r} of dtype {dtype}")


def _decode(spec: Mapping[str, Any], arrays: Mapping[str, np.ndarray], name: str) -> Any:
    """A column's (or the index's) values as `_encode` described them."""
    kind = spec["as"]
    if kind == "range":
        return pd.RangeIndex(spec["start"], spec["stop"], spec["step"])
    if kind == "numpy":
        return arrays[name].astype(np.dtype(spec["dtype"]), copy=False)
    if kind == "masked":
        array_type = pd.api.types.pandas_dtype(spec["dtype"]).construct_array_type()
        return array_type(arrays[name], arrays[f"{name}.missing"].astype(bool))
    texts = _read_texts(arrays, name)
    missing = arrays[f"{name}.missing"].tolist()
    if kind == "string":
        na_value = np.nan if spec["na"] == "nan" else pd.NA
        dtype = (
            pd.StringDtype(spec["storage"], na_value=na_value)
            if spec["na"] == "nan"
            else pd.StringDtype(spec["storage"])
        )
        cells: list[Any] = [na_value if m else t for t, m in zip(texts, missing)]
        return pd.array(cells, dtype=dtype)
    if kind == "object-text":
        stand_ins = (None, None, np.nan, pd.NA)
        column = np.empty(len(texts), dtype=object)
        column[:] = [t if m == 0 else stand_ins[m] for t, m in zip(texts, missing)]
        return column
    raise Unusable(f"a column of an unknown kind ({kind})")


def _given(spec: Mapping[str, Any]) -> Any:
    """The dtype pandas must be told (text kept as Python objects, which it would infer as
    its string dtype); None where the values carry their own."""
    return object if spec["as"] == "object-text" else None


def _digest(header: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> str:
    """sha256 of the header (less its own digest) and every array's name, type, shape and
    bytes."""
    digest = hashlib.sha256()
    digest.update(json.dumps({**header, "sha256": None}, sort_keys=True).encode("utf-8"))
    for name in sorted(arrays):
        array = np.ascontiguousarray(arrays[name])
        digest.update(f"\0{name}\0{array.dtype.str}\0{array.shape}\0".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


def chunk_bytes(table: pd.DataFrame, counts: Mapping[str, int], *, plan: str, key: str) -> bytes:
    """A scored chunk (its rows and its counts) as the bytes of an `.npz` file."""
    arrays: dict[str, np.ndarray] = {}
    columns = [
        {"name": str(column), **_encode(table[column], f"c{i}", arrays)}
        for i, column in enumerate(table.columns)
    ]
    header = {
        "format": FORMAT,
        "plan": plan,
        "key": key,
        "columns": columns,
        "index": {"name": table.index.name, **_encode(table.index, "index", arrays)},
        "counts": {str(k): int(v) for k, v in counts.items()},
    }
    header["sha256"] = _digest(header, arrays)
    arrays[_HEADER] = np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8)
    buffer = io.BytesIO()
    np.savez(buffer, **cast(dict[str, Any], arrays))  # plain arrays: nothing needs pickle
    return buffer.getvalue()


def read_chunk(data: bytes, *, plan: str, key: str) -> tuple[pd.DataFrame, dict[str, int]]:
    """The rows and counts of a chunk file written by `chunk_bytes` for this plan and key.

    Raises:
        Unusable: not such a file (a pickle, another file, cut short, damaged, another run's
            or another chunk's).
    """
    if data[:1] == b"\x80":  # pickle's protocol marker: never handed to anything that loads it
        raise Unusable("a pickle, not a chunk: never loaded (it could run code)")
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as stored:
            arrays = {name: stored[name] for name in stored.files}
        header = json.loads(arrays.pop(_HEADER).tobytes().decode("utf-8"))
    except Exception as err:  # any reader's failure: not a chunk (cut short, garbled, other)
        raise Unusable(f"not a readable chunk ({type(err).__name__})") from None
    _check(header, plan, key)
    if header.get("sha256") != _digest(header, arrays):
        raise Unusable("its checksum does not match its content: damaged")
    try:
        spec = header["index"]
        index = pd.Index(_decode(spec, arrays, "index"), name=spec["name"], dtype=_given(spec))
        table = pd.DataFrame(
            {
                c["name"]: pd.Series(_decode(c, arrays, f"c{i}"), index=index, dtype=_given(c))
                for i, c in enumerate(header["columns"])
            },
            index=index,
        )
    except (KeyError, TypeError, ValueError) as err:
        raise Unusable(f"not a readable chunk ({type(err).__name__})") from None
    return table, dict(header["counts"])


def record_bytes(record: Mapping[str, Any], *, plan: str, key: str) -> bytes:
    """A model's record as the bytes of a JSON file."""
    value = json.loads(json.dumps(record, default=str))  # as the manifest will write it
    header = {"format": FORMAT, "plan": plan, "key": key, "record": value}
    header["sha256"] = _record_digest(header)
    return json.dumps(header, indent=1, ensure_ascii=False).encode("utf-8")


def read_record(data: bytes, *, plan: str, key: str) -> dict[str, Any]:
    """The model record of a file written by `record_bytes` for this plan and key.

    Raises:
        Unusable: not such a file (see read_chunk).
    """
    if data[:1] == b"\x80":
        raise Unusable("a pickle, not a model record: never loaded (it could run code)")
    try:
        header = json.loads(data.decode("utf-8"))
    except ValueError:
        raise Unusable("not a readable model record (cut short or garbled)") from None
    if not isinstance(header, dict) or not isinstance(header.get("record"), dict):
        raise Unusable("not a model record")
    _check(header, plan, key)
    if header.get("sha256") != _record_digest(header):
        raise Unusable("its checksum does not match its content: damaged")
    return header["record"]


def _record_digest(header: Mapping[str, Any]) -> str:
    text = json.dumps({**header, "sha256": None}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _check(header: Any, plan: str, key: str) -> None:
    """Is the header this run's, for this key, in this format?"""
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise Unusable("not a chunk of this version of tacit")
    if header.get("plan") != plan:
        raise Unusable("not this run's (written for another plan)")
    if header.get("key") != key:
        raise Unusable(f"not this file's: it holds {str(header.get('key'))[:20]}")
