#!/usr/bin/env python3
"""The intruder stage alone, two versions of the code on the same inputs, interleaved; outputs compared.

Runs ``incoherent intruders`` on the documents, index and neighbours of an earlier build's ``work/`` folder
with each source tree in turn (``PYTHONPATH=TREE``, e.g. a ``git archive`` of a baseline commit), under
``/usr/bin/time``: wall seconds, CPU seconds (user + system, the process and its children) and peak RSS. CPU
seconds are the fairer figure on a shared machine. The Parquet files of every run are compared byte for byte.

    git archive f9e36a0 | tar -x -C bench/work/src-orig
    .venv/bin/python bench/bench_intruders.py bench/work/scale-30000/work bench/work/src-orig . --repeat 1
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "bench" / "work"


def run(tree: str, work: Path, out: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(Path(tree).resolve()))
    source = next(p.name for p in (work / "retrieval").iterdir())
    cmd = [
        "/usr/bin/time", "-f", "%e %U %S %M",
        sys.executable, "-m", "pipelines.cli", "intruders", str(work / "documents" / source),
        "--index", str(work / "retrieval" / source / "index"),
        "--neighbors", str(work / "retrieval" / source / "neighbors"),
        "--out", str(out), "--overwrite",
    ]  # fmt: skip
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(done.stderr[-3000:])
    wall, user, system, peak_kb = done.stderr.strip().splitlines()[-1].split()
    summary = json.loads((out / "run_summary.json").read_text())
    return {
        "tree": tree,
        "wall_s": float(wall),
        "cpu_s": round(float(user) + float(system), 1),
        "peak_rss_mb": int(peak_kb) // 1024,
        "pipeline_s": summary["seconds"],
        "load_average": os.getloadavg()[0],
    }


def parquet_bytes(out: Path) -> dict[str, bytes]:
    files = sorted(glob.glob(str(out / "**" / "*.parquet"), recursive=True))
    return {os.path.relpath(f, out): Path(f).read_bytes() for f in files}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("work", type=Path, help="an earlier build's work/ folder (one source)")
    parser.add_argument("trees", nargs="+", help="source trees to compare (the first is the baseline)")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    results, outputs = [], {}
    for _ in range(args.repeat):
        for i, tree in enumerate(args.trees):
            out = WORK / f"intruders-{i}"
            result = run(tree, args.work, out)
            outputs.setdefault(i, parquet_bytes(out))
            result["identical_to_baseline"] = parquet_bytes(out) == outputs[0]
            results.append(result)
            print(json.dumps(result), flush=True)
    with open(WORK / "bench_intruders.jsonl", "a") as f:
        for result in results:
            f.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
