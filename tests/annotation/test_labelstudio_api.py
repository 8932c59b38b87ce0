"""`annotate overlap` against a stand-in Label Studio API served on 127.0.0.1 by the test (stopped by it)."""

from __future__ import annotations

import json
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


@pytest.fixture
def server():
    StandIn.seen, StandIn.delay = [], 0.0
    StandIn.project = {"id": 3, "title": "INSteD check", "maximum_annotations": 1}
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), StandIn)
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
