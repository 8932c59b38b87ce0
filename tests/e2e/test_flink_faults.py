"""A TaskManager killed with ``kill -9`` in the middle of the build's longest stage on a real Flink session cluster
(tools/flink-cluster.sh: Flink 1.19.0's JobManager and TaskManager processes on 127.0.0.1, 2 slots): the script
starts another TaskManager, as a supervisor (systemd, a Kubernetes Deployment) does in a standalone deployment,
Flink's restart strategy (fixed-delay, 3 attempts 2 s apart) reruns the job on it, and ``incoherent build``
ends with every Parquet file byte-identical to the local runner's, nothing missing and nothing extra.

The stage is ``intruders``, the build's longest on the local runner and, on Flink, the job with the most tasks
(140 at parallelism 2; docs/scale-out.md#flink has the per-stage figures, where every stage pays a fixed cost
of a minute or more). To keep the test within CI's time, the stages before it come from a local build
of the Quickstart config: that build is copied and its ``intruders`` output removed, and ``incoherent build``
on ``--runner FlinkRunner`` resumes it, so the one stage that runs on Flink is ``intruders`` (then the card).
``.ci/run`` runs the whole build on Flink. The same run checks that the command printed the Flink job's id and
address, and that no job server the command started is left running; a second test interrupts a build while
its stage's job server runs and finds none left.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psutil
import pytest

from tests.conftest import ROOT, file_bytes
from tests.e2e.test_flink import JAR, job_server_home, wait_for_slots
from tests.services import free_port, start, stop

HOME = job_server_home()
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(HOME is None, reason="Beam's Flink job server not fetched: tools/flink-job-server.sh"),
]


def rest(port: int, path: str) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as response:
        return json.loads(response.read())


def job_servers_of(port: int) -> list[psutil.Process]:
    """Beam's Flink job servers started for the cluster at ``port`` (their command line names its master)."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        line = " ".join(process.info["cmdline"] or [])
        if "FlinkJobServerDriver" in line or ("-jar" in line and JAR in line):
            if f"--flink-master http://127.0.0.1:{port}" in line:
                found.append(process)
    return found


def parquet_bytes(build: Path) -> dict[str, bytes]:
    return {k: v for k, v in file_bytes(build).items() if k.endswith(".parquet")}


def test_a_killed_taskmanager_mid_stage_is_replaced_and_the_build_is_byte_identical(tmp_path):
    work, port = tmp_path / "flink", free_port()
    work.mkdir()
    cluster = start(["bash", str(ROOT / "tools" / "flink-cluster.sh"), str(HOME), str(work), str(port)], port,
                    dict(os.environ), work, seconds=240)  # fmt: skip
    try:
        local, remote = tmp_path / "local", tmp_path / "remote"
        # the local build while the cluster's JVMs start
        done = subprocess.run([sys.executable, "-m", "incoherent.pipelines.cli", "build", "--out", str(local), "--quiet"],
                              cwd=ROOT, capture_output=True, text=True, timeout=600)  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        shutil.copytree(local, remote, symlinks=True)
        shutil.rmtree(remote / "work" / "intruders")  # the build resumes: intruders (and the card) run again
        wait_for_slots(port, work)
        flags = [
            "--runner=FlinkRunner",
            f"--flink_master=127.0.0.1:{port}",
            f"--flink_job_server_jar={HOME / JAR}",
            "--environment_type=LOOPBACK",
            "--parallelism=2",
        ]
        command = [sys.executable, "-m", "incoherent.pipelines.cli", "build", "--out", str(remote), *flags]
        build = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 start_new_session=True)  # fmt: skip
        try:
            killed = job = None
            deadline = time.monotonic() + 900
            while build.poll() is None and killed is None:
                assert time.monotonic() < deadline, "the intruders job did not get under way on Flink"
                time.sleep(1)
                try:
                    jobs = rest(port, "/jobs/overview")["jobs"]
                    managers = [m["id"] for m in rest(port, "/taskmanagers")["taskmanagers"]]
                except OSError:
                    continue
                for candidate in jobs:
                    tasks = candidate["tasks"]
                    # in the middle of the stage: some of its tasks finished, others not yet
                    if candidate["state"] == "RUNNING" and 0 < tasks["finished"] < tasks["total"]:
                        job = candidate
                        assert len(managers) == 1
                        pid = int((work / "taskmanager.pid").read_text())
                        os.kill(pid, signal.SIGKILL)
                        killed = managers[0]
                        break
            assert killed is not None, "the stage ended before a task of its job had finished"
            stdout, stderr = build.communicate(timeout=900)
        finally:
            if build.poll() is None:
                os.killpg(build.pid, signal.SIGKILL)
                build.wait()
        assert build.returncode == 0, stderr[-3000:]
        (tmp_path / "build.stderr").write_text(stderr)
        assert "Traceback" not in stderr, stderr[
            -5000:
        ]  # the SDK worker's lost stream: one line, not a traceback
        # Flink saw the TaskManager go, restarted the job on the one the script started, and the job finished
        failures = json.dumps(rest(port, f"/jobs/{job['jid']}/exceptions"))
        assert f"TaskManager with id {killed} is no longer reachable" in failures
        assert rest(port, f"/jobs/{job['jid']}")["state"] == "FINISHED"
        managers = [m["id"] for m in rest(port, "/taskmanagers")["taskmanagers"]]
        assert managers and killed not in managers
        assert "restart 1" in (work / "taskmanager.log").read_text()
        # the user was told which Flink job ran the stage and where to look
        assert f"[flink] job {job['jid']}: http://127.0.0.1:{port}/jobs/{job['jid']}" in stderr
        # nothing lost, nothing extra: every Parquet file of the build byte-identical to the local runner's
        expected, got = parquet_bytes(local), parquet_bytes(remote)
        assert len(expected) == 18 and sorted(got) == sorted(expected)
        assert [k for k in expected if got[k] != expected[k]] == []
        assert sorted(file_bytes(remote)) == sorted(file_bytes(local))
        # the job server the stage started ended with it
        assert job_servers_of(port) == []
    finally:
        stop(cluster)


def test_an_interrupted_build_leaves_no_job_server_running(tmp_path):
    """SIGINT to the build alone (not to its process group, as a terminal's Ctrl-C would be): the build stops
    its stage process and then the one job server it started for its stages, before it exits (and the kernel
    would end that JVM had the build been killed: it was started to die with its starter). A fake Flink REST
    API (its /overview) stands in for the Flink master: nothing is submitted before the interruption."""
    from tests.pipelines.runtime.test_job_servers import fake_server, flink_rest

    with fake_server(flink_rest) as port:
        command = [sys.executable, "-m", "incoherent.pipelines.cli", "build", "--out", str(tmp_path / "out"), "--quiet",
                   "--runner=FlinkRunner", f"--flink_master=127.0.0.1:{port}", f"--flink_job_server_jar={HOME / JAR}",
                   "--environment_type=LOOPBACK"]  # fmt: skip
        build = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 start_new_session=True)  # fmt: skip
        try:
            deadline = time.monotonic() + 300
            while not [p for p in job_servers_of(port) if p.info["cmdline"][0].endswith("java")]:
                assert build.poll() is None, build.communicate()[1][-3000:]
                assert time.monotonic() < deadline, "no job server started"
                time.sleep(0.2)
            servers = job_servers_of(port)
            build.send_signal(signal.SIGINT)
            _, stderr = build.communicate(timeout=120)
            assert build.returncode == 130, stderr[-3000:]
            gone, alive = psutil.wait_procs(servers, timeout=30)
            assert alive == [] and job_servers_of(port) == []
        finally:
            if build.poll() is None:
                os.killpg(build.pid, signal.SIGKILL)
                build.wait()
            for process in job_servers_of(port):
                process.kill()
