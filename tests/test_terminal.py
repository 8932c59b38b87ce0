"""Untrusted text never drives the terminal: :func:`incoherent.terminal.printable` and the places every command prints
through it (error lines, log lines, table cells such as MTurk worker ids)."""

from __future__ import annotations

import logging
import subprocess
import sys

from incoherent.terminal import printable
from tests.conftest import ROOT, run_cli

HOSTILE = "A1\x1b]0;owned\x07\x1b[2J\x9b31m\u202eevil\u2028x\ud800"


def test_printable_escapes_every_control_and_format_character():
    text = printable(HOSTILE)
    assert text == "A1\\x1b]0;owned\\x07\\x1b[2J\\x9b31m\\u202eevil\\u2028x\\ud800"
    assert text.isprintable() and printable("plain Zoë 日本 x\u0301") == "plain Zoë 日本 x\u0301"
    assert printable("a\nb\tc") == "a\\x0ab\\x09c" and printable("a\nb\tc", lines=True) == "a\nb\tc"


def test_review_table_escapes_worker_ids():
    from incoherent.annotation.report import review_table

    row = {"assignment_id": "3X\x1b[2J", "worker": HOSTILE, "answers": 4, "control_errors": 0, "controls": 1,
           "seconds": 2.0, "median_seconds": 2.0, "min_seconds": 5, "work_time_seconds": 30, "decision": "reject",
           "reason": "wrong\x1b[0m"}  # fmt: skip
    table = review_table([row])
    assert "\x1b" not in table and "\x07" not in table and "\u202e" not in table and "\x9b" not in table
    assert "A1\\x1b]0;owned" in table and "3X\\x1b[2J" in table


def test_error_lines_escape_what_came_from_a_file_or_a_server(tmp_path, capsys):
    hostile = tmp_path / "tasks\x1b]0;owned\x07\x1b[2J"
    assert run_cli("annotate", "serve", hostile, "--port", "0", beam=[]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "\x1b" not in err and "\x07" not in err, err
    assert "tasks\\x1b]0;owned\\x07\\x1b[2J" in err


def test_log_lines_are_escaped_by_the_cli_s_handler_filter():
    from incoherent.pipelines.runtime.interrupts import terminal_record

    record = logging.LogRecord("x", logging.WARNING, __file__, 1, "refused a POST to %s", ("/\x1b[2J",), None)
    assert terminal_record(record) and record.getMessage() == "refused a POST to /\\x1b[2J"


def test_the_terminal_log_of_the_cli_and_of_each_stage_process():
    """:func:`log_to_terminal` (the CLI's and every build stage process's logging) escapes control characters
    and drops the record of an interrupt that Beam logs with its traceback; other errors keep theirs."""
    code = (
        "import logging\n"
        "from incoherent.pipelines.runtime.interrupts import log_to_terminal\n"
        "log_to_terminal(logging.WARNING)\n"
        "logging.getLogger('x').warning('a %s', '\\x1b[2J')\n"
        "for exc in (KeyboardInterrupt('interrupted [while running step]'), ValueError('bad')):\n"
        "    try:\n"
        "        raise exc\n"
        "    except BaseException:\n"
        "        logging.getLogger('apache_beam.runners.common').exception(str(exc))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    lines = done.stderr.splitlines()
    assert lines[0] == "WARNING x: a \\x1b[2J", done.stderr
    assert lines[1] == "ERROR apache_beam.runners.common: bad" and lines[-1] == "ValueError: bad", done.stderr
    assert "interrupted" not in done.stderr and "KeyboardInterrupt" not in done.stderr


def dropped_grpc_error(code: str = "UNAVAILABLE") -> Exception:
    """A real error of gRPC: UNAVAILABLE (a call to a port nothing listens on) or CANCELLED (a stream cancelled,
    as a runner ends the streams of a finished job)."""
    import socket

    import grpc

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    try:
        if code == "CANCELLED":
            call = channel.unary_stream("/x.Y/Z")(
                b"", timeout=30, wait_for_ready=True
            )  # waits: then cancelled
            call.cancel()
            try:
                next(call)
            except grpc.RpcError as exc:
                assert exc.code() == grpc.StatusCode.CANCELLED
                return exc
        channel.unary_unary("/x.Y/Z")(b"", timeout=2)
    except grpc.RpcError as exc:
        return exc
    finally:
        channel.close()
    raise AssertionError("a call to a closed port succeeded")


def test_a_runner_s_dropped_grpc_stream_is_one_log_line_not_a_traceback():
    """With LOOPBACK the SDK worker runs in the command's process and logs, with a traceback, the gRPC stream a
    Flink TaskManager dropped when it died; the CLI makes it one line. Another error keeps its traceback."""
    import io

    import incoherent.pipelines.cli  # noqa: F401 - installs the filters

    dropped = dropped_grpc_error()
    cancelled = dropped_grpc_error("CANCELLED")  # the runner ending a finished job's streams: not shown
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    logger = logging.getLogger("apache_beam.runners.worker.data_plane")
    logger.addHandler(handler)
    root, level = logging.getLogger(), logging.getLogger().level
    root.setLevel(logging.WARNING)  # not --verbose
    try:
        for error in (dropped, ValueError("a bug")):
            try:
                raise error
            except Exception:
                logger.exception("Failed to read inputs in the data plane.")
        try:
            raise cancelled
        except Exception:
            logger.exception("Failed to read inputs in the data plane.")
    finally:
        logger.removeHandler(handler)
        root.setLevel(level)
    lines = stream.getvalue().splitlines()
    assert lines[0] == (
        "Failed to read inputs in the data plane. (gRPC UNAVAILABLE: the runner closed the connection)"
    )
    assert lines[1] == "Failed to read inputs in the data plane." and lines[2].startswith("Traceback")
    assert lines[-1] == "ValueError: a bug" and "UNAVAILABLE" not in "\n".join(lines[1:])
    assert "CANCELLED" not in stream.getvalue()


def test_the_job_server_s_command_is_logged_without_its_launcher():
    import io

    import incoherent.pipelines.cli  # noqa: F401 - installs the filters
    from incoherent.pipelines.runtime.job_servers import dying_with_this_process

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    logger = logging.getLogger("apache_beam.utils.subprocess_server")
    logger.addHandler(handler)
    root, level = logging.getLogger(), logging.getLogger().level
    try:
        command = dying_with_this_process(["java", "-jar", "job-server.jar", "--job-port", "8099"])
        root.setLevel(logging.INFO)  # --verbose: Beam's job server lines are shown
        logger.warning("Really starting service at %s with cmd: %s", "localhost:8099", tuple(command))
        root.setLevel(logging.WARNING)  # by default they are not (issue #52: 22 of them in a Flink build)
        logger.warning("Really starting service at %s with cmd: %s", "localhost:8099", tuple(command))
        logger.warning("Really destroying service at %s with cmd: %s", "localhost:8099", tuple(command))
        root.warning("Waiting for grpc channel to be ready at %s.", "localhost:8099")
        logger.warning("another warning")
    finally:
        logger.removeHandler(handler)
        root.setLevel(level)
    expected = "('java', '-jar', 'job-server.jar', '--job-port', '8099')"
    assert (
        stream.getvalue()
        == f"Really starting service at localhost:8099 with cmd: {expected}\nanother warning\n"
    )


def test_a_worker_thread_ended_by_a_dropped_grpc_stream_is_one_log_line():
    """The dropped stream also ends the SDK worker's threads with the gRPC error (at the end of every Flink job
    with LOOPBACK); Python would print it with its traceback. One line instead; another error keeps its report.
    In a process of its own: pytest replaces ``threading.excepthook`` during a test."""
    import subprocess
    import sys

    script = """
import logging, threading
import incoherent.pipelines.cli  # installs the hook
from tests.test_terminal import dropped_grpc_error
logging.basicConfig(format="%(message)s")
dropped = dropped_grpc_error()
for name, error in (("read_grpc_client_inputs", dropped), ("run_worker_1", ValueError("a bug"))):
    def fail(error=error):
        raise error
    thread = threading.Thread(target=fail, name=name)
    thread.start()
    thread.join()
"""
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    lines = done.stderr.splitlines()
    assert lines[0] == "read_grpc_client_inputs ended: gRPC UNAVAILABLE: the runner closed the connection"
    assert lines[1] == "Exception in thread run_worker_1:" and lines[2].startswith("Traceback")
    assert lines[-1] == "ValueError: a bug" and "UNAVAILABLE" not in "\n".join(lines[1:])
