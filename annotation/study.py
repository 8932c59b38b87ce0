"""The folders of an annotation study (local folders; no Beam): what an export and an import folder hold, how
they are written (sorted JSON with a final newline, Parquet with the config's explicit schema: the same inputs
give byte-identical files) and read back (:func:`read_study`, :func:`check_key`). The steps live beside it:
:mod:`annotation.export`, :mod:`annotation.imports`, :mod:`annotation.results` (``annotate report``),
:mod:`annotation.verify`, :mod:`annotation.release` and :mod:`annotation.review`.
"""

from __future__ import annotations

import glob
import json
import os
from collections.abc import Sequence

from incoherent.annotation.textfile import read_text
from incoherent.fileio.outputs import entries, replace_file
from incoherent.fileio.paths import is_safe_name
from incoherent.schemas.annotation import IMPORT_FORMAT, KEY_FORMAT
from incoherent.schemas.records import InputError
from incoherent.sources import parquet
from incoherent.sources.jsonline import load_line

EXPORT_FILES = (
    "tasks.json",
    "key.json",
    "mturk/input.csv",
    "mturk/template.html",
    "labelstudio/tasks.json",
    "labelstudio/config.xml",
    "instructions.html",
)
MAX_PRACTICE = 20
IMPORT_FILES = ("key.json", "answers.jsonl", "rejected.jsonl", "import.json", "mturk_results.csv")
MTURK_RESULTS = "mturk_results.csv"  # the MTurk results an import read, for `annotate review`
FORMATS = ("mturk", "labelstudio", "lab", "insted")
PAIR_CONTROL_RULE = "original beside its words reversed in every sentence (documents not under study)"


def write_bytes(path: str, data: bytes) -> None:
    """Write a file whole; a link at ``path`` is replaced, never written through
    (:func:`incoherent.fileio.outputs.replace_file`)."""
    replace_file(path, data)


def write_text(path: str, text: str) -> None:
    write_bytes(path, text.encode("utf-8"))


def write_json(path: str, value) -> None:
    write_text(path, json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def parquet_bytes(table) -> bytes:
    """A table as the bytes of a zstd Parquet file (written whole by :func:`replace_file`)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    return sink.getvalue().to_pybytes()


def read_json(path: str, what: str) -> dict:
    text = read_text(path, what)
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise InputError(f"{path}: not JSON ({what}: {exc})") from None


def prepare_out(out_dir: str, ours: Sequence[str], overwrite: bool, owner: str | None = None) -> None:
    """Refuse a non-empty folder unless ``overwrite``; then only the files named in ``ours`` are replaced.

    ``--out`` itself is never a link (the files would land where it points), a sub-folder of ours that is a
    link is replaced by a real folder, and a path below a file is one line. ``owner``: the file (of ``ours``)
    that marks a folder this command wrote; ``--overwrite`` replaces only such a folder, never a user's own.
    """
    if not out_dir.strip():
        raise InputError("--out: an empty path; name the folder to write")
    if os.path.islink(out_dir):
        raise InputError(
            f"{out_dir}: a link; --out must be a real folder (the files would land where it points)"
        )
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise InputError(f"{out_dir}: output path is a file, not a directory")
    check_not_below_a_file(out_dir)
    if entries(out_dir) and not overwrite:  # the --out lock file is not content
        raise InputError(f"{out_dir}: output directory is not empty (pass --overwrite to replace it)")
    other = "import.json" if owner == "key.json" else None  # an import folder holds a copy of the key
    if (
        entries(out_dir)
        and owner is not None
        and (
            not owned_by_marker(os.path.join(out_dir, owner))
            or (other and owned_by_marker(os.path.join(out_dir, other)))
        )
    ):
        raise InputError(
            f"{out_dir}: not a folder `annotate {'import' if owner == 'import.json' else 'export'}` wrote "
            f"(no {owner} of it); --overwrite replaces only those"
        )
    check_places(out_dir, ours)
    os.makedirs(out_dir, exist_ok=True)
    for sub in sorted({rel.split("/")[0] for rel in ours if "/" in rel}):
        if os.path.islink(os.path.join(out_dir, sub)):
            os.remove(os.path.join(out_dir, sub))  # a linked folder is replaced, never written through
    for rel in ours:
        if os.path.isfile(os.path.join(out_dir, rel)):
            os.remove(os.path.join(out_dir, rel))


def check_not_below_a_file(path: str) -> None:
    """The nearest existing folder above ``path`` is a folder (else one line, not a traceback from makedirs)."""
    above = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(above) and os.path.dirname(above) != above:
        above = os.path.dirname(above)
    if not os.path.isdir(above):
        raise InputError(f"{path}: {above} is a file, not a directory")


def check_places(out_dir: str, files: Sequence[str]) -> None:
    """A folder where one of ``files`` goes, or a file where one of their folders goes: one line, before
    anything is written (a link is fine: it is replaced)."""
    for rel in files:
        path = os.path.join(out_dir, rel)
        if os.path.isdir(path) and not os.path.islink(path):
            raise InputError(f"{path}: a folder where a file goes; move it away")
        folder = os.path.dirname(path)
        if (
            folder != out_dir
            and os.path.lexists(folder)
            and not os.path.islink(folder)
            and not os.path.isdir(folder)
        ):
            raise InputError(f"{folder}: a file where a folder goes; move it away")


def owned_by_marker(marker: str) -> bool:
    """``marker`` is the key of an export or the ``import.json`` of an import (what their --overwrite replaces)."""
    try:
        value = read_json(marker, "")
    except InputError:
        return False
    if not isinstance(value, dict) or os.path.islink(marker):
        return False
    if os.path.basename(marker) == "key.json":
        return value.get("format") == KEY_FORMAT
    return value.get("written_by") == IMPORT_FORMAT


def read_rows(dataset_dir: str, config: str, split: str) -> list[dict]:
    """Rows of ``DATASET_DIR/<config>/<split>-*.parquet``, sorted by id (then block size, permutation)."""

    if not is_safe_name(config) or not is_safe_name(split):
        raise InputError(f"--config/--split: {config!r}/{split!r} is not a plain name")
    files = sorted(glob.glob(os.path.join(dataset_dir, config, f"{split}-*.parquet")))
    if not files:
        found = sorted(
            {
                os.path.basename(p).split("-", 1)[0]
                for p in glob.glob(os.path.join(dataset_dir, config, "*.parquet"))
            }
        )
        raise InputError(
            f"{os.path.join(dataset_dir, config)}: no '{split}' split (found: {', '.join(found) or 'no tables'})"
        )
    rows = []
    for path in files:
        rows += parquet.read_table(path).to_pylist()
    return sorted(rows, key=lambda r: (r["id"], r.get("block_size") or 0, r.get("permutation") or 0))


def check_key(key, path: str) -> dict:
    """``key`` if it has the shape of an export's key (what every command reads of it), else one line."""

    def problem() -> str | None:
        if not isinstance(key, dict) or key.get("format") != KEY_FORMAT:
            return "no key format"
        if key.get("kind") not in ("intruder", "pair") or not isinstance(key.get("export_id"), str):
            return "kind, export_id"
        items, tasks = key.get("items"), key.get("tasks")
        if not isinstance(items, dict) or not isinstance(tasks, dict):
            return "items, tasks"
        for iid, item in items.items():
            if not (
                isinstance(item, dict)
                and item.get("role") in ("test", "control")
                and isinstance(item.get("id"), str)
                and type(item.get("gold")) is int
                and (item.get("sentences") is None or type(item["sentences"]) is int)
            ):
                return f"item {iid!r}"
        for tid, listed in tasks.items():
            if not isinstance(listed, list) or not all(isinstance(i, str) and i in items for i in listed):
                return f"task {tid!r}"
        return None

    wrong = problem()
    if wrong:
        where = path if path.endswith(".json") else os.path.join(path, "key.json")
        raise InputError(f"{where}: not the key of an `annotate export` ({wrong})")
    return key


def read_study(study_dir: str) -> tuple[dict, list[dict], dict]:
    """``(key, answers, import summary)`` of an import folder; a line of ``answers.jsonl`` that is not an answer
    object is skipped and counted in the summary's ``skipped_lines``."""
    summary = read_json(os.path.join(study_dir, "import.json"), "an `annotate import` folder")
    if not isinstance(summary, dict) or summary.get("written_by") != IMPORT_FORMAT:
        raise InputError(f"{study_dir}: not an `annotate import` folder (key.json, import.json)")
    key = check_key(read_json(os.path.join(study_dir, "key.json"), "an `annotate import` folder"), study_dir)
    from incoherent.annotation.formats import Collector, answer_seconds

    answers, skipped = [], 0
    items = key.get("items") or {}
    # the import wrote it, but it is a text file a hand can edit: every line checked as the import checked the
    # answers (an item of the key, an answer in its range, once per worker and item, seconds null or sane)
    collector = Collector({**key, "tasks": key.get("tasks") or {}})
    for number, line in enumerate(read_text(os.path.join(study_dir, "answers.jsonl")).splitlines(), 1):
        if not line.strip():
            continue
        record, _, _ = load_line(line)  # not JSON, too deep, a lone surrogate: None, skipped and counted
        if not (
            isinstance(record, dict)
            and isinstance(record.get("item_id"), str)
            and record["item_id"] in items
            and type(record.get("answer")) is int
            and isinstance(record.get("worker"), str)
            and isinstance(record.get("task_id"), str)
            and (
                record.get("seconds") is None
                or (type(record["seconds"]) in (int, float) and answer_seconds(record["seconds"]) is not None)
            )
        ):
            skipped += 1
            continue
        before = len(collector.answers)  # out of range (99, -5, 2**70), an unknown task, a duplicate line
        collector.add(record["task_id"], record["item_id"], record["worker"], record["answer"],
                      record["answer"], record.get("seconds"), f"answers.jsonl:{number}", record)  # fmt: skip
        if len(collector.answers) > before:
            answers.append(record)
        else:
            skipped += 1
    summary["skipped_lines"] = skipped
    return key, answers, summary
