"""``incoherent annotate review DIR --out FILE.csv``: approve or reject each MTurk assignment of a study.

Per assignment (one worker's answers to one HIT): check documents (control items) answered and wrong, the median
seconds per item against the floor (``--min-seconds``, else the HIT's reading floor) and MTurk's work time; writes the batch results the import read with ``Approve`` (``x``) or ``Reject`` (the reason,
which the worker reads) filled, the file MTurk's "Review results" page takes back ("Upload CSV").
"""

from __future__ import annotations

import argparse
import sys

from incoherent.pipelines.commands import add_overwrite

TAKES_BEAM_ARGS = False  # not a Beam pipeline: any Beam flag is an error (pipelines.cli)
OUT_IS_FILE = True  # --out names a file: checked apart from the inputs, no folder lock (pipelines.cli)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("study_dir", metavar="DIR", help="an `annotate import --format mturk` folder")
    parser.add_argument("--out", required=True, metavar="FILE", help="the results CSV to upload to MTurk")
    parser.add_argument(
        "--min-seconds",
        type=float,
        default=None,
        help="reject assignments whose median seconds per item is below this (default: each HIT's reading "
        "floor, the median words of its documents at 700 words a minute; 0: off)",
    )
    add_overwrite(parser, "--out (the results CSV)")


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    from incoherent.annotation.report import review_table
    from incoherent.annotation.review import review

    decided = review(args.study_dir, args.out, min_seconds=args.min_seconds, overwrite=args.overwrite)
    print(review_table(decided["assignments"]))
    for line in decided["warnings"]:
        print(f"warning: {line}", file=sys.stderr)
    counts = {d: sum(a["decision"] == d for a in decided["assignments"]) for d in ("approve", "reject")}
    print(
        f"{counts['approve']} to approve, {counts['reject']} to reject -> {args.out} "
        "(upload it on MTurk's Review Results page)"
    )
    return 0
