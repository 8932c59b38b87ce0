"""``incoherent annotate release DIR --out FILE.jsonl``: a study's per-document answers in INSteD's format.

One line per document under study, ``{"file_id": ID, "gold": "3", "annoated": ["3", "3", "-1"]}`` (the field
name spelt as INSteD released it), the format ``annotate import --format insted`` reads. ``annotate verify``
writes the same file beside the verified split (``human_verification/<config>-answers.jsonl``) and the card
links it.
"""

from __future__ import annotations

import argparse

from incoherent.pipelines.commands import add_overwrite

TAKES_BEAM_ARGS = False  # not a Beam pipeline: any Beam flag is an error (pipelines.cli)
OUT_IS_FILE = True  # --out names a file: checked apart from the inputs, no folder lock (pipelines.cli)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("study_dir", metavar="DIR", help="an `annotate import` folder of an intruder study")
    parser.add_argument("--out", required=True, metavar="FILE", help="the JSONL file to write")
    add_overwrite(parser, "--out (the JSONL file)")


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    from incoherent.annotation.release import release
    from incoherent.annotation.report import skipped_note

    documents, skipped = release(args.study_dir, args.out, overwrite=args.overwrite)
    print(f"{documents} documents' answers in INSteD's format -> {args.out}")
    if skipped:
        print(skipped_note(skipped))
    return 0
