"""Executing a build's plan: the resume loop, moving tables into the dataset, the build folder and its lock.

A build is resumable (:mod:`pipelines.build.resume`): each stage writes to ``<dir>.partial``, is renamed when done
and recorded with its fingerprint in ``build_summary.json``; running ``build`` again on the same ``--out`` skips
finished stages whose fingerprint is unchanged and redoes the rest, after removing what an earlier config
wrote for sources it no longer has (:func:`remove_stale`). ``--force`` redoes everything; it deletes only what a
build writes (:data:`BUILD_WRITES`), and only in a folder that holds the marker (:func:`prepare_build_dir`). A
remote ``--out`` (``gs://``, ``s3://``) resumes the same way through :mod:`pipelines.build.remote_resume`. Each
stage runs in its own process (:mod:`pipelines.build.processes`).
"""

from __future__ import annotations

import json
import os
import posixpath
import shutil
import time
from collections.abc import Callable

from incoherent.fileio.outputs import entries
from incoherent.pipelines.build import remote_resume
from incoherent.pipelines.build.plan import DATASET, WORK, Stage, plan
from incoherent.pipelines.build.processes import peak_rss_mb, run_isolated
from incoherent.pipelines.build.resume import (
    clean,
    file_fingerprints,
    fingerprint,
    is_finished,
    publish,
    remove,
)
from incoherent.pipelines.card import write_local_card
from incoherent.pipelines.runtime import progress, safety, storage
from incoherent.pipelines.runtime.summary import PARTIAL, SUMMARY_FILE, write_json_atomic
from incoherent.schemas.records import InputError

BUILD_SUMMARY = "build_summary.json"
TABLE_PREFIXES = ("intruder-", "shuffle-")
# what --force may delete in OUT (of dataset/, only what a build writes there: dataset_entries_of_a_build)
BUILD_WRITES = (DATASET, WORK, BUILD_SUMMARY, BUILD_SUMMARY + PARTIAL)


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
    a ``build_summary.json`` of a build), or nothing but the lock of a build that is just starting (and, if it
    was killed while writing its marker, that marker's ``.partial``)."""
    marker = safety.read_marker(os.path.join(out, safety.BUILD_MARKER))
    if marker is not None:
        return marker.get("kind") == "build"
    try:
        with open(os.path.join(out, BUILD_SUMMARY), encoding="utf-8") as f:
            if json.load(f).get("command") == "build":
                return True
    except (OSError, ValueError, AttributeError):
        pass
    return safety.just_started(entries(out), safety.BUILD_MARKER)


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
                if name == DATASET:
                    dataset = os.path.join(out, DATASET)
                    for entry in dataset_entries_of_a_build(dataset):
                        remove(entry)
                    if os.path.isdir(dataset) and not os.listdir(dataset):
                        os.rmdir(dataset)  # nothing of the user's in it: gone, as before
                else:
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


# What a build writes in OUT/dataset/ besides its tables: the card (corpora/card: README.md, figures/, summaries/)
CARD_WRITES = ("README.md", "figures", "summaries")


def dataset_entries_of_a_build(dataset: str) -> list[str]:
    """The entries of ``OUT/dataset`` that a build wrote: its tables (``intruder-*``, ``shuffle-*``,
    ``candidates``) and its card; what ``--force`` deletes there. A file of the user's own beside them (a
    LICENSE, notes for the Hub) stays.

    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> for name in ("intruder-cnn", "candidates", "figures", "mine"): os.mkdir(os.path.join(d, name))
    >>> for name in ("README.md", "LICENSE"): open(os.path.join(d, name), "w").close()
    >>> [os.path.basename(p) for p in dataset_entries_of_a_build(d)]
    ['README.md', 'candidates', 'figures', 'intruder-cnn']
    """
    if not os.path.isdir(dataset):
        return []
    return [
        os.path.join(dataset, name)
        for name in entries(dataset)
        if name.startswith(TABLE_PREFIXES) or name == "candidates" or name in CARD_WRITES
    ]


def removed_line(path: str, out: str, stages: list[Stage]) -> str:
    """What :func:`remove_stale` removed, said truly: the unfinished output of a stage that an earlier run left
    (interrupted: the stage runs again), or output this config does not produce.

    >>> stage = Stage("index", "/o/work/retrieval/wiki/index")
    >>> removed_line("/o/work/retrieval/wiki/index.partial", "/o", [stage])
    '[build] removed work/retrieval/wiki/index.partial: the unfinished output of an interrupted run (index runs again)'
    >>> removed_line("/o/dataset/intruder-cnn", "/o", [stage])
    '[build] removed dataset/intruder-cnn: not produced by this config'
    """
    shown = os.path.relpath(path, out)
    for stage in stages:
        if path.endswith(PARTIAL) and os.path.normpath(path[: -len(PARTIAL)]) == os.path.normpath(stage.out):
            return f"[build] removed {shown}: the unfinished output of an interrupted run ({stage.name} runs again)"
    return f"[build] removed {shown}: not produced by this config"


def remove_stale(out: str, stages: list[Stage]) -> list[str]:
    """Delete what an earlier build in ``out`` wrote for sources or stages this config no longer has.

    That is the tables of ``OUT/dataset/`` no stage writes, and every folder of ``OUT/work/`` that is not a
    stage's output (nor on the way to one). The dataset then holds exactly what this config produces.
    Returns what was removed."""
    removed = []
    dataset, work = os.path.join(out, DATASET), os.path.join(out, WORK)
    tables = {table for stage in stages for table in stage.tables}
    if os.path.isdir(dataset):
        for name in sorted(os.listdir(dataset)):
            path = os.path.join(dataset, name)
            ours = name.startswith(TABLE_PREFIXES) or name == "candidates"
            if ours and name not in tables and os.path.isdir(path):
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


def _with_out(argv: list[str], out: str) -> list[str]:
    """``argv`` with the value of ``--out`` replaced."""
    i = argv.index("--out")
    return argv[: i + 1] + [out] + argv[i + 2 :]


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


def build(
    beam_args: list[str],
    config_path: str,
    raw: dict,
    config: dict,
    out: str,
    earlier: dict[str, dict],
    stage_args: Callable[[], list[str]] | None = None,
) -> int:
    """Run the stages of a checked config into a prepared ``out`` (see :func:`run`). ``stage_args()`` gives
    the Beam flags a stage runs with (default: ``beam_args``; a Flink or Spark build's adds the one job server
    it starts when a stage first needs it, :class:`pipelines.runtime.job_servers.SharedJobServer`); the
    summary and the card record ``beam_args``."""
    stage_args = stage_args or (lambda: list(beam_args))
    remote = storage.is_remote(out)
    work, dataset = storage.join(out, WORK), storage.join(out, DATASET)
    stages = plan(config, work)
    if not remote:
        for path in remove_stale(out, stages):
            progress.write(removed_line(path, out, stages))
        os.makedirs(dataset, exist_ok=True)
    timings: dict[str, float] = {}
    peak_rss: dict[str, int] = {}
    records: dict[str, dict] = {}
    summary = _new_summary(beam_args, config_path, raw, config, timings, peak_rss, records)

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
            progress.note(f"{label}: finished by an earlier run, skipped")
            records[stage.name] = earlier[stage.name]
            summary["skipped"].append(stage.name)
        else:
            command = f"incoherent {' '.join(stage.argv)}" if stage.make is None else "writing the sample ids"
            progress.note(f"{label}: {command}")
            if bar is not None:
                bar.set_postfix_str(stage.name)
            started = time.time()
            stage_peak = _run_stage(stage, dataset, remote, stage_args, stage_print)
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
    card_path = build_card(
        out, dataset, config["card"]["name"], config["card"]["license"], stage_args() if remote else beam_args
    )
    timings["card"] = round(time.time() - started, 2)
    progress.note(f"[build] card: {card_path}")
    intruders_file = storage.join(work, "intruders", SUMMARY_FILE)
    built_intruders = any(stage.name == "intruders" for stage in stages)  # `corpora` may leave them out
    intruders_summary = json.loads(storage.read_bytes(intruders_file)) if built_intruders else {}
    summary["complete"] = True
    summary["total_seconds"] = round(sum(timings.values()), 2)
    summary["dataset"] = dataset_listing(dataset)
    summary["sources"] = intruders_summary.get("sources", {})
    write_summary()
    print_build(summary, out)
    return 0


def _new_summary(
    beam_args: list[str],
    config_path: str,
    raw: dict,
    config: dict,
    timings: dict[str, float],
    peak_rss: dict[str, int],
    records: dict[str, dict],
) -> dict:
    """The build summary before any stage runs (timings, peak_rss and records fill in as stages do)."""
    return {
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


def _run_stage(
    stage, dataset: str, remote: bool, stage_args: Callable[[], list[str]], stage_print: str
) -> int:
    """Run one stage into ``stage.out`` + PARTIAL, publish it; its process's peak RSS (0: this process).
    ``stage_args()``: the Beam flags of a command stage (asked only when one runs)."""
    stage_peak = 0
    if remote:  # object stores have no atomic rename: a marker written last (pipelines.build.remote_resume)
        remote_resume.clean(stage.out, [storage.join(dataset, table) for table in stage.tables])
        partial = stage.out + PARTIAL
        if stage.make is not None:
            stage.make(partial)
        else:
            stage_peak = run_isolated(_with_out(stage.argv, partial), stage_args())
        remote_resume.publish(stage.out, stage_print)
    else:
        clean(stage.out)
        for table in stage.tables:
            remove(os.path.join(dataset, table))
        partial = stage.out + PARTIAL
        if stage.make is not None:
            stage.make(partial)
        else:
            stage_peak = run_isolated(_with_out(stage.argv, partial), stage_args())
        publish(stage.out)
    return stage_peak


def build_card(out: str, dataset: str, name: str, license_id: str | None, beam_args: list[str]) -> str:
    """Write the dataset card (README.md, figures, summaries). A remote build's card reads only footers and JSON
    on the driver; its statistics come from a pipeline on the build's runner (:mod:`pipelines.card`)."""
    if not storage.is_remote(out):
        return write_local_card(out, dataset, name, license_id)
    from incoherent.pipelines.card import write_remote_card

    return write_remote_card(out, dataset, name, license_id, beam_args)


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
