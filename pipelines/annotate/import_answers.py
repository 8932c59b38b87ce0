"""``incoherent annotate import ANSWERS... --format mturk|labelstudio|lab|insted --out DIR``: answers to a study.

Checks every answer against the export's key (``--key TASKS_DIR``; INSteD's released file carries its own):
answers to unknown items, out of range or given twice by one worker are rejected, counted and kept in
``DIR/rejected.jsonl``; a file of another export stops the import. Workers whose error rate on control items
is above ``--max-control-errors`` are reported, and left out with ``--exclude-failing``.
"""

from __future__ import annotations

import argparse

from incoherent.pipelines.commands import add_overwrite
from incoherent.schemas.records import InputError
from incoherent.terminal import printable

TAKES_BEAM_ARGS = False  # not a Beam pipeline: any Beam flag is an error (pipelines.cli)
SHOWN = 10  # failing workers named on the terminal (all of them are in import.json)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from incoherent.annotation.study import FORMATS

    parser.add_argument(
        "answers", metavar="ANSWERS", nargs="+", help="answer files (lab: .jsonl files or folders)"
    )
    parser.add_argument("--format", required=True, choices=FORMATS, help="where the answers come from")
    parser.add_argument(
        "--key", metavar="TASKS_DIR", help="the export folder (or its key.json); not for insted"
    )
    parser.add_argument("--out", required=True, metavar="DIR", help="study folder for `annotate report`")
    parser.add_argument(
        "--max-control-errors", type=float, default=0.5, help="largest share of wrong control answers (0.5)"
    )
    parser.add_argument(
        "--exclude-failing", action="store_true", help="leave out the assignments above that share"
    )
    add_overwrite(parser)


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    from incoherent.annotation.imports import import_answers

    if args.format == "insted" and args.key:
        raise InputError("--key: INSteD's annotation file carries its own gold; leave --key out")
    summary = import_answers(
        args.answers,
        args.format,
        args.out,
        key_path=args.key,
        max_control_errors=args.max_control_errors,
        exclude_failing=args.exclude_failing,
        overwrite=args.overwrite,
    )
    rejected = ", ".join(f"{k}: {v}" for k, v in summary["rejected"].items()) or "none"
    print(f"{summary['answers_kept']} answers kept of {summary['answers_read']} read -> {args.out}")
    print(f"  rejected: {rejected}")
    failing = summary["failing_assignments"]
    if failing:
        verb = "excluded" if args.exclude_failing else "kept (--exclude-failing leaves them out)"
        workers = sorted({printable(summary["assignments"][a]["worker"]) for a in failing})
        named = ", ".join(workers[:SHOWN])
        if len(workers) > SHOWN:
            named += f" and {len(workers) - SHOWN} more, listed in import.json"
        print(
            f"  assignments above {args.max_control_errors:.0%} control errors: {len(failing)} of "
            f"{len(summary['assignments'])} (workers {named}); {verb}"
        )
    return 0
