"""MTurk's review of a batch: the results files as one CSV, and Approve or Reject for every assignment (pure
functions over text, no I/O).

An assignment is rejected when too many of its check documents (control items) are wrong, when none of its
answers could be used, or when its median seconds per item is below a floor: ``--min-seconds``, else the
reading floor of its HIT (:func:`reading_floor`, the words of a document at a skimming speed).
"""

from __future__ import annotations

import csv
import io
import json

from incoherent.annotation.formats import finite_seconds
from incoherent.annotation.mturk import mturk_rows
from incoherent.schemas.records import InputError


def merged_results(texts: list[str]) -> str:
    """MTurk results files as one CSV (every row, the columns of the first file then any new ones), so that
    ``annotate review`` can fill the rows in and MTurk can take them back."""
    header: list[str] = []
    rows: list[dict] = []
    for number, text in enumerate(texts):
        fields, read = mturk_rows(text, f"results file {number + 1}")
        header += [f for f in fields if f not in header]
        rows += read
    seen: set[str] = set()
    unique = []
    for row in rows:  # one row per assignment (a file given twice, a row pasted twice): the first is kept
        aid = row.get("AssignmentId") or ""
        if aid and aid in seen:
            continue
        seen.add(aid)
        unique.append({k: v for k, v in row.items() if k is not None})
    rows = unique
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, header, quoting=csv.QUOTE_ALL, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


SKIM_WORDS_PER_MINUTE = 700  # faster than anyone reads a text to judge it: skimming (Rayner et al. 2016)


def reading_floor(items_cell: str | None) -> float | None:
    """The seconds below which nobody can have read a HIT's documents: the median over its items of the words a
    worker must read (an intruder document; one of a pair's two texts) at :data:`SKIM_WORDS_PER_MINUTE`.

    >>> reading_floor(json.dumps([{"sentences": ["one two three"] * 35}]))
    9.0
    """
    try:
        items = json.loads(items_cell or "")
    except (ValueError, RecursionError):
        return None
    words = []
    for item in items if isinstance(items, list) else []:
        text = item.get("sentences") if isinstance(item, dict) else None
        if text is None and isinstance(item, dict) and isinstance(item.get("texts"), list) and item["texts"]:
            text = item["texts"][0]
        if isinstance(text, list):
            words.append(sum(len(str(s).split()) for s in text))
    if not words:
        return None
    words.sort()
    middle = len(words) // 2
    median = words[middle] if len(words) % 2 else (words[middle - 1] + words[middle]) / 2
    return round(median * 60 / SKIM_WORDS_PER_MINUTE, 1)


def review_decisions(
    text: str,
    assignments: dict[str, dict],
    max_errors: float,
    min_seconds: float | None,
    path: str,
    kind: str = "intruder",
) -> dict:
    """Approve (``x``) or reject (a reason the worker reads) every submitted assignment of MTurk results.

    ``assignments``: the import's per-assignment control results (:func:`annotation.agreement.assignment_control`).
    ``min_seconds``: the floor of the median seconds per item (None: each HIT's :func:`reading_floor`; 0: off).
    Returns ``{"csv": the results with Approve/Reject filled, "assignments": [one row per assignment],
    "warnings": [lines]}``: a warning for every assignment approved with neither check documents nor item times.
    """
    fields, rows = mturk_rows(text, path)
    if "AssignmentId" not in fields:
        raise InputError(
            f"{path}: no AssignmentId column; MTurk takes back only its own results file, one row per assignment"
        )
    header = fields + [c for c in ("Approve", "Reject") if c not in fields]
    decided, warnings = [], []
    checks = "sentence is out of place" if kind == "intruder" else "text is scrambled word by word"
    for row in rows:
        aid, status = row.get("AssignmentId") or "", row.get("AssignmentStatus") or ""
        qc = assignments.get(aid)
        floor = reading_floor(row.get("Input.items")) if min_seconds is None else min_seconds
        row["Approve"], row["Reject"] = "", ""
        if status != "Submitted":
            decision, reason = f"already {status.lower() or 'decided'}", ""
        elif qc is None:
            decision, reason = (
                "reject",
                "None of the answers could be used (an answer was missing for every document).",
            )
        elif qc["failing"]:
            decision = "reject"
            reason = (
                f"Wrong answer on {qc['control_errors']} of {qc['controls']} check documents, where it is easy to "
                f"see which {checks} (more than {max_errors:.0%} wrong)."
            )
        elif floor and qc["median_seconds"] is not None and qc["median_seconds"] < floor:
            decision = "reject"
            reason = (
                f"Answered in {qc['median_seconds']:.1f} seconds per document (median), less than the {floor:g} "
                "seconds needed to read one."
            )
        else:
            decision, reason = "approve", ""
            if not qc["controls"] and (not floor or qc["median_seconds"] is None):
                warnings.append(
                    f"assignment {aid} approved without a signal: no check documents"
                    + (" and no item times" if floor else " and no time floor (--min-seconds 0)")
                )
        if decision == "approve":
            row["Approve"] = "x"
        elif decision == "reject":
            row["Reject"] = reason
        decided.append(
            {
                "assignment_id": aid,
                "hit_id": row.get("HITId") or None,
                "worker": row.get("WorkerId") or None,
                "status": status or None,
                "answers": qc["answers"] if qc else 0,
                "controls": qc["controls"] if qc else 0,
                "control_errors": qc["control_errors"] if qc else 0,
                "seconds": qc["seconds"] if qc else None,
                "median_seconds": qc["median_seconds"] if qc else None,
                "min_seconds": floor or None,
                "work_time_seconds": finite_seconds(row.get("WorkTimeInSeconds")),
                "decision": decision,
                "reason": reason,
            }
        )
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, header, quoting=csv.QUOTE_ALL, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return {"csv": buffer.getvalue(), "assignments": decided, "warnings": warnings}
