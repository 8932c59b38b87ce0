"""``incoherent annotate report DIR [DIR ...] [--baseline DIR] [--min-agreement 3] [--predictions FILE]``:
agreement and human accuracy and F1.

Writes ``DIR/report.json`` and ``DIR/figures/*.png`` and prints the tables (INSteD's Tables 3 and 5, Figures 2
and 3; Laban et al.'s human row per k). ``--predictions``: ``evaluate --predictions`` JSONL for intruder
studies, a ``score-shuffle`` output folder for shuffle pairs. ``--baseline``: INSteD's Table 7 human row of one
or more probe studies against the study of the same documents unprobed (per-judgement F1 and ΔF1).
"""

from __future__ import annotations

import argparse
import os

from incoherent.schemas.records import InputError

TAKES_BEAM_ARGS = False  # not a Beam pipeline: any Beam flag is an error (pipelines.cli)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "study_dirs",
        metavar="DIR",
        nargs="+",
        help="an `annotate import` folder (several: probe studies, with --baseline)",
    )
    parser.add_argument(
        "--baseline",
        metavar="DIR",
        help="the `annotate import` folder of the same documents unprobed: print INSteD's Table 7 human row "
        "(per-judgement F1 of the baseline, ΔF1 of each study) and keep it in each study's report.json",
    )
    parser.add_argument("--min-agreement", type=int, default=3, help="same answers to keep a document (3)")
    parser.add_argument("--predictions", metavar="FILE", help="a model's answers to compare with the humans")
    parser.add_argument(
        "--allow-fewer-annotators",
        action="store_true",
        help="report even when no document has --min-agreement annotators (nothing can be kept)",
    )


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    from incoherent.annotation.report import tables
    from incoherent.annotation.results import report
    from incoherent.annotation.study import read_study

    studies = args.study_dirs
    if len(studies) > 1 and not args.baseline:
        raise InputError(
            "DIR: several studies are reported together only with --baseline DIR (Table 7's human row)"
        )
    if len(studies) > 1 and args.predictions:
        raise InputError(
            "--predictions: the answers of one model for one study; report the studies one by one"
        )
    if len(set(map(os.path.realpath, studies))) != len(studies):
        raise InputError("DIR: a study is named twice")
    if not args.baseline:
        result = report(studies[0], args.min_agreement, args.predictions, args.allow_fewer_annotators)
        print(tables(result))
        print(f"wrote {os.path.join(studies[0], 'report.json')} and {', '.join(result['figures'])}")
        return 0
    from incoherent.annotation import table7

    if os.path.realpath(args.baseline) in map(os.path.realpath, studies):
        raise InputError(f"--baseline: {args.baseline} is also one of the studies")
    baseline = (args.baseline, *read_study(args.baseline))
    rows = [table7.human_row((d, *read_study(d)), baseline) for d in studies]  # every line before any write
    for study, row in zip(studies, rows, strict=True):
        report(study, args.min_agreement, args.predictions, args.allow_fewer_annotators, baseline=row)
    print(table7.format_rows(rows, args.baseline))
    print(
        f"wrote {', '.join(os.path.join(d, 'report.json') for d in studies)} (full tables: annotate report DIR)"
    )
    return 0
