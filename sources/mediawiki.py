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
(``*-multistream.xml.bz2`` with its ``*-index.txt.bz2``: see :func:`multistream_ranges`).

Speed: ``.bz2`` is decompressed elsewhere while this thread parses: with ``threads > 1``, a local file by
indexed_bzip2 in a child process (:class:`_DecoderProcess`, which :func:`start_decoder` can start early) and a
byte range or remote file by indexed_bzip2's block-parallel threads here; with one thread, by a thread running
``bz2`` (which releases the GIL). Pages of the shape MediaWiki writes are read by
:func:`sources.pagescan.scan_page`, which decodes only their metadata, lead and tail; ``xml.parsers.expat``
reads everything else (the prolog and ``<siteinfo>``, whatever lies between pages, and every page the fast
path declines) and is the reference the fast path is tested against (``SCAN_PAGES = False``: expat reads all).
Safety: DTD entity declarations and external entities are refused (no billion laughs, no file or network
access). Unusable input raises :class:`schemas.records.InputError` naming the file; junk after the closing
``</mediawiki>`` is ignored and counted.
"""

from __future__ import annotations

import atexit
import bisect
import bz2
import codecs
import io
import os
import queue
import re
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import BinaryIO
from xml.parsers import expat

from schemas.records import InputError
from sources.pagescan import TAIL_CHARS, has_markup, scan_page, to_int

READ_CHUNK = 1 << 17  # compressed bytes per read
EXPAT_BUFFER = 1 << 16  # character data handed to Python in pieces of up to this size
QUEUE_CHUNKS = 8  # decompressed chunks buffered between the threads (memory bound)
PROBE_BYTES = 1 << 16
# Multistream: aim for ranges of about this many compressed bytes, and for at least MIN_RANGES ranges.
RANGE_BYTES = 4 << 20
MIN_RANGES = 16
PARALLEL_CHUNK = 1 << 19  # decompressed bytes per read from the parallel decoder
MAX_SCANNED_PAGE = 64 << 20  # a page not closed within this many bytes streams through expat instead
SCAN_PAGES = True  # read pages with sources.pagescan where it can (False: expat reads everything)

BZ2_GARBAGE = "bz2_trailing_garbage_bytes"  # counter: non-bz2 bytes after a file's last stream (ignored)

DEFAULT_NAMESPACES = {
    "media": -2, "special": -1, "talk": 1, "user": 2, "user talk": 3, "wikipedia": 4, "wikipedia talk": 5,
    "project": 4, "file": 6, "image": 6, "file talk": 7, "mediawiki": 8, "mediawiki talk": 9, "template": 10,
    "template talk": 11, "help": 12, "help talk": 13, "category": 14, "category talk": 15, "portal": 100,
    "portal talk": 101, "draft": 118, "draft talk": 119, "module": 828, "module talk": 829,
}  # fmt: skip
DEFAULT_BASE = "https://en.wikipedia.org/wiki/"

Counter = Callable[[str, int], None]


def _no_count(name: str, n: int = 1) -> None:
    pass


@dataclass
class SiteInfo:
    """What ``<siteinfo>`` says: the article URL prefix, the wiki's name and its namespace names."""

    base: str | None = None  # e.g. "https://en.wikipedia.org/wiki/" (from <base>, without the main page)
    dbname: str | None = None
    namespaces: dict[str, int] = field(default_factory=dict)  # lower-cased name -> key

    def namespace_of(self, title: str) -> int:
        """Namespace from a title prefix, for schema 0.3 dumps without ``<ns>``: ``"Talk:Pear" -> 1``."""
        if ":" not in title:
            return 0
        prefix = title.split(":", 1)[0].strip().lower().replace("_", " ")
        names = self.namespaces or DEFAULT_NAMESPACES
        return names.get(prefix, 0)


def base_url(base: str | None) -> str | None:
    """``"https://en.wikipedia.org/wiki/Main_Page" -> "https://en.wikipedia.org/wiki/"``."""
    if not base:
        return None
    return base.rsplit("/", 1)[0] + "/" if "/" in base else base


# --------------------------------------------------------------------------------------------- bytes in


def _open_raw(path: str, opener: Callable[[str], BinaryIO] | None) -> BinaryIO:
    if opener is not None:
        return opener(path)
    if not os.path.exists(path):
        raise InputError(f"{path}: no such file")
    if os.path.isdir(path):
        raise InputError(f"{path}: is a directory, not a dump file")
    return open(path, "rb")


def _bz2_worker(raw: BinaryIO, name: str, out: queue.Queue, stop: threading.Event, limit: int | None) -> None:
    """Decompress every bz2 stream of ``raw`` (up to ``limit`` bytes) into ``out``; errors go to ``out`` too."""

    def put(item) -> bool:
        while not stop.is_set():
            try:
                out.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    try:
        decomp = bz2.BZ2Decompressor()
        fed = False  # the current decompressor has had input
        streams = 0
        compressed = _plain_chunks(raw, limit)
        for data in compressed:
            if stop.is_set():
                break
            junk = False
            while data:
                try:
                    chunk = decomp.decompress(data)
                except OSError:
                    if streams:  # bytes after the last stream that are not bz2: ignore them, as bzip2 does
                        put(("junk", len(data) + sum(len(more) for more in compressed)))
                        junk = True
                        break
                    put(InputError(f"{name}: not a bz2 file (invalid bz2 data)"))
                    return
                fed = True
                if chunk and not put(chunk):
                    return
                if decomp.eof:
                    streams += 1
                    data = decomp.unused_data
                    decomp = bz2.BZ2Decompressor()
                    fed = False
                else:
                    data = b""
            if junk:
                break
        if fed and not decomp.eof:
            put(
                InputError(
                    f"{name}: truncated bz2 file (compressed data ends before the end-of-stream marker)"
                )
            )
            return
        if not streams and not stop.is_set():
            put(InputError(f"{name}: empty file"))
            return
        put(None)
    except BaseException as exc:  # handed to the reading thread, which raises it
        put(exc)


def _bz2_chunks(raw: BinaryIO, name: str, count: Counter, limit: int | None = None) -> Iterator[bytes]:
    """Decompressed chunks of a (multi-stream) bz2 file, decompressed in a background thread."""
    out: queue.Queue = queue.Queue(maxsize=QUEUE_CHUNKS)
    stop = threading.Event()
    worker = threading.Thread(target=_bz2_worker, args=(raw, name, out, stop, limit), daemon=True)
    worker.start()
    try:
        while True:
            item = out.get()
            if item is None:
                return
            if isinstance(item, tuple):
                count(BZ2_GARBAGE, item[1])
                continue
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        worker.join()


# --------------------------------------------------------------------------------------------- parallel bz2


class _ByteRange(io.RawIOBase):
    """Bytes ``[start, end)`` of a seekable binary file, as a seekable file of their own."""

    def __init__(self, raw: BinaryIO, start: int, end: int):
        super().__init__()
        self._raw, self._start, self._size, self._pos = raw, start, end - start, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buffer) -> int:
        want = min(len(buffer), self._size - self._pos)
        if want <= 0:
            return 0
        self._raw.seek(self._start + self._pos)
        data = self._raw.read(want)
        buffer[: len(data)] = data
        self._pos += len(data)
        return len(data)


def _is_bz2_head(head: bytes) -> bool:
    """``BZh`` and a block size digit: the start of a bz2 stream."""
    return head[:3] == b"BZh" and b"1" <= head[3:4] <= b"9"


def _corrupt(path: str) -> InputError:
    return InputError(
        f"{path}: truncated bz2 file or corrupt bz2 data (compressed data ends before the "
        "end-of-stream marker, or a block fails its checksum)"
    )


def _bytes_after_last_stream(size: int, last_offset: int | None, serial: bool) -> int:
    """Bytes of a ``size``-byte file after its last bz2 stream, from indexed_bzip2's last block offset (bits).

    The parallel reader's last offset is where the last stream ends; the serial reader's is the start of its
    end-of-stream marker, which is 80 bits long.
    """
    if last_offset is None:
        return 0
    return max(0, size - -(-(last_offset + (80 if serial else 0)) // 8))


def _check_bz2_head(path: str, head: bytes) -> None:
    """One-line errors for a file indexed_bzip2 would silently read as empty."""
    if not head:
        raise InputError(f"{path}: empty file")
    if not _is_bz2_head(head):
        raise InputError(f"{path}: not a bz2 file (invalid bz2 data)")


def _parallel_bz2_chunks(
    path: str, raw: BinaryIO, threads: int, local: bool, count: Counter = _no_count
) -> Iterator[bytes]:
    """Decompressed bytes of a bz2 file (one stream or many), decoded block by block by ``threads`` threads.

    indexed_bzip2 finds the bz2 *blocks* (not just the streams) and decodes them in parallel, in C++ threads
    that run without the GIL, so even a single-stream dump is decompressed on every core while this thread
    parses; its decoder is also faster per core than libbz2. A ``local`` file is opened again by path (read
    without the GIL); anything else is read through ``raw``, which must be seekable. Bytes after the last
    stream that are not bz2 are ignored, as ``bzip2`` does (indexed_bzip2 warns on stderr), and counted.
    """
    import indexed_bzip2

    _check_bz2_head(path, raw.read(4))
    size = raw.seek(0, io.SEEK_END)
    raw.seek(0)
    reader = indexed_bzip2.open(path if local else raw, parallelization=threads)
    _OPEN_READERS.add(reader)
    try:
        while True:
            try:
                data = reader.read(PARALLEL_CHUNK)
            except RuntimeError:  # indexed_bzip2 reports a cut-off or damaged block as std::exception
                raise _corrupt(path) from None
            if not data:
                garbage = _bytes_after_last_stream(
                    size, max(reader.block_offsets(), default=None), threads == 1
                )
                if garbage > 0:
                    count(BZ2_GARBAGE, garbage)
                return
            yield data
    finally:
        reader.close()
        _OPEN_READERS.discard(reader)


# indexed_bzip2 aborts the interpreter when a reader's threads still run at exit (say, a generator that was
# never finished): close every open reader first.
_OPEN_READERS: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _close_readers() -> None:
    for reader in list(_OPEN_READERS):
        reader.close()


# A decoder process: indexed_bzip2 decompresses a local file and writes the bytes to a pipe; its last line on
# stderr is a JSON status (the last block offset, for the garbage count, or the error).
DECODER_PROCESS = True  # False: decode in threads of this process (_parallel_bz2_chunks)
_DECODER = r"""
import json, sys
import indexed_bzip2
path, threads = sys.argv[1], int(sys.argv[2])
out = sys.stdout.buffer
try:
    reader = indexed_bzip2.open(path, parallelization=threads)
    try:
        while True:
            data = reader.read(1 << 20)
            if not data:
                break
            out.write(data)
        out.flush()
        last = max(reader.block_offsets(), default=None)
    finally:
        reader.close()
except RuntimeError as exc:
    sys.stderr.write("\n" + json.dumps({"error": str(exc)}) + "\n")
    sys.exit(3)
except BrokenPipeError:
    sys.exit(0)
sys.stderr.write("\n" + json.dumps({"last_offset": last}) + "\n")
"""
_SET_PIPE_SIZE = 1031  # fcntl.F_SETPIPE_SZ on Linux
QUEUE_BYTES = 192 << 20  # decoded bytes a decoder process may run ahead of the parser (~2 s of decoding)


class _DecoderProcess:
    """indexed_bzip2 decoding a local bz2 file in a child process, and a thread that drains its pipe.

    ``threads`` is the read's: the child decodes with one fewer, leaving a core to the parser. The thread keeps up to ``QUEUE_BYTES`` of decoded XML queued, so the child never waits for the parser,
    and a decoder started before the parser is ready (:func:`start_decoder`) works meanwhile.
    """

    def __init__(self, path: str, threads: int):
        import subprocess
        import sys
        import tempfile

        self.path = path
        self.size = os.path.getsize(path)
        self.errors = tempfile.TemporaryFile()
        self.serial = threads <= 2
        self.child = subprocess.Popen(
            [sys.executable, "-c", _DECODER, path, str(max(1, threads - 1))],
            stdout=subprocess.PIPE,
            stderr=self.errors,
        )
        try:
            import fcntl

            fcntl.fcntl(self.child.stdout.fileno(), _SET_PIPE_SIZE, 1 << 20)
        except (ImportError, OSError):  # another platform, or a lower limit: the default pipe works too
            pass
        self.queue: queue.Queue = queue.Queue(maxsize=max(1, QUEUE_BYTES // PARALLEL_CHUNK))
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._drain, name="bz2-decoder-pipe", daemon=True)
        self.thread.start()
        _DECODERS.add(self)

    def _drain(self) -> None:
        try:
            while not self.stop.is_set():
                data = self.child.stdout.read(PARALLEL_CHUNK)
                while not self.stop.is_set():
                    try:
                        self.queue.put(data, timeout=0.2)
                        break
                    except queue.Full:
                        continue
                if not data:
                    return
        except (OSError, ValueError):  # the pipe was closed: the reader gave up
            pass

    def chunks(self, count: Counter = _no_count) -> Iterator[bytes]:
        try:
            while True:
                data = self.queue.get()
                if not data:
                    break
                yield data
            self.child.wait()
            self.errors.seek(0)
            status = _last_json(self.errors.read().decode("utf-8", "replace").strip().splitlines())
            if self.child.returncode != 0 or status is None or "error" in status:
                raise _corrupt(self.path)
            garbage = _bytes_after_last_stream(self.size, status["last_offset"], self.serial)
            if garbage > 0:
                count(BZ2_GARBAGE, garbage)
        finally:
            self.close()

    def close(self) -> None:
        self.stop.set()
        if self.child.poll() is None:
            self.child.kill()
        self.child.wait()
        self.thread.join()
        self.child.stdout.close()
        self.errors.close()
        _DECODERS.discard(self)


_DECODERS: weakref.WeakSet = weakref.WeakSet()
_STARTED: dict[tuple, _DecoderProcess] = {}
_STARTED_LOCK = threading.Lock()


@atexit.register
def _stop_decoders() -> None:
    for decoder in list(_DECODERS):
        decoder.close()


def _decoder_key(path: str, threads: int) -> tuple | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return os.path.realpath(path), stat.st_size, stat.st_mtime_ns, threads


def start_decoder(path: str, threads: int) -> bool:
    """Start decompressing a local ``.bz2`` dump now, for a :func:`read_pages` of it (same ``threads``) later.

    ``incoherent ingest wikipedia`` calls this before it imports Beam (1.3-1.9 s on one core): the decoder,
    the slower of the two processes, starts that much earlier. The first read of the file in this process
    takes the decoder over; reads in other processes are not affected. Returns whether one started (local
    bz2 files read with ``threads > 1``).
    """
    key = _decoder_key(path, threads)
    if key is None or threads < 2 or not DECODER_PROCESS or not path.lower().endswith(".bz2"):
        return False
    with open(path, "rb") as f:
        if not _is_bz2_head(f.read(4)):
            return False  # the read reports what is wrong with the file
    with _STARTED_LOCK:
        if key not in _STARTED:
            _STARTED[key] = _DecoderProcess(path, threads)
    return True


def stop_started_decoders() -> None:
    """Stop the decoders :func:`start_decoder` started that no read took over."""
    with _STARTED_LOCK:
        left = list(_STARTED.values())
        _STARTED.clear()
    for decoder in left:
        decoder.close()


def _process_bz2_chunks(
    path: str, raw: BinaryIO, threads: int, count: Counter = _no_count
) -> Iterator[bytes]:
    """Decompressed bytes of a local bz2 file, decoded by indexed_bzip2 in a child process.

    With the parser in this process and the decoder in another, two cores hold exactly two busy processes.
    Decoder threads inside this process compete with the parsing thread for the same cores (three busy threads
    on two cores), and indexed_bzip2's threads then cost more CPU than they do alone. One serial decoder
    (``threads`` is the read's, the child gets one fewer) is also indexed_bzip2's cheapest mode per byte.
    """
    _check_bz2_head(path, raw.read(4))
    key = _decoder_key(path, threads)
    with _STARTED_LOCK:
        decoder = _STARTED.pop(key, None) if key is not None else None
    if decoder is None:
        decoder = _DecoderProcess(path, threads)
    return decoder.chunks(count)


def _last_json(lines: list[str]) -> dict | None:
    import json

    for line in reversed(lines):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                return None
    return None


def _plain_chunks(raw: BinaryIO, limit: int | None = None) -> Iterator[bytes]:
    left = limit
    while True:
        size = READ_CHUNK if left is None else min(READ_CHUNK, left)
        data = raw.read(size) if size else b""
        if not data:
            return
        if left is not None:
            left -= len(data)
        yield data


def _decompressed_chunks(
    path: str, raw: BinaryIO, count: Counter, threads: int = 1, local: bool = True
) -> Iterator[bytes]:
    name = os.path.basename(path)
    lower = name.lower()
    if lower.endswith(".bz2"):
        if threads > 1 and local and DECODER_PROCESS:
            return _process_bz2_chunks(path, raw, threads, count)
        if threads > 1:
            return _parallel_bz2_chunks(path, raw, threads, local, count)
        return _bz2_chunks(raw, path, count)
    if lower.endswith(".gz"):
        import gzip

        return _wrap_errors(_plain_chunks(gzip.GzipFile(fileobj=raw)), path)
    if lower.endswith((".xz", ".lzma")):
        import lzma

        return _wrap_errors(_plain_chunks(lzma.LZMAFile(raw)), path)
    if lower.endswith((".7z", ".zip", ".zst")):
        raise InputError(
            f"{path}: {lower.rsplit('.', 1)[1]} archives are not read; "
            "extract the .xml (or recompress it as .bz2, .gz or .xz) first"
        )
    return _plain_chunks(raw)


def _wrap_errors(chunks: Iterator[bytes], path: str) -> Iterator[bytes]:
    import lzma

    try:
        yield from chunks
    except EOFError:
        raise InputError(f"{path}: truncated compressed file") from None
    except (OSError, lzma.LZMAError) as exc:
        raise InputError(f"{path}: cannot decompress ({exc})") from None


# --------------------------------------------------------------------------------------------- encoding


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


# --------------------------------------------------------------------------------------------- expat


class _Handler:
    """expat callbacks that turn the element stream into page records (see the module docstring)."""

    def __init__(self, dump: str, site: SiteInfo | None, count: Counter):
        self.dump = dump
        self.site = site or SiteInfo()
        self.count = count
        self.pages: list[dict] = []
        self.depth = 0
        self.root_closed = False
        self.in_siteinfo = False
        self.siteinfo_done = site is not None
        self.stack: list[str] = []
        self.capture: list[str] | None = None
        self.namespace_key: int | None = None
        self.page: dict | None = None
        self.revision: dict | None = None
        # text of the current revision
        self.in_text = False
        self.lead_parts: list[str] = []
        self.lead_len = 0
        self.lead_cut: int | None = None
        self.carry = ""
        self.tail = ""
        self.text_chars = 0

    # -- element events
    def start(self, name: str, attrs: dict) -> None:
        self.depth += 1
        parent = self.stack[-1] if self.stack else ""
        self.stack.append(name)
        if name == "page":
            self.page = {"page_id": None, "ns": None, "title": None, "redirect": None}
            self.revision = None
        elif self.page is not None:
            if name == "revision" and parent == "page":
                self.revision = {"revision_id": None, "timestamp": None}
                self._reset_text()
            elif name == "text" and self.revision is not None:
                self.in_text = True
                self._reset_text()
            elif name in ("title", "ns") and parent == "page":
                self.capture = []
            elif name == "id" and parent in ("page", "revision"):
                self.capture = []
            elif name == "timestamp" and parent == "revision":
                self.capture = []
            elif name == "redirect" and parent == "page":
                self.page["redirect"] = attrs.get("title", "")
        elif name == "siteinfo":
            self.in_siteinfo = True
        elif self.in_siteinfo and name in ("base", "dbname"):
            self.capture = []
        elif self.in_siteinfo and name == "namespace":
            self.capture = []
            try:
                self.namespace_key = int(attrs.get("key", ""))
            except ValueError:
                self.namespace_key = None

    def end(self, name: str) -> None:
        self.depth -= 1
        self.stack.pop()
        parent = self.stack[-1] if self.stack else ""
        if self.depth == 0:
            self.root_closed = True
        value = None
        if self.capture is not None:
            value = "".join(self.capture)
            self.capture = None
        if self.page is not None:
            if name == "page":
                self._finish_page()
            elif name == "text" and self.in_text:
                self.in_text = False
                self._finish_text()
            elif name == "title" and parent == "page":
                self.page["title"] = value
            elif name == "ns" and parent == "page":
                self.page["ns"] = to_int(value)
            elif name == "id" and parent == "page":
                self.page["page_id"] = to_int(value)
            elif name == "id" and parent == "revision" and self.revision is not None:
                self.revision["revision_id"] = to_int(value)
            elif name == "timestamp" and parent == "revision" and self.revision is not None:
                self.revision["timestamp"] = value
        elif self.in_siteinfo:
            if name == "siteinfo":
                self.in_siteinfo = False
                self.siteinfo_done = True
            elif name == "base":
                self.site.base = base_url(value)
            elif name == "dbname":
                self.site.dbname = value
            elif name == "namespace" and self.namespace_key is not None and value:
                self.site.namespaces[value.strip().lower()] = self.namespace_key

    def data(self, text: str) -> None:
        if self.in_text:
            self._text(text)
        elif self.capture is not None:
            self.capture.append(text)

    # -- wikitext of the current revision, cut to its lead while it streams in
    def _reset_text(self) -> None:
        self.lead_parts = []
        self.lead_len = 0
        self.lead_cut = None
        self.carry = ""
        self.tail = ""
        self.text_chars = 0

    def _text(self, text: str) -> None:
        self.text_chars += len(text)
        if self.lead_cut is None:
            # a heading is "==" at the start of the text or after a newline; pieces can split either
            probe = self.carry + text
            offset = self.lead_len - len(self.carry)  # where the probe starts in the text
            if offset == 0 and probe.startswith("=="):
                self.lead_cut = 0
            else:
                newline = probe.find("\n==")
                if newline >= 0:
                    self.lead_cut = offset + newline + 1
            self.lead_parts.append(text)
            self.lead_len += len(text)
            self.carry = probe[-2:]
        self.tail = text[-TAIL_CHARS:] if len(text) >= TAIL_CHARS else (self.tail + text)[-TAIL_CHARS:]

    def _finish_text(self) -> None:
        full = "".join(self.lead_parts)
        if self.lead_cut is None:
            lead, tail = full, ""
        else:
            lead = full[: self.lead_cut]
            after = self.text_chars - self.lead_cut
            tail = self.tail[max(0, len(self.tail) - after) :]
        self.revision["lead"] = lead
        self.revision["tail"] = tail
        self.lead_parts = []

    def _finish_page(self) -> None:
        page, revision = self.page, self.revision or {}
        self.page = self.revision = None
        self.add(
            {
                "page_id": page["page_id"],
                "ns": page["ns"],
                "title": page["title"] or "",
                "redirect": page["redirect"],
                "revision_id": revision.get("revision_id"),
                "timestamp": revision.get("timestamp"),
                "lead": revision.get("lead", ""),
                "tail": revision.get("tail", ""),
            }
        )

    def add(self, fields: dict) -> None:
        """Complete a page's fields (from expat or :func:`sources.pagescan.scan_page`) into its record."""
        if fields["ns"] is None:  # schema 0.3 has no <ns>: the title's prefix says
            fields["ns"] = self.site.namespace_of(fields["title"])
        fields["dump"] = self.dump
        fields["base"] = self.site.base or DEFAULT_BASE
        self.count("pages_read", 1)
        self.pages.append(fields)

    def between_pages(self) -> bool:
        """Inside the root, outside any page: where a whole ``<page>`` may be read by the fast path."""
        return self.depth == 1 and self.page is None and not self.in_siteinfo and not self.root_closed


def _refuse_entity(name, is_parameter_entity, value, base, system_id, public_id, notation_name):
    kind = "external" if system_id or public_id else "internal"
    raise InputError(f"DTD declares {kind} entity {name!r}; entity declarations are refused")


def _refuse_external(context, base, system_id, public_id):
    raise InputError(f"external entity reference ({system_id}) refused")


def _make_parser(handler: _Handler) -> expat.XMLParserType:
    parser = expat.ParserCreate(encoding="UTF-8")
    parser.buffer_text = True
    parser.buffer_size = EXPAT_BUFFER
    parser.ordered_attributes = False
    parser.StartElementHandler = handler.start
    parser.EndElementHandler = handler.end
    parser.CharacterDataHandler = handler.data
    parser.EntityDeclHandler = _refuse_entity
    parser.ExternalEntityRefHandler = _refuse_external
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    return parser


_DECLARATION_ONLY = re.compile(rb"\s*<\?xml[^>]*\?>")


def _plain_prolog(prolog: bytes) -> bool:
    """True when the bytes before the first page hold no comment, PI, DOCTYPE or CDATA (an XML declaration
    at the start aside): then the first ``<page>`` found with ``bytes.find`` is an element of the root."""
    declaration = _DECLARATION_ONLY.match(prolog)
    return not has_markup(prolog, declaration.end() if declaration else 0, len(prolog))


def _parse(
    chunks: Iterable[bytes],
    handler: _Handler,
    path: str,
    *,
    suffix: bytes = b"",
    count: Counter = _no_count,
    scan: bool | None = None,
) -> Iterator[dict]:
    """Parse a UTF-8 stream and yield page records as they complete. ``suffix`` is fed before the end.

    With ``scan``, each ``<page>`` element that :func:`sources.pagescan.scan_page` can read is read by it
    (most of them, far faster); expat gets everything else, and the pages read that way as white space of
    the same shape, so it still checks the document around them and stays the reference for every page the
    fast path declines. Pages longer than ``MAX_SCANNED_PAGE`` (full-history files) and everything after
    a comment, processing instruction or DOCTYPE outside a page go to expat as they stream.
    """
    parser = _make_parser(handler)
    chunks = iter(chunks)
    scan = SCAN_PAGES if scan is None else scan
    fed = 0  # bytes given to expat
    unfed = 0  # bytes of the scanning buffer that expat has not been given yet (for the junk count)
    skipped = 0  # bytes of pages read by the fast path, which expat never sees
    skips: list[tuple[int, int]] = []  # (expat's byte index, bytes skipped before it), where skipped grows

    def feed(data: bytes) -> None:
        nonlocal fed
        fed += len(data)
        parser.Parse(data, False)

    def skip(n: int) -> None:
        nonlocal skipped
        skipped += n
        skips.append((fed, skipped))

    try:
        buffer, prolog, retry_at = b"", True, 0
        for chunk in chunks:
            if not scan:
                unfed = 0
                feed(chunk)
            else:
                buffer = buffer + chunk if buffer else chunk
                pos = 0
                while True:
                    start = buffer.find(b"<page>", pos)
                    if start < 0:
                        keep = max(pos, len(buffer) - len(b"<page>"))  # a tag cut by the chunk boundary
                        unfed = len(buffer) - keep
                        feed(buffer[pos:keep])
                        pos = keep
                        break
                    if pos < start:
                        if prolog:
                            scan = plain = _plain_prolog(buffer[pos:start])
                        else:
                            plain = buffer[pos:start].isspace()
                            if not plain and has_markup(buffer, pos, start):
                                scan = False
                        unfed = len(buffer) - start
                        if plain and not prolog:
                            skip(start - pos)  # white space between pages: nothing for expat
                        else:
                            feed(buffer[pos:start])
                    else:
                        plain = True
                    prolog = False
                    if not scan or handler.root_closed:
                        scan, unfed = False, 0
                        feed(buffer[start:])
                        pos = len(buffer)
                        break
                    fields, end = None, 0
                    if plain and len(buffer) >= retry_at and handler.between_pages():
                        fields, end = scan_page(buffer, start, len(buffer))
                    if fields is None:
                        close = buffer.find(b"</page>", start)
                        if close < 0:  # the page goes on in the next chunks
                            if len(buffer) - start > MAX_SCANNED_PAGE:
                                scan, unfed = False, 0
                                feed(buffer[start:])
                                pos = len(buffer)
                            else:
                                pos = start
                                retry_at = 2 * (len(buffer) - start)
                            break
                        end = close + len(b"</page>")
                        unfed = len(buffer) - end
                        feed(buffer[start:end])  # expat reads this one
                    else:
                        skip(end - start)
                        handler.add(fields)
                    retry_at = 0
                    pos = end
                if scan:
                    buffer = buffer[pos:]
                    retry_at = retry_at and retry_at - pos
                else:
                    buffer = b""
            if handler.pages:
                yield from handler.pages
                handler.pages.clear()
        unfed = 0
        if buffer:
            feed(buffer)
        parser.Parse(suffix, True)
        yield from handler.pages
        handler.pages.clear()
    except expat.ExpatError as exc:
        if handler.root_closed:  # junk after </mediawiki>: the pages are complete, ignore the rest
            junk = max(0, fed - parser.CurrentByteIndex) + unfed + sum(len(c) for c in chunks)
            count("trailing_junk_bytes", junk)
            count("files_with_trailing_junk", 1)
            yield from handler.pages
            handler.pages.clear()
            return
        where = f"line {exc.lineno}, column {exc.offset}"
        if skips and parser.ErrorByteIndex >= skips[0][0]:  # pages read by the fast path came before
            before = skips[bisect.bisect_right(skips, (parser.ErrorByteIndex, float("inf"))) - 1][1]
            where = f"byte {parser.ErrorByteIndex + before} of the XML"
        reason = expat.errors.messages[exc.code]
        if exc.code == expat.errors.codes[expat.errors.XML_ERROR_NO_ELEMENTS]:
            reason = "document ends before its root element closes (truncated file?)"
        raise InputError(f"{path}: not well-formed XML ({reason}, {where})") from None
    except InputError as exc:
        message = str(exc)
        if not message.startswith(path):
            message = f"{path}: {message}"
        raise InputError(message) from None


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
) -> Iterator[dict]:
    """Page records of one dump file, in file order (see the module docstring for the fields).

    ``opener(path)`` opens the file as binary (default: local ``open``; pass Beam's ``FileSystems.open`` for
    ``gs://``). ``count(name, n)`` receives counters such as ``pages_read`` and ``trailing_junk_bytes``.
    """
    raw = _open_raw(path, opener)
    with raw:
        chunks, fragment = _prepare(
            path, _decompressed_chunks(path, raw, count, threads, local=opener is None)
        )
        handler = _Handler(os.path.basename(path), None, count)
        if fragment:
            count("fragment_files", 1)
        yield from _parse(chunks, handler, path, suffix=b"</mediawiki>" if fragment else b"", count=count)


def read_siteinfo(path: str, *, opener: Callable[[str], BinaryIO] | None = None) -> SiteInfo:
    """The ``<siteinfo>`` of a dump, reading only as far as the first page. Raises InputError for bad files."""
    raw = _open_raw(path, opener)
    with raw:
        chunks, fragment = _prepare(path, _decompressed_chunks(path, raw, _no_count))
        handler = _Handler(os.path.basename(path), None, _no_count)
        if fragment:
            chunks.close()
            return handler.site
        parser = _make_parser(handler)
        try:
            for chunk in chunks:
                parser.Parse(chunk, False)
                if handler.siteinfo_done or handler.page is not None or handler.pages:
                    break
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


def multistream_index(path: str) -> str | None:
    """The ``*-index.txt.bz2`` next to a ``*-multistream*.xml*.bz2`` dump, or None.

    >>> # enwiki-20240101-pages-articles-multistream.xml.bz2 -> ...-multistream-index.txt.bz2
    >>> # enwiki-20240101-pages-articles-multistream1.xml-p1p41242.bz2 -> ...-multistream-index1.txt-p1p41242.bz2
    """
    folder, name = os.path.split(path)
    if "multistream" not in name or not name.endswith(".bz2"):
        return None
    candidates = []
    if name.endswith(".xml.bz2"):
        candidates.append(name[: -len(".xml.bz2")] + "-index.txt.bz2")
    match = re.match(r"^(.*multistream)(\d*)\.xml(.*)\.bz2$", name)
    if match:
        candidates.append(f"{match.group(1)}-index{match.group(2)}.txt{match.group(3)}.bz2")
    for candidate in candidates:
        full = os.path.join(folder, candidate)
        if os.path.exists(full):
            return full
    return None


def stream_offsets(index_path: str) -> list[int]:
    """Sorted distinct stream offsets from a multistream index (``offset:page_id:title`` lines)."""
    offsets: set[int] = set()
    number = re.compile(rb"^(\d+):", re.M)
    try:
        with bz2.open(index_path, "rb") as f:
            rest = b""
            while True:
                block = f.read(READ_CHUNK)
                if not block:
                    break
                block = rest + block
                cut = block.rfind(b"\n") + 1
                offsets.update(int(m) for m in number.findall(block, 0, cut))
                rest = block[cut:]
            offsets.update(int(m) for m in number.findall(rest))
    except (OSError, EOFError) as exc:
        raise InputError(f"{index_path}: unreadable multistream index ({exc})") from None
    if not offsets:
        raise InputError(f"{index_path}: multistream index lists no streams")
    return sorted(offsets)


def multistream_ranges(
    dump_path: str,
    offsets: list[int],
    size: int,
    target_bytes: int = RANGE_BYTES,
    min_ranges: int = MIN_RANGES,
) -> list[tuple[int, int]]:
    """Group consecutive bz2 streams into byte ranges ``[start, end)`` covering the page streams.

    The first range starts at the first page stream (the header stream before it holds only
    ``<siteinfo>``); the last one runs to the end of the file (it includes the footer stream with
    ``</mediawiki>``). Ranges hold whole streams, about ``min(target_bytes, size / min_ranges)`` bytes each.
    """
    if offsets[-1] >= size:
        raise InputError(
            f"{dump_path}: its index names stream offsets past the end of the file (truncated dump?)"
        )
    target = max(1, min(target_bytes, size // max(1, min_ranges)))
    bounds = [*offsets, size]
    ranges: list[tuple[int, int]] = []
    start = bounds[0]
    for i in range(1, len(bounds)):
        if bounds[i] - start >= target or i == len(bounds) - 1:
            ranges.append((start, bounds[i]))
            start = bounds[i]
    return ranges


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
        handler = _Handler(os.path.basename(path), site, count)
        handler.siteinfo_done = True
        prefix = iter([b"<mediawiki>"])

        def stream() -> Iterator[bytes]:
            yield from prefix
            yield from chunks

        yield from _parse(stream(), handler, where, suffix=b"" if last else b"</mediawiki>", count=count)
