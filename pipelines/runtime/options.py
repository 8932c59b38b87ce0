"""Beam's pipeline options as ``incoherent`` passes them on: a flag nobody knows is an error, not a warning.

Beam's own ``PipelineOptions`` only logs ``Unparseable argument`` for a flag that no registered
``PipelineOptions`` subclass declares and runs on, so a typo (``--direct_num_worker 2``) or a misplaced
``incoherent`` flag would silently change nothing. :func:`unknown_beam_args` parses the flags with every
registered options class, exactly as ``PipelineOptions.get_all_options`` does, and returns what is left.

    >>> unknown_beam_args(["--runner", "DirectRunner", "--no-such-flag", "1"])
    ['--no-such-flag', '1']
"""

from __future__ import annotations

import argparse
import importlib
import os
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from schemas.records import InputError

T = TypeVar("T")

# Runner modules that register PipelineOptions subclasses outside apache_beam.options.pipeline_options.
_OPTION_MODULES = (
    "apache_beam.options.pipeline_options",
    "apache_beam.runners.portability.flink_runner",
    "apache_beam.runners.portability.spark_runner",
)


class DryRun(Exception):
    """``--dry_run=True``: the job graph was built and validated, and nothing ran (the CLI exits 0)."""


class StageFailed(RuntimeError):
    """A build stage's process failed for a reason other than its input (the CLI prints it, exits 1)."""


def _registered_parser() -> argparse.ArgumentParser:
    from apache_beam.options.pipeline_options import PipelineOptions, _BeamArgumentParser

    class _Strict(_BeamArgumentParser):
        def error(self, message):  # e.g. "argument --runner: expected one argument"
            if message.startswith("ambiguous option: "):
                return
            raise InputError(f"Beam pipeline options: {message}")

    for module in _OPTION_MODULES:
        try:
            importlib.import_module(module)
        except ImportError:  # an optional runner's dependencies are missing: its flags stay unknown
            continue
    parser = _Strict(allow_abbrev=False)
    classes: dict[str, type] = {}
    for cls in PipelineOptions.__subclasses__():  # as PipelineOptions.get_all_options
        classes.setdefault(str(cls), cls)
    for cls in classes.values():
        cls._add_argparse_args(parser)  # noqa: SLF001 - the hook Beam itself calls
    return parser


def unknown_beam_args(beam_args: Sequence[str]) -> list[str]:
    """The arguments of ``beam_args`` that no registered Beam ``PipelineOptions`` class accepts."""
    if not beam_args:
        return []
    _, unknown = _registered_parser().parse_known_args(list(beam_args))
    return unknown


def check_beam_args(beam_args: Sequence[str], command: str) -> None:
    """Raise :class:`InputError` naming the first argument that neither ``command`` nor Beam knows."""
    unknown = unknown_beam_args(beam_args)
    if unknown:
        flag = next((a for a in unknown if a.startswith("-")), unknown[0])
        what = "unknown option" if flag.startswith("-") else "unexpected argument"
        raise InputError(
            f"{flag.split('=', 1)[0]}: {what} (neither `incoherent {command}` nor Beam's pipeline options "
            f"know it; see `incoherent {command} --help`)"
        )


def use_gcs_emulator() -> bool:
    """Against a local GCS emulator (the ``STORAGE_EMULATOR_HOST`` environment variable) connect anonymously at
    once; returns whether it did (False when the variable is not set or Beam has no GCS support).

    Beam looks Google credentials up once per process with 4 retries and exponential backoff (about 30 s when
    there are none) before it connects anonymously anyway; an emulator needs no credentials. Nothing does this
    at import time: :func:`use_storage_options` calls it in the CLI's process and in every stage process of a
    build, and whoever starts Beam's SDK workers against an emulator calls it there (``tests/e2e/test_distributed.py``
    gives its worker pool a ``sitecustomize`` that does).
    """
    if not os.environ.get("STORAGE_EMULATOR_HOST"):
        return False
    try:
        from apache_beam.internal.gcp import auth
    except ImportError:  # no apache-beam[gcp]: no GCS either
        return False
    credentials = getattr(auth, "_Credentials", None)
    if credentials is None:
        return False
    with credentials._credentials_lock:
        if not credentials._credentials_init:
            credentials._credentials, credentials._credentials_init = None, True
    return True


def use_storage_options(beam_args: Sequence[str]) -> None:
    """Let this process's own reads and writes (listing inputs, summaries, the index) use the run's options.

    Beam's filesystems take credentials and endpoints (``--no_auth``, ``--project``, ``--s3_endpoint_url``)
    from ``FileSystems.set_options``; workers get them with the pipeline. With ``STORAGE_EMULATOR_HOST`` set,
    GCS is the emulator's, reached without credentials (:func:`use_gcs_emulator`).
    """
    use_gcs_emulator()
    if not beam_args:  # no Beam import here: ingest wikipedia starts its decoder before Beam is imported
        return
    bound_driver_retries()
    from apache_beam.io.filesystems import FileSystems
    from apache_beam.options.pipeline_options import PipelineOptions

    global _STORAGE_OPTIONS
    _STORAGE_OPTIONS = PipelineOptions(list(beam_args))
    FileSystems.set_options(_STORAGE_OPTIONS)


_STORAGE_OPTIONS = None


def storage_options():
    """The pipeline options this process's own storage calls use (:func:`use_storage_options`), or None."""
    return _STORAGE_OPTIONS


DRIVER_RETRY_SECONDS = 20.0
_BOUND: float | None = None


def bound_driver_retries(seconds: float = DRIVER_RETRY_SECONDS) -> None:
    """Give up on an unreachable or failing GCS endpoint after ``seconds`` in this (the driver's) process.

    Beam's GCS client retries a failing call for up to 120 s (google-cloud-storage's default retry); the
    driver only lists and reads small files before any work, so a bad path or endpoint should fail fast with
    one line. Workers keep Beam's defaults (transient errors during a long run are worth waiting for).
    """
    global _BOUND
    if _BOUND == seconds:
        return
    _BOUND = seconds
    try:
        from apache_beam.io.gcp import gcsio_retry
    except ImportError:  # no apache-beam[gcp]: no GCS
        return
    for name in ("DEFAULT_RETRY", "DEFAULT_RETRY_WITH_THROTTLING_COUNTER"):
        retry = getattr(gcsio_retry, name, None)
        if retry is not None and hasattr(retry, "with_timeout"):
            setattr(gcsio_retry, name, retry.with_timeout(seconds))


# The runners whose workers are threads or processes of this machine under Beam's Python engine (FnApiRunner):
# local paths and the spill folder work there. Names as Beam resolves them: case-insensitive, ``Runner``
# optional (``direct`` = ``DirectRunner``). Every other runner (Dataflow, Flink, Spark, Prism, Portable) is
# distributed.
LOCAL_RUNNERS = frozenset(
    {"directrunner", "fnapirunner", "switchingdirectrunner", "bundlebaseddirectrunner", "testdirectrunner"}
)


def runner_key(runner: object) -> str:
    """``--runner`` as Beam looks it up: lower case with the ``runner`` suffix; none given is ``directrunner``.

    >>> runner_key(None), runner_key("direct"), runner_key("FnApiRunner"), runner_key("DataflowRunner")
    ('directrunner', 'directrunner', 'fnapirunner', 'dataflowrunner')
    """
    if runner is None:
        return "directrunner"
    if not isinstance(runner, str):  # a runner object
        runner = type(runner).__name__
    key = runner.rsplit(".", 1)[-1].lower()
    return key if key.endswith("runner") else key + "runner"


def is_local_runner(runner: object) -> bool:
    """Whether ``--runner`` runs on Beam's local Python engine (:data:`LOCAL_RUNNERS`): the one runner test
    of ``incoherent``.

    >>> is_local_runner(None), is_local_runner("FnApiRunner"), is_local_runner("direct")
    (True, True, True)
    >>> is_local_runner("DataflowRunner"), is_local_runner("PrismRunner")
    (False, False)
    """
    return runner_key(runner) in LOCAL_RUNNERS


def parse_per_source(
    values: Iterable[object],
    option: str,
    sources: list[str],
    parse: Callable[[str, str], T],
    metavar: str = "DIR",
    what: str | None = None,
) -> dict[str, T]:
    """``SOURCE=VALUE`` or ``VALUE`` (for every other source) flags -> ``{source: parse(value, where)}``.

    A value whose part before ``=`` is empty or holds a ``/`` is a plain value (a path may contain ``=``).

    >>> parse_per_source(["wiki=I1", "I2"], "--index", ["cnn", "wiki"], lambda v, where: v)
    {'wiki': 'I1', 'cnn': 'I2'}
    """
    mapping: dict[str, T] = {}
    default: list[T] = []
    for value in values:
        value = str(value)
        source, sep, rest = value.partition("=")
        if sep and source and "/" not in source:
            if source not in sources:
                raise InputError(f"{option} {value}: no documents of source {source!r} (sources: {sources})")
            mapping[source] = parse(rest, f"{option} {value}")
        else:
            if default:
                raise InputError(
                    f"{option}: give one {what or metavar} for all sources, or SOURCE={metavar} per source"
                )
            default.append(parse(value, option))
    if default:
        for source in sources:
            mapping.setdefault(source, default[0])
    return mapping
