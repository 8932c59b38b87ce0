#!/usr/bin/env python3
"""Retrieval benchmark: `incoherent index` + `incoherent neighbors` against a per-query DrQA implementation.

    python bench/bench_retrieval.py                       # 2,000 documents, 200 parity queries: a quick check
    python bench/bench_retrieval.py --sizes 25000,50000,100000 --queries 1000 --data DIR  # published (~15 min)
    python bench/bench_retrieval.py --sizes 25000 --baseline-queries 0 --data DIR   # baseline on every query

For each size: the first N documents of the collection of ``bench/inputs/make_retrieval_corpus.py`` (from the
bundled samples, or with ``--data DIR`` from the real-text folder the published figures used; built if missing)
are ingested with ``incoherent ingest text`` (the one installed beside this Python), then ``incoherent index``
and ``incoherent neighbors --k 10`` run as subprocesses with the default runner (Beam's engine in process, one
worker, the scoring kernel on every core). On the largest size they also run with ``--threads 1`` (the scoring
kernel on one core: the same cores as the baseline) and with
``--direct_running_mode=multi_processing --direct_num_workers=2``. Wall time and peak RSS of the whole process
tree (sampled every 0.1 s) are recorded.

On the largest size, in the same run:
- the per-query baseline (DrQA's ``build_tfidf.py`` + ``TfidfDocRanker.closest_docs``, one query at a time
  against the hash x docs matrix, in this one Python process: one core) builds its matrix (timed) and answers
  queries, timed: with ``--baseline-queries 0`` all N of them (its total is then measured), otherwise a random
  sample, and its total = build + N x the sample's mean query time is an **extrapolation** (flagged as such in
  the output and the JSON);
- parity: for ``--queries`` sampled documents, its top-10 set (self and identical texts excluded, score > 0)
  against the rows of our neighbours table; a mismatch is "at a tie" when the two lists differ only among
  documents whose score equals the 10th score (relative 1e-5).
Results: a markdown table on stdout and ``bench/work/retrieval_results.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import regex
import scipy.sparse as sp
from bench_build import make_corpus
from sklearn.utils import murmurhash3_32

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "bench" / "work"
CLI = [str(Path(sys.executable).with_name("incoherent"))]  # installed beside the Python running this script
BEAM_2 = ["--direct_running_mode=multi_processing", "--direct_num_workers=2"]
HASH = 2**24
K = 10

# ------------------------------------------------------------------------------------------- per-query DrQA

STOP = {w for w in (ROOT / "retrieval/data/drqa_stopwords.txt").read_text("utf-8").split("\n") if w}
TOKEN = regex.compile(
    r"([\p{L}\p{N}\p{M}]+)|([^\p{Z}\p{C}])", flags=regex.IGNORECASE + regex.UNICODE + regex.MULTILINE
)


def drqa_ngrams(text: str) -> list[str]:
    """DrQA: normalize -> SimpleTokenizer -> ngrams(n=2, uncased, filter_fn=filter_ngram)."""
    import unicodedata

    words = [m.group().lower() for m in TOKEN.finditer(unicodedata.normalize("NFD", text))]

    def filtered(w):
        w = unicodedata.normalize("NFD", w)
        return bool(regex.match(r"^\p{P}+$", w)) or w.lower() in STOP

    out = []
    for s in range(len(words)):
        for e in range(s, min(s + 2, len(words))):
            gram = words[s : e + 1]
            if not any(filtered(w) for w in gram):
                out.append(" ".join(gram))
    return out


class PerQueryDrQA:
    """DrQA's build_tfidf (count matrix hash x docs, log1p tf, clipped BM25-style idf) and closest_docs."""

    def __init__(self, texts: list[str]):
        rows, cols, data = [], [], []
        for j, text in enumerate(texts):
            counts = Counter(murmurhash3_32(g, positive=True) % HASH for g in drqa_ngrams(text))
            rows.extend(counts.keys())
            cols.extend([j] * len(counts))
            data.extend(counts.values())
        cnts = sp.csr_matrix((np.array(data, np.float64), (rows, cols)), shape=(HASH, len(texts)))
        cnts.sum_duplicates()
        self.num_docs = len(texts)
        binary = (cnts > 0).astype(int)
        self.doc_freqs = np.array(binary.sum(1)).squeeze()
        idfs = np.log((self.num_docs - self.doc_freqs + 0.5) / (self.doc_freqs + 0.5))
        idfs[idfs < 0] = 0
        self.doc_mat = sp.diags(idfs, 0).dot(cnts.log1p()).tocsr()

    def closest(self, text: str, exclude: set[int]) -> list[tuple[int, float]]:
        wids = [murmurhash3_32(g, positive=True) % HASH for g in drqa_ngrams(text)]
        wids_unique, wids_counts = np.unique(wids, return_counts=True)
        tfs = np.log1p(wids_counts)
        ns = self.doc_freqs[wids_unique] if len(wids_unique) else np.zeros(0)
        idfs = np.log((self.num_docs - ns + 0.5) / (ns + 0.5))
        idfs[idfs < 0] = 0
        spvec = sp.csr_matrix((tfs * idfs, wids_unique, [0, len(wids_unique)]), shape=(1, HASH))
        res = spvec * self.doc_mat
        docs, scores = res.indices, res.data
        keep = (scores > 0) & ~np.isin(docs, list(exclude))
        docs, scores = docs[keep], scores[keep]
        if len(scores) > K:
            top = np.argpartition(-scores, K)[: K + 20]
        else:
            top = np.arange(len(scores))
        order = top[np.lexsort((docs[top], -scores[top]))]
        return [(int(docs[i]), float(scores[i])) for i in order]


# ------------------------------------------------------------------------------------------- running


def run_measured(cmd: list[str]) -> tuple[float, float, float]:
    """Run ``cmd``; return (wall seconds, peak RSS in GiB of the process and all its children, CPU seconds):
    ``bench_neighbors.measured_child``, the one process-tree sampler of the retrieval benches (CPU seconds of the
    waited-for tree from ``getrusage``: CPU / wall says how many cores the command kept busy on average)."""
    from bench_neighbors import measured_child  # bench/ is the script's folder, first on sys.path

    measured = measured_child(cmd, interval=0.1)
    return measured["wall_s"], measured["peak_rss_mb"] / 1024, measured["cpu_s"]


def read_documents(docs_dir: Path) -> tuple[list[str], list[str]]:
    ids, texts = [], []
    for path in sorted(docs_dir.glob("documents-*/*.parquet")):
        table = pq.read_table(path, columns=["id", "sentences"]).to_pylist()
        for row in table:
            ids.append(row["id"])
            texts.append(" ".join(row["sentences"]))
    order = np.argsort(ids)
    return [ids[i] for i in order], [texts[i] for i in order]


def read_neighbors(out_dir: Path) -> dict[str, list[tuple[str, float]]]:
    result = {}
    for path in sorted(out_dir.glob("neighbors/*.parquet")):
        for row in pq.read_table(path).to_pylist():
            result[row["id"]] = [(n["id"], n["score"]) for n in row["neighbors"]]
    return result


def measure_retrieval(n: int, docs: Path, tag: str, beam_args: list[str], nbr_args: list[str]) -> dict:
    """Time ``incoherent index`` and ``incoherent neighbors`` (subprocesses) on the documents of ``docs``."""
    index, nbrs = WORK / f"index-{n}{tag}", WORK / f"neighbors-{n}{tag}"
    t_index, rss_index, cpu_index = run_measured(
        CLI + ["index", str(docs), "--out", str(index), "--overwrite"] + beam_args
    )
    t_nbrs, rss_nbrs, cpu_nbrs = run_measured(
        CLI
        + ["neighbors", str(docs), "--index", str(index), "--k", str(K), "--out", str(nbrs), "--overwrite"]
        + nbr_args
        + beam_args
    )
    summary = json.loads((nbrs / "run_summary.json").read_text())
    return {
        "docs": n,
        "neighbors_dir": str(nbrs),
        "index_s": round(t_index, 1),
        "index_cpu_s": round(cpu_index, 1),
        "index_peak_rss_gib": round(rss_index, 2),
        "neighbors_s": round(t_nbrs, 1),
        "neighbors_cpu_s": round(cpu_nbrs, 1),
        "neighbors_peak_rss_gib": round(rss_nbrs, 2),
        "index_plus_neighbors_s": round(t_index + t_nbrs, 1),
        "threads_per_worker": summary["params"].get("threads_per_worker"),
        "neighbors_counters": summary["counters"].get("neighbors", {}),
        "index_size_mb": round(sum(f.stat().st_size for f in index.iterdir()) / 2**20, 1),
    }


def same_files(a: Path, b: Path) -> bool:
    """Whether two neighbours outputs hold byte-identical Parquet files."""
    files = sorted(p.relative_to(a) for p in a.glob("neighbors/*.parquet"))
    return (
        bool(files)
        and files == sorted(p.relative_to(b) for p in b.glob("neighbors/*.parquet"))
        and all((a / f).read_bytes() == (b / f).read_bytes() for f in files)
    )


MODES = [  # (label, output suffix, Beam flags, neighbours flags); the last two on the largest size only
    ("in process", "", [], []),
    ("in process, --threads 1", "-t1", [], ["--threads", "1"]),
    ("2 workers", "-w2", BEAM_2, []),
]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="2000", help="comma-separated document counts (default 2000)")
    parser.add_argument("--queries", type=int, default=200, help="parity sample (largest size)")
    parser.add_argument(
        "--data", help="the real-text folder of the published figures (bench/inputs/README.md)"
    )
    parser.add_argument(
        "--baseline-queries",
        type=int,
        default=300,
        help="queries timed for the baseline (0: all of them, so that its total is measured, not extrapolated)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--reuse-docs", action="store_true", help="skip ingest where bench/work/docs-N exists"
    )
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    WORK.mkdir(parents=True, exist_ok=True)
    corpus = make_corpus(max(sizes), args.data)
    lines = corpus.read_text("utf-8").splitlines()
    if len(lines) < max(sizes):
        sys.exit(f"{corpus}: {len(lines)} documents, need {max(sizes)} (delete it to rebuild)")

    scaling = []
    for n in sizes:
        subset = WORK / f"retrieval-corpus-{n}.jsonl"
        subset.write_text("\n".join(lines[:n]) + "\n", "utf-8")
        docs = WORK / f"docs-{n}"
        t_ingest = 0.0
        if not (args.reuse_docs and (docs / "run_summary.json").exists()):
            t_ingest, _, _ = run_measured(
                CLI + ["ingest", "text", str(subset), "--source", "bench", "--out", str(docs), "--overwrite"]
            )
        for mode, tag, beam_args, nbr_args in MODES if n == sizes[-1] else MODES[:1]:
            row = measure_retrieval(n, docs, tag, beam_args, nbr_args)
            row.update(mode=mode, ingest_s=round(t_ingest, 1))
            scaling.append(row)
            print(json.dumps(row), flush=True)

    n = sizes[-1]
    largest = [r for r in scaling if r["docs"] == n]
    default_dir = Path(largest[0]["neighbors_dir"])
    for r in largest[1:]:
        r["same_files_as_default"] = same_files(default_dir, Path(r["neighbors_dir"]))
    ids, texts = read_documents(WORK / f"docs-{n}")
    ours = read_neighbors(default_dir)
    started, cpu_started = time.time(), time.process_time()
    baseline = PerQueryDrQA(texts)
    t_build, cpu_build = time.time() - started, time.process_time() - cpu_started
    rng = random.Random(args.seed)
    by_text: dict[str, list[int]] = {}
    for i, text in enumerate(texts):
        by_text.setdefault(text, []).append(i)
    measured = args.baseline_queries <= 0 or args.baseline_queries >= n
    timed = list(range(n)) if measured else rng.sample(range(n), args.baseline_queries)
    answers = {}
    started, cpu_started = time.time(), time.process_time()
    for q in timed:
        answers[q] = baseline.closest(texts[q], set(by_text[texts[q]]))
    t_queries, cpu_queries = time.time() - started, time.process_time() - cpu_started
    t_query = t_queries / len(timed)

    sample = rng.sample(range(n), min(args.queries, n))
    equal = at_ties = 0
    mismatches = []
    for q in sample:
        ref = (answers[q] if q in answers else baseline.closest(texts[q], set(by_text[texts[q]])))[:K]
        got = ours[ids[q]]
        ref_ids = {ids[d] for d, _ in ref}
        got_ids = {d for d, _ in got}
        if ref_ids == got_ids:
            equal += 1
            continue
        tenth = ref[-1][1] if ref else 0.0
        differing = [s for d, s in ref if ids[d] not in got_ids] + [s for d, s in got if d not in ref_ids]
        if differing and all(abs(s - tenth) <= 1e-5 * max(1.0, abs(tenth)) for s in differing):
            at_ties += 1
        else:
            mismatches.append({"id": ids[q], "ours": got, "drqa": [(ids[d], s) for d, s in ref]})
    baseline_total = t_build + (t_queries if measured else n * t_query)
    baseline_cpu = cpu_build + (cpu_queries if measured else n * cpu_queries / len(timed))
    results = {
        "docs": n,
        "cpu_count": os.cpu_count(),
        "parity": {
            "queries": len(sample),
            "equal_top10_sets": equal,
            "differ_only_at_ties": at_ties,
            "other_mismatches": len(mismatches),
            "equal_fraction": equal / len(sample),
            "equal_or_tie_fraction": (equal + at_ties) / len(sample),
            "examples": mismatches[:3],
        },
        "baseline": {
            "cores": 1,
            "build_s": round(t_build, 1),
            "mean_query_ms": round(1000 * t_query, 2),
            "queries_timed": len(timed),
            "total_s": round(baseline_total, 1),
            "cpu_s": round(baseline_cpu, 1),
            "total_is": "measured"
            if measured
            else f"extrapolated: build + {n} x the mean of {len(timed)} queries",
        },
        "ours_index_plus_neighbors_s": {r["mode"]: r["index_plus_neighbors_s"] for r in largest},
        "ours_cpu_s": {r["mode"]: round(r["index_cpu_s"] + r["neighbors_cpu_s"], 1) for r in largest},
        "speedup": {r["mode"]: round(baseline_total / r["index_plus_neighbors_s"], 2) for r in largest},
        # CPU seconds are less disturbed by other jobs on a shared machine than wall time
        "cpu_ratio": {
            r["mode"]: round(baseline_cpu / (r["index_cpu_s"] + r["neighbors_cpu_s"]), 2) for r in largest
        },
        "scaling": scaling,
    }
    (WORK / "retrieval_results.json").write_text(json.dumps(results, indent=2) + "\n")
    print()
    print(
        "| documents | runner | index (s) | index CPU (s) | index peak RSS (GiB) | neighbours top-10 (s) "
        "| neighbours CPU (s) | neighbours peak RSS (GiB) | index files (MB) |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in scaling:
        print(
            f"| {r['docs']:,} | {r['mode']} | {r['index_s']} | {r['index_cpu_s']} | {r['index_peak_rss_gib']} "
            f"| {r['neighbors_s']} | {r['neighbors_cpu_s']} | {r['neighbors_peak_rss_gib']} | {r['index_size_mb']} |"
        )
    p = results["parity"]
    print()
    print(
        f"parity ({n:,} docs, {p['queries']} queries): {p['equal_top10_sets']} equal top-10 sets "
        f"({100 * p['equal_fraction']:.1f}%), {p['differ_only_at_ties']} differ only at ties, "
        f"{p['other_mismatches']} other"
    )
    b = results["baseline"]
    if measured:
        print(f"per-query DrQA, one core: build {b['build_s']} s + all {n:,} queries {t_queries:.1f} s "
              f"({b['mean_query_ms']} ms each) = {b['total_s']} s, measured; {b['cpu_s']} CPU-s")  # fmt: skip
    else:
        print(f"per-query DrQA, one core: build {b['build_s']} s (measured) + {n:,} x {b['mean_query_ms']} ms "
              f"(mean of {len(timed)} timed queries) = {b['total_s']} s, EXTRAPOLATED; {b['cpu_s']} CPU-s")  # fmt: skip
    for r in largest:
        same = (
            ""
            if "same_files_as_default" not in r
            else f"; files identical to the default run's: {r['same_files_as_default']}"
        )
        print(
            f"ours, {r['mode']} (index + neighbours): {r['index_plus_neighbors_s']} s, "
            f"{results['ours_cpu_s'][r['mode']]} CPU-s; speed-up {results['speedup'][r['mode']]}x "
            f"(CPU-s ratio {results['cpu_ratio'][r['mode']]}x){same}"
        )


if __name__ == "__main__":
    main()
