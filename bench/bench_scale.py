#!/usr/bin/env python3
"""Scale benchmark of ``incoherent build``: time and peak memory per stage at several collection sizes.

For each size N: the real-text collection of ``bench/inputs/make_retrieval_corpus.py N 0 --fill`` (real windows
of the bundled samples, or with ``--data DIR`` of the larger real-text folder the published figures used, up to
~116k documents; then documents of real sentences drawn at random), one ``text`` source, run
``incoherent build`` in a subprocess while sampling the resident memory of its whole process tree every
0.2 s (the peak of each stage too, by the stage lines the build prints). With ``--sample S`` the config
samples S dataset documents (``intruders: {sample: S}`` and ``shuffle: {sample: S}``) over the whole
N-document pool.

    .venv/bin/python bench/bench_scale.py                             # 1,000 documents: a quick check
    .venv/bin/python bench/bench_scale.py --sizes 30000,100000,300000 --data DIR   # the published figures
    .venv/bin/python bench/bench_scale.py --sizes 300000 --sample 30000
    .venv/bin/python bench/bench_scale.py --sizes 100000 --tag before   # a label for the results line
    .venv/bin/python bench/bench_scale.py --sizes 1000000 --resume     # go on after a kill (skips finished stages)

Work files go to ``bench/work/`` (git-ignored); results are appended to ``bench/work/bench_scale.jsonl``.
An existing collection is used as it is: ``bench/work/corpus-N.jsonl`` (``corpus-N-data.jsonl`` with
``--data``; a symbolic link to one made elsewhere will do; the 1M one takes ~20 s to make).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import threading
import time
from pathlib import Path

import psutil
import yaml
from bench_build import (  # the same paths, probes
    INCOHERENT,
    ROOT,
    WORK,
    check_installed,
    make_corpus,
    tree_rss,
)

STAGE_LINE = re.compile(r"^\[build\] stage \d+ of \d+, (\S+):")


def tree_cpu(process: psutil.Process, seen: dict[int, float]) -> float:
    """CPU seconds (user + system) of the process tree so far; ``seen`` keeps exited processes' last figure."""
    for p in [process, *process.children(recursive=True)]:
        try:
            times = p.cpu_times()
            seen[p.pid] = times.user + times.system
        except psutil.Error:
            pass
    return sum(seen.values())


def run_measured(cmd: list[str], log_path: Path) -> tuple[float, int, dict[str, int], dict[str, float], int]:
    """(seconds, peak RSS of the process tree, peak per stage, CPU seconds per stage, exit code).

    CPU seconds do not depend on the other load of a shared machine the way wall seconds do.
    """
    peak, per_stage, current = 0, {}, ["startup"]
    cpu_seen: dict[int, float] = {}
    cpu_at: dict[str, float] = {}
    with open(log_path, "w") as log:
        started = time.time()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=ROOT, text=True)
        ps = psutil.Process(proc.pid)
        done = threading.Event()
        lock = threading.Lock()

        def sample():
            nonlocal peak
            while not done.is_set():
                rss = tree_rss(ps)
                with lock:
                    peak = max(peak, rss)
                    per_stage[current[0]] = max(per_stage.get(current[0], 0), rss)
                    tree_cpu(ps, cpu_seen)
                time.sleep(0.2)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        for line in proc.stdout:
            log.write(line)
            log.flush()
            match = STAGE_LINE.match(line)
            if match:
                with lock:
                    cpu_at[current[0]] = tree_cpu(ps, cpu_seen)
                    current[0] = match.group(1)
        with lock:
            cpu_at[current[0]] = sum(cpu_seen.values())  # the last figures seen before it exited
        code = proc.wait()
        done.set()
        sampler.join()
        stage_cpu, before = {}, 0.0
        for stage, total in cpu_at.items():
            stage_cpu[stage], before = round(total - before, 1), total
        return time.time() - started, peak, per_stage, stage_cpu, code


def bench(
    n: int, sample: str | None, tag: str, beam_args: list[str], resume: bool = False, data: str | None = None
) -> dict:
    WORK.mkdir(parents=True, exist_ok=True)
    config = {
        "out": "unused",
        "seed": 0,
        "sources": {"bench": {"kind": "text", "inputs": [str(make_corpus(n, data))]}},
        "neighbors": {"k": 10},
        "intruders": {"filter": "none", **({"sample": sample} if sample else {})},
        "shuffle": {
            "block_sizes": [1, 2, 3, 4, 5],
            "max_sentences": 20,
            **({"sample": sample} if sample else {}),
        },
    }
    name = f"scale-{n}" + (f"-s{sample}" if sample else "")
    config_path = WORK / f"{name}.yaml"
    config_path.write_text(yaml.safe_dump(config))
    out = WORK / name
    cmd = [
        INCOHERENT,
        "build",
        str(config_path),
        "--out",
        str(out),
        *([] if resume else ["--force"]),  # resume: the build skips the stages an earlier run finished
    ]
    seconds, peak, per_stage, stage_cpu, code = run_measured(cmd + beam_args, WORK / f"{name}.log")
    if code != 0:
        raise SystemExit(f"build of {n} documents failed (exit {code}); see {WORK / f'{name}.log'}")
    summary = json.loads((out / "build_summary.json").read_text())
    source = summary["sources"]["bench"]
    index = json.loads((out / "work" / "retrieval" / "bench" / "index" / "index.json").read_text())
    return {
        "tag": tag,
        "documents": n,
        "sample": sample,
        "beam_args": beam_args,
        "wall_seconds": round(seconds, 1),
        "peak_rss_mb": round(peak / 2**20),
        "peak_rss_mb_per_stage": {k: round(v / 2**20) for k, v in per_stage.items()},
        "stage_seconds": summary["seconds"],
        "stage_cpu_seconds": stage_cpu,  # the last stage's includes the card and the exit
        "index_nnz": index["nnz"],  # the matrix: 8 bytes per non-zero on disk and loaded
        "produced": source["produced"],
        "splits": source["splits"],
        "work_disk_mb": round(
            sum(f.stat().st_size for f in (out / "work").rglob("*") if f.is_file()) / 2**20
        ),
        "load_average_after": os.getloadavg(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000", help="comma-separated document counts (default 1000)")
    parser.add_argument(
        "--data", help="the real-text folder of the published figures (bench/inputs/README.md)"
    )
    parser.add_argument("--sample", default=None, help="dataset sample (count or fraction) over the pool")
    parser.add_argument("--tag", default="", help="a label stored with the results")
    parser.add_argument("--beam-args", default="", help="comma-separated Beam flags passed to every stage")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="go on with an earlier, interrupted run of the same size (its finished stages are skipped)",
    )
    args = parser.parse_args()
    beam_args = [a for a in args.beam_args.split(",") if a]
    check_installed()
    for n in (int(s) for s in args.sizes.split(",")):
        result = bench(n, args.sample, args.tag, beam_args, args.resume, args.data)
        with open(WORK / "bench_scale.jsonl", "a") as f:
            f.write(json.dumps(result) + "\n")
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
