"""``incoherent annotate overlap --url URL --project ID --workers N``: annotators per task in Label Studio.

Label Studio's Community edition has no page for the overlap: a task is finished after one annotation and a
second annotator gets "no more tasks". This sets the project's ``maximum_annotations`` through Label Studio's
API (the token is read from an environment variable, never from the command line) and reads it back.
"""

from __future__ import annotations

import argparse
import os

from incoherent.schemas.records import InputError

TAKES_BEAM_ARGS = False  # not a Beam pipeline: any Beam flag is an error (pipelines.cli)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", required=True, help="the Label Studio server, e.g. http://localhost:8080")
    parser.add_argument("--project", required=True, type=int, help="the project's id (in its address)")
    parser.add_argument(
        "--workers", required=True, type=int, help="annotators per task (the export's --workers)"
    )
    parser.add_argument(
        "--token-env",
        default="LABEL_STUDIO_API_KEY",
        metavar="NAME",
        help="environment variable holding the access token (LABEL_STUDIO_API_KEY)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        help="seconds each request may take in all, answer included (10)",
    )


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    from incoherent.annotation.labelstudio_api import set_overlap
    from incoherent.terminal import printable

    token = os.environ.get(args.token_env, "")
    if not token:
        raise InputError(
            f"--token-env: set {args.token_env} to your Label Studio access token (Account & Settings)"
        )
    project = set_overlap(args.url, token, args.project, args.workers, args.timeout)
    print(
        f"Label Studio project {project['id']} ({printable(project['title'] or 'untitled')}): "
        f"{project['maximum_annotations']} annotators per task"
    )
    return 0
