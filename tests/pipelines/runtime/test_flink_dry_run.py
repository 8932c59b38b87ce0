"""``--dry-run`` with ``--runner FlinkRunner``: what it checks without a cluster (tests/e2e/test_flink.py checks
it against a real one): a master that does not answer, or answers but is not Flink's REST API, is one line; the
embedded cluster is named as such. Nothing is written and no job server is started."""

from __future__ import annotations

import http.server
import threading

import pytest

from tests.conftest import SAMPLES, run_cli
from tests.services import free_port


def flink(jar, master: str) -> list[str]:
    return [
        "--runner=FlinkRunner",
        f"--flink_master={master}",
        f"--flink_job_server_jar={jar}",
        "--environment_type=LOOPBACK",
    ]


@pytest.fixture
def jar(tmp_path):
    path = tmp_path / "beam-runners-flink-1.19-job-server-2.62.0.jar"
    path.write_bytes(b"PK\x05\x06" + bytes(18))  # an empty zip: the dry run starts no job server
    return path


def dry_run(capsys, tmp_path, beam: list[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    code = run_cli(
        "ingest", "cnn", SAMPLES / "cnn" / "frank", "--out", tmp_path / "out", "--dry-run", beam=beam
    )
    captured = capsys.readouterr()
    assert not (tmp_path / "out").exists()
    return code, captured.out.strip(), captured.err.strip()


def test_a_master_that_does_not_answer_is_one_line(capsys, tmp_path, jar):
    port = free_port()
    code, out, err = dry_run(capsys, tmp_path, flink(jar, f"127.0.0.1:{port}"))
    assert code == 2 and err.count("\n") == 0, err
    assert err.startswith(
        f"error: --flink_master 127.0.0.1:{port}: no Flink REST API answers at http://127.0.0.1:"
    )


def test_a_master_that_is_not_flink_is_one_line(capsys, tmp_path, jar):
    class NotFlink(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            body = b'{"status": "ok"}'
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), NotFlink)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        port = server.server_address[1]
        code, out, err = dry_run(capsys, tmp_path, flink(jar, f"127.0.0.1:{port}"))
    finally:
        server.shutdown()
        server.server_close()
    assert code == 2 and err == (
        f"error: --flink_master 127.0.0.1:{port}: http://127.0.0.1:{port}/overview is not Flink's REST API "
        "(no flink-version)"
    )


def test_the_embedded_cluster_and_a_missing_jar(capsys, tmp_path, jar):
    code, out, err = dry_run(capsys, tmp_path, flink(jar, "[local]"))
    assert code == 0 and out.startswith("dry run: `incoherent ingest cnn` job graph built and validated")
    assert "job server jar found; master [local]: an embedded cluster; Flink's own translation not run" in out
    code, out, err = dry_run(capsys, tmp_path, flink(tmp_path / "nope.jar", "[local]"))
    assert (
        code == 2
        and err
        == f"error: --flink_job_server_jar {tmp_path / 'nope.jar'}: no such file (fetch it with tools/flink-job-server.sh (see docs/scale-out.md#flink))"
    )
