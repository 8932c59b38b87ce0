"""Benchmark of `incoherent ingest text` on one large JSONL file (not a test): byte ranges against one task per file.

    .venv/bin/python bench/bench_ingest_text.py                                # ~200 MB, 2 rounds, ~5 min on 2 cores
    .venv/bin/python bench/bench_ingest_text.py --baseline-tree ../before      # an earlier checkout as the baseline

The file is ``samples/wsj/wsj.jsonl`` (199 WSJ articles) repeated with fresh ids up to ``--mb`` MB, in
``bench/work/`` (gitignored). Every run is ``incoherent ingest text FILE --direct_running_mode=multi_processing
--direct_num_workers=2``, in its own process, interleaved: baseline, ranged, baseline, ranged, ..., baseline;
each ranged run is divided by the mean of the two baseline runs around it (the machine's speed drifts). The
baseline is this tree with ``--range-mb`` larger than the file (one read task: what `ingest text` did before
byte ranges), or with ``--baseline-tree`` the code of that checkout (same virtualenv). Recorded per run: wall
and CPU seconds, peak RSS of the process tree (psutil, every 0.1 s), the largest single process's peak RSS
(``/usr/bin/time -v``), the CPU the rest of the machine used meanwhile, and the CPU seconds of the busiest
process (the read's critical path: on a machine whose cores others are using, wall time cannot show two
workers sharing the parse, this can). Results: ``bench/work/bench_ingest_text.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from bench_ingest import PYTHON, ROOT, TWO_WORKERS, WORK, run_measured

SAMPLE = ROOT / "samples" / "wsj" / "wsj.jsonl"


def big_jsonl(mb: int) -> Path:
    """``samples/wsj/wsj.jsonl`` repeated with ids ``<id>-<repeat>`` until the file holds ``mb`` MB."""
    path = WORK / f"wsj-{mb}mb.jsonl"
    if path.exists():
        return path
    WORK.mkdir(parents=True, exist_ok=True)
    rows = [json.loads(line) for line in SAMPLE.read_text().splitlines() if line.strip()]
    partial = path.with_suffix(".partial")
    with open(partial, "w") as f:
        repeat = 0
        while f.tell() < mb << 20:
            for row in rows:
                f.write(json.dumps({**row, "id": f"{row['id']}-{repeat}"}) + "\n")
            repeat += 1
    partial.rename(path)
    return path


def ingest(path: Path, extra: list[str], tree: Path | None = None) -> dict:
    """One ``incoherent ingest text`` run on two worker processes; with ``tree``, that checkout's code."""
    out = Path(tempfile.mkdtemp(prefix="bench-ingest-text-", dir=WORK))
    timing = out.with_suffix(".time")
    try:
        args = [
            "-m",
            "incoherent.pipelines.cli",
            "ingest",
            "text",
            str(path),
            "--out",
            str(out / "o"),
            *extra,
            *TWO_WORKERS,
        ]
        env = {
            **os.environ,
            "PYTHONPATH": str(tree or ROOT),
        }  # run from outside the checkout: PYTHONPATH names it
        result = run_measured(["/usr/bin/time", "-v", "-o", str(timing), PYTHON, *args], cwd=WORK, env=env)
        for line in timing.read_text().splitlines():
            if "Maximum resident set size" in line:
                result["largest_process_rss_mb"] = round(int(line.split(":")[1]) / 1024, 1)
        summary = json.loads((out / "o" / "run_summary.json").read_text())
        result["documents"] = summary["counters"].get("ingest-text", {}).get("kept")
        result.pop("stdout", None)
        return result
    finally:
        shutil.rmtree(out, ignore_errors=True)
        timing.unlink(missing_ok=True)


def run_line(run: dict) -> str:
    return (
        f"{run['run']:8} wall {run['wall_s']:7.1f} s  CPU {run['cpu_s']:6.1f} s  busiest process "
        f"{run['busiest_process_cpu_s']:6.1f} CPU s  tree RSS "
        f"{run['peak_rss_mb']:7.1f} MB  largest process {run.get('largest_process_rss_mb', 0):7.1f} MB  "
        f"others' CPU {run['other_cpu_s']:5.1f} s  documents {run.get('documents')}  rc {run['rc']}  "
        f"{run.get('wall_ratio_to_baseline', '')}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--mb", type=int, default=200, help="size of the JSONL file (default 200)")
    parser.add_argument("--rounds", type=int, default=2, help="ranged runs, each between two baselines")
    parser.add_argument("--range-mb", default="64", help="--range-mb of the ranged runs (default 64)")
    parser.add_argument("--baseline-tree", type=Path, help="a checkout whose code is the baseline")
    args = parser.parse_args(argv)
    path = big_jsonl(args.mb)
    one_task = ["--range-mb", str(args.mb * 4)] if args.baseline_tree is None else []
    runs = []
    for i in range(args.rounds * 2 + 1):
        ranged = i % 2 == 1
        result = (
            ingest(path, ["--range-mb", args.range_mb])
            if ranged
            else ingest(path, one_task, args.baseline_tree.resolve() if args.baseline_tree else None)
        )
        result["run"] = "ranged" if ranged else "baseline"
        runs.append(result)
        print(run_line(result), flush=True)
    for i in range(1, len(runs), 2):
        around = statistics.mean([runs[i - 1]["wall_s"], runs[i + 1]["wall_s"]])
        runs[i]["wall_ratio_to_baseline"] = round(runs[i]["wall_s"] / around, 3)
    results = {
        "file_mb": round(path.stat().st_size / 2**20, 1),
        "range_mb": args.range_mb,
        "baseline": str(args.baseline_tree) if args.baseline_tree else "this tree, one task per file",
        "runs": runs,
    }
    (WORK / "bench_ingest_text.json").write_text(json.dumps(results, indent=1) + "\n")
    for run in runs:
        print(run_line(run))
    return 0 if all(run["rc"] == 0 for run in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
