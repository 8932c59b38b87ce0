"""``annotate overlap`` and a Label Studio server that redirects to another host (issue #53, item 17's class
question: every HTTP client of the project). The API client follows no redirect at all: the token is never
sent elsewhere, and nothing reaches the other host. Two raw servers on 127.0.0.1."""

from __future__ import annotations

import pytest

from tests.annotation.test_labelstudio_api import LEGACY, Hostile, _send, cli


@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_a_redirect_to_another_host_is_one_line_and_not_followed(status, monkeypatch, capsys):
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", LEGACY)
    reached = []

    def record(conn, stop):
        reached.append(conn)

    elsewhere = Hostile(record)
    target = f"{elsewhere.url}/api/projects/3/"
    redirecting = None
    try:
        location = target.encode()
        redirecting = Hostile(
            _send(b"HTTP/1.1 %d Moved\r\nLocation: %s\r\nContent-Length: 0\r\n\r\n" % (status, location))
        )
        code = cli("annotate", "overlap", "--url", redirecting.url, "--project", "3", "--workers", "3",
                   "--timeout", "5")  # fmt: skip
    finally:
        elsewhere.close()
        if redirecting is not None:
            redirecting.close()
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith("error: ") and "\n" not in err and LEGACY not in err, err
    assert f"redirected to {target} (not followed)" in err, err
    assert reached == []
