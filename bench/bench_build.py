#!/usr/bin/env python3
"""Benchmark ``incoherent build`` (no model filter) on the real-text retrieval collection.

For each size N: build the collection with ``/work/shared/bench/make_retrieval_corpus.py`` (N documents of
3-8 real sentences), write a build config with one ``text`` source (``incoherent ingest text``), run
``incoherent build`` in a subprocess and sample the resident memory of its whole process tree. Reports
documents/second end to end, peak RSS, and each stage's share of the time (from ``build_summary.json``).

    .venv/bin/python bench/bench_build.py                 # 10,000 and 100,000 documents
    .venv/bin/python bench/bench_build.py --sizes 2000     # a quick check
    .venv/bin/python bench/bench_build.py --beam-args=--direct_running_mode=multi_processing,--direct_num_workers=2

Work files go to ``bench/work/`` (git-ignored). Results are appended to ``bench/work/bench_build.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "bench" / "work"
MAKE_CORPUS = Path("/work/shared/bench/make_retrieval_corpus.py")


def tree_rss(process: psutil.Process) -> int:
    total = 0
    for p in [process, *process.children(recursive=True)]:
        try:
            total += p.memory_info().rss
        except psutil.Error:
            pass
    return total


def run_measured(cmd: list[str], log_path: Path) -> tuple[float, int, int]:
    """(seconds, peak RSS of the process tree in bytes, exit code)."""
    peak = 0
    with open(log_path, "w") as log:
        started = time.time()
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
        ps = psutil.Process(proc.pid)
        done = threading.Event()

        def sample():
            nonlocal peak
            while not done.is_set():
                peak = max(peak, tree_rss(ps))
                time.sleep(0.2)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        code = proc.wait()
        done.set()
        sampler.join()
        return time.time() - started, peak, code


def config_for(corpus: Path) -> dict:
    return {
        "out": "unused",
        "seed": 0,
        "sources": {"bench": {"kind": "text", "inputs": [str(corpus)]}},
        "neighbors": {"k": 10},
        "intruders": {"filter": "none"},
        "shuffle": {"block_sizes": [1, 2, 3, 4, 5], "max_sentences": 20},
    }


def bench(n: int, beam_args: list[str]) -> dict:
    import yaml

    WORK.mkdir(parents=True, exist_ok=True)
    corpus = WORK / f"corpus-{n}.jsonl"
    if not corpus.exists():
        subprocess.run([sys.executable, str(MAKE_CORPUS), str(corpus), str(n)], check=True)
    config = WORK / f"build-{n}.yaml"
    config.write_text(yaml.safe_dump(config_for(corpus)))
    out = WORK / f"build-{n}"
    cmd = [
        str(ROOT / ".venv" / "bin" / "incoherent"),
        "build",
        str(config),
        "--out",
        str(out),
        "--overwrite",
        *beam_args,
    ]
    seconds, peak, code = run_measured(cmd, WORK / f"build-{n}.log")
    if code != 0:
        raise SystemExit(f"build of {n} documents failed (exit {code}); see {WORK / f'build-{n}.log'}")
    summary = json.loads((out / "build_summary.json").read_text())
    stages = summary["seconds"]
    staged = sum(stages.values())
    intruders = summary["sources"]["bench"]
    return {
        "documents": n,
        "beam_args": beam_args,
        "wall_seconds": round(seconds, 1),
        "docs_per_second": round(n / seconds, 1),
        "peak_rss_mb": round(peak / 2**20),
        "stage_seconds": stages,
        "stage_share": {k: round(v / staged, 3) for k, v in stages.items()},
        "peak_rss_mb_after_stage": summary.get("peak_rss_mb_after", {}),
        "startup_and_checks_seconds": round(seconds - staged, 1),
        "kept": intruders["kept"],
        "produced": intruders["produced"],
        "positive_rate": intruders["positive_rate"],
        "splits": intruders["splits"],
        "artefact_check": intruders["artefact_check"],
        "cpu_count": os.cpu_count(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated document counts")
    parser.add_argument("--beam-args", default="", help="comma-separated Beam flags passed to every stage")
    args = parser.parse_args()
    beam_args = [a for a in args.beam_args.split(",") if a]
    results = []
    for n in (int(s) for s in args.sizes.split(",")):
        result = bench(n, beam_args)
        results.append(result)
        with open(WORK / "bench_build.jsonl", "a") as f:
            f.write(json.dumps(result) + "\n")
        print(json.dumps(result, indent=1), flush=True)
    print("\n| documents | wall s | docs/s | peak RSS MB | " + " | ".join(results[0]["stage_share"]) + " |")
    for r in results:
        shares = " | ".join(f"{100 * v:.0f}%" for v in r["stage_share"].values())
        print(
            f"| {r['documents']:,} | {r['wall_seconds']} | {r['docs_per_second']} | {r['peak_rss_mb']:,} | {shares} |"
        )


if __name__ == "__main__":
    main()
