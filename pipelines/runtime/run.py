"""Running one stage's pipeline: the runner, the output folder, dry runs, Dataflow staging, the run summary.

:func:`run_pipeline` is what every stage command calls: it resolves the runner (:func:`resolve_runner`, the
local engine directly), prepares ``OUT`` (:func:`prepare_output`: only a folder of the same command is
replaced), gives the local engine its spill folder, runs the pipeline and writes, last and only when it
succeeded::

    OUT/run_summary.json    the command, its parameters, Beam's counters, rows per table and split

An :class:`InputError` raised inside a worker comes back as the same one-line error. ``--dry_run=True``
builds and validates the job graph instead (:func:`dry_run`). The tables a stage writes:
:mod:`pipelines.runtime.tables`.
"""

from __future__ import annotations

import contextlib
import json
import os
import posixpath
import shutil
import time
from collections.abc import Callable, Sequence

import apache_beam as beam
import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics.metric import MetricsFilter
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions

from incoherent.fileio import outputs
from incoherent.pipelines.runtime import progress, safety, spill, storage
from incoherent.pipelines.runtime.errors import flink_buffers_message, input_error_message
from incoherent.pipelines.runtime.flink_jobs import announce_flink_job
from incoherent.pipelines.runtime.job_servers import stop_job_servers, stopping_runner
from incoherent.pipelines.runtime.options import DryRun, bound_driver_retries, runner_key
from incoherent.pipelines.runtime.summary import SUMMARY_FILE, write_summary
from incoherent.schemas import SCHEMA_VERSION
from incoherent.schemas.records import InputError


def resolve_runner(options: PipelineOptions):
    """The runner to use. ``DirectRunner`` (the default) runs on Beam's FnApiRunner engine directly.

    Beam's ``DirectRunner`` first tries to download and start the Prism runner binary and only falls back to
    its Python engine when that fails; offline that costs a failed download on every run. Batch pipelines
    like ours always end up on the FnApiRunner, which honours ``--direct_num_workers`` and
    ``--direct_running_mode``, so we pick it up front (for ``--runner FnApiRunner`` too). With ``--environment_type`` (``EXTERNAL`` and
    ``--environment_config=HOST:PORT`` of a worker pool) its SDK workers are the pool's processes, as many as
    ``--direct_num_workers``. ``FlinkRunner`` and ``SparkRunner`` are Beam's, keeping the job servers they start
    so that the command stops them (:func:`pipelines.runtime.job_servers.stopping_runner`). Any other
    ``--runner`` is used as given.
    """
    runner = options.view_as(StandardOptions).runner
    stopping = stopping_runner(runner_key(runner))
    if stopping is not None:
        return stopping
    if runner_key(runner) in ("directrunner", "fnapirunner"):
        from apache_beam.options.pipeline_options import PortableOptions
        from apache_beam.runners.portability.fn_api_runner import FnApiRunner

        if options.view_as(PortableOptions).environment_type:  # e.g. EXTERNAL: SDK workers in a worker pool
            from apache_beam.transforms import environments

            return FnApiRunner(
                default_environment=environments.Environment.from_options(options.view_as(PortableOptions))
            )
        return FnApiRunner()
    return runner


def _read_json(path: str) -> object:
    try:
        return json.loads(storage.read_bytes(path))
    except Exception:  # noqa: BLE001 - missing, unreadable or not JSON: not ours
        return None


def _ours(out_dir: str, command: str) -> tuple[bool, bool]:
    """``(ours, complete)``: a folder (local or remote) written by ``incoherent <command>`` (its marker or its
    run summary says so) and whether that run completed."""
    marker = _read_json(storage.join(out_dir, safety.RUN_MARKER))
    summary = _read_json(storage.join(out_dir, SUMMARY_FILE))
    summary = summary if isinstance(summary, dict) else {}
    marked = isinstance(marker, dict) and marker.get("written_by") == f"incoherent {command}"
    return marked or summary.get("command") == command, summary.get("complete") is True


def _not_ours(out_dir: str, command: str) -> InputError:
    return InputError(
        f"{out_dir}: output directory is not empty and not the output of `incoherent {command}`; "
        "refusing to use or delete it (choose another --out)"
    )


def _names(value: object) -> set[str] | None:
    """A marker's list of entry names, or None when it is not a list of strings (absent, or hand-edited)."""
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        return None
    return set(value)


def own_entries(out_dir: str, names: list[str], command: str) -> list[str]:
    """Of the entries ``names`` of ``out_dir``, those the earlier run of ``command`` wrote: what ``--overwrite``
    (or a rerun after a failed run) deletes. Everything else (a user's ``NOTES.txt``, ``mine/``) stays.

    The marker says (:func:`pipelines.runtime.safety.marker_bytes`): a finished run lists what it ``wrote``;
    a run that did not finish lists what it ``kept`` (what was there before it started), and the rest is its
    own. A folder of an older ``incoherent``, whose marker lists neither, is refused in one line: which of its
    entries are the user's cannot be told.
    """
    marker = _read_json(storage.join(out_dir, safety.RUN_MARKER))
    marker = marker if isinstance(marker, dict) else {}
    wrote, kept = _names(marker.get("wrote")), _names(marker.get("kept"))
    if wrote is not None:
        wrote |= {safety.RUN_MARKER, SUMMARY_FILE}
        return [n for n in names if n in wrote or n.removesuffix(outputs.PARTIAL) in wrote]
    if kept is not None:
        return [n for n in names if n not in kept]
    raise InputError(
        f"{out_dir}: written by an older incoherent whose marker does not list the files it wrote, so your "
        "own files there cannot be told from them; delete the folder yourself or choose another --out"
    )


def _top_level(out_dir: str, paths: list[str]) -> dict[str, list[str]]:
    """``{entry: [paths]}``: remote object paths under ``out_dir`` by their top-level entry."""
    found: dict[str, list[str]] = {}
    for path in paths:
        found.setdefault(posixpath.relpath(path, out_dir).split("/", 1)[0], []).append(path)
    return found


def prepare_output(out_dir: str, overwrite: bool, command: str = "") -> None:
    """Refuse to mix runs: an output directory with an earlier run's files needs ``--overwrite``.

    Only a folder recognisably written by the same command (its marker, :data:`pipelines.runtime.safety.RUN_MARKER`,
    or its ``run_summary.json``) is replaced, and in it only what that run wrote (:func:`own_entries`); an
    earlier run of it that failed is replaced without ``--overwrite``. Any other non-empty folder is refused.
    The marker is written first, listing what is kept; :func:`finish_output` lists what the run wrote.
    """
    if not storage.is_remote(out_dir):
        safety.check_writable_dir(out_dir)
        found = outputs.entries(out_dir)  # the lock (pipelines.runtime.safety.command_lock) is not content
        # a run killed while it wrote its marker left only the marker's .partial: the new marker replaces it
        if not safety.just_started(found, safety.RUN_MARKER):
            ours, complete = _ours(out_dir, command)
            if not ours:
                raise _not_ours(out_dir, command)
            if complete and not overwrite:
                raise InputError(f"{out_dir}: output directory is not empty (pass --overwrite to replace it)")
            outputs.remove_entries(out_dir, own_entries(out_dir, found, command))
        os.makedirs(out_dir, exist_ok=True)
        kept = [n for n in outputs.entries(out_dir) if n != safety.RUN_MARKER + outputs.PARTIAL]
        outputs.replace_file(
            os.path.join(out_dir, safety.RUN_MARKER), safety.marker_bytes("run", command, kept=kept)
        )
        return
    storage.check_reachable(out_dir)
    probe = posixpath.join(out_dir, ".write-check")  # a missing bucket or no write permission: one line, now
    try:
        storage.write_bytes(probe, b"ok")  # not empty: S3 refuses a multipart upload of no part
        FileSystems.delete([probe])
    except Exception as exc:  # noqa: BLE001 - Beam wraps every storage failure in its own types
        raise InputError(f"{out_dir}: cannot be written ({storage.storage_error(exc)})") from None
    found = _top_level(out_dir, _remote_paths(out_dir))
    if found:
        ours, complete = _ours(out_dir, command)
        if not ours:
            raise _not_ours(out_dir, command)
        if complete and not overwrite:
            raise InputError(f"{out_dir}: output directory is not empty (pass --overwrite to replace it)")
        doomed = own_entries(out_dir, sorted(found), command)
        FileSystems.delete([path for name in doomed for path in found[name]])
        found = {name: paths for name, paths in found.items() if name not in doomed}
    storage.write_bytes(
        posixpath.join(out_dir, safety.RUN_MARKER), safety.marker_bytes("run", command, kept=sorted(found))
    )


def _remote_paths(out_dir: str) -> list[str]:
    return [m.path for r in FileSystems.match([posixpath.join(out_dir, "**")]) for m in r.metadata_list]


def finish_output(out_dir: str, command: str) -> None:
    """Once a run has written everything (its run summary last): its marker lists what it ``wrote``, every entry
    of ``out_dir`` but those it ``kept``, so a later ``--overwrite`` deletes exactly those."""
    marker = _read_json(storage.join(out_dir, safety.RUN_MARKER))
    kept = _names(marker.get("kept")) if isinstance(marker, dict) else None
    kept = kept or set()
    if storage.is_remote(out_dir):
        names = set(_top_level(out_dir, _remote_paths(out_dir)))
    else:
        names = set(outputs.entries(out_dir))
    wrote = sorted((names - kept) | {safety.RUN_MARKER})
    data = safety.marker_bytes("run", command, kept=sorted(kept), wrote=wrote)
    if storage.is_remote(out_dir):
        storage.write_bytes(storage.join(out_dir, safety.RUN_MARKER), data)
    else:
        outputs.replace_file(os.path.join(out_dir, safety.RUN_MARKER), data)


def query_counters(result) -> dict[str, dict[str, int]]:
    """Committed Beam counters as ``{stage: {name: value}}``: the pipeline's own, not the runner's.

    Beam's portable results (Flink's job server) also return Beam's system metrics (element counts, bundle
    times) as counters of namespace ``beam`` named ``metric:...`` (the rest of their URN): they are the
    runner's, vary from run to run, and are left out, so a summary counts the same on every runner.
    """
    counters: dict[str, dict[str, int]] = {}
    try:
        metrics = result.metrics().query(MetricsFilter())
    except (NotImplementedError, AttributeError):  # some runners expose no metrics
        return counters
    for counter in metrics["counters"]:
        if counter.key.metric.namespace == "beam" and counter.key.metric.name.startswith("metric:"):
            continue
        value = counter.committed if counter.committed is not None else counter.attempted
        stage = counters.setdefault(counter.key.metric.namespace, {})
        stage[counter.key.metric.name] = stage.get(counter.key.metric.name, 0) + int(value)
    return {k: dict(sorted(v.items())) for k, v in sorted(counters.items())}


def list_outputs(out_dir: str) -> dict[str, dict[str, int]]:
    """Rows per config and split, read from the Parquet footers that were written."""
    outputs: dict[str, dict[str, int]] = {}
    for pattern in (
        posixpath.join(out_dir, "*", "*.parquet"),
        posixpath.join(out_dir, "rejected", "*", "*.parquet"),
    ):
        for match in FileSystems.match([pattern]):
            for meta in match.metadata_list:
                rel = posixpath.relpath(meta.path, out_dir)
                config, name = posixpath.split(rel)
                split = name.split("-", 1)[0]
                with FileSystems.open(meta.path) as f:
                    rows = pq.ParquetFile(f).metadata.num_rows
                per = outputs.setdefault(config, {})
                per[split] = per.get(split, 0) + rows
    return {k: dict(sorted(v.items())) for k, v in sorted(outputs.items())}


def is_dry_run(options: PipelineOptions) -> bool:
    from apache_beam.options.pipeline_options import TestOptions

    return str(options.view_as(TestOptions).dry_run).lower() in ("true", "1", "yes")


def stage_package(options: PipelineOptions) -> str | None:
    """Build the ``--setup_file`` package as Dataflow staging does (``python -m build --sdist``), locally."""
    from apache_beam.options.pipeline_options import SetupOptions

    setup_file = options.view_as(SetupOptions).setup_file
    if not setup_file:
        return None
    import tempfile

    from apache_beam.runners.portability.stager import Stager

    if not os.path.isfile(setup_file):
        raise InputError(f"--setup_file {setup_file}: no such file")
    folder = tempfile.mkdtemp(prefix="incoherent-staging-")
    try:
        return os.path.basename(Stager._build_setup_package(os.path.abspath(setup_file), folder))
    except Exception as exc:  # noqa: BLE001 - the build's own message says what is missing
        raise InputError(
            f"--setup_file {setup_file}: the package does not build ({str(exc)[:300]})"
        ) from None
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def dry_run(build: Callable[[beam.Pipeline], None], options: PipelineOptions, command: str) -> None:
    """Build the pipeline and validate its job graph without running it or writing anything; raise DryRun.

    On Dataflow the runner itself translates and validates the job (``--dry_run=True`` stops it before
    submission) and the ``--setup_file`` package is built; other runners' graphs are validated by
    translating them to Beam's portable representation. On Flink the job server jar, the master and its Flink
    version are checked too (:mod:`pipelines.runtime.flink_dry_run`: Flink's own translation needs a run).
    """
    from incoherent.pipelines.runtime.flink_dry_run import check_flink

    runner = options.view_as(StandardOptions).runner
    flink = check_flink(options)  # Flink: the jar, the master and its version (no translation without a run)
    pipeline = beam.Pipeline(runner=resolve_runner(options), options=options)
    build(pipeline)
    package = stage_package(options)
    if runner in ("DataflowRunner", "dataflow"):
        pipeline.run().wait_until_finish()
    else:
        pipeline.to_runner_api()
    staged = f"; package {package} built" if package else ""
    staged += f"; {flink}" if flink else ""
    raise DryRun(
        f"dry run: `incoherent {command}` job graph built and validated ({len(pipeline.to_runner_api().components.transforms)} "
        f"transforms){staged}; nothing ran and nothing was written"
    )


def spill_dir_for(out_dir: str, options: PipelineOptions) -> str:
    """Where the local engine spills its groupings: ``OUT/.spill``, or for a remote ``OUT`` a local temporary
    folder when the engine's workers run on this machine (thousands of small chunk files do not belong in a
    bucket: each is an upload and a delete)."""
    from apache_beam.options.pipeline_options import PortableOptions

    if storage.is_remote(out_dir) and not options.view_as(PortableOptions).environment_type:
        import tempfile

        return tempfile.mkdtemp(prefix="incoherent-spill-")
    return posixpath.join(storage.absolute(out_dir), spill.SPILL_DIR)


# Tests only (tests/pipelines/test_sigterm.py, tests/pipelines/build/test_build_resume.py): a test that signals or
# kills a command while its pipeline runs sets INCOHERENT_TEST_PAUSE_FILE=PATH (and INCOHERENT_TEST_PAUSE_COMMAND=NAME to
# pause only the pipeline of `run_pipeline(command=NAME)`); that pipeline then gets one more step, which creates
# PATH when it runs and waits there (at most PAUSE_SECONDS, then goes on), so the test signals at a known point
# instead of after a sleep. Unset, as everywhere else, nothing is added: not a step, not a check per record.
PAUSE_ENV, PAUSE_COMMAND_ENV, PAUSE_SECONDS = (
    "INCOHERENT_TEST_PAUSE_FILE",
    "INCOHERENT_TEST_PAUSE_COMMAND",
    300.0,
)


def _pause_here(path: str) -> None:
    mine = f"{path}.{os.getpid()}"
    with open(mine, "w") as f:
        f.write(f"{os.getpid()}\n")  # the waiting process
    try:
        os.link(mine, path)  # whole when it appears; only the first pipeline to get here waits
    except FileExistsError:
        return
    finally:
        os.unlink(mine)
    deadline = time.monotonic() + PAUSE_SECONDS
    while time.monotonic() < deadline:  # a signal's handler raises here: inside a transform
        time.sleep(0.05)


def _add_test_pause(pipeline: beam.Pipeline, command: str) -> None:
    path = os.environ.get(PAUSE_ENV)
    if path and os.environ.get(PAUSE_COMMAND_ENV, command) == command:
        _ = pipeline | "TestPause" >> beam.Create([path]) | "PauseHere" >> beam.Map(_pause_here)


def run_pipeline(
    build: Callable[[beam.Pipeline], None],
    *,
    command: str,
    out_dir: str,
    params: dict,
    beam_args: Sequence[str] = (),
    overwrite: bool = False,
    extra_summary: Callable[[dict], dict] | None = None,
) -> dict:
    """Build and run one pipeline, then write ``OUT/run_summary.json``.

    ``build(pipeline)`` adds the transforms. The summary holds the command, its parameters, Beam's counters
    (read, kept, dropped per reason) and the rows written per config and split. ``extra_summary(summary)``
    may return more fields computed after the run (e.g. from the written files).
    """
    bound_driver_retries()  # this is the driver: a bad remote path fails in seconds, not minutes
    options = PipelineOptions(list(beam_args))
    if is_dry_run(options):
        dry_run(build, options, command)
    prepare_output(out_dir, overwrite, command)
    started = time.time()
    runner = resolve_runner(options)
    pipeline = beam.Pipeline(runner=runner, options=options)
    spill_dir = spill_dir_for(out_dir, options)
    spill.use_spill_dir(pipeline, spill_dir)
    build(pipeline)
    _add_test_pause(pipeline, command)
    stop_announcing = lambda: None  # noqa: E731
    try:
        result = pipeline.run()
        stop_announcing = announce_flink_job(result, options, progress.quiet())  # its id and address
        result.wait_until_finish()
        counters = query_counters(result)  # a portable runner's job server answers: before it is stopped
    except Exception as exc:
        from incoherent.pipelines.runtime.inputs import INPUTS_DIR

        with contextlib.suppress(Exception):  # a re-run must not find half a run's input descriptions
            storage.delete_tree(storage.join(out_dir, INPUTS_DIR))
        message = input_error_message(exc) or flink_buffers_message(exc)
        if message:
            raise InputError(message) from None
        raise
    finally:
        stop_announcing()
        stop_job_servers(runner)  # Flink, Spark: on success, failure and Ctrl-C alike
        spill.remove_spill_dir(spill_dir)
    summary = {
        "command": command,
        "schema_version": SCHEMA_VERSION,
        "complete": True,
        "params": params,
        "beam_args": list(beam_args),
        "seconds": round(time.time() - started, 2),
        "counters": counters,
        "outputs": list_outputs(out_dir),
    }
    if extra_summary:
        summary.update(extra_summary(summary))
    write_summary(out_dir, summary)
    finish_output(out_dir, command)
    return summary


def print_ingest_report(
    summary: dict, out_dir: str, stage: str, unit: str = "records", read: int | None = None, notes=()
) -> None:
    """What an ingest command wrote, the one format of every ``ingest`` command: documents per table, what was
    read, drops per reason (``rejected <reason>: n``), ``notes`` (bytes ignored ...), the summary file.

    >>> print_ingest_report({"outputs": {"documents-cnn": {"documents": 24}}, "seconds": 3.04,
    ...     "counters": {"ingest-cnn": {"kept": 24, "empty": 2}}}, "out", "ingest-cnn", "stories", notes=["ignored 1 byte"])
    24 documents -> out/documents-cnn/  (read: 26 stories)
      rejected empty: 2
      ignored 1 byte
    out/run_summary.json (3.0 s)
    """
    counters = summary["counters"].get(stage, {})
    dropped = {reason: n for reason, n in counters.items() if reason != "kept"}
    read = counters.get("kept", 0) + sum(dropped.values()) if read is None else read
    for table, splits in summary["outputs"].items():
        if table.startswith("documents-"):  # not the dead letters: their reasons follow
            rows = sum(splits.values())
            print(f"{rows:,} documents -> {posixpath.join(out_dir, table)}/  (read: {read:,} {unit})")
    for reason, n in sorted(dropped.items()):
        print(f"  rejected {reason}: {n:,}")
    for note in notes:
        print(f"  {note}")
    print(f"{posixpath.join(out_dir, SUMMARY_FILE)} ({summary['seconds']:.1f} s)")


def print_report(summary: dict, out_dir: str) -> None:
    """What a command wrote, for the terminal: rows per table and split, drops per reason."""
    for config, splits in summary["outputs"].items():
        for split, rows in splits.items():
            print(f"{posixpath.join(out_dir, config)}  {split}: {rows:,} rows")
    for stage, counters in summary["counters"].items():
        print(f"{stage}: " + ", ".join(f"{name} {value:,}" for name, value in counters.items()))
    print(f"{posixpath.join(out_dir, SUMMARY_FILE)} ({summary['seconds']:.1f} s)")
