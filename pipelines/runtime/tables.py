"""Tables of a stage: counters and dead letters, deterministic sharded Parquet writes, reading documents and ids.

Output layout (Hugging Face style)::

    OUT/<config>/<split>-00000-of-00002.parquet     e.g. OUT/shuffle-wikipedia/test-00000-of-00001.parquet
    OUT/rejected/<stage>/rejected-00000-of-00001.parquet

Rows are assigned to shards by a stable hash of their id and sorted inside each shard, so the files are the
same whatever the runner, the number of workers or the bundle order. Running the pipeline that writes them,
and ``OUT/run_summary.json``: :mod:`pipelines.runtime.run`.
"""

from __future__ import annotations

import io
import json
import posixpath
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics import Metrics

from incoherent.corpora.seeding import stable_hash
from incoherent.pipelines.runtime import spill, spill_shards, storage
from incoherent.schemas import REJECTED_SCHEMA, schema_for
from incoherent.schemas.records import InputError, Rejected, newest_first

DEFAULT_ROWS_PER_SHARD = 100_000
REJECTED_SPLIT = "rejected"


# --------------------------------------------------------------------------------------------- counters


class Tally:
    """Counter increments gathered over a batch, sent to Beam once per name (``flush``): the batched form of
    :func:`count`.

    >>> tally = Tally()
    >>> tally("intruders/cnn", "read"); tally("intruders/cnn", "read", 2)
    >>> tally.counts
    {('intruders/cnn', 'read'): 3}
    """

    def __init__(self):
        self.counts: dict[tuple[str, str], int] = {}

    def __call__(self, ns: str, name: str, n: int = 1) -> None:
        self.counts[(ns, name)] = self.counts.get((ns, name), 0) + n

    def for_namespace(self, namespace: Callable[[str], str]) -> Callable[..., None]:
        """``tally(key, name, n=1)`` counting in ``namespace(key)`` (e.g. a source's ``intruders/<source>``):
        the ``tally`` the logic packages call."""

        def tally(key: str, name: str, n: int = 1) -> None:
            self(namespace(key), name, n)

        return tally

    def flush(self) -> None:
        for (ns, name), n in sorted(self.counts.items()):
            count(ns, name, n)
        self.counts = {}


def count(stage: str, name: str, n: int = 1) -> None:
    """Increment the Beam counter ``stage/name``; it ends up in ``run_summary.json``."""
    Metrics.counter(stage, name).inc(n)


class _ApplyWithRejects(beam.DoFn):
    def __init__(self, fn: Callable[[Any], Iterable[Any]], stage: str, kept: str | None):
        self._fn = fn
        self._stage = stage
        self._kept = kept

    def process(self, element):
        for out in self._fn(element):
            if isinstance(out, Rejected):
                count(self._stage, out.reason)
                yield beam.pvalue.TaggedOutput(REJECTED_SPLIT, out.to_row(self._stage))
            else:
                if self._kept:
                    count(self._stage, self._kept)
                yield out


class ApplyWithRejects(beam.PTransform):
    """FlatMap ``fn`` over elements; ``Rejected`` outputs become counters and dead-letter rows.

    ``fn(element)`` yields output rows and :class:`schemas.records.Rejected` items. The transform returns
    ``(kept, rejected)``; ``rejected`` holds rows of ``REJECTED_SCHEMA``. Each kept output increments the
    counter ``stage/<kept>`` (pass ``kept=None`` to count nothing).
    """

    def __init__(self, fn: Callable[[Any], Iterable[Any]], stage: str, kept: str | None = "kept"):
        super().__init__()
        self._fn, self._stage, self._kept = fn, stage, kept

    def expand(self, pcoll):
        results = pcoll | "Apply" >> beam.ParDo(
            _ApplyWithRejects(self._fn, self._stage, self._kept)
        ).with_outputs(REJECTED_SPLIT, main="kept")
        return results.kept, results[REJECTED_SPLIT]


# --------------------------------------------------------------------------------------------- writing


def shard_name(split: str, index: int, total: int) -> str:
    return f"{split}-{index:05d}-of-{total:05d}.parquet"


def _split_key(row: dict, split: str | None) -> str:
    return split if split is not None else row["split"]


def write_shard(path: str, schema: pa.Schema, rows: Sequence[dict]) -> None:
    """Write rows as one Parquet file (local path or any Beam filesystem, e.g. gs://)."""
    table = pa.Table.from_pylist(list(rows), schema=schema)
    buffer = io.BytesIO()
    pq.write_table(table, buffer, compression="zstd")
    with FileSystems.create(path) as f:
        f.write(buffer.getvalue())


def _json_text(row: dict) -> str:
    return json.dumps(row, sort_keys=True, ensure_ascii=False, default=str)


def total_order(row_keys: Sequence[tuple], contents: Callable[[list[int]], list[str]]) -> list[int]:
    """The positions of rows in a total order: by their keys, rows with equal keys by their content
    (``contents(positions)`` gives the JSON of those rows; it is asked only for rows that share their keys, so
    the tie-break, which makes the order independent of arrival order, is rarely computed: ids are unique in
    most tables). One algorithm for rows (:func:`sort_rows`) and Arrow tables (:func:`sort_table`).

    >>> total_order([("b",), ("a",), ("a",)], lambda run: ["z", "y"])
    [2, 1, 0]
    """
    order = sorted(range(len(row_keys)), key=row_keys.__getitem__)
    out, start = [], 0
    while start < len(order):
        stop = start + 1
        while stop < len(order) and row_keys[order[stop]] == row_keys[order[start]]:
            stop += 1
        run = order[start:stop]
        if len(run) > 1:
            texts = contents(run)
            run = [i for _, i in sorted(zip(texts, run, strict=True), key=lambda e: e[0])]
        out.extend(run)
        start = stop
    return out


def sort_rows(rows, sort_keys: Sequence[str]) -> list[dict]:
    """Rows in a total order (:func:`total_order`): by ``sort_keys``, rows with equal keys by their JSON."""
    keys = tuple(sort_keys)
    rows = list(rows)
    row_keys = [tuple("" if row[k] is None else row[k] for k in keys) for row in rows]
    return [rows[i] for i in total_order(row_keys, lambda run: [_json_text(rows[i]) for i in run])]


def sort_table(table: pa.Table, sort_keys: Sequence[str]) -> pa.Table:
    """:func:`sort_rows` for an Arrow table: the same order (rows with equal keys by their JSON as stored)."""
    columns = [table.column(k).to_pylist() for k in sort_keys]
    row_keys = [tuple("" if v is None else v for v in values) for values in zip(*columns, strict=True)]
    return table.take(total_order(row_keys, lambda run: [_json_text(r) for r in table.take(run).to_pylist()]))


def write_table_shard(path: str, schema: pa.Schema, table: pa.Table) -> None:
    """Write an Arrow table of ``schema``'s columns as one Parquet file (as :func:`write_shard` writes rows)."""
    table = pa.Table.from_arrays(
        [table.column(name) for name in schema.names], schema=schema
    ).combine_chunks()
    buffer = io.BytesIO()
    pq.write_table(table, buffer, compression="zstd")
    with FileSystems.create(path) as f:
        f.write(buffer.getvalue())


class _WriteShard(beam.DoFn):
    def __init__(self, out_dir: str, config: str, schema: pa.Schema, sort_keys: Sequence[str]):
        self._out_dir, self._config, self._schema, self._sort_keys = out_dir, config, schema, tuple(sort_keys)

    def process(self, element):
        (split, index, total), rows = element
        yield _write_one_shard(
            self._out_dir, self._config, self._schema, self._sort_keys, split, index, total, rows
        )


def _write_one_shard(out_dir, config, schema, sort_keys, split, index, total, rows) -> dict:
    """Shard ``index`` of ``total`` of a table's split, its rows sorted; what was written."""
    path = posixpath.join(out_dir, config, shard_name(split, index, total))
    if isinstance(rows, pa.Table):  # SpillShardTables
        write_table_shard(path, schema, sort_table(rows, sort_keys))
        return {"config": config, "split": split, "path": path, "rows": rows.num_rows}
    rows = sort_rows(rows, sort_keys)
    write_shard(path, schema, rows)
    return {"config": config, "split": split, "path": path, "rows": len(rows)}


def shard_of_row(row_id: str, rows: int, rows_per_shard: int) -> tuple[int, int]:
    """``(shard, shards)`` of a row of a split of ``rows`` rows: ``ceil(rows / rows_per_shard)`` shards (at least
    one), the row's by a stable hash of its id."""
    shards = max(1, -(-rows // rows_per_shard))
    return stable_hash(row_id) % shards, shards


def _each_row(batch):
    yield from batch


class WriteTable(beam.PTransform):
    """Write dict rows to ``OUT/<config>/<split>-NNNNN-of-MMMMM.parquet`` with the config's explicit schema.

    The split of a row is its ``split`` column, or the fixed ``split`` argument for tables without one. The
    number of shards of a split is ``ceil(rows / rows_per_shard)``; a row's shard is a stable hash of its
    ``id``; rows are sorted by ``sort_keys`` inside a shard. Returns a PCollection with one small dict per
    written file. With ``batched=True`` the elements are lists of rows (same files: only Beam's per-element
    cost is paid once per list). On the local runner a worker buffers up to ``chunk_values`` rows before it
    spills them (lower it when a pipeline writes several tables of large rows at once).
    """

    def __init__(
        self,
        out_dir: str,
        config: str,
        split: str | None = None,
        sort_keys: Sequence[str] = ("id",),
        rows_per_shard: int = DEFAULT_ROWS_PER_SHARD,
        schema: pa.Schema | None = None,
        batched: bool = False,
        chunk_values: int = spill.CHUNK_VALUES,
    ):
        super().__init__()
        self._out_dir, self._config, self._split = storage.absolute(out_dir), config, split
        self._batched, self._chunk_values = batched, chunk_values
        self._schema = schema or schema_for(config)
        self._sort_keys, self._rows_per_shard = tuple(sort_keys), rows_per_shard
        if split is None and "split" not in self._schema.names:
            raise ValueError(f"{config}: table has no split column, pass split=")

    def expand(self, rows):
        split, per_shard = self._split, self._rows_per_shard

        def split_of(row):
            return _split_key(row, split)

        def shard_of(row, totals):
            name = split_of(row)
            return (name, *shard_of_row(row["id"], totals[name], per_shard)), row

        if spill.spill_dir_of(rows.pipeline) is not None:  # local runner: shards gathered through files
            if self._batched:  # lists of rows: held as Arrow tables on the way
                grouped = rows | "SpillShards" >> spill_shards.SpillShardTables(
                    split_of, per_shard, self._schema
                )
            else:
                grouped = rows | "SpillShards" >> spill_shards.SpillShards(
                    split_of, per_shard, self._chunk_values
                )
        else:
            if self._batched:
                rows = rows | "EachRow" >> beam.FlatMap(_each_row)
            totals = (
                rows | "SplitOf" >> beam.Map(split_of) | "CountPerSplit" >> beam.combiners.Count.PerElement()
            )
            grouped = (
                rows
                | "AssignShard" >> beam.Map(shard_of, totals=beam.pvalue.AsDict(totals))
                | "GroupShards" >> beam.GroupByKey()
            )
        return grouped | "WriteShards" >> beam.ParDo(
            _WriteShard(self._out_dir, self._config, self._schema, self._sort_keys)
        )


class _WriteTableShard(beam.DoFn):
    """The shard of any of several tables: its key names the table (:class:`WriteTables`)."""

    def __init__(self, out_dir: str, schemas: dict[str, pa.Schema], sort_keys: Sequence[str]):
        self._out_dir, self._schemas, self._sort_keys = out_dir, schemas, tuple(sort_keys)

    def process(self, element):
        (config, split, index, total), rows = element
        yield _write_one_shard(
            self._out_dir, config, self._schemas[config], self._sort_keys, split, index, total, rows
        )


class WriteTables(beam.PTransform):
    """Rows of several tables at once, ``config_of(row)`` naming each row's table: the same files as one
    :class:`WriteTable` per table (same shards, same order inside them), in fewer steps on a distributed runner.

    On the local runner it is one :class:`WriteTable` per table (each gathers its shards through its own spill
    files). Elsewhere a single pass does what each table's pass did: one count of rows per (table, split), one
    GroupByKey of every table's shards, one writer; ``probes`` with its eight tables was one Flink job of 78
    vertices, which a TaskManager on two shared cores could not deploy within its heartbeat.
    """

    def __init__(
        self,
        out_dir: str,
        configs: Sequence[str],
        config_of: Callable[[dict], str],
        sort_keys: Sequence[str] = ("id",),
        rows_per_shard: int = DEFAULT_ROWS_PER_SHARD,
        chunk_values: int = spill.CHUNK_VALUES,
    ):
        super().__init__()
        self._out_dir, self._configs, self._config_of = storage.absolute(out_dir), tuple(configs), config_of
        self._sort_keys, self._rows_per_shard, self._chunk_values = (
            tuple(sort_keys),
            rows_per_shard,
            chunk_values,
        )
        self._schemas = {config: schema_for(config) for config in self._configs}
        for config, schema in self._schemas.items():
            if "split" not in schema.names:
                raise ValueError(f"{config}: table has no split column")

    def expand(self, rows):
        config_of, per_shard = self._config_of, self._rows_per_shard
        if spill.spill_dir_of(rows.pipeline) is not None:
            written = [
                rows
                | f"Only[{config}]" >> beam.Filter(lambda row, c=config: config_of(row) == c)
                | f"Write[{config}]"
                >> WriteTable(
                    self._out_dir,
                    config,
                    sort_keys=self._sort_keys,
                    rows_per_shard=per_shard,
                    chunk_values=self._chunk_values,
                )
                for config in self._configs
            ]
            return written | "Written" >> beam.Flatten()

        def table_of(row) -> tuple[str, str]:
            return config_of(row), row["split"]

        def shard_of(row, totals):
            table = table_of(row)
            return (*table, *shard_of_row(row["id"], totals[table], per_shard)), row

        totals = rows | "TableOf" >> beam.Map(table_of) | "CountPerTable" >> beam.combiners.Count.PerElement()
        return (
            rows
            | "AssignShard" >> beam.Map(shard_of, totals=beam.pvalue.AsDict(totals))
            | "GroupShards" >> beam.GroupByKey()
            | "WriteShards" >> beam.ParDo(_WriteTableShard(self._out_dir, self._schemas, self._sort_keys))
        )


class DropDuplicateIds(beam.PTransform):
    """Keep one row per ``id`` (the newest revision; ties broken by content, so the choice is deterministic).

    Returns ``(unique, rejected)``; every dropped copy is counted as ``stage/duplicate_id`` and dead-lettered.
    ``uncount``: the counter that already counted each copy as kept (an ingest's ``stage/kept``), one less per
    dropped copy, so that kept is what is written and kept plus the rejected reasons is what was read (before,
    three lines with one id twice read "read: 4 records", ``kept`` 3, 2 documents written).
    """

    def __init__(self, stage: str, uncount: str | None = None):
        super().__init__()
        self._stage, self._uncount = stage, uncount

    def expand(self, rows):
        stage, uncount = self._stage, self._uncount

        def pick(element):
            doc_id, copies = element
            copies = sorted(copies, key=newest_first, reverse=True)
            yield copies[0]
            if uncount and len(copies) > 1:
                count(stage, uncount, 1 - len(copies))
            for dropped in copies[1:]:
                yield Rejected(
                    "duplicate_id",
                    id=doc_id,
                    source=dropped.get("source"),
                    detail=f"kept {copies[0].get('dump')}",
                    record=dropped,
                )

        return (
            rows
            | "KeyById" >> beam.Map(lambda row: (row["id"], row))
            | "GroupById" >> spill.SpillGroupByKey()
            | "PickOne" >> ApplyWithRejects(pick, stage, kept=None)
        )


class WriteRejected(beam.PTransform):
    """Write dead-letter rows of one stage to ``OUT/rejected/<stage>/``."""

    def __init__(self, out_dir: str, stage: str):
        super().__init__()
        self._out_dir, self._stage = out_dir, stage

    def expand(self, rejected):
        return rejected | WriteTable(
            self._out_dir,
            f"rejected/{self._stage}",
            split=REJECTED_SPLIT,
            sort_keys=("id", "reason", "detail"),
            schema=REJECTED_SCHEMA,
        )


# --------------------------------------------------------------------------------------------- reading


def list_tables(root: str, prefix: str) -> list[str]:
    """Parquet files of every config under ``root`` whose name starts with ``prefix`` (sorted, absolute).

    ``root`` may be local or remote (``gs://``, ``s3://``: a "directory" is a prefix with files under it).
    """
    root = storage.absolute(root)
    if not storage.exists(root):
        raise InputError(f"{root}: no such directory")
    pattern = posixpath.join(root, f"{prefix}*", "*.parquet")
    try:
        return storage.list_files(pattern)
    except Exception as exc:  # noqa: BLE001 - Beam wraps storage failures in its own types
        raise InputError(f"{root}: cannot be listed ({storage.storage_error(exc)})") from None


def require_tables(root: str, prefix: str, written_by: str) -> list[str]:
    """:func:`list_tables`, with a clear error naming the command that writes them if there are none."""
    files = list_tables(root, prefix)
    if not files:
        raise InputError(f"{root}: no {prefix}*/*.parquet files (write them with `{written_by}`)")
    return files


def source_of_file(path: str) -> str:
    """The source of a documents table file (the folder's name after ``documents-``).

    >>> source_of_file(".../documents-wikipedia/documents-00000-of-00001.parquet")
    'wikipedia'
    """
    return posixpath.basename(posixpath.dirname(path)).removeprefix("documents-")


def read_ids(files: Iterable[str]) -> Iterator[str]:
    """The ``id`` column of Parquet files, streamed a record batch at a time (bounded memory)."""
    for path in files:
        with FileSystems.open(path) as f:
            for batch in pq.ParquetFile(f).iter_batches(columns=["id"]):
                yield from batch.column(0).to_pylist()


def document_files(docs_dir: str) -> list[str]:
    """Parquet files written by ``incoherent ingest`` under ``docs_dir``; a clear error if there are none."""
    files = require_tables(docs_dir, "documents-", "incoherent ingest ...")
    for path in files[:1]:
        with FileSystems.open(path) as f:
            try:
                names = pq.read_schema(f).names
            except Exception as exc:  # pyarrow raises several types for corrupt files
                raise InputError(f"{path}: not a readable Parquet file ({exc})") from None
        missing = {"id", "source", "sentences"} - set(names)
        if missing:
            raise InputError(f"{path}: not a documents table, missing columns {sorted(missing)}")
    return files


class ReadDocuments(beam.PTransform):
    """Read the document rows of ``docs_dir`` (every ``documents-*`` config) as dicts."""

    def __init__(self, docs_dir: str, files: Sequence[str] | None = None):
        super().__init__()
        self._files = list(files) if files is not None else document_files(docs_dir)

    def expand(self, pbegin):
        return (
            pbegin
            | "DocumentFiles" >> beam.Create(self._files)
            | "ReadParquet" >> beam.io.ReadAllFromParquet()
        )
