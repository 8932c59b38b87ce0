"""FlinkRunner and SparkRunner fail in seconds with one line when their job server or master is missing,
instead of Beam's HTTP download of a job server jar at run time (a traceback here) or a wait on a dead master."""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import subprocess
import sys
import threading
import time

import pytest

from incoherent.pipelines.runtime.job_servers import local_paths_problem, runner_service_problem
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
    assert (
        runner_service_problem(["--runner=FlinkRunner", "--dry_run=True"]) is None
    )  # checked by flink_dry_run


def test_a_spark_dry_run_checks_the_jar_and_the_master(tmp_path):
    # Before: a Spark dry run passed whatever the master (issue #52)
    jar = tmp_path / "job-server.jar"
    jar.write_bytes(b"")
    port = closed_port()
    args = [
        "--runner=SparkRunner",
        f"--spark_master_url=spark://127.0.0.1:{port}",
        "--environment_type=LOOPBACK",
    ]
    assert runner_service_problem([*args, "--dry_run=True"]).startswith(
        "--runner SparkRunner needs a job server"
    )
    problem = runner_service_problem([*args, f"--spark_job_server_jar={jar}", "--dry_run=True"])
    assert problem == (
        f"--spark_master_url spark://127.0.0.1:{port}: no master answers at 127.0.0.1:{port} (Connection refused)"
    )


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
    problem = runner_service_problem([*args, "--environment_type=LOOPBACK"])
    assert time.monotonic() - start < 6
    if runner == "FlinkRunner":
        assert problem == (
            f"--flink_master 127.0.0.1:{port}: no Flink REST API answers at http://127.0.0.1:{port}/overview "
            "([Errno 111] Connection refused)"
        )
    else:
        assert (
            problem
            == f"--{option} {scheme}127.0.0.1:{port}: no master answers at 127.0.0.1:{port} (Connection refused)"
        )
    if runner == "FlinkRunner":  # Flink's master must answer as Flink's REST API (a bare accept does not)
        with fake_server(flink_rest) as up:
            args[-1] = f"--{option}=127.0.0.1:{up}"
            assert runner_service_problem([*args, "--environment_type=LOOPBACK"]) is None
    else:
        with listening() as s:
            up = s.getsockname()[1]
            args[-1] = f"--{option}={scheme}127.0.0.1:{up}"
            assert runner_service_problem([*args, "--environment_type=LOOPBACK"]) is None
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
        [*command, f"{option}={master}", "--environment_type=LOOPBACK"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
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


@pytest.mark.e2e  # kills a real process
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


# ------------------------------------------------------------------------- masters and SDK workers that cannot work


@contextlib.contextmanager
def fake_server(serve):
    """A server on 127.0.0.1 that hands each connection to ``serve(conn, stop)`` in a thread of its own; yields
    its port; ``stop`` is set (and every thread ends) when the test ends."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.1)
    stop = threading.Event()
    threads = []

    def accept():
        while not stop.is_set():
            try:
                conn = server.accept()[0]
            except OSError:
                continue
            thread = threading.Thread(target=serve, args=(conn, stop), daemon=True)
            thread.start()
            threads.append(thread)

    acceptor = threading.Thread(target=accept, daemon=True)
    acceptor.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        acceptor.join(timeout=5)
        for thread in threads:
            thread.join(timeout=5)
        server.close()


def silent(conn, stop):  # accepts and never answers
    with conn:
        stop.wait()


def dripping(conn, stop):  # an HTTP answer, one byte every 0.2 s, for ever
    with conn:
        conn.settimeout(1)
        with contextlib.suppress(OSError):
            conn.recv(4096)
            answer = b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + b"{" * 100000
            for byte in answer:
                if stop.wait(0.2):
                    return
                conn.sendall(bytes([byte]))


def garbage(conn, stop):  # answers at once, but not HTTP
    with conn, contextlib.suppress(OSError):
        conn.settimeout(1)
        conn.recv(4096)
        conn.sendall(b"\x00\x17 hello, this is not HTTP \xff\xfe\n" * 20)


REDIRECT_TO = "http://192.0.2.1:8081/overview"  # TEST-NET-1: were it followed, nothing would answer there


def redirecting(conn, stop):  # a 302 to another host, which urllib's default opener follows
    with conn, contextlib.suppress(OSError):
        conn.settimeout(1)
        conn.recv(4096)
        conn.sendall(f"HTTP/1.1 302 Found\r\nLocation: {REDIRECT_TO}\r\nContent-Length: 0\r\n\r\n".encode())


def not_flink(conn, stop):  # HTTP and JSON, but not Flink's
    with conn, contextlib.suppress(OSError):
        conn.settimeout(1)
        conn.recv(4096)
        body = json.dumps({"status": "ok"}).encode()
        conn.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
            + body
        )


def flink_rest(conn, stop):  # what a Flink 1.19 JobManager's /overview answers
    with conn, contextlib.suppress(OSError):
        conn.settimeout(1)
        conn.recv(4096)
        body = json.dumps({"taskmanagers": 1, "slots-total": 2, "flink-version": "1.19.0"}).encode()
        conn.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
            + body
        )


@pytest.fixture
def jar(tmp_path):
    path = tmp_path / "beam-runners-flink-1.19-job-server-2.62.0.jar"
    path.write_bytes(b"")
    return path


@pytest.mark.parametrize(
    "serve, why",
    [
        (silent, "no Flink REST API answered at {url} within 3 s"),
        (dripping, "no Flink REST API answered at {url} within 3 s"),
        (garbage, "no Flink REST API answers at {url} (not an HTTP answer: BadStatusLine)"),
        (not_flink, "{url} is not Flink's REST API (no flink-version)"),
        (
            redirecting,
            "no Flink REST API answers at {url} (redirected to " + REDIRECT_TO + " (not followed))",
        ),
    ],
)
def test_a_master_that_is_not_flink_is_one_line_within_the_deadline(serve, why, jar):
    # Before: a bare TCP connect passed all four; the build then hung past 300 s (silent), hung with a thread
    # traceback (dripping) or ended in a RuntimeError traceback after 80 s (garbage)
    runner_service_problem(["--runner=FlinkRunner"])  # Beam's options imported: what is timed is the probe
    with fake_server(serve) as port:
        url = f"http://127.0.0.1:{port}/overview"
        args = ["--runner=FlinkRunner", f"--flink_job_server_jar={jar}", f"--flink_master=127.0.0.1:{port}"]
        start = time.monotonic()
        problem = runner_service_problem([*args, "--environment_type=LOOPBACK"], seconds=3)
        assert time.monotonic() - start < 5
    assert problem.startswith(f"--flink_master 127.0.0.1:{port}: " + why.format(url=url)), problem
    assert "\n" not in problem and "\x00" not in problem


def test_a_flink_dry_run_asks_the_master_within_the_deadline(jar):
    from apache_beam.options.pipeline_options import PipelineOptions

    from incoherent.pipelines.runtime import flink_dry_run
    from incoherent.schemas.records import InputError

    with fake_server(dripping) as port:
        options = PipelineOptions(
            ["--runner=FlinkRunner", f"--flink_job_server_jar={jar}", f"--flink_master=127.0.0.1:{port}"]
        )
        start = time.monotonic()
        with pytest.raises(InputError, match="within 5 s"):
            flink_dry_run.check_flink(options)
        assert time.monotonic() - start < 8
    with fake_server(flink_rest) as port:
        options = PipelineOptions(
            ["--runner=FlinkRunner", f"--flink_job_server_jar={jar}", f"--flink_master=127.0.0.1:{port}"]
        )
        assert "Flink 1.19.0, 1 TaskManager(s), 2 slots" in flink_dry_run.check_flink(options)


@pytest.mark.parametrize("dry_run", [[], ["--dry-run"]])
def test_flink_without_an_environment_type_is_refused_in_one_line_dry_run_too(dry_run, jar, tmp_path):
    # Before: --dry-run passed (rc 0) and the run failed 48 s later with a 23-line traceback from
    # `docker run apache/beam_python3.11_sdk`, an image without incoherent
    with fake_server(flink_rest) as port:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "incoherent.pipelines.cli",
                "build",
                "--out",
                str(tmp_path / "out"),
                *dry_run,
                "--runner=FlinkRunner",
                f"--flink_master=127.0.0.1:{port}",
                f"--flink_job_server_jar={jar}",
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.strip().splitlines() == [
        f"error: --runner FlinkRunner with --flink_master 127.0.0.1:{port} needs --environment_type: LOOPBACK "
        "(SDK workers in this process: a cluster on this machine), EXTERNAL with --environment_config HOST:PORT "
        "of an SDK worker pool on each TaskManager host, or PROCESS (docs/scale-out.md#sdk-workers)"
    ]
    assert not (tmp_path / "out").exists()


def test_spark_on_a_cluster_needs_an_environment_type_too(tmp_path):
    problem = runner_service_problem(["--runner=SparkRunner", "--spark_master_url=spark://10.1.2.3:7077"])
    assert problem.startswith(
        "--runner SparkRunner with --spark_master_url spark://10.1.2.3:7077 needs --environment_type"
    )


def test_docker_without_an_image_or_without_docker_is_one_line(monkeypatch, tmp_path):
    problem = runner_service_problem(["--environment_type=DOCKER"])
    assert problem == (
        "--environment_type DOCKER without --environment_config IMAGE: Beam's default image "
        "(apache/beam_python3.x_sdk) has no incoherent"
    )
    monkeypatch.setenv("PATH", str(tmp_path))  # no docker command here
    problem = runner_service_problem(["--environment_type=DOCKER", "--environment_config=my/worker:1"])
    assert problem.startswith("--environment_type DOCKER: no docker command on this machine")
    # a cluster elsewhere starts its workers' containers on its own hosts: nothing to check from here
    problem = runner_service_problem(
        [
            "--runner=FlinkRunner",
            "--flink_master=10.1.2.3:8081",
            "--environment_type=DOCKER",
            "--environment_config=my/worker:1",
            "--dry_run=True",
        ]
    )
    assert problem is None


@pytest.mark.parametrize("serve", [silent, garbage])
def test_an_external_worker_pool_that_does_not_answer_is_one_line_in_seconds(serve):
    runner_service_problem(["--environment_type=LOOPBACK"])
    with fake_server(serve) as port:
        start = time.monotonic()
        problem = runner_service_problem(
            ["--environment_type=EXTERNAL", f"--environment_config=127.0.0.1:{port}"], seconds=2
        )
        assert time.monotonic() - start < 4
    assert problem == (
        f"--environment_config 127.0.0.1:{port}: no SDK worker pool answers there "
        "(no gRPC server answered within 2 s)"
    )
    port = closed_port()
    problem = runner_service_problem(
        ["--environment_type=EXTERNAL", f"--environment_config=127.0.0.1:{port}"], seconds=2
    )
    assert problem.startswith(f"--environment_config 127.0.0.1:{port}: no SDK worker pool answers there")


def test_a_real_worker_pool_passes():
    from concurrent import futures

    import grpc
    from apache_beam.portability.api import beam_fn_api_pb2_grpc
    from apache_beam.runners.worker.worker_pool_main import BeamFnExternalWorkerPoolServicer

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=1))
    beam_fn_api_pb2_grpc.add_BeamFnExternalWorkerPoolServicer_to_server(
        BeamFnExternalWorkerPoolServicer(), server
    )
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        assert (
            runner_service_problem(["--environment_type=EXTERNAL", f"--environment_config=127.0.0.1:{port}"])
            is None
        )
    finally:
        server.stop(0)


# ------------------------------------------------------------------ local paths, SDK workers on other hosts


def test_local_paths_with_workers_on_other_hosts_are_named(tmp_path):
    remote_flink = ["--runner=FlinkRunner", "--flink_master=10.0.0.1:8081", "--environment_type=EXTERNAL"]
    remote_flink.append("--environment_config=localhost:50000")  # each TaskManager host's own pool
    problem = local_paths_problem(remote_flink, [("--out", str(tmp_path / "out")), ("", "gs://b/docs")])
    assert problem.startswith(f"--out {tmp_path / 'out'}: on this machine's disk (")
    assert problem.endswith(
        "which the SDK workers of the Flink cluster at 10.0.0.1:8081's TaskManagers cannot read: give gs:// or "
        "s3:// paths, or a shared filesystem mounted at the same path on every host (docs/scale-out.md#a-cluster)"
    )
    assert local_paths_problem(remote_flink, [("--out", "s3://b/out"), ("", "gs://b/docs")]) is None
    # SDK workers here: LOOPBACK, a cluster on loopback, the local runner
    assert local_paths_problem([*remote_flink[:2], "--environment_type=LOOPBACK"], [("--out", "o")]) is None
    on_loopback = ["--runner=FlinkRunner", "--flink_master=127.0.0.1:8081", *remote_flink[2:]]
    assert local_paths_problem(on_loopback, [("--out", "o")]) is None
    assert local_paths_problem(["--runner=DirectRunner"], [("--out", "o")]) is None
    pool = ["--environment_type=EXTERNAL", "--environment_config=10.0.0.2:50000"]
    assert local_paths_problem(pool, [("", str(tmp_path))]).startswith(f"{tmp_path}: on this machine's disk")


def test_a_network_filesystem_is_read_from_proc_mounts():
    from incoherent.pipelines.runtime.job_servers import filesystem_type

    assert filesystem_type("/proc/self/status") == "proc"
    assert filesystem_type("/proc/no/such/file") == "proc"  # its nearest existing folder's


@pytest.mark.e2e  # a network namespace
@pytest.mark.skipif(
    shutil.which("unshare") is None
    or subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode,
    reason="needs unshare -n (a network namespace of its own: nothing of this test leaves the machine)",
)
def test_a_command_with_local_paths_and_workers_elsewhere_stops_in_one_line(jar, tmp_path):
    # Run in a network namespace of its own (no route anywhere): the cluster address is never reached. Before,
    # the dry run went on to ask that master and failed on it; the local paths were never named.
    out = tmp_path / "out"
    command = ["unshare", "-n", "--", sys.executable, "-m", "incoherent.pipelines.cli", "shuffle"]
    command += [str(ROOT / "samples" / "wsj"), "--out", str(out), "--dry-run", "--runner=FlinkRunner"]
    command += ["--flink_master=10.0.0.1:8081", f"--flink_job_server_jar={jar}", "--environment_type=PROCESS"]
    command += ['--environment_config={"command": "/opt/apache/beam/boot"}']
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: --out {out}: on this machine's disk"), lines
    assert "Flink cluster at 10.0.0.1:8081's TaskManagers cannot read" in lines[0] and not out.exists()
