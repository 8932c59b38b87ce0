#!/usr/bin/env python3
"""Probe generation throughput (sentences/s) and the ``probes`` stage's peak memory.

Input: the intruder tables of a finished build (the Quickstart build: ``incoherent build --out out/sample``).
Its real intruder sentences are few (a few dozen), so N intruder documents are **synthesised by repeating the
real incoherent documents of that build** in a fixed cycle, each copy with a fresh id (``bench:<n>``), into
an intruder build under ``bench/work/probes-<N>/``. The cycle is longer than the phenomena's sentence cache
(:data:`corpora.probes.text.SENTENCE_CACHE`), so no copy finds its sentence already tagged: every document
pays its own tagging, as distinct sentences do.

Two measurements, in this order:

1. In this process, on the first ``--library`` documents: the tagger alone (tokenise + tag + tag fixes, the
   baseline) and the eight phenomena (tagging included), as sentences per CPU second (and per wall second),
   and their ratio; lemminflect's tables and the weights are loaded before the timing.
2. ``incoherent probes`` on all N documents in a child process under ``/usr/bin/time -v``: wall and CPU
   seconds, sentences/s, and peak RSS (the largest resident set of the process; Beam's in-process engine runs
   the stage in that process with ``--direct_num_workers 1``); then the same with ``--per-phenomenon 1``, the
   baseline: the same reading, tagging and phenomena with almost nothing written.

    python bench/bench_probes.py out/sample/dataset --documents 100000
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "bench" / "work"
sys.path.insert(0, str(ROOT))


def real_documents(dataset: str) -> list[dict]:
    """The incoherent documents of the build's intruder tables (every split), in a fixed order."""
    import pyarrow.parquet as pq

    rows = []
    for path in sorted(glob.glob(os.path.join(dataset, "intruder-*", "*.parquet"))):
        rows += [r for r in pq.read_table(path).to_pylist() if r["intruder_index"] > 0]
    if not rows:
        raise SystemExit(f"{dataset}: no incoherent documents in intruder-*/*.parquet")
    return sorted(rows, key=lambda r: r["id"])


def synthesise(documents: list[dict], n: int, out: Path) -> Path:
    """``out/intruder-bench/test-*.parquet``: ``n`` copies of the documents in a cycle, fresh ids."""
    from incoherent.pipelines.runtime.tables import write_shard
    from incoherent.schemas import INTRUDER_SCHEMA

    folder = out / "intruder-bench"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    per_shard = 25_000
    for shard, start in enumerate(range(0, n, per_shard)):
        rows = []
        for k in range(start, min(n, start + per_shard)):
            row = dict(documents[k % len(documents)], id=f"bench:{k:07d}", source="bench", split="test")
            rows.append(row)
        total = -(-n // per_shard)
        write_shard(str(folder / f"test-{shard:05d}-of-{total:05d}.parquet"), INTRUDER_SCHEMA, rows)
    return out


def library_throughput(documents: list[dict], n: int) -> dict:
    from incoherent.corpora.probes import verbs, words
    from incoherent.corpora.probes.rows import probe_document
    from incoherent.corpora.probes.text import analyse

    docs = [documents[k % len(documents)] for k in range(n)]
    # load the weights and lemminflect's tables once, outside the timing
    analyse("Warm up the tagger.")
    verbs.lemma("walked"), verbs.inflect("walk", "VBD"), words.plural("city")
    started, cpu = time.perf_counter(), time.process_time()
    for doc in docs:
        analyse(doc["sentences"][doc["intruder_index"]])
    tagging, tagging_cpu = time.perf_counter() - started, time.process_time() - cpu
    started, cpu = time.perf_counter(), time.process_time()
    probes = 0
    for k, doc in enumerate(docs):
        probes += len(list(probe_document(dict(doc, id=f"b{k}", split="test"), PHENOMENA_ALL, 0)))
    phenomena, phenomena_cpu = time.perf_counter() - started, time.process_time() - cpu
    return {
        "sentences": n,
        "tagging_sentences_per_cpu_s": round(n / tagging_cpu, 1),
        "phenomena_sentences_per_cpu_s": round(n / phenomena_cpu, 1),
        "phenomena_vs_tagging_cpu": round(tagging_cpu / phenomena_cpu, 3),
        "tagging_sentences_per_wall_s": round(n / tagging, 1),
        "phenomena_sentences_per_wall_s": round(n / phenomena, 1),
        "probes": probes,
    }


def stage_run(data: Path, out: Path, n: int, extra: list[str]) -> dict:
    if out.exists():
        shutil.rmtree(out)
    command = [
        "/usr/bin/time", "-v", sys.executable, "-m", "incoherent.pipelines.cli", "probes", str(data), "--out", str(out),
        "--quiet", "--runner", "DirectRunner", "--direct_num_workers", "1", *extra,
    ]  # fmt: skip
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(done.stderr[-3000:])
    times = done.stderr

    def field(name: str) -> float:
        return float(re.search(rf"{re.escape(name)}: ([\d.]+)", times).group(1))

    summary = json.loads((out / "run_summary.json").read_text())
    cpu = field("User time (seconds)") + field("System time (seconds)")
    return {
        "documents": n,
        "flags": " ".join(extra),
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "sentences_per_s_wall": round(n / wall, 1),
        "sentences_per_cpu_s": round(n / cpu, 1),
        "peak_rss_mb": round(field("Maximum resident set size (kbytes)") / 1024, 1),
        "probes": {p: c["probes"] for p, c in summary["probes"].items()},
    }


PHENOMENA_ALL: list[str] = []


def main() -> int:
    from incoherent.corpora.probes import PHENOMENA

    PHENOMENA_ALL.extend(PHENOMENA)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", help="a build's dataset folder (intruder-*/ tables)")
    parser.add_argument("--documents", type=int, default=100_000, help="synthesised intruder documents")
    parser.add_argument("--library", type=int, default=5_000, help="documents for the in-process measurement")
    parser.add_argument("--skip-stage", action="store_true", help="only the in-process measurement")
    args = parser.parse_args()
    documents = real_documents(args.dataset)
    work = WORK / f"probes-{args.documents}"
    report = {
        "real_incoherent_documents": len(documents),
        "distinct_intruder_sentences": len({d["sentences"][d["intruder_index"]] for d in documents}),
        "load_before": os.getloadavg(),
        "library": library_throughput(documents, min(args.library, args.documents)),
    }
    print(json.dumps(report, indent=2), flush=True)
    if not args.skip_stage:
        data = synthesise(documents, args.documents, work / "data")
        report["stage"] = stage_run(data, work / "out", args.documents, [])
        print(json.dumps(report["stage"], indent=2), flush=True)
        # baseline: the same reading, tagging and eight phenomena, but one probe kept per phenomenon
        report["stage_one_kept"] = stage_run(data, work / "out", args.documents, ["--per-phenomenon", "1"])
        report["load_after"] = os.getloadavg()
        print(json.dumps({k: report[k] for k in ("stage_one_kept", "load_after")}, indent=2))
    (WORK / f"probes-{args.documents}.json").write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
