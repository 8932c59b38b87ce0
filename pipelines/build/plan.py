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
from incoherent.sources.cnn import SOURCE as CNN_SOURCE

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
    """Every stage a config can ask for: per source its ingest (and older dumps), index, sample and neighbours;
    then the shuffle stages; then the one intruder stage over every source."""
    stages: list[Stage] = []
    intruder_samples = sample_specs(config, "intruders", list(config["sources"]))
    docs_dirs, history, retrieval = {}, [], []
    for name, spec in config["sources"].items():
        ingest, olds = _ingest_stages(name, spec, work)
        stages += [ingest, *olds]
        docs_dirs[name] = ingest.out
        history += olds
        source_retrieval = _retrieval_stages(name, ingest, config, work, intruder_samples.get(name))
        stages += source_retrieval
        retrieval.append(source_retrieval)
    # The shuffle stages need only the documents: they run before the intruder stage, the longest, so a build
    # killed during it has only that stage left to redo.
    stages += _shuffle_stages(config, docs_dirs, work)
    stages.append(_intruders_stage(config, docs_dirs, history, retrieval, intruder_samples, work))
    return stages


def _ingest_stages(name: str, spec: dict, work: str) -> tuple[Stage, list[Stage]]:
    """``(ingest stage, one stage per older dump)`` of a source: ``incoherent ingest KIND ... --source NAME``."""
    docs = storage.join(work, "documents", name)
    # Any name for any kind (the kind is the ingest command); `ingest cnn` without --source names it cnn,
    # and the Quickstart's pinned card lists the commands as they were.
    source_flag = [] if (spec["kind"], name) == ("cnn", CNN_SOURCE) else ["--source", name]
    indexes = spec.get("multistream_index", [])  # one per input (pipelines.build.config)
    argv = [
        "ingest",
        spec["kind"],
        *spec["inputs"],
        "--out",
        docs,
        *source_flag,
        *_flags(spec["options"]),
        *(flag for index in indexes for flag in ("--multistream-index", index)),
    ]
    ingest = Stage(f"ingest/{name}", docs, argv, inputs=[*spec["inputs"], *indexes])
    olds = []
    for old in spec["history"]:
        label = history_label(old)
        old_docs = storage.join(work, "history", name, label)
        argv = ["ingest", spec["kind"], old, "--out", old_docs, *source_flag]
        olds.append(Stage(f"ingest-history/{name}/{label}", old_docs, argv, inputs=[old]))
    return ingest, olds


def _retrieval_stages(name: str, ingest: Stage, config: dict, work: str, sample: object) -> list[Stage]:
    """The index of a source (``index:`` flags), its sampled query ids (with ``intruders.sample``) and its
    neighbours (``neighbors:`` flags; the index's parameters it reads from the index's ``index.json``)."""
    docs = ingest.out
    index = storage.join(work, "retrieval", name, "index")
    neighbors = storage.join(work, "retrieval", name, "neighbors")
    index_argv = ["index", docs, "--out", index, *_flags(config.get("index") or {})]
    stages = [Stage(f"index/{name}", index, index_argv, upstream=[ingest.name])]
    queries, upstream = [], [ingest.name, f"index/{name}"]
    if sample is not None:
        sample_dir = storage.join(work, "sample", name)
        spec = parse_sample(sample, f"intruders.sample ({name})")
        seed = str(config["seed"])
        stages.append(
            Stage(
                f"sample/{name}",
                sample_dir,
                argv=["sample", docs, "--sample", str(spec), "--seed", seed],
                make=write_queries(docs, spec, config["seed"]),
                upstream=[ingest.name],
            )
        )
        queries = ["--queries", storage.join(sample_dir, QUERIES_FILE)]
        upstream.append(f"sample/{name}")
    flags = _flags({key: v for key, v in config["neighbors"].items() if key != "k"})
    argv = ["neighbors", docs, "--index", index, "--k", _k(config), *queries, "--out", neighbors, *flags]
    stages.append(Stage(f"neighbors/{name}", neighbors, argv, upstream=upstream))
    return stages


def _k(config: dict) -> str:
    return str(config["neighbors"].get("k", 10))


def _shuffle_stages(config: dict, docs_dirs: dict[str, str], work: str) -> list[Stage]:
    """One ``incoherent shuffle`` per source (``shuffle:`` flags, the sample of its source)."""
    samples = sample_specs(config, "shuffle", list(docs_dirs))
    options = {key: value for key, value in config["shuffle"].items() if key != "sample"}
    stages = []
    for name, docs in docs_dirs.items():
        shuffle_dir = storage.join(work, "shuffle", name)
        sample = ["--sample", str(samples[name])] if name in samples else []
        argv = [
            "shuffle",
            docs,
            "--out",
            shuffle_dir,
            "--seed",
            str(config["seed"]),
            *sample,
            *_flags(options),
        ]
        stages.append(Stage(f"shuffle/{name}", shuffle_dir, argv, upstream=[f"ingest/{name}"],
                            tables=[f"shuffle-{name}"]))  # fmt: skip
    return stages


def _intruders_stage(
    config: dict,
    docs_dirs: dict[str, str],
    history: list[Stage],
    retrieval: list[list[Stage]],
    samples: dict,
    work: str,
) -> Stage:
    """The one ``incoherent intruders`` over every source, with each source's index and neighbours."""
    index_args = [f for stages in retrieval for f in ("--index", f"{_source(stages[0])}={stages[0].out}")]
    neighbor_args = [
        f for stages in retrieval for f in ("--neighbors", f"{_source(stages[-1])}={stages[-1].out}")
    ]
    history_flag = ["--history", *(stage.out for stage in history)] if history else []
    options = {key: value for key, value in config["intruders"].items() if key != "sample"}
    sample_flags = [f for name, v in samples.items() for f in ("--sample", f"{name}={v}")]
    model = options.get("filter", "none")
    intruders_dir = storage.join(work, "intruders")
    return Stage(
        "intruders",
        intruders_dir,
        ["intruders", *docs_dirs.values(), "--out", intruders_dir, *index_args, *neighbor_args,
         *history_flag, "--seed", str(config["seed"]), "--k", _k(config), *sample_flags, *_flags(options)],
        inputs=[] if model in (None, "none") else [model],
        upstream=_ordered_upstream(docs_dirs, retrieval, history),
        tables=[*(f"intruder-{name}" for name in docs_dirs), "candidates"],
    )  # fmt: skip


def _source(stage: Stage) -> str:
    """``index/wiki`` -> ``wiki``."""
    return stage.name.split("/", 1)[1]


def _ordered_upstream(
    docs_dirs: dict[str, str], retrieval: list[list[Stage]], history: list[Stage]
) -> list[str]:
    """What the intruder stage reads, in plan order: per source its ingest, index, sample and neighbours; then
    the older dumps."""
    names = []
    for stages in retrieval:
        names += [f"ingest/{_source(stages[0])}", *(stage.name for stage in stages)]
    return list(dict.fromkeys(names + [stage.name for stage in history]))
