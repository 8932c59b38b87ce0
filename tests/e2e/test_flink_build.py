"""The whole Quickstart ``build`` on a real Flink session cluster starts ONE job server for its 11 stages (issue
#52): Beam's FlinkRunner alone starts one per stage (a JVM, 40-65 s each on 2 busy cores) and the build took
686 s. The build process starts it when the first stage needs it and gives every stage ``--job_endpoint`` at
it (``pipelines.runtime.job_servers.SharedJobServer``); it is gone when the build ends. The Parquet files are
the pinned local ones (``tests/data/output_hashes.json``), and each stage's Flink job is named on the terminal.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading

import psutil
import pytest

from tests.conftest import ROOT
from tests.e2e.test_flink import HOME, JAR, flags, flink  # noqa: F401  (the module's cluster fixture)
from tests.e2e.test_output_hashes import HASHES, tree_hashes

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(HOME is None, reason="Beam's Flink job server not fetched: tools/flink-job-server.sh"),
]


def job_servers(master: str) -> set[int]:
    """Pids of the Beam Flink job servers submitting to ``master`` (``http://HOST:PORT``)."""
    found = set()
    for process in psutil.process_iter(["cmdline"]):
        command = process.info["cmdline"] or []
        if JAR in " ".join(command) and master in command:
            found.add(process.pid)
    return found


def test_the_quickstart_build_on_flink_starts_one_job_server(flink, tmp_path):  # noqa: F811
    master = f"http://127.0.0.1:{flink['port']}"
    out = tmp_path / "out"
    command = [sys.executable, "-m", "incoherent.pipelines.cli", "build", "--out", str(out), *flags(flink)]
    seen: set[int] = set()
    done = threading.Event()

    def watch() -> None:  # every job server that runs while the build does
        while not done.is_set():
            seen.update(job_servers(master))
            done.wait(0.5)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        build = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=1500)
    finally:
        done.set()
        watcher.join()
    assert build.returncode == 0, build.stderr[-3000:]
    assert len(seen) == 1, f"{len(seen)} job servers for one build"  # 11 before: one per stage
    assert not job_servers(master)  # stopped with the build
    expected = json.loads(HASHES.read_text())["default"]
    got = tree_hashes(out)
    parquet = sorted(name for name in expected if name.endswith(".parquet"))
    assert parquet and {name: got.get(name) for name in parquet} == {name: expected[name] for name in parquet}
    summary = json.loads((out / "build_summary.json").read_text())
    flink_lines = [line for line in build.stderr.splitlines() if line.startswith("[flink] job ")]
    assert len(flink_lines) == len(summary["commands"]) == 11, build.stderr[-3000:]  # each stage's Flink job
    # what the user sees: the stage lines and the job lines, not Beam's chatter (before: 33 "Waiting for grpc
    # channel", 22 "Really starting/destroying service", gRPC CANCELLED errors at the end of jobs)
    noise = [line for line in build.stderr.splitlines() if not line.startswith(("[build] ", "[flink] job "))]
    assert not noise, noise
    # the user's flags are what the summary (and the card) record, not the build's own job endpoint
    assert not any("--job_endpoint" in arg for argv in summary["commands"] for arg in argv)
