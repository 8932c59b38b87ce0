"""An annotator of the in-lab app driven through Flask's test client: it reads the pages the app serves (the
form's action, its hidden fields and CSRF token) and posts them back as a browser on the app's origin does."""

from __future__ import annotations

import html
import re

ORIGIN = "http://localhost"  # the test client's own origin (its Host is ``localhost``)


def form_of(page: str) -> tuple[str, dict[str, str]]:
    """``(action, hidden fields)`` of the first form of a page."""
    action = re.search(r'<form[^>]*action="([^"]+)"', page)
    hidden = re.findall(r'<input type="hidden" name="([^"]+)"(?: id="[^"]*")? value="([^"]*)"', page)
    assert action, page[:500]
    return html.unescape(action.group(1)), {k: html.unescape(v) for k, v in hidden}


class LabSession:
    """One annotator's browser session (cookie jar) on the app."""

    def __init__(self, app, name: str):
        self.client, self.name = app.test_client(), name
        page = self.client.get("/").get_data(as_text=True)
        action, fields = form_of(page)
        response = self.post(action, {**fields, "annotator": name})
        assert response.status_code == 303, response.get_data(as_text=True)[:300]

    def post(self, url: str, data: dict, **headers):
        return self.client.post(url, data=data, headers={"Origin": ORIGIN, **headers})

    def page(self, url: str | None = None) -> str:
        response = self.client.get(url or f"/a/{self.name}", follow_redirects=True)
        return response.get_data(as_text=True)

    def answer(self, choose, seconds: float | str = 1.0, url: str | None = None):
        """Answer the item the app shows (at ``url``, else the next one): ``choose(fields) -> answer``."""
        action, fields = form_of(self.page(url))
        return self.post(action, {**fields, "answer": choose(fields), "seconds": seconds})

    def answer_all(self, choose, seconds=1.0) -> int:
        count = 0
        while "answer-form" in self.page():
            response = self.answer(choose, seconds)
            assert response.status_code == 303, response.get_data(as_text=True)[:300]
            count += 1
        return count


class Server:
    """``incoherent annotate serve TASKS_DIR --port 0`` in its own process on 127.0.0.1 (stopped by the test)."""

    def __init__(self, tasks, *extra: str):
        import os
        import select
        import subprocess
        import sys

        from tests.conftest import ROOT

        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        command = [
            sys.executable,
            "-m",
            "incoherent.pipelines.cli",
            "annotate",
            "serve",
            str(tasks),
            "--port",
            "0",
            *extra,
        ]
        self.process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True
        )
        ready, _, _ = select.select([self.process.stdout], [], [], 30)
        line = self.process.stdout.readline() if ready else ""
        assert line.startswith("annotation study on http://127.0.0.1:"), line
        self.base = line.split()[3].rstrip("/")
        self.port = int(self.base.rsplit(":", 1)[1])

    def stop(self, sig: int | None = None) -> str:
        """Stop the server (SIGTERM, or ``sig``); returns what it wrote to stderr."""
        import signal

        if self.process.poll() is None:
            self.process.send_signal(sig or signal.SIGTERM)
            self.process.wait(timeout=10)
        return self.process.stderr.read()
