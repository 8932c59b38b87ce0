"""A real Spark standalone cluster: Spark 3.2.2's master and worker (2 cores) as processes of their own on
127.0.0.1 (tools/spark-cluster.sh), Beam's Spark job server assembled with Maven (tools/spark-job-server.sh,
Beam 2.62.0: no shaded job-server jar is served, see docs/scale-out.md#spark), and ``incoherent`` on
``--runner SparkRunner`` with the SDK workers in this process (``LOOPBACK``). The output must be
byte-identical to the local runner's. Skipped when the job server has not been fetched.
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

JAR = "beam-runners-spark-3-job-server-2.62.0.jar"
DUMP = "samples/wikipedia/2022-08-24_minidumps-en_3def73f3.xml.bz2"


def job_server_home() -> Path | None:
    """The folder tools/spark-job-server.sh filled (``$INCOHERENT_SPARK_HOME`` or its default), if complete."""
    default = Path.home() / ".cache" / "incoherent" / "spark-job-server-2.62.0-spark-3.2.2"
    home = Path(os.environ.get("INCOHERENT_SPARK_HOME", default))
    return home if (home / "COMPLETE").is_file() and (home / JAR).is_file() else None


HOME = job_server_home()
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(HOME is None, reason="Beam's Spark job server not fetched: tools/spark-job-server.sh"),
]


def master_state(ui_port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=30) as response:
        return json.loads(response.read())


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    """A Spark standalone master and worker on free ports, up with the worker's 2 cores; stopped on every exit
    (tests.services: atexit and SIGTERM); their logs stay in the work folder."""
    work, port, ui = tmp_path_factory.mktemp("spark"), free_port(), free_port()
    cluster = start(["bash", str(ROOT / "tools" / "spark-cluster.sh"), str(HOME), str(work), str(port), str(ui)],
                    port, dict(os.environ), work, seconds=240)  # fmt: skip
    try:
        deadline = time.monotonic() + 240
        while True:
            try:
                if master_state(ui)["aliveworkers"] >= 1:
                    break
            except OSError:  # the master's UI is not up yet
                pass
            assert time.monotonic() < deadline, (work / "worker.log").read_text()[-3000:]
            time.sleep(1)
        yield {"port": port, "ui": ui, "work": work}
    finally:
        stop(cluster)


def test_ingest_on_a_spark_standalone_cluster_is_byte_identical_to_local(spark, tmp_path):
    assert run_cli("ingest", "wikipedia", ROOT / DUMP, "--out", tmp_path / "local") == 0
    flags = [
        "--runner=SparkRunner",
        f"--spark_master_url=spark://127.0.0.1:{spark['port']}",
        f"--spark_job_server_jar={HOME / JAR}",
        "--environment_type=LOOPBACK",
    ]
    command = [sys.executable, "-m", "incoherent.pipelines.cli", "ingest", "wikipedia", str(ROOT / DUMP)]
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}  # the job server's Spark driver binds loopback too
    done = subprocess.run([*command, "--out", str(tmp_path / "spark"), *flags], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    local, remote = file_bytes(tmp_path / "local"), file_bytes(tmp_path / "spark")
    assert set(local) == set(remote) and local and all(local[k] == remote[k] for k in local)
    # the job ran as an application of the standalone master, on an executor its worker launched
    assert [app["state"] for app in master_state(spark["ui"])["completedapps"]] == ["FINISHED"]
    assert list((spark["work"] / "work").glob("app-*/0/stderr"))
