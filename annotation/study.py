"""Files of an annotation study: export, import, report and the verified split (local folders; no Beam).

Every JSON file is written with sorted keys and a final newline, every Parquet file with the config's explicit
schema, so the same inputs give byte-identical files.
"""

from __future__ import annotations

import glob
import json
import os
from collections.abc import Sequence

from schemas.annotation import ANSWER_FIELDS, KEY_FORMAT, REJECTED_FIELDS
from schemas.records import InputError
from sources import parquet
from sources.outputs import entries, make_folder, replace_file, replace_text
from sources.paths import is_safe_name

EXPORT_FILES = (
    "tasks.json",
    "key.json",
    "mturk/input.csv",
    "mturk/template.html",
    "labelstudio/tasks.json",
    "labelstudio/config.xml",
)
IMPORT_FILES = ("key.json", "answers.jsonl", "rejected.jsonl", "import.json")
FORMATS = ("mturk", "labelstudio", "lab", "insted")


def write_text(path: str, text: str) -> None:
    """Write a study's file whole; a link at ``path`` is replaced, never written through."""
    replace_text(path, text)


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
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file ({what})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not JSON ({what}: {exc})") from None


def read_text(path: str) -> str:
    try:
        with open(path, encoding="utf-8-sig") as f:
            return f.read()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text") from None


def prepare_out(out_dir: str, ours: Sequence[str], overwrite: bool) -> None:
    """Refuse a non-empty folder unless ``overwrite``; then only the files named in ``ours`` are replaced."""
    if os.path.isfile(out_dir):
        raise InputError(f"{out_dir}: output path is a file, not a directory")
    if entries(out_dir) and not overwrite:
        raise InputError(f"{out_dir}: output directory is not empty (pass --overwrite to replace it)")
    os.makedirs(out_dir, exist_ok=True)
    for rel in ours:
        if os.path.isfile(os.path.join(out_dir, rel)):
            os.remove(os.path.join(out_dir, rel))


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
) -> dict:
    """Write an export folder (:data:`EXPORT_FILES`); returns the key."""
    from annotation import formats, tasks

    kind = "intruder" if config.startswith("intruder-") else "pair" if config.startswith("shuffle-") else None
    if kind is None:
        raise InputError(f"--config: {config!r} is neither an intruder-* nor a shuffle-* config")
    if per_task < 1 or per_task > formats.MAX_ITEMS:
        raise InputError(f"--per-task: must be 1..{formats.MAX_ITEMS}, got {per_task}")
    if kind == "intruder" and (per_k is not None or block_sizes):
        raise InputError("--per-k/--block-sizes: only for shuffle configs (use --documents)")
    if kind == "pair" and documents is not None:
        raise InputError("--documents: only for intruder configs (use --per-k)")
    rows = read_rows(dataset_dir, config, split)
    if kind == "intruder":
        controls = 1 if controls is None else controls
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
        if controls:
            raise InputError("--controls: shuffle pairs have no control items")
        controls, rule, workers = 0, None, workers or 2
        chosen = tasks.select_pairs(rows, seed, per_k, block_sizes)
        task_list, key_items = tasks.pair_tasks(chosen, seed=seed, per_task=per_task)
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
    }
    tasks_doc, key = tasks.documents(kind, task_list, key_items, meta)
    answers = os.path.join(out_dir, "answers")
    if os.path.isdir(answers) and os.listdir(answers):
        raise InputError(f"{answers}: holds answers to an earlier export; export to another folder")
    prepare_out(out_dir, EXPORT_FILES, overwrite)
    write_json(os.path.join(out_dir, "tasks.json"), tasks_doc)
    write_json(os.path.join(out_dir, "key.json"), key)
    write_text(os.path.join(out_dir, "mturk", "input.csv"), formats.mturk_input_csv(tasks_doc))
    write_text(os.path.join(out_dir, "mturk", "template.html"), formats.mturk_template(kind))
    write_json(os.path.join(out_dir, "labelstudio", "tasks.json"), formats.labelstudio_tasks(tasks_doc))
    write_text(os.path.join(out_dir, "labelstudio", "config.xml"), formats.labelstudio_config(kind))
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
    from annotation import agreement, formats

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
        key = read_json(key_path, "the key of an `annotate export`")
        if key.get("format") != KEY_FORMAT:
            raise InputError(f"{key_path}: not the key of an `annotate export`")
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
    qc = agreement.quality_control(collector.answers, key, max_control_errors)
    failing = sorted(w for w, row in qc.items() if row["failing"])
    answers = collector.answers
    if exclude_failing:
        for a in answers:
            if a["worker"] in failing:
                collector.reject(
                    "excluded_worker", a["origin"], f"worker {a['worker']} failed control items", a["answer"]
                )
        answers = [a for a in answers if a["worker"] not in failing]
    order = {iid: n for n, iid in enumerate(key["items"])}
    answers.sort(key=lambda a: (a["task_id"], order[a["item_id"]], a["worker"]))
    rejected_counts: dict[str, int] = {}
    for r in collector.rejected:
        rejected_counts[r["reason"]] = rejected_counts.get(r["reason"], 0) + 1
    summary = {
        "format": fmt,
        "files": [os.path.basename(p) for p in paths],
        "export_id": key["export_id"],
        "answers_read": len(collector.answers)
        + sum(v for k, v in rejected_counts.items() if k != "excluded_worker"),
        "answers_kept": len(answers),
        "rejected": dict(sorted(rejected_counts.items())),
        "max_control_errors": max_control_errors,
        "failing_workers": failing,
        "excluded_workers": failing if exclude_failing else [],
        "workers": qc,
        "platform": {"mturk": "Amazon Mechanical Turk", "labelstudio": "Label Studio", "lab": "in-lab"}.get(
            fmt, "INSteD's released annotations"
        ),
    }
    prepare_out(out_dir, IMPORT_FILES, overwrite)
    write_json(os.path.join(out_dir, "key.json"), key)
    lines = [
        json.dumps({f: a[f] for f in ANSWER_FIELDS}, sort_keys=True, ensure_ascii=False) for a in answers
    ]
    write_text(os.path.join(out_dir, "answers.jsonl"), "".join(line + "\n" for line in lines))
    rejected = [
        json.dumps({f: r[f] for f in REJECTED_FIELDS}, sort_keys=True, ensure_ascii=False, default=str)
        for r in collector.rejected
    ]
    write_text(os.path.join(out_dir, "rejected.jsonl"), "".join(line + "\n" for line in rejected))
    write_json(os.path.join(out_dir, "import.json"), summary)
    return summary


def read_study(study_dir: str) -> tuple[dict, list[dict], dict]:
    """``(key, answers, import summary)`` of an import folder."""
    key = read_json(os.path.join(study_dir, "key.json"), "an `annotate import` folder")
    summary = read_json(os.path.join(study_dir, "import.json"), "an `annotate import` folder")
    answers = [
        json.loads(line) for line in read_text(os.path.join(study_dir, "answers.jsonl")).splitlines() if line
    ]
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
            except (json.JSONDecodeError, KeyError, TypeError, ValueError):
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


def report(study_dir: str, min_agreement: int = 3, predictions: str | None = None) -> dict:
    """Write ``report.json`` and ``figures/`` into the import folder; returns the report."""
    from annotation import agreement
    from annotation import report as text

    if min_agreement < 1:
        raise InputError(f"--min-agreement: must be >= 1, got {min_agreement}")
    key, answers, summary = read_study(study_dir)
    result = agreement.summarise(answers, key, min_agreement)
    result["platform"] = summary["platform"]
    result["excluded_workers"] = summary["excluded_workers"]
    if predictions:
        model_answers, name = read_predictions(predictions, key)
        result["model"] = {
            "predictions": os.path.basename(name.rstrip("/")),
            **agreement.with_model(result, model_answers),
        }
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
    config, split = key.get("config"), key.get("split")
    if not config:
        raise InputError(f"{study_dir}: these answers come from no export of this dataset (INSteD's file?)")
    split_name = split_name or f"{split}_verified"
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
    for r in chosen:
        r["split"] = split_name
    marker = os.path.join(dataset_dir, VERIFICATION_DIR, f"{config}.json")
    existing = glob.glob(os.path.join(dataset_dir, config, f"{split_name}-*.parquet"))
    if existing and not os.path.isfile(marker):
        raise InputError(
            f"{existing[0]}: a split '{split_name}' not written by `annotate verify` exists (--split-name)"
        )
    for path in existing:
        os.remove(path)
    schema = schema_for(config)
    table = pa.Table.from_pylist(chosen, schema=schema)
    path = os.path.join(dataset_dir, config, f"{split_name}-00000-of-00001.parquet")
    replace_file(path, parquet_bytes(table))  # a link planted at the split's name is replaced
    make_folder(os.path.join(dataset_dir, VERIFICATION_DIR))
    record = {
        "config": config,
        "source_split": split,
        "verified_split": split_name,
        "rows": len(chosen),
        "protocol": {
            "platform": summary["platform"],
            "per_task": key.get("per_task"),
            "controls": key.get("controls"),
            "control_rule": key.get("control_rule"),
            "workers": key.get("workers"),
            "seed": key.get("seed"),
            "export_id": key["export_id"],
            "max_control_errors": summary["max_control_errors"],
            "excluded_workers": len(summary["excluded_workers"]),
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
        replace_file(os.path.join(dataset_dir, VERIFICATION_DIR, name), data)
        figures.append(f"{VERIFICATION_DIR}/{name}")
    record["figures"] = figures
    write_json(marker, record)
    return record


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
