"""``incoherent ingest wikipedia DUMP [DUMP ...] --out DIR``: MediaWiki XML dumps -> lead-section documents.

Pipeline shape::

    Create(read tasks) | FlatMap(expand_task) (remote multistream dumps) | Reshuffle
        | ParDo(read task -> page records) | Reshuffle (whole files only)
        | ApplyWithRejects(page_to_document) -> WriteTable("documents-<source>") + WriteRejected

A read task is a whole file, or for a multistream dump (``*-multistream.xml.bz2`` with its
``*-index.txt.bz2`` next to it, or given with ``--multistream-index``) one byte range of its bz2 streams, so
Beam workers split one dump; a remote dump's ranges are planned on a worker (:func:`expand_task`) and read
with seek + read through Beam's filesystems. Page
records carry only the lead section, so little data crosses the shuffle; mwparserfromhell runs after it,
in parallel.

With Beam's default local runner (one in-process worker) every dump, single- or multistream, is one read
task: indexed_bzip2 decodes it in a child process (``--decompress-threads``, default one per core; the child
gets one fewer) while the worker parses XML and cleans leads, so every core works without extra Beam worker
processes. The first dump's decoder starts before Beam is imported (:func:`sources.bz2decode.start_decoder`):
the decoder is the slower of the two. This module imports Beam only in :func:`run`; the transforms are in
:mod:`pipelines.ingest.wikipedia_read`.
"""

from __future__ import annotations

import argparse
import os

from incoherent.fileio.paths import is_remote
from incoherent.pipelines.commands import add_overwrite
from incoherent.pipelines.ingest.wikipedia_plan import index_flags, plan_reads
from incoherent.pipelines.runtime.threads import available_cores
from incoherent.sources import bz2decode, limits


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "dumps", nargs="+", metavar="DUMP", help="MediaWiki XML dump (.xml, .xml.bz2, multistream)"
    )
    parser.add_argument("--out", required=True, help="output directory")
    add_overwrite(parser)
    parser.add_argument(
        "--source", default="wikipedia", help="source name: ids are <source>:<page id> (default: wikipedia)"
    )
    parser.add_argument(
        "--range-mb",
        type=float,
        default=None,
        help="multistream dumps: compressed MB per parallel read task (default: "
        f"{bz2decode.RANGE_BYTES / (1 << 20):g} with several Beam workers, the whole file with one in-process "
        "worker)",
    )
    parser.add_argument(
        "--multistream-index",
        nargs="+",
        action="extend",
        default=None,
        metavar="INDEX",
        help="the *-multistream-index.txt.bz2 of a multistream dump, when it is not beside the dump under "
        "Wikimedia's name; one per DUMP, in the same order",
    )
    parser.add_argument(
        "--decompress-threads",
        type=int,
        default=0,
        help="threads decompressing the bz2 blocks of a read task (default: one per core with one in-process "
        "Beam worker, 1 with several workers)",
    )
    limits.add_limit_arguments(parser)


def several_workers(beam_args: list[str]) -> bool:
    """False only for Beam's local runner with one in-process worker (the default)."""
    from apache_beam.options.pipeline_options import DirectOptions, PipelineOptions, StandardOptions

    options = PipelineOptions(list(beam_args))
    from incoherent.pipelines.runtime.options import is_local_runner

    if not is_local_runner(options.view_as(StandardOptions).runner):
        return True
    direct = options.view_as(DirectOptions)
    return (direct.direct_num_workers or 1) != 1 or direct.direct_running_mode not in (None, "in_memory")


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    args.dumps = [path if is_remote(path) else os.path.abspath(path) for path in args.dumps]
    spread = bool(beam_args) and several_workers(beam_args)  # no Beam flags: one in-process worker
    indexes = index_flags(args.dumps, args.multistream_index)
    if args.range_mb is not None:
        tasks = plan_reads(args.dumps, range_bytes=max(1, int(args.range_mb * (1 << 20))), indexes=indexes)
    elif spread:
        tasks = plan_reads(args.dumps, indexes=indexes)
    else:  # one in-process worker: one task per file, its bz2 blocks decompressed in parallel
        tasks = plan_reads(args.dumps, whole_files=True)
    read_limits = limits.Limits.from_args(args).to_dict()
    for task in tasks:  # each read task carries the limits to the worker that reads it
        task["limits"] = read_limits
    threads = args.decompress_threads or (1 if spread else min(4, available_cores()))
    out, source = args.out, args.source
    if (
        not spread and "start" not in tasks[0] and not is_remote(tasks[0]["path"])
    ):  # this process reads the first dump: start its decoder now
        bz2decode.start_decoder(tasks[0]["path"], threads)

    import apache_beam as beam

    from incoherent.pipelines.ingest.wikipedia_read import READ_STAGE, STAGE, IngestWikipedia
    from incoherent.pipelines.runtime.inputs import DescribeInputs, collect_descriptions
    from incoherent.pipelines.runtime.run import print_ingest_report, run_pipeline
    from incoherent.pipelines.runtime.tables import DropDuplicateIds, WriteRejected, WriteTable

    def build(pipeline: beam.Pipeline) -> None:
        documents, rejected = pipeline | "IngestWikipedia" >> IngestWikipedia(
            tasks, source, spread_pages=spread, threads=threads
        )
        if len(args.dumps) > 1:
            # Several dumps (e.g. snapshots of one wiki) can hold the same page id: keep the newest revision.
            documents, duplicates = documents | "DropDuplicates" >> DropDuplicateIds(STAGE, uncount="kept")
            rejected = (rejected, duplicates) | "AllRejected" >> beam.Flatten()
        documents | "WriteDocuments" >> WriteTable(out, f"documents-{source}", split="documents")
        rejected | "WriteRejected" >> WriteRejected(out, STAGE)
        pipeline | "DescribeInputs" >> DescribeInputs(args.dumps, "wikipedia", out)

    try:
        summary = run_pipeline(
            build,
            command="ingest wikipedia",
            out_dir=out,
            params={
                "dumps": list(args.dumps),
                "source": source,
                "read_tasks": len(tasks),
                "decompress_threads": threads,
            },
            beam_args=beam_args,
            overwrite=args.overwrite,
            extra_summary=lambda _summary: {"kind": "wikipedia", **collect_descriptions(out)},
        )
    finally:
        bz2decode.stop_started_decoders()  # one no read took over (the run failed before reading)
    read = summary["counters"].get(READ_STAGE, {})
    notes = []
    if read.get("trailing_junk_bytes"):
        notes.append(f"ignored {read['trailing_junk_bytes']:,} bytes of junk after </mediawiki>")
    if read.get(bz2decode.BZ2_GARBAGE):
        notes.append(f"ignored {read[bz2decode.BZ2_GARBAGE]:,} bytes of garbage after the last bz2 stream")
    print_ingest_report(summary, out, STAGE, "pages", read.get("pages_read", 0), notes)
    return 0
