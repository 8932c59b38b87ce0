"""Beam transforms of ``incoherent ingest wikipedia`` (see :mod:`pipelines.ingest.wikipedia` for the command).

Pipeline shape::

    Create(read tasks) | FlatMap(expand_task) (remote multistream dumps only) | Reshuffle
        | ParDo(read task -> page records) | Reshuffle (whole files only)
        | ApplyWithRejects(page_to_document) -> documents, rejected
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator

import apache_beam as beam

from incoherent.fileio.paths import is_remote
from incoherent.pipelines.ingest.wikipedia_plan import expand_task
from incoherent.pipelines.runtime import progress
from incoherent.pipelines.runtime.tables import ApplyWithRejects, count
from incoherent.sources import mediawiki
from incoherent.sources.limits import Limits
from incoherent.sources.wikipedia import compact, page_to_document

STAGE = "ingest-wikipedia"
READ_STAGE = "ingest-wikipedia-read"


def read_task(task: dict, threads: int = 1) -> Iterator[dict]:
    """Page records of one read task (see :func:`plan_reads`); ``threads`` decompress a multistream range."""
    inc = functools.partial(count, READ_STAGE)
    read_limits = Limits.from_dict(task.get("limits"))
    inc("read_tasks", 1)
    if "start" not in task:
        opener = None
        if is_remote(task["path"]):  # gs://, s3://: streamed through Beam's filesystems
            from incoherent.pipelines.runtime.storage import open_raw as opener
        yield from mediawiki.read_pages(
            task["path"], opener=opener, count=inc, threads=threads, limits=read_limits
        )
        return
    site = mediawiki.SiteInfo(**task["site"])
    inc("multistream_ranges", 1)
    opener = None
    if is_remote(
        task["path"]
    ):  # gs://, s3://: seek to the range and read only it, through Beam's filesystems
        from incoherent.pipelines.runtime.storage import open_raw as opener
    yield from mediawiki.read_range(
        task["path"],
        task["start"],
        task["end"],
        site,
        last=task["last"],
        threads=threads,
        opener=opener,
        count=inc,
        limits=read_limits,
    )


def warm_up() -> None:
    """Import mwparserfromhell and build the Punkt tokenizer (importing nltk takes seconds)."""
    import mwparserfromhell  # noqa: F401

    from incoherent.sources.sentences import split_sentences

    split_sentences("Warm up.")


class _ReadPages(beam.DoFn):
    """Read one task. While this worker reads (decompression runs elsewhere, this thread parses pages), a
    second thread prepares the cleaning step that follows, so its start-up cost hides behind the reading."""

    def __init__(self, threads: int = 1):
        self._threads = threads

    def setup(self):
        threading.Thread(target=warm_up, name="warm-up", daemon=True).start()

    def process(self, task):
        for page in read_task(task, self._threads):
            text = len(page.get("lead") or "") + len(page.get("tail") or "")
            progress.advance("ingest: pages", 1, unit="page", nbytes=text)
            yield compact(page)


class IngestWikipedia(beam.PTransform):
    """Dumps -> ``(documents, rejected)`` PCollections.

    Whole files are read by one worker each, then their pages are spread over the workers for parsing
    (``spread_pages``). Multistream ranges are already spread, so their pages are parsed where they were
    read. With a single in-process worker spreading buys nothing and costs memory (Beam's local runner holds
    a shuffle in memory), so :func:`run` turns it off there: cleaning then overlaps the decompression.
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
        if any(
            "index" in task for task in self._tasks
        ):  # remote multistream dumps: ranges planned on a worker
            tasks = tasks | "PlanRanges" >> beam.FlatMap(expand_task)
        if self._spread:  # with one in-process worker there is nobody to spread the tasks to
            tasks = tasks | "SpreadTasks" >> beam.Reshuffle()
        pages = tasks | "ReadPages" >> beam.ParDo(_ReadPages(self._threads))
        if self._spread and not all("start" in task or "index" in task for task in self._tasks):
            pages = pages | "SpreadPages" >> beam.Reshuffle()
        return pages | "LeadToDocument" >> ApplyWithRejects(to_document, STAGE)
