"""A real Flink session cluster: Flink 1.19.0's JobManager and TaskManager (2 task slots) as processes of their
own on 127.0.0.1 (tools/flink-cluster.sh), Beam's Flink job server assembled with Maven
(tools/flink-job-server.sh, Beam 2.62.0: no shaded job-server jar is served, see docs/scale-out.md#flink), and
``incoherent`` on ``--runner FlinkRunner`` with the SDK workers in this process (``LOOPBACK``). The output
must be byte-identical to the local runner's. Skipped when the job server has not been fetched (``.ci/run``
fetches it first); the whole Quickstart build on the same cluster is ``.ci/run``'s Flink step.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import ROOT, file_bytes, run_cli
from tests.services import free_port, start, stop

JAR = "beam-runners-flink-1.19-job-server-2.62.0.jar"
DUMP = "samples/wikipedia/2022-08-24_minidumps-en_3def73f3.xml.bz2"


def job_server_home() -> Path | None:
    """The folder tools/flink-job-server.sh filled (``$INCOHERENT_FLINK_HOME`` or its default), if complete."""
    default = Path.home() / ".cache" / "incoherent" / "flink-job-server-2.62.0-flink-1.19"
    home = Path(os.environ.get("INCOHERENT_FLINK_HOME", default))
    return home if (home / "COMPLETE").is_file() and (home / JAR).is_file() else None


HOME = job_server_home()
pytestmark = pytest.mark.skipif(
    HOME is None, reason="Beam's Flink job server not fetched: tools/flink-job-server.sh"
)


def overview(port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/overview", timeout=30) as response:
        return json.loads(response.read())


@pytest.fixture(scope="module")
def flink(tmp_path_factory):
    """A Flink session cluster on a free REST port, up with its TaskManager's 2 slots; stopped on every exit
    (tests.services: atexit and SIGTERM); its logs stay in the work folder."""
    work, port = tmp_path_factory.mktemp("flink"), free_port()
    cluster = start(["bash", str(ROOT / "tools" / "flink-cluster.sh"), str(HOME), str(work), str(port)], port,
                    dict(os.environ), work, seconds=240)  # fmt: skip
    try:
        deadline = time.monotonic() + 240
        while True:
            try:
                if overview(port)["slots-total"] >= 2:
                    break
            except OSError:  # the REST endpoint is up but slow to answer while the JVMs start
                pass
            assert time.monotonic() < deadline, (work / "taskmanager.log").read_text()[-3000:]
            time.sleep(1)
        yield {"port": port, "work": work}
    finally:
        stop(cluster)


@pytest.mark.slow
def test_ingest_on_a_flink_session_cluster_is_byte_identical_to_local(flink, tmp_path):
    assert run_cli("ingest", "wikipedia", ROOT / DUMP, "--out", tmp_path / "local") == 0
    flags = [
        "--runner=FlinkRunner",
        f"--flink_master=127.0.0.1:{flink['port']}",
        f"--flink_job_server_jar={HOME / JAR}",
        "--environment_type=LOOPBACK",
        "--parallelism=2",
    ]
    command = [sys.executable, "-m", "pipelines.cli", "ingest", "wikipedia", str(ROOT / DUMP)]
    done = subprocess.run([*command, "--out", str(tmp_path / "flink"), *flags], cwd=ROOT, capture_output=True,
                          text=True, timeout=900)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    local, remote = file_bytes(tmp_path / "local"), file_bytes(tmp_path / "flink")
    assert set(local) == set(remote) and local and all(local[k] == remote[k] for k in local)
    # the job ran on the session cluster, not in an embedded mini cluster
    assert overview(flink["port"])["jobs-finished"] >= 1
