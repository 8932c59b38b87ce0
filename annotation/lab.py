"""The in-lab app's answers (``annotate serve``): its JSONL read back."""

from __future__ import annotations

import json

from incoherent.annotation.formats import Collector, finite_seconds, to_int


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
            to_int(raw),
            finite_seconds(record.get("seconds")),
            origin,
            record,
        )


def _lab_key(record: dict) -> tuple[str, str, str]:
    return tuple(str(record.get(f)) for f in ("task_id", "item_id", "annotator"))
