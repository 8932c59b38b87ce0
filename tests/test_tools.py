"""The shell scripts of tools/: what a shell would run that nobody meant it to."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from tests.conftest import ROOT

HEREDOC = re.compile(r"<<-?\s*([A-Za-z_]+)\n(.*?)\n\1\n", re.S)


def test_no_unquoted_heredoc_runs_a_command():
    """An unquoted heredoc (``<<CONF``) substitutes backticks and ``$(...)``: a comment in the Flink
    configuration that named `incoherent probes` in backticks ran ``incoherent probes`` while the cluster
    started. Variables (``$rest``) are what such a heredoc is for; commands are not."""
    found = []
    for script in sorted((ROOT / "tools").glob("*.sh")):
        for match in HEREDOC.finditer(script.read_text()):
            body = match.group(2)
            if "`" in body or "$(" in body:
                found.append(f"{script.name}: <<{match.group(1)}")
    assert not found, found
    flink = (ROOT / "tools" / "flink-jobmanager.sh").read_text()
    assert any(HEREDOC.finditer(flink))  # the check sees the heredoc


def fake_command(bin_dir: Path, name: str, body: str) -> None:
    path = bin_dir / name
    path.write_text("#!/usr/bin/env bash\n" + body + "\n")
    path.chmod(0o755)


@pytest.mark.parametrize("script, libs", [("flink-job-server.sh", "lib"), ("spark-job-server.sh", "jars")])
def test_a_job_server_script_refuses_a_folder_it_did_not_make(script, libs, tmp_path):
    """Before: ``rm -rf DIR/lib`` and DIR/pom.xml overwritten in any folder given, a Flink install's lib/ too."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    ran = tmp_path / "mvn-ran"
    fake_command(bin_dir, "mvn", f'echo "$@" >>{ran}; exit 1')  # Maven never reached: the test stays offline
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    theirs = tmp_path / "flink-1.19.0"
    (theirs / libs).mkdir(parents=True)
    (theirs / libs / "flink-dist.jar").write_bytes(b"their jar")
    (theirs / "pom.xml").write_text("<project>theirs</project>")
    done = subprocess.run(
        ["bash", str(ROOT / "tools" / script), str(theirs)], env=env, capture_output=True, text=True
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"error: {theirs}: not empty and not made by {script} (no .incoherent-{script[:-3]} there); give a new or "
        "empty folder"
    ]
    assert (theirs / libs / "flink-dist.jar").read_bytes() == b"their jar"
    assert (theirs / "pom.xml").read_text() == "<project>theirs</project>" and not ran.exists()
    assert sorted(p.name for p in theirs.iterdir()) == [libs, "pom.xml"]
    # a new folder is made and marked; run again there, it is the script's own (Maven is asked both times)
    mine = tmp_path / "new"
    for attempt in (1, 2):
        done = subprocess.run(
            ["bash", str(ROOT / "tools" / script), str(mine)], env=env, capture_output=True, text=True
        )
        assert done.returncode == 1 and "not made by" not in done.stderr
        assert (mine / f".incoherent-{script[:-3]}").is_file() and len(
            ran.read_text().splitlines()
        ) == attempt


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def wait_until(condition, seconds: float = 30, what: str = "") -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


@pytest.fixture
def fake_flink(tmp_path):
    """A JOB_SERVER_DIR with Flink's runtime jar's name, and a ``java`` on PATH that answers Flink's
    BashJavaUtils as Flink does and otherwise is a long-lived process (a JobManager's or TaskManager's JVM)."""
    home = tmp_path / "home"
    (home / "lib").mkdir(parents=True)
    (home / "lib" / "flink-runtime-1.19.0.jar").write_bytes(b"")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake_command(
        bin_dir,
        "java",
        'case "$*" in *BashJavaUtils*) echo "BASH_JAVA_UTILS_EXEC_RESULT:-Xmx64m"; '
        'echo "BASH_JAVA_UTILS_EXEC_RESULT:-D x=y";; *) exec sleep 600;; esac',
    )
    return home, {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}


def test_a_second_flink_cluster_on_a_running_ones_folder_is_refused_and_kill_9_leaves_no_node(
    fake_flink, tmp_path
):
    """Before: the failed second start overwrote the running cluster's pid files, logs and flink-conf.yaml, and
    ``kill -9`` of the script left the JobManager and the TaskManager running."""
    home, env = fake_flink
    work = tmp_path / "work"
    script = str(ROOT / "tools" / "flink-cluster.sh")
    cluster = subprocess.Popen(["bash", script, str(home), str(work), "18081"], env=env, start_new_session=True,
                               stderr=subprocess.PIPE)  # fmt: skip
    try:
        pids = {role: work / f"{role}.pid" for role in ("jobmanager", "taskmanager")}

        def jvms_up() -> bool:
            return all(
                p.is_file() and p.read_text().strip() and alive(int(p.read_text())) for p in pids.values()
            )

        wait_until(jvms_up, what="the fake JVMs did not start")
        jvms = {role: int(p.read_text()) for role, p in pids.items()}
        before = {
            str(f.relative_to(work)): (f.read_bytes(), f.stat().st_mtime_ns)
            for f in work.rglob("*")
            if f.is_file()
        }
        assert "conf-jobmanager/flink-conf.yaml" in before and "taskmanager.log" in before
        second = subprocess.run(["bash", script, str(home), str(work), "18082"], env=env, capture_output=True,
                                text=True, timeout=60)  # fmt: skip
        assert second.returncode == 1
        assert second.stderr.splitlines() == [
            f"error: {work}: a Flink cluster started by tools/flink-cluster.sh runs there (JobManager pid "
            f"{jvms['jobmanager']}); stop it, or give another work folder"
        ]
        for role, option in (("jobmanager", []), ("taskmanager", ["--jobmanager", "127.0.0.1:6123"])):
            node = subprocess.run(["bash", str(ROOT / "tools" / f"flink-{role}.sh"), str(home), str(work), *option],
                                  env=env, capture_output=True, text=True, timeout=60)  # fmt: skip
            assert node.returncode == 1 and node.stderr.startswith(
                f"error: {work}: a Flink {role} started by"
            ), node.stderr
        after = {
            str(f.relative_to(work)): (f.read_bytes(), f.stat().st_mtime_ns)
            for f in work.rglob("*")
            if f.is_file()
        }
        assert after == before  # nothing of the running cluster touched
        scripts = [p for p in psutil.Process(cluster.pid).children() if "flink-" in " ".join(p.cmdline())]
        assert len(scripts) == 2
        cluster.send_signal(signal.SIGKILL)
        cluster.wait(10)
        # the nodes' scripts get SIGTERM from the kernel (PR_SET_PDEATHSIG) and stop their JVMs
        wait_until(lambda: not any(alive(pid) for pid in [*jvms.values(), *(p.pid for p in scripts)]),
                   what="a node outlived kill -9 of tools/flink-cluster.sh")  # fmt: skip
        # the folder is free again
        again = subprocess.Popen(
            ["bash", script, str(home), str(work), "18083"], env=env, start_new_session=True
        )
        try:
            wait_until(lambda: jvms_up() and int(pids["jobmanager"].read_text()) != jvms["jobmanager"])
        finally:
            again.terminate()
            again.wait(30)
        wait_until(lambda: not alive(int(pids["jobmanager"].read_text())), what="SIGTERM left the JobManager")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(cluster.pid, signal.SIGKILL)


def test_a_node_killed_with_kill_9_takes_its_jvm_with_it(fake_flink, tmp_path):
    home, env = fake_flink
    work = tmp_path / "work"
    node = subprocess.Popen(["bash", str(ROOT / "tools" / "flink-jobmanager.sh"), str(home), str(work),
                             "--bind", "127.0.0.1", "--rpc-port", "16123", "--rest-port", "18084"],
                            env=env, start_new_session=True)  # fmt: skip
    try:
        pid_file = work / "jobmanager.pid"
        wait_until(
            lambda: pid_file.is_file() and pid_file.read_text().strip() and alive(int(pid_file.read_text()))
        )
        conf = (work / "conf-jobmanager" / "flink-conf.yaml").read_text()
        assert (
            "jobmanager.rpc.port: 16123" in conf
            and "rest.port: 18084" in conf
            and "blob.server.port: 6124" in conf
        )
        jvm = int(pid_file.read_text())
        node.send_signal(signal.SIGKILL)
        node.wait(10)
        wait_until(lambda: not alive(jvm), what="the JobManager outlived kill -9 of its script")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(node.pid, signal.SIGKILL)


def test_node_scripts_refuse_bad_options_in_one_line(fake_flink, tmp_path):
    home, env = fake_flink
    tools = ROOT / "tools"
    for command, line in [
        ([tools / "flink-taskmanager.sh", home, tmp_path / "w"], "error: flink-taskmanager.sh: --jobmanager HOST[:RPC_PORT] is needed"),
        ([tools / "flink-jobmanager.sh", home, tmp_path / "w", "--rpc-port", "x"], "error: flink-jobmanager.sh: --rpc-port x: not a port number"),
        ([tools / "flink-jobmanager.sh", home, tmp_path / "w", "--port", "1"], "error: flink-jobmanager.sh: unknown option --port"),
        ([tools / "flink-jobmanager.sh", tmp_path / "nothing", tmp_path / "w"], f"error: flink-jobmanager.sh: {tmp_path / 'nothing'}: no Flink 1.19.0 jars in {tmp_path / 'nothing'}/lib (fetch them with tools/flink-job-server.sh {tmp_path / 'nothing'})"),
    ]:  # fmt: skip
        done = subprocess.run(
            ["bash", *map(str, command)], env=env, capture_output=True, text=True, timeout=30
        )
        assert done.returncode == 2 and done.stderr.splitlines() == [line]
