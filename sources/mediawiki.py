"""Streaming reader of MediaWiki XML export dumps (schema 0.3 to 0.11), memory flat in dump size.

Yields one small *page record* per ``<page>``: its metadata, the **lead** of its last revision's wikitext
(text before the first ``==`` heading, cut while reading, so long articles never sit in memory whole) and
the last :data:`TAIL_CHARS` characters of the text (where disambiguation templates live)::

    {"page_id": 12, "ns": 0, "title": "Anarchism", "redirect": None, "revision_id": 7, "timestamp": "...",
     "lead": "'''Anarchism''' is ...", "tail": "...[[Category:Anarchism]]", "dump": "enwiki-...bz2",
     "base": "https://en.wikipedia.org/wiki/"}

What it reads: ``.xml``, ``.xml.bz2`` (single- or multi-stream; ``.gz`` and ``.xz`` too), UTF-8 or UTF-16
(byte-order mark or ``<?xml encoding=...?>``), full-history files (the last ``<revision>`` wins), bare
``<page>`` fragments without a ``<mediawiki>`` root, and byte ranges of multistream dumps
(``*-multistream.xml.bz2`` with its ``*-index.txt.bz2``: see :func:`sources.bz2decode.multistream_ranges`).

Speed: ``.bz2`` is decompressed elsewhere while this thread parses, by the decoding layer shared by local and
remote dumps, :mod:`sources.bz2decode`: with ``threads > 1``, a local file by indexed_bzip2 in a child process
(which :func:`sources.bz2decode.start_decoder` can start early) and a byte range or remote file by
indexed_bzip2's block-parallel threads here; with one thread, by a thread running ``bz2`` (which releases the
GIL). Multistream byte ranges are planned there too (:func:`sources.bz2decode.multistream_ranges`). Pages of the shape MediaWiki writes are read by
:func:`sources.pagescan.scan_page`, which decodes only their metadata, lead and tail; ``xml.parsers.expat``
reads everything else (the prolog and ``<siteinfo>``, whatever lies between pages, and every page the fast
path declines) and is the reference the fast path is tested against (``SCAN_PAGES = False``: expat reads all).
Safety: DTD entity declarations and external entities are refused (no billion laughs, no file or network
access). Unusable input raises :class:`schemas.records.InputError` naming the file; junk after the closing
``</mediawiki>`` is ignored and counted.
"""

from __future__ import annotations

import codecs
import os
import re
from collections.abc import Callable, Iterator
from typing import BinaryIO
from xml.parsers import expat

from incoherent.schemas.records import InputError
from incoherent.sources.bz2decode import (
    PROBE_BYTES,
    Counter,
    _ByteRange,
    _bz2_chunks,
    _decompressed_chunks,
    _no_count,
    _open_raw,
    _parallel_bz2_chunks,
)
from incoherent.sources.limits import DEFAULT, Limits
from incoherent.sources.mediawiki_xml import PageHandler, SiteInfo, make_parser, parse_pages

# --------------------------------------------------------------------------------------------- bytes in


_DECLARATION = re.compile(rb"^\s*<\?xml[^>]*?encoding\s*=\s*[\"']([A-Za-z0-9._-]+)[\"']")


def detect_encoding(head: bytes) -> str:
    """Encoding of an XML document from its first bytes (BOM, UTF-16 pattern, or the declaration).

    >>> detect_encoding(b"\\xff\\xfe<\\x00m\\x00")
    'utf-16-le'
    """
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if head.startswith(codecs.BOM_UTF16_LE):
        return "utf-16-le"
    if head.startswith(codecs.BOM_UTF16_BE):
        return "utf-16-be"
    if head.startswith(b"\x00<\x00"):
        return "utf-16-be"
    if head.startswith(b"<\x00") and len(head) > 2 and head[2:3] != b"\x00":
        return "utf-16-le"
    match = _DECLARATION.match(head)
    if match:
        declared = match.group(1).decode("ascii").lower()
        try:
            return codecs.lookup(declared).name
        except LookupError:
            raise InputError(f"unknown XML encoding {declared!r}") from None
    return "utf-8"


def _transcode(chunks: Iterator[bytes], encoding: str, path: str) -> Iterator[bytes]:
    """Re-encode a byte stream in ``encoding`` as UTF-8 (expat is then told the input is UTF-8)."""
    decoder = codecs.getincrementaldecoder(encoding)(errors="strict")
    bom = encoding.startswith("utf-16")
    try:
        for chunk in chunks:
            text = decoder.decode(chunk)
            if bom:
                text = text.lstrip("\ufeff")
                bom = not text
            yield text.encode("utf-8")
        yield decoder.decode(b"", final=True).encode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{path}: not valid {encoding} ({exc.reason} at byte {exc.start} of a chunk)"
        ) from None


_PROLOG_SKIP = re.compile(rb"\s*(?:<\?.*?\?>|<!--.*?-->|<!DOCTYPE(?:[^\[>]|\[.*?\])*>)", re.S)
_FIRST_TAG = re.compile(rb"<([A-Za-z_][\w.:-]*)")


def _root_element(head: bytes) -> tuple[str | None, int]:
    """Name of the first element in ``head`` (UTF-8) and the offset where the prolog ends."""
    pos = 0
    while True:
        match = _PROLOG_SKIP.match(head, pos)
        if not match or match.end() == pos:
            break
        pos = match.end()
    rest = head[pos:].lstrip()
    start = len(head) - len(rest)
    tag = _FIRST_TAG.match(rest)
    return (tag.group(1).decode("utf-8", "replace") if tag else None), start


# --------------------------------------------------------------------------------------------- public


def _prepare(path: str, chunks: Iterator[bytes]) -> tuple[Iterator[bytes], bool]:
    """Detect the encoding and the root of a stream; returns UTF-8 chunks and whether it is a bare fragment."""
    head = b""
    buffered: list[bytes] = []
    for chunk in chunks:
        buffered.append(chunk)
        head += chunk
        if len(head) >= PROBE_BYTES:
            break
    if not head.strip():
        raise InputError(f"{path}: empty file, not a MediaWiki XML dump")
    try:
        encoding = detect_encoding(head[:1024])
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None

    def replay() -> Iterator[bytes]:
        yield from buffered
        yield from chunks

    if encoding == "utf-8-sig":
        buffered = [head[len(codecs.BOM_UTF8) :]]
        encoding = "utf-8"
    stream: Iterator[bytes] = replay()
    if encoding not in ("utf-8", "ascii"):
        stream = _transcode(stream, encoding, path)
    # Look at the (UTF-8) head again to find the root element.
    first: list[bytes] = []
    utf8_head = b""
    for chunk in stream:
        first.append(chunk)
        utf8_head += chunk
        if len(utf8_head) >= min(PROBE_BYTES, 4096) or not chunk:
            break
    root, start = _root_element(utf8_head[:PROBE_BYTES])
    if root is None:
        if b"\x00" in utf8_head[:1024] or not utf8_head.lstrip().startswith(b"<"):
            raise InputError(f"{path}: not XML (no MediaWiki <mediawiki> or <page> element at the start)")
        raise InputError(f"{path}: no root element found in the first {len(utf8_head)} bytes")
    local = root.rsplit(":", 1)[-1]
    if local not in ("mediawiki", "page"):
        raise InputError(f"{path}: root element <{root}> is not a MediaWiki dump (<mediawiki> or <page>)")
    fragment = local == "page"
    if fragment:
        joined = b"".join(first)
        first = [joined[:start], b"<mediawiki>", joined[start:]]

    def rest() -> Iterator[bytes]:
        yield from first
        yield from stream

    return rest(), fragment


def read_pages(
    path: str,
    *,
    opener: Callable[[str], BinaryIO] | None = None,
    count: Counter = _no_count,
    threads: int = 1,
    limits: Limits = DEFAULT,
) -> Iterator[dict]:
    """Page records of one dump file, in file order (see the module docstring for the fields).

    ``opener(path)`` opens the file as binary (default: local ``open``; pass Beam's ``FileSystems.open`` for
    ``gs://``). ``count(name, n)`` receives counters such as ``pages_read`` and ``trailing_junk_bytes``.
    A page over one of the ``limits`` comes with a ``rejected`` reason and its lead cut short.
    """
    raw = _open_raw(path, opener)
    with raw:
        chunks, fragment = _prepare(
            path, _decompressed_chunks(path, raw, count, threads, local=opener is None)
        )
        handler = PageHandler(os.path.basename(path), None, count, limits)
        if fragment:
            count("fragment_files", 1)
        yield from parse_pages(
            chunks, handler, path, suffix=b"</mediawiki>" if fragment else b"", count=count
        )


def read_siteinfo(
    path: str, *, opener: Callable[[str], BinaryIO] | None = None, limits: Limits = DEFAULT
) -> SiteInfo:
    """The ``<siteinfo>`` of a dump, reading only as far as the first page. Raises InputError for bad files.

    At most ``limits.max_header_bytes`` decompressed bytes are read: a header that runs on past them (a
    decompression bomb, or a file that is not a dump) is an InputError.
    """
    raw = _open_raw(path, opener)
    with raw:
        chunks, fragment = _prepare(path, _decompressed_chunks(path, raw, _no_count))
        handler = PageHandler(os.path.basename(path), None, _no_count)
        if fragment:
            chunks.close()
            return handler.site
        parser = make_parser(handler)
        read = 0
        try:
            for chunk in chunks:
                parser.Parse(chunk, False)
                if handler.siteinfo_done or handler.page is not None or handler.pages:
                    break
                read += len(chunk)
                if read > limits.max_header_bytes:
                    raise InputError(
                        "no <page> and no end of <siteinfo> in the first "
                        f"{limits.max_header_bytes >> 20} MiB of decompressed XML (a decompression bomb, "
                        "or not a MediaWiki dump)"
                    )
        except expat.ExpatError as exc:
            if handler.siteinfo_done or handler.root_closed:  # e.g. junk after </mediawiki>: read_pages copes
                return handler.site
            raise InputError(
                f"{path}: not well-formed XML ({expat.errors.messages[exc.code]}, line {exc.lineno})"
            ) from None
        except InputError as exc:
            raise InputError(f"{path}: {exc}") from None
        finally:
            chunks.close()  # stops the decompression thread before the file closes
        return handler.site


# --------------------------------------------------------------------------------------------- multistream


def read_range(
    path: str,
    start: int,
    end: int,
    site: SiteInfo,
    *,
    last: bool,
    threads: int = 1,
    opener: Callable[[str], BinaryIO] | None = None,
    count: Counter = _no_count,
    limits: Limits = DEFAULT,
) -> Iterator[dict]:
    """Page records of the bz2 streams in bytes ``[start, end)`` of a multistream dump.

    The streams hold bare ``<page>`` elements; the last range also holds the closing ``</mediawiki>``.
    With ``threads > 1`` their blocks are decompressed in parallel (see :func:`_parallel_bz2_chunks`);
    otherwise by one background thread.
    """
    raw = _open_raw(path, opener)
    where = f"{path} (bytes {start}-{end})"
    with raw:
        if threads > 1:
            chunks = _parallel_bz2_chunks(where, _ByteRange(raw, start, end), threads, False, count)
        else:
            raw.seek(start)
            chunks = _bz2_chunks(raw, path, count, limit=end - start)
        handler = PageHandler(os.path.basename(path), site, count, limits)
        handler.siteinfo_done = True
        prefix = iter([b"<mediawiki>"])

        def stream() -> Iterator[bytes]:
            yield from prefix
            yield from chunks

        yield from parse_pages(stream(), handler, where, suffix=b"" if last else b"</mediawiki>", count=count)
