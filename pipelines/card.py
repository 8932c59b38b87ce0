"""``incoherent card DATASET_DIR``: write the Hugging Face dataset card (``README.md``) of a build.

Also writes the card's figures (``DATASET_DIR/figures/*.png``) and sanitised copies of the run summaries
(``DATASET_DIR/summaries/``), which ``incoherent publish`` uploads with it.
"""

from __future__ import annotations

import argparse
import os

from schemas.records import InputError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "dataset_dir", metavar="DATASET_DIR", help="folder holding the <config>/<split>-*.parquet tables"
    )
    parser.add_argument(
        "--build-dir",
        help="folder searched for run_summary.json files (default: the build folder when DATASET_DIR is "
        "OUT/dataset of `incoherent build`, else DATASET_DIR and below)",
    )
    parser.add_argument("--name", default="incoherent coherence corpora", help="pretty name of the dataset")
    parser.add_argument(
        "--license",
        help="licence id for the card's metadata (default: from the sources: cc-by-sa-4.0 when every config "
        "holds Wikipedia text only, else other)",
    )


def default_build_dir(args: argparse.Namespace) -> str:
    """``--build-dir``, else the parent of ``OUT/dataset`` for a build, else DATASET_DIR itself."""
    from corpora.card import BUILD_SUMMARY

    if args.build_dir:
        return args.build_dir
    parent = os.path.dirname(os.path.abspath(args.dataset_dir))
    return parent if os.path.isfile(os.path.join(parent, BUILD_SUMMARY)) else args.dataset_dir


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    from corpora.card import write_card

    if beam_args:
        raise InputError(f"unrecognized arguments: {' '.join(beam_args)}")
    if not os.path.isdir(args.dataset_dir):
        raise InputError(f"{args.dataset_dir}: no such directory")
    path = write_card(default_build_dir(args), args.dataset_dir, args.name, args.license)
    print(f"wrote {path}")
    return 0
