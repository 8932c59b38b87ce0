import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from incoherent.schemas.records import InputError
from incoherent.sources import parquet


def test_a_table_and_its_columns_are_read(tmp_path):
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"id": ["a", "b"], "text": ["x", "y"]}), path)
    assert parquet.read_table(str(path), columns=["id"]).to_pylist() == [{"id": "a"}, {"id": "b"}]
    assert parquet.column_names(str(path)) == ["id", "text"]
    with open(path, "rb") as handle:
        assert parquet.column_names(str(path), handle) == ["id", "text"]


@pytest.mark.parametrize("read", [parquet.read_table, parquet.column_names])
def test_a_file_that_is_not_parquet_is_one_input_error_naming_it(tmp_path, read):
    path = tmp_path / "broken.parquet"
    path.write_bytes(b"not parquet at all")
    with pytest.raises(InputError, match=r"broken\.parquet: not a readable Parquet file"):
        read(str(path))


def test_selected_rows_of_a_file_that_is_not_parquet_are_one_input_error(tmp_path):
    from incoherent.sources.textfiles import selected_parquet_records

    path = tmp_path / "broken.parquet"
    path.write_bytes(b"not parquet at all")
    with pytest.raises(InputError, match=r"broken\.parquet: not a readable Parquet file"):
        list(selected_parquet_records(str(path), None, "text", "s", head=3))
