"""``annotate verify``: the kept documents as a verified split of the dataset, the protocol beside it, and the
card's human-verification section.
"""

from __future__ import annotations

import glob
import json
import os

from incoherent.annotation.release import release_text
from incoherent.annotation.study import (
    check_places,
    parquet_bytes,
    read_json,
    read_rows,
    read_study,
    write_bytes,
    write_json,
    write_text,
)
from incoherent.fileio.outputs import make_folder, replace_file
from incoherent.fileio.paths import is_safe_name
from incoherent.schemas.records import InputError


def verify(study_dir: str, dataset_dir: str, split_name: str | None = None) -> dict:
    """Write the kept documents as ``<config>/<split>_verified-00000-of-00001.parquet`` (the config's schema),
    ``human_verification/<config>.json``, and the card again; returns the verification record."""
    import pyarrow as pa

    from incoherent.annotation.report import VERIFICATION_DIR
    from incoherent.schemas.tables import schema_for

    key, _, summary = read_study(study_dir)
    result = _checked_report(study_dir, key)
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
    check_places(  # before anything is written or removed: no half-written verification
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
    record = _verification_record(key, summary, result, split_name, len(chosen))
    figures = _copy_figures(study_dir, dataset_dir, config, result)
    record["figures"] = figures
    record["answers"] = release
    record["skipped_lines"] = summary["skipped_lines"]  # lines of answers.jsonl that are not answers
    record["written"] = dict(sorted(written.items()))
    write_json(marker, record)
    return record


def _checked_report(study_dir: str, key: dict) -> dict:
    """``report.json`` of the study, refused in one line unless `annotate report` wrote it on these answers."""
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
    return result


def _verification_record(key: dict, summary: dict, result: dict, split_name: str, rows: int) -> dict:
    """``human_verification/<config>.json`` but its figures, answers and files: the splits, protocol, report."""
    config, split = key.get("config"), key.get("split")
    return {
        "config": config,
        "source_split": split,
        "verified_split": split_name,
        "rows": rows,
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


def _copy_figures(study_dir: str, dataset_dir: str, config: str, result: dict) -> list[str]:
    """The study's figures beside the record (``<config>-<name>.png``), the config's earlier ones removed."""
    from incoherent.annotation.report import VERIFICATION_DIR

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
    return figures


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


def load_verifications(dataset_dir: str) -> list[dict]:
    """The ``human_verification/*.json`` records of a dataset, by config name."""
    from incoherent.annotation.report import VERIFICATION_DIR

    out = []
    for path in sorted(glob.glob(os.path.join(dataset_dir, VERIFICATION_DIR, "*.json"))):
        with open(path, encoding="utf-8") as f:
            out.append(json.load(f))
    return out


def card_lines(dataset_dir: str) -> list[str]:
    """The dataset card's "Human verification" section of a local dataset (none when nothing was verified)."""
    from incoherent.annotation.report import card_section

    return card_section(load_verifications(dataset_dir))
