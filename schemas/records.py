"""Record types the stages pass around (plain data, no Beam).

Rows are ``dict`` objects keyed by the field names of a schema in :mod:`schemas.tables`. A bad record inside
usable input is not raised: the logic function yields a :class:`Rejected` in its place, and the Beam wrapper
turns it into a counter increment and a dead-letter row (``OUT/rejected/<stage>/``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from incoherent.errors import InputError as InputError  # the floor's, imported from here too

MAX_RECORD_CHARS = 4000


@dataclass(frozen=True)
class Rejected:
    """A record dropped for a reason: ``Rejected("redirect", id="wikipedia:12", detail="-> Anarchism")``."""

    reason: str
    id: str | None = None
    source: str | None = None
    detail: str | None = None
    record: Any = None

    def to_row(self, stage: str) -> dict:
        record = self.record
        if record is not None and not isinstance(record, str):
            record = json.dumps(record, ensure_ascii=False, default=str)
        if record is not None and len(record) > MAX_RECORD_CHARS:
            record = record[:MAX_RECORD_CHARS] + "…"
        return {
            "stage": stage,
            "reason": self.reason,
            "id": self.id,
            "source": self.source,
            "detail": self.detail,
            "record": record,
        }


def document(
    id: str,
    source: str,
    sentences: list[str],
    title: str | None = None,
    url: str | None = None,
    dump: str | None = None,
    revision_id: int | None = None,
    timestamp: str | None = None,
) -> dict:
    """A row of :data:`schemas.DOCUMENT_SCHEMA`."""
    return {
        "id": id,
        "source": source,
        "title": title,
        "url": url,
        "sentences": list(sentences),
        "dump": dump,
        "revision_id": revision_id,
        "timestamp": timestamp,
    }


def newest_first(row: dict) -> tuple:
    """Preference among rows sharing an id: newest revision, then a fixed order of the content (sort with
    ``reverse=True`` to get the preferred row first).

    >>> rows = [{"id": "a", "revision_id": 2}, {"id": "a", "revision_id": 5}]
    >>> max(rows, key=newest_first)["revision_id"]
    5
    """
    return (
        row.get("timestamp") or "",
        row.get("revision_id") or 0,
        json.dumps(row, sort_keys=True, ensure_ascii=False, default=str),
    )
