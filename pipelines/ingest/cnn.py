"""``incoherent ingest cnn PATH [PATH ...] --out DIR [--source NAME]``: CNN stories (or any stories in the same
``.story`` format, Daily Mail's) -> ``OUT/documents-<source>/`` (``documents-cnn/`` by default). The source is
of kind ``cnn`` whatever its name (its run summary says so): the intruder method truncates its articles and
puts 20% of them in the test split.

This module imports Beam only in :func:`run`; the transforms are in :mod:`pipelines.ingest.cnn_read`.
"""

from __future__ import annotations

import argparse

from incoherent.fileio.paths import check_name
from incoherent.pipelines.commands import add_overwrite
from incoherent.pipelines.runtime import storage
from incoherent.sources import cnn, limits


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="directories of .story files, .story files, or cnn_stories.tgz",
    )
    parser.add_argument("--out", required=True, help="output directory")
    add_overwrite(parser)
    parser.add_argument(
        "--source",
        default=cnn.SOURCE,
        help=f"source name: ids are <source>:<sha1 of the URL> (default: {cnn.SOURCE}); the kind stays cnn",
    )
    limits.add_limit_arguments(parser)


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    from incoherent.pipelines.ingest.cnn_read import STAGE, IngestCnn
    from incoherent.pipelines.runtime.inputs import DescribeInputs, collect_descriptions
    from incoherent.pipelines.runtime.run import print_ingest_report, run_pipeline
    from incoherent.pipelines.runtime.tables import WriteRejected, WriteTable

    source = check_name(args.source, "--source")
    inputs = cnn.list_inputs([storage.absolute(p) for p in args.paths], storage.BeamFiles())

    def build(p):
        docs, rejected = p | "IngestCnn" >> IngestCnn(inputs, limits.Limits.from_args(args), source)
        docs | "WriteDocuments" >> WriteTable(args.out, f"documents-{source}", split="documents")
        rejected | "WriteRejected" >> WriteRejected(args.out, STAGE)
        p | "DescribeInputs" >> DescribeInputs(args.paths, "cnn", args.out)

    summary = run_pipeline(
        build,
        command="ingest cnn",
        out_dir=args.out,
        params={"paths": args.paths, **({"source": source} if source != cnn.SOURCE else {})},
        beam_args=beam_args,
        overwrite=args.overwrite,
        extra_summary=lambda _summary: {"kind": "cnn", **collect_descriptions(args.out)},
    )
    print_ingest_report(summary, args.out, STAGE, "stories")
    return 0
