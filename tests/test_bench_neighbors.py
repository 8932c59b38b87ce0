"""bench/bench_neighbors.py's cell workers (``--cell INDEX TILES [--diagonal] [--tile-rows R] [--against J]``, what
``--memory`` and ``--build`` run for each of ``--tiles``, here in process): the cell they pick, its non-zeros and
multiply-adds, on real text; the multiply-adds of a collection grown by fill documents; bad options."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def bench_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "bench_neighbors", os.path.join(ROOT, "bench", "bench_neighbors.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_bench(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": ROOT}
    return subprocess.run(
        [sys.executable, os.path.join(ROOT, "bench", "bench_neighbors.py"), *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


def test_a_cell_of_three_tiles_its_diagonal_and_a_cell_of_given_rows_count_their_non_zeros_and_work(
    samples, tmp_path, capsys
):
    from incoherent.retrieval.index import TfidfIndex

    lines = (samples / "wsj" / "wsj.jsonl").read_text("utf-8").splitlines()[:60]
    index = TfidfIndex.build(sorted((r["id"], r["text"]) for r in map(json.loads, lines)))
    index.save(str(tmp_path))

    def df(a, b):
        return np.asarray((index.matrix[a:b] != 0).sum(axis=0), np.float64).ravel()

    nnz = index.matrix.indptr
    bench = bench_module()
    for extra, tiles, cell, madds, cell_nnz, keys_out in (
        # the first tile's queries against the last tile; with --diagonal the first tile against itself; with
        # --tile-rows and --against, tiles of 25 rows and the first against the second
        ({}, 3, [[0, 20], [40, 60]], (df(0, 20) * df(40, 60)).sum(), nnz[20] + nnz[60] - nnz[40], 2),
        ({"diagonal": True}, 3, [[0, 20], [0, 20]], (df(0, 20) * (df(0, 20) - 1) / 2).sum(), nnz[20], 1),
        (
            {"tile_rows": 25, "against": 1},
            3,
            [[0, 25], [25, 50]],
            (df(0, 25) * df(25, 50)).sum(),
            nnz[50],
            2,
        ),
    ):
        bench.cell_main(str(tmp_path), tiles, **extra)
        got = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        assert got["tiles"] == tiles and got["rows_per_tile"] == cell[0][1] and got["cell"] == cell
        assert got["cell_nnz"] == cell_nnz and got["index_nnz"] == nnz[-1]
        assert got["madds"] == madds > 0 and got["keys_out"] == keys_out
        assert got["peak_rss_mb"] >= 0 and got["base_rss_mb"] > 50 and got["cpu_s"] > 0
    with pytest.raises(SystemExit, match="--against 3: the index has tiles 0 to 2 of 25 rows"):
        bench.cell_main(str(tmp_path), 1, tile_rows=25, against=3)


def test_a_number_of_tiles_below_one_stops_with_one_line(tmp_path):
    done = run_bench("--memory", str(tmp_path), "--tiles", "4,0")
    assert done.returncode == 2 and "--tiles '4,0': each number of tiles must be at least 1" in done.stderr
    done = run_bench("--memory", str(tmp_path), "--tile-rows", "0")
    assert done.returncode == 2 and "--tile-rows 0: must be at least 1" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_multiply_adds_projected_to_more_fill_documents_are_those_of_the_grown_collection(tmp_path):
    # a collection of 3 real rows and 4 fill rows (ids mix:<n>), projected to 11 rows (the fill rows twice),
    # against the collection with each fill row written twice
    import scipy.sparse as sp

    bench = bench_module()
    rng = np.random.default_rng(0)
    real = sp.random(3, 12, density=0.5, format="csr", dtype=np.float32, random_state=rng)
    fill = sp.random(4, 12, density=0.5, format="csr", dtype=np.float32, random_state=rng)

    def write(folder, matrix, ids):
        folder.mkdir()
        sp.save_npz(folder / "tfidf.npz", matrix.tocsr(), compressed=False)
        (folder / "ids.json").write_text(json.dumps(ids))

    real_ids = [f"bench:wiki:{i}" for i in range(3)]
    write(tmp_path / "a", sp.vstack([real, fill]), real_ids + [f"bench:mix:{i}" for i in range(4)])
    write(tmp_path / "b", sp.vstack([real, fill, fill]), real_ids + [f"bench:mix:{i}" for i in range(8)])
    a, b = bench.index_madds(str(tmp_path / "a"), (7, 11)), bench.index_madds(str(tmp_path / "b"))
    assert a["fill_documents"] == 4 and b["fill_documents"] == 8
    assert a["madds_pairs_once_projected_7"] == a["madds_pairs_once"] > 0
    assert a["madds_pairs_once_projected_11"] == b["madds_pairs_once"] > a["madds_pairs_once"]
    assert b["index_nnz"] == real.nnz + 2 * fill.nnz
