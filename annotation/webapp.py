"""The in-lab annotation web application of ``incoherent annotate serve`` (Flask, served by waitress).

An annotator logs in with a name and works through every item of the export in task order. Sentences are shown
one per line; the opening sentence cannot be chosen; "None of the above" is always offered. Keys: the digit of
a sentence's number (2-9) chooses it, ``0`` or ``n`` chooses None of the above (``a``/``b`` for pairs), Enter
submits. Each answer is appended to ``ANSWERS_DIR/<name>.jsonl`` and flushed and fsynced before the next item
is shown, with the seconds the item was on screen; progress is read back from that file, so closing the browser
(or killing the server) loses nothing answered and the annotator resumes where they stopped.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import threading

from schemas.records import InputError

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")
MAX_SECONDS = 24 * 3600

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{ title }}</title>
<style>
 body { font-family: sans-serif; max-width: 52em; margin: 2em auto; line-height: 1.45; }
 .sentence { display: block; padding: 4px 6px; border-radius: 4px; }
 label.sentence { cursor: pointer; } label.sentence:hover { background: #eef; }
 .opening { color: #555; padding-left: 30px; }
 .pair { display: flex; gap: 1.5em; } .pair > div { flex: 1; border: 1px solid #ccc; padding: .5em 1em; }
 .progress { color: #555; } kbd { border: 1px solid #aaa; border-radius: 3px; padding: 0 4px; }
</style></head><body>
{{ body|safe }}
</body></html>
"""

_LOGIN = """<h1>Annotation study</h1>
<form method="post" action="{{ url_for('login') }}">
 <p><label>Your name (letters, digits, . _ -): <input id="annotator" name="annotator" required
    pattern="[A-Za-z0-9][A-Za-z0-9_.\\-]{0,39}" autofocus></label></p>
 {% if error %}<p id="error" style="color:#a00">{{ error }}</p>{% endif %}
 <p><button id="start" type="submit">Start</button></p>
</form>"""

_DONE = """<h1 id="done">All {{ total }} items answered</h1><p>Thank you, {{ name }}. You can close this window.</p>"""

_ITEM = """<p class="progress" id="progress">{{ name }} · item {{ number }} of {{ total }} ({{ done }} answered)</p>
<p><strong>{{ question }}</strong></p>
<form id="answer-form" method="post" action="{{ url_for('answer', name=name) }}">
 <input type="hidden" name="task_id" value="{{ task_id }}">
 <input type="hidden" name="item_id" value="{{ item.item_id }}">
 <input type="hidden" name="seconds" id="seconds" value="">
 {% if kind == 'intruder' %}
  {% for s in item.sentences %}
   {% if loop.first %}<span class="sentence opening" id="sentence-1">1. {{ s }}</span>
   {% else %}<label class="sentence" id="sentence-{{ loop.index }}"><input type="radio" name="answer"
      id="choice-{{ loop.index }}" value="{{ loop.index0 }}" required> {{ loop.index }}. {{ s }}</label>{% endif %}
  {% endfor %}
  <label class="sentence"><input type="radio" name="answer" id="choice-none" value="-1"> {{ none_label }}</label>
  <p class="progress">Keys: <kbd>2</kbd>-<kbd>9</kbd> a sentence, <kbd>0</kbd> or <kbd>n</kbd> none of the above,
   <kbd>Enter</kbd> next.</p>
 {% else %}
  <div class="pair">{% for text in item.texts %}<div><h3>Text {{ "AB"[loop.index0] }}</h3>
   {% for s in text %}<span class="sentence">{{ s }}</span>{% endfor %}</div>{% endfor %}</div>
  <label class="sentence"><input type="radio" name="answer" id="choice-a" value="0" required> Text A is the original</label>
  <label class="sentence"><input type="radio" name="answer" id="choice-b" value="1"> Text B is the original</label>
  <p class="progress">Keys: <kbd>a</kbd> or <kbd>b</kbd>, <kbd>Enter</kbd> next.</p>
 {% endif %}
 <p><button id="submit" type="submit">Next</button></p>
</form>
<script>
 var shown = performance.now(), form = document.getElementById("answer-form");
 form.addEventListener("submit", function () {
   document.getElementById("seconds").value = ((performance.now() - shown) / 1000).toFixed(3);
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


def load_tasks(tasks_dir: str) -> dict:
    from schemas.annotation import TASKS_FORMAT

    path = os.path.join(tasks_dir, "tasks.json")
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file (TASKS_DIR must be an `annotate export` folder)") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not JSON ({exc.msg})") from None
    if doc.get("format") != TASKS_FORMAT:
        raise InputError(f"{path}: not an `annotate export` tasks file")
    return doc


class AnswerStore:
    """Append-only answers per annotator; an answer is on disk (flushed and fsynced) before it counts."""

    def __init__(self, answers_dir: str, export_id: str):
        self.dir, self.export_id = answers_dir, export_id
        self._lock = threading.Lock()
        os.makedirs(answers_dir, exist_ok=True)

    def path(self, name: str) -> str:
        return os.path.join(self.dir, f"{name}.jsonl")

    def answered(self, name: str) -> set[tuple[str, str]]:
        done = set()
        try:
            with open(self.path(name), encoding="utf-8") as f:
                for line in f:
                    try:
                        record = json.loads(line)
                        if record["export_id"] == self.export_id:
                            done.add((record["task_id"], record["item_id"]))
                    except (json.JSONDecodeError, KeyError, TypeError):
                        continue  # a torn last line after a crash: that item is asked again
        except FileNotFoundError:
            pass
        return done

    def append(self, name: str, task_id: str, item_id: str, answer: int, seconds: float | None) -> bool:
        """Write one answer; False (nothing written) when this annotator already answered the item."""
        with self._lock:
            if (task_id, item_id) in self.answered(name):
                return False
            record = {
                "export_id": self.export_id,
                "task_id": task_id,
                "item_id": item_id,
                "annotator": name,
                "answer": answer,
                "seconds": seconds,
                "answered_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            }
            with open(self.path(name), "a", encoding="utf-8") as f:
                f.write(json.dumps(record, ensure_ascii=False) + "\n")
                f.flush()
                os.fsync(f.fileno())
            return True


def create_app(tasks_dir: str, answers_dir: str | None = None):
    """The Flask application for the export in ``tasks_dir`` (answers in ``tasks_dir/answers`` by default)."""
    from flask import Flask, abort, redirect, render_template_string, request, url_for

    from annotation.formats import INTRUDER_QUESTION, NONE_LABEL, PAIR_QUESTION

    doc = load_tasks(tasks_dir)
    kind = doc["kind"]
    sequence = [(t["task_id"], item) for t in doc["tasks"] for item in t["items"]]
    lookup = {(t, item["item_id"]): item for t, item in sequence}
    store = AnswerStore(answers_dir or os.path.join(tasks_dir, "answers"), doc["export_id"])
    app = Flask(__name__)

    def page(title: str, body: str, **values) -> str:
        return render_template_string(_PAGE, title=title, body=render_template_string(body, **values))

    def checked(name: str) -> str:
        if not NAME.match(name):
            abort(404)
        return name

    @app.get("/")
    def index():
        return page("Annotation study", _LOGIN, error=request.args.get("error"))

    @app.post("/login")
    def login():
        name = request.form.get("annotator", "").strip()
        if not NAME.match(name):
            return redirect(url_for("index", error="Use 1-40 letters, digits, '.', '_' or '-'."))
        return redirect(url_for("work", name=name))

    @app.get("/a/<name>")
    def work(name: str):
        name = checked(name)
        done = store.answered(name)
        for number, (task_id, item) in enumerate(sequence, start=1):
            if (task_id, item["item_id"]) not in done:
                return page(
                    f"Item {number} of {len(sequence)}",
                    _ITEM,
                    name=name,
                    number=number,
                    total=len(sequence),
                    done=len(done),
                    task_id=task_id,
                    item=item,
                    kind=kind,
                    none_label=NONE_LABEL,
                    question=INTRUDER_QUESTION if kind == "intruder" else PAIR_QUESTION,
                )
        return page("Done", _DONE, total=len(sequence), name=name)

    @app.post("/a/<name>/answer")
    def answer(name: str):
        name = checked(name)
        task_id, item_id = request.form.get("task_id", ""), request.form.get("item_id", "")
        item = lookup.get((task_id, item_id))
        if item is None:
            abort(400, "unknown item")
        try:
            value = int(request.form.get("answer", ""))
        except ValueError:
            abort(400, "no answer")
        allowed = (0, 1) if kind == "pair" else (-1, *range(1, len(item["sentences"])))
        if value not in allowed:
            abort(400, "answer out of range")
        try:
            seconds = round(min(max(float(request.form.get("seconds", "")), 0.0), MAX_SECONDS), 3)
        except ValueError:
            seconds = None
        store.append(name, task_id, item_id, value, seconds)
        return redirect(url_for("work", name=name), code=303)

    return app


def make_server(tasks_dir: str, answers_dir: str | None, host: str, port: int):
    """A waitress server (not yet running; ``.run()`` serves, ``.close()`` stops); port 0 picks a free one."""
    from waitress import create_server

    return create_server(create_app(tasks_dir, answers_dir), host=host, port=port, threads=4)
