"""Files for annotation platforms and the answers they give back (pure functions over text, no I/O).

Exports: Amazon Mechanical Turk's batch input CSV and an HTML task template (``crowd-form``); Label Studio's
task JSON and labeling configuration. Imports: MTurk's batch results CSV, Label Studio's JSON export, the
in-lab JSONL of ``annotate serve`` and INSteD's released annotation format. Nothing exported carries gold.

Every parser returns ``(answers, rejected)``: answers as :data:`schemas.annotation.ANSWER_FIELDS` records (plus
``origin``), rejected answers as :data:`schemas.annotation.REJECTED_FIELDS` records. A file made for another
export raises :class:`schemas.records.InputError`.
"""

from __future__ import annotations

import csv
import hashlib
import html
import io
import json
import math
import re
from collections.abc import Iterable, Sequence

from schemas.annotation import ASSIGNMENT_FIELDS, FORMAT_VERSION, KEY_FORMAT
from schemas.records import InputError
from sources.jsonline import encodes, load_line

INTRUDER_QUESTION = (
    "Which sentence creates an incoherence or break in the content flow? There is at most one such sentence; "
    "the first sentence is never the answer. If every sentence fits, choose None of the above."
)
PAIR_QUESTION = (
    "Two texts hold the same sentences; in one of them blocks of sentences were put in a different order. "
    "Which text is the original?"
)
NONE_LABEL = "None of the above"
MAX_ITEMS = 20


def safe_json(value) -> str:
    """JSON that can sit inside an HTML ``<script>`` element and a CSV cell (``<``, ``>``, ``&`` escaped)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


# ------------------------------------------------------------------------------------------------- MTurk


def mturk_input_csv(tasks_doc: dict) -> str:
    """One row (HIT) per task: ``export_id``, ``task_id``, ``items`` (JSON: item ids and text, no gold)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["export_id", "task_id", "items"])
    for task in tasks_doc["tasks"]:
        writer.writerow([tasks_doc["export_id"], task["task_id"], safe_json(task["items"])])
    return buffer.getvalue()


# What the task and its practice items both draw with: ``incoherent.render`` puts a document of the task kind in a
# box (the opening sentence as text and a choice per other sentence and "none" for intruder tasks; the two texts
# and two choices for pairs), ``choice(value, text)`` making each choice. Text is only ever set as text.
_MTURK_HELPERS = """<script>
var incoherent = {
  el: function (tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  },
  render: function (box, kind, item, none, choice) {
    var el = incoherent.el;
    if (kind === "intruder") {
      item.sentences.forEach(function (s, j) {
        box.appendChild(j === 0 ? el("span", {"class": "opening"}, "1. " + s) : choice(j, (j + 1) + ". " + s));
      });
      box.appendChild(choice(-1, none));
      return;
    }
    var pair = el("div", {"class": "pair"});
    item.texts.forEach(function (text, j) {
      var side = el("div");
      side.appendChild(el("p", {}, "Text " + "AB"[j]));
      side.appendChild(el("p", {}, text.join(" ")));
      pair.appendChild(side);
    });
    box.appendChild(pair);
    box.appendChild(choice(0, "Text A is the original"));
    box.appendChild(choice(1, "Text B is the original"));
  }
};
</script>
"""

_MTURK_TEMPLATE = """<!-- incoherent annotation task ({kind}). Upload with the batch input CSV; MTurk fills in ${{...}}. -->
<script src="https://assets.crowd.aws/crowd-html-elements.js"></script>
<style>
  .doc {{ border: 1px solid #ccc; border-radius: 4px; padding: 8px 12px; margin: 12px 0; }}
  .doc label {{ display: block; padding: 3px 0; cursor: pointer; }}
  .doc .opening {{ display: block; padding: 3px 0 3px 24px; color: #444; }}
  .pair {{ display: flex; gap: 16px; }} .pair > div {{ flex: 1; }}
</style>
{helpers}<crowd-form answer-format="flatten-objects">
  <input type="hidden" name="export_id" value="${{export_id}}">
  <input type="hidden" name="task_id" value="${{task_id}}">
  <p><strong>{question}</strong></p>
  <div id="incoherent-items"></div>
  <script type="application/json" id="incoherent-data">${{items}}</script>
  <script>
  (function () {{
    var kind = "{kind}", none = "{none}", el = incoherent.el;
    var items = JSON.parse(document.getElementById("incoherent-data").textContent);
    var holder = document.getElementById("incoherent-items");
    // seconds_<slot>: the time spent on an item while the page is shown and focused, from the previous answer
    // (a practice answer included) or from when the documents came into view, to this answer; a change of mind
    // adds to the item's time. Time on the instructions and practice items is no item's.
    var clock = 0, running = Date.now(), last = 0, spent = {{}};
    function now() {{ return clock + (running === null ? 0 : Date.now() - running); }}
    function pause() {{ if (running !== null) {{ clock += Date.now() - running; running = null; }} }}
    function resume() {{ if (running === null && document.visibilityState !== "hidden") running = Date.now(); }}
    document.addEventListener("visibilitychange", function () {{
      if (document.visibilityState === "hidden") pause(); else resume();
    }});
    window.addEventListener("blur", pause);
    window.addEventListener("focus", resume);
    ["mousedown", "keydown", "touchstart", "scroll"].forEach(function (e) {{ window.addEventListener(e, resume, true); }});
    incoherent.mark = function () {{ last = now(); }};  // a practice answer: the next item's time starts here
    items.forEach(function (item, i) {{
      var slot = i + 1, box = el("div", {{"class": "doc"}});
      box.appendChild(el("p", {{}}, "Document " + slot + " of " + items.length));
      box.appendChild(el("input", {{type: "hidden", name: "seconds_" + slot, value: ""}}));
      incoherent.render(box, kind, item, none, function (value, text) {{
        var label = el("label"), input = el("input", {{type: "radio", name: "answer_" + slot, value: value, required: ""}});
        input.addEventListener("change", function () {{
          var t = now();
          spent[slot] = (spent[slot] || 0) + (t - last);
          last = t;
          document.getElementsByName("seconds_" + slot)[0].value = (spent[slot] / 1000).toFixed(1);
        }});
        label.appendChild(input);
        label.appendChild(document.createTextNode(" " + text));
        return label;
      }});
      holder.appendChild(box);
    }});
    if (window.IntersectionObserver && holder.firstChild) {{
      var seen = new IntersectionObserver(function (entries) {{
        if (entries.some(function (e) {{ return e.isIntersecting; }})) {{
          seen.disconnect();
          if (!Object.keys(spent).length) last = Math.max(last, now());
        }}
      }});
      seen.observe(holder.firstChild);
    }}
  }})();
  </script>
</crowd-form>
"""


_MTURK_PRACTICE = """<section id="incoherent-practice">
  <h3>Practice (not counted)</h3>
  <p>Try these examples first: after each answer you see the right one. They are not part of the task and
  nothing you choose here is submitted.</p>
  <div id="incoherent-practice-items"></div>
  <script type="application/json" id="incoherent-practice-data">__PRACTICE__</script>
  <script>
  (function () {
    var kind = "__KIND__", none = "__NONE__", el = incoherent.el;
    var items = JSON.parse(document.getElementById("incoherent-practice-data").textContent);
    var holder = document.getElementById("incoherent-practice-items");
    function label(value) {
      if (kind === "pair") return "Text " + "AB"[value];
      return value === -1 ? none : "sentence " + (value + 1);
    }
    items.forEach(function (item, i) {
      var slot = i + 1, box = el("div", {"class": "doc practice", id: "practice-" + slot});
      var feedback = el("p", {"class": "feedback", id: "practice-feedback-" + slot});
      box.appendChild(el("p", {}, "Practice " + slot + " of " + items.length));
      incoherent.render(box, kind, item, none, function (value, text) {
        var row = el("label"), input = el("input", {type: "radio", name: "practice_" + slot, value: value});
        input.addEventListener("change", function () {
          if (incoherent.mark) incoherent.mark();
          feedback.textContent = "Your answer: " + label(value) + ". The right answer: " + label(item.answer) +
            "." + (value === item.answer ? " Well done." : "");
        });
        row.appendChild(input);
        row.appendChild(document.createTextNode(" " + text));
        return row;
      });
      box.appendChild(feedback);
      holder.appendChild(box);
    });
  })();
  </script>
</section>
"""


def mturk_template(kind: str, practice: Sequence[dict] = (), preamble: str = "") -> str:
    """The HTML task template: items rendered from the ``items`` column; answers ``answer_<slot>``.

    ``preamble`` (HTML: the instructions) and then ``practice`` items (with their answers) are shown above the
    form, the same in every HIT: a worker's choice there shows the right answer at once and, being outside
    ``<crowd-form>``, is never submitted. Their text is JSON in the template itself, with ``$`` escaped so that
    MTurk finds no ``${...}`` in it to fill in.
    """
    question = INTRUDER_QUESTION if kind == "intruder" else PAIR_QUESTION
    template = _MTURK_TEMPLATE.format(
        kind=kind, question=html.escape(question), none=NONE_LABEL, helpers=_MTURK_HELPERS
    )
    block = preamble
    if practice:
        shown = [
            {k: v for k, v in item.items() if k in ("sentences", "texts", "answer")} for item in practice
        ]
        block += (
            _MTURK_PRACTICE.replace("__KIND__", kind)
            .replace("__NONE__", NONE_LABEL)
            .replace("__PRACTICE__", safe_json(shown).replace("$", "\\u0024"))
        )
    at = template.index("<crowd-form")
    return template[:at] + block + template[at:]


def fill_template(template: str, row: dict[str, str]) -> str:
    """The page a worker sees: ``${name}`` replaced by the row's values, as MTurk does."""
    for name, value in row.items():
        template = template.replace("${" + name + "}", value)
    return template


# ------------------------------------------------------------------------------------------- Label Studio


def _numbered_html(sentences: list[str]) -> str:
    return "<ol>" + "".join(f"<li>{html.escape(s)}</li>" for s in sentences) + "</ol>"


def labelstudio_tasks(tasks_doc: dict) -> list[dict]:
    """One Label Studio task per item (set the project's overlap to the number of workers)."""
    out = []
    for task in tasks_doc["tasks"]:
        for item in task["items"]:
            data = {
                "export_id": tasks_doc["export_id"],
                "task_id": task["task_id"],
                "item_id": item["item_id"],
            }
            if tasks_doc["kind"] == "intruder":
                sentences = item["sentences"]
                data["html"] = _numbered_html(sentences)
                # hotkeys as in the lab app: the sentence's own number (2-9), 0 for none of the above
                data["options"] = [
                    {"value": f"Sentence {j + 1}", **({"hotkey": str(j + 1)} if j + 1 <= 9 else {})}
                    for j in range(1, len(sentences))
                ]
                data["options"].append({"value": NONE_LABEL, "hotkey": "0"})
            else:
                data["block_size"] = item["block_size"]
                data["text_a"], data["text_b"] = (_numbered_html(t) for t in item["texts"])
            out.append({"data": data})
    return out


def labelstudio_config(kind: str) -> str:
    """The labeling configuration (XML) for :func:`labelstudio_tasks`."""
    if kind == "intruder":
        return (
            "<View>\n"
            f'  <Header value="{html.escape(INTRUDER_QUESTION)}"/>\n'
            '  <HyperText name="document" value="$html"/>\n'
            '  <Choices name="answer" toName="document" choice="single-radio" required="true" value="$options"/>\n'
            "</View>\n"
        )
    return (
        "<View>\n"
        f'  <Header value="{html.escape(PAIR_QUESTION)}"/>\n'
        '  <Header value="Text A" size="5"/>\n'
        '  <HyperText name="text_a" value="$text_a"/>\n'
        '  <Header value="Text B" size="5"/>\n'
        '  <HyperText name="text_b" value="$text_b"/>\n'
        '  <Choices name="answer" toName="text_a" choice="single-radio" required="true">\n'
        '    <Choice value="A" hotkey="a"/>\n'
        '    <Choice value="B" hotkey="b"/>\n'
        "  </Choices>\n"
        "</View>\n"
    )


def _labelstudio_value(choice: str) -> int | None:
    if choice == NONE_LABEL:
        return -1
    if choice in ("A", "B"):
        return "AB".index(choice)
    if choice.startswith("Sentence "):
        return _to_int(choice[len("Sentence ") :], offset=-1)
    return None


# ------------------------------------------------------------------------------------------------ checks


def _to_int(value, offset: int = 0) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value + offset
    try:
        return int(str(value).strip()) + offset
    except ValueError:
        return None


def finite_seconds(value) -> float | None:
    """Seconds as a finite, non-negative number (None for anything else: text, NaN, infinity, a huge int)."""
    if isinstance(value, bool):
        return None
    try:
        seconds = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return round(seconds, 3) if math.isfinite(seconds) and seconds >= 0 else None


def _plain(value) -> bool:
    """A value that can name a task, an item or a worker: text (no lone surrogate), or a (small) int."""
    return (isinstance(value, str) and encodes(value)) or (
        isinstance(value, int) and not isinstance(value, bool)
    )


class Collector:
    """Checks answers against the key: unknown items, answers out of range, duplicates are rejected with a reason."""

    def __init__(self, key: dict):
        self.key = key
        self.items = key["items"]
        self.tasks = {task: set(items) for task, items in key["tasks"].items()}
        self.answers: list[dict] = []
        self.rejected: list[dict] = []
        self._seen: set[tuple[str, str, str]] = set()
        self.answer_columns: set[str] = set()  # MTurk: the Answer.* columns of the results read

    def reject(self, reason: str, origin: str, detail: str, record=None) -> None:
        self.rejected.append({"reason": reason, "origin": origin, "detail": detail, "record": record})

    def valid(self, item_id: str, answer: int | None) -> bool:
        if answer is None:
            return False
        if self.key["kind"] == "pair":
            return answer in (0, 1)
        n = self.items[item_id].get("sentences")
        return answer == -1 or (answer >= 1 and (n is None or answer < n))

    def add(
        self,
        task_id,
        item_id,
        worker,
        raw_answer,
        answer,
        seconds,
        origin: str,
        record=None,
        assignment: dict | None = None,
    ) -> None:
        """``assignment``: MTurk's ``hit_id``, ``assignment_id`` and ``assignment_status`` of the answer."""
        if worker is None or worker == "":
            self.reject("missing_worker", origin, "no worker id", record)
        elif not (_plain(worker) and _plain(task_id) and _plain(item_id)):
            self.reject("bad_record", origin, "task, item or worker is not text", record)
        elif task_id not in self.tasks or item_id not in self.tasks[task_id]:
            self.reject(
                "unknown_item", origin, f"task {task_id!r}, item {item_id!r} not in the export", record
            )
        elif raw_answer in (None, ""):
            self.reject("missing_answer", origin, f"no answer to item {item_id}", record)
        elif not self.valid(item_id, answer):
            self.reject("out_of_range", origin, f"answer {raw_answer!r} to item {item_id}", record)
        elif (task_id, item_id, worker) in self._seen:
            self.reject(
                "duplicate", origin, f"worker {worker} answered item {item_id} of {task_id} again", record
            )
        else:
            self._seen.add((task_id, item_id, worker))
            self.answers.append(
                {
                    "task_id": task_id,
                    "item_id": item_id,
                    "worker": str(worker),
                    "answer": answer,
                    "seconds": seconds,
                    "origin": origin,
                    **{f: (assignment or {}).get(f) for f in ASSIGNMENT_FIELDS},
                }
            )

    def check_export(self, export_id, path: str) -> None:
        if export_id != self.key["export_id"]:
            raise InputError(
                f"{path}: answers for export {export_id!r}, but the key is of export {self.key['export_id']!r}"
            )


# ---------------------------------------------------------------------------------------------- parsers


MAX_CSV_CELL = 32 * 1024 * 1024  # bytes in one cell of a results CSV (``Input.items`` of a big task)
MTURK_ANSWER_SHAPES = ("Answer.answer_<n>", "Answer.answer_<n>.<value>", "Answer.taskAnswers")
_FLAT = re.compile(r"^Answer\.answer_(\d+)\.(.+)$")


def mturk_rows(text: str, path: str) -> tuple[list[str], list[dict]]:
    """Header and rows of a results CSV, cells up to :data:`MAX_CSV_CELL` (csv's default limit is 128 KiB)."""
    previous = csv.field_size_limit(MAX_CSV_CELL)
    reader = csv.DictReader(io.StringIO(text))
    rows: list[dict] = []
    try:
        fields = list(reader.fieldnames or [])
        rows.extend(reader)
    except csv.Error as exc:
        raise InputError(
            f"{path}: row {len(rows) + 1}: not a readable CSV row ({exc}; a cell may hold up to "
            f"{MAX_CSV_CELL // 2**20} MiB)"
        ) from None
    finally:
        csv.field_size_limit(previous)
    twice = sorted({f for f in fields if fields.count(f) > 1})
    if twice:  # csv.DictReader would keep the last of them, silently
        raise InputError(f"{path}: columns named twice in the header: {', '.join(twice)}")
    return fields, rows


def _task_answers(cell: str) -> dict | None:
    """crowd-form's default answer format: the whole form as a JSON list holding one object."""
    try:
        value = json.loads(cell)
    except (ValueError, RecursionError):
        return None
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], dict):
        return value[0]
    return None


def _chosen(value) -> str | None:
    """A radio group's answer: a value, or crowd-form's ``{value: true|false, ...}`` with one value true."""
    if isinstance(value, dict):
        chosen = [k for k, v in value.items() if v is True or str(v).lower() == "true"]
        return "|".join(chosen) or None
    if value is None or isinstance(value, (list, bool)):
        return None
    return str(value)


def parse_mturk(text: str, path: str, collector: Collector) -> None:
    """MTurk's batch results CSV: ``HITId``, ``AssignmentId``, ``WorkerId``, ``AssignmentStatus``, ``Input.*`` of
    the batch input and the answers in any of the three shapes MTurk gives (:data:`MTURK_ANSWER_SHAPES`):
    ``Answer.answer_<n>`` = the value; ``Answer.answer_<n>.<value>`` = true/false, one column per option (what
    crowd-form's ``flatten-objects`` gives for native radio buttons); ``Answer.taskAnswers`` = crowd-form's
    default, the whole form as JSON (``[{"answer_1": {"2": true, "-1": false}, "seconds_1": "3.1"}]``).
    """
    fieldnames, rows = mturk_rows(text, path)
    needed = {"WorkerId", "Input.export_id", "Input.task_id", "Input.items"}
    if needed - set(fieldnames):
        raise InputError(f"{path}: not an MTurk batch results file (needs columns {sorted(needed)})")
    width = len(fieldnames)
    flat: dict[int, list[tuple[str, str]]] = {}
    for name in fieldnames:
        match = _FLAT.match(name)
        if match:
            flat.setdefault(int(match.group(1)), []).append((name, match.group(2)))
    collector.answer_columns |= {f for f in fieldnames if f.startswith("Answer.")}
    for number, row in enumerate(rows, start=2):
        origin = f"{path}:{number}"
        assignment = {
            "hit_id": row.get("HITId") or None,
            "assignment_id": row.get("AssignmentId") or None,
            "assignment_status": row.get("AssignmentStatus") or None,
        }
        if any(row.get(f) is None for f in needed):  # a torn row: fewer cells than the header
            cells = sum(v is not None for k, v in row.items() if k is not None)
            collector.reject(
                "bad_record",
                origin,
                f"{cells} cells in a row of a header of {width}",
                row.get("AssignmentId"),
            )
            continue
        if row.get("AssignmentStatus") == "Rejected":
            collector.reject(
                "rejected_on_mturk", origin, "assignment rejected on MTurk", row.get("AssignmentId")
            )
            continue
        collector.check_export(row["Input.export_id"], path)
        try:
            items = json.loads(row["Input.items"])
        except (ValueError, RecursionError):
            items = None
        if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
            collector.reject(
                "bad_record", origin, "Input.items is not a JSON list of items", row["Input.task_id"]
            )
            continue
        form = None
        if row.get("Answer.taskAnswers"):
            form = _task_answers(row["Answer.taskAnswers"])
            if form is None:
                collector.reject(
                    "bad_record",
                    origin,
                    "Answer.taskAnswers is not crowd-form's JSON list",
                    row["Input.task_id"],
                )
                continue
        total = finite_seconds(row.get("WorkTimeInSeconds"))
        for slot, item in enumerate(items, start=1):
            if form is not None:
                raw = _chosen(form.get(f"answer_{slot}"))
                seconds = finite_seconds(form.get(f"seconds_{slot}") or None)
            else:
                raw = row.get(f"Answer.answer_{slot}") or None
                if raw is None and slot in flat:
                    raw = (
                        "|".join(v for name, v in flat[slot] if (row.get(name) or "").lower() == "true")
                        or None
                    )
                seconds = finite_seconds(row.get(f"Answer.seconds_{slot}") or None)
            if seconds is None and total is not None:
                seconds = round(total / len(items), 3)
            collector.add(
                row["Input.task_id"],
                item.get("item_id"),
                row["WorkerId"],
                raw,
                _to_int(raw),
                seconds,
                origin,
                raw,
                assignment,
            )


_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{},]')


def json_array_elements(text: str, path: str) -> list[str]:
    """The texts of the elements of a top-level JSON array, found without parsing them (strings skipped, brackets
    counted), so that one element nested too deep or holding a number too long for Python is a bad record,
    not an unreadable file.

    >>> json_array_elements('[{"a": [1]}, 2 , "x],"]', "f.json")
    ['{"a": [1]}', '2', '"x],"']
    """
    body = text.strip()
    if not body.startswith("[") or not body.endswith("]"):
        raise InputError(f"{path}: not a Label Studio JSON export (expected a list of tasks)")
    elements, depth, pos = [], 0, 1
    for token in _JSON_TOKEN.finditer(body, 1, len(body) - 1):
        char = token.group()
        if char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
        elif char == "," and depth == 0:
            elements.append(body[pos : token.start()].strip())
            pos = token.end()
        if depth < 0:
            break
    last = body[pos : len(body) - 1].strip()
    if last or elements:
        elements.append(last)
    if depth != 0:
        raise InputError(f"{path}: not a Label Studio JSON export (unbalanced brackets)")
    return elements


def _choices(annotation: dict) -> list | None:
    """The chosen values of the ``answer`` control of one annotation; None when its ``result`` is malformed."""
    results = annotation.get("result") or []
    if not isinstance(results, list):
        return None
    chosen = []
    for r in results:
        if not isinstance(r, dict):
            return None
        if r.get("from_name") != "answer":
            continue
        value = r.get("value") or {}
        values = value.get("choices") if isinstance(value, dict) else None
        if not isinstance(values or [], list) or not all(isinstance(c, str) for c in values or []):
            return None
        chosen += values or []
    return chosen


def parse_labelstudio(text: str, path: str, collector: Collector) -> None:
    """Label Studio's JSON export: a list of tasks with ``data`` and ``annotations`` (``result`` choices).

    A task that is not a readable object (nested too deep, a number too long, a task that is an int, a
    ``result`` that is not a list of objects) is rejected as ``bad_record``; the others are read.
    """
    try:  # the whole file at once; only a file that fails is read task by task
        tasks = json.loads(text)
        elements = None
    except (ValueError, RecursionError):
        tasks, elements = None, json_array_elements(text, path)
    if elements is None and not isinstance(tasks, list):
        raise InputError(f"{path}: not a Label Studio JSON export (expected a list of tasks)")
    for number in range(len(tasks) if elements is None else len(elements)):
        origin = f"{path}:task {number}"
        if elements is None:
            task, element = tasks[number], None
        else:
            element = elements[number]
            try:
                task = json.loads(element)
            except (ValueError, RecursionError):
                collector.reject("bad_record", origin, "not a readable JSON task", element[:200])
                continue
        data = task.get("data") if isinstance(task, dict) else None
        annotations = task.get("annotations") or [] if isinstance(task, dict) else None
        if not isinstance(data, dict) or not isinstance(annotations, list):
            collector.reject(
                "bad_record",
                origin,
                "a task is an object with data and annotations",
                (element or json.dumps(task))[:200],
            )
            continue
        if _plain(task.get("id")):
            origin = f"{path}:task {task['id']}"
        collector.check_export(data.get("export_id"), path)
        for annotation in annotations:
            choices = _choices(annotation) if isinstance(annotation, dict) else None
            if choices is None:
                collector.reject("bad_record", origin, "an annotation without a list of results", annotation)
                continue
            who = annotation.get("completed_by")
            if isinstance(who, dict):
                who = who.get("email") or who.get("id")
            if annotation.get("was_cancelled"):
                collector.reject("cancelled", origin, f"annotation skipped by {who}", data.get("item_id"))
                continue
            raw = choices[0] if len(choices) == 1 else ("|".join(choices) or None)
            answer = _labelstudio_value(raw) if len(choices) == 1 else None
            collector.add(
                data.get("task_id"),
                data.get("item_id"),
                who if who is None or not _plain(who) else str(who),
                raw,
                answer,
                finite_seconds(annotation.get("lead_time")),
                origin,
                raw,
            )


def parse_lab(text: str, path: str, collector: Collector) -> None:
    """The in-lab JSONL of ``annotate serve``: one :data:`LAB_ANSWER_FIELDS` record a line.

    A line with ``"correction": true`` supersedes the annotator's earlier answers to that item (counted as
    ``superseded``; the latest correction counts); practice answers (``"practice": true``) are never counted
    as answers (``practice``).
    """
    parsed = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        origin = f"{path}:{number}"
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):  # also nesting too deep and ints too long for Python
            collector.reject("bad_json", origin, "not a readable JSON line", line[:200])
            continue
        if not isinstance(record, dict):
            collector.reject("bad_json", origin, "not a JSON object", line[:200])
            continue
        parsed.append((origin, record))
    last_correction = {}
    for place, (_, record) in enumerate(parsed):
        if record.get("correction") is True:
            last_correction[_lab_key(record)] = place
    for place, (origin, record) in enumerate(parsed):
        if record.get("practice") is True:
            collector.reject("practice", origin, "a practice answer (not part of the study)", record)
            continue
        if place < last_correction.get(_lab_key(record), -1):
            collector.reject("superseded", origin, "changed by a later correction of the annotator", record)
            continue
        if record.get("export_id") is None:  # a line the app never wrote: counted, the file is still read
            collector.reject("bad_record", origin, "no export_id", record)
            continue
        collector.check_export(record.get("export_id"), path)
        raw = record.get("answer")
        collector.add(
            record.get("task_id"),
            record.get("item_id"),
            record.get("annotator"),
            raw,
            _to_int(raw),
            finite_seconds(record.get("seconds")),
            origin,
            record,
        )


def _lab_key(record: dict) -> tuple[str, str, str]:
    return tuple(str(record.get(f)) for f in ("task_id", "item_id", "annotator"))


def insted_key(lines: Iterable[tuple[str, str]]) -> tuple[dict, list[tuple[str, int, dict]]]:
    """The key of INSteD's released annotation file(s) and its records.

    INSteD's format, one object a line (the field name spelt as released)::

        {"file_id": 12, "gold": "3", "annoated": ["3", "3", "-1", "3", "3"]}

    ``lines`` yields ``(path, text)``; returns the key (one pseudo-task ``insted``, workers named by their place
    in the list) and ``(origin, line number, record)`` of every readable record.
    """
    items: dict[str, dict] = {}
    records = []
    digest = hashlib.blake2b(digest_size=6)
    for path, text in lines:
        digest.update(text.encode("utf-8"))
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            record, reason, _ = load_line(line)  # deep nesting, long integers, lone surrogates: this line
            try:
                if reason:
                    raise ValueError(reason)
                file_id, gold = str(record["file_id"]), _to_int(record["gold"])
                record["annoated"]
            except (ValueError, KeyError, TypeError):
                raise InputError(
                    f"{path}:{number}: not INSteD's annotation format (file_id, gold, annoated)"
                ) from None
            if gold is None or gold < -1 or gold == 0:  # the opening sentence is never the intruder
                raise InputError(f"{path}:{number}: gold {record['gold']!r} is not a position >= 1 or -1")
            if file_id in items:
                raise InputError(f"{path}:{number}: file_id {file_id} appears twice")
            items[file_id] = {"id": file_id, "role": "test", "gold": gold, "sentences": None}
            if type(record["file_id"]) is int:  # INSteD's bare number, written back as such by `release`
                items[file_id]["file_id"] = record["file_id"]
            records.append((f"{path}:{number}", number, record))
    key = {
        "format": KEY_FORMAT,
        "version": FORMAT_VERSION,
        "export_id": "insted-" + digest.hexdigest(),
        "kind": "intruder",
        "config": None,
        "split": None,
        "source": "INSteD annotation file",
        "tasks": {"insted": sorted(items)},
        "items": dict(sorted(items.items())),
    }
    return key, records


def parse_insted(records: list[tuple[str, int, dict]], collector: Collector) -> None:
    for origin, _, record in records:
        answers = record["annoated"]
        if not isinstance(answers, list):
            collector.reject("bad_record", origin, "annoated is not a list", record)
            continue
        for place, raw in enumerate(answers, start=1):
            answer = _to_int(raw)
            collector.add(
                "insted", str(record["file_id"]), f"annotator-{place}", raw, answer, None, origin, raw
            )
