"""Batched exact top-k neighbours of every document under DrQA's score ``x_q . x_d``.

DrQA ranks one query at a time (``spvec * doc_mat``, then ``argpartition``). Here a block of B query rows is
scored against all N documents at once and the top k of each row are chosen with a row-wise ``np.partition``:

    scores[block] = X_dense[block] @ X_dense.T  +  X_sparse[block] @ X_sparse.T        (B x N, float32)

The columns (features) are split by document frequency: the few most frequent features (df >= N / 25, at
most 64; they cause most of the multiply-adds of a sparse product, since a feature costs df^2) are kept as a
dense N x m array and scored with BLAS; all other features go through scipy's sparse product, whose result is
added into the same dense block. The block's own rows and exact duplicates (same text) are zeroed. Memory is
bounded by the block size (about 32 * B * N bytes), see :func:`block_size`.

Ranking uses float32 scores (the precision written to Parquet), by score descending then row; rows are sorted
by id, so ties go to the smaller id. A pair's score is summed in an order fixed by the two rows, not by the
other rows of the block, so the output does not depend on the block size or on the worker.

Only documents with a positive score are neighbours: a zero-vector document (no n-gram with idf > 0) is never
a neighbour and has none.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

DEFAULT_MEMORY_BYTES = 512 * 2**20
MAX_BLOCK = 1024
# float64 block (8 B) + float32 copy (4 B) + sparse product entries (<= 8 B) + masks and slack
BYTES_PER_SCORE = 32
DENSE_DF_FRACTION = 1 / 25
MAX_DENSE_FEATURES = 64


def block_size(num_docs: int, memory_bytes: int = DEFAULT_MEMORY_BYTES) -> int:
    """Query rows per block so that one block's score arrays stay within ``memory_bytes``.

    >>> block_size(100_000), block_size(6_000_000), block_size(10)
    (167, 2, 1024)
    """
    return int(max(1, min(MAX_BLOCK, memory_bytes // (BYTES_PER_SCORE * max(num_docs, 1)))))


def blocks(num_docs: int, block_rows: int) -> list[tuple[int, int]]:
    """``[(start, stop), ...]`` covering ``range(num_docs)``: ``blocks(5, 2) == [(0, 2), (2, 4), (4, 5)]``."""
    return [(start, min(start + block_rows, num_docs)) for start in range(0, num_docs, max(1, block_rows))]


@dataclass
class ScoringMatrix:
    """The document matrix prepared once per worker for block scoring (see the module docstring).

    Only features shared by at least two documents are kept (a feature of one document adds nothing to any
    cross-document score). ``dense`` is N x m (float64, C order) for the m most frequent features,
    ``sparse``/``sparse_t`` the rest as CSR and its transpose; ``dup_groups`` maps a row to all rows with the
    same text (only for texts that occur more than once).
    """

    dense: np.ndarray
    sparse: sp.csr_matrix
    sparse_t: sp.csr_matrix
    dup_groups: dict[int, np.ndarray]
    zero_rows: np.ndarray

    @property
    def num_docs(self) -> int:
        return self.sparse.shape[0]


def _duplicate_groups(text_keys: np.ndarray | None) -> dict[int, np.ndarray]:
    groups: dict[int, np.ndarray] = {}
    if text_keys is None or not len(text_keys):
        return groups
    keys = np.asarray(text_keys, np.uint64)
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
    ends = np.r_[starts[1:], len(keys)]
    for start, end in zip(starts, ends, strict=True):
        if end - start > 1:
            group = np.sort(order[start:end])
            for row in group:
                groups[int(row)] = group
    return groups


def prepare(
    matrix: sp.csr_matrix,
    text_keys: np.ndarray | None = None,
    dense_fraction: float = DENSE_DF_FRACTION,
    max_dense: int = MAX_DENSE_FEATURES,
) -> ScoringMatrix:
    """Build the :class:`ScoringMatrix` of a documents x features TF-IDF matrix."""
    matrix = sp.csr_matrix(matrix, dtype=np.float32)
    matrix.sum_duplicates()
    num_docs = matrix.shape[0]
    zero_rows = np.flatnonzero(np.diff(matrix.indptr) == 0)
    compact = matrix.tocsc()
    df = np.diff(compact.indptr)
    shared = np.flatnonzero(df >= 2)
    by_df = shared[np.lexsort((shared, -df[shared]))]
    dense_cols = by_df[:max_dense][df[by_df[:max_dense]] >= max(2.0, dense_fraction * num_docs)]
    sparse_cols = np.setdiff1d(shared, dense_cols)
    dense = np.ascontiguousarray(compact[:, np.sort(dense_cols)].toarray(), dtype=np.float64)
    sparse = compact[:, sparse_cols].tocsr()
    sparse.sort_indices()
    return ScoringMatrix(
        dense=dense,
        sparse=sparse,
        sparse_t=sparse.T.tocsr(),
        dup_groups=_duplicate_groups(text_keys),
        zero_rows=zero_rows,
    )


CHUNK = 64


def _kth_lower_bound(scores: np.ndarray, k: int) -> np.ndarray:
    """Per row a value <= its k-th largest score, cheap: the k-th largest of the maxima of 64-column chunks.

    Each chunk maximum is a distinct element of the row, so k of them are >= their k-th largest. One
    vectorised max pass replaces a row-wise ``np.partition`` over all N columns; few entries pass the bound.
    """
    num_rows, num_cols = scores.shape
    if num_cols <= k:
        return np.full(num_rows, -np.inf, dtype=scores.dtype)
    chunks = num_cols // CHUNK
    if chunks < k:
        return np.partition(scores, num_cols - k, axis=1)[:, num_cols - k]
    maxima = scores[:, : chunks * CHUNK].reshape(num_rows, chunks, CHUNK).max(axis=2)
    if num_cols > chunks * CHUNK:
        maxima = np.concatenate([maxima, scores[:, chunks * CHUNK :].max(axis=1, keepdims=True)], axis=1)
    return np.partition(maxima, maxima.shape[1] - k, axis=1)[:, maxima.shape[1] - k]


def select_topk(scores: np.ndarray, k: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per row of a dense score block: the columns of the k highest positive scores, by score desc then column.

    >>> select_topk(np.array([[0.0, 2.0, 1.0, 2.0], [0.0, 0.0, 0.0, 0.0]]), 2)
    [(array([1, 3]), array([2., 2.])), (array([], dtype=int64), array([], dtype=float64))]
    """
    num_rows, num_cols = scores.shape
    mask = (scores >= _kth_lower_bound(scores, k)[:, None]) & (scores > 0)
    row, col = np.nonzero(mask)
    value = scores[row, col]
    order = np.lexsort((col, -value, row))
    row, col, value = row[order], col[order], value[order]
    starts = np.searchsorted(row, np.arange(num_rows + 1))
    out = []
    for r in range(num_rows):
        a, b = starts[r], min(starts[r + 1], starts[r] + k)
        out.append((col[a:b].astype(np.int64), value[a:b]))
    return out


def score_block(scoring: ScoringMatrix, start: int, stop: int) -> np.ndarray:
    """Dense float32 scores (stop - start) x N of query rows ``start:stop`` against every document.

    The BLAS part is summed in float64: BLAS may order its sums differently for different block shapes,
    and float64 keeps those last-bit differences far below float32's precision, to which scores are rounded.
    """
    if scoring.dense.shape[1]:
        block = scoring.dense[start:stop] @ scoring.dense.T
    else:
        block = np.zeros((stop - start, scoring.num_docs), np.float64)
    product = (scoring.sparse[start:stop] @ scoring.sparse_t).tocsr()
    _add_sparse(block, product)
    return block.astype(np.float32)


def _add_sparse(out: np.ndarray, matrix: sp.csr_matrix) -> None:
    """``out += matrix`` without a second dense array."""
    try:
        # csr_todense adds into ``out``; scipy's public toarray(out=) zeroes it first.
        from scipy.sparse._sparsetools import csr_todense
    except ImportError:  # pragma: no cover - other scipy layouts
        out += matrix.toarray()
        return
    csr_todense(
        out.shape[0],
        out.shape[1],
        matrix.indptr,
        matrix.indices,
        matrix.data.astype(out.dtype, copy=False),
        out,
    )


def topk_block(
    scoring: ScoringMatrix, start: int, stop: int, k: int
) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """Top-k neighbours ``(row, neighbour_rows, scores)`` of query rows ``start:stop`` (self, duplicates excluded)."""
    stop = min(stop, scoring.num_docs)
    queries = np.arange(start, stop)
    block = score_block(scoring, start, stop)
    block[np.arange(len(queries)), queries] = 0.0
    for i, row in enumerate(queries):
        group = scoring.dup_groups.get(int(row))
        if group is not None:
            block[i, group] = 0.0
    return [(int(row), cols, vals) for row, (cols, vals) in zip(queries, select_topk(block, k), strict=True)]


def all_topk(
    scoring: ScoringMatrix, k: int, block_rows: int | None = None
) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """Top-k neighbours of every row, block after block (a generator, for in-process use and tests)."""
    for start, stop in blocks(scoring.num_docs, block_rows or block_size(scoring.num_docs)):
        yield from topk_block(scoring, start, stop, k)
