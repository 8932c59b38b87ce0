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
from collections.abc import Iterable

from schemas.annotation import FORMAT_VERSION, KEY_FORMAT
from schemas.records import InputError

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


_MTURK_TEMPLATE = """<!-- incoherent annotation task ({kind}). Upload with the batch input CSV; MTurk fills in ${{...}}. -->
<script src="https://assets.crowd.aws/crowd-html-elements.js"></script>
<style>
  .doc {{ border: 1px solid #ccc; border-radius: 4px; padding: 8px 12px; margin: 12px 0; }}
  .doc label {{ display: block; padding: 3px 0; cursor: pointer; }}
  .doc .opening {{ display: block; padding: 3px 0 3px 24px; color: #444; }}
  .pair {{ display: flex; gap: 16px; }} .pair > div {{ flex: 1; }}
</style>
<crowd-form answer-format="flatten-objects">
  <input type="hidden" name="export_id" value="${{export_id}}">
  <input type="hidden" name="task_id" value="${{task_id}}">
  <p><strong>{question}</strong></p>
  <div id="incoherent-items"></div>
  <script type="application/json" id="incoherent-data">${{items}}</script>
  <script>
  (function () {{
    var kind = "{kind}", none = "{none}";
    var items = JSON.parse(document.getElementById("incoherent-data").textContent);
    var holder = document.getElementById("incoherent-items"), started = Date.now();
    function el(tag, attrs, text) {{
      var e = document.createElement(tag);
      for (var k in attrs) e.setAttribute(k, attrs[k]);
      if (text !== undefined) e.textContent = text;
      return e;
    }}
    function option(slot, value, text) {{
      var label = el("label"), input = el("input", {{type: "radio", name: "answer_" + slot, value: value, required: ""}});
      input.addEventListener("change", function () {{
        document.getElementsByName("seconds_" + slot)[0].value = ((Date.now() - started) / 1000).toFixed(1);
      }});
      label.appendChild(input);
      label.appendChild(document.createTextNode(" " + text));
      return label;
    }}
    items.forEach(function (item, i) {{
      var slot = i + 1, box = el("div", {{"class": "doc"}});
      box.appendChild(el("p", {{}}, "Document " + slot + " of " + items.length));
      box.appendChild(el("input", {{type: "hidden", name: "seconds_" + slot, value: ""}}));
      if (kind === "intruder") {{
        item.sentences.forEach(function (s, j) {{
          box.appendChild(j === 0 ? el("span", {{"class": "opening"}}, "1. " + s) : option(slot, j, (j + 1) + ". " + s));
        }});
        box.appendChild(option(slot, -1, none));
      }} else {{
        var pair = el("div", {{"class": "pair"}});
        item.texts.forEach(function (text, j) {{
          var side = el("div");
          side.appendChild(el("p", {{}}, "Text " + "AB"[j]));
          side.appendChild(el("p", {{}}, text.join(" ")));
          pair.appendChild(side);
        }});
        box.appendChild(pair);
        box.appendChild(option(slot, 0, "Text A is the original"));
        box.appendChild(option(slot, 1, "Text B is the original"));
      }}
      holder.appendChild(box);
    }});
  }})();
  </script>
</crowd-form>
"""


def mturk_template(kind: str) -> str:
    """The HTML task template: items rendered from the ``items`` column; answers ``answer_<slot>``."""
    question = INTRUDER_QUESTION if kind == "intruder" else PAIR_QUESTION
    return _MTURK_TEMPLATE.format(kind=kind, question=html.escape(question), none=NONE_LABEL)


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
                data["options"] = [{"value": f"Sentence {j + 1}"} for j in range(1, len(sentences))]
                data["options"].append({"value": NONE_LABEL})
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
        '    <Choice value="A"/>\n'
        '    <Choice value="B"/>\n'
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


def _seconds(value) -> float | None:
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return None
    return round(seconds, 3) if 0 <= seconds < float("inf") else None  # never NaN or Infinity in JSON


class Collector:
    """Checks answers against the key: unknown items, answers out of range, duplicates are rejected with a reason."""

    def __init__(self, key: dict):
        self.key = key
        self.items = key["items"]
        self.tasks = {task: set(items) for task, items in key["tasks"].items()}
        self.answers: list[dict] = []
        self.rejected: list[dict] = []
        self._seen: set[tuple[str, str, str]] = set()

    def reject(self, reason: str, origin: str, detail: str, record=None) -> None:
        self.rejected.append({"reason": reason, "origin": origin, "detail": detail, "record": record})

    def valid(self, item_id: str, answer: int | None) -> bool:
        if answer is None:
            return False
        if self.key["kind"] == "pair":
            return answer in (0, 1)
        n = self.items[item_id].get("sentences")
        return answer == -1 or (answer >= 1 and (n is None or answer < n))

    def add(self, task_id, item_id, worker, raw_answer, answer, seconds, origin: str, record=None) -> None:
        if not worker:
            self.reject("missing_worker", origin, "no worker id", record)
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
                }
            )

    def check_export(self, export_id, path: str) -> None:
        if export_id != self.key["export_id"]:
            raise InputError(
                f"{path}: answers for export {export_id!r}, but the key is of export {self.key['export_id']!r}"
            )


# ---------------------------------------------------------------------------------------------- parsers


def parse_mturk(text: str, path: str, collector: Collector) -> None:
    """MTurk's batch results CSV: ``WorkerId``, ``Input.*`` of the batch input, ``Answer.answer_<slot>``."""
    reader = csv.DictReader(io.StringIO(text))
    needed = {"WorkerId", "Input.export_id", "Input.task_id", "Input.items"}
    if not reader.fieldnames or needed - set(reader.fieldnames):
        raise InputError(f"{path}: not an MTurk batch results file (needs columns {sorted(needed)})")
    for number, row in enumerate(reader, start=2):
        origin = f"{path}:{number}"
        if row.get("AssignmentStatus") == "Rejected":
            collector.reject(
                "rejected_on_mturk", origin, "assignment rejected on MTurk", row.get("AssignmentId")
            )
            continue
        collector.check_export(row["Input.export_id"], path)
        try:
            items = json.loads(row["Input.items"])
        except json.JSONDecodeError:
            collector.reject("bad_record", origin, "Input.items is not JSON", row["Input.task_id"])
            continue
        total = _seconds(row.get("WorkTimeInSeconds"))
        for slot, item in enumerate(items, start=1):
            raw = row.get(f"Answer.answer_{slot}")
            seconds = _seconds(row.get(f"Answer.seconds_{slot}") or None)
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
            )


def parse_labelstudio(text: str, path: str, collector: Collector) -> None:
    """Label Studio's JSON export: a list of tasks with ``data`` and ``annotations`` (``result`` choices)."""
    try:
        tasks = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not a Label Studio JSON export ({exc.msg})") from None
    if not isinstance(tasks, list):
        raise InputError(f"{path}: not a Label Studio JSON export (expected a list of tasks)")
    for number, task in enumerate(tasks):
        data = task.get("data") or {}
        origin = f"{path}:task {task.get('id', number)}"
        collector.check_export(data.get("export_id"), path)
        for annotation in task.get("annotations") or []:
            who = annotation.get("completed_by")
            if isinstance(who, dict):
                who = who.get("email") or who.get("id")
            if annotation.get("was_cancelled"):
                collector.reject("cancelled", origin, f"annotation skipped by {who}", data.get("item_id"))
                continue
            choices = [
                c
                for r in annotation.get("result") or []
                if r.get("from_name") == "answer"
                for c in (r.get("value") or {}).get("choices") or []
            ]
            raw = choices[0] if len(choices) == 1 else ("|".join(choices) or None)
            answer = _labelstudio_value(raw) if len(choices) == 1 else None
            collector.add(
                data.get("task_id"),
                data.get("item_id"),
                None if who is None else str(who),
                raw,
                answer,
                _seconds(annotation.get("lead_time")),
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
        except (json.JSONDecodeError, RecursionError, ValueError):
            collector.reject("bad_json", origin, "not a JSON line", line[:200])
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
        collector.check_export(record.get("export_id"), path)
        raw = record.get("answer")
        collector.add(
            record.get("task_id"),
            record.get("item_id"),
            record.get("annotator"),
            raw,
            _to_int(raw),
            _seconds(record.get("seconds")),
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
            try:
                record = json.loads(line)
                file_id, gold = str(record["file_id"]), _to_int(record["gold"])
                record["annoated"]
            except (json.JSONDecodeError, KeyError, TypeError):
                raise InputError(
                    f"{path}:{number}: not INSteD's annotation format (file_id, gold, annoated)"
                ) from None
            if gold is None or gold < -1:
                raise InputError(f"{path}:{number}: gold {record['gold']!r} is not a position or -1")
            if file_id in items:
                raise InputError(f"{path}:{number}: file_id {file_id} appears twice")
            items[file_id] = {"id": file_id, "role": "test", "gold": gold, "sentences": None}
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
