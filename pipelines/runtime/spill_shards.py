"""The grouping of ``WriteTable`` (rows by output shard) through spill files, on Beam's local engine.

:class:`SpillShards` gives what ``WriteTable``'s ``GroupByKey`` would, ``((split, shard, shards), rows of the
shard)``, holding one shard's rows in memory at a time: rows go to chunk files (:mod:`pipelines.runtime.spill`)
as they come, the rows per split are counted, each chunk is cut by shard once the counts are known, and each
shard's files are read back together. :class:`SpillShardTables` does the same for lists of rows, held as Arrow
tables on the way (no per-row encoding).
"""

from __future__ import annotations

import uuid

import apache_beam as beam
import numpy as np
import pyarrow as pa
from apache_beam.transforms.window import GlobalWindows

from incoherent.corpora.seeding import stable_hash
from incoherent.pipelines.runtime.spill import (
    CHUNK_VALUES,
    chunk_path,
    read_chunk,
    read_table_chunk,
    spill_dir_of,
    write_chunk,
    write_table_chunk,
)


class _SpillRows(beam.DoFn):
    """Rows -> ``(split, chunk file, rows in it)``; a chunk holds rows of one split."""

    def __init__(self, spill_dir: str, label: str, split_of, chunk_values: int):
        self._spill_dir, self._label, self._split_of, self._chunk = spill_dir, label, split_of, chunk_values

    def start_bundle(self):
        self._buffers: dict[str, list] = {}

    def _flush(self, split: str) -> tuple[str, str, int]:
        rows = self._buffers.pop(split)
        path = chunk_path(self._spill_dir, self._label, "rows")
        write_chunk(path, rows)
        return split, path, len(rows)

    def _add(self, row):
        """Buffer ``row``; the chunk it fills, if any."""
        split = self._split_of(row)
        buffer = self._buffers.setdefault(split, [])
        buffer.append(row)
        return self._flush(split) if len(buffer) >= self._chunk else None

    def process(self, row):
        chunk = self._add(row)
        if chunk is not None:
            yield chunk

    def finish_bundle(self):
        for split in sorted(self._buffers):
            yield GlobalWindows.windowed_value(self._flush(split))


class _Redistribute(beam.DoFn):
    """``(split, chunk, n)`` -> ``((split, shard, shards), file)``: the chunk's rows cut by shard."""

    def __init__(self, spill_dir: str, label: str, rows_per_shard: int):
        self._spill_dir, self._label, self._per_shard = spill_dir, label, rows_per_shard

    def process(self, chunk, totals):
        split, path, _n = chunk
        shards = max(1, -(-totals[split] // self._per_shard))
        if shards == 1:
            yield (split, 0, 1), path
            return
        yield from self._cut(split, path, shards)

    def _cut(self, split: str, path: str, shards: int):
        by_shard: dict[int, list] = {}
        for row in read_chunk(path):
            by_shard.setdefault(stable_hash(row["id"]) % shards, []).append(row)
        for shard, rows in sorted(by_shard.items()):
            part = chunk_path(self._spill_dir, self._label, f"shard-{shard}")
            write_chunk(part, rows)
            yield (split, shard, shards), part


def _split_count(chunk):
    split, _path, n = chunk
    return split, n


def _shard_rows(element):
    """``((split, shard, shards), [files])`` -> ``((split, shard, shards), rows)`` read back from the files."""
    key, paths = element
    rows = [row for path in sorted(paths) for row in read_chunk(path)]
    return key, rows


class SpillShards(beam.PTransform):
    """Rows -> ``((split, shard, shards), rows of the shard)``, as ``WriteTable``'s ``GroupByKey`` gives them.

    A row's shard is ``stable_hash(id) % shards`` with ``shards = ceil(rows of its split / rows_per_shard)``;
    only one shard's rows are in memory at a time. Use it when :func:`spill_dir_of` names a directory.
    """

    SPILL_LABEL = "SpillRows"

    def __init__(self, split_of, rows_per_shard: int, chunk_values: int = CHUNK_VALUES):
        super().__init__()
        self._split_of, self._per_shard, self._chunk = split_of, rows_per_shard, chunk_values

    def _spill(self, spill_dir: str, label: str) -> beam.DoFn:
        return _SpillRows(spill_dir, label, self._split_of, self._chunk)

    def _redistribute(self, spill_dir: str, label: str) -> beam.DoFn:
        return _Redistribute(spill_dir, label, self._per_shard)

    @staticmethod
    def _read_shard(element):
        return _shard_rows(element)

    def expand(self, rows):
        spill_dir, label = spill_dir_of(rows.pipeline), uuid.uuid4().hex[:12]
        chunks = rows | self.SPILL_LABEL >> beam.ParDo(self._spill(spill_dir, label))
        totals = chunks | "RowsPerChunk" >> beam.Map(_split_count) | "RowsPerSplit" >> beam.CombinePerKey(sum)
        return (
            chunks
            | "CutByShard"
            >> beam.ParDo(self._redistribute(spill_dir, label), totals=beam.pvalue.AsDict(totals))
            | "GroupShardFiles" >> beam.GroupByKey()
            | "ReadShards" >> beam.Map(self._read_shard)
        )


HASH_COLUMN = "__id_hash"


class _SpillTables(_SpillRows):
    """Lists of rows -> ``(split, chunk file, rows in it)``; a chunk is an Arrow table of ``schema`` (rows of
    one split) with the ``stable_hash`` of each id in ``HASH_COLUMN``."""

    def __init__(self, spill_dir: str, label: str, split_of, schema: pa.Schema, chunk_values: int):
        super().__init__(spill_dir, label, split_of, chunk_values)
        self._schema = schema

    def _flush(self, split: str) -> tuple[str, str, int]:
        rows = self._buffers.pop(split)
        table = pa.Table.from_pylist(rows, schema=self._schema)
        hashes = pa.array([stable_hash(row["id"]) for row in rows], pa.uint64())
        path = chunk_path(self._spill_dir, self._label, "rows")
        write_table_chunk(path, table.append_column(HASH_COLUMN, hashes))
        return split, path, len(rows)

    def process(self, batch):
        for row in batch:
            chunk = self._add(row)
            if chunk is not None:
                yield chunk


class _RedistributeTables(_Redistribute):
    """``(split, chunk, n)`` -> ``((split, shard, shards), file)``: the chunk's table cut by shard."""

    def _cut(self, split: str, path: str, shards: int):
        table = read_table_chunk(path)
        shard_of = table.column(HASH_COLUMN).to_numpy() % np.uint64(shards)
        for shard in np.unique(shard_of).tolist():
            part = chunk_path(self._spill_dir, self._label, f"shard-{shard}")
            write_table_chunk(part, table.filter(pa.array(shard_of == shard)))
            yield (split, shard, shards), part


def _shard_table(element):
    """``((split, shard, shards), [files])`` -> ``((split, shard, shards), table of the shard's rows)``."""
    key, paths = element
    table = pa.concat_tables([read_table_chunk(path) for path in sorted(paths)])
    return key, table.drop_columns([HASH_COLUMN])


class SpillShardTables(SpillShards):
    """Lists of rows -> ``((split, shard, shards), Arrow table of the shard's rows)``: :class:`SpillShards` for
    batches, with the rows held as Arrow tables of ``schema`` (no per-row encoding on the way)."""

    SPILL_LABEL = "SpillTables"

    def __init__(self, split_of, rows_per_shard: int, schema: pa.Schema, chunk_values: int = CHUNK_VALUES):
        super().__init__(split_of, rows_per_shard, chunk_values)
        self._schema = schema

    def _spill(self, spill_dir: str, label: str) -> beam.DoFn:
        return _SpillTables(spill_dir, label, self._split_of, self._schema, self._chunk)

    def _redistribute(self, spill_dir: str, label: str) -> beam.DoFn:
        return _RedistributeTables(spill_dir, label, self._per_shard)

    @staticmethod
    def _read_shard(element):
        return _shard_table(element)
