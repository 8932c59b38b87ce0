"""The in-lab annotation web application of ``incoherent annotate serve`` (Flask, served by waitress).

The start page shows the study's instructions and a name field. An annotator then answers the practice items of
the export (with the right answer shown after each; never counted) and works through every item, tasks and
items in an order drawn from the export's seed and the annotator's name. Sentences are shown one per line; the
opening sentence cannot be chosen; "None of the above" is always offered. Keys: the digit of a sentence's number
(2-9) chooses it, ``0`` or ``n`` chooses None of the above (``a``/``b`` for pairs), Enter submits.

Answers are appended to ``ANSWERS_DIR/<name>.jsonl`` (practice answers to ``ANSWERS_DIR/practice/<name>.jsonl``),
fenced from a torn last line, written and fsynced before the next item is shown, with the seconds the item's page
was shown, summed over every visit (a reload, an answer the server refused, a later correction: the browser keeps
the running total per item; see docs/annotation.md, "Item times"); progress is read back from that file, so closing the browser (or killing the server) loses nothing
answered. Every item has its own address (``/a/<name>/item/<n>``); the server accepts an answer only for the
item it expects next, or as an explicit correction of an item already answered (appended with
``"correction": true``; the latest answer counts, the history stays in the file). Pages are never cached and
forms never restored by the browser, so Back and reload never submit a value the annotator did not choose.

A local web app is still a web app: POSTs are accepted only from the app's own origin (``Origin``, else
``Referer``) and with the session's token; request bodies are capped; answers are never written through a link.
"""

from __future__ import annotations

import datetime
import ipaddress
import logging
import os
import re
import secrets
import threading
from urllib.parse import urlsplit

from incoherent.annotation.formats import finite_seconds
from incoherent.annotation.lab_pages import DONE, ITEM, LOGIN, MESSAGE, PAGE, PRACTICE
from incoherent.annotation.lab_store import AnswerFileError, AnswerStore, answers_folder, load_tasks

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")
MAX_SECONDS = 24 * 3600
MAX_BODY = 64 * 1024  # bytes of a request body (an answer is a few hundred)


LOOPBACK_NAMES = {"localhost", "localhost.localdomain"}

log = logging.getLogger("incoherent.annotate.serve")


def parse_seconds(value: str | None) -> float | None:
    """Seconds on screen as posted: a finite number >= 0 (capped at a day), else None (unknown).

    >>> parse_seconds("2.5"), parse_seconds("nan"), parse_seconds("-1"), parse_seconds("inf"), parse_seconds("1e9")
    (2.5, None, None, None, 86400.0)
    """
    seconds = finite_seconds(value)
    return None if seconds is None else min(seconds, float(MAX_SECONDS))


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


def create_app(tasks_dir: str, answers_dir: str | None = None, *, host: str = "127.0.0.1"):
    """The Flask application for the export in ``tasks_dir`` (answers in ``tasks_dir/answers`` by default).

    ``host``: the address the server listens on; on a loopback address only requests that name this machine
    (``Host``) are answered, so a DNS-rebound name cannot reach the app.
    """
    from flask import Flask, abort, redirect, render_template_string, request, session, url_for
    from werkzeug.exceptions import HTTPException

    from incoherent.annotation import instructions as guide
    from incoherent.annotation.formats import INTRUDER_QUESTION, NONE_LABEL, PAIR_QUESTION
    from incoherent.annotation.labserver import CACHED_ANNOTATORS, BoundedCache
    from incoherent.annotation.tasks import annotator_sequence

    doc = load_tasks(tasks_dir)
    kind = doc["kind"]
    folder = answers_folder(tasks_dir, answers_dir)
    store = AnswerStore(folder, doc["export_id"])
    practice_store = AnswerStore(os.path.join(folder, "practice"), doc["export_id"])
    practice_items = doc.get("practice") or []
    instructions_html = guide.to_html(doc["instructions"]) if doc.get("instructions") else ""
    question = INTRUDER_QUESTION if kind == "intruder" else PAIR_QUESTION
    sequences = BoundedCache(CACHED_ANNOTATORS)  # bounded: any number of distinct names may log in
    logged = BoundedCache(CACHED_ANNOTATORS)
    answering = threading.Lock()
    loopback_only = _loopback(host)

    app = Flask(__name__)
    app.config.update(
        SECRET_KEY=secrets.token_bytes(32),  # per server start: a restart asks annotators to log in again
        MAX_CONTENT_LENGTH=MAX_BODY,
        MAX_FORM_MEMORY_SIZE=MAX_BODY,
        SESSION_COOKIE_NAME="incoherent_lab",
        SESSION_COOKIE_SAMESITE="Strict",
        SESSION_COOKIE_HTTPONLY=True,
    )

    def page(title: str, body: str, status: int = 200, **values):
        return render_template_string(PAGE, title=title, body=render_template_string(body, **values)), status

    def message(status: int, heading: str, text: str, link: str | None = None, link_text: str = "Continue"):
        return page(heading, MESSAGE, status, heading=heading, message=text, link=link, link_text=link_text)

    def sequence_of(name: str) -> list:
        sequence = sequences.get(name)
        if sequence is None:
            sequence = sequences[name] = annotator_sequence(doc, name)
        return sequence

    def label(value: int) -> str:
        if kind == "pair":
            return f"Text {'AB'[value]}" if value in (0, 1) else str(value)
        return NONE_LABEL if value == -1 else f"sentence {value + 1}"

    def allowed(item: dict) -> tuple:
        return (0, 1) if kind == "pair" else (-1, *range(1, len(item["sentences"])))

    def csrf_token() -> str:
        if "csrf" not in session:
            session["csrf"] = secrets.token_urlsafe(32)
        return session["csrf"]

    def annotator(name: str) -> str:
        """The name of the URL, once this browser's session logged in with it (else back to the start page)."""
        if not NAME.match(name):
            abort(404)
        if session.get("annotator") != name:
            abort(redirect(url_for("index")))
        return name

    def progress(name: str) -> tuple[dict, list, int]:
        """``(latest answer by (task, item), the sequence, lines skipped)``."""
        records, skipped = store.records(store.path(name))
        latest = {(r["task_id"], r["item_id"]): r for r in records}
        if skipped and logged.get(name) != skipped:
            logged[name] = skipped
            log.warning("%s: %d unreadable lines skipped (%s)", store.path(name), sum(skipped.values()),
                        ", ".join(f"{k}: {v}" for k, v in sorted(skipped.items())))  # fmt: skip
        return latest, sequence_of(name), sum(skipped.values())

    def practice_done(name: str) -> dict:
        records, _ = practice_store.records(practice_store.path(name))
        return {r["item_id"]: r for r in records}

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

    @app.get("/")
    def index():
        return page("Annotation study", LOGIN, error=request.args.get("error"), csrf=csrf_token(),
                    instructions=instructions_html)  # fmt: skip

    @app.post("/login")
    def login():
        name = request.form.get("annotator", "").strip()
        if not NAME.match(name):
            return redirect(url_for("index", error="Use 1-40 letters, digits, '.', '_' or '-'."), code=303)
        session["annotator"] = name
        return redirect(url_for("work", name=name), code=303)

    @app.get("/a/<name>")
    def work(name: str):
        """Where this annotator is: the next practice item, the first unanswered item, or done."""
        name = annotator(name)
        if practice_items:
            done = practice_done(name)
            for number, item in enumerate(practice_items, start=1):
                if item["item_id"] not in done:
                    return redirect(url_for("practice", name=name, number=number), code=303)
        latest, sequence, _ = progress(name)
        for number, (task_id, item) in enumerate(sequence, start=1):
            if (task_id, item["item_id"]) not in latest:
                return redirect(url_for("item", name=name, number=number), code=303)
        return page("Done", DONE, total=len(sequence), name=name)

    @app.get("/a/<name>/item/<int:number>")
    def item(name: str, number: int):
        name = annotator(name)
        latest, sequence, skipped = progress(name)
        expected = next(
            (n for n, (t, i) in enumerate(sequence, start=1) if (t, i["item_id"]) not in latest), None
        )
        if not 1 <= number <= len(sequence) or (expected is not None and number > expected):
            return redirect(url_for("work", name=name), code=303)
        task_id, shown = sequence[number - 1]
        earlier = latest.get((task_id, shown["item_id"]))
        return page(
            f"Item {number} of {len(sequence)}",
            ITEM,
            name=name,
            number=number,
            total=len(sequence),
            done=len(latest),
            skipped=skipped,
            task_id=task_id,
            item=shown,
            kind=kind,
            none_label=NONE_LABEL,
            question=question,
            csrf=csrf_token(),
            previous=None if earlier is None else label(earlier["answer"]),
            next_number=expected,
        )

    @app.post("/a/<name>/item/<int:number>")
    def answer(name: str, number: int):
        name = annotator(name)
        # the check and the append are one step: two tabs cannot both answer the expected item
        with answering:
            return save_answer(name, number)

    def save_answer(name: str, number: int):
        latest, sequence, _ = progress(name)
        if not 1 <= number <= len(sequence):
            abort(404)
        task_id, shown = sequence[number - 1]
        if (request.form.get("task_id"), request.form.get("item_id")) != (task_id, shown["item_id"]):
            return message(409, "Out of date", "This page does not show the item the study expects; nothing "
                           "was saved.", url_for("work", name=name))  # fmt: skip
        correction = request.form.get("correction") == "1"
        answered = (task_id, shown["item_id"]) in latest
        expected = next(
            (n for n, (t, i) in enumerate(sequence, start=1) if (t, i["item_id"]) not in latest), None
        )
        if answered and not correction:
            return message(409, "Already answered", f"Item {number} was answered already; nothing was saved "
                           "(use its page to change the answer).", url_for("work", name=name))  # fmt: skip
        if not answered and (correction or number != expected):
            return message(409, "Out of order", f"Item {number} is not the one to answer now; nothing was "
                           "saved.", url_for("work", name=name))  # fmt: skip
        try:
            value = int(request.form.get("answer", ""))
        except ValueError:
            return message(400, "No answer", "Choose an answer first; nothing was saved.",
                           url_for("item", name=name, number=number))  # fmt: skip
        if value not in allowed(shown):
            return message(400, "Not an answer", "That answer is not one of the choices; nothing was saved.",
                           url_for("item", name=name, number=number))  # fmt: skip
        record = {
            "export_id": doc["export_id"],
            "task_id": task_id,
            "item_id": shown["item_id"],
            "annotator": name,
            "answer": value,
            "seconds": parse_seconds(request.form.get("seconds")),
            "answered_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        }
        if correction:
            record["correction"] = True
        try:
            store.append(store.path(name), record)
        except OSError as exc:
            log.error("%s: answer not saved (%s)", store.path(name), exc.strerror or exc)
            return message(507, "Answer not saved", f"Your answer could not be saved ({exc.strerror or exc}). "
                           "Tell the study's organiser; your earlier answers are safe. Try again once they "
                           "say so.", url_for("item", name=name, number=number), "Try again")  # fmt: skip
        return redirect(url_for("work", name=name), code=303)

    @app.get("/a/<name>/practice/<int:number>")
    def practice(name: str, number: int):
        name = annotator(name)
        if not 1 <= number <= len(practice_items):
            return redirect(url_for("work", name=name), code=303)
        shown = practice_items[number - 1]
        done = practice_done(name)
        earlier = done.get(shown["item_id"])
        if earlier is None and any(p["item_id"] not in done for p in practice_items[: number - 1]):
            return redirect(url_for("work", name=name), code=303)
        return page(
            f"Practice item {number} of {len(practice_items)}",
            PRACTICE,
            name=name,
            number=number,
            total=len(practice_items),
            item=shown,
            kind=kind,
            none_label=NONE_LABEL,
            question=question,
            csrf=csrf_token(),
            feedback=earlier is not None,
            given=None if earlier is None else label(earlier["answer"]),
            right=label(shown["answer"]),
        )

    @app.post("/a/<name>/practice/<int:number>")
    def practice_answer(name: str, number: int):
        name = annotator(name)
        with answering:
            return save_practice(name, number)

    def save_practice(name: str, number: int):
        if not 1 <= number <= len(practice_items):
            abort(404)
        shown = practice_items[number - 1]
        if request.form.get("item_id") != shown["item_id"]:
            return message(409, "Out of date", "This page is out of date; nothing was saved.",
                           url_for("work", name=name))  # fmt: skip
        if shown["item_id"] not in practice_done(name):
            try:
                value = int(request.form.get("answer", ""))
            except ValueError:
                value = None
            if value not in allowed(shown):
                return message(400, "No answer", "Choose one of the answers first.",
                               url_for("practice", name=name, number=number))  # fmt: skip
            record = {
                "export_id": doc["export_id"],
                "task_id": "practice",
                "item_id": shown["item_id"],
                "annotator": name,
                "answer": value,
                "seconds": parse_seconds(request.form.get("seconds")),
                "practice": True,
                "right": value == shown["answer"],
            }
            try:
                practice_store.append(practice_store.path(name), record)
            except OSError as exc:
                return message(507, "Answer not saved", f"Your answer could not be saved ({exc.strerror or exc}).",
                               url_for("practice", name=name, number=number), "Try again")  # fmt: skip
        return redirect(url_for("practice", name=name, number=number), code=303)

    app.extensions["incoherent"] = {"sequences": sequences, "logged": logged}  # for tests and benchmarks
    return app
