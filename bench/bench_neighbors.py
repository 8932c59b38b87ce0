#!/usr/bin/env python3
"""Exact top-10 neighbours against sparse_dot_topn 1.2.0, in one run: CPU seconds, ratios, the sets.

    nice -n 10 python bench/bench_neighbors.py --sizes 25000,50000,100000     # the published figures
    python bench/bench_neighbors.py --sizes 2000                                # a quick check

For each size N: the first N documents of ``bench/inputs/make_retrieval_corpus.py`` (real text of ``--data``,
default ``../shared/data`` beside the repository; ``--fill`` past its ~116,000 windows) are ingested
(``incoherent ingest text``) and indexed (``incoherent index``), then on the same ``tfidf.npz``, each in a
process of its own so that ``getrusage`` counts it alone (user + system CPU seconds, all threads):

- ``incoherent neighbors --k 10`` (the whole command: Beam in process, the grid of cells, writing Parquet);
- the kernel alone: ``prepare`` + ``all_topk_pairs`` (each pair once, tiles of ``tile_rows_for_cache()``),
  and today's ``all_topk`` (every query against every document) on the same prepared matrix: their outputs
  must be byte-identical;
- sparse_dot_topn's ``sp_matmul_topn(A, A.T, top_n=10 + the largest number of copies of one text)`` (its
  defaults: one thread), the top-10 sets after dropping the document itself, its exact-duplicate texts and
  scores <= 0; a set that differs only among
  documents scoring the 10th score (relative 1e-5: its float32 sums run in another order) is "at a tie".

Also: the neighbours table of the command against the kernel's rows (the same ids and float32 scores), the
multiply-adds (sum of df(df-1)/2 over the posting lists: each pair once) per CPU second beside this machine's
scatter-add rate into accumulators of the tile's and of N floats, and the bytes a grid worker holds for 1, 4
and 16 tiles (its tile's posting lists and offsets, its query rows, its top-k and accumulator). Results: one
JSON line per size on stdout and ``bench/work/neighbors_results.json``.

One large size (``bench/README_retrieval.md``, 2026-11-29: ``--build 1000000 --tiles 16,4,3 --diagonal``):
``--build N`` makes the corpus, times ``ingest text`` and ``index`` (CPU and wall seconds, the process tree's
peak RSS, the load average), counts the index's multiply-adds (and those of the collection grown to 6M), then
runs a cell worker for each of ``--tiles`` in a process of its own (``--memory INDEX`` does that alone): CPU
seconds, multiply-adds, peak RSS above the process's. Results: ``bench/work/neighbors_scale-N.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "bench" / "work"
CLI = [str(Path(sys.executable).with_name("incoherent"))]
K = 10


def cpu_of_child(cmd: list[str]) -> tuple[float, float, str]:
    """``(CPU s, wall s, stdout)`` of a subprocess (and the processes it waited for)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        sys.exit(f"{' '.join(cmd)}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, proc.stdout


def measured_child(cmd: list[str], interval: float = 0.5) -> dict:
    """Run ``cmd`` (and wait): its CPU seconds (``getrusage`` of the waited-for tree), wall seconds, the peak
    resident memory of the process and all its children (``/proc``, sampled every ``interval`` s) and the
    1-minute load average at the start, the end and its largest sample."""
    import psutil

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    load = [os.getloadavg()[0]]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    peak = 0
    done = threading.Event()

    def sample():
        nonlocal peak
        parent = psutil.Process(proc.pid)
        while not done.wait(interval):
            try:
                procs = [parent, *parent.children(recursive=True)]
                peak = max(peak, sum(p.memory_info().rss for p in procs if p.is_running()))
            except psutil.Error:
                pass
            load.append(os.getloadavg()[0])

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    output, _ = proc.communicate()
    done.set()
    thread.join()
    wall = time.perf_counter() - t0
    if proc.returncode:
        sys.exit(f"{' '.join(cmd)}: exit {proc.returncode}\n{output[-3000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    load.append(os.getloadavg()[0])
    return {
        "cpu_s": round((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), 1),
        "wall_s": round(wall, 1),
        "peak_rss_mb": round(peak / 2**20, 1),
        "load_start_end_max": [load[0], load[-1], max(load)],
    }


def self_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def kernel_main(index_dir: str, out: str) -> None:
    """In a process of its own: prepare + all_topk_pairs, then all_topk; CPU of each; the rows to ``out``."""
    from incoherent.retrieval.index import TfidfIndex
    from incoherent.retrieval.topk import all_topk, all_topk_pairs, prepare, tile_rows_for_cache

    index = TfidfIndex.load(index_dir)
    matrix, keys = index.matrix, index.text_keys
    all_topk_pairs(prepare(matrix[:300], keys[:300]), K)  # compiled (or loaded from numba's cache) first
    list(all_topk(prepare(matrix[:300], keys[:300]), K))
    t0 = self_cpu()
    scoring = prepare(matrix, keys)
    t_prepare = self_cpu() - t0
    t0 = self_cpu()
    cols, scores = all_topk_pairs(scoring, K)
    t_pairs = self_cpu() - t0
    t0 = self_cpu()
    old = list(all_topk(scoring, K))
    t_old = self_cpu() - t0
    differ = 0
    for row, c, s in old:
        n = len(c)
        same = np.array_equal(cols[row, :n], c) and scores[row, :n].tobytes() == s.tobytes()
        differ += not (same and (n == K or cols[row, n] == -1))
    df = np.diff(scoring.t_indptr).astype(np.float64)
    np.savez(out, cols=cols, scores=scores, group=scoring.group)
    print(
        json.dumps(
            {
                "prepare_cpu_s": round(t_prepare, 2),
                "pairs_cpu_s": round(t_pairs, 2),
                "all_topk_cpu_s": round(t_old, 2),
                "rows_differing_from_all_topk": differ,
                "nnz": int(scoring.t_indptr[-1]),
                "shared_features": len(df),
                "madds_pairs_once": float((df * (df - 1) / 2).sum()),
                "madds_all_pairs": float((df * df).sum()),
                "tile_rows": tile_rows_for_cache(),
            }
        )
    )


def peer_main(index_dir: str, out: str) -> None:
    """In a process of its own: sparse_dot_topn's top 11 of A A^T (CPU measured around the call only)."""
    import scipy.sparse as sp
    from sparse_dot_topn import sp_matmul_topn

    from incoherent.retrieval.index import TfidfIndex

    matrix = sp.load_npz(Path(index_dir) / "tfidf.npz").tocsr().astype(np.float32)
    _, copies = np.unique(TfidfIndex.load(index_dir).text_keys, return_counts=True)
    top_n = K + int(copies.max(initial=1))  # itself and its exact duplicates may fill the first places
    transposed = matrix.T.tocsr()
    t0 = self_cpu()
    result = sp_matmul_topn(matrix, transposed, top_n=top_n)
    t = self_cpu() - t0
    result = result.tocsr()
    np.savez(out, indptr=result.indptr, indices=result.indices, data=result.data)
    print(json.dumps({"peer_cpu_s": round(t, 2), "peer_top_n": top_n}))


def compare_sets(ours: np.lib.npyio.NpzFile, peer: np.lib.npyio.NpzFile) -> dict:
    """Top-10 sets: identical, different only at a tie of the 10th score, or different."""
    cols, scores, group = ours["cols"], ours["scores"], ours["group"]
    indptr, indices, data = peer["indptr"], peer["indices"], peer["data"]
    same = at_tie = differ = 0
    for row in range(len(cols)):
        lo, hi = indptr[row], indptr[row + 1]
        cand = [
            (-float(s), int(c))
            for c, s in zip(indices[lo:hi], data[lo:hi], strict=True)
            if c != row and s > 0 and (group[row] < 0 or group[c] != group[row])
        ]
        theirs = {c for _, c in sorted(cand)[:K]}
        mine = {int(c) for c in cols[row] if c >= 0}
        if mine == theirs:
            same += 1
            continue
        if not mine or not theirs:
            differ += 1
            continue
        tenth = float(scores[row][cols[row] >= 0][-1])
        near = {
            int(c)
            for c, s in zip(cols[row], scores[row], strict=True)
            if c >= 0 and abs(s - tenth) <= 1e-5 * tenth
        }
        near |= {c for s, c in cand if abs(-s - tenth) <= 1e-5 * tenth}
        if (mine ^ theirs) <= near and len(theirs) == len(mine):
            at_tie += 1
        else:
            differ += 1
    n = len(cols)
    return {
        "sets_identical": same / n,
        "sets_identical_up_to_ties": (same + at_tie) / n,
        "sets_differ": differ,
    }


def scatter_rate(acc_size: int, adds: int = 20_000_000, seed: int = 0) -> float:
    """Scatter-adds ``acc[i] += w * v`` per second into a float32 accumulator of ``acc_size``, at random rows."""
    from numba import njit

    @njit(cache=False)
    def scatter(acc, idx, val, w):
        for i in range(len(idx)):
            acc[idx[i]] += w * val[i]

    rng = np.random.default_rng(seed)
    idx = rng.integers(0, acc_size, adds, dtype=np.uint32)
    val = rng.random(adds, dtype=np.float32)
    acc = np.zeros(acc_size, np.float32)
    scatter(acc, idx[:1000], val[:1000], np.float32(0.5))
    t0 = time.process_time()
    scatter(acc, idx, val, np.float32(0.5))
    return adds / (time.process_time() - t0)


def worker_bytes(n: int, nnz: int, shared_features: int, tiles: int, k: int = K) -> int:
    """Bytes a grid worker holds for one cell with ``tiles`` tiles: its tile's posting lists (8 a non-zero)
    and their offsets (2 x 8 a feature), the query rows of a tile (8 a non-zero), top-k keys of two tiles of
    rows (8 x k each) and the accumulator and thresholds (8 a row)."""
    rows = -(-n // tiles)
    return 8 * nnz // tiles + 16 * shared_features + 8 * nnz // tiles + 2 * rows * 8 * k + 8 * rows


def _vm(field: str) -> int:
    """``VmRSS`` / ``VmHWM`` of this process in bytes (``/proc/self/status``)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def cell_main(
    index_dir: str,
    tiles: int,
    diagonal: bool = False,
    tile_rows: int | None = None,
    against: int | None = None,
) -> None:
    """In a process of its own: a cell worker (``TopKCells``: setup, then one cell) on the cell of the first
    tile's queries against the last tile (the diagonal cell with one tile; the first tile against itself with
    ``diagonal``; against tile ``against`` when given; tiles of ``tile_rows`` rows instead of ``tiles`` tiles
    when given): its CPU seconds (setup and the cell: reading, posting lists, scoring), its peak resident
    memory above what the process held before the cell (``VmHWM`` reset through ``/proc/self/clear_refs``;
    ``base_rss_mb``: that hold, Python, numpy, numba's kernels and Beam imported), the peak of numpy's
    allocations (``tracemalloc``), the non-zeros of its two tiles and its multiply-adds."""
    import tracemalloc

    from incoherent.pipelines.neighbors.transforms import TopKCells
    from incoherent.retrieval.index import TfidfIndex
    from incoherent.retrieval.topk import grid

    meta, params = TfidfIndex.load_meta(index_dir)
    n = int(meta["num_docs"])
    tile_rows = tile_rows or -(-n // tiles)
    tiles = -(-n // tile_rows)
    cells = grid(n, tile_rows)
    if against is not None and not 0 <= against < tiles:
        sys.exit(f"--against {against}: the index has tiles 0 to {tiles - 1} of {tile_rows} rows")
    if against is not None and not diagonal:
        queries, tile = (0, tile_rows), (against * tile_rows, min(n, (against + 1) * tile_rows))
    else:
        queries, tile = cells[0] if tiles == 1 or diagonal else ((0, tile_rows), cells[-1][1])
    warm = TopKCells(index_dir, params, K, 1, 1)  # numba compiled (or loaded from its cache) on a small cell
    warm.setup()
    half = min(n, 100) // 2  # the first 100 rows (or fewer) as two tiles
    list(warm.process([(0, half), (half, 2 * half)], meta["corpus_fingerprint"]))
    warm.teardown()
    worker = TopKCells(index_dir, params, K, 1, 1)
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # resets VmHWM to the current resident size
    base = _vm("VmRSS")
    tracemalloc.start()
    t0 = self_cpu()
    worker.setup()
    out = list(worker.process([queries, tile], meta["corpus_fingerprint"]))
    cpu = self_cpu() - t0
    _, numpy_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    peak = _vm("VmHWM") - base
    rows = worker._ranges.matrix
    ptr = rows.indptr(0, n)
    nnz = int(ptr[queries[1]] - ptr[queries[0]]) + (
        0 if queries == tile else int(ptr[tile[1]] - ptr[tile[0]])
    )
    num_features = rows.num_features

    def df(a: int, b: int) -> np.ndarray:  # each feature's count of rows a:b, a chunk of rows at a time
        counts = np.zeros(num_features, np.float64)
        for lo in range(a, b, 50_000):
            _, indices, _ = rows.rows(lo, min(b, lo + 50_000), data=False)
            counts += np.bincount(indices, minlength=num_features)
        return counts

    df_tile = df(*tile)  # after the measurement: the multiply-adds of the cell, each pair once
    madds = (df_tile * (df_tile - 1) / 2).sum() if queries == tile else (df(*queries) * df_tile).sum()
    del df_tile
    worker.teardown()
    print(
        json.dumps(
            {
                "tiles": tiles,
                "rows_per_tile": tile_rows,
                "madds": float(madds),
                "madds_per_cpu_s": round(float(madds) / max(cpu, 1e-9) / 1e9, 3),
                "cell": [list(queries), list(tile)],
                "cell_nnz": nnz,
                "index_nnz": int(ptr[-1]),
                "peak_rss_mb": round(peak / 2**20, 1),
                "base_rss_mb": round(base / 2**20, 1),
                "numpy_peak_mb": round(numpy_peak / 2**20, 1),
                "rss_bytes_per_cell_nnz": round(peak / max(1, nnz), 2),
                "keys_out": len(out),
                "cpu_s": round(cpu, 2),
            }
        )
    )


def memory_main(
    index_dir: str, tiles: list[int], diagonal: bool = False, extra: tuple[str, ...] = ()
) -> list[dict]:
    """The memory and CPU seconds of a cell worker for each number of tiles (default 1, 4 and 16), each cell in
    a process of its own; with ``diagonal`` also the first tile's diagonal cell for each number above 1;
    ``extra``: ``--cell``'s ``--tile-rows`` / ``--against``."""
    rows = []
    for count in tiles:
        for diag in (False, True) if diagonal and count != 1 else (False,):
            cmd = [sys.executable, __file__, "--cell", index_dir, str(count), *extra] + (
                ["--diagonal"] if diag else []
            )
            _, wall, out = cpu_of_child(cmd)
            rows.append(json.loads(out.strip().splitlines()[-1]) | {"wall_s": round(wall, 1)})
            print(json.dumps(rows[-1]), flush=True)
    (WORK / "neighbors_memory.json").write_text(json.dumps(rows, indent=1) + "\n")
    return rows


def index_madds(index_dir: str, project_to: tuple[int, ...] = ()) -> dict:
    """The whole index's non-zeros (all of them; ``prepare`` keeps those of shared features), its shared
    features and its multiply-adds, each pair once (sum of df (df - 1) / 2 over the features), read from
    ``tfidf.npz`` a chunk of rows at a time (the indices only). For each size of ``project_to``: the
    multiply-adds of the same collection grown to that size by ``--fill`` documents (ids ``mix:<n>``), whose
    document frequencies grow in proportion to their number (sentences drawn at random from a fixed pool)
    while those of the real windows stay: the work of the corpus ``make_retrieval_corpus.py`` would make."""
    from incoherent.retrieval.files import MatrixRows, NpzRanges

    path = Path(index_dir) / "tfidf.npz"
    ids = json.loads((Path(index_dir) / "ids.json").read_text("utf-8"))
    fill = np.array([doc_id.split(":", 2)[1:2] == ["mix"] for doc_id in ids])
    with open(path, "rb") as f:
        shape = tuple(int(x) for x in NpzRanges(f, str(path)).scalar("shape"))
        rows = MatrixRows(f, str(path), shape)
        df_real, df_fill = np.zeros(shape[1], np.int64), np.zeros(shape[1], np.int64)
        for lo in range(0, shape[0], 100_000):
            hi = min(shape[0], lo + 100_000)
            indptr, indices, _ = rows.rows(lo, hi, data=False)
            of_fill = np.repeat(fill[lo:hi], np.diff(indptr))
            df_real += np.bincount(indices[~of_fill], minlength=shape[1])
            df_fill += np.bincount(indices[of_fill], minlength=shape[1])
    counts = df_real + df_fill
    df = counts[counts > 1].astype(np.float64)
    out = {
        "index_nnz": int(counts.sum()),
        "shared_features": len(df),
        "madds_pairs_once": float((df * (df - 1) / 2).sum()),
        "fill_documents": int(fill.sum()),
        "nnz_per_document_real_fill": [
            round(float(df_real.sum() / max(1, (~fill).sum())), 1),
            round(float(df_fill.sum() / max(1, fill.sum())), 1),
        ],
    }
    for n in project_to:
        scale = (n - (~fill).sum()) / max(1, fill.sum())
        grown = df_real + scale * df_fill.astype(np.float64)
        out[f"madds_pairs_once_projected_{n}"] = float((grown * np.maximum(grown - 1, 0) / 2).sum())
    return out


def build_main(n: int, data: str, tiles: list[int], diagonal: bool) -> None:
    """One large size: the corpus, ``ingest text`` and ``index`` (default parameters) measured (CPU and wall
    seconds, the peak RSS of the process tree, the load average), then the cell workers of :func:`memory_main`
    on that index. Results to ``bench/work/neighbors_scale-N.json``."""
    corpus = WORK / f"neighbors-corpus-{n}.jsonl"
    if not corpus.exists():
        make = [sys.executable, str(ROOT / "bench" / "inputs" / "make_retrieval_corpus.py"), str(corpus)]
        subprocess.run([*make, str(n), "0", "--fill", "--data", data], check=True)
    docs, index = WORK / f"nb-docs-{n}", WORK / f"nb-index-{n}"
    result: dict = {"n": n}
    for stage, cmd in (
        ("ingest", ["ingest", "text", str(corpus), "--source", "bench", "--out", str(docs), "--overwrite"]),
        ("index", ["index", str(docs), "--out", str(index), "--overwrite"]),
    ):
        result[stage] = measured_child(CLI + cmd)
        print(json.dumps({stage: result[stage]}), flush=True)
    meta = json.loads((index / "index.json").read_text("utf-8"))
    result["index_files_mb"] = round(sum(f.stat().st_size for f in index.iterdir() if f.is_file()) / 2**20, 1)
    result["num_docs"] = meta.get("num_docs")
    result.update(index_madds(str(index), (1_000_000, 6_000_000)))
    (WORK / f"neighbors_scale-{n}.json").write_text(json.dumps(result, indent=1) + "\n")
    result["cells"] = memory_main(str(index), tiles, diagonal)
    (WORK / f"neighbors_scale-{n}.json").write_text(json.dumps(result, indent=1) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="2000", help="comma-separated document counts (default 2000)")
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data"), help="real-text folder")
    parser.add_argument("--kernel", nargs=2, metavar=("INDEX", "OUT"), help=argparse.SUPPRESS)
    parser.add_argument("--peer", nargs=2, metavar=("INDEX", "OUT"), help=argparse.SUPPRESS)
    parser.add_argument("--cell", nargs=2, metavar=("INDEX", "TILES"), help=argparse.SUPPRESS)
    parser.add_argument(
        "--memory",
        metavar="INDEX",
        help="only the memory of a cell worker on this index for each number of --tiles (peak RSS above the "
        "process's before the cell, numpy's peak by tracemalloc, CPU seconds), each in a process of its own",
    )
    parser.add_argument(
        "--build",
        type=int,
        metavar="N",
        help="one large size: build the corpus of N documents, ingest and index it (CPU, wall, peak RSS of "
        "each), then --memory on that index",
    )
    parser.add_argument(
        "--tiles",
        default="1,4,16",
        help="with --memory or --build: comma-separated numbers of tiles (default 1,4,16)",
    )
    parser.add_argument(
        "--diagonal",
        action="store_true",
        help="with --memory or --build: also each tiling's first diagonal cell (with --cell: that cell)",
    )
    parser.add_argument(
        "--tile-rows",
        type=int,
        metavar="R",
        help="with --memory or --cell: tiles of R rows (one tiling; --tiles is not used)",
    )
    parser.add_argument(
        "--against",
        type=int,
        metavar="J",
        help="with --memory or --cell: the first tile's queries against tile J (default: the last tile)",
    )
    args = parser.parse_args()
    if args.tile_rows is not None and args.tile_rows < 1:
        parser.error(f"--tile-rows {args.tile_rows}: must be at least 1")
    extra = (
        *(("--tile-rows", str(args.tile_rows)) if args.tile_rows else ()),
        *(("--against", str(args.against)) if args.against is not None else ()),
    )
    try:
        tiles = [int(t) for t in args.tiles.split(",")]
    except ValueError:
        parser.error(f"--tiles {args.tiles!r}: expected comma-separated whole numbers")
    if not tiles or min(tiles) < 1:
        parser.error(f"--tiles {args.tiles!r}: each number of tiles must be at least 1")
    if args.cell:
        return cell_main(args.cell[0], int(args.cell[1]), args.diagonal, args.tile_rows, args.against)
    if args.memory or args.build:
        WORK.mkdir(parents=True, exist_ok=True)
        if args.build:
            return build_main(args.build, args.data, tiles, args.diagonal)
        memory_main(args.memory, [0] if args.tile_rows else tiles, args.diagonal, extra)
        return None
    if args.kernel:
        return kernel_main(*args.kernel)
    if args.peer:
        return peer_main(*args.peer)
    sizes = sorted(int(s) for s in args.sizes.split(","))
    WORK.mkdir(parents=True, exist_ok=True)
    corpus = WORK / f"neighbors-corpus-{max(sizes)}.jsonl"
    if not corpus.exists():
        make = [sys.executable, str(ROOT / "bench" / "inputs" / "make_retrieval_corpus.py"), str(corpus)]
        subprocess.run([*make, str(max(sizes)), "0", "--fill", "--data", args.data], check=True)
    lines = corpus.read_text("utf-8").splitlines()
    results = []
    for n in sizes:
        docs, index, nbrs = (WORK / f"nb-{name}-{n}" for name in ("docs", "index", "out"))
        subset = WORK / f"nb-corpus-{n}.jsonl"
        subset.write_text("\n".join(lines[:n]) + "\n", "utf-8")
        for cmd in (
            ["ingest", "text", str(subset), "--source", "bench", "--out", str(docs), "--overwrite"],
            ["index", str(docs), "--out", str(index), "--overwrite"],
        ):
            cpu_of_child(CLI + cmd)
        row: dict = {"n": n}
        cpu, wall, _ = cpu_of_child(
            CLI
            + [
                "neighbors",
                str(docs),
                "--index",
                str(index),
                "--k",
                str(K),
                "--out",
                str(nbrs),
                "--overwrite",
            ]
        )
        row.update(neighbors_cpu_s=round(cpu, 2), neighbors_wall_s=round(wall, 1))
        ours, theirs = WORK / f"nb-kernel-{n}.npz", WORK / f"nb-peer-{n}.npz"
        _, _, out = cpu_of_child([sys.executable, __file__, "--kernel", str(index), str(ours)])
        row.update(json.loads(out.strip().splitlines()[-1]))
        _, _, out = cpu_of_child([sys.executable, __file__, "--peer", str(index), str(theirs)])
        row.update(json.loads(out.strip().splitlines()[-1]))
        with np.load(ours) as a, np.load(theirs) as b:
            row.update(compare_sets(a, b))
            row["command_rows_equal_kernel_rows"] = command_matches_kernel(nbrs, index, a)
        kernel_cpu = row["prepare_cpu_s"] + row["pairs_cpu_s"]
        row["kernel_cpu_s"] = round(kernel_cpu, 2)
        row["peer_over_kernel"] = round(row["peer_cpu_s"] / kernel_cpu, 2)
        row["peer_over_all_topk"] = round(
            row["peer_cpu_s"] / (row["prepare_cpu_s"] + row["all_topk_cpu_s"]), 2
        )
        row["peer_over_neighbors"] = round(row["peer_cpu_s"] / row["neighbors_cpu_s"], 2)
        row["madds_per_cpu_s_kernel"] = round(row["madds_pairs_once"] / row["pairs_cpu_s"] / 1e9, 3)
        row["scatter_adds_per_s_tile"] = round(scatter_rate(min(n, row["tile_rows"])) / 1e9, 3)
        row["scatter_adds_per_s_n"] = round(scatter_rate(n) / 1e9, 3)
        row["worker_mb_tiles_1_4_16"] = [
            round(worker_bytes(n, row["nnz"], row["shared_features"], t) / 2**20, 1) for t in (1, 4, 16)
        ]
        results.append(row)
        print(json.dumps(row), flush=True)
    if len(results) >= 2:
        a, b = results[0], results[-1]
        for key in ("kernel_cpu_s", "neighbors_cpu_s", "peer_cpu_s", "nnz", "madds_pairs_once"):
            exponent = np.log(b[key] / a[key]) / np.log(b["n"] / a["n"])
            print(json.dumps({"growth_exponent": key, "value": round(float(exponent), 3)}))
    (WORK / "neighbors_results.json").write_text(json.dumps(results, indent=1) + "\n")


def command_matches_kernel(nbrs: Path, index: Path, kernel) -> bool:
    """The neighbours table of the command holds the kernel's rows: the same ids, the same float32 scores."""
    import pyarrow.parquet as pq

    ids = json.loads((index / "ids.json").read_text("utf-8"))
    row_of = {doc_id: row for row, doc_id in enumerate(ids)}
    cols, scores = kernel["cols"], kernel["scores"]
    seen = 0
    for path in sorted((nbrs / "neighbors").glob("*.parquet")):
        for rec in pq.read_table(path).to_pylist():
            row = row_of[rec["id"]]
            got = [(row_of[x["id"]], np.float32(x["score"])) for x in rec["neighbors"]]
            want = [(int(c), s) for c, s in zip(cols[row], scores[row], strict=True) if c >= 0]
            if got != want:
                return False
            seen += 1
    return seen == len(ids)


if __name__ == "__main__":
    main()
