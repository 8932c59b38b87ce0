"""What every annotation platform's files share (pure functions over text, no I/O): the questions, the
checks of an answer, and the :class:`Collector` every parser fills. One module per platform beside it:
:mod:`annotation.mturk` (batch input CSV, HTML template, results CSV), :mod:`annotation.labelstudio` (tasks,
labeling configuration, JSON export), :mod:`annotation.lab` (the in-lab JSONL of ``annotate serve``) and
:mod:`annotation.insted` (INSteD's released annotation format). Nothing exported carries gold.

Every parser fills a :class:`Collector`: answers as :data:`schemas.annotation.ANSWER_FIELDS` records (plus
``origin``), rejected answers as :data:`schemas.annotation.REJECTED_FIELDS` records. A file made for another
export raises :class:`schemas.records.InputError`.
"""

from __future__ import annotations

import json
import math
import re

from incoherent.schemas.annotation import ASSIGNMENT_FIELDS
from incoherent.schemas.records import InputError
from incoherent.sources.jsonline import encodes

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


def to_int(value, offset: int = 0) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value + offset
    try:
        return int(str(value).strip()) + offset
    except ValueError:
        return None


MAX_SENTENCES = (
    1_000  # an intruder position where the key does not give the document's sentences (99 is read)
)
MAX_SECONDS = 7 * 24 * 3600  # one answer in more than a week is no time measured (a 1e308 broke the tables)


def finite_seconds(value) -> float | None:
    """Seconds as a finite, non-negative number (None for anything else: text, NaN, infinity, a huge int)."""
    if isinstance(value, bool):
        return None
    try:
        seconds = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return round(seconds, 3) if math.isfinite(seconds) and seconds >= 0 else None


def answer_seconds(value) -> float | None:
    """:func:`finite_seconds` of at most :data:`MAX_SECONDS`, what a study keeps of an answer's time (None
    for anything else: ``-1``, ``1e308``, text).

    >>> answer_seconds(12.3456), answer_seconds(-1), answer_seconds(1e308), answer_seconds(True)
    (12.346, None, None, None)
    """
    seconds = finite_seconds(value)
    return seconds if seconds is not None and seconds <= MAX_SECONDS else None


def plain_value(value) -> bool:
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
        n = self.items[item_id].get("sentences")  # None: unknown (INSteD's answer files): a sane bound
        return answer == -1 or 1 <= answer < (MAX_SENTENCES if n is None else n)

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
        elif not (plain_value(worker) and plain_value(task_id) and plain_value(item_id)):
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
                    "seconds": answer_seconds(seconds),  # none over a week (a 1e308 broke the tables)
                    "origin": origin,
                    **{f: (assignment or {}).get(f) for f in ASSIGNMENT_FIELDS},
                }
            )

    def check_export(self, export_id, path: str) -> None:
        if export_id != self.key["export_id"]:
            raise InputError(
                f"{path}: answers for export {export_id!r}, but the key is of export {self.key['export_id']!r}"
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
