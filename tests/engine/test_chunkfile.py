"""The checkpoint's file formats (tacit.engine.chunkfile): every column comes back with its
dtype and its values bit for bit; a file that is damaged, of another run or chunk, or holds a
pickle (even inside an .npz) is refused without running anything."""

from __future__ import annotations

import io
import json
import os

import numpy as np
import pandas as pd
import pytest

from tacit.engine.chunkfile import (
    Unusable,
    chunk_bytes,
    read_chunk,
    read_record,
    record_bytes,
)

PLAN = "a" * 64


def every_kind_of_column() -> pd.DataFrame:
    texts = ["bear", "a\x00trailing NUL\x00", "", "naïve 🐻", "\ud800 lone surrogate"]
    table = pd.DataFrame(
        {
            "text": pd.Series(texts, dtype="str"),  # pandas' own string dtype
            "object text": pd.Series(["x", None, np.nan, "y", pd.NA], dtype=object),
            "int64": np.array([0, -1, 2**62, 3, 4], dtype=np.int64),
            "int32": np.array([1, 2, 3, 4, 5], dtype=np.int32),
            "float64": np.array([np.nan, -0.0, np.inf, 5e-324, 0.1 + 0.2]),
            "float32": np.array([1.1, np.nan, -np.inf, 3.4e38, 1e-45], dtype=np.float32),
            "bool": np.array([True, False, True, True, False]),
            "nullable": pd.array([1, None, 3, 4, None], dtype="Int64"),
        },
        index=pd.Index([7, 3, 11, 0, 5], name="row"),
    )
    table["string"] = pd.array(["p", None, "q", "", "r"], dtype=pd.StringDtype())
    return table


def assert_identical(got: pd.DataFrame, want: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert list(got.dtypes) == list(want.dtypes)
    for column in want.columns:
        if want[column].dtype.kind == "f":  # -0.0 and the payload of NaN, bit for bit
            assert got[column].to_numpy().tobytes() == want[column].to_numpy().tobytes(), column
        elif want[column].dtype == object:
            assert [type(v) for v in got[column]] == [type(v) for v in want[column]], column


def test_every_kind_of_column_round_trips_exactly():
    table = every_kind_of_column()
    got, counts = read_chunk(
        chunk_bytes(table, {"prompts_cut_to_fit": 2}, plan=PLAN, key="0-1"), plan=PLAN, key="0-1"
    )
    assert_identical(got, table)
    assert counts == {"prompts_cut_to_fit": 2}
    ranged = pd.DataFrame({"x": [1.5, 2.5]})
    got, _ = read_chunk(chunk_bytes(ranged, {}, plan=PLAN, key="0-0"), plan=PLAN, key="0-0")
    assert_identical(got, ranged)
    assert isinstance(got.index, pd.RangeIndex)


def test_a_column_it_cannot_keep_is_a_loud_error():
    table = pd.DataFrame({"lists": [[1, 2], [3]]})
    with pytest.raises(TypeError, match="cannot keep column 'c0'"):
        chunk_bytes(table, {}, plan=PLAN, key="0-0")


def test_another_run_another_chunk_or_a_changed_value_is_refused():
    data = chunk_bytes(every_kind_of_column(), {}, plan=PLAN, key="0-1")
    with pytest.raises(Unusable, match="not this run's"):
        read_chunk(data, plan="b" * 64, key="0-1")
    with pytest.raises(Unusable, match="not this file's: it holds 0-1"):
        read_chunk(data, plan=PLAN, key="0-2")
    with np.load(io.BytesIO(data), allow_pickle=False) as stored:
        arrays = {name: stored[name] for name in stored.files}
    arrays["c4"] = arrays["c4"].copy()
    arrays["c4"][4] = 0.3  # one score changed, the header (and its checksum) kept
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    with pytest.raises(Unusable, match="checksum does not match"):
        read_chunk(buffer.getvalue(), plan=PLAN, key="0-1")
    for cut in (0, 10, len(data) // 2, len(data) - 1):
        with pytest.raises(Unusable, match="not a readable chunk"):
            read_chunk(data[:cut], plan=PLAN, key="0-1")


class Planted:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.mkdir, (str(self.marker),))


def test_a_pickle_inside_an_npz_is_never_loaded(tmp_path):
    marker = tmp_path / "ran"
    buffer = io.BytesIO()
    np.savez(buffer, header=np.frombuffer(b"{}", dtype=np.uint8), c0=np.array([Planted(marker)]))
    with pytest.raises(Unusable):
        read_chunk(buffer.getvalue(), plan=PLAN, key="0-0")
    assert not marker.exists()


def test_a_model_record_round_trips_and_refuses_what_is_not_its_own():
    record = {"name": "bert", "device": "cpu", "batch_size_used": 32, "load": {"dtype": None}}
    data = record_bytes(record, plan=PLAN, key="0-model")
    assert read_record(data, plan=PLAN, key="0-model") == record
    with pytest.raises(Unusable, match="not this file's"):
        read_record(data, plan=PLAN, key="1-model")
    with pytest.raises(Unusable, match="not a readable model record"):
        read_record(data[: len(data) // 2], plan=PLAN, key="0-model")
    changed = json.loads(data)
    changed["record"]["device"] = "cuda"
    with pytest.raises(Unusable, match="checksum does not match"):
        read_record(json.dumps(changed).encode(), plan=PLAN, key="0-model")
