"""Reading a build for its card: its configs and splits, run summaries and build summary, table versions,
features and split sizes, and which sources feed which config.
"""

from __future__ import annotations

import glob
import json
import os

import pyarrow.parquet as pq

from incoherent.fileio.paths import Files, LocalFiles
from incoherent.schemas import SCHEMA_VERSION, schema_for
from incoherent.schemas.records import InputError

LABEL_NAMES = ["coherent", "intruder"]
BUILD_SUMMARY = "build_summary.json"
SUMMARIES = "summaries"


LOCAL = LocalFiles()  # the local disk; pipelines/card.py passes Beam's filesystems for a remote build


def read_json(path: str, files: Files) -> dict:
    with files.open(path) as f:
        return json.loads(f.read().decode("utf-8"))


def find_configs(dataset_dir: str, files: Files = LOCAL) -> dict[str, dict[str, list[str]]]:
    """``{config: {split: [files]}}`` for every table under ``dataset_dir`` except dead letters."""
    configs: dict[str, dict[str, list[str]]] = {}
    for path in files.glob(os.path.join(dataset_dir, "*", "*.parquet")):
        config = os.path.basename(os.path.dirname(path))
        if config == "rejected":
            continue
        split = os.path.basename(path).split("-", 1)[0]
        configs.setdefault(config, {}).setdefault(split, []).append(path)
    if not configs:
        raise InputError(f"{dataset_dir}: no <config>/<split>-*.parquet tables to describe")
    return configs


def load_summaries(build_dir: str) -> list[dict]:
    """Every ``run_summary.json`` of the build (not the published copies under ``summaries/``).

    An incomplete run, or one written by another schema version, makes the build unusable.
    """
    summaries = []
    for path in sorted(glob.glob(os.path.join(build_dir, "**", "run_summary.json"), recursive=True)):
        if SUMMARIES in os.path.relpath(path, build_dir).split(os.sep):
            continue  # the card's own copies
        with open(path, encoding="utf-8") as f:
            summary = json.load(f)
        if not summary.get("complete"):
            raise InputError(f"{path}: run did not complete; re-run it before writing a card")
        found = summary.get("schema_version")
        if str(found) != SCHEMA_VERSION:
            raise InputError(
                f"{path}: written with schema version {found or '(none)'}, this incoherent writes "
                f"{SCHEMA_VERSION}; rebuild with this version"
            )
        summary["_path"] = os.path.relpath(path, build_dir)
        summaries.append(summary)
    return summaries


RUN_SUMMARY = "run_summary.json"


def summary_files(paths: list[str], build_dir: str) -> list[tuple[str, str]]:
    """``(path, path relative to build_dir)`` of the files among ``paths`` (a listing of the build's JSON files)
    that the card reads: every ``run_summary.json`` and the ``build_summary.json``. Never the other JSON a build
    holds (an index's ``ids.json`` has a line per document): a remote build's driver copies only these, so what
    it moves does not grow with the corpus.

    >>> summary_files(["b/build_summary.json", "b/work/index/ids.json", "b/work/index/run_summary.json"], "b")
    [('b/build_summary.json', 'build_summary.json'), ('b/work/index/run_summary.json', 'work/index/run_summary.json')]
    """
    prefix = build_dir.rstrip("/") + "/"
    chosen = []
    for path in paths:
        relative = path[len(prefix) :] if path.startswith(prefix) else None
        if relative and (relative == BUILD_SUMMARY or relative.rsplit("/", 1)[-1] == RUN_SUMMARY):
            chosen.append((path, relative))
    return chosen


def load_build_summary(build_dir: str) -> dict | None:
    """``build_summary.json`` of an ``incoherent build`` (None for folders of single commands)."""
    path = os.path.join(build_dir, BUILD_SUMMARY)
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as f:
        summary = json.load(f)
    return summary


def check_table_versions(configs: dict[str, dict[str, list[str]]], files: Files = LOCAL) -> None:
    """Every table must carry this version's ``incoherent.schema_version`` in its Parquet metadata."""
    for splits in configs.values():
        for paths in splits.values():
            for path in paths:
                with files.open(path) as handle:
                    metadata = pq.read_schema(handle).metadata or {}
                found = metadata.get(b"incoherent.schema_version", b"").decode() or "(none)"
                if found != SCHEMA_VERSION:
                    raise InputError(
                        f"{path}: table of schema version {found}, this incoherent writes {SCHEMA_VERSION}; "
                        "rebuild with this version"
                    )


def table_features(config: str, paths: list[str], files: Files = LOCAL) -> list[dict]:
    import datasets

    schema = schema_for(config)
    with files.open(paths[0]) as handle:
        stored = pq.read_schema(handle)
    if stored.remove_metadata() != schema.remove_metadata():
        raise InputError(
            f"{paths[0]}: columns differ from the {config} schema (schema version {SCHEMA_VERSION})"
        )
    features = datasets.Features.from_arrow_schema(schema.remove_metadata())
    if "label" in features:
        features["label"] = datasets.ClassLabel(names=LABEL_NAMES)
    return features._to_yaml_list()


def split_info(split: str, paths: list[str], files: Files = LOCAL) -> dict:
    metas = []
    for path in paths:
        with files.open(path) as handle:
            metas.append(pq.ParquetFile(handle).metadata)
    return {
        "name": split,
        "num_bytes": sum(m.row_group(i).total_byte_size for m in metas for i in range(m.num_row_groups)),
        "num_examples": sum(m.num_rows for m in metas),
    }


def default_config(configs, kinds: dict[str, str] | None = None) -> str:
    """The config ``load_dataset(REPO)`` loads: the intruder table of the first source of kind ``wikipedia``
    (``kinds``: source -> kind, from the ingest runs; without them, the source named ``wikipedia``), else the
    first intruder, shuffle, any.

    >>> default_config({"intruder-news": {}, "intruder-enwiki": {}}, {"enwiki": "wikipedia", "news": "cnn"})
    'intruder-enwiki'
    """
    names = sorted(configs)
    wikipedia = sorted(s for s, kind in kinds.items() if kind == "wikipedia") if kinds else ["wikipedia"]
    for prefix in (*(f"intruder-{source}" for source in wikipedia), "intruder-", "shuffle-"):
        for name in names:
            if name == prefix or (prefix.endswith("-") and name.startswith(prefix)):
                return name
    return names[0]


def config_sources(configs: dict[str, dict[str, list[str]]], stats: dict) -> dict[str, set[str]]:
    """The sources whose text each config holds (``intruder-cnn`` -> ``{"cnn"}``; candidates: the sources its
    statistics counted rows of)."""
    out = {}
    for config in configs:
        if config.startswith("probe-"):  # probe-<phenomenon>: the sources of its rows
            out[config] = set(stats.get("probe", {}).get(config.removeprefix("probe-"), {}))
        else:
            out[config] = {config.split("-", 1)[1]} if "-" in config else set(stats["candidates"])
    return out


# The terms of each kind of source, as the card states them; a text collection's are the build config's
