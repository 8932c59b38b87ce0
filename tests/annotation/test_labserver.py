"""`annotate serve`'s server against greedy and slow clients and a second server on its answers folder, with real
sockets on 127.0.0.1 (servers in their own processes, stopped by each test on every exit path); the app's
per-name caches stay bounded however many names log in."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from tests.annotation.lab_client import LabSession, Server
from tests.annotation.test_annotate import dataset  # noqa: F401 - the module's private copy of the sample build
from tests.annotation.test_webapp import app_of, first_choice, tasks  # noqa: F401
from tests.conftest import ROOT


def _get(port: int, timeout: float = 5.0) -> bytes:
    """A whole GET / as an annotator's browser sends it; the first bytes of the answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as conn:
        conn.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        return conn.recv(64)


def _partial(port: int, source: str) -> socket.socket:
    """A connection from ``source`` that sends the start of a request and never finishes it."""
    conn = socket.socket()
    conn.settimeout(5)
    conn.bind((source, 0))
    conn.connect(("127.0.0.1", port))
    conn.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
    return conn


@pytest.mark.e2e
def test_idle_partial_header_connections_do_not_lock_annotators_out(tasks):  # noqa: F811
    """150 connections from another address that drip a header line: annotators are still served at once,
    and the slow connections are closed once their request time is up."""
    server = Server(tasks)
    hostile: list[socket.socket] = []
    try:
        for _ in range(150):
            try:
                hostile.append(_partial(server.port, "127.0.0.2"))
            except OSError:
                break  # refused or reset: the server's limit per client at work
        time.sleep(1.0)
        for conn in hostile:  # a byte now and then keeps waitress's idle timeout from firing
            with contextlib.suppress(OSError):
                conn.sendall(b"a")
        started = time.monotonic()
        for _ in range(3):
            assert _get(server.port).startswith(b"HTTP/1.1 200"), "an annotator was locked out"
        assert time.monotonic() - started < 5
        # every slow connection is closed within the request time (10 s) and a little
        deadline = time.monotonic() + 15
        open_ones = list(hostile)
        while open_ones and time.monotonic() < deadline:
            still = []
            for conn in open_ones:
                try:
                    conn.sendall(b"a")
                    conn.settimeout(0.05)
                    if conn.recv(1) == b"":
                        continue
                    still.append(conn)
                except TimeoutError:
                    still.append(conn)
                except OSError:
                    continue
            open_ones = still
            time.sleep(0.5)
        assert not open_ones, f"{len(open_ones)} slow connections still open"
    finally:
        for conn in hostile:
            conn.close()
        server.stop()


def test_a_second_server_on_the_same_answers_folder_is_refused(tasks):  # noqa: F811
    """Two `annotate serve` on one answers folder would both append to an annotator's file: the second ends at
    once with one line naming the first, which goes on serving."""
    first = Server(tasks)
    second = None
    try:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        second = subprocess.Popen(
            [sys.executable, "-m", "incoherent.pipelines.cli", "annotate", "serve", str(tasks), "--port", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True,
        )  # fmt: skip
        try:
            out, err = second.communicate(timeout=120)  # a loaded machine starts Python slowly
        except subprocess.TimeoutExpired:
            pytest.fail("a second server on the same answers folder started")
        assert second.returncode == 2 and out == "", (out, err)
        lines = err.strip().splitlines()
        assert (
            len(lines) == 1 and "another run is running there (`incoherent annotate serve`, pid " in lines[0]
        )
        assert f"pid {first.process.pid} " in lines[0] and "another --answers" in lines[0], lines[0]
        assert _get(first.port).startswith(b"HTTP/1.1 200")
    finally:
        if second is not None and second.poll() is None:
            second.send_signal(signal.SIGTERM)
            second.wait(timeout=10)
        first.stop()
    # once the first has stopped, a server starts on the folder again (the lock went with the process)
    again = Server(tasks)
    again.stop()
    assert not (tasks / "answers" / ".incoherent-build.lock").exists()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "kill"])
def test_a_serving_server_stopped_by_a_signal_says_so(tasks, signum):  # noqa: F811
    """While it serves (an annotator's page answered): Ctrl-C gives 130, `kill` 143, and the one line
    ``interrupted``, as every command (docs/commands.md); the answers folder's lock is let go."""
    server = Server(tasks)
    try:
        assert _get(server.port).startswith(b"HTTP/1.1 200")
        err = server.stop(signum)
    finally:
        server.stop()
    assert server.process.returncode == 128 + signum and err.strip() == "interrupted", err
    assert not (tasks / "answers" / ".incoherent-build.lock").exists()


def test_per_name_caches_are_bounded(tasks):  # noqa: F811
    """However many distinct names log in, the app keeps at most CACHED_ANNOTATORS item orders in memory, and
    an annotator whose order left the cache gets the same order again."""
    from incoherent.annotation.labserver import CACHED_ANNOTATORS

    app = app_of(tasks)
    caches = app.extensions["incoherent"]
    first = LabSession(app, "annotator-0")
    first.answer(first_choice)
    page_before = first.page()
    for n in range(1, CACHED_ANNOTATORS + 40):
        LabSession(app, f"annotator-{n}").page()
    assert len(caches["sequences"]) == CACHED_ANNOTATORS
    assert "annotator-0" not in caches["sequences"].keys()
    assert first.page() == page_before


@pytest.mark.e2e  # kills servers at random moments of their start
def test_kill_at_any_moment_of_its_start_lets_the_answers_folder_go(tasks):  # noqa: F811
    """`kill` while the server starts (after it took the answers folder's lock, before or just after its
    address line): it ends with 143 and one line, ``interrupted``, and leaves no lock file. The address line
    was once printed before SIGTERM was handled, so a kill right after it left the lock; once serving, waitress
    swallowed the signal and the server ended with 0 and no word."""
    import select

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    lock = tasks / "answers" / ".incoherent-build.lock"
    for delay in (0.0, 0.05, 0.3, None):  # None: the moment the address line is read
        server = subprocess.Popen(
            [sys.executable, "-m", "incoherent.pipelines.cli", "annotate", "serve", str(tasks), "--port", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 120
            if delay is None:
                ready, _, _ = select.select([server.stdout], [], [], 120)
                assert ready and server.stdout.readline().startswith("annotation study on ")
            else:
                while not lock.exists():
                    assert server.poll() is None and time.monotonic() < deadline, server.communicate()
                    time.sleep(0.005)
                time.sleep(delay)
            server.send_signal(signal.SIGTERM)
            _, err = server.communicate(timeout=30)
        finally:
            if server.poll() is None:
                server.kill()
                server.wait()
        assert server.returncode == 143 and err.strip() == "interrupted", (delay, server.returncode, err)
        assert not lock.exists(), delay
