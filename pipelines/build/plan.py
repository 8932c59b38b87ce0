"""The plan of a build: its stages, in order, and where each writes under ``OUT``.

Layout of the output directory::

    OUT/.incoherent-build.json              the marker: written first, it makes OUT a build (docs/safety.md)
    OUT/.incoherent-build.lock              locked (fcntl.flock) while a build runs: one build per OUT
    OUT/build_summary.json                  config, resolved inputs, seconds per stage
    OUT/dataset/intruder-<source>/          the dataset (Hugging Face layout): intruder, shuffle, candidates
    OUT/dataset/shuffle-<source>/
    OUT/dataset/candidates/
    OUT/work/documents/<source>/            ingest output (documents-<source>/, run_summary.json)
    OUT/work/history/<source>/<dump>/       each older dump ingested on its own
    OUT/work/retrieval/<source>/index/      incoherent index
    OUT/work/retrieval/<source>/neighbors/  incoherent neighbors
    OUT/work/intruders/  OUT/work/shuffle/<source>/   run_summary.json and dead letters of those runs

    OUT/work/sample/<source>/ids.txt        with ``intruders: {sample: ...}``: the sampled ids (neighbours queries)

The tables of the intruder and shuffle runs are moved from ``work/`` into ``dataset/`` when their run ends
(:mod:`pipelines.build.execute`), so ``incoherent card OUT/dataset --build-dir OUT`` and ``incoherent publish``
see one dataset folder.
"""

from __future__ import annotations

import os
import posixpath
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from incoherent.corpora.sampling import SampleSpec, parse_sample
from incoherent.pipelines.runtime import storage
from incoherent.schemas import SCHEMA_VERSION

DATASET, WORK = "dataset", "work"
QUERIES_FILE = "ids.txt"


@dataclass
class Stage:
    """One step of a build: an ``incoherent`` command (``argv``) or a function (``make(out)``) writing ``out``.

    ``inputs``: files from outside the build it reads; ``upstream``: stages whose output it reads; ``tables``:
    dataset tables it moves from ``out`` into ``OUT/dataset/`` when it has finished.
    """

    name: str
    out: str
    argv: list[str] = field(default_factory=list)
    make: Callable[[str], None] | None = None
    inputs: list[str] = field(default_factory=list)
    upstream: list[str] = field(default_factory=list)
    tables: list[str] = field(default_factory=list)


def _flags(options: dict) -> list[str]:
    """``{"block_sizes": [1, 2], "overwrite": True}`` -> ``["--block-sizes", "1", "2", "--overwrite"]``."""
    argv: list[str] = []
    for key, value in options.items():
        flag = "--" + str(key).replace("_", "-")
        if value is True:
            argv.append(flag)
        elif value is False or value is None:
            continue
        elif isinstance(value, list):
            argv += [flag, *(str(v) for v in value)] if value else []
        else:
            argv += [flag, str(value)]
    return argv


def sample_specs(config: dict, section: str, sources: list[str]) -> dict[str, SampleSpec]:
    """``intruders: {sample: N}`` or ``{sample: {SOURCE: N}}`` -> sample per source."""
    value = config[section].get("sample")
    if value is None:
        return {}
    if isinstance(value, dict):
        return {source: spec for source, spec in value.items() if source in sources}
    return dict.fromkeys(sources, value)


def write_queries(docs: str, spec: SampleSpec, seed: int) -> Callable[[str], None]:
    """A stage that writes the sampled ids of ``docs`` (``OUT/ids.txt``) for ``neighbors --queries``."""

    def make(out: str) -> None:
        from incoherent.pipelines.runtime.summary import write_summary
        from incoherent.pipelines.runtime.tables import document_files
        from incoherent.pipelines.sampling import sampled_ids, write_id_list

        started = time.time()
        ids = sampled_ids(document_files(docs), spec, seed)
        if not storage.is_remote(out):
            os.makedirs(out, exist_ok=True)
        write_id_list(storage.join(out, QUERIES_FILE), ids)
        summary = {
            "command": "sample",
            "schema_version": SCHEMA_VERSION,
            "complete": True,
            "params": {"docs_dir": docs, "sample": str(spec), "seed": seed},
            "seconds": round(time.time() - started, 2),
            "outputs": {"ids": len(ids)},
        }
        write_summary(out, summary)

    return make


def history_label(path: str) -> str:
    """The folder name of an older dump's documents.

    >>> history_label("/data/2019-08-16_minidumps-en.xml.bz2")
    '2019-08-16_minidumps-en'
    """
    return posixpath.basename(path.rstrip("/")).split(".", 1)[0]


def plan(config: dict, work: str) -> list[Stage]:
    """The stages of a build, in order: those of the corpora the config asks for (``corpora``: intruders,
    shuffle, or both, the default). Shuffle corpora need only the documents; intruder corpora need the index,
    neighbours, older dumps (history) and sample lists too."""
    corpora = config.get("corpora") or ["intruders", "shuffle"]
    stages = [stage for stage in _all_stages(config, work) if _wanted(stage, corpora)]
    if "intruders" not in corpora:  # ingest only what some wanted stage reads
        read = {up for stage in stages for up in stage.upstream}
        stages = [s for s in stages if not s.name.startswith("ingest-history/") or s.name in read]
    return stages


def _wanted(stage: Stage, corpora: list[str]) -> bool:
    section = stage.name.split("/", 1)[0]
    if section in ("index", "neighbors", "sample", "intruders"):
        return "intruders" in corpora
    if section == "shuffle":
        return "shuffle" in corpora
    return True  # ingest (and history, filtered by plan)


def _all_stages(config: dict, work: str) -> list[Stage]:
    stages: list[Stage] = []
    seed = str(config["seed"])
    names = list(config["sources"])
    intruder_samples = sample_specs(config, "intruders", names)
    shuffle_samples = sample_specs(config, "shuffle", names)
    docs_dirs, history_dirs, history_stages, index_args, neighbor_args = {}, [], [], [], []
    retrieval_stages = []
    k = str(config["neighbors"].get("k", 10))
    for name, spec in config["sources"].items():
        docs = storage.join(work, "documents", name)
        source_flag = ["--source", name]  # any name for any kind (the kind is the ingest command)
        ingest = f"ingest/{name}"
        indexes = spec.get("multistream_index", [])  # one per input (pipelines.build.config)
        stages.append(
            Stage(
                ingest,
                docs,
                [
                    "ingest",
                    spec["kind"],
                    *spec["inputs"],
                    "--out",
                    docs,
                    *source_flag,
                    *_flags(spec["options"]),
                    *(flag for index in indexes for flag in ("--multistream-index", index)),
                ],
                inputs=[*spec["inputs"], *indexes],
            )
        )
        docs_dirs[name] = docs
        for old in spec["history"]:
            label = history_label(old)
            old_docs = storage.join(work, "history", name, label)
            stages.append(
                Stage(
                    f"ingest-history/{name}/{label}",
                    old_docs,
                    ["ingest", spec["kind"], old, "--out", old_docs, *source_flag],
                    inputs=[old],
                )
            )
            history_dirs.append(old_docs)
            history_stages.append(stages[-1].name)
        index = storage.join(work, "retrieval", name, "index")
        neighbors = storage.join(work, "retrieval", name, "neighbors")
        stages.append(Stage(f"index/{name}", index, ["index", docs, "--out", index], upstream=[ingest]))
        queries, upstream = [], [ingest, f"index/{name}"]
        if name in intruder_samples:
            sample_dir = storage.join(work, "sample", name)
            sample = parse_sample(intruder_samples[name], f"intruders.sample ({name})")
            stages.append(
                Stage(
                    f"sample/{name}",
                    sample_dir,
                    argv=["sample", docs, "--sample", str(sample), "--seed", seed],
                    make=write_queries(docs, sample, config["seed"]),
                    upstream=[ingest],
                )
            )
            queries = ["--queries", storage.join(sample_dir, QUERIES_FILE)]
            upstream.append(f"sample/{name}")
        neighbor_flags = _flags({key: v for key, v in config["neighbors"].items() if key != "k"})
        stages.append(
            Stage(
                f"neighbors/{name}",
                neighbors,
                [
                    "neighbors",
                    docs,
                    "--index",
                    index,
                    "--k",
                    k,
                    *queries,
                    "--out",
                    neighbors,
                    *neighbor_flags,
                ],
                upstream=upstream,
            )
        )
        retrieval_stages += upstream + [f"neighbors/{name}"]
        index_args += ["--index", f"{name}={index}"]
        neighbor_args += ["--neighbors", f"{name}={neighbors}"]
    # The shuffle stages need only the documents: they run before the intruder stage, the longest, so a build
    # killed during it has only that stage left to redo.
    for name, docs in docs_dirs.items():
        shuffle_dir = storage.join(work, "shuffle", name)
        options = {key: value for key, value in config["shuffle"].items() if key != "sample"}
        sample = ["--sample", str(shuffle_samples[name])] if name in shuffle_samples else []
        stages.append(
            Stage(
                f"shuffle/{name}",
                shuffle_dir,
                ["shuffle", docs, "--out", shuffle_dir, "--seed", seed, *sample, *_flags(options)],
                upstream=[f"ingest/{name}"],
                tables=[f"shuffle-{name}"],
            )
        )
    history_flag = ["--history", *history_dirs] if history_dirs else []
    options = {key: value for key, value in config["intruders"].items() if key != "sample"}
    sample_flags = [f for name, v in intruder_samples.items() for f in ("--sample", f"{name}={v}")]
    model = options.get("filter", "none")
    intruders_dir = storage.join(work, "intruders")
    stages.append(
        Stage(
            "intruders",
            intruders_dir,
            ["intruders", *docs_dirs.values(), "--out", intruders_dir, *index_args, *neighbor_args,
             *history_flag, "--seed", seed, "--k", k, *sample_flags, *_flags(options)],
            inputs=[] if model in (None, "none") else [model],
            upstream=list(dict.fromkeys(retrieval_stages + history_stages)),
            tables=[*(f"intruder-{name}" for name in names), "candidates"],
        )
    )  # fmt: skip
    return stages
