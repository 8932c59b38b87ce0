"""Reading an intruder build (``DATA_DIR/intruder-<source>/<split>-*.parquet``) for training and evaluation."""

from __future__ import annotations

import glob
import os

from incoherent.corpora.seeding import stable_hash
from incoherent.schemas.records import InputError
from incoherent.sources import parquet

COLUMNS = ("id", "source", "sentences", "label", "intruder_index", "split")
VALIDATION_SHARE = 0.1


def split_files(data_dir: str, split: str) -> list[str]:
    """The Parquet files of one split across every ``intruder-*`` config of a build."""
    if not os.path.isdir(data_dir):
        raise InputError(f"{data_dir}: no such directory")
    configs = sorted(glob.glob(os.path.join(data_dir, "intruder-*")))
    if not configs:
        raise InputError(f"{data_dir}: no intruder-*/ tables (write them with `incoherent intruders`)")
    return sorted(f for c in configs for f in glob.glob(os.path.join(c, f"{split}-*.parquet")))


def available_splits(data_dir: str) -> list[str]:
    split_files(data_dir, "*")
    names = {
        os.path.basename(p).split("-", 1)[0]
        for p in glob.glob(os.path.join(data_dir, "intruder-*", "*.parquet"))
    }
    return sorted(names)


def read_split(data_dir: str, split: str) -> list[dict]:
    """Rows (``id``, ``sentences``, ``label``, ``intruder_index`` ...) of one split, sorted by id."""

    files = split_files(data_dir, split)
    if not files:
        raise InputError(
            f"{data_dir}: no '{split}' split in the intruder tables (found: {', '.join(available_splits(data_dir)) or 'none'})"
        )
    rows = []
    for path in files:
        table = parquet.read_table(path)
        missing = {"id", "sentences", "intruder_index"} - set(table.column_names)
        if missing:
            raise InputError(f"{path}: not an intruder table, missing columns {sorted(missing)}")
        rows.extend(table.select([c for c in COLUMNS if c in table.column_names]).to_pylist())
    return sorted(rows, key=lambda r: r["id"])


def carve_validation(rows: list[dict], share: float = VALIDATION_SHARE) -> tuple[list[dict], list[dict]]:
    """Deterministic ``(train, validation)``: the ``share`` of rows with the smallest stable hash of their id.

    >>> train, validation = carve_validation([{"id": str(i)} for i in range(20)])
    >>> len(train), len(validation)
    (18, 2)
    """
    ranked = sorted(rows, key=lambda r: (stable_hash("filter-validation", r["id"]), r["id"]))
    n = max(1, round(len(rows) * share)) if len(rows) > 1 else 0
    held = {r["id"] for r in ranked[:n]}
    return [r for r in rows if r["id"] not in held], [r for r in rows if r["id"] in held]
