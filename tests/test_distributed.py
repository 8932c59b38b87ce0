"""Distributed runs for real: ``incoherent build`` with every input and output under ``gs://`` (a Google Cloud
Storage emulator on 127.0.0.1), on Beam's portable runner with a job service and an external SDK worker pool
that this test starts and stops, in another working directory: every job runs in SDK worker processes that
share nothing with this process but the emulator. The dataset must be byte-identical to a local in-process
build. Relative paths are tested with two SDK workers of the pool at once.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest
import yaml

from tests.conftest import ROOT, file_bytes, run_cli

pytest.importorskip("google.cloud.storage", reason="needs apache-beam[gcp] (the `dataflow` extra)")
EMULATOR = Path(sys.executable).with_name("gcp-storage-emulator")
if not EMULATOR.exists():
    pytest.skip("needs gcp-storage-emulator (the `test` extra)", allow_module_level=True)

BUCKET = "incoherent-test"
# One source with history: two remote bz2 dumps, and every stage once (6 jobs; each job starts new SDK workers).
INPUTS = {"wikipedia": ["samples/wikipedia/2022-08-24_minidumps-en_3def73f3.xml.bz2"]}
HISTORY = ["samples/wikipedia/history/2019-08-16_minidumps-en_89657c7a.xml.bz2"]


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


def stop(process: subprocess.Popen) -> None:
    """Stop a process this test started, and the SDK workers it started in turn."""
    try:
        children = psutil.Process(process.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        children = []
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(10)
    for child in children:
        try:
            child.kill()
        except psutil.NoSuchProcess:
            pass


def start(args: list[str], port: int, env: dict, cwd: Path) -> subprocess.Popen:
    process = subprocess.Popen(
        args, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        wait_for_port(port, process)
    except Exception:
        stop(process)
        raise
    return process


@pytest.fixture(scope="module")
def services(tmp_path_factory):
    """The GCS emulator, Beam's job service and an external worker pool, on loopback ports this test owns."""
    elsewhere = tmp_path_factory.mktemp("workers-cwd")  # not this process's working directory
    gcs_port, job_port, pool_port = free_port(), free_port(), free_port()
    env = dict(
        os.environ,
        STORAGE_EMULATOR_HOST=f"http://127.0.0.1:{gcs_port}",
        PYTHONPATH=str(ROOT),
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",  # the pool runs `python`
    )
    started = []
    saved = os.environ.get("STORAGE_EMULATOR_HOST")
    try:
        started.append(
            start(
                [str(EMULATOR), "start", "--host", "127.0.0.1", "--port", str(gcs_port), "--in-memory",
                 "--default-bucket", BUCKET, "--quiet"],
                gcs_port, env, elsewhere,
            )
        )  # fmt: skip
        started.append(
            start(
                [sys.executable, "-m", "apache_beam.runners.portability.local_job_service_main",
                 "--port", str(job_port)],
                job_port, env, elsewhere,
            )
        )  # fmt: skip
        # The pool's SDK workers are `python -c ...` processes: a sitecustomize on their path makes each of them
        # reach the emulator without a credentials lookup (pipelines.options.use_gcs_emulator).
        site = tmp_path_factory.mktemp("worker-site")
        (site / "sitecustomize.py").write_text(
            "from pipelines.options import use_gcs_emulator\n\nuse_gcs_emulator()\n"
        )
        pool_env = dict(env, PYTHONPATH=f"{site}{os.pathsep}{ROOT}")
        pool = start(
            [sys.executable, "-m", "apache_beam.runners.worker.worker_pool_main", "--service_port",
             str(pool_port)],
            pool_port, pool_env, elsewhere,
        )  # fmt: skip
        started.append(pool)
        os.environ["STORAGE_EMULATOR_HOST"] = env["STORAGE_EMULATOR_HOST"]
        from pipelines.options import use_gcs_emulator

        assert use_gcs_emulator()
        yield {"job": job_port, "pool": pool_port, "pool_process": pool}
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


def config(prefix: str) -> dict:
    return {
        "out": "unused",
        "sources": {
            "wikipedia": {
                "kind": "wikipedia",
                "inputs": [prefix + p for p in INPUTS["wikipedia"]],
                "history": [prefix + p for p in HISTORY],
            },
        },
        "card": {"name": "distributed test"},
    }


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


@pytest.mark.slow
def test_gcs_build_through_the_job_service_and_a_worker_pool_is_byte_identical_to_local(services, tmp_path):
    local_config = tmp_path / "local.yaml"
    local_config.write_text(yaml.safe_dump(dict(config(str(ROOT) + "/")), sort_keys=False))
    assert run_cli("build", local_config, "--out", tmp_path / "local") == 0

    prefix = f"gs://{BUCKET}/"
    for paths in (*INPUTS.values(), HISTORY):
        for path in paths:
            source = ROOT / path
            files = sorted(p for p in source.rglob("*") if p.is_file()) if source.is_dir() else [source]
            for f in files:
                upload(f, prefix + str(f.relative_to(ROOT)))
    remote_config = tmp_path / "remote.yaml"
    remote_config.write_text(yaml.safe_dump(config(prefix), sort_keys=False))
    portable = [
        "--runner=PortableRunner",
        f"--job_endpoint=localhost:{services['job']}",
        "--environment_type=EXTERNAL",
        f"--environment_config=localhost:{services['pool']}",
        "--no_auth",
    ]
    with WorkerCount(services["pool_process"]) as workers:
        assert run_cli("build", remote_config, "--out", f"{prefix}out", beam=portable) == 0
    # Beam's local job service runs a job on FnApiRunner.run_via_runner_api, which never reads
    # --direct_num_workers: one SDK worker per job, a new process for each of the 6 jobs.
    assert len(workers.seen) >= 6

    download_tree(f"{prefix}out", tmp_path / "remote")
    local, remote = file_bytes(tmp_path / "local" / "dataset"), file_bytes(tmp_path / "remote" / "dataset")
    assert set(local) == set(remote) and len(local) >= 5
    assert [name for name in local if local[name] != remote[name]] == []
    for work in ("work/documents/wikipedia", "work/history/wikipedia", "work/retrieval/wikipedia/neighbors"):
        assert file_bytes(tmp_path / "local" / work) == file_bytes(tmp_path / "remote" / work)
    for name in ("tfidf.npz", "idf.npz", "ids.json", "docs.npz"):
        index = "work/retrieval/wikipedia/index"
        assert (tmp_path / "local" / index / name).read_bytes() == (
            tmp_path / "remote" / index / name
        ).read_bytes()
    assert not list((tmp_path / "remote").rglob("_parts"))  # the index parts were cleaned up
    # The card: statistics counted by a pipeline on the workers, inputs hashed by the ingest workers; the same
    # numbers, hashes and figures as the local card, and no bucket path in it.
    local_card = (tmp_path / "local" / "dataset" / "README.md").read_text()
    remote_card = (tmp_path / "remote" / "dataset" / "README.md").read_text()
    assert "gs://" not in remote_card and BUCKET not in remote_card

    def between(text: str, start: str, end: str) -> str:
        return text[text.index(start) : text.index(end)]

    assert between(remote_card, "## Statistics", "## Columns") == between(
        local_card, "## Statistics", "## Columns"
    )

    def inputs(text: str) -> list[str]:
        return [
            line for line in text.splitlines() if line.startswith(("| input |", "| history (older dump) |"))
        ]

    assert inputs(remote_card) == inputs(local_card) and len(inputs(local_card)) == 2
    figures = sorted(p.name for p in (tmp_path / "local" / "dataset" / "figures").iterdir())
    assert figures == sorted(p.name for p in (tmp_path / "remote" / "dataset" / "figures").iterdir())
    for name in figures:
        assert (tmp_path / "local" / "dataset" / "figures" / name).read_bytes() == (
            tmp_path / "remote" / "dataset" / "figures" / name
        ).read_bytes()
    assert not list((tmp_path / "remote").rglob("_inputs")) and not list((tmp_path / "remote").rglob("_card"))


@pytest.mark.slow
def test_relative_paths_work_with_workers_in_another_directory(services, tmp_path, monkeypatch):
    """The worker pool runs in another working directory: relative paths must reach it as absolute ones.

    Two SDK workers at once: FnApiRunner in this process with an EXTERNAL environment and
    ``--direct_num_workers=2`` asks the pool for two workers (the local job service asks for one).
    """
    monkeypatch.chdir(tmp_path)
    os.symlink(ROOT / "samples" / "cnn" / "frank", tmp_path / "stories")
    external = [  # Beam's FnApiRunner in this process, its two SDK workers in the external pool
        "--runner=DirectRunner",
        "--environment_type=EXTERNAL",
        f"--environment_config=localhost:{services['pool']}",
        "--direct_num_workers=2",
    ]
    with WorkerCount(services["pool_process"]) as workers:
        assert run_cli("ingest", "cnn", "stories", "--out", "docs", beam=external) == 0
        assert run_cli("shuffle", "docs", "--out", "shuffled", beam=external) == 0
    assert workers.most >= 2  # two SDK worker processes at once
    local = tmp_path / "local"
    assert run_cli("shuffle", "docs", "--out", local) == 0
    assert file_bytes(tmp_path / "shuffled") == file_bytes(local) != {}


def test_a_missing_remote_path_is_one_line_naming_it(services, tmp_path, capsys):
    started = time.time()
    missing = f"gs://{BUCKET}/no/such/docs"
    assert run_cli("shuffle", missing, "--out", tmp_path / "out", beam=["--no_auth"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {missing}: no such directory"]
    assert run_cli("ingest", "cnn", f"gs://{BUCKET}/no/story.story", "--out", tmp_path / "o2") == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"error: gs://{BUCKET}/no/story.story: no such file or directory"
    ]
    assert time.time() - started < 60  # no retry loop
