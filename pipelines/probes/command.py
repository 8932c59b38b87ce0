"""``incoherent probes DATA [DATA ...] --out DIR``: INSteD's linguistic probes (Shen et al. 2021, §7), generated.

DATA is an intruder build's dataset folder (holding ``intruder-<source>/``) or a JSONL file in INSteD's released
format (what ``incoherent export insted`` writes). For every incoherent document of ``--split`` and every
phenomenon with a site in its intruder sentence, one probe: the intruder sentence minimally edited, everything
else unchanged. Writes

    OUT/probe-<phenomenon>/<split>-*.parquet   PROBE_SCHEMA rows
    OUT/insted/<phenomenon>.jsonl              the same rows in INSteD's released format (+ phenomenon)
    OUT/rejected/probes/                       dead letters (bad JSONL records, duplicate ids, ...)
    OUT/run_summary.json                       counters: probed/<phenomenon>, no_site/<phenomenon>,
                                               no_site/<phenomenon>/<reason>, move/number/<move>, ...
    OUT/review/index.html, review.md           with --review N: N random probes per phenomenon to check by eye

``--per-phenomenon N`` keeps the N probes of each phenomenon with the smallest hash of (seed, phenomenon, id).
The phenomena are :mod:`corpora.probes`; this module is the stage around them. It imports Beam only in
:func:`run` and the readers that need it (``--help`` stays fast); the transform is in
:mod:`pipelines.probes.transforms`.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import posixpath
from collections.abc import Iterator

from incoherent.corpora.probes import PHENOMENA
from incoherent.corpora.seeding import stable_hash
from incoherent.fileio.paths import is_safe_name, name_clash
from incoherent.pipelines.commands import add_overwrite, list_flag
from incoherent.pipelines.export_insted import insted_order
from incoherent.pipelines.runtime import storage
from incoherent.schemas.records import InputError, Rejected
from incoherent.sources.parquet import read_open

INSTED_DIR = "insted"
MAX_LINE_BYTES = 16 * 1024 * 1024  # one JSONL record; longer lines are dead-lettered
EXAMPLES = 2  # per phenomenon, in the run summary and the card
ROWS_PER_SHARD = 25_000  # a probe row holds its whole document: smaller shards than intruder tables
DOC_COLUMNS = ["id", "source", "split", "sentences", "intruder_index", "original_sentence"]

TAKES_BEAM_ARGS = True


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "data",
        nargs="+",
        metavar="DATA",
        help="an intruder build's dataset folder (intruder-<source>/) or an INSteD-format JSONL file",
    )
    parser.add_argument("--out", required=True, help="output directory")
    list_flag(
        parser,
        "--phenomena",
        choices=list(PHENOMENA),
        metavar="PHENOMENON",
        help=f"phenomena to generate (default: all of {', '.join(PHENOMENA)})",
    )
    parser.add_argument("--split", default="test", help="split whose incoherent documents are probed (test)")
    parser.add_argument(
        "--per-phenomenon",
        type=int,
        default=None,
        metavar="N",
        help="at most N probes per phenomenon, a stable sample by hash of (seed, phenomenon, id) (default: all)",
    )
    parser.add_argument(
        "--demonstrative",
        choices=["insted", "agree"],
        default="insted",
        help="insted: the determiner alone to the plural, as INSteD's released probes (this -> these); agree: "
        "its noun and agreeing verb too, grammatical (this city was -> these cities were) (default insted)",
    )
    parser.add_argument(
        "--number",
        choices=["insted", "clash"],
        default="insted",
        help="insted: every quantity INSteD's authors took, a count the document does not give moved too; "
        "clash: only a value that contradicts the document (a year out of its dates' span, a count it gives "
        "otherwise) (default insted)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        help="sample; animacy-up's pronoun where the context has no gender (default 0)",
    )
    parser.add_argument(
        "--review",
        type=int,
        default=None,
        metavar="N",
        help="also write OUT/review/index.html and review.md: N random probes per phenomenon to check by eye",
    )
    add_overwrite(parser)


# --------------------------------------------------------------------------------------------- inputs


def classify_input(path: str) -> tuple[str, str]:
    """``("build", dataset folder)`` or ``("jsonl", file)``; one clear line for anything else."""
    path = storage.absolute(path)
    if not storage.exists(path):
        raise InputError(f"{path}: no such file or directory")
    if storage.list_files(posixpath.join(path, "intruder-*", "*.parquet")):
        return "build", path
    dataset = posixpath.join(path, "dataset")
    if storage.list_files(posixpath.join(dataset, "intruder-*", "*.parquet")):
        return "build", dataset  # the OUT of `incoherent build`
    if os.path.isfile(path) if not storage.is_remote(path) else storage.list_files(path) == [path]:
        check_insted_head(path)
        return "jsonl", path
    raise InputError(
        f"{path}: neither an intruder build (no intruder-*/*.parquet) nor a JSONL file in INSteD's format"
    )


def check_insted_head(path: str) -> None:
    """The first record of a JSONL file must be an object with INSteD's fields (a file of another kind is
    unusable input, not a file of bad records)."""
    from apache_beam.io.filesystems import FileSystems

    from incoherent.corpora.probes.rows import INSTED_FIELDS

    with FileSystems.open(path) as f:
        head = f.readline(MAX_LINE_BYTES + 1)
        # blank lines, and records over the limit (counted `record_too_large` by jsonl_lines), say nothing
        while head and (not head.strip() or (len(head) > MAX_LINE_BYTES and not head.endswith(b"\n"))):
            while len(head) > MAX_LINE_BYTES and not head.endswith(b"\n"):  # the rest of the long line
                head = f.readline(MAX_LINE_BYTES + 1)
            head = f.readline(MAX_LINE_BYTES + 1)
        if not head:
            return  # nothing but blank lines and over-long records: each is counted, none judged here
    try:
        record = json.loads(head.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        record = None
    if not isinstance(record, dict) or not set(INSTED_FIELDS) <= set(record):
        raise InputError(
            f"{path}: not a JSONL file in INSteD's format (its first record lacks {', '.join(INSTED_FIELDS)})"
        )


def build_file_ids(dataset: str) -> dict[str, int]:
    """``{id: file_id}``: the numbering ``incoherent export insted`` gives the build's documents."""
    from apache_beam.io.filesystems import FileSystems

    rows = []
    for path in storage.list_files(posixpath.join(dataset, "intruder-*", "*.parquet")):
        with FileSystems.open(path) as f:
            try:
                rows.extend(read_open(f, columns=["id", "source", "split"]).to_pylist())
            except Exception as exc:  # pyarrow raises several types for corrupt or foreign files
                raise InputError(f"{path}: not an intruder table ({exc})") from None
    return {row["id"]: n for n, row in enumerate(sorted(rows, key=insted_order))}


def jsonl_lines(path: str) -> Iterator[tuple[str, str] | Rejected]:
    """``(line, "file:number")`` of a JSONL file (any Beam filesystem), a bounded line at a time."""
    from apache_beam.io.filesystems import FileSystems

    from incoherent.corpora.probes.rows import insted_name

    name = posixpath.basename(path)
    with FileSystems.open(path) as f:
        number = 0
        while True:
            raw = f.readline(MAX_LINE_BYTES + 1)
            if not raw:
                return
            number += 1
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                while raw and not raw.endswith(b"\n"):  # the rest of the over-long line
                    raw = f.readline(MAX_LINE_BYTES)
                yield Rejected("record_too_large", source=insted_name(path), detail=f"{name}:{number}")
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                yield Rejected("not_utf8", source=insted_name(path), detail=f"{name}:{number}")
                continue
            if text.strip():
                yield text, f"{name}:{number}"


# --------------------------------------------------------------------------------------------- the stage


def _with_file_id(doc: dict, file_ids: dict) -> dict:
    return doc | {"file_id": file_ids.get(doc["id"]), "source_id": doc["id"]}


def _parse_line(item, source: str):
    from incoherent.corpora.probes.rows import insted_document

    if isinstance(item, Rejected):
        yield item
        return
    line, origin = item
    yield insted_document(line, origin, source)


# --------------------------------------------------------------------------------------------- outputs


INSTED_COLUMNS = [
    "id", "file_id", "split", "phenomenon", "sentences", "intruder_index", "original_sentence",
    "intruder_sentence", "probed_sentence", "ctx",
]  # fmt: skip


def write_insted_files(out: str, phenomena: list[str]) -> dict[str, dict]:
    """Write ``OUT/insted/<phenomenon>.jsonl`` from the written tables, ordered by (file_id, id); returns per
    phenomenon the probes written and a few examples. The tables are read a record batch at a time and only
    each record's JSON line is kept until the file is written."""
    import pyarrow.parquet as pq
    from apache_beam.io.filesystems import FileSystems

    from incoherent.corpora.probes.rows import insted_record

    report = {}
    for phenomenon in phenomena:
        lines: list[tuple[tuple, bytes]] = []
        examples: list[tuple] = []
        for path in storage.list_files(posixpath.join(out, f"probe-{phenomenon}", "*.parquet")):
            with FileSystems.open(path) as f:
                for batch in pq.ParquetFile(f).iter_batches(batch_size=2048, columns=INSTED_COLUMNS):
                    for row in batch.to_pylist():
                        key = (row["file_id"] if row["file_id"] is not None else -1, row["id"])
                        line = json.dumps(insted_record(row), ensure_ascii=False) + "\n"
                        lines.append((key, line.encode("utf-8")))
                        example = (stable_hash("example", row["id"]), row["id"])
                        examples = sorted(
                            [*examples, (*example, row["intruder_sentence"], row["probed_sentence"])]
                        )
                        del examples[EXAMPLES:]
        lines.sort(key=lambda item: item[0])
        storage.write_bytes(
            posixpath.join(out, INSTED_DIR, f"{phenomenon}.jsonl"), b"".join(b for _, b in lines)
        )
        report[phenomenon] = {
            "probes": len(lines),
            "examples": [{"id": e[1], "before": e[2], "after": e[3]} for e in examples],
        }
    return report


def probe_counts(summary: dict, phenomena: list[str], written: dict[str, dict]) -> dict[str, dict]:
    """Per phenomenon: probes written, documents with a site, documents without one (``no_site``) and, of
    those, how many for each reason the phenomenon gave (``skips``)."""
    from incoherent.pipelines.probes.transforms import STAGE

    counters = summary["counters"].get(STAGE, {})
    return {
        p: {
            "probes": written[p]["probes"],
            "with_site": counters.get(f"probed/{p}", 0),
            "no_site": counters.get(f"no_site/{p}", 0),
            "moves": {
                name.rsplit("/", 1)[1]: n
                for name, n in sorted(counters.items())
                if name.startswith(f"move/{p}/")
            },
            "skips": {
                name.rsplit("/", 1)[1]: n
                for name, n in sorted(counters.items())
                if name.startswith(f"no_site/{p}/")
            },
            "examples": written[p]["examples"],
        }
        for p in phenomena
    }


def source_names(kind: str, path: str) -> list[str]:
    """The sources whose ids a DATA input gives its documents: an INSteD file's name, a build's ``intruder-*``
    folders."""
    from incoherent.corpora.probes.rows import insted_name

    if kind == "jsonl":
        return [insted_name(path)]
    found = storage.list_files(posixpath.join(path, "intruder-*", "*.parquet"))
    return sorted({posixpath.basename(posixpath.dirname(f)).removeprefix("intruder-") for f in found})


def check_source_names(inputs: list[tuple[str, str]]) -> None:
    """Two inputs that give one source name (``wiki/test.jsonl`` and ``cnn/test.jsonl``; two builds of the same
    source) would give their documents the same ids, and one of each pair would be dropped as a duplicate:
    refused in one line instead."""
    clash = name_clash((name, path) for kind, path in inputs for name in source_names(kind, path))
    if clash:
        name, first, second = clash
        raise InputError(
            f"DATA: {first} and {second} both give source name '{name}' (ids {name}:...), so their "
            "documents' ids would collide; give the files distinct names, or run them apart"
        )


def check_split_found(summary: dict, split: str) -> None:
    """Documents were read but none is of ``split``: one line, not a run of 0 probes (the run summary is not
    written, so the folder is a failed run that the next run replaces)."""
    from incoherent.pipelines.probes.transforms import STAGE

    counters = summary["counters"].get(STAGE, {})
    others = {k.split("/", 1)[1]: v for k, v in counters.items() if k.startswith("other_split/")}
    if others and not counters.get("in_split"):
        found = ", ".join(f"{name} {n:,}" for name, n in sorted(others.items()))
        raise InputError(f"--split {split}: no document of DATA is in that split (found: {found})")


def check_options(args: argparse.Namespace) -> None:
    if args.per_phenomenon is not None and args.per_phenomenon < 1:
        raise InputError(f"--per-phenomenon: must be >= 1, got {args.per_phenomenon}")
    if args.review is not None and args.review < 1:
        raise InputError(f"--review: must be >= 1, got {args.review}")
    if not is_safe_name(args.split):
        raise InputError(f"--split: {args.split!r} is not a plain split name")
    if len(set(args.phenomena)) != len(args.phenomena):
        raise InputError(f"--phenomena: a phenomenon is named twice ({' '.join(args.phenomena)})")


def _checked_inputs(args: argparse.Namespace) -> tuple[list[tuple[str, str]], dict[str, dict]]:
    """DATA's inputs as (kind, path), each refused in one line if unusable; each build's file ids."""
    inputs = [classify_input(path) for path in args.data]
    if len({path for _, path in inputs}) != len(inputs):
        raise InputError("DATA: the same input is given twice")
    check_source_names(inputs)
    if any(kind == "jsonl" for kind, _ in inputs) and args.split not in ("train", "test"):
        raise InputError(f"--split {args.split}: INSteD's JSONL holds the splits train and test only")
    builds = [path for kind, path in inputs if kind == "build"]
    for path in builds:
        if not storage.list_files(posixpath.join(path, "intruder-*", f"{args.split}-*.parquet")):
            raise InputError(f"{path}: no '{args.split}' split in its intruder tables (--split)")
    file_ids = {path: build_file_ids(path) for path in builds}
    return inputs, file_ids


def _read_documents(p, inputs: list[tuple[str, str]], split: str, file_ids: dict, rejected_parts: list):
    """The documents of every input, one PCollection; a JSONL line that does not parse goes to
    ``rejected_parts``."""
    import apache_beam as beam

    from incoherent.corpora.probes.rows import insted_name
    from incoherent.pipelines.probes.transforms import STAGE
    from incoherent.pipelines.runtime.tables import ApplyWithRejects

    parts = []
    for n, (kind, path) in enumerate(inputs):
        if kind == "build":
            files = storage.list_files(posixpath.join(path, "intruder-*", f"{split}-*.parquet"))
            parts.append(
                p
                | f"Files[{n}]" >> beam.Create(files)
                | f"ReadBuild[{n}]" >> beam.io.ReadAllFromParquet(columns=DOC_COLUMNS)
                | f"FileIds[{n}]" >> beam.Map(_with_file_id, file_ids[path])
            )
        else:
            docs, bad = (
                p
                | f"File[{n}]" >> beam.Create([path])
                | f"Lines[{n}]" >> beam.FlatMap(jsonl_lines)
                | f"Parse[{n}]"
                >> ApplyWithRejects(
                    functools.partial(_parse_line, source=insted_name(path)), STAGE, kept="read"
                )
            )
            parts.append(docs)
            rejected_parts.append(bad)
    return parts | "AllDocuments" >> beam.Flatten()


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    import apache_beam as beam

    from incoherent.corpora.probes.text import tagger_info
    from incoherent.pipelines.probes.transforms import STAGE, GenerateProbes
    from incoherent.pipelines.runtime.run import print_report, run_pipeline
    from incoherent.pipelines.runtime.spill import CHUNK_VALUES
    from incoherent.pipelines.runtime.tables import WriteRejected, WriteTables

    check_options(args)
    phenomena = [p for p in PHENOMENA if p in (args.phenomena or PHENOMENA)]  # the registry's order
    inputs, file_ids = _checked_inputs(args)
    out = storage.absolute(args.out)

    def build(p):
        docs = _read_documents(p, inputs, args.split, file_ids, rejected_parts)
        probes, rejected = docs | "Generate" >> GenerateProbes(
            phenomena, args.split, args.seed, args.per_phenomenon, args.demonstrative, args.number
        )
        probes | "Write" >> WriteTables(
            out,
            [f"probe-{phenomenon}" for phenomenon in phenomena],
            lambda row: f"probe-{row['phenomenon']}",
            rows_per_shard=ROWS_PER_SHARD,
            chunk_values=max(1, CHUNK_VALUES // len(phenomena)),
        )
        (
            (rejected_parts + [rejected])
            | "Rejected" >> beam.Flatten()
            | "WriteRejected" >> WriteRejected(out, STAGE)
        )

    rejected_parts: list = []

    def extra(summary: dict) -> dict:
        check_split_found(summary, args.split)
        written = write_insted_files(out, phenomena)
        info = tagger_info()
        review = {}
        if args.review is not None:
            from incoherent.pipelines.probes.review import write_review

            review = {"review": write_review(out, phenomena, args.review, args.seed)}
        return review | {
            "probes": probe_counts(summary, phenomena, written),
            "tagger": {"held_out": info["held_out"], "provenance": info["provenance"]},
        }

    params = {
        "data": args.data,
        "phenomena": phenomena,
        "split": args.split,
        "per_phenomenon": args.per_phenomenon,
        "seed": args.seed,
        "demonstrative": args.demonstrative,
        "number": args.number,
        "review": args.review,
    }
    summary = run_pipeline(
        build,
        command=STAGE,
        out_dir=out,
        params=params,
        beam_args=beam_args,
        overwrite=args.overwrite,
        extra_summary=extra,
    )
    print_report(summary, args.out)
    print(f"{'phenomenon':<16}{'probes':>8}{'no site':>9}")
    for phenomenon, c in summary["probes"].items():
        print(f"{phenomenon:<16}{c['probes']:>8,}{c['no_site']:>9,}")
    return 0
