"""Files of an annotation study: export, import, report and the verified split (local folders; no Beam).

Every JSON file is written with sorted keys and a final newline, every Parquet file with the config's explicit
schema, so the same inputs give byte-identical files.
"""

from __future__ import annotations

import glob
import json
import os
from collections.abc import Sequence

from annotation.textfile import read_text
from schemas.annotation import ANSWER_FIELDS, IMPORT_FORMAT, KEY_FORMAT, REJECTED_FIELDS
from schemas.records import InputError
from sources import parquet
from sources.jsonline import dumps_line, load_line
from sources.outputs import check_output_file, entries, make_folder, replace_file, write_output_file
from sources.paths import is_safe_name

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
    (:func:`sources.outputs.replace_file`)."""
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
    _check_not_below_a_file(out_dir)
    if entries(out_dir) and not overwrite:  # the --out lock file is not content
        raise InputError(f"{out_dir}: output directory is not empty (pass --overwrite to replace it)")
    other = "import.json" if owner == "key.json" else None  # an import folder holds a copy of the key
    if (
        entries(out_dir)
        and owner is not None
        and (not _owned(os.path.join(out_dir, owner)) or (other and _owned(os.path.join(out_dir, other))))
    ):
        raise InputError(
            f"{out_dir}: not a folder `annotate {'import' if owner == 'import.json' else 'export'}` wrote "
            f"(no {owner} of it); --overwrite replaces only those"
        )
    _check_places(out_dir, ours)
    os.makedirs(out_dir, exist_ok=True)
    for sub in sorted({rel.split("/")[0] for rel in ours if "/" in rel}):
        if os.path.islink(os.path.join(out_dir, sub)):
            os.remove(os.path.join(out_dir, sub))  # a linked folder is replaced, never written through
    for rel in ours:
        if os.path.isfile(os.path.join(out_dir, rel)):
            os.remove(os.path.join(out_dir, rel))


def _check_not_below_a_file(path: str) -> None:
    """The nearest existing folder above ``path`` is a folder (else one line, not a traceback from makedirs)."""
    above = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(above) and os.path.dirname(above) != above:
        above = os.path.dirname(above)
    if not os.path.isdir(above):
        raise InputError(f"{path}: {above} is a file, not a directory")


def _check_places(out_dir: str, files: Sequence[str]) -> None:
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


def _owned(marker: str) -> bool:
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


# ---------------------------------------------------------------------------------------------- export


def export(
    dataset_dir: str,
    config: str,
    split: str,
    out_dir: str,
    *,
    seed: int = 0,
    documents: int | None = None,
    per_task: int = 5,
    controls: int | None = None,
    workers: int | None = None,
    per_k: int | None = None,
    block_sizes: Sequence[int] | None = None,
    overwrite: bool = False,
    instructions: str | None = None,
    practice: int = 0,
    unprobed: bool = False,
) -> dict:
    """Write an export folder (:data:`EXPORT_FILES`); returns the key. ``instructions``: a Markdown file (the
    default text of the task kind when None); ``practice``: practice items for the in-lab app and the MTurk HIT;
    ``unprobed``: a probe-* config's documents before the probe (the baseline of INSteD's Table 7 human row:
    with the same seed and --documents, the same documents as the probe study)."""
    from annotation import formats, tasks
    from annotation import instructions as guide

    # a probe-* config (`incoherent probes`) asks the intruder question of its probed documents
    kind = (
        "intruder"
        if config.startswith(("intruder-", "probe-"))
        else "pair"
        if config.startswith("shuffle-")
        else None
    )
    if kind is None:
        raise InputError(f"--config: {config!r} is neither an intruder-*, probe-* nor a shuffle-* config")
    if per_task < 1 or per_task > formats.MAX_ITEMS:
        raise InputError(f"--per-task: must be 1..{formats.MAX_ITEMS}, got {per_task}")
    if kind == "intruder" and (per_k is not None or block_sizes):
        raise InputError("--per-k/--block-sizes: only for shuffle configs (use --documents)")
    if kind == "pair" and documents is not None:
        raise InputError("--documents: only for intruder configs (use --per-k)")
    if not 0 <= practice <= MAX_PRACTICE:
        raise InputError(f"--practice: must be 0..{MAX_PRACTICE}, got {practice}")
    text = guide.read(instructions, kind)
    try:
        leaked = json.loads(text)
    except (ValueError, RecursionError):
        leaked = None
    if isinstance(leaked, dict) and leaked.get("format") == KEY_FORMAT:
        raise InputError(
            f"--instructions: {instructions} is the key of an export (the gold answers); annotators would see it"
        )
    if unprobed and not config.startswith("probe-"):
        raise InputError(
            f"--unprobed: only for probe-* configs (the documents before the probe), not {config}"
        )
    rows = read_rows(dataset_dir, config, split)
    if unprobed:
        from filters.probe_metrics import unprobed as before_the_probe

        rows = [dict(r, sentences=before_the_probe(r)) for r in rows]
    train: list[dict] | None = None
    if kind == "intruder":
        controls = (
            (0 if config.startswith("probe-") else 1) if controls is None else controls
        )  # probes: no train split
        workers = workers or 5
        if not 0 <= controls < per_task:
            raise InputError(f"--controls: must be 0..{per_task - 1} (fewer than --per-task), got {controls}")
        chosen = tasks.select(rows, seed, documents)
        pool, rule = [], None
        if controls:
            try:
                train = rows if split == "train" else read_rows(dataset_dir, config, "train")
            except InputError as exc:
                raise InputError(f"{exc}; control items come from it (--controls 0 for none)") from None
            pool, rule = tasks.control_pool(train, {r["id"] for r in chosen}, seed)
            if len(pool) < controls:
                raise InputError(
                    f"--controls: {controls} control items per task, but the train split of {config} has only "
                    f"{len(pool)} incoherent documents outside the study"
                )
        task_list, key_items = tasks.intruder_tasks(
            chosen, pool, seed=seed, per_task=per_task, controls=controls
        )
    else:
        controls, workers = (1 if controls is None else controls), workers or 2
        if not 0 <= controls < per_task:
            raise InputError(f"--controls: must be 0..{per_task - 1} (fewer than --per-task), got {controls}")
        rule, pool = (PAIR_CONTROL_RULE if controls else None), []
        found = sorted({int(r["block_size"]) for r in rows})
        missing = sorted(set(block_sizes or ()) - set(found))
        if missing:
            raise InputError(
                f"--block-sizes: {', '.join(map(str, missing))} not in split '{split}' of {config} "
                f"(found: {', '.join(map(str, found))})"
            )
        chosen = tasks.select_pairs(rows, seed, per_k, block_sizes)
        if controls:  # documents outside the study: the train split, else the split's documents not chosen
            if split != "train":
                try:
                    train = read_rows(dataset_dir, config, "train")
                except InputError:
                    train = None
            studied = {r["id"] for r in chosen}
            pool = tasks.pair_control_pool(train if train is not None else rows, studied, seed)
            if len(pool) < controls:
                raise InputError(
                    f"--controls: {controls} check pairs per task, but {config} has only {len(pool)} documents "
                    "outside the study (choose fewer with --per-k, or --controls 0 for none)"
                )
        task_list, key_items = tasks.pair_tasks(
            chosen, seed=seed, per_task=per_task, controls=controls, controls_pool=pool
        )
    if not task_list:
        raise InputError(f"{os.path.join(dataset_dir, config)}: no documents to annotate in split '{split}'")
    meta = {
        "config": config,
        "split": split,
        "seed": seed,
        "per_task": per_task,
        "controls": controls,
        "control_rule": rule,
        "workers": workers,
        "documents": len(chosen),
        **({"unprobed": True} if unprobed else {}),
    }
    practice_items: list[dict] = []
    if practice:
        # from the train split where the config has one, else from the documents of the split not under study
        source = "train" if train is not None else split
        if train is None and split != "train":
            try:
                train, source = read_rows(dataset_dir, config, "train"), "train"
            except InputError:
                pass
        busy = {item["id"] for item in key_items.values()}  # documents under study and the controls dealt
        practice_items, practice_key = tasks.practice_items(
            kind, rows if train is None else train, busy, seed, practice
        )
        if len(practice_items) < practice:
            raise InputError(
                f"--practice: {practice} practice items, but the {source} split of {config} has only "
                f"{len(practice_items)} documents outside the study and its control items"
            )
    tasks_doc, key = tasks.documents(
        kind, task_list, key_items, meta, instructions=text, practice=practice_items
    )
    if practice_items:
        key["practice"] = dict(sorted(practice_key.items()))
    answers = os.path.join(out_dir, "answers")
    if os.path.isdir(answers) and os.listdir(answers):
        raise InputError(f"{answers}: holds answers to an earlier export; export to another folder")
    prepare_out(out_dir, EXPORT_FILES, overwrite, owner="key.json")
    write_json(os.path.join(out_dir, "tasks.json"), tasks_doc)
    write_json(os.path.join(out_dir, "key.json"), key)
    write_text(os.path.join(out_dir, "mturk", "input.csv"), formats.mturk_input_csv(tasks_doc))
    write_text(
        os.path.join(out_dir, "mturk", "template.html"),
        formats.mturk_template(
            kind, practice_items, preamble=guide.mturk_block(guide.read(instructions, kind, "mturk"))
        ),
    )
    ls_config, ls_tasks = guide.with_labelstudio_instructions(
        formats.labelstudio_config(kind),
        formats.labelstudio_tasks(tasks_doc),
        guide.read(instructions, kind, "labelstudio"),
    )
    write_json(os.path.join(out_dir, "labelstudio", "tasks.json"), ls_tasks)
    write_text(os.path.join(out_dir, "labelstudio", "config.xml"), ls_config)
    write_text(os.path.join(out_dir, "instructions.html"), guide.to_html(text))
    return key


# ---------------------------------------------------------------------------------------------- import


def _lab_files(paths: Sequence[str]) -> list[str]:
    """ANSWERS of ``--format lab`` may be ``.jsonl`` files or folders of them (``TASKS_DIR/answers``)."""
    out = []
    for path in paths:
        if os.path.isdir(path):
            out += sorted(glob.glob(os.path.join(path, "*.jsonl")))
        else:
            out.append(path)
    return out


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
    from annotation import agreement, formats, mturk_review

    if fmt not in FORMATS:
        raise InputError(f"--format: one of {', '.join(FORMATS)}, got {fmt!r}")
    if not 0.0 <= max_control_errors <= 1.0:
        raise InputError(f"--max-control-errors: must be in [0, 1], got {max_control_errors}")
    if fmt == "insted":
        key, records = formats.insted_key((p, read_text(p)) for p in paths)
        collector = formats.Collector(key)
        formats.parse_insted(records, collector)
    else:
        if not key_path:
            raise InputError(f"--key: needed with --format {fmt} (the export folder or its key.json)")
        if os.path.isdir(key_path):
            key_path = os.path.join(key_path, "key.json")
        key = check_key(read_json(key_path, "the key of an `annotate export`"), key_path)
        collector = formats.Collector(key)
        parser = {
            "mturk": formats.parse_mturk,
            "labelstudio": formats.parse_labelstudio,
            "lab": formats.parse_lab,
        }[fmt]
        files = _lab_files(paths) if fmt == "lab" else list(paths)
        if not files:
            raise InputError(f"ANSWERS: no answer files in {', '.join(paths)}")
        for path in files:
            parser(read_text(path), path, collector)
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
        dumps_line({f: r[f] for f in REJECTED_FIELDS}, sort_keys=True, default=str)
        for r in collector.rejected
    ]
    write_text(os.path.join(out_dir, "rejected.jsonl"), "".join(line + "\n" for line in rejected))
    write_json(os.path.join(out_dir, "import.json"), summary)
    return summary


def _nothing_kept(fmt: str, paths: Sequence[str], collector) -> str:
    """The one line of an import that kept no answer: for MTurk, the answer columns expected and found."""
    from annotation import formats

    reasons = {}
    for r in collector.rejected:
        reasons[r["reason"]] = reasons.get(r["reason"], 0) + 1
    counted = ", ".join(f"{k}: {v}" for k, v in sorted(reasons.items())) or "nothing read"
    line = f"{', '.join(paths)}: no answers kept ({counted})"
    if fmt == "mturk":
        found = ", ".join(sorted(collector.answer_columns)) or "none"
        line += f"; answer columns expected: {', '.join(formats.MTURK_ANSWER_SHAPES)}; found: {found}"
    return line


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
    answers, skipped = [], 0
    items = key.get("items") or {}
    for line in read_text(os.path.join(study_dir, "answers.jsonl")).splitlines():
        if not line.strip():
            continue
        record, _, _ = load_line(line)  # not JSON, too deep, a lone surrogate: None, skipped and counted
        if (
            isinstance(record, dict)
            and isinstance(record.get("item_id"), str)
            and record["item_id"] in items
            and isinstance(record.get("answer"), int)
            and isinstance(record.get("worker"), str)
            and isinstance(record.get("task_id"), str)
        ):
            answers.append(record)
        else:
            skipped += 1
    summary["skipped_lines"] = skipped
    return key, answers, summary


# ---------------------------------------------------------------------------------------------- report


def read_predictions(path: str, key: dict) -> tuple[dict[str, int], str]:
    """Model answers by item id: ``evaluate --predictions`` JSONL (``id``, ``predicted_index``) for intruder
    studies, a ``score-shuffle`` output folder (``scores/``, ``correct``) for pairs."""
    by_doc: dict[tuple, str] = {}
    for iid, item in key["items"].items():
        if item["role"] == "test":
            by_doc[(item["id"], item.get("block_size"), item.get("permutation"))] = iid
    out: dict[str, int] = {}
    if key["kind"] == "intruder":
        for number, line in enumerate(read_text(path).splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                doc, predicted = record["id"], int(record["predicted_index"])
                if not isinstance(doc, str):
                    raise TypeError(doc)
            except (KeyError, TypeError, ValueError, RecursionError):
                raise InputError(
                    f"{path}:{number}: not an `evaluate --predictions` line (id, predicted_index)"
                ) from None
            if (doc, None, None) in by_doc:
                out[by_doc[(doc, None, None)]] = predicted
        return out, path
    import pyarrow.parquet as pq

    files = sorted(glob.glob(os.path.join(path, "scores", "*.parquet")))
    if not files:
        raise InputError(f"{path}: no scores/*.parquet (a `score-shuffle` output folder is needed for pairs)")
    for f in files:
        for row in pq.read_table(f, columns=["id", "block_size", "permutation", "correct"]).to_pylist():
            iid = by_doc.get((row["id"], row["block_size"], row["permutation"]))
            if iid is not None:  # the model's answer in the key's terms: the text it finds original
                gold = key["items"][iid]["gold"]
                out[iid] = gold if row["correct"] else 1 - gold
    return out, path


def report(
    study_dir: str,
    min_agreement: int = 3,
    predictions: str | None = None,
    allow_fewer_annotators: bool = False,
    baseline: dict | None = None,
) -> dict:
    """Write ``report.json`` and ``figures/`` into the import folder; returns the report. ``baseline``: the
    study's Table 7 human row against a baseline study (:func:`annotation.table7.human_row`), kept in it.

    When no document has ``min_agreement`` annotators (nothing could be kept), it stops with one line unless
    ``allow_fewer_annotators``."""
    from annotation import agreement
    from annotation import report as text

    if min_agreement < 1:
        raise InputError(f"--min-agreement: must be >= 1, got {min_agreement}")
    key, answers, summary = read_study(study_dir)
    result = agreement.summarise(answers, key, min_agreement)
    most = result["annotators_per_document"]["max"] or 0
    if most < min_agreement and not allow_fewer_annotators:
        raise InputError(
            f"--min-agreement: {min_agreement} annotators must agree to keep a document, but no document has "
            f"more than {most} (pass --min-agreement {most} or fewer, or --allow-fewer-annotators to report anyway)"
        )
    result["platform"] = summary.get("platform")
    result["excluded_assignments"] = summary.get("excluded_assignments", [])
    result["skipped_lines"] = summary["skipped_lines"]
    if baseline is not None:
        result["baseline"] = baseline
    if predictions:
        model_answers, name = read_predictions(predictions, key)
        result["model"] = {
            "predictions": os.path.basename(name.rstrip("/")),
            **agreement.with_model(result, model_answers),
        }
    _check_places(study_dir, ("report.json", "figures/gold_agreement.png", "figures/model_by_agreement.png"))
    if os.path.islink(os.path.join(study_dir, "figures")):
        os.remove(os.path.join(study_dir, "figures"))  # a linked folder is replaced, never written through
    result["figures"] = text.write_figures(result, study_dir)
    write_json(os.path.join(study_dir, "report.json"), result)
    return result


# ------------------------------------------------------------------------------------------- verified split


def verify(study_dir: str, dataset_dir: str, split_name: str | None = None) -> dict:
    """Write the kept documents as ``<config>/<split>_verified-00000-of-00001.parquet`` (the config's schema),
    ``human_verification/<config>.json``, and the card again; returns the verification record."""
    import pyarrow as pa

    from annotation.report import VERIFICATION_DIR
    from schemas.tables import schema_for

    key, _, summary = read_study(study_dir)
    result = read_json(os.path.join(study_dir, "report.json"), "run `annotate report` first")
    reported = result.get("items") if isinstance(result, dict) else None
    figures_listed = result.get("figures", []) if isinstance(result, dict) else None
    if not isinstance(figures_listed, list) or not all(isinstance(f, str) for f in figures_listed):
        reported = None
    if not isinstance(reported, dict) or not all(
        iid in key["items"] and isinstance(p, dict) and isinstance(p.get("id"), str) and "kept" in p
        for iid, p in reported.items()
    ):
        raise InputError(
            f"{os.path.join(study_dir, 'report.json')}: not a report of `annotate report` on these answers "
            "(run it again)"
        )
    config, split = key.get("config"), key.get("split")
    if not config:
        raise InputError(f"{study_dir}: these answers come from no export of this dataset (INSteD's file?)")
    if key.get("unprobed"):
        raise InputError(
            f"{study_dir}: an --unprobed export's documents are in no table of the dataset (they are the baseline "
            "of `annotate report --baseline`); verify the probe study itself"
        )
    split_name = f"{split}_verified" if split_name is None else split_name
    if not is_safe_name(split_name) or "-" in split_name:
        raise InputError(f"--split-name: {split_name!r} must be letters, digits, '_' or '.'")
    rows = read_rows(dataset_dir, config, split)
    kept = {
        (p["id"], key["items"][iid].get("block_size"), key["items"][iid].get("permutation"))
        for iid, p in result["items"].items()
        if p["kept"]
    }
    chosen = [r for r in rows if (r["id"], r.get("block_size"), r.get("permutation")) in kept]
    if len(chosen) != len(kept):
        raise InputError(
            f"{os.path.join(dataset_dir, config)}: {len(kept) - len(chosen)} kept documents are not in split '{split}' (another dataset?)"
        )
    if not chosen:
        raise InputError(
            f"{study_dir}: report.json keeps no document (min agreement {result.get('min_agreement')}); "
            "no split of 0 rows is written"
        )
    for r in chosen:
        r["split"] = split_name
    for folder in (os.path.join(dataset_dir, config), os.path.join(dataset_dir, VERIFICATION_DIR)):
        if os.path.islink(folder):
            raise InputError(f"{folder}: a link; verify writes only into folders of the dataset itself")
    marker = os.path.join(dataset_dir, VERIFICATION_DIR, f"{config}.json")
    written = _written_by_verify(dataset_dir, marker)
    existing = sorted(glob.glob(os.path.join(dataset_dir, config, f"{split_name}-*.parquet")))
    for path in existing:
        rel = os.path.relpath(path, dataset_dir).replace(os.sep, "/")
        if split_name == split or written.get(rel) != _sha256(path):
            raise InputError(
                f"{path}: split '{split_name}' was not written by `annotate verify` (or changed since); "
                "it is never replaced (choose another --split-name)"
            )
    figures = [f"{VERIFICATION_DIR}/{config}-{os.path.basename(rel)}" for rel in result.get("figures", [])]
    _check_places(  # before anything is written or removed: no half-written verification
        dataset_dir,
        [
            f"{config}/{split_name}-00000-of-00001.parquet",
            f"{VERIFICATION_DIR}/{config}.json",
            f"{VERIFICATION_DIR}/{config}-answers.jsonl",
            *figures,
        ],
    )
    for path in existing:
        os.remove(path)
        written.pop(os.path.relpath(path, dataset_dir).replace(os.sep, "/"), None)
    schema = schema_for(config)
    table = pa.Table.from_pylist(chosen, schema=schema)
    path = os.path.join(dataset_dir, config, f"{split_name}-00000-of-00001.parquet")
    replace_file(path, parquet_bytes(table))  # a link planted at the split's name is replaced
    written[os.path.relpath(path, dataset_dir).replace(os.sep, "/")] = _sha256(path)
    make_folder(os.path.join(dataset_dir, VERIFICATION_DIR))  # a link there is replaced by a folder
    release = None
    if key["kind"] == "intruder":  # the per-document answers in INSteD's released format, beside the record
        _, answers, _ = read_study(study_dir)
        release = f"{VERIFICATION_DIR}/{config}-answers.jsonl"
        write_text(os.path.join(dataset_dir, release), release_text(key, answers))
    record = {
        "config": config,
        "source_split": split,
        "verified_split": split_name,
        "rows": len(chosen),
        "protocol": {
            "platform": summary.get("platform"),
            "per_task": key.get("per_task"),
            "controls": key.get("controls"),
            "control_rule": key.get("control_rule"),
            "workers_planned": key.get("workers"),  # the export's --workers; who answered is below
            "annotators_per_document": result.get("annotators_per_document"),
            "seed": key.get("seed"),
            "export_id": key["export_id"],
            "max_control_errors": summary.get("max_control_errors"),
            "excluded_assignments": len(summary.get("excluded_assignments", [])),
            **control_failures(summary),
        },
        "report": {k: v for k, v in result.items() if k not in ("items", "figures")},
    }
    # the card clears figures/ when it is written: the study's figures go beside the record
    for stale in glob.glob(os.path.join(dataset_dir, VERIFICATION_DIR, f"{config}-*.png")):
        os.remove(stale)
    figures = []
    for rel in result.get("figures", []):
        name = f"{config}-{os.path.basename(rel)}"
        with open(os.path.join(study_dir, rel), "rb") as src:
            data = src.read()
        write_bytes(os.path.join(dataset_dir, VERIFICATION_DIR, name), data)
        figures.append(f"{VERIFICATION_DIR}/{name}")
    record["figures"] = figures
    record["answers"] = release
    record["skipped_lines"] = summary["skipped_lines"]  # lines of answers.jsonl that are not answers
    record["written"] = dict(sorted(written.items()))
    write_json(marker, record)
    return record


def control_failures(summary: dict) -> dict:
    """What the import found on the check documents (control items): assignments, how many of them answered
    more than ``max_control_errors`` of their check documents wrong, and how many of those are still among the
    answers (imported without ``--exclude-failing``).

    >>> control_failures({"assignments": {"a": {}, "b": {}}, "failing_assignments": ["b"], "excluded_assignments": []})
    {'assignments': 2, 'failing_assignments': 1, 'failing_kept': 1}
    """
    failing = summary.get("failing_assignments") or []
    excluded = set(summary.get("excluded_assignments") or [])
    return {
        "assignments": len(summary.get("assignments") or {}),
        "failing_assignments": len(failing),
        "failing_kept": sum(name not in excluded for name in failing),
    }


def _sha256(path: str) -> str:
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _written_by_verify(dataset_dir: str, marker: str) -> dict[str, str]:
    """The split files earlier runs of `annotate verify` wrote for a config, with their sha256 (its record)."""
    try:
        with open(marker, encoding="utf-8") as f:
            record = json.load(f)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, RecursionError):
        raise InputError(f"{marker}: not a record of `annotate verify`") from None
    written = record.get("written") if isinstance(record, dict) else None
    if not isinstance(written, dict):
        return {}
    return {k: v for k, v in written.items() if isinstance(k, str) and isinstance(v, str)}


# ---------------------------------------------------------------------------------------------- release


def _write_out_file(out_path: str, study_dir: str, text: str, overwrite: bool, command: str) -> None:
    """``--out FILE`` of review and release: never a file of the study, and an existing file only with
    ``--overwrite`` and only the command's own earlier output (:func:`sources.outputs.check_output_file`); a
    link there is never written through."""
    if not out_path.strip():
        raise InputError("--out: an empty path; name the file to write")
    if os.path.isdir(out_path):
        raise InputError(f"{out_path}: a folder; --out names the file to write")
    real = os.path.realpath(out_path)
    study = os.path.realpath(study_dir)
    if os.path.dirname(real) == study and os.path.basename(real) in (*IMPORT_FILES, "report.json"):
        raise InputError(f"{out_path}: a file of the study folder {study_dir}; write elsewhere")
    _check_not_below_a_file(out_path)
    folder = os.path.dirname(real)
    for level in (folder, os.path.dirname(folder)):  # an export (its key.json) or an import (its import.json)
        if _owned(os.path.join(level, "key.json")) or _owned(os.path.join(level, "import.json")):
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
    _write_out_file(out_path, study_dir, text, overwrite, "annotate release")
    return text.count("\n"), summary["skipped_lines"]


# ----------------------------------------------------------------------------------------------- review


def review(
    study_dir: str,
    out_path: str,
    *,
    min_seconds: float | None = None,
    overwrite: bool = False,
) -> dict:
    """The MTurk results an import read, with ``Approve`` (``x``) or ``Reject`` (the reason) filled for every
    submitted assignment, as MTurk's "Upload CSV" of a batch's review takes them back; returns the decisions.

    An assignment is rejected when its share of wrong control answers is above the import's
    ``--max-control-errors``, when none of its answers could be used, or when its median seconds per item is
    below ``min_seconds`` (None: the reading floor of its HIT, :func:`annotation.mturk_review.reading_floor`;
    0: off); assignments already approved or rejected are left as they are.
    """
    from annotation import mturk_review

    key, _, summary = read_study(study_dir)
    if summary.get("format") != "mturk":
        raise InputError(
            f"{study_dir}: review needs an import of MTurk results (this one read {summary.get('format')})"
        )
    if min_seconds is not None and not (min_seconds >= 0 and min_seconds < float("inf")):
        raise InputError(f"--min-seconds: must be a number >= 0, got {min_seconds}")
    text = read_text(os.path.join(study_dir, MTURK_RESULTS))
    assignments = summary.get("assignments") or {}
    limit = summary.get("max_control_errors")
    fields = ("answers", "controls", "control_errors", "failing", "seconds", "median_seconds")
    if (
        type(limit) not in (int, float)
        or not 0 <= limit <= 1
        or not isinstance(assignments, dict)
        or not all(isinstance(a, dict) and all(f in a for f in fields) for a in assignments.values())
    ):
        raise InputError(
            f"{os.path.join(study_dir, 'import.json')}: not what `annotate import` wrote (import again)"
        )
    decisions = mturk_review.review_decisions(
        text, assignments, limit, min_seconds, os.path.join(study_dir, MTURK_RESULTS), key["kind"]
    )
    _write_out_file(out_path, study_dir, decisions["csv"], overwrite, "annotate review")
    return decisions


def load_verifications(dataset_dir: str) -> list[dict]:
    """The ``human_verification/*.json`` records of a dataset, by config name."""
    from annotation.report import VERIFICATION_DIR

    out = []
    for path in sorted(glob.glob(os.path.join(dataset_dir, VERIFICATION_DIR, "*.json"))):
        with open(path, encoding="utf-8") as f:
            out.append(json.load(f))
    return out


def card_lines(dataset_dir: str) -> list[str]:
    """The dataset card's "Human verification" section of a local dataset (none when nothing was verified)."""
    from annotation.report import card_section

    return card_section(load_verifications(dataset_dir))
