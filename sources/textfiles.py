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


def row_id(path: str, row: int) -> str:
    """The id of a record without an id field: its file's name (no suffixes) and its 0-based row in the file.

    >>> row_id("/data/billsum_test.parquet", 17)
    'billsum_test-17'
    """
    return f"{source_name(path)}-{row}"


def selected_rows(total: int, head: int | None, tail: int | None) -> range:
    """The rows kept of a file of ``total`` records: the first ``head``, the last ``tail``, or all.

    >>> selected_rows(10, 3, None), selected_rows(10, None, 3), selected_rows(2, None, 3)
    (range(0, 3), range(7, 10), range(0, 2))
    """
    if head is not None:
        return range(min(head, total))
    if tail is not None:
        return range(max(0, total - tail), total)
    return range(total)


def selected_parquet_records(
    path: str,
    id_field: str | None,
    text_field: str,
    source: str,
    head: int | None = None,
    tail: int | None = None,
) -> Iterator[dict | Rejected]:
    """The ``head`` first or ``tail`` last rows of one Parquet file (row groups outside them are not read);
    ``id_field`` None: ids from :func:`row_id`."""
    import pyarrow.parquet as pq

    handle = pq.ParquetFile(path)
    keep = selected_rows(handle.metadata.num_rows, head, tail)
    columns = [text_field] if id_field is None else [id_field, text_field]
    first = 0
    for group in range(handle.num_row_groups):
        rows = handle.metadata.row_group(group).num_rows
        begin, end = max(first, keep.start), min(first + rows, keep.stop)
        if begin < end:
            table = handle.read_row_group(group, columns=columns)
            texts = table.column(text_field).to_pylist()[begin - first : end - first]
            ids = (
                table.column(id_field).to_pylist()[begin - first : end - first]
                if id_field is not None
                else [row_id(path, r) for r in range(begin, end)]
            )
            for offset, (raw_id, text) in enumerate(zip(ids, texts, strict=True)):
                yield from text_document(raw_id, text, source, f"{path}: row {begin + offset}")
        first += rows


def selected_json_records(
    lines: Iterator[str],
    path: str,
    id_field: str | None,
    text_field: str,
    source: str,
    head: int | None = None,
    tail: int | None = None,
) -> Iterator[dict | Rejected]:
    """The ``head`` first or ``tail`` last non-empty lines of one JSONL file, read in order; ``id_field``
    None: ids from :func:`row_id` (the record's 0-based number among the file's non-empty lines)."""
    from collections import deque

    def numbered():
        row = 0
        for line in lines:
            if line.strip():
                yield row, line
                row += 1
                if head is not None and row >= head:
                    return

    chosen = deque(numbered(), maxlen=tail) if tail is not None else numbered()
    for row, line in chosen:
        if id_field is None:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                record = None
            if isinstance(record, dict):
                yield from text_document(row_id(path, row), record.get(text_field), source, path, record)
                continue
        yield from parse_json_line(line, path, id_field or "id", text_field, source)
