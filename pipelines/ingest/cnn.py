"""``incoherent ingest cnn PATH [PATH ...] --out DIR``: CNN stories -> ``OUT/documents-cnn/``.

This module imports Beam only in :func:`run`; the transforms are in :mod:`pipelines.ingest.cnn_read`.
"""

from __future__ import annotations

import argparse

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
    limits.add_limit_arguments(parser)


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    from incoherent.pipelines.ingest.cnn_read import STAGE, IngestCnn
    from incoherent.pipelines.runtime.inputs import DescribeInputs, collect_descriptions
    from incoherent.pipelines.runtime.run import print_ingest_report, run_pipeline
    from incoherent.pipelines.runtime.tables import WriteRejected, WriteTable

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
