"""INSteD's released annotation format (``{"file_id", "gold", "annoated"}``): its key and answers."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from incoherent.annotation.formats import Collector, to_int
from incoherent.schemas.annotation import FORMAT_VERSION, KEY_FORMAT
from incoherent.schemas.records import InputError
from incoherent.sources.jsonline import load_line


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
                file_id, gold = str(record["file_id"]), to_int(record["gold"])
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
            answer = to_int(raw)
            collector.add(
                "insted", str(record["file_id"]), f"annotator-{place}", raw, answer, None, origin, raw
            )
