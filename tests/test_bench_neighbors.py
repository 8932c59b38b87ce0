"""bench/bench_neighbors.py's cell workers (``--cell INDEX TILES [--diagonal]``, what ``--memory`` and ``--build``
run for each of ``--tiles``): the cell a number of tiles picks, its non-zeros and multiply-adds, on real text."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_bench(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": ROOT}
    return subprocess.run(
        [sys.executable, os.path.join(ROOT, "bench", "bench_neighbors.py"), *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


def test_a_cell_of_three_tiles_and_its_diagonal_count_the_rows_non_zeros_and_multiply_adds(samples, tmp_path):
    from incoherent.retrieval.index import TfidfIndex

    lines = (samples / "wsj" / "wsj.jsonl").read_text("utf-8").splitlines()[:60]
    index = TfidfIndex.build(sorted((r["id"], r["text"]) for r in map(json.loads, lines)))
    index.save(str(tmp_path))
    df = [
        np.asarray((index.matrix[a:b] != 0).sum(axis=0), np.float64).ravel() for a, b in ((0, 20), (40, 60))
    ]
    nnz = index.matrix.indptr
    for extra, cell, madds, cell_nnz, keys_out in (
        # the first tile's queries against the last tile; with --diagonal the first tile against itself
        ([], [[0, 20], [40, 60]], (df[0] * df[1]).sum(), nnz[20] + nnz[60] - nnz[40], 2),
        (["--diagonal"], [[0, 20], [0, 20]], (df[0] * (df[0] - 1) / 2).sum(), nnz[20], 1),
    ):
        done = run_bench("--cell", str(tmp_path), "3", *extra)
        assert done.returncode == 0, done.stderr[-3000:]
        got = json.loads(done.stdout.strip().splitlines()[-1])
        assert got["tiles"] == 3 and got["rows_per_tile"] == 20 and got["cell"] == cell
        assert got["cell_nnz"] == cell_nnz and got["index_nnz"] == nnz[-1]
        assert got["madds"] == madds > 0 and got["keys_out"] == keys_out
        assert got["peak_rss_mb"] >= 0 and got["cpu_s"] > 0


def test_a_number_of_tiles_below_one_stops_with_one_line(tmp_path):
    done = run_bench("--memory", str(tmp_path), "--tiles", "4,0")
    assert done.returncode == 2 and "--tiles '4,0': each number of tiles must be at least 1" in done.stderr
    assert "Traceback" not in done.stderr
