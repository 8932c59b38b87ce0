"""What keeps the in-lab app (:mod:`annotation.webapp`) a safe web app on a local address.

POSTs are accepted only from the app's own origin (``Origin``, else ``Referer``) and with the session's token
(:func:`csrf_token`); on a loopback address only requests that name this machine (``Host``) are answered, so a
DNS-rebound name cannot reach the app; request bodies are capped (:data:`MAX_BODY`); pages are never cached,
framed or sniffed; a session reaches an annotator's pages only once it logged in with that name
(:func:`logged_in`).
"""

from __future__ import annotations

import ipaddress
import logging
import re
import secrets
from collections.abc import Callable
from urllib.parse import urlsplit

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")
MAX_BODY = 64 * 1024  # bytes of a request body (an answer is a few hundred)
LOOPBACK_NAMES = {"localhost", "localhost.localdomain"}

log = logging.getLogger("incoherent.annotate.serve")


def _host_name(host: str) -> str:
    """The name in a ``Host`` header: ``127.0.0.1:8000`` -> ``127.0.0.1``, ``[::1]:8000`` -> ``::1``."""
    if host.startswith("["):
        return host[1 : host.find("]")]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _loopback(host: str) -> bool:
    name = host.strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def configure(app) -> None:
    """The session cookie and the caps on request bodies."""
    app.config.update(
        SECRET_KEY=secrets.token_bytes(32),  # per server start: a restart asks annotators to log in again
        MAX_CONTENT_LENGTH=MAX_BODY,
        MAX_FORM_MEMORY_SIZE=MAX_BODY,
        SESSION_COOKIE_NAME="incoherent_lab",
        SESSION_COOKIE_SAMESITE="Strict",
        SESSION_COOKIE_HTTPONLY=True,
    )


def csrf_token() -> str:
    """The session's token, which every form posts back."""
    from flask import session

    if "csrf" not in session:
        session["csrf"] = secrets.token_urlsafe(32)
    return session["csrf"]


def logged_in(name: str) -> str:
    """The name of the URL, once this browser's session logged in with it (else back to the start page)."""
    from flask import abort, redirect, session, url_for

    if not NAME.match(name):
        abort(404)
    if session.get("annotator") != name:
        abort(redirect(url_for("index")))
    return name


def install(app, host: str, message: Callable) -> None:
    """The checks before every request (address, origin, token), the headers of every answer, and the pages of
    errors (``message(status, heading, text, link, link_text)`` renders one)."""
    from flask import request, session, url_for
    from werkzeug.exceptions import HTTPException

    from incoherent.annotation.lab_store import AnswerFileError

    loopback_only = _loopback(host)

    @app.before_request
    def same_origin():
        if loopback_only and not _loopback(_host_name(request.host)):
            return message(403, "Wrong address", "This study only answers on this machine's own address.")
        if request.method != "POST":
            return None
        own = f"{request.scheme}://{request.host}"
        origin = request.headers.get("Origin")
        if origin is None and request.referrer:
            parts = urlsplit(request.referrer)
            origin = f"{parts.scheme}://{parts.netloc}"
        if origin != own:
            log.warning("refused a POST to %s from origin %r", request.path, origin)
            return message(403, "Refused", "This form was not sent from the study's own page; nothing was saved.",
                           url_for("index"), "Go to the start page")  # fmt: skip
        token = request.form.get("csrf", "")
        if not token or not secrets.compare_digest(token, session.get("csrf", "")):
            return message(403, "Session expired", "This page is from an earlier session; nothing was saved. "
                           "Log in again to go on.", url_for("index"), "Go to the start page")  # fmt: skip
        return None

    @app.after_request
    def headers(response):
        response.headers["Cache-Control"] = "no-store"
        response.headers["X-Frame-Options"] = "DENY"
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "same-origin"
        response.headers["Content-Security-Policy"] = (
            "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data:; "
            "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        )
        return response

    @app.errorhandler(HTTPException)
    def http_error(exc):
        if exc.code == 413:
            return message(
                413, "Too large", f"Requests are limited to {MAX_BODY // 1024} KiB; nothing was saved."
            )
        return message(exc.code or 500, exc.name, exc.description or "")

    @app.errorhandler(AnswerFileError)
    def answer_file_error(exc):
        log.error("refused: %s", exc)
        return message(500, "Answers file refused", f"{exc}. Tell the study's organiser; nothing was saved.")
