"""Checks, before any pipeline is built, that a Flink or Spark run can start: Beam's ``FlinkRunner`` and
``SparkRunner`` launch a Java job server, and without ``--flink_job_server_jar`` (``--spark_job_server_jar``)
or ``--job_endpoint`` Beam downloads that jar over HTTP at run time (Maven Central's
``beam-runners-flink-<flink>-job-server``, at the SDK's version), which this project never does: the job
server is fetched once with Maven (``tools/flink-job-server.sh``, docs/scale-out.md#flink). A master given as
``HOST:PORT`` that nothing answers fails here in seconds, not after the job server's own retries.

>>> runner_service_problem(["--runner=DirectRunner"]) is None
True
"""

from __future__ import annotations

import contextlib
import os
import socket
import urllib.parse
from collections.abc import Sequence

from incoherent.schemas.records import InputError

CONNECT_SECONDS = 5.0
FETCH = "tools/flink-job-server.sh (see docs/scale-out.md#flink)"
SPARK_FETCH = "tools/spark-job-server.sh (see docs/scale-out.md#spark)"


def _master_address(url: str) -> tuple[str, int] | None:
    """``HOST:PORT`` of a master URL (``http://h:8081``, ``h:8081``, ``spark://h:7077``); None for Beam's
    ``[local]``/``[auto]`` or a value without a port.

    >>> _master_address("127.0.0.1:8081"), _master_address("spark://h:7077"), _master_address("[auto]")
    (('127.0.0.1', 8081), ('h', 7077), None)
    >>> _master_address("local[4]") is None
    True
    """
    if not url or "[" in url:  # Beam's [local], [auto]; Spark's local[4]
        return None
    parsed = urllib.parse.urlsplit(url if "://" in url else "http://" + url)
    try:
        port = parsed.port
    except ValueError:
        return None
    if not parsed.hostname or port is None:
        return None
    return parsed.hostname, port


def _unreachable(address: tuple[str, int], seconds: float) -> str | None:
    """Why nothing answers at ``address`` within ``seconds`` (None: a connection was accepted)."""
    try:
        with socket.create_connection(address, timeout=seconds):
            return None
    except OSError as exc:
        return exc.strerror or type(exc).__name__


def _jar_problem(option: str, jar: str | None, runner: str) -> str | None:
    if not jar:
        where = (
            f"Beam's Flink job server is fetched with Maven by {FETCH}"
            if runner == "FlinkRunner"
            else f"Beam's Spark job server is fetched with Maven by {SPARK_FETCH}"
        )
        return (
            f"--runner {runner} needs a job server, which Beam would download over HTTP at run time: give a "
            f"local jar with --{option} or a running job server with --job_endpoint HOST:PORT ({where})"
        )
    if urllib.parse.urlsplit(jar).scheme in ("http", "https"):
        return (
            f"--{option} {jar}: a URL is downloaded at run time; fetch the jar first and give its local path"
        )
    if not os.path.isfile(jar):
        return f"--{option} {jar}: no such file" + (
            f" (fetch it with {FETCH if runner == 'FlinkRunner' else SPARK_FETCH})"
        )
    return None


def runner_service_problem(beam_args: Sequence[str], seconds: float = CONNECT_SECONDS) -> str | None:
    """One line saying why a ``FlinkRunner``/``SparkRunner`` run cannot start, else None (any other runner)."""
    if not any("flink" in a.lower() or "spark" in a.lower() for a in beam_args):
        return None  # no Flink or Spark runner named: Beam is not imported (a missing model fails in under a second)
    from apache_beam.options.pipeline_options import (
        FlinkRunnerOptions,
        PipelineOptions,
        PortableOptions,
        SparkRunnerOptions,
        StandardOptions,
        TestOptions,
    )

    options = PipelineOptions(list(beam_args))
    if str(options.view_as(TestOptions).dry_run).lower() in ("true", "1", "yes"):  # nothing is started
        return None
    runner = options.view_as(StandardOptions).runner
    key = runner.rsplit(".", 1)[-1].lower() if isinstance(runner, str) else ""
    key = key if key.endswith("runner") else key + "runner"
    if key == "flinkrunner":
        flink = options.view_as(FlinkRunnerOptions)
        jar, option, master, master_option = (
            flink.flink_job_server_jar,
            "flink_job_server_jar",
            flink.flink_master,
            "flink_master",
        )
        name = "FlinkRunner"
    elif key == "sparkrunner":
        spark = options.view_as(SparkRunnerOptions)
        jar, option, master, master_option = (
            spark.spark_job_server_jar,
            "spark_job_server_jar",
            spark.spark_master_url,
            "spark_master_url",
        )
        name = "SparkRunner"
    else:
        return None  # fmt: skip
    if not options.view_as(PortableOptions).job_endpoint:
        problem = _jar_problem(option, jar, name)
        if problem:
            return problem
        address = _master_address(master)
        if address is not None:
            why = _unreachable(address, seconds)
            if why is not None:
                host, port = address
                return f"--{master_option} {master}: no master answers at {host}:{port} ({why})"
    return None


def check_runner_services(beam_args: Sequence[str]) -> None:
    """Raise :class:`InputError` with :func:`runner_service_problem`'s line, if any."""
    problem = runner_service_problem(beam_args)
    if problem:
        raise InputError(problem)


# ------------------------------------------------------------------------------------ job servers' lifetime

# Run before the job server's JVM: ask Linux to send it SIGTERM when the process that started it ends, however it
# ends (kill -9, a build's stage process terminated, os._exit), then become the JVM (exec keeps the pid and the
# request). The pid check covers a parent that died before the request was made.
_DIE_WITH_PARENT = (
    "import ctypes, os, signal, sys\n"
    "ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG\n"
    "os.getppid() == int(sys.argv[1]) or sys.exit(1)\n"
    "os.execvp(sys.argv[2], sys.argv[2:])\n"
)


def dying_with_this_process(command: Sequence[str]) -> list[str]:
    """``command`` started so that it ends with this process (Linux: a SIGTERM when it does); elsewhere as is.

    >>> dying_with_this_process(["java", "-jar", "a.jar"])[-3:]
    ['java', '-jar', 'a.jar']
    """
    import sys

    if not sys.platform.startswith("linux"):
        return list(command)
    return [sys.executable, "-S", "-c", _DIE_WITH_PARENT, str(os.getpid()), *command]


def stopping_runner(key: str):
    """A ``FlinkRunner`` (``key`` ``flinkrunner``) or ``SparkRunner`` (``sparkrunner``) that keeps the job servers
    it starts, so that :func:`stop_job_servers` stops them when the command's pipeline ends; None for another key.

    Beam's runners start a Java job server per pipeline (``java -jar JAR``) and stop it only at the interpreter's
    exit (``atexit``), which a build's stage process never reaches (it ends with ``os._exit``, as every
    ``multiprocessing`` child does), so each stage left a JVM running. Here the job server is stopped as soon as
    the pipeline ends, on success, failure and Ctrl-C, and its JVM also ends with the process that started it
    (:func:`dying_with_this_process`) when that process is killed.
    """
    if key == "flinkrunner":
        from apache_beam.runners.portability.flink_runner import FlinkJarJobServer as JarServer
        from apache_beam.runners.portability.flink_runner import FlinkRunner as Runner
    elif key == "sparkrunner":
        from apache_beam.runners.portability.spark_runner import SparkJarJobServer as JarServer
        from apache_beam.runners.portability.spark_runner import SparkRunner as Runner
    else:
        return None
    from apache_beam.runners.portability import job_server

    class DyingJarServer(JarServer):
        def subprocess_cmd_and_endpoint(self):
            command, endpoint = super().subprocess_cmd_and_endpoint()
            return dying_with_this_process(command), endpoint

    class StoppingRunner(Runner):
        def __init__(self):
            super().__init__()
            self.job_servers: list = []

        def default_job_server(self, options):
            server = super().default_job_server(options)
            if isinstance(
                server, job_server.StopOnExitJobServer
            ):  # Beam's Java job server, not an uber jar's
                server = job_server.StopOnExitJobServer(DyingJarServer(options))
            self.job_servers.append(server)
            return server

    StoppingRunner.__name__ = StoppingRunner.__qualname__ = Runner.__name__
    return StoppingRunner()


def stop_job_servers(runner) -> None:
    """Stop the job servers a :func:`stopping_runner` started (a no-op for any other runner)."""
    for server in getattr(runner, "job_servers", ()):
        with contextlib.suppress(Exception):  # already stopped, or its JVM already gone
            server.stop()
    if hasattr(runner, "job_servers"):
        runner.job_servers.clear()
