#!/usr/bin/env python3
"""Torch threads per worker: `incoherent score-shuffle` with the tiny GPT-2 on the WSJ sample, by thread setting.

Input: the bundled WSJ sample ingested and shuffled with the defaults (k = 1..5, 838 pairs); the tiny GPT-2 of
``tests/tiny_lm.py`` (one layer, width 16, 32 positions), built offline. Each variant runs the command in its own
process, one after another, and the table gives its wall time (CLI, Beam start-up and model load included), the
machine's load average before it, the threads it used and how its scores compare with the first variant's.

    python bench/bench_threads.py                                   # this tree's variants
    python bench/bench_threads.py --baseline-tree ../before         # also a checkout of older code, as "before"

Variants: the default in-process runner; the same with ``--torch-threads 1``; Beam's multi-process runner with
two workers (``--direct_running_mode=multi_processing --direct_num_workers=2``), each with the default threads.
With ``--baseline-tree``, the multi-process and in-process runs of that tree come first. Work files go to
``bench/work/threads/`` (git-ignored). Timings on a shared machine are noisy: the variants run back to back and the
load is printed with each.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "bench" / "work" / "threads"
MULTI = ["--direct_running_mode=multi_processing", "--direct_num_workers=2"]


def prepare() -> tuple[Path, Path]:
    """The shuffled WSJ sample and the tiny GPT-2, made once under :data:`WORK`."""
    data, model = WORK / "data", WORK / "gpt2"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if not (data / "run_summary.json").exists():
        for argv in (
            [
                "ingest",
                "text",
                str(ROOT / "samples/wsj/wsj.jsonl"),
                "--out",
                str(WORK / "docs"),
                "--overwrite",
            ],
            ["shuffle", str(WORK / "docs"), "--out", str(data), "--overwrite"],
        ):
            subprocess.run(
                [sys.executable, "-m", "incoherent.pipelines.cli", *argv], check=True, env=env, cwd=ROOT
            )
    if not (model / "model.safetensors").exists():
        code = "import sys; from tests.tiny_lm import build_gpt2, build_gpt2_tokenizer; "
        code += "build_gpt2(sys.argv[1], build_gpt2_tokenizer())"
        subprocess.run([sys.executable, "-c", code, str(model)], check=True, env=env, cwd=ROOT)
    return data, model


def scores(out: Path) -> dict[tuple, tuple]:
    import pyarrow.parquet as pq

    rows = pq.read_table(sorted(glob.glob(str(out / "scores" / "*.parquet")))).to_pylist()
    return {
        (r["id"], r["block_size"], r["permutation"]): (r["score_original"], r["score_shuffled"], r["correct"])
        for r in rows
    }


def run(name: str, tree: Path, data: Path, model: Path, flags: list[str]) -> dict:
    out = WORK / f"out-{name}"
    argv = [
        sys.executable,
        "-m",
        "incoherent.pipelines.cli",
        "score-shuffle",
        str(model),
        str(data),
        "--out",
        str(out),
    ]
    argv += ["--overwrite", "--runner", "DirectRunner", *flags]
    load = os.getloadavg()
    started = time.perf_counter()
    done = subprocess.run(
        argv, env=dict(os.environ, PYTHONPATH=str(tree)), cwd=tree, capture_output=True, text=True
    )
    seconds = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(f"{name}: exit {done.returncode}\n{done.stderr[-2000:]}")
    params = json.loads((out / "run_summary.json").read_text())["params"]
    return {
        "variant": name,
        "seconds": round(seconds, 1),
        "load_before": [round(x, 2) for x in load],
        "torch_threads": params.get("torch_threads", "torch default"),
        "out": out,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline-tree", type=Path, default=None, help="a checkout of older code (before)")
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    data, model = prepare()
    variants = []
    if args.baseline_tree:
        variants += [
            ("before-multi", args.baseline_tree.resolve(), MULTI),  # the runs' cwd and PYTHONPATH
            ("before-in-process", args.baseline_tree.resolve(), []),
        ]
    variants += [
        ("multi", ROOT, MULTI),
        ("in-process-1-thread", ROOT, ["--torch-threads", "1"]),
        ("in-process", ROOT, []),
    ]
    results = []
    for name, tree, flags in variants:
        results.append(run(name, tree, data, model, flags))
        print(json.dumps({k: v for k, v in results[-1].items() if k != "out"}), flush=True)
    first = scores(results[0]["out"])
    print(
        f"\n| variant | torch threads per worker | wall s | load before | rows identical to {results[0]['variant']} | max score difference |"
    )
    print("|---|---:|---:|---|---:|---:|")
    for r in results:
        mine = scores(r["out"])
        same = sum(mine[k] == first[k] for k in first)
        diff = max(max(abs(mine[k][0] - first[k][0]), abs(mine[k][1] - first[k][1])) for k in first)
        print(
            f"| {r['variant']} | {r['torch_threads']} | {r['seconds']} | {r['load_before'][0]} | "
            f"{same} of {len(first)} | {diff:.1e} |"
        )


if __name__ == "__main__":
    main()
