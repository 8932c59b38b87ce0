"""FlinkRunner and SparkRunner fail in seconds with one line when their job server or master is missing,
instead of Beam's HTTP download of a job server jar at run time (a traceback here) or a wait on a dead master."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import pytest

from incoherent.pipelines.runtime.job_servers import runner_service_problem
from tests.conftest import ROOT


def closed_port() -> int:
    """A loopback port that nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening() -> socket.socket:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    return s


def test_other_runners_and_dry_runs_are_not_checked():
    assert runner_service_problem([]) is None
    assert runner_service_problem(["--runner=DirectRunner"]) is None
    assert runner_service_problem(["--runner=DataflowRunner", "--project=p"]) is None
    assert runner_service_problem(["--runner=FlinkRunner", "--dry_run=True"]) is None


@pytest.mark.parametrize("runner", ["FlinkRunner", "flink", "SparkRunner"])
def test_no_job_server_jar_names_the_option_and_the_way_to_supply_one(runner):
    problem = runner_service_problem([f"--runner={runner}"])
    option = "--flink_job_server_jar" if "link" in runner else "--spark_job_server_jar"
    assert option in problem and "--job_endpoint" in problem and "download over HTTP" in problem
    assert "\n" not in problem


def test_a_jar_url_missing_file_and_a_job_endpoint(tmp_path):
    problem = runner_service_problem(["--runner=FlinkRunner", "--flink_job_server_jar=https://x.org/a.jar"])
    assert problem.startswith("--flink_job_server_jar https://x.org/a.jar: a URL is downloaded at run time")
    missing = tmp_path / "none.jar"
    problem = runner_service_problem(["--runner=FlinkRunner", f"--flink_job_server_jar={missing}"])
    assert problem.startswith(f"--flink_job_server_jar {missing}: no such file")
    # A running job server: Beam starts none, so no jar is needed
    assert runner_service_problem(["--runner=FlinkRunner", "--job_endpoint=127.0.0.1:1"]) is None


@pytest.mark.parametrize(
    "runner, option, scheme",
    [("FlinkRunner", "flink_master", ""), ("SparkRunner", "spark_master_url", "spark://")],
)
def test_an_absent_master_is_named_in_seconds_and_a_listening_one_passes(runner, option, scheme, tmp_path):
    jar = tmp_path / "job-server.jar"
    jar.write_bytes(b"")
    kind = "flink" if runner == "FlinkRunner" else "spark"
    port = closed_port()
    runner_service_problem([f"--runner={runner}"])  # Beam's options imported: what is timed is the probe
    args = [f"--runner={runner}", f"--{kind}_job_server_jar={jar}", f"--{option}={scheme}127.0.0.1:{port}"]
    start = time.monotonic()
    problem = runner_service_problem(args)
    assert time.monotonic() - start < 6
    assert (
        problem
        == f"--{option} {scheme}127.0.0.1:{port}: no master answers at 127.0.0.1:{port} (Connection refused)"
    )
    with listening() as s:
        up = s.getsockname()[1]
        args[-1] = f"--{option}={scheme}127.0.0.1:{up}"
        assert runner_service_problem(args) is None
    # Beam's own masters ([local], [auto]) start in the job server: nothing to reach
    assert (
        runner_service_problem(
            [f"--runner={runner}", f"--{kind}_job_server_jar={jar}", "--flink_master=[local]"]
        )
        is None
    )


@pytest.mark.parametrize(
    "runner, option", [("FlinkRunner", "--flink_master"), ("SparkRunner", "--spark_master_url")]
)
def test_build_on_flink_or_spark_without_a_job_server_is_one_line_in_seconds(runner, option, tmp_path):
    # Before this check: Beam tried to download beam-runners-flink-2.2-job-server-2.77.0.jar over HTTP at run
    # time and the build ended with a RuntimeError traceback.
    master = f"127.0.0.1:{closed_port()}" if runner == "FlinkRunner" else f"spark://127.0.0.1:{closed_port()}"
    command = [
        sys.executable,
        "-m",
        "incoherent.pipelines.cli",
        "build",
        "--out",
        str(tmp_path / "out"),
        "--runner",
        runner,
    ]
    done = subprocess.run(
        [*command, f"{option}={master}"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: --runner {runner} needs a job server"), (
        done.stderr
    )
    assert "Traceback" not in done.stderr and not (tmp_path / "out" / "dataset").exists()


def test_a_spark_run_without_its_jar_names_the_script_that_fetches_it(tmp_path):
    problem = runner_service_problem(["--runner=SparkRunner"])
    assert "tools/spark-job-server.sh" in problem and "docs/scale-out.md#spark" in problem
    missing = tmp_path / "none.jar"
    problem = runner_service_problem(["--runner=SparkRunner", f"--spark_job_server_jar={missing}"])
    assert (
        problem
        == f"--spark_job_server_jar {missing}: no such file (fetch it with tools/spark-job-server.sh (see docs/scale-out.md#spark))"
    )


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_job_server_started_through_the_wrapper_ends_when_its_starter_is_killed(tmp_path):
    """Beam starts the job server's JVM with Popen and stops it only at a clean exit: a stage process killed
    (kill -9, a build's SIGTERM, os._exit) left it running. Through the wrapper it gets SIGTERM instead."""
    import psutil

    starter = (
        "import subprocess, sys, time\n"
        "from incoherent.pipelines.runtime.job_servers import dying_with_this_process\n"
        "child = subprocess.Popen(dying_with_this_process(['sleep', '300']))\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(300)\n"
    )
    process = subprocess.Popen([sys.executable, "-c", starter], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    child = psutil.Process(int(process.stdout.readline()))
    deadline = time.monotonic() + 10
    while child.cmdline()[:1] != ["sleep"]:  # the wrapper has become the command (exec: the same pid)
        assert time.monotonic() < deadline
        time.sleep(0.05)
    process.kill()
    process.wait()
    try:
        child.wait(10)  # SIGTERM from the kernel when its starter died (psutil.TimeoutExpired if not)
    except psutil.NoSuchProcess:  # already reaped by init
        pass
    alive = child.is_running() and child.status() != psutil.STATUS_ZOMBIE
    if alive:
        child.kill()
    assert not alive
