"""`annotate overlap` against a stand-in Label Studio API served on 127.0.0.1 by the test (stopped by it)."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.annotation.test_annotate import cli

LEGACY = "0123456789abcdef0123456789abcdef01234567"
PAT = "eyJhbGciOiJIUzI1NiJ9.eyJ0b2tlbl90eXBlIjoicmVmcmVzaCJ9.c2lnbmF0dXJl"


class StandIn(BaseHTTPRequestHandler):
    """Label Studio's answers to the calls `annotate overlap` makes (``/api/token/refresh``, ``/api/projects/N/``)."""

    project = {"id": 3, "title": "INSteD check", "maximum_annotations": 1}
    seen: list = []
    delay = 0.0

    def log_message(self, *args):  # quiet
        pass

    def _reply(self, code: int, value) -> None:
        body = json.dumps(value).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _body(self):
        return json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")

    def _authorised(self) -> bool:
        return self.headers.get("Authorization") in (f"Token {LEGACY}", "Bearer access-1")

    def do_POST(self):
        body = self._body()
        self.seen.append(("POST", self.path, self.headers.get("Authorization"), body))
        if self.path == "/api/token/refresh" and body == {"refresh": PAT}:
            self._reply(200, {"access": "access-1"})
        else:
            self._reply(401, {"detail": "invalid"})

    def do_PATCH(self):
        body = self._body()
        self.seen.append(("PATCH", self.path, self.headers.get("Authorization"), body))
        time.sleep(self.delay)
        if not self._authorised():
            return self._reply(401, {"detail": "Authentication credentials were not provided."})
        if self.path != "/api/projects/3/":
            return self._reply(404, {"detail": "Not found."})
        type(self).project = {**self.project, **body}
        self._reply(200, self.project)

    def do_GET(self):
        self.seen.append(("GET", self.path, self.headers.get("Authorization"), None))
        if not self._authorised():
            return self._reply(401, {"detail": "no"})
        self._reply(200, self.project)


class QuietServer(ThreadingHTTPServer):
    def handle_error(self, request, client_address):  # a client gone at its timeout: no report on stderr
        pass


@pytest.fixture
def server():
    StandIn.seen, StandIn.delay = [], 0.0
    StandIn.project = {"id": 3, "title": "INSteD check", "maximum_annotations": 1}
    httpd = QuietServer(("127.0.0.1", 0), StandIn)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=5)


def test_overlap_with_a_legacy_token_and_a_personal_access_token(server, monkeypatch, capsys):
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", LEGACY)
    assert cli("annotate", "overlap", "--url", server + "/", "--project", "3", "--workers", "3") == 0
    assert "project 3 (INSteD check): 3 annotators per task" in capsys.readouterr().out
    assert StandIn.seen == [
        ("PATCH", "/api/projects/3/", f"Token {LEGACY}", {"maximum_annotations": 3}),
        ("GET", "/api/projects/3/", f"Token {LEGACY}", None),
    ]
    StandIn.seen = []
    monkeypatch.setenv("LS_PAT", PAT)
    assert (
        cli(
            "annotate",
            "overlap",
            "--url",
            server,
            "--project",
            "3",
            "--workers",
            "5",
            "--token-env",
            "LS_PAT",
        )
        == 0
    )
    assert [s[:3] for s in StandIn.seen] == [
        ("POST", "/api/token/refresh", None),
        ("PATCH", "/api/projects/3/", "Bearer access-1"),
        ("GET", "/api/projects/3/", "Bearer access-1"),
    ]
    assert StandIn.project["maximum_annotations"] == 5


def test_overlap_failures_are_one_line(server, monkeypatch, capsys):
    def error(*args) -> str:
        capsys.readouterr()
        assert cli("annotate", "overlap", *args) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("error: ") and "\n" not in err and LEGACY not in err, err
        return err

    monkeypatch.delenv("LABEL_STUDIO_API_KEY", raising=False)
    assert "set LABEL_STUDIO_API_KEY" in error("--url", server, "--project", "3", "--workers", "3")
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "wrong")
    assert "HTTP 401 (the token was refused)" in error("--url", server, "--project", "3", "--workers", "3")
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", LEGACY)
    assert "HTTP 404" in error("--url", server, "--project", "4", "--workers", "3")
    assert "not an http(s) address" in error(
        "--url", "file:///etc/passwd", "--project", "3", "--workers", "3"
    )
    StandIn.delay = 2.0  # a server that does not answer in time
    started = time.monotonic()
    assert "no answer within 0.5 s" in error(
        "--url", server, "--project", "3", "--workers", "3", "--timeout", "0.5"
    )
    assert time.monotonic() - started < 2.0


class Hostile:
    """A raw TCP server on 127.0.0.1 that answers every connection with ``behaviour(conn, stop)``; the test's
    fixture stops it (the listening socket, every connection and every thread) on every exit path."""

    def __init__(self, behaviour):
        self.behaviour, self.stop = behaviour, threading.Event()
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.1)
        self.conns: list = []
        self.threads = [threading.Thread(target=self._accept, daemon=True)]
        self.threads[0].start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _accept(self):
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.conns.append(conn)
            worker = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            self.threads.append(worker)
            worker.start()

    def _serve(self, conn):
        try:
            conn.settimeout(0.5)
            with contextlib.suppress(OSError):
                conn.recv(65536)  # the request (small): read once, never answered properly
            self.behaviour(conn, self.stop)
        except OSError:
            pass

    def close(self):
        self.stop.set()
        self.sock.close()
        for conn in self.conns:
            with contextlib.suppress(OSError):
                conn.close()
        for thread in self.threads:
            thread.join(timeout=5)


def _drip(data: bytes):
    def behaviour(conn, stop):
        for byte in data[:200]:  # bounded: 200 bytes at most, one every 0.2 s
            if stop.wait(0.2):
                return
            conn.sendall(bytes([byte]))

    return behaviour


def _send(data: bytes):
    def behaviour(conn, stop):
        conn.sendall(data)
        stop.wait(10)  # keep the connection open (a close would end the read anyway)

    return behaviour


HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
HOSTILE = {
    "body dripped": _send(HEAD + b"Content-Length: 1000\r\n\r\n"),
    "body dripped slowly": None,  # filled below (needs the head sent at once, then the body dripped)
    "header lines dripped": _drip(HEAD + b"X-Padding: " + b"a" * 150 + b"\r\n\r\n{}"),
    "bad status line": _send(b"SPAM AND EGGS\r\n\r\n"),
    "more than 100 headers": _send(HEAD + b"".join(b"X-%d: y\r\n" % i for i in range(150)) + b"\r\n{}"),
    "a 100 KB header line": _send(HEAD + b"X-Long: " + b"a" * 100_000 + b"\r\n\r\n{}"),
    "broken chunked body": _send(HEAD + b"Transfer-Encoding: chunked\r\n\r\nzz\r\nnot a chunk\r\n"),
}


def _drip_body(conn, stop):
    conn.sendall(HEAD + b"Content-Length: 1000\r\n\r\n")
    _drip(b"{" + b" " * 998 + b"}")(conn, stop)


HOSTILE["body dripped slowly"] = _drip_body


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_overlap_against_a_hostile_server_ends_in_time_with_one_line(case, monkeypatch, capsys):
    """--timeout bounds the whole request (a dripping server is cut off) and malformed HTTP is one line."""
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", LEGACY)
    hostile = Hostile(HOSTILE[case])
    try:
        started = time.monotonic()
        code = cli("annotate", "overlap", "--url", hostile.url, "--project", "3", "--workers", "3",
                   "--timeout", "1.5")  # fmt: skip
        took = time.monotonic() - started
    finally:
        hostile.close()
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith("error: ") and "\n" not in err and LEGACY not in err, (case, err)
    assert "no answer within 1.5 s" in err or "not an HTTP answer" in err, (case, err)
    assert took < 4.0, (case, took)


def test_overlap_prints_the_server_s_title_with_control_characters_escaped(server, monkeypatch, capsys):
    """A project title with ANSI/OSC escapes (clear the screen, retitle the terminal) is printed as text."""
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", LEGACY)
    StandIn.project = {**StandIn.project, "title": "x\x1b]0;owned\x07\x1b[2J\u202eevil"}
    assert cli("annotate", "overlap", "--url", server, "--project", "3", "--workers", "2") == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out, out
    assert "(x\\x1b]0;owned\\x07\\x1b[2J\\u202eevil): 2 annotators per task" in out, out
