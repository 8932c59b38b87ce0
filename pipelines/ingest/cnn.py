"""``incoherent ingest cnn PATH [PATH ...] --out DIR``: CNN stories -> ``OUT/documents-cnn/``."""

from __future__ import annotations

import argparse
import functools

import apache_beam as beam

from pipelines.commands import add_overwrite
from pipelines.runtime import storage
from pipelines.runtime.inputs import DescribeInputs, collect_descriptions
from pipelines.runtime.run import print_ingest_report, run_pipeline
from pipelines.runtime.tables import ApplyWithRejects, DropDuplicateIds, WriteRejected, WriteTable, count
from sources import cnn, limits

STAGE = "ingest-cnn"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="directories of .story files, .story files, or cnn_stories.tgz",
    )
    parser.add_argument("--out", required=True, help="output directory")
    add_overwrite(parser)
    limits.add_limit_arguments(parser)


def _count(name: str, n: int = 1) -> None:
    count(STAGE, name, n)


def read_stories(path: str, read_limits: limits.Limits = limits.DEFAULT):
    """:func:`sources.cnn.stories` of a local or remote (gs://, s3://) story file or archive."""
    with storage.local_copy(path) as local:
        yield from cnn.stories(local, read_limits, _count)


class IngestCnn(beam.PTransform):
    """Story files and archives -> ``(documents, rejected)``."""

    def __init__(self, inputs: list[str], read_limits: limits.Limits = limits.DEFAULT):
        super().__init__()
        self._inputs = inputs
        self._limits = read_limits

    def expand(self, pbegin):
        docs, rejected = (
            pbegin
            | "Inputs" >> beam.Create(self._inputs)
            | "Spread" >> beam.Reshuffle()
            | "ParseStories"
            >> ApplyWithRejects(functools.partial(read_stories, read_limits=self._limits), STAGE)
        )
        unique, duplicates = docs | "DropDuplicates" >> DropDuplicateIds(STAGE)
        return unique, (rejected, duplicates) | "AllRejected" >> beam.Flatten()


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    inputs = cnn.list_inputs([storage.absolute(p) for p in args.paths], storage.BeamFiles())

    def build(p):
        docs, rejected = p | "IngestCnn" >> IngestCnn(inputs, limits.Limits.from_args(args))
        docs | "WriteDocuments" >> WriteTable(args.out, f"documents-{cnn.SOURCE}", split="documents")
        rejected | "WriteRejected" >> WriteRejected(args.out, STAGE)
        p | "DescribeInputs" >> DescribeInputs(args.paths, "cnn", args.out)

    summary = run_pipeline(
        build,
        command="ingest cnn",
        out_dir=args.out,
        params={"paths": args.paths},
        beam_args=beam_args,
        overwrite=args.overwrite,
        extra_summary=lambda _summary: collect_descriptions(args.out),
    )
    print_ingest_report(summary, args.out, STAGE, "stories")
    return 0
