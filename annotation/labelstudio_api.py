"""Label Studio's HTTP API, for the one setting its free edition has no page for: the overlap (annotators per task).

Label Studio finishes a task after one annotation unless the project's ``maximum_annotations`` says more; the
Community edition shows no field for it, the API sets it::

    curl -X PATCH "$URL/api/projects/$PROJECT/" -H "Authorization: Token $LABEL_STUDIO_API_KEY" \\
      -H "Content-Type: application/json" -d '{"maximum_annotations": 3}'

A legacy token goes in ``Authorization: Token``; a personal access token (a JWT refresh token) is first
exchanged at ``/api/token/refresh`` for an access token sent as ``Authorization: Bearer``. Every request has a
timeout that bounds the whole request (name lookup, connection, status line, headers and body: a server that
drips one byte a second is cut off all the same), follows no redirect (the token is never sent elsewhere) and
reads at most :data:`MAX_RESPONSE` bytes; malformed HTTP (a bad status line, a header line past 64 KiB, more
than 100 headers, a broken chunked body) ends in one line as every other failure does.
"""

from __future__ import annotations

import http.client
import json
import re
import urllib.error
import urllib.parse
import urllib.request

from incoherent.deadline import DeadlinePassed, within
from incoherent.nofollow import open_url
from incoherent.schemas.records import InputError

MAX_RESPONSE = 1 << 20
_JWT = re.compile(r"^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$")


def _read(request: urllib.request.Request, timeout: float) -> bytes:
    """The body of ``request``'s answer (up to one byte over :data:`MAX_RESPONSE`); each read bounded by
    ``timeout``, the whole exchange by :func:`incoherent.deadline.within` in :func:`_request`."""
    with open_url(request, timeout) as response:
        return response.read(MAX_RESPONSE + 1)


def _request(url: str, method: str, headers: dict, body: dict | None, timeout: float) -> dict:
    data = None if body is None else json.dumps(body).encode("utf-8")
    request = urllib.request.Request(
        url, data=data, method=method, headers={"Accept": "application/json", **headers}
    )
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        raw = within(timeout, _read, request, timeout)
    except urllib.error.HTTPError as exc:
        reason = "the token was refused" if exc.code in (401, 403) else exc.reason
        raise InputError(f"{method} {url}: HTTP {exc.code} ({reason})") from None
    except (DeadlinePassed, TimeoutError):
        raise InputError(f"{method} {url}: no answer within {timeout:g} s (--timeout)") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, TimeoutError):
            raise InputError(f"{method} {url}: no answer within {timeout:g} s (--timeout)") from None
        raise InputError(f"{method} {url}: cannot reach Label Studio ({reason})") from None
    except (http.client.HTTPException, ValueError) as exc:  # BadStatusLine, LineTooLong, 100 headers, chunks
        reason = type(exc).__name__ + (f": {str(exc)[:80]}" if str(exc) else "")
        raise InputError(f"{method} {url}: not an HTTP answer ({reason}); not Label Studio's API?") from None
    if len(raw) > MAX_RESPONSE:
        raise InputError(f"{method} {url}: answer larger than {MAX_RESPONSE} bytes; not Label Studio's API?")
    try:
        value = json.loads(raw or b"{}")
    except (ValueError, RecursionError):
        raise InputError(f"{method} {url}: the answer is not JSON; not Label Studio's API?") from None
    if not isinstance(value, dict):
        raise InputError(f"{method} {url}: the answer is not a JSON object; not Label Studio's API?")
    return value


def _auth(base: str, token: str, timeout: float) -> dict:
    if not _JWT.match(token):
        return {"Authorization": f"Token {token}"}
    access = _request(f"{base}/api/token/refresh", "POST", {}, {"refresh": token}, timeout).get("access")
    if not isinstance(access, str) or not access:
        raise InputError(f"{base}/api/token/refresh: no access token in the answer")
    return {"Authorization": f"Bearer {access}"}


def set_overlap(url: str, token: str, project: int, workers: int, timeout: float = 10.0) -> dict:
    """Set project ``project``'s ``maximum_annotations`` to ``workers`` and read it back; returns the project's
    ``{"id", "title", "maximum_annotations"}``."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(f"--url: {url!r} is not an http(s) address of a Label Studio server")
    if not token.strip() or any(c in token for c in "\r\n"):
        raise InputError("the Label Studio token is empty or holds a line break")
    if project < 1:
        raise InputError(f"--project: must be >= 1, got {project}")
    if workers < 1:
        raise InputError(f"--workers: must be >= 1, got {workers}")
    if not 0 < timeout <= 300:
        raise InputError(f"--timeout: must be in (0, 300] seconds, got {timeout}")
    base = url.rstrip("/")
    headers = _auth(base, token.strip(), timeout)
    endpoint = f"{base}/api/projects/{project}/"
    _request(endpoint, "PATCH", headers, {"maximum_annotations": workers}, timeout)
    now = _request(endpoint, "GET", headers, None, timeout)
    if now.get("maximum_annotations") != workers:
        raise InputError(
            f"GET {endpoint}: maximum_annotations is {now.get('maximum_annotations')!r} after setting it to {workers}"
        )
    return {"id": now.get("id", project), "title": now.get("title"), "maximum_annotations": workers}
