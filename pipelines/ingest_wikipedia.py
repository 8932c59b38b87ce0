"""``incoherent ingest wikipedia DUMP [DUMP ...] --out DIR``: MediaWiki XML dumps -> lead-section documents.

Pipeline shape::

    Create(read tasks) | Reshuffle | ParDo(read task -> page records) | Reshuffle (whole files only)
        | ApplyWithRejects(page_to_document) -> WriteTable("documents-<source>") + WriteRejected

A read task is a whole file, or for a multistream dump (``*-multistream.xml.bz2`` with its
``*-index.txt.bz2`` next to it) one byte range of its bz2 streams, so Beam workers split one dump. Page
records carry only the lead section, so little data crosses the shuffle; mwparserfromhell runs after it,
in parallel.

With Beam's default local runner (one in-process worker) every dump, single- or multistream, is one read
task whose bz2 blocks are decompressed in parallel by indexed_bzip2 (``--decompress-threads``, default: one
per core) while the main thread parses XML and cleans leads: every core works without extra worker
processes.
"""

from __future__ import annotations

import argparse
import os
import threading
from collections.abc import Iterator

import apache_beam as beam

from pipelines.common import (
    ApplyWithRejects,
    DropDuplicateIds,
    WriteRejected,
    WriteTable,
    count,
    run_pipeline,
)
from schemas.records import InputError
from sources import mediawiki
from sources.wikipedia import compact, page_to_document

STAGE = "ingest-wikipedia"
READ_STAGE = "ingest-wikipedia-read"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "dumps", nargs="+", metavar="DUMP", help="MediaWiki XML dump (.xml, .xml.bz2, multistream)"
    )
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--overwrite", action="store_true", help="replace an earlier run's output in --out")
    parser.add_argument("--source", default="wikipedia", help="source name: ids are <source>:<page id>")
    parser.add_argument(
        "--range-mb",
        type=float,
        default=None,
        help="multistream dumps: compressed MB per parallel read task (default: "
        f"{mediawiki.RANGE_BYTES / (1 << 20):g} with several Beam workers, the whole file with one in-process "
        "worker)",
    )
    parser.add_argument(
        "--decompress-threads",
        type=int,
        default=0,
        help="threads decompressing the bz2 blocks of a read task (default: one per core with one in-process "
        "Beam worker, 1 with several workers)",
    )


def _counter(stage: str):
    def inc(name: str, n: int = 1) -> None:
        count(stage, name, n)

    return inc


def plan_reads(
    dumps: list[str],
    range_bytes: int = mediawiki.RANGE_BYTES,
    min_ranges: int = mediawiki.MIN_RANGES,
    whole_files: bool = False,
) -> list[dict]:
    """Read tasks: one per file, or one per byte range of a multistream dump (checked up front)."""
    tasks: list[dict] = []
    for path in dumps:
        if not os.path.exists(path):
            raise InputError(f"{path}: no such file")
        if os.path.isdir(path):
            raise InputError(f"{path}: is a directory, not a dump file")
        site = mediawiki.read_siteinfo(path)  # fails early on files that are not MediaWiki XML
        index = None if whole_files else mediawiki.multistream_index(path)
        if index is None:
            tasks.append({"path": path})
            continue
        size = os.path.getsize(path)
        offsets = mediawiki.stream_offsets(index)
        ranges = mediawiki.multistream_ranges(
            path, offsets, size, target_bytes=range_bytes, min_ranges=min_ranges
        )
        site_fields = {"base": site.base, "dbname": site.dbname, "namespaces": site.namespaces}
        for i, (start, end) in enumerate(ranges):
            tasks.append(
                {"path": path, "start": start, "end": end, "last": i == len(ranges) - 1, "site": site_fields}
            )
    return tasks


def read_task(task: dict, threads: int = 1) -> Iterator[dict]:
    """Page records of one read task (see :func:`plan_reads`); ``threads`` decompress a multistream range."""
    inc = _counter(READ_STAGE)
    if "start" not in task:
        yield from mediawiki.read_pages(task["path"], count=inc, threads=threads)
        return
    site = mediawiki.SiteInfo(**task["site"])
    inc("multistream_ranges", 1)
    yield from mediawiki.read_range(
        task["path"],
        task["start"],
        task["end"],
        site,
        last=task["last"],
        threads=threads,
        count=inc,
    )


def warm_up() -> None:
    """Import mwparserfromhell and build the Punkt tokenizer (importing nltk takes seconds)."""
    import mwparserfromhell  # noqa: F401

    from sources.sentences import split_sentences

    split_sentences("Warm up.")


class _ReadPages(beam.DoFn):
    """Read one task. While this worker reads (a thread decompresses, expat parses), a second thread
    prepares the parsing step that follows, so its start-up cost hides behind the decompression."""

    def __init__(self, threads: int = 1):
        self._threads = threads

    def setup(self):
        threading.Thread(target=warm_up, name="warm-up", daemon=True).start()

    def process(self, task):
        for page in read_task(task, self._threads):
            yield compact(page)


class IngestWikipedia(beam.PTransform):
    """Dumps -> ``(documents, rejected)`` PCollections.

    Whole files are read by one worker each, then their pages are spread over the workers for parsing
    (``spread_pages``). Multistream ranges are already spread, so their pages are parsed where they were
    read. With a single in-process worker spreading buys nothing and costs memory (Beam's local runner holds
    a shuffle in memory), so :func:`run` turns it off there: parsing then overlaps the decompression thread.
    """

    def __init__(
        self, tasks: list[dict], source: str = "wikipedia", spread_pages: bool = True, threads: int = 1
    ):
        super().__init__()
        self._tasks, self._source, self._spread, self._threads = tasks, source, spread_pages, threads

    def expand(self, pbegin):
        source = self._source

        def to_document(page: dict):
            return page_to_document(page, source)

        tasks = pbegin | "ReadTasks" >> beam.Create(self._tasks)
        if self._spread:  # with one in-process worker there is nobody to spread the tasks to
            tasks = tasks | "SpreadTasks" >> beam.Reshuffle()
        pages = tasks | "ReadPages" >> beam.ParDo(_ReadPages(self._threads))
        if self._spread and not all("start" in task for task in self._tasks):
            pages = pages | "SpreadPages" >> beam.Reshuffle()
        return pages | "LeadToDocument" >> ApplyWithRejects(to_document, STAGE)


def several_workers(beam_args: list[str]) -> bool:
    """False only for Beam's local runner with one in-process worker (the default)."""
    from apache_beam.options.pipeline_options import DirectOptions, PipelineOptions, StandardOptions

    options = PipelineOptions(list(beam_args))
    if options.view_as(StandardOptions).runner not in (None, "DirectRunner", "direct", "directrunner"):
        return True
    direct = options.view_as(DirectOptions)
    return (direct.direct_num_workers or 1) != 1 or direct.direct_running_mode not in (None, "in_memory")


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    spread = several_workers(beam_args)
    if args.range_mb is not None:
        tasks = plan_reads(args.dumps, range_bytes=max(1, int(args.range_mb * (1 << 20))))
    elif spread:
        tasks = plan_reads(args.dumps)
    else:  # one in-process worker: one task per file, its bz2 blocks decompressed in parallel
        tasks = plan_reads(args.dumps, whole_files=True)
    threads = args.decompress_threads or (1 if spread else max(1, min(4, os.cpu_count() or 1)))
    out, source = args.out, args.source

    def build(pipeline: beam.Pipeline) -> None:
        documents, rejected = pipeline | "IngestWikipedia" >> IngestWikipedia(
            tasks, source, spread_pages=spread, threads=threads
        )
        if len(args.dumps) > 1:
            # Several dumps (e.g. snapshots of one wiki) can hold the same page id: keep the newest revision.
            documents, duplicates = documents | "DropDuplicates" >> DropDuplicateIds(STAGE)
            rejected = (rejected, duplicates) | "AllRejected" >> beam.Flatten()
        documents | "WriteDocuments" >> WriteTable(out, f"documents-{source}", split="documents")
        rejected | "WriteRejected" >> WriteRejected(out, STAGE)

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
    )
    counters = summary["counters"]
    kept = counters.get(STAGE, {}).get("kept", 0)
    dropped = {k: v for k, v in counters.get(STAGE, {}).items() if k != "kept"}
    read = counters.get(READ_STAGE, {})
    print(f"{kept} documents -> {out}/documents-{source}/  (pages read: {read.get('pages_read', 0)})")
    for reason, n in sorted(dropped.items()):
        print(f"  rejected {reason}: {n}")
    if read.get("trailing_junk_bytes"):
        print(f"  ignored {read['trailing_junk_bytes']} bytes of junk after </mediawiki>")
    if read.get(mediawiki.BZ2_GARBAGE):
        print(f"  ignored {read[mediawiki.BZ2_GARBAGE]} bytes of garbage after the last bz2 stream")
    return 0
