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
``Referer``) and with the session's token; request bodies are capped (:mod:`annotation.lab_security`);
answers are never written through a link (:mod:`annotation.lab_store`). Here: the study's state
(:class:`LabStudy`), the pages (:func:`register_pages`) and the answers (:func:`register_answers`).
"""

from __future__ import annotations

import datetime
import logging
import os
import threading

from incoherent.annotation import lab_security
from incoherent.annotation.formats import finite_seconds
from incoherent.annotation.lab_pages import DONE, ITEM, LOGIN, MESSAGE, PAGE, PRACTICE
from incoherent.annotation.lab_security import MAX_BODY, NAME, csrf_token, logged_in
from incoherent.annotation.lab_store import AnswerStore, answers_folder, load_tasks

__all__ = ["MAX_BODY", "NAME", "create_app", "parse_seconds"]

MAX_SECONDS = 24 * 3600

log = logging.getLogger("incoherent.annotate.serve")


def parse_seconds(value: str | None) -> float | None:
    """Seconds on screen as posted: a finite number >= 0 (capped at a day), else None (unknown).

    >>> parse_seconds("2.5"), parse_seconds("nan"), parse_seconds("-1"), parse_seconds("inf"), parse_seconds("1e9")
    (2.5, None, None, None, 86400.0)
    """
    seconds = finite_seconds(value)
    return None if seconds is None else min(seconds, float(MAX_SECONDS))


def create_app(tasks_dir: str, answers_dir: str | None = None, *, host: str = "127.0.0.1"):
    """The Flask application for the export in ``tasks_dir`` (answers in ``tasks_dir/answers`` by default).

    ``host``: the address the server listens on; on a loopback address only requests that name this machine
    (``Host``) are answered, so a DNS-rebound name cannot reach the app.
    """
    from flask import Flask

    study = LabStudy(tasks_dir, answers_dir)
    app = Flask(__name__)
    lab_security.configure(app)
    lab_security.install(app, host, message)
    register_pages(app, study)
    register_answers(app, study)
    app.extensions["incoherent"] = {
        "sequences": study.sequences,
        "logged": study.logged,
    }  # for tests, benchmarks
    return app


def page(title: str, body: str, status: int = 200, **values):
    from flask import render_template_string

    return render_template_string(PAGE, title=title, body=render_template_string(body, **values)), status


def message(status: int, heading: str, text: str, link: str | None = None, link_text: str = "Continue"):
    return page(heading, MESSAGE, status, heading=heading, message=text, link=link, link_text=link_text)


class LabStudy:
    """An export being answered: its tasks, the answer files (:class:`annotation.lab_store.AnswerStore`), each
    annotator's item order and progress, and the lock that makes an answer's check and append one step."""

    def __init__(self, tasks_dir: str, answers_dir: str | None):
        from incoherent.annotation import instructions as guide
        from incoherent.annotation.formats import INTRUDER_QUESTION, PAIR_QUESTION
        from incoherent.annotation.labserver import CACHED_ANNOTATORS, BoundedCache

        self.doc = doc = load_tasks(tasks_dir)
        self.kind = doc["kind"]
        folder = answers_folder(tasks_dir, answers_dir)
        self.store = AnswerStore(folder, doc["export_id"])
        self.practice_store = AnswerStore(os.path.join(folder, "practice"), doc["export_id"])
        self.practice_items = doc.get("practice") or []
        self.instructions_html = guide.to_html(doc["instructions"]) if doc.get("instructions") else ""
        self.question = INTRUDER_QUESTION if self.kind == "intruder" else PAIR_QUESTION
        self.sequences = BoundedCache(CACHED_ANNOTATORS)  # bounded: any number of distinct names may log in
        self.logged = BoundedCache(CACHED_ANNOTATORS)
        self.answering = threading.Lock()

    def sequence_of(self, name: str) -> list:
        from incoherent.annotation.tasks import annotator_sequence

        sequence = self.sequences.get(name)
        if sequence is None:
            sequence = self.sequences[name] = annotator_sequence(self.doc, name)
        return sequence

    def label(self, value: int) -> str:
        from incoherent.annotation.formats import NONE_LABEL

        if self.kind == "pair":
            return f"Text {'AB'[value]}" if value in (0, 1) else str(value)
        return NONE_LABEL if value == -1 else f"sentence {value + 1}"

    def allowed(self, item: dict) -> tuple:
        return (0, 1) if self.kind == "pair" else (-1, *range(1, len(item["sentences"])))

    def progress(self, name: str) -> tuple[dict, list, int]:
        """``(latest answer by (task, item), the sequence, lines skipped)``."""
        store = self.store
        records, skipped = store.records(store.path(name))
        latest = {(r["task_id"], r["item_id"]): r for r in records}
        if skipped and self.logged.get(name) != skipped:
            self.logged[name] = skipped
            log.warning("%s: %d unreadable lines skipped (%s)", store.path(name), sum(skipped.values()),
                        ", ".join(f"{k}: {v}" for k, v in sorted(skipped.items())))  # fmt: skip
        return latest, self.sequence_of(name), sum(skipped.values())

    def practice_done(self, name: str) -> dict:
        records, _ = self.practice_store.records(self.practice_store.path(name))
        return {r["item_id"]: r for r in records}


def _expected(latest: dict, sequence: list) -> int | None:
    """The number of the first item not answered yet (None: all are)."""
    return next((n for n, (t, i) in enumerate(sequence, start=1) if (t, i["item_id"]) not in latest), None)


def register_pages(app, study: LabStudy) -> None:
    """The pages (GET): the start page and login, where an annotator is, an item, a practice item."""
    from flask import redirect, request, session, url_for

    from incoherent.annotation.formats import NONE_LABEL

    @app.get("/")
    def index():
        return page("Annotation study", LOGIN, error=request.args.get("error"), csrf=csrf_token(),
                    instructions=study.instructions_html)  # fmt: skip

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
        name = logged_in(name)
        if study.practice_items:
            done = study.practice_done(name)
            for number, item in enumerate(study.practice_items, start=1):
                if item["item_id"] not in done:
                    return redirect(url_for("practice", name=name, number=number), code=303)
        latest, sequence, _ = study.progress(name)
        for number, (task_id, item) in enumerate(sequence, start=1):
            if (task_id, item["item_id"]) not in latest:
                return redirect(url_for("item", name=name, number=number), code=303)
        return page("Done", DONE, total=len(sequence), name=name)

    @app.get("/a/<name>/item/<int:number>")
    def item(name: str, number: int):
        name = logged_in(name)
        latest, sequence, skipped = study.progress(name)
        expected = _expected(latest, sequence)
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
            kind=study.kind,
            none_label=NONE_LABEL,
            question=study.question,
            csrf=csrf_token(),
            previous=None if earlier is None else study.label(earlier["answer"]),
            next_number=expected,
        )

    @app.get("/a/<name>/practice/<int:number>")
    def practice(name: str, number: int):
        name = logged_in(name)
        practice_items = study.practice_items
        if not 1 <= number <= len(practice_items):
            return redirect(url_for("work", name=name), code=303)
        shown = practice_items[number - 1]
        done = study.practice_done(name)
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
            kind=study.kind,
            none_label=NONE_LABEL,
            question=study.question,
            csrf=csrf_token(),
            feedback=earlier is not None,
            given=None if earlier is None else study.label(earlier["answer"]),
            right=study.label(shown["answer"]),
        )


def register_answers(app, study: LabStudy) -> None:
    """The answers (POST): an item's (the one expected next, or a correction), a practice item's."""

    @app.post("/a/<name>/item/<int:number>")
    def answer(name: str, number: int):
        name = logged_in(name)
        # the check and the append are one step: two tabs cannot both answer the expected item
        with study.answering:
            return save_answer(study, name, number)

    @app.post("/a/<name>/practice/<int:number>")
    def practice_answer(name: str, number: int):
        name = logged_in(name)
        with study.answering:
            return save_practice(study, name, number)


def save_answer(study: LabStudy, name: str, number: int):
    from flask import abort, redirect, request, url_for

    latest, sequence, _ = study.progress(name)
    if not 1 <= number <= len(sequence):
        abort(404)
    task_id, shown = sequence[number - 1]
    if (request.form.get("task_id"), request.form.get("item_id")) != (task_id, shown["item_id"]):
        return message(409, "Out of date", "This page does not show the item the study expects; nothing "
                       "was saved.", url_for("work", name=name))  # fmt: skip
    correction = request.form.get("correction") == "1"
    answered = (task_id, shown["item_id"]) in latest
    expected = _expected(latest, sequence)
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
    if value not in study.allowed(shown):
        return message(400, "Not an answer", "That answer is not one of the choices; nothing was saved.",
                       url_for("item", name=name, number=number))  # fmt: skip
    record = {
        "export_id": study.doc["export_id"],
        "task_id": task_id,
        "item_id": shown["item_id"],
        "annotator": name,
        "answer": value,
        "seconds": parse_seconds(request.form.get("seconds")),
        "answered_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }
    if correction:
        record["correction"] = True
    store = study.store
    try:
        store.append(store.path(name), record)
    except OSError as exc:
        log.error("%s: answer not saved (%s)", store.path(name), exc.strerror or exc)
        return message(507, "Answer not saved", f"Your answer could not be saved ({exc.strerror or exc}). "
                       "Tell the study's organiser; your earlier answers are safe. Try again once they "
                       "say so.", url_for("item", name=name, number=number), "Try again")  # fmt: skip
    return redirect(url_for("work", name=name), code=303)


def save_practice(study: LabStudy, name: str, number: int):
    from flask import abort, redirect, request, url_for

    practice_items = study.practice_items
    if not 1 <= number <= len(practice_items):
        abort(404)
    shown = practice_items[number - 1]
    if request.form.get("item_id") != shown["item_id"]:
        return message(409, "Out of date", "This page is out of date; nothing was saved.",
                       url_for("work", name=name))  # fmt: skip
    if shown["item_id"] not in study.practice_done(name):
        try:
            value = int(request.form.get("answer", ""))
        except ValueError:
            value = None
        if value not in study.allowed(shown):
            return message(400, "No answer", "Choose one of the answers first.",
                           url_for("practice", name=name, number=number))  # fmt: skip
        record = {
            "export_id": study.doc["export_id"],
            "task_id": "practice",
            "item_id": shown["item_id"],
            "annotator": name,
            "answer": value,
            "seconds": parse_seconds(request.form.get("seconds")),
            "practice": True,
            "right": value == shown["answer"],
        }
        store = study.practice_store
        try:
            store.append(store.path(name), record)
        except OSError as exc:
            return message(507, "Answer not saved", f"Your answer could not be saved ({exc.strerror or exc}).",
                           url_for("practice", name=name, number=number), "Try again")  # fmt: skip
    return redirect(url_for("practice", name=name, number=number), code=303)
