"""The lab app against a crowd of addresses keeping connections alive (issue #53, item 12).

Six loopback addresses holding 100 connections each, every connection sending a whole request every 8 s (never
past the 10 s request deadline), filled the app's 500 slots: the annotator got 2 of 8 requests answered. Now a
connection that arrives while every slot is held takes the place of an idle connection of the address that
holds the most (``annotation.labserver.Holders``). The test runs the same server (``make_server``, the app of
``annotate serve``) in its own process with the limits scaled down (30 slots, 10 per address), five hostile
addresses with 10 keep-alive connections each, every one sending a whole request each second; bounded: 50
connections, about 10 s. Real sockets on 127.0.0.1-127.0.0.6, the server stopped on every exit path.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import subprocess
import sys
import threading
import time

import pytest

from tests.annotation.test_annotate import dataset  # noqa: F401 - the module's private copy of the sample build
from tests.annotation.test_webapp import tasks  # noqa: F401
from tests.conftest import ROOT

LIMIT, PER_CLIENT, HOSTILE_ADDRESSES = 30, 10, 5
SERVER = """
import sys
from incoherent.annotation.labserver import make_server, serve
from incoherent.annotation.webapp import MAX_BODY, create_app
server = make_server(create_app(sys.argv[1]), "127.0.0.1", 0, max_body=MAX_BODY, per_client={per},
                     connection_limit={limit})
print(server.effective_port, flush=True)
try:
    serve(server)
except KeyboardInterrupt:
    pass
finally:
    print("evicted", server.holders.evicted, file=sys.stderr, flush=True)
    server.close()
"""
REQUEST = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


def read_answer(conn: socket.socket) -> bytes:
    """One whole HTTP answer (headers and a Content-Length body) from a keep-alive connection."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        (
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        ),
        0,
    )
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            raise ConnectionError("closed")
        body += chunk
    return head


class Crowd:
    """Keep-alive connections from ``source``: each sends a whole request every ``every`` seconds and opens a
    new connection when the server closes it. ``answered`` counts answers; ``stop`` ends them."""

    def __init__(self, port: int, source: str, connections: int, every: float, stop: threading.Event):
        self.port, self.source, self.every, self.stop = port, source, every, stop
        self.answered = 0
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self._run, daemon=True) for _ in range(connections)]
        for thread in self.threads:
            thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            with contextlib.suppress(OSError, ConnectionError):
                with socket.socket() as conn:
                    conn.settimeout(5)
                    conn.bind((self.source, 0))
                    conn.connect(("127.0.0.1", self.port))
                    while not self.stop.is_set():
                        conn.sendall(REQUEST)
                        read_answer(conn)
                        with self.lock:
                            self.answered += 1
                        if self.stop.wait(self.every):  # pacing of the load, not a wait for an event
                            return
            self.stop.wait(0.05)  # closed by the server: a new connection, as an attacker would

    def join(self) -> None:
        for thread in self.threads:
            thread.join(timeout=10)


@pytest.mark.e2e
def test_keep_alive_crowds_from_many_addresses_do_not_lock_an_annotator_out(tasks):  # noqa: F811
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    code = SERVER.format(per=PER_CLIENT, limit=LIMIT)
    server = subprocess.Popen(
        [sys.executable, "-c", code, str(tasks)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    stop = threading.Event()
    crowds: list[Crowd] = []
    answered, times = 0, []
    try:
        ready, _, _ = select.select([server.stdout], [], [], 60)
        assert ready, "the server did not start"
        port = int(server.stdout.readline())
        crowds = [
            Crowd(port, f"127.0.0.{2 + n}", PER_CLIENT, 1.0, stop) for n in range(HOSTILE_ADDRESSES)
        ]  # 50 connections for 30 slots, each answered every second: never past the 10 s deadline
        deadline = time.monotonic() + 30
        while sum(c.answered for c in crowds) < 2 * LIMIT:  # the event: the slots are taken and in use
            assert time.monotonic() < deadline and server.poll() is None, "the crowd never got in"
            time.sleep(0.02)
        for _ in range(8):  # the annotator: 8 requests from 127.0.0.1, each on a new connection
            started = time.monotonic()
            with contextlib.suppress(OSError, ConnectionError):
                with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
                    conn.sendall(REQUEST)
                    if read_answer(conn).startswith(b"HTTP/1.1 200"):
                        answered += 1
                        times.append(time.monotonic() - started)
        crowd_answers = sum(c.answered for c in crowds)
    finally:
        stop.set()
        for crowd in crowds:
            crowd.join()
        if server.poll() is None:
            server.send_signal(2)
        try:
            _, err = server.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            _, err = server.communicate()
    assert answered == 8, (answered, times, err[-2000:])
    assert max(times) < 5.0, times
    assert crowd_answers >= 2 * LIMIT  # the crowd was served too, not shut out
    evicted = int(err.split("evicted", 1)[1].split()[0])
    assert evicted >= 1, err[-2000:]
