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
import errno
import ipaddress
import json
import logging
import os
import re
import secrets
import stat
import threading
from collections import Counter
from urllib.parse import urlsplit

from annotation.formats import finite_seconds
from schemas.records import InputError

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")
MAX_SECONDS = 24 * 3600
MAX_BODY = 64 * 1024  # bytes of a request body (an answer is a few hundred)
MAX_LINE = 1 << 20  # an answers line longer than this is skipped and counted
MAX_FILE = 64 << 20  # an answers file larger than this is refused (one annotator writes a few KB)
LOOPBACK_NAMES = {"localhost", "localhost.localdomain"}

log = logging.getLogger("incoherent.annotate.serve")

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{ title }}</title>
<style>
 body { font-family: sans-serif; max-width: 52em; margin: 2em auto; line-height: 1.45; }
 .sentence { display: block; padding: 4px 6px; border-radius: 4px; }
 label.sentence { cursor: pointer; } label.sentence:hover { background: #eef; }
 .opening { color: #555; padding-left: 30px; }
 .pair { display: flex; gap: 1.5em; } .pair > div { flex: 1; border: 1px solid #ccc; padding: .5em 1em; }
 .progress { color: #555; } kbd { border: 1px solid #aaa; border-radius: 3px; padding: 0 4px; }
 .instructions { border: 1px solid #bbb; border-radius: 4px; padding: 0 1em; background: #fafafa; }
 .notice { color: #a00; } .feedback { border-left: 4px solid #36a; padding-left: .8em; }
</style></head><body>
{{ body|safe }}
</body></html>
"""

_LOGIN = """<h1>Annotation study</h1>
{% if instructions %}<div class="instructions" id="instructions">{{ instructions|safe }}</div>{% endif %}
<form method="post" action="{{ url_for('login') }}" autocomplete="off">
 <input type="hidden" name="csrf" value="{{ csrf }}">
 <p><label>Your name (letters, digits, . _ -): <input id="annotator" name="annotator" required autocomplete="off"
    pattern="[A-Za-z0-9][A-Za-z0-9_.\\-]{0,39}" autofocus></label></p>
 {% if error %}<p id="error" class="notice">{{ error }}</p>{% endif %}
 <p><button id="start" type="submit">Start</button></p>
</form>"""

_DONE = """<h1 id="done">All {{ total }} items answered</h1><p>Thank you, {{ name }}. You can close this window.</p>
<p><a id="review" href="{{ url_for('item', name=name, number=1) }}">Review or change your answers</a></p>"""

_MESSAGE = """<h1>{{ heading }}</h1><p id="message" class="notice">{{ message }}</p>
{% if link %}<p><a id="continue" href="{{ link }}">{{ link_text }}</a></p>{% endif %}"""

_CHOICES = """
 {% if kind == 'intruder' %}
  {% for s in item.sentences %}
   {% if loop.first %}<span class="sentence opening" id="sentence-1">1. {{ s }}</span>
   {% else %}<label class="sentence" id="sentence-{{ loop.index }}"><input type="radio" name="answer"
      autocomplete="off" id="choice-{{ loop.index }}" value="{{ loop.index0 }}" required> {{ loop.index }}. {{ s }}</label>{% endif %}
  {% endfor %}
  <label class="sentence"><input type="radio" name="answer" autocomplete="off" id="choice-none" value="-1"> {{ none_label }}</label>
  <p class="progress">Keys: <kbd>2</kbd>-<kbd>9</kbd> a sentence, <kbd>0</kbd> or <kbd>n</kbd> none of the above,
   <kbd>Enter</kbd> next.</p>
 {% else %}
  <div class="pair">{% for text in item.texts %}<div><h3>Text {{ "AB"[loop.index0] }}</h3>
   {% for s in text %}<span class="sentence">{{ s }}</span>{% endfor %}</div>{% endfor %}</div>
  <label class="sentence"><input type="radio" name="answer" autocomplete="off" id="choice-a" value="0" required> Text A is the original</label>
  <label class="sentence"><input type="radio" name="answer" autocomplete="off" id="choice-b" value="1"> Text B is the original</label>
  <p class="progress">Keys: <kbd>a</kbd> or <kbd>b</kbd>, <kbd>Enter</kbd> next.</p>
 {% endif %}
"""

_SCRIPT = """<script>
 var shown = performance.now(), form = document.getElementById("answer-form"), sent = false;
 // the item's seconds: every moment its page was shown, over every visit (a reload, a refused answer, a
 // correction later), kept in this browser's storage under the item; the answer carries the total
 var store = null, slot = "incoherent-seconds|" + form.getAttribute("action") + "|" +
   (form.elements.item_id ? form.elements.item_id.value : "");
 try { store = window.localStorage; } catch (e) { store = null; }
 var before = store ? (parseFloat(store.getItem(slot)) || 0) : 0;
 function total() { return before + (performance.now() - shown) / 1000; }
 function keep() { if (store) { try { store.setItem(slot, total().toFixed(3)); } catch (e) {} } }
 // never a value the annotator did not choose: clear anything the browser restored
 form.reset();
 window.addEventListener("pageshow", function (e) { if (e.persisted) { location.reload(); } });
 window.addEventListener("pagehide", function () { if (!sent) keep(); });
 form.addEventListener("submit", function () {
   sent = true;
   keep();
   document.getElementById("seconds").value = total().toFixed(3);
 });
 document.addEventListener("keydown", function (e) {
   var key = e.key.toLowerCase(), box = null;
   if (key === "enter") { e.preventDefault(); if (form.reportValidity()) form.requestSubmit(); return; }
   if (key === "0" || key === "n") box = document.getElementById("choice-none");
   else if (key === "a" || key === "b") box = document.getElementById("choice-" + key);
   else if (/^[2-9]$/.test(key)) box = document.getElementById("choice-" + key);
   if (box) { box.checked = true; e.preventDefault(); }
 });
</script>"""

_ITEM = (
    """<p class="progress" id="progress">{{ name }} · item {{ number }} of {{ total }} ({{ done }} answered)
{% if skipped %}<span id="skipped" class="notice"> · {{ skipped }} unreadable line(s) of your answers file skipped</span>{% endif %}</p>
{% if previous %}<p id="earlier" class="feedback">You answered this item: <strong id="previous">{{ previous }}</strong>.
 Choose again to change your answer, or <a id="resume" href="{{ url_for('work', name=name) }}">{% if next_number %}go on with item {{ next_number }}{% else %}go back to the end{% endif %}</a>.</p>{% endif %}
<p><strong>{{ question }}</strong></p>
<form id="answer-form" method="post" action="{{ url_for('item', name=name, number=number) }}" autocomplete="off">
 <input type="hidden" name="csrf" value="{{ csrf }}">
 <input type="hidden" name="task_id" value="{{ task_id }}">
 <input type="hidden" name="item_id" value="{{ item.item_id }}">
 <input type="hidden" name="correction" value="{{ 1 if previous else 0 }}">
 <input type="hidden" name="seconds" id="seconds" value="">
"""
    + _CHOICES
    + """
 <p>{% if number > 1 %}<a id="back" href="{{ url_for('item', name=name, number=number - 1) }}">&larr; previous item</a> {% endif %}
 <button id="submit" type="submit">{{ "Change answer" if previous else "Next" }}</button></p>
</form>
"""
    + _SCRIPT
)

_PRACTICE = (
    """<p class="progress" id="progress">{{ name }} · practice item {{ number }} of {{ total }} (not counted)</p>
<p><strong>{{ question }}</strong></p>
{% if feedback %}<div class="feedback" id="feedback"><p>Your answer: <strong id="given">{{ given }}</strong>.
 The right answer: <strong id="right">{{ right }}</strong>.{% if given == right %} Well done.{% endif %}</p>
 <p><a id="next" href="{{ url_for('work', name=name) }}">{{ "Start the study" if number == total else "Next practice item" }}</a>
  <span class="progress">(<kbd>Enter</kbd>)</span></p></div>
<script>
 document.addEventListener("keydown", function (e) {
   if (e.key === "Enter") { e.preventDefault(); document.getElementById("next").click(); }
 });
</script>
{% for s in (item.sentences if kind == 'intruder' else []) %}<span class="sentence{{ ' opening' if loop.first }}">{{ loop.index }}. {{ s }}</span>{% endfor %}
{% if kind != 'intruder' %}<div class="pair">{% for text in item.texts %}<div><h3>Text {{ "AB"[loop.index0] }}</h3>
 {% for s in text %}<span class="sentence">{{ s }}</span>{% endfor %}</div>{% endfor %}</div>{% endif %}
{% else %}<form id="answer-form" method="post" action="{{ url_for('practice', name=name, number=number) }}" autocomplete="off">
 <input type="hidden" name="csrf" value="{{ csrf }}">
 <input type="hidden" name="item_id" value="{{ item.item_id }}">
 <input type="hidden" name="seconds" id="seconds" value="">
"""
    + _CHOICES
    + """ <p><button id="submit" type="submit">Check</button></p>
</form>
"""
    + _SCRIPT
    + "{% endif %}"
)


def load_tasks(tasks_dir: str) -> dict:
    from schemas.annotation import TASKS_FORMAT

    path = os.path.join(tasks_dir, "tasks.json")
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file (TASKS_DIR must be an `annotate export` folder)") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not JSON ({exc})") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None
    if not isinstance(doc, dict) or doc.get("format") != TASKS_FORMAT:
        raise InputError(f"{path}: not an `annotate export` tasks file")
    return doc


def answers_folder(tasks_dir: str, answers_dir: str | None) -> str:
    """The answers folder, checked and created: never a link, a file, or a folder holding linked answer files."""
    flag = "--answers" if answers_dir else "TASKS_DIR/answers"
    folder = answers_dir or os.path.join(tasks_dir, "answers")
    if os.path.islink(folder):
        raise InputError(f"{flag}: {folder} is a symbolic link; answers are never written through links")
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise InputError(f"{flag}: {folder} is a file, not a folder")
    for sub in (folder, os.path.join(folder, "practice")):
        if os.path.islink(sub):
            raise InputError(f"{flag}: {sub} is a symbolic link; answers are never written through links")
        try:
            os.makedirs(sub, exist_ok=True)
        except FileExistsError:
            raise InputError(f"{flag}: {sub} is a file, not a folder") from None
        except OSError as exc:
            raise InputError(f"{flag}: cannot create {sub} ({exc.strerror})") from None
        for entry in os.scandir(sub):
            if entry.is_symlink():
                raise InputError(
                    f"{flag}: {entry.path} is a symbolic link; answers are never written through links "
                    "(move the file there instead)"
                )
    if not os.access(folder, os.W_OK):
        raise InputError(f"{flag}: {folder} is not writable")
    return folder


class AnswerFileError(Exception):
    """An answers file that cannot be used (a link, not a regular file, too large)."""


def _valid(record) -> bool:
    return (
        isinstance(record, dict)
        and isinstance(record.get("task_id"), str)
        and isinstance(record.get("item_id"), str)
        and type(record.get("answer")) is int
    )


class AnswerStore:
    """Append-only answers per annotator; an answer is on disk (written and fsynced) before it counts."""

    def __init__(self, answers_dir: str, export_id: str):
        self.dir, self.export_id = answers_dir, export_id
        self._lock = threading.Lock()

    def path(self, name: str) -> str:
        return os.path.join(self.dir, f"{name}.jsonl")

    @staticmethod
    def _open(path: str, flags: int) -> int:
        try:
            fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise AnswerFileError(
                    f"{path} is a symbolic link; answers are never written through links"
                ) from None
            raise
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
            os.close(fd)
            raise AnswerFileError(f"{path} is not a regular file of its own (a device, FIFO or hard link)")
        if info.st_size > MAX_FILE:
            os.close(fd)
            raise AnswerFileError(f"{path} is larger than {MAX_FILE >> 20} MiB")
        return fd

    def records(self, path: str) -> tuple[list[dict], Counter]:
        """The readable answers of this export in file order, and the lines skipped by reason."""
        skipped: Counter = Counter()
        try:
            fd = self._open(path, os.O_RDONLY)
        except FileNotFoundError:
            return [], skipped
        with os.fdopen(fd, "rb") as f:
            data = f.read(MAX_FILE + 1)
        lines = data.split(b"\n")
        if lines[-1]:
            skipped["torn_last_line"] += 1  # a crash or a full disk mid-write: fenced off by the next append
        out = []
        for raw in lines[:-1]:
            if not raw.strip():
                continue
            if len(raw) > MAX_LINE:
                skipped["too_long"] += 1
                continue
            try:
                record = json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError:
                skipped["not_utf8"] += 1
                continue
            except (ValueError, RecursionError):  # not JSON, an int beyond Python's digit limit, deep nesting
                skipped["bad_json"] += 1
                continue
            if not _valid(record):
                skipped["not_an_answer"] += 1
            elif record.get("export_id") != self.export_id:
                skipped["other_export"] += 1
            else:
                out.append(record)
        return out, skipped

    def append(self, path: str, record: dict) -> None:
        """Append one JSON line, after a newline that fences off a torn last line; written and fsynced.

        A failed write (a full disk) is rolled back to the earlier size and raised: earlier answers stay readable.
        """
        data = (json.dumps(record, ensure_ascii=False, allow_nan=False, sort_keys=True) + "\n").encode(
            "utf-8"
        )
        with self._lock:
            created = not os.path.lexists(path)
            fd = self._open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
            try:
                size = os.fstat(fd).st_size
                if size and os.pread(fd, 1, size - 1) != b"\n":
                    data = b"\n" + data
                try:
                    view = memoryview(data)
                    while view:
                        view = view[os.write(fd, view) :]
                    os.fsync(fd)
                except OSError:
                    try:
                        os.ftruncate(fd, size)
                        os.fsync(fd)
                    except OSError:
                        pass
                    raise
            finally:
                os.close(fd)
            if created:
                dir_fd = os.open(os.path.dirname(path) or ".", os.O_RDONLY | os.O_DIRECTORY)
                try:
                    os.fsync(dir_fd)
                finally:
                    os.close(dir_fd)


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

    from annotation import instructions as guide
    from annotation.formats import INTRUDER_QUESTION, NONE_LABEL, PAIR_QUESTION
    from annotation.labserver import CACHED_ANNOTATORS, BoundedCache
    from annotation.tasks import annotator_sequence

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
        return render_template_string(_PAGE, title=title, body=render_template_string(body, **values)), status

    def message(status: int, heading: str, text: str, link: str | None = None, link_text: str = "Continue"):
        return page(heading, _MESSAGE, status, heading=heading, message=text, link=link, link_text=link_text)

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
        return page("Annotation study", _LOGIN, error=request.args.get("error"), csrf=csrf_token(),
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
        return page("Done", _DONE, total=len(sequence), name=name)

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
            _ITEM,
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
            _PRACTICE,
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
