"""``incoherent annotate report DIR [--min-agreement 3] [--predictions FILE]``: agreement and human accuracy.

Writes ``DIR/report.json`` and ``DIR/figures/*.png`` and prints the tables (INSteD's Tables 3 and 5, Figures 2
and 3; Laban et al.'s human row per k). ``--predictions``: ``evaluate --predictions`` JSONL for intruder
studies, a ``score-shuffle`` output folder for shuffle pairs.
"""

from __future__ import annotations

import argparse
import os

TAKES_BEAM_ARGS = False  # not a Beam pipeline: any Beam flag is an error (pipelines.cli)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("study_dir", metavar="DIR", help="an `annotate import` folder")
    parser.add_argument("--min-agreement", type=int, default=3, help="same answers to keep a document (3)")
    parser.add_argument("--predictions", metavar="FILE", help="a model's answers to compare with the humans")
    parser.add_argument(
        "--allow-fewer-annotators",
        action="store_true",
        help="report even when no document has --min-agreement annotators (nothing can be kept)",
    )


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    from annotation.report import tables
    from annotation.study import report

    result = report(args.study_dir, args.min_agreement, args.predictions, args.allow_fewer_annotators)
    print(tables(result))
    print(f"wrote {os.path.join(args.study_dir, 'report.json')} and {', '.join(result['figures'])}")
    return 0
