"""bz2 decoding shared by every dump reader: local files and remote ones (any ``opener``, e.g. Beam's
``FileSystems.open`` for ``gs://``), whole files and byte ranges of multistream dumps.

:func:`_decompressed_chunks` turns a raw binary stream into decompressed chunks: ``.bz2`` by indexed_bzip2 in a
child process for a local file with ``threads > 1`` (:class:`_DecoderProcess`, which :func:`start_decoder` can
start before Beam is imported), by indexed_bzip2's block-parallel threads of this process for byte ranges and
remote files, or by a thread running ``bz2`` with one thread; ``.gz``/``.xz`` and plain files as they come.
Non-bz2 bytes after a file's last stream are ignored and counted (:data:`BZ2_GARBAGE`); a corrupt stream is an
:class:`schemas.records.InputError` naming the file. :func:`multistream_index`, :func:`stream_offsets` and
:func:`multistream_ranges` cut a multistream dump into byte ranges of whole bz2 streams.

The XML side is :mod:`sources.mediawiki`.
"""

from __future__ import annotations

import atexit
import bz2
import contextlib
import io
import os
import queue
import re
import threading
import weakref
from collections.abc import Callable, Iterator
from typing import BinaryIO

from incoherent.fileio.paths import open_regular
from incoherent.schemas.records import InputError
from incoherent.sources.limits import DECOMPRESS_CHUNK

READ_CHUNK = 1 << 17  # compressed bytes per read
QUEUE_CHUNKS = 8  # decompressed chunks buffered between the threads (memory bound)
PROBE_BYTES = 1 << 16
# Multistream: aim for ranges of about this many compressed bytes, and for at least MIN_RANGES ranges.
RANGE_BYTES = 4 << 20
MIN_RANGES = 16
PARALLEL_CHUNK = 1 << 19  # decompressed bytes per read from the parallel decoder

BZ2_GARBAGE = "bz2_trailing_garbage_bytes"  # counter: non-bz2 bytes after a file's last stream (ignored)

Counter = Callable[[str, int], None]


def _no_count(name: str, n: int = 1) -> None:
    pass


def _open_raw(path: str, opener: Callable[[str], BinaryIO] | None) -> BinaryIO:
    if opener is not None:
        return opener(path)
    if not os.path.exists(path):
        raise InputError(f"{path}: no such file")
    if os.path.isdir(path):
        raise InputError(f"{path}: is a directory, not a dump file")
    return open_regular(path)  # a FIFO or a device is refused, never read


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
            while data or not decomp.needs_input:
                # at most DECOMPRESS_CHUNK bytes out per call: a few KB of bz2 can expand to gigabytes
                try:
                    chunk = decomp.decompress(data, DECOMPRESS_CHUNK)
                except OSError:
                    if streams:  # bytes after the last stream that are not bz2: ignore them, as bzip2 does
                        put(("junk", len(data) + sum(len(more) for more in compressed)))
                        junk = True
                        break
                    put(InputError(f"{name}: not a bz2 file (invalid bz2 data)"))
                    return
                fed = fed or bool(data)
                data = b""
                if chunk and not put(chunk):
                    return
                if decomp.eof:
                    streams += 1
                    data = decomp.unused_data
                    decomp = bz2.BZ2Decompressor()
                    fed = False
                    if not data:
                        break
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
            [sys.executable, "-P", "-c", _DECODER, path, str(max(1, threads - 1))],
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


def _plain_chunks(raw: BinaryIO, limit: int | None = None, chunk: int = READ_CHUNK) -> Iterator[bytes]:
    left = limit
    while True:
        size = chunk if left is None else min(chunk, left)
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

        return _wrap_errors(_plain_chunks(gzip.GzipFile(fileobj=raw), chunk=DECOMPRESS_CHUNK), path)
    if lower.endswith((".xz", ".lzma")):
        import lzma

        return _wrap_errors(_plain_chunks(lzma.LZMAFile(raw), chunk=DECOMPRESS_CHUNK), path)
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


def multistream_index(path: str) -> str | None:
    """The ``*-index.txt.bz2`` next to a ``*-multistream*.xml*.bz2`` dump, or None.

    >>> # enwiki-20240101-pages-articles-multistream.xml.bz2 -> ...-multistream-index.txt.bz2
    >>> # enwiki-20240101-pages-articles-multistream1.xml-p1p41242.bz2 -> ...-multistream-index1.txt-p1p41242.bz2
    """
    folder, name = os.path.split(path)
    for candidate in multistream_index_names(name):
        full = os.path.join(folder, candidate)
        if os.path.exists(full):
            return full
    return None


def multistream_index_names(name: str) -> list[str]:
    """File names the index of a multistream dump called ``name`` has on Wikimedia's servers (none if ``name``
    is not a multistream dump).

    >>> multistream_index_names("enwiki-20240101-pages-articles-multistream.xml.bz2")
    ['enwiki-20240101-pages-articles-multistream-index.txt.bz2']
    >>> multistream_index_names("enwiki-20240101-pages-articles.xml.bz2")
    []
    """
    if "multistream" not in name or not name.endswith(".bz2"):
        return []
    candidates = []
    if name.endswith(".xml.bz2"):
        candidates.append(name[: -len(".xml.bz2")] + "-index.txt.bz2")
    match = re.match(r"^(.*multistream)(\d*)\.xml(.*)\.bz2$", name)
    if match:
        candidates.append(f"{match.group(1)}-index{match.group(2)}.txt{match.group(3)}.bz2")
    return list(dict.fromkeys(candidates))


def stream_offsets(index_path: str, opener: Callable[[str], BinaryIO] | None = None) -> list[int]:
    """Sorted distinct stream offsets from a multistream index (``offset:page_id:title`` lines), read from
    disk or through ``opener`` (e.g. Beam's filesystems for ``gs://``), streamed."""
    offsets: set[int] = set()
    number = re.compile(rb"^(\d+):", re.M)
    try:
        with contextlib.ExitStack() as files:  # bz2 leaves a file it was given open: close the opener's too
            source = index_path if opener is None else files.enter_context(opener(index_path))
            f = files.enter_context(bz2.open(source, "rb"))
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
