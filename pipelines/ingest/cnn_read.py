"""The transforms of ``incoherent ingest cnn`` (imported by :func:`pipelines.ingest.cnn.run`, so ``--help``
imports no Beam)."""

from __future__ import annotations

import functools

import apache_beam as beam

from incoherent.pipelines.runtime import storage
from incoherent.pipelines.runtime.tables import ApplyWithRejects, DropDuplicateIds, count
from incoherent.sources import cnn, limits

STAGE = "ingest-cnn"


def _count(name: str, n: int = 1) -> None:
    count(STAGE, name, n)


def read_stories(path: str, read_limits: limits.Limits = limits.DEFAULT, source: str = cnn.SOURCE):
    """:func:`sources.cnn.stories` of a local or remote (gs://, s3://) story file or archive."""
    with storage.local_copy(path) as local:
        yield from cnn.stories(local, read_limits, _count, source)


class IngestCnn(beam.PTransform):
    """Story files and archives -> ``(documents, rejected)``."""

    def __init__(
        self, inputs: list[str], read_limits: limits.Limits = limits.DEFAULT, source: str = cnn.SOURCE
    ):
        super().__init__()
        self._inputs = inputs
        self._limits = read_limits
        self._source = source

    def expand(self, pbegin):
        docs, rejected = (
            pbegin
            | "Inputs" >> beam.Create(self._inputs)
            | "Spread" >> beam.Reshuffle()
            | "ParseStories"
            >> ApplyWithRejects(
                functools.partial(read_stories, read_limits=self._limits, source=self._source), STAGE
            )
        )
        unique, duplicates = docs | "DropDuplicates" >> DropDuplicateIds(STAGE, uncount="kept")
        return unique, (rejected, duplicates) | "AllRejected" >> beam.Flatten()
