import pytest

from incoherent.filters import data
from incoherent.schemas.records import InputError
from tests.tiny_model import intruder_rows, write_intruder_build


def _rows():
    docs = [(f"wsj:{i}", [f"S{i}a.", f"S{i}b.", f"S{i}c."]) for i in range(6)]
    return intruder_rows(docs)


def test_read_split_sorted_with_labels(tmp_path):
    write_intruder_build(str(tmp_path), {"train": _rows()[:4], "test": _rows()[4:]})
    rows = data.read_split(str(tmp_path), "train")
    assert [r["id"] for r in rows] == ["wsj:0", "wsj:1", "wsj:2", "wsj:3"]
    assert [r["label"] for r in rows] == [0, 1, 0, 1]
    assert all(r["intruder_index"] in (-1, 1, 2) for r in rows)
    assert data.available_splits(str(tmp_path)) == ["test", "train"]


def test_missing_split_and_missing_build(tmp_path):
    write_intruder_build(str(tmp_path), {"train": _rows()})
    with pytest.raises(InputError, match="no 'test' split.*found: train"):
        data.read_split(str(tmp_path), "test")
    with pytest.raises(InputError, match="no intruder-"):
        data.read_split(str(tmp_path / "intruder-wsj"), "train")


def test_carve_validation_is_deterministic():
    rows = [{"id": f"d{i}"} for i in range(30)]
    train, validation = data.carve_validation(rows)
    assert len(validation) == 3 and len(train) == 27
    again = data.carve_validation(list(reversed(rows)))[1]
    assert {r["id"] for r in again} == {r["id"] for r in validation}
