"""Plain-text collections (JSONL, Parquet) -> document rows.

>>> list(parse_json_line('{"id": 7, "text": "One. Two."}', "docs.jsonl", "id", "text", "news"))[0]["id"]
'news:7'
"""

from __future__ import annotations

import codecs
import json
import os
from collections.abc import Callable, Iterator
from typing import BinaryIO

from incoherent.fileio.paths import Files, expand_inputs, open_regular
from incoherent.schemas.records import InputError, Rejected, document
from incoherent.sources import parquet
from incoherent.sources.jsonline import has_lone_surrogate
from incoherent.sources.limits import DECOMPRESS_CHUNK, DEFAULT, Limits
from incoherent.sources.sentences import split_sentences

JSON_SUFFIXES = (".jsonl", ".json", ".jsonl.gz", ".json.gz", ".ndjson", ".jsonl.bz2")
PARQUET_SUFFIXES = (".parquet",)
COMPRESSED_SUFFIXES = (".gz", ".bz2")
RANGE_MB = 64  # bytes of an uncompressed JSONL file one task reads (--range-mb)


def source_name(path: str) -> str:
    """Default source name of a file: its name without suffixes (``news.jsonl.gz`` -> ``news``)."""
    return os.path.basename(path).split(".", 1)[0]


def text_document(
    raw_id: object,
    text: object,
    source: str,
    origin: str,
    record: object = None,
    limits: Limits = DEFAULT,
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
    if isinstance(raw_id, str) and has_lone_surrogate(raw_id):
        yield Rejected(
            "lone_surrogate", source=source, detail=f"{origin}: in the id", record=repr(raw_id)[:500]
        )
        return
    doc_id = f"{source}:{raw_id}"
    if len(doc_id) > 1000:  # a 5000-digit id: no document id is that long
        yield Rejected("id_too_long", source=source, detail=f"{origin}: {len(doc_id)} characters")
        return
    if text is None:
        yield Rejected("missing_text", id=doc_id, source=source, detail=origin, record=record)
        return
    if not isinstance(text, str):
        yield Rejected(
            "bad_text_type", id=doc_id, source=source, detail=f"{origin}: text is {type(text).__name__}"
        )
        return
    if has_lone_surrogate(text):
        yield Rejected("lone_surrogate", id=doc_id, source=source, detail=f"{origin}: in the text")
        return
    over = limits.over_text(len(text))
    if over:
        yield Rejected(over, id=doc_id, source=source, detail=f"{origin}: {len(text)} characters")
        return
    sentences = split_sentences(text)
    if not sentences:
        yield Rejected("empty_text", id=doc_id, source=source, detail=origin, record=record)
        return
    yield document(doc_id, source, sentences, dump=os.path.basename(origin.split(": ", 1)[0]))


def parse_json_line(
    line: str,
    path: str,
    id_field: str,
    text_field: str,
    source: str,
    limits: Limits = DEFAULT,
    fixed_id: str | None = None,
) -> Iterator[dict | Rejected]:
    """One JSONL line -> a document row or a Rejected (broken JSON, missing or mistyped fields, no text);
    ``fixed_id``: the record's id when records have no id field (``--row-ids``)."""
    if not line.strip():
        return
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        yield Rejected(
            "bad_json", source=source, detail=f"{path}: {exc.msg} at column {exc.colno}", record=line[:500]
        )
        return
    except RecursionError:
        yield Rejected("json_too_deep", source=source, detail=f"{path}: nested too deeply", record=line[:500])
        return
    except ValueError as exc:  # e.g. an integer of more than 4300 digits
        yield Rejected("bad_json", source=source, detail=f"{path}: {exc}"[:500], record=line[:500])
        return
    if not isinstance(record, dict):
        yield Rejected("not_an_object", source=source, detail=path, record=line[:500])
        return
    if fixed_id is not None:
        yield from text_document(fixed_id, record.get(text_field), source, path, record, limits)
        return
    if id_field not in record:
        yield Rejected("missing_id", source=source, detail=f"{path}: no field {id_field!r}", record=record)
        return
    yield from text_document(record.get(id_field), record.get(text_field), source, path, record, limits)


def open_text_file(path: str, opener: Callable[[str], BinaryIO] | None = None) -> BinaryIO:
    """The decompressed bytes of a JSONL file (``.gz`` and ``.bz2`` by suffix), read in bounded chunks."""
    raw = opener(path) if opener is not None else open_regular(path)
    if path.endswith(".gz"):
        import gzip

        return gzip.GzipFile(fileobj=raw)
    if path.endswith(".bz2"):
        import bz2

        return bz2.BZ2File(raw)
    return raw


_UTF16_32_BOMS = (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


def json_lines(
    path: str, stream: BinaryIO, max_line_bytes: int, chunk: int = DECOMPRESS_CHUNK
) -> Iterator[tuple[int, bytes | None, int]]:
    r"""``(line number, line bytes, length)`` of every line of ``stream``; a line longer than
    ``max_line_bytes`` comes as ``None`` (never held whole: time and memory are linear in its length).

    A UTF-16 or UTF-32 file (byte-order mark) is an InputError: JSONL is UTF-8. A UTF-8 byte-order mark
    is dropped; ``\r\n`` line ends are read as ``\n``.

    >>> import io
    >>> list(json_lines("f", io.BytesIO(b'{"a": 1}\r\nxxxxxxxxx\n{}'), 8, chunk=3))
    [(1, b'{"a": 1}', 8), (2, None, 9), (3, b'{}', 2)]
    """
    for line_no, (_, line, size) in enumerate(_lines(path, stream, max_line_bytes, chunk), 1):
        yield line_no, line, size


def range_lines(
    path: str,
    stream: BinaryIO,
    start: int,
    end: int | None,
    max_line_bytes: int,
    chunk: int = DECOMPRESS_CHUNK,
) -> Iterator[tuple[int, bytes | None, int]]:
    r"""``(byte offset, line bytes, length)`` of the lines of a seekable ``stream`` that start in bytes
    ``[start, end)`` (``end`` None: to the end of the file), as :func:`json_lines` reads them.

    The splittable-text rule: a line belongs to the range in which it starts, so ranges that tile a file
    read each line exactly once. A range that does not start at 0 skips to just after the first newline at
    or after ``start - 1``; the last line may run past ``end`` and is read to its end (over
    ``max_line_bytes``: skipped without being held, as in :func:`json_lines`).

    >>> import io
    >>> data = b'{"a": 1}\nxxxxxxxxxxxx\n{}\n'
    >>> [list(range_lines("f", io.BytesIO(data), s, e, 8, chunk=3)) for s, e in ((0, 5), (5, 10), (10, None))]
    [[(0, b'{"a": 1}', 8)], [(9, None, 12)], [(22, b'{}', 2)]]
    """
    if start > 0:
        stream.seek(start - 1)
        found = _after_newline(stream, start - 1, end, chunk)
        if found is None:
            return
        start = found
        stream.seek(start)
    yield from _lines(path, stream, max_line_bytes, chunk, start, end)


def _after_newline(stream: BinaryIO, pos: int, end: int | None, chunk: int) -> int | None:
    """The offset just after the first newline at or after ``pos`` (``stream`` is there), or None when that
    is at or past ``end`` or there is none: only bytes before ``end`` are read."""
    while end is None or pos < end - 1:
        data = stream.read(chunk if end is None else min(chunk, end - 1 - pos))
        if not data:
            return None
        found = data.find(b"\n")
        if found >= 0:
            return pos + found + 1
        pos += len(data)
    return None


def _lines(
    path: str,
    stream: BinaryIO,
    max_line_bytes: int,
    chunk: int,
    offset: int = 0,
    end: int | None = None,
) -> Iterator[tuple[int, bytes | None, int]]:
    """``(byte offset, line bytes or None, length)`` of the lines of ``stream``, which is at byte ``offset``
    of its file, up to the first line that starts at or after ``end`` (not read)."""
    parts: list[bytes] = []
    size = 0
    line_start = pos = offset  # pos: the file offset of data[0]
    first = offset == 0
    if end is not None and offset >= end:
        return
    try:
        while True:
            data = stream.read(chunk)
            if first and data:
                first = False
                if data.startswith(_UTF16_32_BOMS):
                    raise InputError(
                        f"{path}: UTF-16 or UTF-32 text (byte-order mark); JSONL files must be UTF-8"
                    )
                if data.startswith(codecs.BOM_UTF8):
                    data = data[len(codecs.BOM_UTF8) :]
                    pos = line_start = len(codecs.BOM_UTF8)
            if not data:
                break
            start = 0
            while True:
                newline = data.find(b"\n", start)
                piece = data[start:] if newline < 0 else data[start:newline]
                size += len(piece)
                if size <= max_line_bytes + 1:  # one more byte: a \r before the \n
                    parts.append(piece)
                if newline < 0:
                    break
                yield (line_start, *_line(parts, size, max_line_bytes))
                parts, size, start = [], 0, newline + 1
                line_start = pos + start
                if end is not None and line_start >= end:
                    return
            pos += len(data)
    except (OSError, EOFError) as exc:  # gzip / bz2 corruption, a cut-off file
        raise InputError(f"{path}: unreadable ({exc})") from None
    if size:
        yield (line_start, *_line(parts, size, max_line_bytes))


def _line(parts: list[bytes], size: int, max_line_bytes: int) -> tuple[bytes | None, int]:
    line = b"".join(parts) if size <= max_line_bytes + 1 else None
    if line is not None and line.endswith(b"\r"):
        line, size = line[:-1], size - 1
    if line is not None and size > max_line_bytes:
        line = None
    return line, size


def splittable(path: str) -> bool:
    """Whether a JSONL file can be read in byte ranges: uncompressed (gzip and bz2 streams cannot seek)."""
    return not path.endswith(COMPRESSED_SUFFIXES)


def plan_ranges(
    path: str, size_of: Callable[[str], int], range_bytes: int = RANGE_MB << 20
) -> list[tuple[str, int, int | None]]:
    """The read tasks ``(path, start, end)`` of one JSONL file (``end`` None: to the end of the file): byte
    ranges of ``range_bytes`` for an uncompressed file larger than that, else the whole file as one task.
    ``size_of`` (the file's size) is called only for uncompressed files.

    >>> plan_ranges("a.jsonl", lambda path: 250, 100)
    [('a.jsonl', 0, 100), ('a.jsonl', 100, 200), ('a.jsonl', 200, None)]
    >>> plan_ranges("a.jsonl.gz", lambda path: 250, 100), plan_ranges("b.jsonl", lambda path: 100, 100)
    ([('a.jsonl.gz', 0, None)], [('b.jsonl', 0, None)])
    """
    if not splittable(path):
        return [(path, 0, None)]
    size = size_of(path)
    if size <= range_bytes:
        return [(path, 0, None)]
    starts = range(0, size, range_bytes)
    return [(path, s, s + range_bytes if s + range_bytes < size else None) for s in starts]


def json_file_records(
    path: str,
    id_field: str,
    text_field: str,
    source: str,
    limits: Limits = DEFAULT,
    opener: Callable[[str], BinaryIO] | None = None,
    start: int = 0,
    end: int | None = None,
) -> Iterator[dict | Rejected]:
    """Document rows and Rejected records of the lines of one JSONL file that start in bytes ``[start, end)``
    (see :func:`range_lines`; a compressed file is read whole, :func:`json_lines`).

    A rejected line is located as ``PATH: byte N`` (the offset of its first byte) in an uncompressed file,
    whatever the ranges it is read in, and ``PATH: line N`` in a compressed one.
    """
    with open_text_file(path, opener) as stream:
        if splittable(path):
            located = (
                (f"{path}: byte {offset}", data, size)
                for offset, data, size in range_lines(path, stream, start, end, limits.max_record_bytes)
            )
        else:
            located = (
                (f"{path}: line {line_no}", data, size)
                for line_no, data, size in json_lines(path, stream, limits.max_record_bytes)
            )
        for where, data, size in located:
            line = decoded_line(data, size, where, source)
            if isinstance(line, Rejected):
                yield line
                continue
            yield from parse_json_line(line, where, id_field, text_field, source, limits)


def decoded_line(data: bytes | None, size: int, where: str, source: str) -> str | Rejected:
    """A line from :func:`json_lines` as text, or the Rejected record of one over the size limit (``data``
    None) or not UTF-8."""
    if data is None:
        return Rejected("record_too_large", source=source, detail=f"{where}: {size} bytes (--max-record-mb)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Rejected("not_utf8", source=source, detail=f"{where}: {exc}", record=data[:500].hex())


def list_inputs(paths: list[str], files: Files | None = None) -> list[str]:
    """Files to read: JSONL / Parquet files, directories expanded to those they hold (sorted)."""
    suffixes = JSON_SUFFIXES + PARQUET_SUFFIXES
    return expand_inputs(paths, suffixes, suffixes, ".jsonl[.gz] or .parquet", files)


def check_parquet_columns(path: str, id_field: str, text_field: str, handle: BinaryIO | None = None) -> None:
    """A Parquet file without the id or text column is unusable as a whole (``handle``: the file, opened)."""

    names = parquet.column_names(path, handle)
    for option, field in (("--id-field", id_field), ("--text-field", text_field)):
        if field not in names:
            raise InputError(f"{path}: no column {field!r} ({option}); columns are {names}")


def parquet_records(
    path: str, id_field: str, text_field: str, source: str, limits: Limits = DEFAULT
) -> Iterator[dict | Rejected]:
    """Rows of one Parquet file, read a row group at a time.

    A row group that cannot be decoded (a corrupt data page behind a valid footer) makes the file unusable:
    an InputError naming the file and the row group.
    """
    handle = parquet.open_file(path)
    for group in range(handle.num_row_groups):
        table = parquet.read_row_group(handle, path, group, [id_field, text_field])
        for row_no, (raw_id, text) in enumerate(
            zip(table.column(0).to_pylist(), table.column(1).to_pylist(), strict=True)
        ):
            yield from text_document(
                raw_id, text, source, f"{path}: row group {group} row {row_no}", limits=limits
            )


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
    limits: Limits = DEFAULT,
) -> Iterator[dict | Rejected]:
    """The ``head`` first or ``tail`` last rows of one Parquet file (row groups outside them are not read);
    ``id_field`` None: ids from :func:`row_id`."""
    handle = parquet.open_file(path)
    keep = selected_rows(handle.metadata.num_rows, head, tail)
    columns = [text_field] if id_field is None else [id_field, text_field]
    first = 0
    for group in range(handle.num_row_groups):
        rows = handle.metadata.row_group(group).num_rows
        begin, end = max(first, keep.start), min(first + rows, keep.stop)
        if begin < end:
            table = parquet.read_row_group(handle, path, group, columns)
            texts = table.column(text_field).to_pylist()[begin - first : end - first]
            ids = (
                table.column(id_field).to_pylist()[begin - first : end - first]
                if id_field is not None
                else [row_id(path, r) for r in range(begin, end)]
            )
            for offset, (raw_id, text) in enumerate(zip(ids, texts, strict=True)):
                yield from text_document(raw_id, text, source, f"{path}: row {begin + offset}", limits=limits)
        first += rows


def selected_json_records(
    stream: BinaryIO,
    path: str,
    id_field: str | None,
    text_field: str,
    source: str,
    head: int | None = None,
    tail: int | None = None,
    limits: Limits = DEFAULT,
) -> Iterator[dict | Rejected]:
    """The ``head`` first or ``tail`` last non-empty lines of one JSONL file, read in order in bounded chunks
    (:func:`json_lines`; ``tail`` keeps at most ``tail`` lines); ``id_field`` None: ids from :func:`row_id`
    (the record's 0-based number among the file's non-empty lines)."""
    from collections import deque

    def numbered():
        row = 0
        for line_no, data, size in json_lines(path, stream, limits.max_record_bytes):
            if data is not None and not data.strip():
                continue
            yield row, line_no, data, size
            row += 1
            if head is not None and row >= head:
                return

    chosen = deque(numbered(), maxlen=tail) if tail is not None else numbered()
    for row, line_no, data, size in chosen:
        line = decoded_line(data, size, f"{path}: line {line_no}", source)
        if isinstance(line, Rejected):
            yield line
            continue
        fixed_id = row_id(path, row) if id_field is None else None
        yield from parse_json_line(line, path, id_field or "id", text_field, source, limits, fixed_id)
