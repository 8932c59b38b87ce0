"""Batched top-k: exact against a dense brute force, ties by row, self/duplicates/zero vectors excluded."""

from __future__ import annotations

import os

import numpy as np
import pytest
import scipy.sparse as sp

from incoherent.retrieval import topk as T


def brute_force(matrix: sp.csr_matrix, k: int, keys=None) -> list[list[int]]:
    dense = matrix.toarray().astype(np.float64)
    scores = (dense @ dense.T).astype(np.float32)
    out = []
    for q in range(len(dense)):
        cand = [
            (-scores[q, d], d)
            for d in range(len(dense))
            if d != q and scores[q, d] > 0 and (keys is None or keys[d] != keys[q])
        ]
        out.append([d for _, d in sorted(cand)[:k]])
    return out


def random_matrix(n: int, features: int, density: float, seed: int) -> sp.csr_matrix:
    rng = np.random.default_rng(seed)
    m = sp.random(n, features, density=density, format="csr", random_state=rng, dtype=np.float64)
    m.data = np.round(m.data * 4) / 4 + 0.25  # coarse values: many exact ties
    return m.astype(np.float32)


def test_block_size_gives_every_worker_several_elements():
    assert T.block_size(100_000) == T.DEFAULT_BLOCK
    assert T.block_size(100_000, parallelism=64) == 390 and T.block_size(10) == 16


def test_blocks_cover_all_rows():
    assert T.blocks(5, 2) == [(0, 2), (2, 4), (4, 5)]
    assert T.blocks(0, 3) == []


def test_ties_go_to_the_smaller_row_and_zero_scores_are_never_neighbours():
    # row 0 scores 2 with rows 1, 3 and 4 (a three-way tie for 2 slots), 0 with row 2
    matrix = sp.csr_matrix(np.array([[1, 1, 0], [2, 0, 0], [0, 0, 1], [0, 2, 0], [1, 1, 0]], np.float32))
    result = {row: (cols.tolist(), scores.tolist()) for row, cols, scores in T.all_topk(T.prepare(matrix), 2)}
    assert result[0] == ([1, 3], [2.0, 2.0])
    assert result[2] == ([], [])


@pytest.mark.parametrize("block_rows", [1, 7, 200])
def test_all_topk_equals_brute_force_whatever_the_block_size(block_rows):
    matrix = random_matrix(200, 300, 0.03, seed=1)
    scoring = T.prepare(matrix)
    got = [cols.tolist() for _, cols, _ in T.all_topk(scoring, 5, block_rows)]
    assert got == brute_force(matrix, 5)


def test_output_identical_for_all_block_sizes_and_thread_counts():
    matrix = random_matrix(150, 80, 0.1, seed=2)
    scoring = T.prepare(matrix)
    runs = [list(T.all_topk(scoring, 10, b, threads)) for b, threads in ((1, 1), (3, 2), (150, 1), (150, 2))]
    for other in runs[1:]:
        for (r1, c1, s1), (r2, c2, s2) in zip(runs[0], other, strict=True):
            assert r1 == r2 and c1.tolist() == c2.tolist() and s1.tobytes() == s2.tobytes()


def test_exact_duplicates_and_self_are_excluded_zero_vectors_get_nothing():
    matrix = sp.csr_matrix(
        np.array([[1, 1, 0], [1, 1, 0], [1, 0, 0], [0, 0, 0], [0, 1, 1]], dtype=np.float32)
    )
    keys = np.array([7, 7, 1, 2, 3], np.uint64)  # rows 0 and 1 have the same text
    scoring = T.prepare(matrix, keys)
    result = {row: cols.tolist() for row, cols, _ in T.all_topk(scoring, 3)}
    assert result == {0: [2, 4], 1: [2, 4], 2: [0, 1], 3: [], 4: [0, 1]}
    assert scoring.zero_rows.tolist() == [3]
    assert [scoring.has_duplicates(row) for row in range(5)] == [True, True, False, False, False]
    assert result == {q: n for q, n in enumerate(brute_force(matrix, 3, keys))}


def test_single_document_and_fewer_than_k_documents():
    one = T.prepare(sp.csr_matrix(np.array([[1.0, 2.0]], np.float32)))
    assert [(r, c.tolist()) for r, c, _ in T.all_topk(one, 10)] == [(0, [])]
    three = sp.csr_matrix(np.array([[1, 0], [1, 1], [0, 1]], np.float32))
    assert [c.tolist() for _, c, _ in T.all_topk(T.prepare(three), 10)] == [[1], [0, 2], [1]]


def test_scores_are_dot_products():
    matrix = sp.csr_matrix(np.array([[0.5, 2.0, 0.0], [1.0, 1.0, 3.0], [0.0, 0.0, 1.0]], np.float32))
    (_, cols, scores), *_ = T.all_topk(T.prepare(matrix), 2)
    assert cols.tolist() == [1] and scores.tolist() == [pytest.approx(2.5)]


def test_any_query_rows_get_exactly_their_rows_of_the_full_run():
    matrix = random_matrix(120, 90, 0.08, seed=3)
    scoring = T.prepare(matrix)
    full = {r: (c.tolist(), s.tobytes()) for r, c, s in T.all_topk(scoring, 4)}
    rows = np.array([97, 3, 55, 56, 0, 119])
    got = T.topk_rows(scoring, rows, 4, threads=2)
    assert [r for r, _, _ in got] == rows.tolist()
    assert {r: (c.tolist(), s.tobytes()) for r, c, s in got} == {r: full[r] for r in rows.tolist()}
    assert T.topk_rows(scoring, np.array([], np.int64), 4) == []


def scipy_layouts(matrix: sp.csr_matrix) -> dict[str, np.ndarray]:
    """The scoring layouts by scipy (the previous ``prepare``): a transposed copy, then column slices."""
    matrix = sp.csr_matrix(matrix, dtype=np.float32, copy=True)
    matrix.sum_duplicates()
    matrix.eliminate_zeros()
    matrix.sort_indices()
    by_feature = matrix.tocsc()
    by_feature.sort_indices()
    shared = np.flatnonzero(np.diff(by_feature.indptr) >= 2)
    by_feature = by_feature[:, shared]
    by_feature.sort_indices()
    query = matrix[:, shared]
    query.sort_indices()
    return {
        "indptr": query.indptr.astype(np.int64),
        "indices": query.indices.astype(np.uint32),
        "data": query.data.astype(np.float32),
        "t_indptr": by_feature.indptr.astype(np.int64),
        "t_indices": by_feature.indices.astype(np.uint32),
        "t_data": by_feature.data.astype(np.float32),
        "zero_rows": np.flatnonzero(np.diff(matrix.indptr) == 0),
    }


def test_prepare_builds_the_layouts_of_scipy_without_its_copies():
    from pathlib import Path

    from incoherent.retrieval import TfidfIndex

    lines = (Path(__file__).resolve().parents[2] / "samples/wsj/wsj.jsonl").read_text("utf-8").splitlines()
    wsj = TfidfIndex.build([(f"w{i}", line) for i, line in enumerate(lines)] + [("zero", "")]).matrix
    messy = random_matrix(40, 30, 0.2, seed=5).tocoo()  # duplicates, explicit zeros, unsorted, float64
    messy = sp.csr_matrix(
        (np.r_[messy.data, 1.0, 0.0], (np.r_[messy.row, 3, 4], np.r_[messy.col, messy.col[0], 7])),
        shape=messy.shape,
    )
    messy.has_canonical_format = False
    for matrix in (wsj, messy, sp.csr_matrix((3, 5), dtype=np.float32)):
        expected = scipy_layouts(matrix)
        scoring = T.prepare(matrix)
        for name, array in expected.items():
            got = getattr(scoring, name)
            assert got.dtype == array.dtype and np.array_equal(got, array), name
    assert len(T.prepare(wsj).zero_rows) == 1 and len(T.prepare(wsj).t_indptr) > 1000
    expected = scipy_layouts(wsj)
    consumed = T.prepare(wsj, consume=True)  # as a neighbours worker: the matrix is emptied on the way
    assert all(np.array_equal(getattr(consumed, name), array) for name, array in expected.items())
    assert wsj.data.size == 0 and wsj.indices.size == 0


def test_a_spilled_query_layout_gives_the_same_layouts_and_neighbours(tmp_path, monkeypatch):
    monkeypatch.setattr(T, "SPILL_CHUNK", 37)  # many chunks: rows cut between the writes and the reads
    keys = np.arange(150, dtype=np.uint64) % 140  # some duplicate texts
    matrix = random_matrix(150, 60, 0.1, seed=11)
    memory = T.prepare(matrix, keys)
    spilled = T.prepare(matrix.copy(), keys, consume=True, spill=True, spill_dir=str(tmp_path))
    assert os.listdir(tmp_path) == []  # the files have no name: nothing is left behind, even by a kill
    assert spilled.indices.size == 0 and spilled.data.size == 0  # not in memory
    for name in ("indptr", "t_indptr", "t_indices", "t_data", "group", "zero_rows"):
        assert np.array_equal(getattr(spilled, name), getattr(memory, name)), name
    rows = np.array([149, 3, 4, 5, 0, 77, 76])
    for block in (rows, np.arange(20, 60)):  # scattered rows, and a consecutive block (one slice)
        for got, want in zip(spilled.query_rows(block), memory.query_rows(block), strict=True):
            assert got.dtype == want.dtype and np.array_equal(got, want)
    full = [(r, c.tolist(), s.tobytes()) for r, c, s in T.all_topk(memory, 5, block_rows=32)]
    assert [(r, c.tolist(), s.tobytes()) for r, c, s in T.all_topk(spilled, 5, block_rows=32)] == full
    got = T.topk_rows(spilled, rows, 5, threads=2)
    assert [(r, c.tolist(), s.tobytes()) for r, c, s in got] == [full[r] for r in rows.tolist()]
    spilled.spill.close()


def test_a_spilled_empty_matrix_scores_nothing(tmp_path):
    scoring = T.prepare(sp.csr_matrix((3, 5), dtype=np.float32), spill=True, spill_dir=str(tmp_path))
    assert [c.tolist() for _, c, _ in T.all_topk(scoring, 2)] == [[], [], []]
    scoring.spill.close()
    assert os.listdir(tmp_path) == []


def as_bytes(cols: np.ndarray, scores: np.ndarray) -> list[tuple[list[int], bytes]]:
    """Rows of ``all_topk_pairs`` as ``all_topk`` gives them: the filled entries only."""
    out = []
    for c, s in zip(cols, scores, strict=True):
        n = int(np.count_nonzero(c >= 0))
        assert (c[n:] == -1).all() and (s[n:] == 0).all()
        out.append((c[:n].tolist(), s[:n].tobytes()))
    return out


def real_matrix(samples, n: int):
    """The TF-IDF matrix and text keys of the first ``n`` documents of the bundled WSJ sample (real text)."""
    import json

    from incoherent.retrieval.index import TfidfIndex

    lines = (samples / "wsj" / "wsj.jsonl").read_text("utf-8").splitlines()[:n]
    docs = sorted((r["id"], r["text"]) for r in map(json.loads, lines))
    index = TfidfIndex.build(docs)
    return index.matrix, index.text_keys


@pytest.mark.parametrize("tile_rows, threads", [(1, 1), (7, 2), (50, 1), (64, 2), (10_000, 1), (10_000, 2)])
def test_each_pair_once_in_tiles_gives_the_bytes_of_all_topk(samples, tile_rows, threads):
    # real text (the WSJ sample, exact duplicate texts included) and coarse random values (many exact ties)
    matrix, keys = real_matrix(samples, 199)
    for scoring in (T.prepare(matrix, keys), T.prepare(random_matrix(150, 80, 0.1, seed=2))):
        expected = [(c.tolist(), s.tobytes()) for _, c, s in T.all_topk(scoring, 5)]
        assert as_bytes(*T.all_topk_pairs(scoring, 5, tile_rows, threads)) == expected


def test_cells_merged_in_any_order_give_every_row_its_top_k(samples):
    matrix, keys = real_matrix(samples, 120)
    scoring = T.prepare(matrix, keys)
    expected = [(c.tolist(), s.tobytes()) for _, c, s in T.all_topk(scoring, 4)]
    cells = T.grid(scoring.num_docs, 17)
    assert len(cells) == 8 * 9 // 2  # 8 tiles: each against itself and every earlier one
    merged = np.zeros((scoring.num_docs, 4), np.uint64)
    for queries, tile in reversed(cells):  # a runner may merge the cells in any order
        for first, keys_part in T.cell_keys(scoring, queries, tile, 4, threads=2):
            T.merge_keys(merged[first : first + len(keys_part)], keys_part)
    assert as_bytes(*T.decode_keys(merged)) == expected
    with pytest.raises(ValueError, match="must be the tile"):
        T.cell_keys(scoring, (17, 34), (0, 17), 4)


def test_an_empty_matrix_has_no_pairs():
    cols, scores = T.all_topk_pairs(T.prepare(sp.csr_matrix((0, 5), dtype=np.float32)), 3)
    assert cols.shape == (0, 3) and scores.shape == (0, 3)
    one = T.prepare(sp.csr_matrix(np.array([[1.0, 2.0]], np.float32)))
    assert as_bytes(*T.all_topk_pairs(one, 3)) == [([], b"")]


@pytest.mark.parametrize(
    "tile_rows, chunk_nnz",
    # one-row tiles (820 cells, each reading the files): the e2e step's; 30-row tiles in the default run
    [(17, 50), (40, None), (120, 7), (30, 3), pytest.param(1, 3, marks=pytest.mark.e2e)],
)
def test_a_cell_read_by_range_from_the_index_file_gives_the_bytes_and_reads_only_its_two_tiles(
    samples, tmp_path, tile_rows, chunk_nnz
):
    # the index written as `incoherent index` writes it (tfidf.npz uncompressed, docs.npz), its cells read back
    # by byte range, a chunk of rows at a time: each cell reads the rows of its two tiles and no other, and the merged keys are the bytes
    # of all_topk over the whole matrix (real text, exact duplicate texts included)
    import functools
    import json

    from incoherent.retrieval.files import MatrixRows, NpzRanges
    from incoherent.retrieval.index import DOCS_FILE, MATRIX_FILE, TfidfIndex

    # one-row tiles on 40 documents: 820 cells, each reading the files (on 120 documents 7,260 cells took 390 s)
    lines = (samples / "wsj" / "wsj.jsonl").read_text("utf-8").splitlines()[: 40 if tile_rows == 1 else 120]
    index = TfidfIndex.build(sorted((r["id"], r["text"]) for r in map(json.loads, lines)))
    index.save(str(tmp_path))
    expected = [
        (c.tolist(), s.tobytes()) for _, c, s in T.all_topk(T.prepare(index.matrix, index.text_keys), 4)
    ]
    shape = index.matrix.shape
    merged = np.zeros((shape[0], 4), np.uint64)
    cells = T.grid(shape[0], tile_rows)
    for queries, tile in reversed(cells):
        with open(tmp_path / MATRIX_FILE, "rb") as f, open(tmp_path / DOCS_FILE, "rb") as g:
            rows, docs = MatrixRows(f, MATRIX_FILE, shape), NpzRanges(g, DOCS_FILE)
            cell = T.read_cell(rows, functools.partial(docs.read, "text_key"), queries, tile, chunk_nnz)
            read = {r for a, b in rows.ranges_read for r in range(a, b)}
            assert read == set(range(*tile))  # the tile's posting lists first; the queries a chunk at a time
            assert docs.entries_read == len(set(range(*queries)) | set(range(*tile)))
            got = T.read_cell_keys(rows, cell, 4, 2, chunk_nnz)
            read = {r for a, b in rows.ranges_read for r in range(a, b)}
            assert read == set(range(*queries)) | set(range(*tile))
        for first, part in got:
            T.merge_keys(merged[first : first + len(part)], part)
    assert as_bytes(*T.decode_keys(merged)) == expected
