"""The matrix type: written to plain files numpy and pandas read, read back exactly, and a
malformed directory refused in one line that names the file."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tacit.core.errors import TacitError
from tacit.structure import ConceptFeatureMatrix, Provenance, read_matrix


def example() -> ConceptFeatureMatrix:
    return ConceptFeatureMatrix(
        concepts=("bat_(animal)", "NA", "a, b"),  # names pandas would misread by default
        features=("has fur_hair", "null", "does fly"),
        values=np.array([[1.5, 0, 2], [0, 1e-300, 3], [np.pi, 4, 0]]),
        relations=("has", "is", "does"),
        feature_types=("visual perceptual", "encyclopaedic", "functional"),
        phrases=("has fur", "is null", "flies"),
        domains=("living", None, "nonliving"),
        categories=(None, "misc", "land animal"),
        provenance=Provenance(
            "norms", "/x/norms.dat", "ab" * 32, {"value": "pf", "subset": (1, 2)}
        ),
        left_out={"features none listed": ("has wings",), "pairs": ("bat: is x",)},
    )


def test_written_and_read_back_exactly(tmp_path):
    matrix = example()
    matrix.write(tmp_path / "m")
    again = read_matrix(tmp_path / "m")
    assert again == matrix
    assert again.values.tobytes() == matrix.values.tobytes()
    # plain files: numpy and pandas read them without tacit
    values = np.load(tmp_path / "m" / "matrix.npz", allow_pickle=False)["values"]
    assert np.array_equal(values, matrix.values)
    concepts = pd.read_csv(tmp_path / "m" / "concepts.csv", keep_default_na=False)
    assert list(concepts["concept"]) == list(matrix.concepts)
    record = json.loads((tmp_path / "m" / "matrix.json").read_text())
    assert record["left_out"]["features none listed"] == {"count": 1, "items": ["has wings"]}
    assert record["provenance"]["options"]["subset"] == [1, 2]


def test_select_and_the_table():
    matrix = example().select(["a, b", "NA"], ["does fly"])
    assert matrix.concepts == ("a, b", "NA") and matrix.values.tolist() == [[0.0], [3.0]]
    assert matrix.categories == ("land animal", "misc")
    assert matrix.table().loc["NA", "does fly"] == 3
    with pytest.raises(ValueError, match="no concept"):
        example().select(["owl"])


@pytest.mark.parametrize(
    "change, message",
    [
        ({"values": np.zeros((2, 3))}, "shape"),
        ({"values": np.full((3, 3), np.nan)}, "not finite"),
        ({"concepts": ("a", "a", "b")}, "occurs twice"),
        ({"relations": ("has",)}, "1 relations for 3 features"),
        ({"concepts": ("a", "", "b")}, "empty"),
    ],
)
def test_a_matrix_of_inconsistent_parts_is_refused(change, message):
    fields = {**example().__dict__, **change}
    with pytest.raises(ValueError, match=message):
        ConceptFeatureMatrix(**fields)


def break_json(path):
    path.write_text("{not json")


def wrong_format(path):
    path.write_text(json.dumps({"format": "something else"}))


def pickled_values(path):
    np.savez(path, values=np.array([[object()]], dtype=object))


def short_concepts(path):
    path.write_text("concept,domain,category\nbat_(animal),living,\n")


def wrong_columns(path):
    path.write_text("name,relation\nx,has\n")


def twice(path):
    path.write_text(
        "feature,relation,feature_type,phrase\na,has,x,has a\na,has,x,has a\nb,is,x,is b\n"
    )


def not_a_zip(path):
    path.write_bytes(b"PK\x03\x04 broken")


@pytest.mark.parametrize(
    "name, damage, message",
    [
        ("matrix.json", break_json, "not readable JSON"),
        ("matrix.json", wrong_format, "not a tacit concept-feature matrix record"),
        ("matrix.npz", pickled_values, "not a readable .npz"),
        ("matrix.npz", not_a_zip, "not a readable .npz"),
        ("concepts.csv", short_concepts, "1 rows; matrix.json says 3"),
        ("features.csv", wrong_columns, "columns name, relation"),
        ("features.csv", twice, "features.csv:3: feature 'a' occurs twice"),
    ],
)
def test_a_malformed_directory_is_one_line_naming_the_file(tmp_path, name, damage, message):
    example().write(tmp_path / "m")
    damage(tmp_path / "m" / name)
    with pytest.raises(TacitError, match=message) as caught:
        read_matrix(tmp_path / "m")
    assert "\n" not in str(caught.value)
    assert name in str(caught.value)


def test_missing_files_and_directories(tmp_path):
    with pytest.raises(TacitError, match="no such matrix directory"):
        read_matrix(tmp_path / "nowhere")
    example().write(tmp_path / "m")
    (tmp_path / "m" / "features.csv").unlink()
    with pytest.raises(TacitError, match="features.csv: missing"):
        read_matrix(tmp_path / "m")
