"""``incoherent export insted DIR --out FILE.jsonl``: intruder tables -> the released INSteD JSONL format.

The released files (``official_wikipedia.jsonl``, ``official_cnn.jsonl`` of github.com/AiliAili/Coherence_Modelling,
whose README defines the fields; the linguistic-probe files there use the same record layout) hold one JSON
object per document::

    {"ctx": "<original document, untouched>", "replace_with": "<intruder sentence>",
     "to_be_replaced": "<original sentence at sen_position>", "train": 1, "file_id": 3081, "sen_position": 3}

- ``file_id`` (int): unique id of the document. We number documents 0..N-1 in a fixed order (source, split,
  id); the mapping to our string ids is kept in the extra field ``id`` (readers of the released format ignore
  unknown keys; ``--no-id`` leaves it out).
- ``ctx`` (str): the **original** document (sentences joined with one space), not the one with the intruder;
  code for the released data applies ``to_be_replaced -> replace_with`` itself.
- ``to_be_replaced`` / ``replace_with`` (str): the original and the intruder sentence; ``""`` for coherent
  documents (the README does not say what coherent records hold there; empty strings keep the type).
- ``sen_position`` (int): 0-based position of the replaced sentence (never 0: the opening sentence is never
  replaced), ``-1`` for a coherent document.
- ``train`` (int): 1 for the train split, 0 for test. The release has no validation split: validation rows
  are written with ``train`` = 1 unless ``--validation-as-test``.
"""

from __future__ import annotations

import argparse
import json

from incoherent.fileio.outputs import check_output_file, write_output_file
from incoherent.pipelines.commands import add_overwrite, list_flag
from incoherent.schemas.records import InputError
from incoherent.sources.parquet import read_open

OUT_IS_FILE = True  # --out names a JSONL file: no folder lock (pipelines.cli)

SEPARATOR = " "


TAKES_BEAM_ARGS = False  # not a Beam pipeline: any Beam flag is an error (pipelines.cli)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "dir", metavar="DIR", help="output of `incoherent intruders` (holds intruder-<source>/)"
    )
    parser.add_argument("--out", required=True, help="JSONL file to write")
    add_overwrite(parser, "--out (the JSONL file)")
    list_flag(parser, "--source", metavar="SOURCE", help="only these sources (default: all)")
    parser.add_argument("--no-id", action="store_true", help="leave out the extra `id` field")
    parser.add_argument(
        "--validation-as-test", action="store_true", help="write validation rows with train = 0 (default 1)"
    )


def original_sentences(row: dict) -> list[str]:
    """The document before the intruder went in."""
    sentences = list(row["sentences"])
    if row["intruder_index"] >= 0:
        sentences[row["intruder_index"]] = row["original_sentence"]
    return sentences


def insted_record(row: dict, file_id: int, validation_train: int = 1, with_id: bool = True) -> dict:
    """One released-format record of an ``INTRUDER_SCHEMA`` row.

    >>> row = {"id": "w:1", "sentences": ["A.", "X.", "C."], "intruder_index": 1, "original_sentence": "B.",
    ...        "intruder_sentence": "X.", "split": "test"}
    >>> insted_record(row, 0, with_id=False)
    {'file_id': 0, 'ctx': 'A. B. C.', 'to_be_replaced': 'B.', 'replace_with': 'X.', 'sen_position': 1, 'train': 0}
    """
    incoherent = row["intruder_index"] >= 0
    train = {"train": 1, "test": 0}.get(row["split"], validation_train)
    record = {
        "file_id": file_id,
        "ctx": SEPARATOR.join(original_sentences(row)),
        "to_be_replaced": row["original_sentence"] if incoherent else "",
        "replace_with": row["intruder_sentence"] if incoherent else "",
        "sen_position": int(row["intruder_index"]) if incoherent else -1,
        "train": train,
    }
    if with_id:
        record["id"] = row["id"]
    return record


def insted_order(row: dict) -> tuple:
    """The order of documents that numbers them ``file_id`` 0..N-1: source, split (train, validation, test),
    id. ``incoherent probes`` numbers a build's documents the same way."""
    return (row["source"], SPLIT_ORDER.get(row["split"], 3), row["split"], row["id"])


SPLIT_ORDER = {"train": 0, "validation": 1, "test": 2}


def read_rows(data_dir: str, sources: list[str]) -> list[dict]:
    from apache_beam.io.filesystems import FileSystems

    from incoherent.pipelines.runtime.tables import list_tables

    files = list_tables(data_dir, "intruder-")
    if sources:
        files = [f for f in files if f.split("/")[-2].removeprefix("intruder-") in sources]
    if not files:
        raise InputError(
            f"{data_dir}: no intruder-*/*.parquet files (write them with `incoherent intruders`)"
        )
    columns = [
        "id",
        "source",
        "sentences",
        "intruder_index",
        "original_sentence",
        "intruder_sentence",
        "split",
    ]
    rows: list[dict] = []
    for path in files:
        with FileSystems.open(path) as f:
            try:
                rows.extend(read_open(f, columns=columns).to_pylist())
            except Exception as exc:  # pyarrow raises several types for corrupt or foreign files
                raise InputError(f"{path}: not an intruder table ({exc})") from None
    return sorted(rows, key=insted_order)


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    check_output_file(args.out, "--out", "export insted", args.overwrite)
    rows = read_rows(args.dir, args.source)
    validation_train = 0 if args.validation_as_test else 1
    lines = [
        json.dumps(insted_record(row, file_id, validation_train, with_id=not args.no_id), ensure_ascii=False)
        + "\n"
        for file_id, row in enumerate(rows)
    ]
    write_output_file(args.out, "".join(lines).encode("utf-8"), "export insted")
    positives = sum(r["intruder_index"] >= 0 for r in rows)
    train = sum(r["split"] == "train" for r in rows)
    print(
        f"{args.out}: {len(rows):,} documents ({positives:,} with an intruder; {train:,} train, {len(rows) - train:,} other)"
    )
    return 0
