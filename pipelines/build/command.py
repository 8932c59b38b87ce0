"""``incoherent build [CONFIG]``: ingest -> index -> neighbours -> shuffle -> intruders from one YAML file.

Without CONFIG the bundled ``pipelines/configs/default.yaml`` builds from the repository's ``samples/``
into ``out/sample/``. Every input named by the config is checked before any work starts.

Config (see the default for a complete example)::

    base: ../..                  # relative input paths: against base (relative to the config file), then the CWD
    out: out/sample              # relative to the current directory; --out overrides
    seed: 0
    sources:
      wikipedia: {kind: wikipedia, inputs: [dump.xml.bz2], history: [old-dump.xml.bz2]}
      cnn: {kind: cnn, inputs: [cnn/stories]}
      news: {kind: text, inputs: [news.jsonl], options: {text-field: body}}
    neighbors: {k: 10}
    intruders: {filter: none, similarity_threshold: 0.6, drift_threshold: 0.72, validation_fraction: 0.0}
    shuffle: {block_sizes: [1, 2, 3, 4, 5], max_sentences: 20}

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

The tables of the intruder and shuffle runs are moved from ``work/`` into ``dataset/`` when their run ends, so
``incoherent card OUT/dataset --build-dir OUT`` and ``incoherent publish`` see one dataset folder.

A build is resumable (:mod:`pipelines.build.resume`): each stage writes to ``<dir>.partial``, is renamed when done and
recorded with its fingerprint in ``build_summary.json``; running ``build`` again on the same ``--out`` skips
finished stages whose fingerprint is unchanged and redoes the rest, after removing what an earlier config
wrote for sources it no longer has (:func:`remove_stale`). ``--force`` redoes everything; it deletes only what a
build writes (:data:`BUILD_WRITES`), and only in a folder that holds the marker (:func:`prepare_build_dir`).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import posixpath
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources

from corpora.sampling import SampleSpec, parse_sample
from pipelines.build import config_check, remote_resume
from pipelines.build.processes import peak_rss_mb, run_in_process, run_isolated
from pipelines.build.resume import (
    PARTIAL,
    clean,
    file_fingerprints,
    fingerprint,
    is_finished,
    publish,
    remove,
    write_json_atomic,
)
from pipelines.card import write_local_card
from pipelines.cli import COMMANDS, module_of
from pipelines.runtime import progress, safety, storage
from pipelines.runtime.options import DryRun, bound_driver_retries, check_beam_args
from schemas import SCHEMA_VERSION
from schemas.records import InputError
from sources.paths import check_name

CHECKS_OWN_BEAM_ARGS = True  # the CLI leaves the check of Beam's flags to run(), after untangle()
# Config sections whose keys become flags of one command, and the flags the build sets itself.
# From the one table of commands (pipelines.cli.COMMANDS): config section -> (module, keys the build sets).
SECTION_COMMANDS = {
    "neighbors": (module_of("neighbors"), {"out", "index", "overwrite"}),
    "intruders": (module_of("intruders"), {"out", "index", "neighbors", "history", "overwrite"}),
    "shuffle": (module_of("shuffle"), {"out", "overwrite"}),
}
INGEST_MODULES = {c.words[1]: c.module for c in COMMANDS if c.words[0] == "ingest"}  # source kind -> module
KINDS = tuple(INGEST_MODULES)  # ("wikipedia", "cnn", "text")
BUILD_SUMMARY = "build_summary.json"
DATASET, WORK = "dataset", "work"
TABLE_PREFIXES = ("intruder-", "shuffle-")
QUERIES_FILE = "ids.txt"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "config", nargs="?", metavar="CONFIG", help="YAML build config (default: bundled samples)"
    )
    parser.add_argument("--out", help="output directory (default: the config's `out`)")
    parser.add_argument(
        "--force",
        action="store_true",
        help="redo every stage (default: resume an earlier build in --out, skipping its finished stages)",
    )
    parser.add_argument("--overwrite", action="store_true", help="the same as --force")


def default_config_path() -> str:
    return str(resources.files("pipelines").joinpath("configs/default.yaml"))


# --------------------------------------------------------------------------------------------- config


def load_config(path: str) -> dict:
    """The config's YAML, bounded and type-checked: :func:`pipelines.build.config_check.load_config`."""
    return config_check.load_config(path)


def resolve_path(value: str, base: str, config_path: str, key: str) -> str:
    """An input path: absolute as given; relative against ``base``, then the current directory."""
    if storage.is_remote(value):  # gs://, s3://: checked through Beam's filesystems
        from pipelines.runtime.storage import BeamFiles

        files = BeamFiles()
        if files.isfile(str(value)) or files.isdir(str(value)):
            return str(value)
        raise InputError(f"{config_path}: {key}: {value} not found")
    path = os.path.expanduser(str(value))
    if os.path.isabs(path):
        tried = [path]
    else:
        tried = [os.path.normpath(os.path.join(base, path)), os.path.abspath(path)]
    for candidate in tried:
        if os.path.exists(candidate):
            return candidate
    raise InputError(f"{config_path}: {key}: {value} not found (tried {', '.join(dict.fromkeys(tried))})")


def _section(config: dict, name: str, config_path: str) -> dict:
    value = config.get(name) or {}
    if not isinstance(value, dict):
        raise InputError(f"{config_path}: `{name}` must be a mapping")
    return value


def command_flags(module: str) -> set[str]:
    """The long flags of one command, without dashes: ``{"block_sizes", "seed", ...}``."""
    parser = argparse.ArgumentParser(add_help=False)
    importlib.import_module(module).add_arguments(parser)
    return {
        s[2:].replace("-", "_")
        for action in parser._actions
        for s in action.option_strings
        if s.startswith("--")
    }


def check_keys(
    options: dict, module: str, where: str, config_path: str, reserved: set[str] = frozenset()
) -> None:
    """Every key of a config section must be a flag of the command it is passed to (before any work)."""
    known = command_flags(module) - set(reserved)
    for key in options:
        if str(key).replace("-", "_") not in known:
            command = module.rsplit(".", 1)[1].replace("_", " ")
            raise InputError(
                f"{config_path}: {where}.{key}: unknown key (`incoherent {command}` has no "
                f"--{str(key).replace('_', '-')}; known: {', '.join(sorted(known))})"
            )


def check_config(config: dict, config_path: str) -> dict:
    """The config with every input path resolved and checked; raises :class:`InputError` on the first fault."""
    known = {"base", "out", "seed", "sources", "neighbors", "intruders", "shuffle", "card"}
    unknown = sorted(set(config) - known)
    if unknown:
        raise InputError(f"{config_path}: unknown keys {unknown} (known: {sorted(known)})")
    config_dir = os.path.dirname(os.path.abspath(config_path))
    base = os.path.normpath(os.path.join(config_dir, str(config.get("base", "."))))
    sources = config.get("sources")
    if not isinstance(sources, dict) or not sources:
        raise InputError(f"{config_path}: `sources` must map source names to {{kind, inputs}}")
    resolved, skipped = {}, {}
    for name in sources:
        check_name(name, f"{config_path}: sources")  # a path is built from it: before any other check
    for name, spec in sources.items():
        where = f"sources.{name}"
        if not isinstance(spec, dict):
            raise InputError(f"{config_path}: {where} must be a mapping with `kind` and `inputs`")
        kind = spec.get("kind")
        if kind not in KINDS:
            raise InputError(f"{config_path}: {where}.kind must be one of {list(KINDS)}, got {kind!r}")
        if kind == "cnn" and name != "cnn":
            raise InputError(f"{config_path}: {where}: CNN documents are named `cnn`; call the source cnn")
        inputs = spec.get("inputs")
        if not isinstance(inputs, list) or not inputs:
            raise InputError(f"{config_path}: {where}.inputs must be a non-empty list of paths")
        history = spec.get("history") or []
        if history and kind != "wikipedia":
            raise InputError(f"{config_path}: {where}.history is only for Wikipedia dumps")
        unknown_keys = sorted(set(spec) - {"kind", "inputs", "history", "options", "optional", "get"})
        if unknown_keys:
            raise InputError(f"{config_path}: {where}: unknown keys {unknown_keys}")
        options = spec.get("options") or {}
        if not isinstance(options, dict):
            raise InputError(f"{config_path}: {where}.options must map flag names to values")
        check_keys(options, INGEST_MODULES[kind], f"{where}.options", config_path, {"out", "overwrite"})
        for path in history:
            check_name(history_label(str(path)), f"{config_path}: {where}.history ({path}): its label")
        if spec.get("optional"):
            missing = missing_inputs(inputs + history, base)
            if missing:
                how = f"; get it: {spec['get']}" if spec.get("get") else ""
                skipped[name] = f"{where}: {', '.join(missing)} not found, optional source skipped{how}"
                continue
        resolved[name] = {
            "kind": kind,
            "inputs": [resolve_path(p, base, config_path, f"{where}.inputs") for p in inputs],
            "history": [resolve_path(p, base, config_path, f"{where}.history") for p in history],
            "options": options,
        }
    if not resolved:
        raise InputError(
            f"{config_path}: every source is optional and missing ({'; '.join(skipped.values())})"
        )
    neighbors = _section(config, "neighbors", config_path)
    intruders = _section(config, "intruders", config_path)
    shuffle = _section(config, "shuffle", config_path)
    card = _section(config, "card", config_path)
    for name, (module, reserved) in SECTION_COMMANDS.items():
        check_keys(_section(config, name, config_path), module, name, config_path, reserved)
    unknown_card = sorted(set(card) - {"name", "license"})
    if unknown_card:
        raise InputError(f"{config_path}: card: unknown keys {unknown_card} (known: name, license)")
    for name, section in (("intruders", intruders), ("shuffle", shuffle)):
        sample = section.get("sample")
        if isinstance(sample, dict):
            for source, value in sample.items():
                if source in skipped:
                    continue
                if source not in resolved:
                    raise InputError(
                        f"{config_path}: {name}.sample.{source}: no such source ({sorted(resolved)})"
                    )
                parse_sample(value, f"{config_path}: {name}.sample.{source}")
        elif sample is not None:
            parse_sample(sample, f"{config_path}: {name}.sample")
    model = intruders.get("filter", "none")
    if model not in (None, "none"):
        intruders = dict(intruders, filter=resolve_path(model, base, config_path, "intruders.filter"))
    return {
        "sources": resolved,
        **({"skipped_sources": skipped} if skipped else {}),
        "seed": int(config.get("seed", 0)),
        "neighbors": neighbors,
        "intruders": intruders,
        "shuffle": shuffle,
        "card": {
            "name": str(card.get("name", "incoherent coherence corpora")),
            "license": str(card["license"]) if card.get("license") else None,  # None: from the sources
        },
    }


def missing_inputs(paths: list, base: str) -> list[str]:
    """The local paths of an optional source that are absent (against ``base``, then the current directory)."""
    out = []
    for value in paths:
        path = os.path.expanduser(str(value))
        if storage.is_remote(path):
            continue  # checked by resolve_path
        tried = [path] if os.path.isabs(path) else [os.path.join(base, path), os.path.abspath(path)]
        if not any(os.path.exists(t) for t in tried):
            out.append(str(value))
    return out


# --------------------------------------------------------------------------------------------- stages


def _flags(options: dict) -> list[str]:
    """``{"block_sizes": [1, 2], "overwrite": True}`` -> ``["--block-sizes", "1,2", "--overwrite"]``."""
    argv: list[str] = []
    for key, value in options.items():
        flag = "--" + str(key).replace("_", "-")
        if value is True:
            argv.append(flag)
        elif value is False or value is None:
            continue
        elif isinstance(value, list):
            argv += [flag, ",".join(str(v) for v in value)]
        else:
            argv += [flag, str(value)]
    return argv


def move_tables(run_dir: str, dataset_dir: str, prefixes: tuple[str, ...]) -> list[str]:
    """Move ``run_dir/<config>/`` folders whose name starts with a prefix into ``dataset_dir``."""
    if storage.is_remote(run_dir):
        return _move_remote_tables(run_dir, dataset_dir, prefixes)
    moved = []
    for name in sorted(os.listdir(run_dir)):
        if name.startswith(prefixes) and os.path.isdir(os.path.join(run_dir, name)):
            target = os.path.join(dataset_dir, name)
            if os.path.exists(target):
                raise InputError(f"{target}: two runs wrote the same table")
            shutil.move(os.path.join(run_dir, name), target)
            moved.append(name)
    return moved


def _move_remote_tables(run_dir: str, dataset_dir: str, prefixes: tuple[str, ...]) -> list[str]:
    """:func:`move_tables` on an object store: rename every file of the matching configs."""
    from apache_beam.io.filesystems import FileSystems

    sources, targets, moved = [], [], set()
    for path in storage.list_files(posixpath.join(run_dir, "*", "*")):
        config = posixpath.basename(posixpath.dirname(path))
        if config.startswith(prefixes):
            sources.append(path)
            targets.append(posixpath.join(dataset_dir, config, posixpath.basename(path)))
            moved.add(config)
    for config in moved:
        if storage.list_files(posixpath.join(dataset_dir, config, "*")):
            raise InputError(f"{posixpath.join(dataset_dir, config)}: two runs wrote the same table")
    if sources:
        FileSystems.rename(sources, targets)
    return sorted(moved)


def dataset_listing(dataset: str) -> dict[str, list[str]]:
    """``{config: [file names]}`` of the dataset folder (local or remote)."""
    listing: dict[str, list[str]] = {}
    for path in storage.list_files(storage.join(dataset, "*", "*")):
        parts = path.replace(os.sep, "/").rsplit("/", 2)
        listing.setdefault(parts[-2], []).append(parts[-1])
    return {name: sorted(files) for name, files in sorted(listing.items())}


def is_build(out: str) -> bool:
    """A local ``out`` written by ``incoherent build``: it holds the build marker (or, from before the marker,
    a ``build_summary.json`` of a build), or nothing but the lock of a build that is just starting."""
    marker = safety.read_marker(os.path.join(out, safety.BUILD_MARKER))
    if marker is not None:
        return marker.get("kind") == "build"
    try:
        with open(os.path.join(out, BUILD_SUMMARY), encoding="utf-8") as f:
            if json.load(f).get("command") == "build":
                return True
    except (OSError, ValueError, AttributeError):
        pass
    return set(os.listdir(out)) <= {safety.LOCK_FILE}


BUILD_WRITES = (DATASET, WORK, BUILD_SUMMARY, BUILD_SUMMARY + PARTIAL)  # what --force may delete in OUT


def prepare_build_dir(out: str, force: bool) -> tuple[dict[str, dict], safety.OutLock | None]:
    """Make ``out`` ready; returns the stage records of an earlier build there (to resume), else ``{}``, and
    the lock held on a local ``out`` (release it when the build ends).

    A non-empty directory that is not a build (:func:`is_build`) is never touched. The lock is taken before
    anything is written or deleted, the marker is written first. With ``force`` only what a build writes
    (:data:`BUILD_WRITES`) is deleted and everything is redone; other files in ``out`` stay. A remote ``out``
    (gs://, s3://) is not locked; it is resumed the same way through :mod:`pipelines.build.remote_resume`.
    """
    if storage.is_remote(out):
        existing = storage.BeamFiles().files_under(out)
        if existing:
            ours = {posixpath.join(out.rstrip("/"), name) for name in (BUILD_SUMMARY, safety.BUILD_MARKER)}
            if not ours & set(existing):
                raise InputError(
                    f"{out}: output directory is not empty and not an earlier build (no {safety.BUILD_MARKER}); "
                    "refusing to use or delete it"
                )
            if not force:
                return remote_resume.earlier_records(out, BUILD_SUMMARY), None
            from apache_beam.io.filesystems import FileSystems

            for name in BUILD_WRITES:  # only what a build wrote; other objects under out stay
                path = storage.join(out, name)
                if path in existing:
                    FileSystems.delete([path])
                else:
                    storage.delete_tree(path)
        storage.write_bytes(storage.join(out, safety.BUILD_MARKER), safety.marker_bytes("build", "build"))
        return {}, None
    safety.check_writable_dir(out)
    if os.path.isdir(out) and not is_build(out):
        raise InputError(
            f"{out}: output directory is not empty and not an earlier build (no {safety.BUILD_MARKER}); "
            "refusing to use or delete it"
        )
    os.makedirs(out, exist_ok=True)
    lock = safety.OutLock(out)
    lock.acquire()
    try:
        if safety.read_marker(os.path.join(out, safety.BUILD_MARKER)) is None:
            # first: a build killed in its first second is still recognised as a build
            safety.write_marker(out, safety.BUILD_MARKER, "build", "build")
        records: dict[str, dict] = {}
        if force:
            for name in BUILD_WRITES:
                remove(os.path.join(out, name))
        else:
            try:
                with open(os.path.join(out, BUILD_SUMMARY), encoding="utf-8") as f:
                    records = json.load(f).get("stages") or {}
            except (OSError, ValueError, AttributeError):
                records = {}  # no readable record: every stage is redone
    except BaseException:
        lock.release()
        raise
    return records, lock


def remove_stale(out: str, stages: list[Stage]) -> list[str]:
    """Delete what an earlier build in ``out`` wrote for sources or stages this config no longer has.

    That is the tables of ``OUT/dataset/`` no stage writes, and every folder of ``OUT/work/`` that is not a
    stage's output (nor on the way to one). The dataset then holds exactly what this config produces.
    Returns what was removed."""
    removed = []
    dataset, work = os.path.join(out, DATASET), os.path.join(out, WORK)
    tables = {"candidates"} | {table for stage in stages for table in stage.tables}
    if os.path.isdir(dataset):
        for name in sorted(os.listdir(dataset)):
            path = os.path.join(dataset, name)
            if name.startswith(TABLE_PREFIXES) and name not in tables and os.path.isdir(path):
                remove(path)
                removed.append(path)
    keep = {os.path.normpath(stage.out) for stage in stages}
    on_the_way = set()
    for path in keep:
        path = os.path.dirname(path)
        while path.startswith(work + os.sep):
            on_the_way.add(path)
            path = os.path.dirname(path)
    for root, dirs, files in os.walk(work):
        if root in keep:
            dirs[:] = []
            continue
        for name in sorted(dirs + files):
            path = os.path.join(root, name)
            if path not in keep and path not in on_the_way:
                remove(path)
                removed.append(path)
        dirs[:] = [d for d in dirs if os.path.join(root, d) in keep | on_the_way]
    return removed


CONFIG_SUFFIXES = (".yaml", ".yml")


def untangle(config: str | None, beam_args: list[str]) -> tuple[str | None, list[str]]:
    """Undo argparse giving a Beam flag's value to the optional CONFIG positional.

    ``incoherent build --runner DirectRunner`` parses as CONFIG=``DirectRunner`` with ``--runner`` left
    dangling among Beam's flags; put the value back after its flag and take a ``*.yaml`` token as CONFIG.

    >>> untangle("DirectRunner", ["--runner"])
    (None, ['--runner', 'DirectRunner'])
    >>> untangle("DirectRunner", ["--runner", "my.yaml", "--x=1"])
    ('my.yaml', ['--runner', 'DirectRunner', '--x=1'])
    """
    if config is None or config.endswith(CONFIG_SUFFIXES) or os.path.isfile(config):
        return config, beam_args
    dangling = [
        i
        for i, a in enumerate(beam_args)
        if a.startswith("--")
        and "=" not in a
        and (
            i + 1 == len(beam_args)
            or beam_args[i + 1].startswith("-")
            or beam_args[i + 1].endswith(CONFIG_SUFFIXES)
        )
    ]
    if not dangling:
        return config, beam_args
    i = dangling[0]
    rest = beam_args[: i + 1] + [config] + beam_args[i + 1 :]
    configs = [a for a in rest if a.endswith(CONFIG_SUFFIXES) and not a.startswith("-")]
    if configs:
        rest.remove(configs[0])
        return configs[0], rest
    return None, rest


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


def _with_out(argv: list[str], out: str) -> list[str]:
    """``argv`` with the value of ``--out`` replaced."""
    i = argv.index("--out")
    return argv[: i + 1] + [out] + argv[i + 2 :]


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
        from pipelines.runtime.common import document_files, write_summary
        from pipelines.sampling import sampled_ids, write_id_list

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
    """The stages of a build, in order."""
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
        source_flag = [] if spec["kind"] == "cnn" else ["--source", name]
        ingest = f"ingest/{name}"
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
                ],
                inputs=spec["inputs"],
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


def relative_to_out(arg: str, out: str) -> str:
    """A path argument under ``out`` written as ``$OUT/...`` (also in ``NAME=PATH``); others unchanged.

    >>> relative_to_out("b/work/index", "b"), relative_to_out("cnn=b/work/nb", "b"), relative_to_out("bx/y", "b")
    ('$OUT/work/index', 'cnn=$OUT/work/nb', 'bx/y')
    """
    prefix = out.rstrip("/") + "/"
    name, sep, path = arg.rpartition("=")
    if path.startswith(prefix):
        return f"{name}{sep}$OUT/{path[len(prefix) :]}"
    return arg


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    args.config, beam_args = untangle(args.config, list(beam_args))
    check_beam_args(beam_args, "build")
    bound_driver_retries()
    config_path = args.config or default_config_path()
    raw = load_config(config_path)
    config = check_config(raw, config_path)
    config_check.check_before_run(raw, config, plan(config, WORK), config_path)  # every value, no work yet
    out = storage.absolute(args.out or str(raw.get("out", "out/build")))  # local, gs:// or s3://
    safety.check_out_vs_inputs(out, [os.path.abspath(config_path), *config_inputs(config)])
    for line in config.get("skipped_sources", {}).values():
        progress.write(f"[build] {line}")
    if _dry_run(beam_args):
        return dry_run_build(config, out, beam_args)
    earlier, lock = prepare_build_dir(out, args.force or args.overwrite)
    try:
        return build(beam_args, config_path, raw, config, out, earlier)
    finally:
        if lock is not None:
            lock.release()


def config_inputs(config: dict) -> list[str]:
    """Every path a checked config reads: its sources' inputs and history, the filter model."""
    paths = [p for spec in config["sources"].values() for p in [*spec["inputs"], *spec["history"]]]
    model = config["intruders"].get("filter", "none")
    return paths + ([] if model in (None, "none") else [str(model)])


def build(
    beam_args: list[str],
    config_path: str,
    raw: dict,
    config: dict,
    out: str,
    earlier: dict[str, dict],
) -> int:
    """Run the stages of a checked config into a prepared ``out`` (see :func:`run`)."""
    remote = storage.is_remote(out)
    work, dataset = storage.join(out, WORK), storage.join(out, DATASET)
    stages = plan(config, work)
    if not remote:
        for path in remove_stale(out, stages):
            progress.write(f"[build] removed {os.path.relpath(path, out)}: not produced by this config")
        os.makedirs(dataset, exist_ok=True)
    timings: dict[str, float] = {}
    peak_rss: dict[str, int] = {}
    records: dict[str, dict] = {}
    summary = {
        "command": "build",
        "config": os.path.abspath(config_path),
        "raw_config": raw,
        "resolved": config,
        "commands": [],  # argv of every stage, for the card
        "beam_args": list(beam_args),
        "complete": False,
        "seconds": timings,
        "peak_rss_mb": peak_rss,  # high-water mark of each stage's process (or its largest child process)
        "skipped": [],  # stages finished by an earlier run with the same fingerprint
        "stages": records,
        **({"skipped_sources": config["skipped_sources"]} if config.get("skipped_sources") else {}),
    }

    def write_summary() -> None:
        if remote:
            text = json.dumps(summary, indent=2, default=str) + "\n"
            storage.write_bytes(storage.join(out, BUILD_SUMMARY), text.encode("utf-8"))
        else:
            write_json_atomic(os.path.join(out, BUILD_SUMMARY), summary)

    show = progress.enabled()
    bar = progress.bar(total=len(stages), desc="build", unit="stage") if show else None
    prints: dict[str, str] = {}
    for i, stage in enumerate(stages, 1):
        inputs = remote_resume.input_fingerprints(stage.inputs) if remote else file_fingerprints(stage.inputs)
        relocatable = [relative_to_out(arg, out) for arg in stage.argv]  # a moved build keeps its prints
        stage_print = fingerprint(relocatable, inputs, [prints[u] for u in stage.upstream])
        prints[stage.name] = stage_print
        record = {
            "fingerprint": stage_print,
            "argv": stage.argv,
            "inputs": inputs,
            "upstream": stage.upstream,
        }
        label = f"[build] stage {i} of {len(stages)}, {stage.name}"
        if stage.make is None:
            summary["commands"].append(stage.argv + list(beam_args))  # for the card
        finished = remote_resume.is_finished if remote else is_finished
        if finished(earlier.get(stage.name), stage_print, stage.out):
            progress.write(f"{label}: finished by an earlier run, skipped")
            records[stage.name] = earlier[stage.name]
            summary["skipped"].append(stage.name)
        else:
            command = f"incoherent {' '.join(stage.argv)}" if stage.make is None else "writing the sample ids"
            progress.write(f"{label}: {command}")
            if bar is not None:
                bar.set_postfix_str(stage.name)
            started = time.time()
            stage_peak = 0
            if (
                remote
            ):  # object stores have no atomic rename: a marker written last (pipelines.build.remote_resume)
                remote_resume.clean(stage.out, [storage.join(dataset, table) for table in stage.tables])
                partial = stage.out + PARTIAL
                if stage.make is not None:
                    stage.make(partial)
                else:
                    stage_peak = run_isolated(_with_out(stage.argv, partial), beam_args)
                remote_resume.publish(stage.out, stage_print)
            else:
                clean(stage.out)
                for table in stage.tables:
                    remove(os.path.join(dataset, table))
                partial = stage.out + PARTIAL
                if stage.make is not None:
                    stage.make(partial)
                else:
                    stage_peak = run_isolated(_with_out(stage.argv, partial), beam_args)
                publish(stage.out)
            if stage.tables:
                move_tables(stage.out, dataset, tuple(stage.tables))
            timings[stage.name] = round(time.time() - started, 2)
            peak_rss[stage.name] = stage_peak or peak_rss_mb()  # a function stage runs in this process
            record.update(seconds=timings[stage.name], peak_rss_mb=peak_rss[stage.name])
            records[stage.name] = record
        write_summary()  # after every stage: a kill loses at most the stage that was running
        if bar is not None:
            bar.update(1)
    if bar is not None:
        progress.close(bar)
    started = time.time()
    write_summary()  # the card reads the stage commands from it
    card_path = build_card(out, dataset, config["card"]["name"], config["card"]["license"], beam_args)
    timings["card"] = round(time.time() - started, 2)
    progress.write(f"[build] card: {card_path}")
    intruders_summary = json.loads(storage.read_bytes(storage.join(work, "intruders", "run_summary.json")))
    summary["complete"] = True
    summary["total_seconds"] = round(sum(timings.values()), 2)
    summary["dataset"] = dataset_listing(dataset)
    summary["sources"] = intruders_summary.get("sources", {})
    write_summary()
    print_build(summary, out)
    return 0


def build_card(out: str, dataset: str, name: str, license_id: str | None, beam_args: list[str]) -> str:
    """Write the dataset card (README.md, figures, summaries). A remote build's card reads only footers and JSON
    on the driver; its statistics come from a pipeline on the build's runner (:mod:`pipelines.card`)."""
    if not storage.is_remote(out):
        return write_local_card(out, dataset, name, license_id)
    from pipelines.card import write_remote_card

    return write_remote_card(out, dataset, name, license_id, beam_args)


def _dry_run(beam_args: list[str]) -> bool:
    if not any(a.startswith("--dry_run") for a in beam_args):
        return False
    from apache_beam.options.pipeline_options import PipelineOptions

    from pipelines.runtime.common import is_dry_run

    return is_dry_run(PipelineOptions(beam_args))


STANDIN_DOCUMENTS = 6


def write_standin_documents(docs_dir: str, source: str, older: bool = False) -> None:
    """A few documents of ``source`` laid out as ``incoherent ingest`` writes them (a dry run's stand-ins)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from schemas import DOCUMENT_SCHEMA

    version = "an older" if older else "the current"
    rows = [
        {
            "id": f"{source}:{n}",
            "source": source,
            "title": f"Stand-in {n}",
            "sentences": [
                f"Stand-in document {n} opens {version} version of its text.",
                *(
                    f"Sentence {i} of stand-in document {n} says something about topic {n % 3}."
                    for i in range(1, 5)
                ),
            ],
        }
        for n in range(1, STANDIN_DOCUMENTS + 1)
    ]
    folder = os.path.join(docs_dir, f"documents-{source}")
    os.makedirs(folder, exist_ok=True)
    table = pa.Table.from_pylist(rows, schema=DOCUMENT_SCHEMA)
    pq.write_table(table, os.path.join(folder, "documents-00000-of-00001.parquet"))


def _dry_run_stage(argv: list[str], beam_args: list[str]) -> str:
    try:
        run_in_process(argv, beam_args)
    except DryRun as exc:
        print(f"[build] {exc}", flush=True)
        return str(exc)
    raise RuntimeError(f"build --dry_run: `incoherent {' '.join(argv[:2])}` ran instead of stopping")


def dry_run_build(config: dict, out: str, beam_args: list[str]) -> int:
    """``--dry_run=True``: check the config and build and validate the job graph of every stage.

    Nothing is submitted and nothing is written under ``out``. The ingest graphs are built on the real inputs
    (listed, not read). The later stages read what ingest writes, which a dry run does not write, so their
    graphs are built on stand-ins: a few documents per source written to a temporary folder, which the local
    runner indexes and searches for real so that every stage's own checks pass; each stage's graph is then
    built with the given runner and options (on Dataflow: translated and validated, the package staged). The
    stand-ins are deleted; the `DryRun` message says all of this.
    """
    built = []
    for stage in plan(config, storage.join(out, WORK)):
        if stage.argv[0] == "ingest":
            built.append(_dry_run_stage(stage.argv, beam_args))
    standin = tempfile.mkdtemp(prefix="incoherent-dry-run-")
    try:
        ingest_names = {}
        for stage in plan(config, os.path.join(standin, WORK)):
            source = stage.name.split("/")[1] if "/" in stage.name else None
            if stage.argv[0] == "ingest":
                write_standin_documents(stage.out, source, older=stage.name.startswith("ingest-history/"))
                ingest_names[stage.name] = source
            elif stage.make is not None:
                stage.make(stage.out)  # the sample's query ids, from the stand-in documents
            else:
                built.append(_dry_run_stage(stage.argv, beam_args))
                if stage.argv[0] in ("index", "neighbors"):  # what the next stages' checks read
                    run_in_process(stage.argv, [])
    finally:
        shutil.rmtree(standin, ignore_errors=True)
    raise DryRun(
        f"dry run: `incoherent build` config checked and {len(built)} job graphs built and validated (ingest on "
        f"the real inputs, listed but not read; index, neighbors, intruders and shuffle on {STANDIN_DOCUMENTS} "
        "stand-in documents per source, indexed and searched here in a temporary folder, since their real "
        "inputs are what ingest writes); nothing was submitted and nothing was written"
    )


def print_build(summary: dict, out: str) -> None:
    print(f"[build] dataset in {storage.join(out, DATASET)}:")
    for config, files in summary["dataset"].items():
        print(f"  {config}: {', '.join(files)}")
    for source, s in summary["sources"].items():
        art = s.get("artefact_check", {})
        check = (
            f"; artefact check F1 {art['f1']:.2f} (majority {art['majority_f1']:.2f})" if "f1" in art else ""
        )
        print(
            f"  {source}: {s['documents_read']} read, {s['produced']} intruders of {s['incoherent_attempted']} "
            f"attempted, positive rate {s['positive_rate']}, splits {s['splits']}{check}"
        )
    print(
        f"[build] {summary['total_seconds']} s; stages: "
        + ", ".join(f"{k} {v}s" for k, v in summary["seconds"].items())
    )
