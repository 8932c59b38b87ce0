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
import http.client
import json
import os
import socket
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence

from incoherent.nofollow import open_url
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


def _read_json(url: str, seconds: float) -> object:
    with open_url(url, seconds) as response:
        return json.loads(response.read(1 << 20))


def cluster_overview(host: str, port: int, seconds: float = CONNECT_SECONDS) -> dict:
    """Flink's REST ``/overview`` of the master at ``host:port`` (version, TaskManagers, slots), asked within
    ``seconds`` in all: a server that accepts and never answers, or drips its answer, is given up at the
    deadline (a socket timeout bounds each read only), and one that answers something else is not Flink."""
    from incoherent.deadline import DeadlinePassed, within

    url = f"http://{host}:{port}/overview"
    try:
        # each read's own timeout a little past the deadline: a silent master is the deadline's to report (the
        # two equal, a loaded machine let the socket's timeout win: "(timed out)" instead of "within 3 s")
        overview = within(seconds, _read_json, url, seconds + 2)
    except DeadlinePassed:
        raise InputError(
            f"--flink_master {host}:{port}: no Flink REST API answered at {url} within {seconds:g} s"
        ) from None
    except (OSError, ValueError, http.client.HTTPException) as exc:
        if isinstance(exc, http.client.HTTPException):  # its text quotes the server's bytes
            why = f"not an HTTP answer: {type(exc).__name__}"
        elif isinstance(exc, ValueError):
            why = "not JSON"
        else:
            why = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        raise InputError(
            f"--flink_master {host}:{port}: no Flink REST API answers at {url} ({why})"
        ) from None
    if not isinstance(overview, dict) or "flink-version" not in overview:
        raise InputError(f"--flink_master {host}:{port}: {url} is not Flink's REST API (no flink-version)")
    return overview


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


def _is_loopback(host: str) -> bool:
    """``localhost`` or a loopback address (the workers of a cluster there are on this machine).

    >>> _is_loopback("127.0.0.1"), _is_loopback("localhost"), _is_loopback("10.0.0.2")
    (True, True, False)
    """
    import ipaddress

    if host.lower() in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _grpc_problem(address: str, seconds: float) -> str | None:
    """Why no gRPC server (a worker pool) answers at ``address`` within ``seconds`` in all, else None: the
    HTTP/2 handshake must complete (a bare TCP accept, or bytes that are not HTTP/2, do not)."""
    import grpc

    channel = grpc.insecure_channel(address)
    try:
        grpc.channel_ready_future(channel).result(timeout=seconds)
        return None
    except grpc.FutureTimeoutError:
        return f"no gRPC server answered within {seconds:g} s"
    finally:
        channel.close()


DOCKER_DEFAULT = "Beam's default image (apache/beam_python3.x_sdk) has no incoherent"
ENVIRONMENTS = (
    "LOOPBACK (SDK workers in this process: a cluster on this machine), EXTERNAL with --environment_config "
    "HOST:PORT of an SDK worker pool on each TaskManager host, or PROCESS (docs/scale-out.md#sdk-workers)"
)


def environment_problem(options, workers_here: bool, seconds: float = CONNECT_SECONDS) -> str | None:
    """One line saying why the SDK worker environment of ``options`` cannot work, else None.

    ``workers_here``: the SDK workers would run on this machine (the local runner, a cluster on loopback), so
    Docker and a worker pool on a loopback address can be checked from here. Beam's default for a Flink or
    Spark cluster is ``DOCKER`` with its own SDK image, which has no ``incoherent``: the job fails on the
    cluster after the job server started (48 s, a 23-line traceback), so a cluster run must name one.
    """
    from apache_beam.options.pipeline_options import PortableOptions

    portable = options.view_as(PortableOptions)
    kind = (portable.environment_type or "").upper()
    config = portable.environment_config or ""
    if kind == "DOCKER":
        if not config:
            return f"--environment_type DOCKER without --environment_config IMAGE: {DOCKER_DEFAULT}"
        if workers_here:
            import shutil
            import subprocess

            if shutil.which("docker") is None:
                return (
                    f"--environment_type DOCKER: no docker command on this machine, where the SDK workers of "
                    f"this run would start ({ENVIRONMENTS})"
                )
            try:
                done = subprocess.run(
                    ["docker", "run", "--rm", "--entrypoint", "python", config, "-c", "import incoherent"],
                    capture_output=True,
                    timeout=120,
                )
            except subprocess.TimeoutExpired:
                return f"--environment_config {config}: docker did not run the image within 120 s"
            if done.returncode != 0:
                return (
                    f"--environment_config {config}: the image does not import incoherent (docker run exited "
                    f"{done.returncode}); build a worker image from docker/cpu-worker.Dockerfile"
                )
    elif kind == "EXTERNAL":
        address = _master_address(config)
        if address is None:
            return "--environment_type EXTERNAL needs --environment_config HOST:PORT of an SDK worker pool"
        if workers_here or not _is_loopback(address[0]):
            why = _grpc_problem(config, seconds)
            if why:
                return f"--environment_config {config}: no SDK worker pool answers there ({why})"
    return None


def _master_here(master: str) -> bool:
    address = _master_address(master)
    return address is None or _is_loopback(address[0])  # [local], [auto], local[4]: this machine


def runner_service_problem(beam_args: Sequence[str], seconds: float = CONNECT_SECONDS) -> str | None:
    """One line saying why a run cannot start, else None: for ``FlinkRunner``/``SparkRunner``, the job server
    jar, the master (Flink's: its REST API must answer as Flink within ``seconds`` in all) and the SDK worker
    environment; for any runner given ``--environment_type``, that environment (in dry runs too)."""
    if not any(
        "flink" in a.lower() or "spark" in a.lower() or "environment_" in a.lower() for a in beam_args
    ):
        return None  # no Flink or Spark runner named: Beam is not imported (a missing model fails in under a second)
    from apache_beam.options.pipeline_options import (
        FlinkRunnerOptions,
        PipelineOptions,
        PortableOptions,
        SparkRunnerOptions,
        StandardOptions,
        TestOptions,
    )

    from incoherent.pipelines.runtime.options import runner_key

    options = PipelineOptions(list(beam_args))
    key = runner_key(options.view_as(StandardOptions).runner)
    portable = options.view_as(PortableOptions)
    if key == "flinkrunner":
        master = options.view_as(FlinkRunnerOptions).flink_master
        here = _master_here(master)
        if not portable.environment_type and "[" not in master:
            return (
                f"--runner FlinkRunner with --flink_master {master} needs --environment_type: {ENVIRONMENTS}"
            )
    elif key == "sparkrunner":
        master = options.view_as(SparkRunnerOptions).spark_master_url
        here = _master_here(master)
        if not portable.environment_type and not master.startswith("local"):
            return f"--runner SparkRunner with --spark_master_url {master} needs --environment_type: {ENVIRONMENTS}"
    elif key in ("directrunner", "fnapirunner"):
        here = True
    else:
        here = False  # Dataflow and others: workers elsewhere, their own checks
    problem = environment_problem(options, here, seconds) if key != "dataflowrunner" else None
    if problem:
        return problem
    if key == "flinkrunner" and str(options.view_as(TestOptions).dry_run).lower() in ("true", "1", "yes"):
        return None  # a Flink dry run checks the jar, the master and its version itself (flink_dry_run)
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
    if not portable.job_endpoint:
        problem = _jar_problem(option, jar, name)
        if problem:
            return problem
        address = _master_address(master)
        if address is not None and name == "FlinkRunner":
            try:
                cluster_overview(*address, seconds=seconds)
            except InputError as exc:
                return str(exc)
        elif address is not None:
            why = _unreachable(address, seconds)
            if why is not None:
                host, port = address
                return f"--{master_option} {master}: no master answers at {host}:{port} ({why})"
    return None


# Filesystems that several hosts mount at once: a path on one is read by workers on other hosts too.
NETWORK_FILESYSTEMS = (
    "nfs",
    "nfs4",
    "cifs",
    "smb3",
    "smbfs",
    "ceph",
    "glusterfs",
    "lustre",
    "gpfs",
    "beegfs",
)
NETWORK_FILESYSTEMS += (
    "9p",
    "afs",
    "fuse.sshfs",
    "fuse.s3fs",
    "fuse.gcsfuse",
    "fuse.juicefs",
    "fuse.glusterfs",
)


def workers_elsewhere(beam_args: Sequence[str]) -> str | None:
    """Where the SDK workers of a run are when that is on other hosts than this one (they cannot read its local
    disk), in words; None when they run here (the local runner, ``LOOPBACK``, a cluster on loopback) or the
    runner is not one whose workers are known here (Dataflow has its own checks).

    >>> workers_elsewhere(["--runner=FlinkRunner", "--flink_master=10.0.0.1:8081", "--environment_type=EXTERNAL",
    ...                    "--environment_config=localhost:50000"])
    "the SDK workers of the Flink cluster at 10.0.0.1:8081's TaskManagers"
    >>> workers_elsewhere(["--runner=FlinkRunner", "--flink_master=10.0.0.1:8081", "--environment_type=LOOPBACK"])
    >>> workers_elsewhere(["--environment_type=EXTERNAL", "--environment_config=10.0.0.2:50000"])
    'the SDK workers of the pool at 10.0.0.2:50000'
    """
    if not any(
        "flink" in a.lower() or "spark" in a.lower() or "environment_" in a.lower() for a in beam_args
    ):
        return None
    from apache_beam.options.pipeline_options import (
        FlinkRunnerOptions,
        PipelineOptions,
        PortableOptions,
        SparkRunnerOptions,
        StandardOptions,
    )

    from incoherent.pipelines.runtime.options import runner_key

    options = PipelineOptions(list(beam_args))
    portable = options.view_as(PortableOptions)
    kind = (portable.environment_type or "").upper()
    if kind in ("", "LOOPBACK"):
        return None
    key = runner_key(options.view_as(StandardOptions).runner)
    master, name = None, None
    if key == "flinkrunner":
        master, name = options.view_as(FlinkRunnerOptions).flink_master, "Flink"
    elif key == "sparkrunner":
        master, name = options.view_as(SparkRunnerOptions).spark_master_url, "Spark"
    if master is not None:
        address = _master_address(master)
        if address is not None and not _is_loopback(address[0]):
            return f"the SDK workers of the {name} cluster at {address[0]}:{address[1]}'s TaskManagers"
        if address is None or kind != "EXTERNAL":
            return None
    elif key not in ("directrunner", "fnapirunner"):
        return None
    if kind == "EXTERNAL":
        address = _master_address(portable.environment_config or "")
        if address is not None and not _is_loopback(address[0]):
            return f"the SDK workers of the pool at {address[0]}:{address[1]}"
    return None


def filesystem_type(path: str) -> str:
    """The type of the filesystem ``path`` (or its nearest existing folder) is on, from ``/proc/self/mounts``
    ("" where that cannot be read)."""
    existing = os.path.realpath(os.path.abspath(path))
    while not os.path.exists(existing) and os.path.dirname(existing) != existing:
        existing = os.path.dirname(existing)
    best, kind = "", ""
    try:
        with open("/proc/self/mounts", encoding="utf-8", errors="replace") as mounts:
            for line in mounts:
                fields = line.split()
                if len(fields) < 3:
                    continue
                point = fields[1].replace("\\040", " ")
                inside = existing == point or existing.startswith(point.rstrip("/") + "/")
                if inside and len(point) >= len(best):
                    best, kind = point, fields[2]
    except OSError:
        return ""
    return kind


def local_paths_problem(beam_args: Sequence[str], paths: Sequence[tuple[str, str]]) -> str | None:
    """One line when a path of ``paths`` (``(option, path)``; option "" for an input) is on this machine's own disk while the SDK workers run on
    other hosts (:func:`workers_elsewhere`), else None. Paths on a network filesystem (NFS, CephFS, ...) pass:
    mounted at the same path on every host, the workers read them too."""
    where = workers_elsewhere(beam_args)
    if where is None:
        return None
    from incoherent.pipelines.runtime import storage

    for option, path in paths:
        if storage.is_remote(path):
            continue
        kind = filesystem_type(path)
        if kind in NETWORK_FILESYSTEMS:
            continue
        return (
            f"{option + ' ' if option else ''}{path}: on this machine's disk ({kind or 'a local'} filesystem), which {where} cannot "
            "read: give gs:// or s3:// paths, or a shared filesystem mounted at the same path on every host "
            "(docs/scale-out.md#a-cluster)"
        )
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
    return [sys.executable, "-S", "-P", "-c", _DIE_WITH_PARENT, str(os.getpid()), *command]


def _jar_server_classes(key: str):
    """Beam's jar job server class for a runner key, and the runner class (None, None for another key)."""
    if key == "flinkrunner":
        from apache_beam.runners.portability.flink_runner import FlinkJarJobServer as JarServer
        from apache_beam.runners.portability.flink_runner import FlinkRunner as Runner
    elif key == "sparkrunner":
        from apache_beam.runners.portability.spark_runner import SparkJarJobServer as JarServer
        from apache_beam.runners.portability.spark_runner import SparkRunner as Runner
    else:
        return None, None
    return JarServer, Runner


def _dying(jar_server_class):
    """``jar_server_class`` whose JVM ends with the process that starts it, and that keeps its endpoint."""

    class DyingJarServer(jar_server_class):
        endpoint: str | None = None

        def subprocess_cmd_and_endpoint(self):
            command, endpoint = super().subprocess_cmd_and_endpoint()
            self.endpoint = endpoint
            return dying_with_this_process(command), endpoint

    return DyingJarServer


class SharedJobServer:
    """One Flink or Spark job server for every stage of a ``build`` (issue #52).

    Left to Beam, each stage's ``FlinkRunner`` starts its own job server (a JVM, 40-65 s on 2 busy cores) and
    stops it when the stage ends: eleven for the Quickstart. :meth:`args` starts one, the first time a stage
    needs it, and returns the build's Beam flags plus ``--job_endpoint`` at it, so that every stage's runner
    submits its job there (Beam's runners use a given job endpoint and start nothing); ``--flink_master`` is
    passed on as given, and Beam's Flink job server submits each job to that master. :meth:`stop` stops it
    (the build calls it on success, failure and Ctrl-C); its JVM also ends with the build's process if that is
    killed (:func:`dying_with_this_process`). With any other runner, or a ``--job_endpoint`` given by the
    user, :meth:`args` returns the flags as they are and starts nothing.

    >>> SharedJobServer(["--runner=DirectRunner"]).args()
    ['--runner=DirectRunner']
    """

    def __init__(self, beam_args: Sequence[str]):
        self.beam_args = list(beam_args)
        self.server = None
        self.endpoint: str | None = None

    def _key(self):
        from apache_beam.options.pipeline_options import PipelineOptions, PortableOptions, StandardOptions

        from incoherent.pipelines.runtime.options import runner_key

        options = PipelineOptions(self.beam_args)
        if options.view_as(PortableOptions).job_endpoint:
            return None, options
        return runner_key(options.view_as(StandardOptions).runner), options

    def args(self) -> list[str]:
        if self.endpoint is not None:
            return [*self.beam_args, f"--job_endpoint={self.endpoint}"]
        if not any("flink" in a.lower() or "spark" in a.lower() for a in self.beam_args):
            return list(self.beam_args)  # Beam not imported for nothing
        key, options = self._key()
        jar_server, runner = _jar_server_classes(key or "")
        if jar_server is None:
            return list(self.beam_args)
        if key == "flinkrunner":  # what FlinkRunner.default_job_server does before starting its own
            from apache_beam.options.pipeline_options import FlinkRunnerOptions

            flink = options.view_as(FlinkRunnerOptions)
            flink.flink_master = runner.add_http_scheme(flink.flink_master)
        server = _dying(jar_server)(options)
        self.server = server
        server.start()  # waits until its gRPC endpoint answers
        self.endpoint = server.endpoint
        return [*self.beam_args, f"--job_endpoint={self.endpoint}"]

    def stop(self) -> None:
        server, self.server, self.endpoint = self.server, None, None
        if server is not None:
            with contextlib.suppress(Exception):  # already stopped, or its JVM already gone
                server.stop()


def stopping_runner(key: str):
    """A ``FlinkRunner`` (``key`` ``flinkrunner``) or ``SparkRunner`` (``sparkrunner``) that keeps the job servers
    it starts, so that :func:`stop_job_servers` stops them when the command's pipeline ends; None for another key.

    Beam's runners start a Java job server per pipeline (``java -jar JAR``) and stop it only at the interpreter's
    exit (``atexit``), which a build's stage process never reaches (it ends with ``os._exit``, as every
    ``multiprocessing`` child does), so each stage left a JVM running. Here the job server is stopped as soon as
    the pipeline ends, on success, failure and Ctrl-C, and its JVM also ends with the process that started it
    (:func:`dying_with_this_process`) when that process is killed.
    """
    JarServer, Runner = _jar_server_classes(key)
    if JarServer is None:
        return None
    from apache_beam.runners.portability import job_server

    DyingJarServer = _dying(JarServer)

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
