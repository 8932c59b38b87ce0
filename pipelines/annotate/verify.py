"""``incoherent annotate verify DIR DATASET_DIR``: the human-verified split, and the card again.

The documents ``annotate report`` kept become split ``<split>_verified`` of their config (e.g.
``intruder-wikipedia/test_verified-00000-of-00001.parquet``); the protocol and agreement figures go to
``DATASET_DIR/human_verification/<config>.json`` and into the card's "Human verification" section.
"""

from __future__ import annotations

import argparse
import os
import sys

from incoherent.schemas.records import InputError

TAKES_BEAM_ARGS = False  # not a Beam pipeline: any Beam flag is an error (pipelines.cli)


WRITES_DATASET = "dataset_dir"  # the CLI holds the dataset's build lock while verify writes into it


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("study_dir", metavar="DIR", help="an `annotate import` folder with its report.json")
    parser.add_argument("dataset_dir", metavar="DATASET_DIR", help="the dataset the tasks were exported from")
    parser.add_argument("--split-name", default=None, help="name of the new split (<split>_verified)")
    parser.add_argument(
        "--name", default=None, help="pretty name of the dataset (the card's, if there is one)"
    )


def _card_front_matter(dataset_dir: str) -> dict:
    import yaml

    try:
        with open(os.path.join(dataset_dir, "README.md"), encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return {}
    if not text.startswith("---\n") or "\n---\n" not in text[4:]:
        return {}
    meta = yaml.safe_load(text[4 : text.index("\n---\n", 4)])
    return meta if isinstance(meta, dict) else {}


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    from incoherent.annotation.verify import verify
    from incoherent.pipelines.card import default_build_dir, write_local_card

    if not os.path.isdir(args.dataset_dir):
        raise InputError(f"{args.dataset_dir}: no such directory")
    record = verify(args.study_dir, args.dataset_dir, args.split_name)
    protocol = record["protocol"]
    if protocol["failing_kept"]:
        limit = protocol["max_control_errors"]
        print(
            f"warning: {protocol['failing_kept']} of {protocol['assignments']} assignments answered more than "
            f"{limit:.0%} of their check documents wrong and their answers are in the verified split (control "
            f"accuracy {record['report'].get('control_accuracy')}); import with --exclude-failing to leave them out",
            file=sys.stderr,
        )
    meta = _card_front_matter(args.dataset_dir)
    name = args.name or meta.get("pretty_name") or "incoherent coherence corpora"
    card_args = argparse.Namespace(dataset_dir=args.dataset_dir, build_dir=None)
    path = write_local_card(default_build_dir(card_args), args.dataset_dir, name, meta.get("license"))
    print(
        f"{record['rows']} verified rows -> {args.dataset_dir}/{record['config']}/{record['verified_split']}-*.parquet; "
        f"wrote {path}"
    )
    if record.get("skipped_lines"):
        from incoherent.annotation.report import skipped_note

        print(skipped_note(record["skipped_lines"]))
    return 0
