#!/usr/bin/env python3
"""Distributed benchmark: a ``gs://`` build on a GCS emulator, its workers in an external SDK worker pool.

For each size N (documents of ``bench/inputs/make_retrieval_corpus.py N 0 --fill``, one ``text`` source, from
the bundled samples) plus a small multistream Wikipedia dump (``bench/inputs/make_bench_dump.py --multistream``
of the bundled gensim fragment, the same at
every size, for the ingest's read tasks), every input is uploaded to a GCS emulator on 127.0.0.1 and
``incoherent build`` writes to ``gs://``, on two runners:

- ``portable``: Beam's job service (``local_job_service_main``) runs each job; its SDK workers are processes
  of an external worker pool (``worker_pool_main``). The driver (the build process and its stage processes)
  only submits jobs: this is how Dataflow or Flink run it.
- ``external``: Beam's local runner in the driver with ``--environment_type=EXTERNAL --direct_num_workers=2``:
  two SDK workers of the pool do the work, but the runner itself (and the data between steps) is in the driver.

Split per stage by the lines the build prints: the peak RSS of the driver's process tree (the build, its fork
server and stage processes) and of the largest SDK worker, sampled every 0.1 s, and the bytes each side read
and wrote through Beam's filesystems (``bench/iohook/sitecustomize.py``, on the ``PYTHONPATH`` of the build
and of the worker pool only, logs every file it closes), and the bytes the driver's whole process tree wrote
with the ``write`` family of system calls, to files and pipes, temporary files included
(``bench/iohook/treeio.py`` runs the build as a child subreaper and reads the kernel's I/O counters of the
reaped tree: ``driver_tree_written_mb``; per stage, sampled every 0.1 s from ``/proc/PID/io``, a lower bound:
``driver_syscall_written_kb``). Socket writes by ``send``/``sendmsg`` (gRPC, the storage client) are not in
those counters: ``strace -f -e trace=write,writev,sendto,sendmsg`` of the build sees them
(``bench/README_scale.md``).
Read tasks: the ``read_tasks`` counter of the Wikipedia ingest, against the ranges the same dump gets on local
disk. Ratios: each figure at the largest size over the smallest (targets: driver peak RSS and bytes written ≤ 1.2×
from 5,000 to 20,000 documents on the portable runner).

    .venv/bin/python bench/bench_distributed.py                      # 5,000 and 20,000 documents, both runners
    .venv/bin/python bench/bench_distributed.py --sizes 2000,8000 --runners portable

Work files go to ``bench/work/distributed/`` (git-ignored); results are appended to
``bench/work/bench_distributed.jsonl`` and printed as a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.services import BUCKET, EMULATOR, free_port, service_env, start_services, stop, upload  # noqa: E402

WORK = ROOT / "bench" / "work" / "distributed"
MAKE_CORPUS = ROOT / "bench" / "inputs" / "make_retrieval_corpus.py"
MAKE_DUMP = ROOT / "bench" / "inputs" / "make_bench_dump.py"
TREEIO = ROOT / "bench" / "iohook" / "treeio.py"
GENSIM = ROOT / "samples/wikipedia/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
DUMP_REPEATS = 3  # 618 pages, 7 page streams per 100 pages
STAGE_LINE = re.compile(r"^\[build\] stage \d+ of \d+, (\S+):")
MB = 1 << 20


class Tree:
    """Peak RSS (largest single process, and the whole tree) of a process and its descendants, per stage."""

    def __init__(self, root: psutil.Process, include_root: bool):
        self.root, self.include_root = root, include_root
        self.peak_tree: dict[str, int] = {}
        self.peak_process: dict[str, int] = {}
        self.written: dict[
            str, int
        ] = {}  # write() bytes per stage, sockets included (sampled: a lower bound)
        self._wchar: dict[int, int] = {}

    def members(self) -> list[psutil.Process]:
        try:
            children = self.root.children(recursive=True)
        except psutil.Error:
            return []
        return ([self.root] if self.include_root else []) + children

    def sample(self, stage: str) -> None:
        total, largest = 0, 0
        for p in self.members():
            try:
                rss = p.memory_info().rss
                wchar = p.io_counters().write_chars
            except psutil.Error:
                continue
            total, largest = total + rss, max(largest, rss)
            self.written[stage] = self.written.get(stage, 0) + wchar - self._wchar.get(p.pid, 0)
            self._wchar[p.pid] = wchar
        self.peak_tree[stage] = max(self.peak_tree.get(stage, 0), total)
        self.peak_process[stage] = max(self.peak_process.get(stage, 0), largest)


def io_between(io_dir: Path, role: str, start: float, end: float) -> tuple[int, int]:
    """Bytes read and written through Beam's filesystems by ``role`` processes, files closed in [start, end)
    (the lines ``bench/iohook/sitecustomize.py`` appends)."""
    read = written = 0
    log = io_dir / f"io-{role}.log"
    if not log.exists():
        return 0, 0
    for line in log.read_text().splitlines():
        when, _role, _pid, r, w = line.split(" ", 5)[:5]
        if start <= float(when) < end:
            read, written = read + int(r), written + int(w)
    return read, written


def make_inputs(n: int) -> tuple[Path, Path]:
    WORK.mkdir(parents=True, exist_ok=True)
    corpus = WORK / f"corpus-{n}.jsonl"
    if not corpus.exists():
        subprocess.run([sys.executable, str(MAKE_CORPUS), str(corpus), str(n), "0", "--fill"], check=True)
    dump = WORK / "bench-pages-articles-multistream.xml.bz2"
    if not dump.exists():
        subprocess.run(
            [sys.executable, str(MAKE_DUMP), str(GENSIM), str(DUMP_REPEATS), str(dump), "--multistream"],
            check=True,
        )
    return corpus, dump


def local_ranges(dump: Path) -> int:
    from incoherent.pipelines.ingest.wikipedia_plan import plan_reads

    return len(plan_reads([str(dump)]))


def run_build(
    n: int,
    runner: str,
    services: dict,
    env: dict,
    corpus_url: str,
    dump_url: str,
    pool: psutil.Process,
    io_dir: Path,
) -> dict:
    name = f"{runner}-{n}"
    config = {
        "out": "unused",
        "seed": 0,
        "sources": {
            "bench": {"kind": "text", "inputs": [corpus_url]},
            "wiki": {"kind": "wikipedia", "inputs": [dump_url]},
        },
        "neighbors": {"k": 10},
        "intruders": {"filter": "none"},
        "card": {"name": "distributed bench"},
    }
    config_path = WORK / f"{name}.yaml"
    config_path.write_text(yaml.safe_dump(config))
    if runner == "portable":
        beam = [
            "--runner=PortableRunner",
            f"--job_endpoint=localhost:{services['job']}",
            "--environment_type=EXTERNAL",
            f"--environment_config=localhost:{services['pool']}",
            "--no_auth",
        ]
    else:
        beam = [
            "--runner=DirectRunner",
            "--environment_type=EXTERNAL",
            f"--environment_config=localhost:{services['pool']}",
            "--direct_num_workers=2",
        ]
    out = f"gs://{BUCKET}/bench/{name}"
    incoherent = str(Path(sys.executable).with_name("incoherent"))
    tree_io = WORK / f"{name}.treeio.json"  # every byte the driver's tree wrote, sockets included
    cmd = [sys.executable, str(TREEIO), str(tree_io), "--", incoherent, "build", str(config_path)]
    cmd += ["--out", out, "--force", *beam]
    stage = ["startup"]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=ROOT, text=True, env=env
    )
    # the driver: the build and every process it leaves (reparented to treeio.py), not treeio.py itself
    driver, workers = Tree(psutil.Process(proc.pid), False), Tree(pool, False)
    done, lock = threading.Event(), threading.Lock()
    marks: list[tuple[str, float]] = []

    def sample():
        while not done.is_set():
            with lock:
                driver.sample(stage[0])
                workers.sample(stage[0])
            time.sleep(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    started = time.time()
    sampler.start()
    with open(WORK / f"{name}.log", "w") as log:
        for line in proc.stdout:
            log.write(line)
            match = STAGE_LINE.match(line)
            if match or line.startswith("[build] card:"):
                with lock:
                    driver.sample(stage[0])
                    workers.sample(stage[0])
                    marks.append((stage[0], time.time()))
                    stage[0] = match.group(1) if match else "card"
    code = proc.wait()
    done.set()
    sampler.join()
    seconds = time.time() - started
    time.sleep(1.0)  # the last lines of the workers' files
    marks.append((stage[0], time.time()))
    if code != 0:
        raise SystemExit(f"{runner} build of {n} documents failed (exit {code}); see {WORK / f'{name}.log'}")
    stages: dict[str, dict] = {}
    begin = started
    for label, end in marks:  # (stage, when it ended)
        if label == "startup":
            begin = end
            continue
        d_read, d_written = io_between(io_dir, "driver", begin, end)
        w_read, w_written = io_between(io_dir, "worker", begin, end)
        stages[label] = {
            "driver_peak_mb": round(driver.peak_tree.get(label, 0) / MB),
            "worker_peak_mb": round(workers.peak_process.get(label, 0) / MB),
            "driver_read_mb": round(d_read / MB, 3),
            "driver_written_mb": round(d_written / MB, 3),
            "workers_read_mb": round(w_read / MB, 3),
            "workers_written_mb": round(w_written / MB, 3),
            "driver_syscall_written_kb": round(driver.written.get(label, 0) / 1024, 1),
        }
        begin = end
    tree = json.loads(tree_io.read_text())

    from incoherent.pipelines.runtime import storage

    ingest = json.loads(storage.read_bytes(f"{out}/work/documents/wiki/run_summary.json"))
    index = json.loads(storage.read_bytes(f"{out}/work/retrieval/bench/index/index.json"))

    def total(key: str) -> float:  # the stages' sum: processes left from an earlier build do not count
        return round(sum(v[key] for v in stages.values()), 3)

    return {
        "runner": runner,
        "documents": n,
        "seconds": round(seconds, 1),
        "nnz": index["nnz"],
        "read_tasks": ingest["counters"]["ingest-wikipedia-read"]["read_tasks"],
        "driver_peak_mb": round(max(driver.peak_tree.values()) / MB),
        "worker_peak_mb": round(max(workers.peak_process.values()) / MB),
        "driver_read_mb": total("driver_read_mb"),
        "driver_written_mb": total("driver_written_mb"),
        "driver_tree_written_mb": round(tree["wchar"] / MB, 3),
        "driver_tree_write_calls": tree["syscw"],
        "workers_read_mb": total("workers_read_mb"),
        "workers_written_mb": total("workers_written_mb"),
        "stages": stages,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="5000,20000")
    parser.add_argument("--runners", default="portable,external")
    parser.add_argument("--tag", default="")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    runners = args.runners.split(",")
    if not EMULATOR.exists():
        raise SystemExit("needs gcp-storage-emulator (pip install -e '.[test,dataflow]')")
    elsewhere = WORK / "workers-cwd"
    elsewhere.mkdir(parents=True, exist_ok=True)
    gcs_port, job_port, pool_port = free_port(), free_port(), free_port()
    env = service_env(gcs_port)
    io_dir = WORK / f"io-{time.strftime('%Y%m%d-%H%M%S')}"
    io_dir.mkdir(parents=True)
    hook = str(ROOT / "bench" / "iohook")  # counts FileSystems bytes per process (sitecustomize)
    counted = dict(env, PYTHONPATH=f"{hook}{os.pathsep}{ROOT}", INCOHERENT_BENCH_IO=str(io_dir))
    driver_env = dict(counted, INCOHERENT_BENCH_ROLE="driver")
    worker_env = dict(counted, INCOHERENT_BENCH_ROLE="worker")
    started = []
    results = []
    try:
        # the pool's sitecustomize (bench/iohook) also points its workers at the emulator
        started = start_services((gcs_port, job_port, pool_port), env, worker_env, elsewhere)
        pool = started[-1]
        os.environ["STORAGE_EMULATOR_HOST"] = env["STORAGE_EMULATOR_HOST"]
        from incoherent.pipelines.runtime.options import use_gcs_emulator

        use_gcs_emulator()
        services = {"job": job_port, "pool": pool_port}
        for n in sizes:
            corpus, dump = make_inputs(n)
            corpus_url = f"gs://{BUCKET}/in/{corpus.name}"
            dump_url = f"gs://{BUCKET}/in/{dump.name}"
            upload(corpus, corpus_url)
            upload(dump, dump_url)
            index = dump.name[: -len(".xml.bz2")] + "-index.txt.bz2"
            upload(dump.with_name(index), f"gs://{BUCKET}/in/{index}")
            for runner in runners:
                result = run_build(
                    n, runner, services, driver_env, corpus_url, dump_url, psutil.Process(pool.pid), io_dir
                )
                result.update(
                    tag=args.tag, local_ranges=local_ranges(dump), when=time.strftime("%Y-%m-%d %H:%M")
                )
                results.append(result)
                print(json.dumps(result), flush=True)
                with open(ROOT / "bench" / "work" / "bench_distributed.jsonl", "a") as f:
                    f.write(json.dumps(result) + "\n")
    finally:
        for process in reversed(started):
            stop(process)
    report(results, sizes)


def report(results: list[dict], sizes: list[int]) -> None:
    keys = (
        "driver_peak_mb",
        "driver_tree_written_mb",
        "driver_written_mb",
        "driver_read_mb",
        "worker_peak_mb",
        "workers_read_mb",
    )
    print("\n| runner | documents | seconds | non-zeros | read tasks (local) | " + " | ".join(keys) + " |")
    print("|---|---:|---:|---:|---:|" + "---:|" * len(keys))
    for r in results:
        cells = " | ".join(f"{r[k]:,}" for k in keys)
        print(
            f"| {r['runner']} | {r['documents']:,} | {r['seconds']} | {r['nnz']:,} | "
            f"{r['read_tasks']} ({r['local_ranges']}) | {cells} |"
        )
    small, large = min(sizes), max(sizes)
    for runner in sorted({r["runner"] for r in results}):
        a = next((r for r in results if r["runner"] == runner and r["documents"] == small), None)
        b = next((r for r in results if r["runner"] == runner and r["documents"] == large), None)
        if a and b and a is not b:
            ratios = ", ".join(f"{k} {b[k] / max(a[k], 1e-9):.2f}x" for k in (*keys, "nnz"))
            print(f"{runner} {large:,} / {small:,}: {ratios}")
    print("\nper stage (driver peak MB / files written MB / all writes KB (sampled); largest worker MB):")
    for r in results:
        cells = ", ".join(
            f"{s} {v['driver_peak_mb']}/{v['driver_written_mb']}/{v['driver_syscall_written_kb']}; "
            f"{v['worker_peak_mb']}"
            for s, v in r["stages"].items()
        )
        print(f"  {r['runner']} {r['documents']:,}: {cells}")


if __name__ == "__main__":
    main()
