"""``incoherent annotate serve TASKS_DIR``: the in-lab annotation web application (127.0.0.1 by default).

Answers go to ``TASKS_DIR/answers/<annotator>.jsonl`` (``--answers DIR`` elsewhere), one line per answer,
written and fsynced before the next item is shown.
"""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import re
import socket

from incoherent.schemas.records import InputError

TAKES_BEAM_ARGS = False  # not a Beam pipeline: any Beam flag is an error (pipelines.cli)

_HOSTNAME = re.compile(
    r"^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("tasks_dir", metavar="TASKS_DIR", help="an `annotate export` folder")
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (127.0.0.1: this machine only)"
    )
    parser.add_argument("--port", type=int, default=8000, help="port to listen on (8000; 0 picks a free one)")
    parser.add_argument("--answers", default=None, metavar="DIR", help="answers folder (TASKS_DIR/answers)")


def check_host(host: str) -> str:
    """``host`` if it is an IP address or a name that resolves, else :class:`InputError` (one line)."""
    try:
        ipaddress.ip_address(host.strip("[]"))
        return host.strip("[]")
    except ValueError:
        pass
    if re.fullmatch(r"[0-9.]+", host) or not _HOSTNAME.match(host):
        raise InputError(f"--host: {host!r} is not an IP address or a host name")
    try:
        socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise InputError(f"--host: cannot resolve {host!r} ({exc.strerror or exc})") from None
    return host


def check_answers_place(tasks_dir: str, answers: str) -> None:
    """``--answers`` is never the export folder itself, a folder around it, or a folder of a build (its dataset
    is published: the annotators' names and answers would go with it)."""
    import os

    from incoherent.pipelines.runtime.safety import BUILD_MARKER, is_within

    if is_within(tasks_dir, answers) or any(
        is_within(answers, os.path.join(tasks_dir, sub)) for sub in ("mturk", "labelstudio")
    ):
        raise InputError(
            f"--answers: {answers} is or holds the export folder's files; leave it out (TASKS_DIR/answers) or "
            "choose a folder of its own"
        )
    folder = os.path.realpath(answers)
    while True:
        if os.path.isfile(os.path.join(folder, BUILD_MARKER)):
            raise InputError(
                f"--answers: {answers} lies inside the build {folder} (its dataset is published); choose a "
                "folder apart from it"
            )
        if os.path.dirname(folder) == folder:
            return
        folder = os.path.dirname(folder)


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    from incoherent.annotation.lab_store import answers_folder, load_tasks
    from incoherent.annotation.labserver import make_server, serve
    from incoherent.annotation.webapp import MAX_BODY, create_app
    from incoherent.pipelines.runtime.safety import command_lock

    if not 0 <= args.port < 65536:
        raise InputError(f"--port: must be 0..65535, got {args.port}")
    host = check_host(args.host)
    load_tasks(args.tasks_dir)  # TASKS_DIR and --answers are checked before the address is taken
    if args.answers:
        check_answers_place(args.tasks_dir, args.answers)
    folder = answers_folder(args.tasks_dir, args.answers)
    with _answers_lock(folder, command_lock):  # one server per answers folder: never two appending to a file
        try:
            app = create_app(args.tasks_dir, args.answers, host=host)
            server = make_server(app, host, args.port, max_body=MAX_BODY)
        except (OSError, ValueError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise InputError(f"--host/--port: cannot listen on {host}:{args.port} ({reason})") from None
        try:
            shown = f"[{host}]" if ":" in host else host
            print(
                f"annotation study on http://{shown}:{server.effective_port}/ (Ctrl-C stops it)", flush=True
            )
            serve(server)  # ends on Ctrl-C and `kill`, raised on to the CLI (SIGTERM is one there too)
        finally:
            server.close()
    return 0


@contextlib.contextmanager
def _answers_lock(folder: str, command_lock):
    """The answers folder's lock (across processes) for as long as the server runs; a second server on the
    same folder ends at once, naming the first."""
    try:
        lock = command_lock(folder, "annotate serve")
        lock.__enter__()
    except InputError as exc:
        raise InputError(
            str(exc).replace("choose another --out", "stop it first, or give this one another --answers")
        ) from None
    try:
        yield
    finally:
        lock.__exit__(None, None, None)
