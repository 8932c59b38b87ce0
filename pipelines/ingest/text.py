"""``incoherent ingest text PATH [PATH ...] --out DIR``: JSONL / Parquet collections -> ``OUT/documents-<source>/``.

Each file's documents go to the config named by ``--source`` (default: the file name without suffixes,
``news.jsonl`` -> ``documents-news``); ids become ``<source>:<id>``. This module imports Beam only in
:func:`run`; the transforms are in :mod:`pipelines.ingest.text_read`.
"""

from __future__ import annotations

import argparse

from incoherent.fileio.paths import check_name, name_clash
from incoherent.pipelines.commands import add_overwrite
from incoherent.pipelines.runtime import storage
from incoherent.schemas.records import InputError
from incoherent.sources import limits, textfiles


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


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    import apache_beam as beam

    from incoherent.pipelines.ingest.text_read import STAGE, IngestText
    from incoherent.pipelines.runtime.inputs import DescribeInputs, collect_descriptions
    from incoherent.pipelines.runtime.run import print_ingest_report, run_pipeline
    from incoherent.pipelines.runtime.tables import WriteRejected, WriteTable

    for option, value in (("--head", args.head), ("--tail", args.tail)):
        if value is not None and value < 1:
            raise InputError(f"{option}: must be at least 1, got {value}")
    id_field = None if args.row_ids else args.id_field
    files = textfiles.list_inputs([storage.absolute(p) for p in args.paths], storage.BeamFiles())
    clash = name_clash((textfiles.source_name(path), path) for path in files) if args.row_ids else None
    if clash:  # a/part.jsonl and b/part.jsonl: both rows 0, 1, ... would be part-0, part-1, ...
        name, first, second = clash
        raise InputError(
            f"--row-ids: {first} and {second} both give row ids {name}-<row>, so their documents' ids would "
            "collide; give the files distinct names, or ingest them apart"
        )
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
        extra_summary=lambda _summary: {"kind": "text", **collect_descriptions(args.out)},
    )
    print_ingest_report(summary, args.out, STAGE)
    return 0
