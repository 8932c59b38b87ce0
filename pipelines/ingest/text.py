"""``incoherent ingest text PATH [PATH ...] --out DIR``: JSONL / Parquet collections -> ``OUT/documents-<source>/``.

Each file's documents go to the config named by ``--source`` (default: the file name without suffixes,
``news.jsonl`` -> ``documents-news``); ids become ``<source>:<id>``.
"""

from __future__ import annotations

import argparse

import apache_beam as beam

from pipelines.commands import add_overwrite
from pipelines.runtime import progress, storage
from pipelines.runtime.inputs import DescribeInputs, collect_descriptions
from pipelines.runtime.run import print_ingest_report, run_pipeline
from pipelines.runtime.tables import (
    ApplyWithRejects,
    DropDuplicateIds,
    WriteRejected,
    WriteTable,
    count,
)
from schemas.records import InputError
from sources import limits, textfiles
from sources.paths import check_name

STAGE = "ingest-text"
READ_STAGE = "ingest-text-read"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths", nargs="+", metavar="PATH", help=".jsonl[.gz] / .parquet files or directories of them"
    )
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--id-field", default="id", help="field holding the document id (default: id)")
    parser.add_argument(
        "--text-field", default="text", help="field holding the document text (default: text)"
    )
    parser.add_argument("--source", help="source name for every input (default: each file's name)")
    rows = parser.add_mutually_exclusive_group()
    rows.add_argument(
        "--head", type=int, default=None, metavar="N", help="only the first N records of each file"
    )
    rows.add_argument(
        "--tail", type=int, default=None, metavar="N", help="only the last N records of each file"
    )
    parser.add_argument(
        "--row-ids",
        action="store_true",
        help="records have no id field: ids are <file name>-<row> (the record's 0-based row in its file)",
    )
    add_overwrite(parser)
    parser.add_argument(
        "--range-mb",
        type=limits.positive_float,
        default=textfiles.RANGE_MB,
        metavar="MB",
        help=f"an uncompressed JSONL file larger than this is read in byte ranges of this size, in parallel "
        f"(default {textfiles.RANGE_MB}); the output is the same whatever the size",
    )
    limits.add_limit_arguments(parser)


def _check_source(name: str, origin: str) -> str:
    return check_name(name, f"{origin}: source name (set --source)")


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
        unique, duplicates = docs | "DropDuplicates" >> DropDuplicateIds(STAGE)
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
        unique, duplicates = docs | "DropDuplicates" >> DropDuplicateIds(STAGE)
        return unique, (rejected, duplicates) | "AllRejected" >> beam.Flatten()


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    for option, value in (("--head", args.head), ("--tail", args.tail)):
        if value is not None and value < 1:
            raise InputError(f"{option}: must be at least 1, got {value}")
    id_field = None if args.row_ids else args.id_field
    files = textfiles.list_inputs([storage.absolute(p) for p in args.paths], storage.BeamFiles())
    by_source: dict[str, list[str]] = {}
    for path in files:
        source = (
            _check_source(args.source, "--source")
            if args.source
            else _check_source(textfiles.source_name(path), path)
        )
        if path.endswith(textfiles.PARQUET_SUFFIXES):
            if storage.is_remote(path):  # the footer only, read through Beam's filesystems
                with storage.open_raw(path) as handle:
                    textfiles.check_parquet_columns(
                        path, id_field or args.text_field, args.text_field, handle
                    )
            else:
                textfiles.check_parquet_columns(path, id_field or args.text_field, args.text_field)
        by_source.setdefault(source, []).append(path)

    def build(p):
        rejected_parts = []
        for source, paths in sorted(by_source.items()):
            docs, rejected = p | f"Ingest[{source}]" >> IngestText(
                paths,
                source,
                id_field,
                args.text_field,
                limits.Limits.from_args(args),
                args.head,
                args.tail,
                max(1, int(args.range_mb * (1 << 20))),
            )
            docs | f"Write[{source}]" >> WriteTable(args.out, f"documents-{source}", split="documents")
            rejected_parts.append(rejected)
        rejected_parts | "AllRejected" >> beam.Flatten() | "WriteRejected" >> WriteRejected(args.out, STAGE)
        p | "DescribeInputs" >> DescribeInputs(args.paths, "text", args.out)

    params = {
        "paths": args.paths,
        "id_field": args.id_field,
        "text_field": args.text_field,
        "source": args.source,
        **{k: v for k, v in (("head", args.head), ("tail", args.tail), ("row_ids", args.row_ids)) if v},
    }
    summary = run_pipeline(
        build,
        command="ingest text",
        out_dir=args.out,
        params=params,
        beam_args=beam_args,
        overwrite=args.overwrite,
        extra_summary=lambda _summary: collect_descriptions(args.out),
    )
    print_ingest_report(summary, args.out, STAGE)
    return 0
