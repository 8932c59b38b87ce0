"""Plain-text collections (JSONL, Parquet) -> document rows.

>>> list(parse_json_line('{"id": 7, "text": "One. Two."}', "docs.jsonl", "id", "text", "news"))[0]["id"]
'news:7'
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import BinaryIO

from schemas.records import InputError, Rejected, document
from sources.paths import Files, expand_inputs
from sources.sentences import split_sentences

JSON_SUFFIXES = (".jsonl", ".json", ".jsonl.gz", ".json.gz", ".ndjson", ".jsonl.bz2")
PARQUET_SUFFIXES = (".parquet",)


def source_name(path: str) -> str:
    """Default source name of a file: its name without suffixes (``news.jsonl.gz`` -> ``news``)."""
    return os.path.basename(path).split(".", 1)[0]


def text_document(
    raw_id: object, text: object, source: str, origin: str, record: object = None
) -> Iterator[dict | Rejected]:
    """Validate the two fields of one record and sentence-split its text."""
    if raw_id is None or (isinstance(raw_id, str) and not raw_id.strip()):
        yield Rejected("missing_id", source=source, detail=origin, record=record)
        return
    if isinstance(raw_id, float) or not isinstance(raw_id, str | int):
        yield Rejected(
            "bad_id_type", source=source, detail=f"{origin}: id is {type(raw_id).__name__}", record=record
        )
        return
    doc_id = f"{source}:{raw_id}"
    if text is None:
        yield Rejected("missing_text", id=doc_id, source=source, detail=origin, record=record)
        return
    if not isinstance(text, str):
        yield Rejected(
            "bad_text_type", id=doc_id, source=source, detail=f"{origin}: text is {type(text).__name__}"
        )
        return
    sentences = split_sentences(text)
    if not sentences:
        yield Rejected("empty_text", id=doc_id, source=source, detail=origin, record=record)
        return
    yield document(doc_id, source, sentences, dump=os.path.basename(origin.split(": ", 1)[0]))


def parse_json_line(
    line: str, path: str, id_field: str, text_field: str, source: str
) -> Iterator[dict | Rejected]:
    """One JSONL line -> a document row or a Rejected (broken JSON, missing or mistyped fields, no text)."""
    if not line.strip():
        return
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        yield Rejected(
            "bad_json", source=source, detail=f"{path}: {exc.msg} at column {exc.colno}", record=line[:500]
        )
        return
    if not isinstance(record, dict):
        yield Rejected("not_an_object", source=source, detail=path, record=line[:500])
        return
    if id_field not in record:
        yield Rejected("missing_id", source=source, detail=f"{path}: no field {id_field!r}", record=record)
        return
    yield from text_document(record.get(id_field), record.get(text_field), source, path, record)


def list_inputs(paths: list[str], files: Files | None = None) -> list[str]:
    """Files to read: JSONL / Parquet files, directories expanded to those they hold (sorted)."""
    suffixes = JSON_SUFFIXES + PARQUET_SUFFIXES
    return expand_inputs(paths, suffixes, suffixes, ".jsonl[.gz] or .parquet", files)


def check_parquet_columns(path: str, id_field: str, text_field: str, handle: BinaryIO | None = None) -> None:
    """A Parquet file without the id or text column is unusable as a whole (``handle``: the file, opened)."""
    import pyarrow.parquet as pq

    try:
        names = pq.read_schema(handle if handle is not None else path).names
    except Exception as exc:  # pyarrow raises ArrowInvalid, OSError ...
        raise InputError(f"{path}: not a readable Parquet file ({exc})") from None
    for option, field in (("--id-field", id_field), ("--text-field", text_field)):
        if field not in names:
            raise InputError(f"{path}: no column {field!r} ({option}); columns are {names}")


def parquet_records(path: str, id_field: str, text_field: str, source: str) -> Iterator[dict | Rejected]:
    """Rows of one Parquet file, read a row group at a time."""
    import pyarrow.parquet as pq

    handle = pq.ParquetFile(path)
    for group in range(handle.num_row_groups):
        table = handle.read_row_group(group, columns=[id_field, text_field])
        for row_no, (raw_id, text) in enumerate(
            zip(table.column(0).to_pylist(), table.column(1).to_pylist(), strict=True)
        ):
            yield from text_document(raw_id, text, source, f"{path}: row group {group} row {row_no}")
