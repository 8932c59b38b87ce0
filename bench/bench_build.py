#!/usr/bin/env python3
"""Benchmark ``incoherent build`` (no model filter) on the real-text retrieval collection.

For each size N: build the collection with ``bench/inputs/make_retrieval_corpus.py`` (N documents of 3-8 real
sentences, from the bundled samples, or with ``--data DIR`` from the larger real-text folder the published
figures used, see ``bench/inputs/README.md``), write a build config with one ``text``
source (``incoherent ingest text``), run ``incoherent build`` (the one installed beside this Python) in a
subprocess and sample the resident memory of its whole process tree. Reports documents/second end to end, peak
RSS, and each stage's share of the time (from ``build_summary.json``).

Baseline, in the same run (unless ``--no-baseline``): what a user would run without ``build``, the sequence of
single commands ``incoherent ingest text``, ``index``, ``neighbors``, ``intruders``, ``shuffle`` with the same
options, one process each, one after another. Reports the build's wall time over the sequence's, the peak RSS
of each, and whether the two wrote byte-identical intruder, candidate and shuffle tables.

    .venv/bin/python bench/bench_build.py                 # 2,000 documents: a quick check from a clone
    .venv/bin/python bench/bench_build.py --sizes 10000,100000 --data DIR   # the published figures
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
MAKE_CORPUS = ROOT / "bench" / "inputs" / "make_retrieval_corpus.py"
INCOHERENT = str(Path(sys.executable).with_name("incoherent"))  # installed beside the Python running this


def check_installed() -> None:
    """One line, not a traceback, when the Python running a benchmark has no ``incoherent`` beside it."""
    if not Path(INCOHERENT).exists():
        raise SystemExit(
            f"{INCOHERENT} not found: run the benchmark with the Python of a venv where incoherent is "
            "installed (the Quickstart's .venv/bin/python)"
        )


def tree_rss(process: psutil.Process) -> int:
    """Resident bytes of ``process`` and all its descendants (0 once it has exited)."""
    total = 0
    try:
        members = [process, *process.children(recursive=True)]
    except psutil.Error:  # it exited between two samples
        return 0
    for p in members:
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


def make_corpus(n: int, data: str | None = None) -> Path:
    """``bench/work/corpus-N[-data].jsonl``, built if missing: from the bundled samples, or from the real-text
    folder ``data``; past the real windows (about 4,700 from the samples, 116,000 from ``data``) documents of
    sentences drawn at random (``--fill``: N documents whatever N)."""
    WORK.mkdir(parents=True, exist_ok=True)
    corpus = WORK / f"corpus-{n}{'-data' if data else ''}.jsonl"
    if not corpus.exists():
        extra = ["--data", data] if data else []
        subprocess.run(
            [sys.executable, str(MAKE_CORPUS), str(corpus), str(n), "0", "--fill", *extra], check=True
        )
    return corpus


def bench(n: int, beam_args: list[str], data: str | None = None) -> dict:
    import yaml

    corpus = make_corpus(n, data)
    config = WORK / f"build-{n}.yaml"
    config.write_text(yaml.safe_dump(config_for(corpus)))
    out = WORK / f"build-{n}"
    cmd = [
        INCOHERENT,
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
        "peak_rss_mb_per_stage": summary.get("peak_rss_mb", {}),
        "startup_and_checks_seconds": round(seconds - staged, 1),
        "kept": intruders["kept"],
        "produced": intruders["produced"],
        "positive_rate": intruders["positive_rate"],
        "splits": intruders["splits"],
        "artefact_check": intruders["artefact_check"],
        "cpu_count": os.cpu_count(),
    }


def single_commands(n: int, beam_args: list[str], data: str | None = None) -> dict:
    """The baseline: the build's five commands as separate processes, one after another, with its options."""
    config = config_for(make_corpus(n, data))
    base = WORK / f"commands-{n}"
    docs, index, nbrs = base / "documents", base / "index", base / "neighbors"
    intruders, shuffle = base / "intruders", base / "shuffle"
    k, seed = str(config["neighbors"]["k"]), str(config["seed"])
    shuffle_opts = config["shuffle"]
    steps = [
        ("ingest", ["ingest", "text", *config["sources"]["bench"]["inputs"], "--source", "bench", "--out", str(docs)]),
        ("index", ["index", str(docs), "--out", str(index)]),
        ("neighbors", ["neighbors", str(docs), "--index", str(index), "--k", k, "--out", str(nbrs)]),
        ("intruders", ["intruders", str(docs), "--out", str(intruders), "--index", f"bench={index}",
                       "--neighbors", f"bench={nbrs}", "--seed", seed, "--k", k,
                       "--filter", config["intruders"]["filter"]]),
        ("shuffle", ["shuffle", str(docs), "--out", str(shuffle), "--seed", seed,
                     "--block-sizes", *map(str, shuffle_opts["block_sizes"]),
                     "--max-sentences", str(shuffle_opts["max_sentences"])]),
    ]  # fmt: skip
    seconds, peaks, cpu = {}, {}, {}
    for name, argv in steps:
        before = children_cpu()
        took, peak, code = run_measured(
            [INCOHERENT, *argv, "--overwrite", *beam_args], WORK / f"commands-{n}-{name}.log"
        )
        if code != 0:
            raise SystemExit(f"`incoherent {name}` of {n} documents failed (exit {code})")
        seconds[name], peaks[name], cpu[name] = (
            round(took, 1),
            round(peak / 2**20),
            round(children_cpu() - before, 1),
        )
    return {"seconds": seconds, "wall_seconds": round(sum(seconds.values()), 1), "peak_rss_mb": peaks,
            "cpu_seconds": cpu, "total_cpu_seconds": round(sum(cpu.values()), 1),
            "tables": {"intruders": intruders, "shuffle": shuffle}}  # fmt: skip


def children_cpu() -> float:
    """CPU seconds of the waited-for child processes so far (user + system)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def same_tables(build_dataset: Path, runs: list[Path]) -> dict[str, bool]:
    """Per table folder the build wrote to its dataset: whether the single commands wrote the same bytes."""
    out = {}
    for folder in sorted(p for p in build_dataset.iterdir() if p.is_dir()):
        theirs = next((r / folder.name for r in runs if (r / folder.name).is_dir()), None)
        ours = {f.relative_to(folder): f.read_bytes() for f in sorted(folder.rglob("*.parquet"))}
        out[folder.name] = theirs is not None and ours == {
            f.relative_to(theirs): f.read_bytes() for f in sorted(theirs.rglob("*.parquet"))
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="2000", help="comma-separated document counts (default 2000)")
    parser.add_argument(
        "--data", help="the real-text folder of the published figures (bench/inputs/README.md)"
    )
    parser.add_argument("--beam-args", default="", help="comma-separated Beam flags passed to every stage")
    parser.add_argument(
        "--no-baseline", action="store_true", help="skip the single-commands baseline (an absolute profile)"
    )
    args = parser.parse_args()
    beam_args = [a for a in args.beam_args.split(",") if a]
    results = []
    check_installed()
    for n in (int(s) for s in args.sizes.split(",")):
        make_corpus(n, args.data)  # not timed
        before = children_cpu()
        result = bench(n, beam_args, args.data)
        result["cpu_seconds"] = round(children_cpu() - before, 1)  # the build's process tree
        if not args.no_baseline:
            baseline = single_commands(n, beam_args, args.data)
            tables = baseline.pop("tables")
            result["single_commands"] = baseline
            result["build_over_single_commands"] = round(result["wall_seconds"] / baseline["wall_seconds"], 3)
            result["build_over_single_commands_cpu"] = round(
                result["cpu_seconds"] / baseline["total_cpu_seconds"], 3
            )
            result["same_tables_as_single_commands"] = same_tables(
                WORK / f"build-{n}" / "dataset", [tables["intruders"], tables["shuffle"]]
            )
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
    for r in results:
        if "single_commands" not in r:
            continue
        b = r["single_commands"]
        print(
            f"\n{r['documents']:,} documents: build {r['wall_seconds']} s, {r['cpu_seconds']} CPU-s (peak "
            f"{r['peak_rss_mb']:,} MB) vs the single commands one after another {b['wall_seconds']} s, "
            f"{b['total_cpu_seconds']} CPU-s ({b['seconds']}; largest peak {max(b['peak_rss_mb'].values()):,} MB): "
            f"ratio {r['build_over_single_commands']} (CPU {r['build_over_single_commands_cpu']}); "
            f"same tables: {r['same_tables_as_single_commands']}"
        )


if __name__ == "__main__":
    main()
