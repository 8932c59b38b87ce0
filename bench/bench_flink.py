"""The Quickstart build on the local runner and on a real Flink session cluster, on this machine, one after the
other: wall time, the cluster's CPU, the SDK workers Flink started, and whether the Parquet files are the same.

    python bench/bench_flink.py [--work DIR] [--parallelism 2]

It fetches (or finds) Beam's Flink job server with tools/flink-job-server.sh, runs ``incoherent build --quiet``
locally, starts tools/flink-cluster.sh (a JobManager and a TaskManager with 2 slots on 127.0.0.1), runs the same
build on it (``--runner FlinkRunner --environment_type=LOOPBACK``, the SDK workers in the build's stage
processes), reads the JobManager's and the TaskManager's CPU seconds from ``/proc/<pid>/stat`` before the
cluster is stopped, counts the SDK workers that connected to the TaskManager (its log's "Beam Fn Control client
connected" lines) and the Flink jobs (its REST API), and prints a Markdown table (docs/scale-out.md#flink).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rest(port: int, path: str) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as response:
        return json.loads(response.read())


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a running process (``/proc/<pid>/stat`` fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def parquet_sums(build: Path) -> dict[str, str]:
    return {
        str(p.relative_to(build)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted((build / "dataset").rglob("*.parquet"))
    }


def timed_build(out: Path, flags: list[str]) -> tuple[float, dict]:
    started = time.monotonic()
    command = [
        sys.executable,
        "-m",
        "incoherent.pipelines.cli",
        "build",
        "--out",
        str(out),
        "--quiet",
        *flags,
    ]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"bench: {' '.join(command)} failed:\n{done.stderr[-3000:]}")
    seconds = time.monotonic() - started
    return seconds, json.loads((out / "build_summary.json").read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=None, help="folder for the builds and the cluster")
    parser.add_argument("--parallelism", type=int, default=2)
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-flink-"))
    work.mkdir(parents=True, exist_ok=True)
    jar = subprocess.run(["bash", str(ROOT / "tools" / "flink-job-server.sh")], check=True, capture_output=True,
                         text=True).stdout.strip()  # fmt: skip
    load_before = os.getloadavg()
    local_seconds, local_summary = timed_build(work / "local", [])

    port, cluster_dir = free_port(), work / "cluster"
    started = time.monotonic()
    cluster = subprocess.Popen(["bash", str(ROOT / "tools" / "flink-cluster.sh"), str(Path(jar).parent),
                                str(cluster_dir), str(port)], start_new_session=True)  # fmt: skip
    try:
        while True:
            try:
                if rest(port, "/overview")["slots-total"] >= 2:
                    break
            except OSError:
                pass
            if cluster.poll() is not None or time.monotonic() - started > 300:
                sys.exit(f"bench: the Flink cluster did not come up (logs in {cluster_dir})")
            time.sleep(1)
        cluster_seconds = time.monotonic() - started
        flags = ["--runner=FlinkRunner", f"--flink_master=127.0.0.1:{port}", f"--flink_job_server_jar={jar}",
                 "--environment_type=LOOPBACK", f"--parallelism={args.parallelism}"]  # fmt: skip
        jm, tm = (int((cluster_dir / f"{name}.pid").read_text()) for name in ("jobmanager", "taskmanager"))
        jm_before, tm_before = cpu_seconds(jm), cpu_seconds(tm)
        flink_seconds, flink_summary = timed_build(work / "flink", flags)
        jm_cpu, tm_cpu = cpu_seconds(jm) - jm_before, cpu_seconds(tm) - tm_before
        jobs = rest(port, "/jobs/overview")["jobs"]
        workers = (cluster_dir / "taskmanager.log").read_text().count("Beam Fn Control client connected")
    finally:
        os.killpg(cluster.pid, signal.SIGTERM)
        cluster.wait(60)
    load_after = os.getloadavg()
    same = parquet_sums(work / "local") == parquet_sums(work / "flink")
    print(
        f"machine: {os.cpu_count()} cores; load average {load_before[0]:.1f} before, {load_after[0]:.1f} after"
    )
    print(f"cluster up (2 slots) in {cluster_seconds:.0f} s\n")
    print("| runner | wall time | stages (s) |")
    print("| --- | --- | --- |")
    for name, seconds, summary in (("local (FnApiRunner)", local_seconds, local_summary),
                                   (f"Flink session cluster, parallelism {args.parallelism}", flink_seconds,
                                    flink_summary)):  # fmt: skip
        stages = ", ".join(f"{k} {v:.0f}" for k, v in summary["seconds"].items())
        print(f"| {name} | {seconds:.0f} s | {stages} |")
    print()
    print(f"Flink jobs: {len(jobs)} ({sum(j['state'] == 'FINISHED' for j in jobs)} finished); "
          f"SDK workers started (LOOPBACK, in the stage processes): {workers}")  # fmt: skip
    print(
        f"CPU seconds during the Flink build: TaskManager JVM {tm_cpu:.0f} s, JobManager JVM {jm_cpu:.0f} s"
    )
    print(f"Parquet files ({len(parquet_sums(work / 'local'))}) byte-identical: {same}")


if __name__ == "__main__":
    main()
