"""Amazon Mechanical Turk: the batch input CSV and the HTML task template (``crowd-form``) of an export, and
the batch results CSV read back.
"""

from __future__ import annotations

import csv
import html
import io
import json
import re
from collections.abc import Sequence

from incoherent.annotation.formats import (
    INTRUDER_QUESTION,
    NONE_LABEL,
    PAIR_QUESTION,
    Collector,
    finite_seconds,
    safe_json,
    to_int,
)
from incoherent.schemas.records import InputError


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
                to_int(raw),
                seconds,
                origin,
                raw,
                assignment,
            )
