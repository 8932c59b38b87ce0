"""``incoherent annotate serve TASKS_DIR``: the in-lab annotation web application (127.0.0.1 by default).

Answers go to ``TASKS_DIR/answers/<annotator>.jsonl`` (``--answers DIR`` elsewhere), one line per answer,
flushed and fsynced before the next item is shown.
"""

from __future__ import annotations

import argparse

from schemas.records import InputError

TAKES_BEAM_ARGS = False  # not a Beam pipeline: any Beam flag is an error (pipelines.cli)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("tasks_dir", metavar="TASKS_DIR", help="an `annotate export` folder")
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (127.0.0.1: this machine only)"
    )
    parser.add_argument("--port", type=int, default=8000, help="port to listen on (8000)")
    parser.add_argument("--answers", default=None, metavar="DIR", help="answers folder (TASKS_DIR/answers)")


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    from annotation.webapp import make_server

    if not 0 <= args.port < 65536:
        raise InputError(f"--port: must be 0..65535, got {args.port}")
    try:
        server = make_server(args.tasks_dir, args.answers, args.host, args.port)
    except OSError as exc:
        raise InputError(
            f"--host/--port: cannot listen on {args.host}:{args.port} ({exc.strerror})"
        ) from None
    print(f"annotation study on http://{args.host}:{server.effective_port}/ (Ctrl-C stops it)", flush=True)
    try:
        server.run()
    finally:
        server.close()
    return 0
