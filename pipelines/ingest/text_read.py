"""The transforms of ``incoherent ingest text`` (imported by :func:`pipelines.ingest.text.run`, so ``--help``
imports no Beam)."""

from __future__ import annotations

import apache_beam as beam

from incoherent.pipelines.runtime import progress, storage
from incoherent.pipelines.runtime.tables import (
    ApplyWithRejects,
    DropDuplicateIds,
    count,
)
from incoherent.sources import limits, textfiles

STAGE = "ingest-text"
READ_STAGE = "ingest-text-read"


class IngestText(beam.PTransform):
    """Text files of one source -> ``(documents, rejected)``.

    JSONL files are planned into read tasks on the workers (``PlanRanges``: an uncompressed file larger than
    ``range_bytes`` becomes byte ranges, see :func:`sources.textfiles.plan_ranges`), spread, then parsed.
    """

    def __init__(
        self,
        files: list[str],
        source: str,
        id_field: str | None,
        text_field: str,
        read_limits: limits.Limits = limits.DEFAULT,
        head: int | None = None,
        tail: int | None = None,
        range_bytes: int = textfiles.RANGE_MB << 20,
    ):
        super().__init__()
        self._files, self._source = files, source
        self._range_bytes = range_bytes
        self._id_field, self._text_field = id_field, text_field
        self._limits = read_limits
        self._head, self._tail = head, tail

    def expand(self, pbegin):
        source, id_field, text_field = self._source, self._id_field, self._text_field
        read_limits, range_bytes = self._limits, self._range_bytes
        if id_field is None or self._head is not None or self._tail is not None:
            return pbegin | "Selected" >> IngestSelected(
                self._files, source, id_field, text_field, self._head, self._tail, read_limits
            )
        json_files = [f for f in self._files if f.endswith(textfiles.JSON_SUFFIXES)]
        parquet_files = [f for f in self._files if f.endswith(textfiles.PARQUET_SUFFIXES)]

        def plan_ranges(path):
            return textfiles.plan_ranges(path, storage.BeamFiles().size, range_bytes)

        def parse_json_range(task):
            path, start, end = task
            count(READ_STAGE, "read_tasks")
            if start > 0 or end is not None:
                count(READ_STAGE, "json_ranges")
            opener = storage.open_raw if storage.is_remote(path) else None
            for out in textfiles.json_file_records(
                path, id_field, text_field, source, read_limits, opener, start, end
            ):
                progress.advance("ingest: documents", 1)
                yield out

        def parse_parquet(path):
            with storage.local_copy(path) as local:
                yield from textfiles.parquet_records(local, id_field, text_field, source, read_limits)

        parts_docs, parts_rejected = [], []
        if json_files:
            docs, rejected = (
                pbegin
                | "JsonFiles" >> beam.Create(json_files)
                | "SpreadJsonFiles" >> beam.Reshuffle()
                | "PlanRanges" >> beam.FlatMap(plan_ranges)
                | "SpreadRanges" >> beam.Reshuffle()
                | "ParseJson" >> ApplyWithRejects(parse_json_range, STAGE)
            )
            parts_docs.append(docs)
            parts_rejected.append(rejected)
        if parquet_files:
            docs, rejected = (
                pbegin
                | "ParquetFiles" >> beam.Create(parquet_files)
                | "SpreadFiles" >> beam.Reshuffle()
                | "ParseParquet" >> ApplyWithRejects(parse_parquet, STAGE)
            )
            parts_docs.append(docs)
            parts_rejected.append(rejected)
        docs = parts_docs | "AllDocs" >> beam.Flatten()
        unique, duplicates = docs | "DropDuplicates" >> DropDuplicateIds(STAGE, uncount="kept")
        return unique, (*parts_rejected, duplicates) | "AllRejected" >> beam.Flatten()


class IngestSelected(beam.PTransform):
    """Text files of one source, each read in order on one worker -> ``(documents, rejected)``: the first or
    last N records of each file (``--head`` / ``--tail``), ids from the row numbers (``--row-ids``)."""

    def __init__(self, files, source, id_field, text_field, head, tail, read_limits=limits.DEFAULT):
        super().__init__()
        self._files, self._args = files, (id_field, text_field, source, head, tail, read_limits)

    def expand(self, pbegin):
        id_field, text_field, source, head, tail, read_limits = self._args

        def read_file(path):
            if path.endswith(textfiles.PARQUET_SUFFIXES):
                with storage.local_copy(path) as local:
                    yield from textfiles.selected_parquet_records(
                        local, id_field, text_field, source, head, tail, read_limits
                    )
                return
            opener = storage.open_raw if storage.is_remote(path) else None
            with textfiles.open_text_file(path, opener) as stream:
                yield from textfiles.selected_json_records(
                    stream, path, id_field, text_field, source, head, tail, read_limits
                )

        docs, rejected = (
            pbegin
            | "Files" >> beam.Create(self._files)
            | "SpreadFiles" >> beam.Reshuffle()
            | "ReadFiles" >> ApplyWithRejects(read_file, STAGE)
        )
        unique, duplicates = docs | "DropDuplicates" >> DropDuplicateIds(STAGE, uncount="kept")
        return unique, (rejected, duplicates) | "AllRejected" >> beam.Flatten()
