"""Grouping through files on disk, so Beam's in-process runner never holds a whole collection in memory.

Beam's local engine (the FnApiRunner behind ``DirectRunner``) keeps every ``GroupByKey`` input, and every
PCollection a side input makes a stage wait for, in memory until the consuming stage runs: about 46 KB per
document in a build. Here the large data goes to files instead and only file names travel through Beam:

* :class:`SpillGroupByKey` / :class:`SpillCoGroupByKey`: ``(key, value)`` pairs are written, as they come,
  to chunk files of one of ``BUCKETS`` buckets (a stable hash of the key); a ``GroupByKey`` of the small
  ``(bucket, file)`` pairs; then each bucket is read back and grouped in memory (1/``BUCKETS`` of the data at
  a time). Same output as Beam's transforms: each key once with all its values (in no promised order).
* :class:`Barrier`: a PCollection to chunk files and back, so a stage that waits for a side input holds
  file names, not the elements.
* :class:`ToBuckets` / :class:`CoGroupBuckets`: grouping by bucket rather than by key, for stages that
  process a whole bucket at once (one Beam element per batch of values, not per value: Beam's per-element
  cost is paid once per batch). :class:`BucketBuffers` lets a DoFn emit its outputs as such batches.
* :class:`pipelines.runtime.spill_shards.SpillShards`: the grouping of ``WriteTable`` (rows by output shard)
  through the same chunk files.

A chunk is one list encoded with Beam's ``FastPrimitivesCoder`` (the coder Beam's own shuffle would use).
The files live under the directory :func:`use_spill_dir` gives the pipeline (``run_pipeline``:
``OUT/.spill``) and are deleted once read; :func:`remove_spill_dir` removes the directory
after the run. On other runners (Dataflow, Flink, ...), or without a spill directory, the transforms are
Beam's own grouping (those runners already spill to disk).
"""

from __future__ import annotations

import os
import posixpath
import uuid
import weakref
import zlib
from collections.abc import Iterator

import apache_beam as beam
import pyarrow as pa
from apache_beam.coders import FastPrimitivesCoder
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import StandardOptions
from apache_beam.transforms.window import GlobalWindows

from incoherent.fileio.paths import is_remote
from incoherent.pipelines.runtime.options import is_local_runner

BUCKETS = 64
CHUNK_VALUES = 20_000  # values buffered by a worker before it writes them out
REMOTE_BUCKETS = 1024  # buckets of CoGroupBuckets on distributed runners (Beam groups the batches there)


_SPILL_DIRS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
SPILL_DIR = ".spill"


def use_spill_dir(pipeline: beam.Pipeline, spill_dir: str) -> None:
    """Let the transforms of ``pipeline`` spill under ``spill_dir`` (``run_pipeline`` uses ``OUT/.spill``)."""
    _SPILL_DIRS[pipeline] = spill_dir


def spill_dir_of(pipeline: beam.Pipeline) -> str | None:
    """Where ``pipeline`` spills: ``None`` (Beam's own grouping) unless it runs on the local engine and
    :func:`use_spill_dir` named a directory."""
    if not is_local_runner(pipeline.options.view_as(StandardOptions).runner):
        return None
    return _SPILL_DIRS.get(pipeline)


def write_chunk(path: str, values: list) -> None:
    """A list of values as one ``FastPrimitivesCoder`` record (encoded in one compiled call).

    Local paths are written with plain file calls (Beam's local filesystem makes the folder and matches the
    path again on every call, which costs more than the write for small chunks); others go through
    :class:`FileSystems`.
    """
    _write_bytes(path, FastPrimitivesCoder().encode(list(values)))


def read_chunk(path: str, delete: bool = True) -> Iterator:
    """The values of a chunk file, in order; the file is deleted after reading unless ``delete`` is False."""
    yield from FastPrimitivesCoder().decode(_read_bytes(path, delete))


def _write_bytes(path: str, data: bytes) -> None:
    if is_remote(path):
        with FileSystems.create(path) as f:
            f.write(data)
        return
    try:
        f = open(path, "wb")  # noqa: SIM115 - closed below
    except FileNotFoundError:  # the chunk's folder does not exist yet
        os.makedirs(os.path.dirname(path), exist_ok=True)
        f = open(path, "wb")  # noqa: SIM115
    with f:
        f.write(data)


def _read_bytes(path: str, delete: bool) -> bytes:
    if is_remote(path):
        with FileSystems.open(path) as f:
            data = f.read()
        if delete:
            FileSystems.delete([path])
        return data
    with open(path, "rb") as f:
        data = f.read()
    if delete:
        os.remove(path)
    return data


def write_table_chunk(path: str, table: pa.Table) -> None:
    """An Arrow table as one IPC stream file."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    _write_bytes(path, sink.getvalue().to_pybytes())


def read_table_chunk(path: str, delete: bool = True) -> pa.Table:
    """The table of :func:`write_table_chunk`; the file is deleted after reading unless ``delete`` is False."""
    return pa.ipc.open_stream(_read_bytes(path, delete)).read_all()


def chunk_path(spill_dir: str, label: str, bucket: object) -> str:
    return posixpath.join(spill_dir, label, f"{bucket}-{uuid.uuid4().hex}.bin")


class _SpillBuckets(beam.DoFn):
    """``(key, value)`` -> ``(bucket, chunk file)`` once enough values of a bundle are buffered."""

    def __init__(self, spill_dir: str, label: str, buckets: int, chunk_values: int):
        self._spill_dir, self._label, self._buckets, self._chunk = spill_dir, label, buckets, chunk_values

    def start_bundle(self):
        self._buffers: dict[int, list] = {}
        self._buffered = 0

    def _flush(self) -> list[tuple[int, str]]:
        written = []
        for bucket, values in sorted(self._buffers.items()):
            path = chunk_path(self._spill_dir, self._label, bucket)
            write_chunk(path, values)
            written.append((bucket, path))
        self._buffers, self._buffered = {}, 0
        return written

    def process(self, element):
        bucket = zlib.crc32(repr(element[0]).encode("utf-8")) % self._buckets  # stable, and cheap
        self._buffers.setdefault(bucket, []).append(element)
        self._buffered += 1
        if self._buffered >= self._chunk:
            yield from self._flush()

    def finish_bundle(self):
        for written in self._flush():
            yield GlobalWindows.windowed_value(written)


def _group_bucket(element):
    """``(bucket, [chunk files])`` -> ``(key, [values])`` for every key of the bucket."""
    _bucket, paths = element
    groups: dict = {}
    for path in sorted(paths):
        for key, value in read_chunk(path):
            groups.setdefault(key, []).append(value)
    yield from groups.items()


class SpillGroupByKey(beam.PTransform):
    """``GroupByKey`` through files on the local runner (Beam's own elsewhere); see the module docstring."""

    def __init__(self, buckets: int = BUCKETS, chunk_values: int = CHUNK_VALUES):
        super().__init__()
        self._buckets, self._chunk = buckets, chunk_values

    def expand(self, pairs):
        spill_dir = spill_dir_of(pairs.pipeline)
        if spill_dir is None:
            return pairs | "GroupByKey" >> beam.GroupByKey()
        label = uuid.uuid4().hex[:12]
        return _group_chunks(
            pairs | "SpillBuckets" >> beam.ParDo(_SpillBuckets(spill_dir, label, self._buckets, self._chunk))
        )


def _group_chunks(chunks):
    """``(bucket, chunk file)`` pairs -> ``(key, [values])``: Beam groups the file names, a bucket's files are
    read together."""
    return chunks | "GroupChunks" >> beam.GroupByKey() | "GroupBuckets" >> beam.FlatMap(_group_bucket)


def _tag(value, tag: str):
    key, v = value
    return key, (tag, v)


def _untag(element, tags: tuple[str, ...]):
    key, tagged = element
    grouped: dict[str, list] = {tag: [] for tag in tags}
    for tag, value in tagged:
        grouped[tag].append(value)
    return key, grouped


class SpillCoGroupByKey(beam.PTransform):
    """``{tag: PCollection of (key, value)}`` -> ``(key, {tag: [values]})``, like ``beam.CoGroupByKey``."""

    def __init__(self, buckets: int = BUCKETS, chunk_values: int = CHUNK_VALUES):
        super().__init__()
        self._buckets, self._chunk = buckets, chunk_values

    def expand(self, tagged):
        pipeline = next(iter(tagged.values())).pipeline
        spill_dir = spill_dir_of(pipeline)
        if spill_dir is None:
            return tagged | "CoGroupByKey" >> beam.CoGroupByKey()
        tags, label = tuple(tagged), uuid.uuid4().hex[:12]
        # each input is spilled where it is made: Flatten then holds only (bucket, chunk file) pairs
        chunks = [
            pcoll
            | f"Tag[{tag}]" >> beam.Map(_tag, tag)
            | f"SpillBuckets[{tag}]"
            >> beam.ParDo(_SpillBuckets(spill_dir, label, self._buckets, self._chunk))
            for tag, pcoll in tagged.items()
        ]
        grouped = _group_chunks(chunks | "FlattenChunks" >> beam.Flatten())
        return grouped | "Untag" >> beam.Map(_untag, tags)


class _SpillChunks(beam.DoFn):
    """Elements -> chunk files of at most ``chunk_values`` elements (one output per file)."""

    def __init__(self, spill_dir: str, label: str, chunk_values: int):
        self._spill_dir, self._label, self._chunk = spill_dir, label, chunk_values

    def start_bundle(self):
        self._buffer: list = []

    def _flush(self) -> str:
        path = chunk_path(self._spill_dir, self._label, "chunk")
        write_chunk(path, self._buffer)
        self._buffer = []
        return path

    def process(self, element):
        self._buffer.append(element)
        if len(self._buffer) >= self._chunk:
            yield self._flush()

    def finish_bundle(self):
        if self._buffer:
            yield GlobalWindows.windowed_value(self._flush())


def _unspill(path):
    yield from read_chunk(path)


class Flatten(beam.PTransform):
    """``beam.Flatten`` whose inputs go through chunk files on the local runner.

    Beam's local engine cannot fuse a Flatten with its producers: it holds the whole flattened PCollection
    in memory until the consuming stage runs. Here it holds only the chunk files' names (``chunk_values``
    elements per file: 1 for elements that are themselves large batches). Elsewhere, ``beam.Flatten``.
    """

    def __init__(self, chunk_values: int = CHUNK_VALUES):
        super().__init__()
        self._chunk = chunk_values

    def expand(self, pcolls):
        pcolls = tuple(pcolls)
        spill_dir = spill_dir_of(pcolls[0].pipeline)
        if spill_dir is None:
            return pcolls | "Flatten" >> beam.Flatten()
        label = uuid.uuid4().hex[:12]
        files = [
            pcoll | f"SpillChunks[{i}]" >> beam.ParDo(_SpillChunks(spill_dir, label, self._chunk))
            for i, pcoll in enumerate(pcolls)
        ]
        return files | "FlattenFiles" >> beam.Flatten() | "ReadChunks" >> beam.FlatMap(_unspill)


class Barrier(Flatten):
    """The same elements, through chunk files on the local runner: a stage that waits for a side input
    computed from this PCollection then holds file names in memory, not the elements."""

    def expand(self, pcoll):
        return super().expand((pcoll,))


# --------------------------------------------------------------------------------------------- bucket batches


def bucket_of(key: str, buckets: int) -> int:
    """The bucket of a string key: ``crc32(key) % buckets`` (stable on every runner and Python)."""
    return zlib.crc32(key.encode("utf-8")) % buckets


def buckets_for(pipeline: beam.Pipeline) -> int:
    """Buckets of :class:`CoGroupBuckets`: ``BUCKETS`` through files on the local runner; more elsewhere, so a
    distributed runner has more keys to spread over its workers (a bucket is processed in one call)."""
    return BUCKETS if spill_dir_of(pipeline) is not None else REMOTE_BUCKETS


class BucketBuffers:
    """Values buffered per bucket; full batches come out as ``(bucket, [values])``.

    >>> b = BucketBuffers(buckets=4, limit=3)
    >>> b.add("a", 1), b.add("b", 2), b.add("c", 3)
    ([], [], [(1, [2]), (3, [1, 3])])
    """

    def __init__(self, buckets: int, limit: int = CHUNK_VALUES):
        self._buckets, self._limit = buckets, limit
        self._buffers: dict[int, list] = {}
        self._buffered = 0

    def add(self, key: str, value) -> list[tuple[int, list]]:
        """Buffer ``value`` in the bucket of ``key``; every buffered batch once ``limit`` values are held."""
        self._buffers.setdefault(bucket_of(key, self._buckets), []).append(value)
        self._buffered += 1
        return self.flush() if self._buffered >= self._limit else []

    def flush(self) -> list[tuple[int, list]]:
        """Every buffered batch, by bucket; the buffers are emptied."""
        out = sorted(self._buffers.items())
        self._buffers, self._buffered = {}, 0
        return out


class _ToBuckets(beam.DoFn):
    def __init__(self, key, buckets: int, limit: int):
        self._key, self._buckets, self._limit = key, buckets, limit

    def start_bundle(self):
        self._buffers = BucketBuffers(self._buckets, self._limit)

    def process(self, element):
        yield from self._buffers.add(self._key(element), element)

    def finish_bundle(self):
        for batch in self._buffers.flush():
            yield GlobalWindows.windowed_value(batch)


class ToBuckets(beam.PTransform):
    """Elements -> ``(bucket of key(element), [elements])`` batches, as :class:`CoGroupBuckets` takes them."""

    def __init__(self, key, buckets: int, limit: int = CHUNK_VALUES):
        super().__init__()
        self._key, self._buckets, self._limit = key, buckets, limit

    def expand(self, pcoll):
        return pcoll | "Buffer" >> beam.ParDo(_ToBuckets(self._key, self._buckets, self._limit))


class _SpillBatch(beam.DoFn):
    """``(bucket, [values])`` -> ``(bucket, (tag, chunk file))``: one file per batch."""

    def __init__(self, spill_dir: str, label: str, tag: str):
        self._spill_dir, self._label, self._tag = spill_dir, label, tag

    def process(self, element):
        bucket, values = element
        path = chunk_path(self._spill_dir, self._label, bucket)
        write_chunk(path, values)
        yield bucket, (self._tag, path)


def _batch_tagged(element, tag: str):
    bucket, values = element
    return bucket, (tag, values)


def _gather(element, tags: tuple[str, ...], from_files: bool):
    """``(bucket, [(tag, batch or chunk file)])`` -> ``(bucket, {tag: [values of every batch]})``."""
    bucket, tagged = element
    grouped: dict[str, list] = {tag: [] for tag in tags}
    if from_files:
        for tag, path in sorted(tagged):
            grouped[tag].extend(read_chunk(path))
    else:
        for tag, values in tagged:
            grouped[tag].extend(values)
    return bucket, grouped


class CoGroupBuckets(beam.PTransform):
    """``{tag: PCollection of (bucket, [values])}`` -> ``(bucket, {tag: [every value of the bucket]})``.

    On the local runner every batch goes to a chunk file and only ``(bucket, file)`` pairs are grouped by
    Beam; elsewhere Beam groups the batches. Values come in no promised order: the consumer must not depend
    on it (sort, or key by id).
    """

    def expand(self, tagged):
        pipeline = next(iter(tagged.values())).pipeline
        spill_dir, tags = spill_dir_of(pipeline), tuple(tagged)
        label = uuid.uuid4().hex[:12]
        parts = []
        for tag, pcoll in tagged.items():
            if spill_dir is None:
                parts.append(pcoll | f"Tag[{tag}]" >> beam.Map(_batch_tagged, tag))
            else:
                parts.append(pcoll | f"Spill[{tag}]" >> beam.ParDo(_SpillBatch(spill_dir, label, tag)))
        return (
            parts
            | "FlattenBatches" >> beam.Flatten()
            | "GroupBatches" >> beam.GroupByKey()
            | "Gather" >> beam.Map(_gather, tags, spill_dir is not None)
        )


def remove_spill_dir(spill_dir: str) -> None:
    """Delete what is left under ``spill_dir`` (chunks of failed bundle attempts, empty folders)."""
    if FileSystems.exists(spill_dir):
        FileSystems.delete([spill_dir])
