"""The ``[flink]`` line names the job's REST address, and Flink's web UI only where the cluster serves one (the
cluster of tools/flink-cluster.sh answers 404 there: issue #52); every request to the master is bounded."""

from __future__ import annotations

import contextlib
import time

from incoherent.pipelines.runtime.flink_jobs import find_job, serves_web_ui
from tests.pipelines.runtime.test_job_servers import dripping, fake_server, redirecting


def answering(status: str, content_type: str, body: bytes):
    def serve(conn, stop):
        with conn, contextlib.suppress(OSError):
            conn.settimeout(1)
            conn.recv(4096)
            head = f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n\r\n"
            conn.sendall(head.encode() + body)

    return serve


def test_the_web_ui_link_only_where_the_cluster_serves_it():
    not_found = answering("404 Not Found", "application/json", b'{"errors":["Not found: /"]}')
    with fake_server(not_found) as port:  # what the REST-only cluster answers at /
        assert serves_web_ui(f"http://127.0.0.1:{port}") is False
    with fake_server(answering("200 OK", "text/html", b"<html></html>")) as port:
        assert serves_web_ui(f"http://127.0.0.1:{port}") is True


def test_a_dripping_master_is_given_up_within_the_bound():
    with fake_server(dripping) as port:
        start = time.monotonic()
        assert serves_web_ui(f"http://127.0.0.1:{port}") is False
        assert find_job(f"http://127.0.0.1:{port}", "BeamApp-x") is None
        assert time.monotonic() - start < 12  # 5 s each at most


def test_a_redirecting_master_is_not_followed():
    """A 302 to another host is an answer of its own, not an address to go on to (urllib's default opener
    followed it: the job's REST calls went to a host the user never named)."""
    with fake_server(redirecting) as port:
        start = time.monotonic()
        assert serves_web_ui(f"http://127.0.0.1:{port}") is False
        assert time.monotonic() - start < 4  # refused at once, not a 5 s wait on 192.0.2.1
