"""``annotate release``: every annotator's answer in INSteD's released format, and the one-file outputs of
the study commands.
"""

from __future__ import annotations

import json
import os

from incoherent.annotation.study import IMPORT_FILES, check_not_below_a_file, owned_by_marker, read_study
from incoherent.fileio.outputs import check_output_file, write_output_file
from incoherent.schemas.records import InputError


def write_out_file(out_path: str, study_dir: str, text: str, overwrite: bool, command: str) -> None:
    """``--out FILE`` of review and release: never a file of the study, and an existing file only with
    ``--overwrite`` and only the command's own earlier output (:func:`incoherent.fileio.outputs.check_output_file`); a
    link there is never written through."""
    if not out_path.strip():
        raise InputError("--out: an empty path; name the file to write")
    if os.path.isdir(out_path):
        raise InputError(f"{out_path}: a folder; --out names the file to write")
    real = os.path.realpath(out_path)
    study = os.path.realpath(study_dir)
    if os.path.dirname(real) == study and os.path.basename(real) in (*IMPORT_FILES, "report.json"):
        raise InputError(f"{out_path}: a file of the study folder {study_dir}; write elsewhere")
    check_not_below_a_file(out_path)
    folder = os.path.dirname(real)
    for level in (folder, os.path.dirname(folder)):  # an export (its key.json) or an import (its import.json)
        if owned_by_marker(os.path.join(level, "key.json")) or owned_by_marker(
            os.path.join(level, "import.json")
        ):
            raise InputError(
                f"{out_path}: inside the study folder {level} (an export or an import); write elsewhere"
            )
    check_output_file(out_path, "--out", command, overwrite)
    write_output_file(out_path, text.encode("utf-8"), command)


def release_text(key: dict, answers: list[dict]) -> str:
    """The per-document answers of an intruder study in INSteD's released format (what ``import --format
    insted`` reads), one line per document under study with answers, by document id; the answers in the order
    of the workers' names::

        {"file_id": "wikipedia:12", "gold": "3", "annoated": ["3", "3", "-1"]}

    ``file_id`` is INSteD's bare number (``{"file_id": 290, ...}``) where every document came from INSteD-format
    data (the key's items carry it: probes of INSteD's JSONL, an ``import --format insted``), else our id.
    """
    if key["kind"] != "intruder":
        raise InputError("release: INSteD's format holds intruder answers; shuffle pairs have no such format")
    by_doc: dict[str, list[tuple[str, int]]] = {}
    for a in answers:
        item = key["items"][a["item_id"]]
        if item["role"] == "test":
            by_doc.setdefault(item["id"], []).append((a["worker"], a["answer"]))
    tests = [item for item in key["items"].values() if item["role"] == "test"]
    gold = {item["id"]: item["gold"] for item in tests}
    numbers = {item["id"]: item.get("file_id") for item in tests}
    insted = all(type(numbers[doc]) is int for doc in by_doc) and len(set(numbers.values())) == len(numbers)
    lines = [
        json.dumps(
            {
                "file_id": numbers[doc] if insted else doc,
                "gold": str(gold[doc]),
                "annoated": [str(v) for _, v in sorted(given)],
            },
            ensure_ascii=False,
        )
        for doc, given in sorted(by_doc.items(), key=lambda kv: (numbers[kv[0]] if insted else 0, kv[0]))
    ]
    return "".join(line + "\n" for line in lines)


def release(study_dir: str, out_path: str, overwrite: bool = False) -> tuple[int, int]:
    """Write :func:`release_text` of an import folder to ``out_path``; returns the number of documents and of
    the lines of ``answers.jsonl`` skipped as not answers (as ``report`` counts them)."""
    key, answers, summary = read_study(study_dir)
    text = release_text(key, answers)
    if not text:
        raise InputError(f"{study_dir}: no answers to documents under study; nothing to release")
    write_out_file(out_path, study_dir, text, overwrite, "annotate release")
    return text.count("\n"), summary["skipped_lines"]
