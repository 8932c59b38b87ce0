"""``annotate import``: answers of any platform read, checked against the key and quality-controlled."""

from __future__ import annotations

import glob
import json
import os
from collections.abc import Sequence

from incoherent.annotation.study import (
    FORMATS,
    IMPORT_FILES,
    MTURK_RESULTS,
    check_key,
    prepare_out,
    read_json,
    write_json,
    write_text,
)
from incoherent.annotation.textfile import read_text
from incoherent.schemas.annotation import ANSWER_FIELDS, IMPORT_FORMAT, REJECTED_FIELDS
from incoherent.schemas.records import InputError
from incoherent.sources.jsonline import dumps_line


def _lab_files(paths: Sequence[str]) -> list[str]:
    """ANSWERS of ``--format lab`` may be ``.jsonl`` files or folders of them (``TASKS_DIR/answers``)."""
    out = []
    for path in paths:
        if os.path.isdir(path):
            out += sorted(glob.glob(os.path.join(path, "*.jsonl")))
        else:
            out.append(path)
    return out


def _read_answers(paths: Sequence[str], fmt: str, key_path: str | None):
    """The key and a :class:`annotation.formats.Collector` of every answer of ``paths`` (kept or rejected)."""
    from incoherent.annotation import formats, insted, lab, labelstudio, mturk

    if fmt == "insted":
        key, records = insted.insted_key((p, read_text(p)) for p in paths)
        collector = formats.Collector(key)
        insted.parse_insted(records, collector)
    else:
        if not key_path:
            raise InputError(f"--key: needed with --format {fmt} (the export folder or its key.json)")
        if os.path.isdir(key_path):
            key_path = os.path.join(key_path, "key.json")
        key = check_key(read_json(key_path, "the key of an `annotate export`"), key_path)
        collector = formats.Collector(key)
        parser = {
            "mturk": mturk.parse_mturk,
            "labelstudio": labelstudio.parse_labelstudio,
            "lab": lab.parse_lab,
        }[fmt]
        files = _lab_files(paths) if fmt == "lab" else list(paths)
        if not files:
            raise InputError(f"ANSWERS: no answer files in {', '.join(paths)}")
        for path in files:
            parser(read_text(path), path, collector)
    return key, collector


def _write_import(
    out_dir: str,
    overwrite: bool,
    fmt: str,
    paths: Sequence[str],
    summary: dict,
    key: dict,
    answers: list[dict],
    rejected_rows: list[dict],
) -> None:
    """:data:`IMPORT_FILES` into ``out_dir``: ``import.json`` first (the folder is ours from then on) and last."""
    from incoherent.annotation import mturk_review

    prepare_out(out_dir, IMPORT_FILES, overwrite, owner="import.json")
    write_json(os.path.join(out_dir, "import.json"), summary)  # the marker first: the folder is ours from now
    write_json(os.path.join(out_dir, "key.json"), key)
    if fmt == "mturk":
        write_text(
            os.path.join(out_dir, MTURK_RESULTS), mturk_review.merged_results([read_text(p) for p in paths])
        )
    lines = [
        json.dumps({f: a[f] for f in ANSWER_FIELDS}, sort_keys=True, ensure_ascii=False) for a in answers
    ]
    write_text(os.path.join(out_dir, "answers.jsonl"), "".join(line + "\n" for line in lines))
    rejected = [  # a dead letter with a lone surrogate is written escaped (sources.jsonline.dumps_line)
        dumps_line({f: r[f] for f in REJECTED_FIELDS}, sort_keys=True, default=str) for r in rejected_rows
    ]
    write_text(os.path.join(out_dir, "rejected.jsonl"), "".join(line + "\n" for line in rejected))
    write_json(os.path.join(out_dir, "import.json"), summary)


def import_answers(
    paths: Sequence[str],
    fmt: str,
    out_dir: str,
    *,
    key_path: str | None,
    max_control_errors: float = 0.5,
    exclude_failing: bool = False,
    overwrite: bool = False,
) -> dict:
    """Read answers, check them against the key, write :data:`IMPORT_FILES`; returns the import summary."""
    from incoherent.annotation import agreement

    if fmt not in FORMATS:
        raise InputError(f"--format: one of {', '.join(FORMATS)}, got {fmt!r}")
    if not 0.0 <= max_control_errors <= 1.0:
        raise InputError(f"--max-control-errors: must be in [0, 1], got {max_control_errors}")
    key, collector = _read_answers(paths, fmt, key_path)
    if not collector.answers:
        raise InputError(_nothing_kept(fmt, paths, collector))
    qc = agreement.quality_control(collector.answers, key, max_control_errors)
    failing = sorted(w for w, row in qc.items() if row["failing"])
    assignments = agreement.assignment_control(collector.answers, key, max_control_errors)
    failing_assignments = sorted(n for n, row in assignments.items() if row["failing"])
    answers = collector.answers
    if (
        exclude_failing
    ):  # per assignment: one failed task leaves out that task's answers, not the worker's others
        dropped = set(failing_assignments)
        for a in answers:
            if agreement.assignment_of(a) in dropped:
                collector.reject(
                    "excluded_assignment",
                    a["origin"],
                    f"assignment {agreement.assignment_of(a)} of {a['worker']} failed control items",
                    a["answer"],
                )
        answers = [a for a in answers if agreement.assignment_of(a) not in dropped]
        if not answers:
            raise InputError(
                f"--exclude-failing: every one of the {len(assignments)} assignments failed control items; "
                "no answers kept"
            )
    order = {iid: n for n, iid in enumerate(key["items"])}
    answers.sort(key=lambda a: (a["task_id"], order[a["item_id"]], a["worker"]))
    rejected_counts: dict[str, int] = {}
    for r in collector.rejected:
        rejected_counts[r["reason"]] = rejected_counts.get(r["reason"], 0) + 1
    summary = {
        "written_by": IMPORT_FORMAT,
        "format": fmt,
        "files": [os.path.basename(p) for p in paths],
        "export_id": key["export_id"],
        "answers_read": len(collector.answers)
        + sum(v for k, v in rejected_counts.items() if k != "excluded_assignment"),
        "answers_kept": len(answers),
        "rejected": dict(sorted(rejected_counts.items())),
        "max_control_errors": max_control_errors,
        "failing_workers": failing,
        "failing_assignments": failing_assignments,
        "excluded_assignments": failing_assignments if exclude_failing else [],
        "workers": qc,
        "assignments": assignments,
        "platform": {"mturk": "Amazon Mechanical Turk", "labelstudio": "Label Studio", "lab": "in-lab"}.get(
            fmt, "INSteD's released annotations"
        ),
    }
    _write_import(out_dir, overwrite, fmt, paths, summary, key, answers, collector.rejected)
    return summary


def _nothing_kept(fmt: str, paths: Sequence[str], collector) -> str:
    """The one line of an import that kept no answer: for MTurk, the answer columns expected and found."""
    from incoherent.annotation import mturk

    reasons = {}
    for r in collector.rejected:
        reasons[r["reason"]] = reasons.get(r["reason"], 0) + 1
    counted = ", ".join(f"{k}: {v}" for k, v in sorted(reasons.items())) or "nothing read"
    line = f"{', '.join(paths)}: no answers kept ({counted})"
    if fmt == "mturk":
        found = ", ".join(sorted(collector.answer_columns)) or "none"
        line += f"; answer columns expected: {', '.join(mturk.MTURK_ANSWER_SHAPES)}; found: {found}"
    return line
