"""Services the distributed tests start on 127.0.0.1 and stop: a Google Cloud Storage emulator, Beam's job
service and an external SDK worker pool (:func:`services`) whose workers log what they read
(:mod:`tests.worker_reads`), plus upload/download helpers and a watcher of the pool's SDK worker processes."""

from __future__ import annotations

import atexit
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from tests.conftest import ROOT

EMULATOR = Path(sys.executable).with_name("gcp-storage-emulator")
BUCKET = "incoherent-test"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, seconds: float = 60) -> None:
    deadline = time.time() + seconds
    while time.time() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args}: exited with {process.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise RuntimeError(f"{process.args}: port {port} not open after {seconds} s")


# Every service started by :func:`start`, in start order, until :func:`stop` ends it. Each leads its own process
# group (its own session), so stopping the group also ends what it started (Beam's SDK workers), and
# :func:`stop_all` runs on every way out of the test process: a normal exit (atexit) and SIGTERM (CI's
# timeout, a killed job), whose default action would end pytest without any clean-up.
_RUNNING: list[subprocess.Popen] = []


def _signal_group(process: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(process.pid, sig)  # start_new_session: the group's id is its leader's pid
    except (ProcessLookupError, PermissionError):
        pass


def stop(process: subprocess.Popen) -> None:
    """Stop a process this test started, its process group, and the SDK workers it started in turn."""
    try:
        children = psutil.Process(process.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        children = []
    _signal_group(process, signal.SIGTERM)
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        _signal_group(process, signal.SIGKILL)
        process.wait(10)
    _signal_group(process, signal.SIGKILL)  # whatever the leader left behind in its group
    for child in children:  # and any that left the group
        try:
            child.kill()
        except psutil.NoSuchProcess:
            pass
    if process in _RUNNING:
        _RUNNING.remove(process)


def stop_all() -> None:
    """Stop every service still running, the last started first."""
    for process in reversed(list(_RUNNING)):
        stop(process)


def _on_sigterm(signum, frame) -> None:
    stop_all()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)  # then end as SIGTERM ends a process


atexit.register(stop_all)


def start(args: list[str], port: int, env: dict, cwd: Path, seconds: float = 60) -> subprocess.Popen:
    """Start a service in its own session (process group) and wait for its port; it is stopped on every way out
    of this process (:func:`stop_all`)."""
    main = threading.current_thread() is threading.main_thread()
    if main and signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):
        signal.signal(signal.SIGTERM, _on_sigterm)
    process = subprocess.Popen(
        args, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    _RUNNING.append(process)
    try:
        wait_for_port(port, process, seconds)
    except Exception:
        stop(process)
        raise
    return process


def service_env(gcs_port: int) -> dict:
    """The environment of the services and of the commands that use them: the emulator's address, the
    repository on the path, and this interpreter's folder first on ``PATH`` (the pool runs ``python``)."""
    return dict(
        os.environ,
        STORAGE_EMULATOR_HOST=f"http://127.0.0.1:{gcs_port}",
        PYTHONPATH=str(ROOT),
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    )


def start_services(
    ports: tuple[int, int, int], env: dict, pool_env: dict, cwd: Path
) -> list[subprocess.Popen]:
    """Start the GCS emulator, Beam's job service and an external worker pool (``pool_env``: the pool's
    environment) on the loopback ``ports`` (in that order); the processes in start order, the pool last. A
    service that does not come up stops those started before it."""
    gcs_port, job_port, pool_port = ports
    commands = [
        ([str(EMULATOR), "start", "--host", "127.0.0.1", "--port", str(gcs_port), "--in-memory",
          "--default-bucket", BUCKET, "--quiet"], gcs_port, env),
        ([sys.executable, "-m", "apache_beam.runners.portability.local_job_service_main", "--port",
          str(job_port)], job_port, env),
        ([sys.executable, "-m", "apache_beam.runners.worker.worker_pool_main", "--service_port",
          str(pool_port)], pool_port, pool_env),
    ]  # fmt: skip
    started: list[subprocess.Popen] = []
    try:
        for args, port, process_env in commands:
            started.append(start(args, port, process_env, cwd))
    except BaseException:
        for process in reversed(started):
            stop(process)
        raise
    return started


@pytest.fixture(scope="module", name="services")
def services_fixture(tmp_path_factory):
    """The GCS emulator, Beam's job service and an external worker pool, on loopback ports this test owns."""
    elsewhere = tmp_path_factory.mktemp("workers-cwd")  # not this process's working directory
    gcs_port, job_port, pool_port = free_port(), free_port(), free_port()
    env = service_env(gcs_port)
    started = []
    saved = os.environ.get("STORAGE_EMULATOR_HOST")
    try:
        # The pool's SDK workers are `python -c ...` processes: a sitecustomize on their path makes each of them
        # reach the emulator without a credentials lookup (pipelines.runtime.options.use_gcs_emulator) and log
        # what it reads through Beam's filesystems into `reads` (tests.worker_reads).
        site, reads = tmp_path_factory.mktemp("worker-site"), tmp_path_factory.mktemp("worker-reads")
        (site / "sitecustomize.py").write_text(
            "from incoherent.pipelines.runtime.options import use_gcs_emulator\n\nuse_gcs_emulator()\n"
            "import tests.worker_reads  # noqa: E402, F401\n"
        )
        pool_env = dict(env, PYTHONPATH=f"{site}{os.pathsep}{ROOT}", INCOHERENT_TEST_READS=str(reads))
        started = start_services((gcs_port, job_port, pool_port), env, pool_env, elsewhere)
        pool = started[-1]
        os.environ["STORAGE_EMULATOR_HOST"] = env["STORAGE_EMULATOR_HOST"]
        from incoherent.pipelines.runtime.options import use_gcs_emulator

        assert use_gcs_emulator()
        yield {"job": job_port, "pool": pool_port, "pool_process": pool, "reads": reads}
    finally:
        if saved is None:
            os.environ.pop("STORAGE_EMULATOR_HOST", None)
        else:
            os.environ["STORAGE_EMULATOR_HOST"] = saved
        for process in reversed(started):
            stop(process)


def upload(local: Path, url: str) -> None:
    from apache_beam.io.filesystems import FileSystems

    with FileSystems.create(url, compression_type="uncompressed") as f:
        f.write(local.read_bytes())


def download_tree(url: str, target: Path) -> None:
    from apache_beam.io.filesystems import FileSystems

    for match in FileSystems.match([url.rstrip("/") + "/**"]):
        for meta in match.metadata_list:
            local = target / meta.path[len(url.rstrip("/")) + 1 :]
            local.parent.mkdir(parents=True, exist_ok=True)
            with FileSystems.open(meta.path, compression_type="uncompressed") as f:
                local.write_bytes(f.read())


class WorkerCount:
    """SDK worker processes of the pool while a run goes on: the most alive at once, and how many in all."""

    def __init__(self, pool: subprocess.Popen):
        self._pool, self._stop = psutil.Process(pool.pid), threading.Event()
        self.most, self.seen = 0, set()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self):
        while not self._stop.is_set():
            alive = set()
            for child in self._pool.children():
                try:
                    if child.status() != psutil.STATUS_ZOMBIE:
                        alive.add(child.pid)
                except psutil.NoSuchProcess:
                    pass
            self.most, self.seen = max(self.most, len(alive)), self.seen | alive
            time.sleep(0.05)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
