#!/usr/bin/env python3
"""The intruder stage alone, two versions of the code on the same inputs, interleaved; outputs compared.

Runs ``incoherent intruders`` on the documents, index and neighbours of an earlier build's ``work/`` folder
with each source tree in turn (e.g. a ``git archive`` of a baseline commit), under ``/usr/bin/time``: wall
seconds, CPU seconds (user + system, the process and its children) and peak RSS. CPU seconds are the fairer
figure on a shared machine. The Parquet files of every run are compared byte for byte.

Each run starts in the tree's folder (``python -m incoherent.pipelines.cli`` puts the current folder first on
``sys.path``, ahead of ``PYTHONPATH`` and of the editable install of this repository), and the script checks
that the tree's own ``pipelines`` package is the one imported (``pipelines/intruders/`` now,
``pipelines/intruders.py`` in trees before the split). Before the timed runs each tree compiles
its numba kernels once (they are cached in the tree), so no run pays the compilation.

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


WARM_UP = """
import numpy as np
from {prefix}pipelines import __file__ as pipelines_file
from {prefix}retrieval import featurize, tfidf
featurize.feature_counts_batch(["warm up", "the numba kernels"])
s, f, v, r = np.array([0, 1, 2]), np.array([1, 2]), np.array([1.0, 1.0]), np.array([0])
tfidf.pair_cosines(s, f, v, r, r)
print(pipelines_file)
"""


def prefix(tree: Path) -> str:
    """``incoherent.`` for a tree with the one import package, nothing for a tree from before it."""
    return "incoherent." if (tree / "incoherent" / "__init__.py").is_file() else ""


def environment(tree: Path) -> dict:
    return dict(os.environ, PYTHONPATH=str(tree))


def warm_up(tree: Path) -> None:
    """Compile the tree's numba kernels (cached in the tree) and check that the tree's code is imported."""
    done = subprocess.run(
        [sys.executable, "-c", WARM_UP.format(prefix=prefix(tree))],
        env=environment(tree),
        cwd=tree,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(done.stderr[-3000:])
    imported = Path(done.stdout.strip().splitlines()[-1]).resolve()
    if imported != tree / "pipelines" / "__init__.py":
        raise SystemExit(f"{tree}: imported {imported}, not the tree's own code")


def run(tree: str, work: Path, out: Path) -> dict:
    tree_path, work = Path(tree).resolve(), work.resolve()
    env = environment(tree_path)
    source = next(p.name for p in (work / "retrieval").iterdir())
    cmd = [
        "/usr/bin/time", "-f", "%e %U %S %M",
        sys.executable, "-m", f"{prefix(tree_path)}pipelines.cli", "intruders", str(work / "documents" / source),
        "--index", str(work / "retrieval" / source / "index"),
        "--neighbors", str(work / "retrieval" / source / "neighbors"),
        "--out", str(out), "--overwrite",
    ]  # fmt: skip
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=tree_path)
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
    for tree in args.trees:
        warm_up(Path(tree).resolve())
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
