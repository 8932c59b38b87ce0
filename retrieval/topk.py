"""Exact top-k neighbours of every document under DrQA's score ``x_q . x_d``, in one compiled kernel.

DrQA ranks one query at a time: ``spvec * doc_mat`` (a scipy product that builds a sparse result), then
``argpartition`` over it, with Python around every query. All-pairs top-k does the same multiply-adds
(a feature in ``df`` documents costs ``df**2`` over all queries), and on real text about half of all
document pairs share some feature, so the work is dominated by touching ~N/2 scores per query. Here one
numba kernel does, per query and without leaving compiled code:

1. **accumulate**: for each feature of the query (CSR row), walk that feature's posting list (the CSC
   column: documents in row order, their weights) and add ``w_q * w_d`` into a dense float32 accumulator of
   N scores, owned by the thread;
2. **select**: one pass over the N scores in chunks of 64: a chunk whose (vectorised) maximum does not beat
   the current k-th score is skipped, otherwise its scores enter a small sorted array of the k best; then
   the accumulator is cleared.

Query rows are spread over numba's threads (``prange``); each thread owns its accumulator, so memory is
``4 * N`` bytes per thread plus the matrix in two layouts (about 16 bytes per non-zero), whatever the block.
A neighbours worker keeps only the posting lists in memory (``prepare(..., spill_dir=...)``): the query
layout goes to a local file and each block reads its own rows, so the worker holds about 8 bytes per
non-zero, loading included.

Determinism: a pair's score is summed over the query's features in column order and, per feature, in a fixed
posting order, so it does not depend on the block, the thread or the worker. Scores are float32 (the
precision written to Parquet); documents are scanned in row order and a score must be strictly greater than
the current k-th to enter, so ties go to the smaller row (rows are sorted by id).

Each pair once (:func:`all_topk_pairs`, :func:`cell_keys`; what ``incoherent neighbors`` runs when every
document is a query): the documents are cut into tiles and a *cell* of the :func:`grid` takes the queries of a
tile or of an earlier tile against the tile's documents, walking only the postings of rows after the query's:
half the multiply-adds, an accumulator and a scan of the tile's rows only, and each score offered to both
documents' top-k. The score of a pair is the same sum whichever row is the query (the query's features in
column order, and only the shared ones add), so the neighbours are byte for byte those of :func:`all_topk`
(details above :data:`CELL_CHUNK`).

Excluded: the query itself, documents with exactly the same text (``text_keys``), and scores <= 0: a
zero-vector document (no n-gram with idf > 0) is never a neighbour and has none.
"""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from numba import get_num_threads, njit, prange, set_num_threads

DEFAULT_BLOCK = 2048
# numba's default threading layer is not safe for concurrent launches from several Python threads (Beam's
# multi_threading mode); the kernel uses every thread it is given anyway, so launches are serialised.
_LAUNCH = threading.Lock()


def blocks(num_docs: int, block_rows: int) -> list[tuple[int, int]]:
    """``[(start, stop), ...]`` covering ``range(num_docs)``: ``blocks(5, 2) == [(0, 2), (2, 4), (4, 5)]``."""
    return [(start, min(start + block_rows, num_docs)) for start in range(0, num_docs, max(1, block_rows))]


def block_size(num_docs: int, parallelism: int = 1) -> int:
    """Query rows per Beam element: ~1 s of work at 100k documents, and at least 4 elements per worker.

    >>> block_size(100_000), block_size(100_000, parallelism=64), block_size(10)
    (2048, 390, 16)
    """
    return int(max(16, min(DEFAULT_BLOCK, num_docs // max(1, 4 * parallelism))))


SPILL_CHUNK = 1 << 22  # non-zeros per step when the query layout is written to or read from its file


class QuerySpill:
    """The query layout's ``indices``/``data`` in two anonymous temporary files (``indptr`` stays in memory).

    The files have no name (``tempfile.TemporaryFile``): nothing is left on disk however the process ends,
    even killed, and the space is freed when they are closed or the process exits."""

    def __init__(self, spill_dir: str | None = None):
        self.indices_file = tempfile.TemporaryFile(prefix="incoherent-query-indices-", dir=spill_dir)
        self.data_file = tempfile.TemporaryFile(prefix="incoherent-query-data-", dir=spill_dir)
        self.nnz = 0

    def gather(self, positions: np.ndarray | slice) -> tuple[np.ndarray, np.ndarray]:
        """The ``indices``/``data`` entries at ``positions`` (see :func:`_row_positions`)."""
        if self.nnz == 0:
            return np.zeros(0, np.uint32), np.zeros(0, np.float32)
        # mapped for this block only: its pages leave the process's resident memory when the map is closed
        indices = np.memmap(self.indices_file, np.uint32, "r", shape=(self.nnz,))
        data = np.memmap(self.data_file, np.float32, "r", shape=(self.nnz,))
        try:
            return np.array(indices[positions]), np.array(data[positions])
        finally:
            del indices, data

    def close(self) -> None:
        self.indices_file.close()
        self.data_file.close()


@dataclass
class ScoringMatrix:
    """The document matrix prepared once per worker.

    ``indptr/indices/data``: documents x features (CSR, float32, no explicit zeros, features in column order);
    ``t_indptr/t_indices/t_data``: the same matrix by feature (posting lists, documents in row order), with
    only the features shared by at least two documents (a feature of one document adds to no cross-document
    score). ``group[row]`` numbers the rows whose text occurs more than once (-1 elsewhere). With ``spill``
    the query layout's ``indices``/``data`` are in its files (the arrays here are empty) and each block of
    queries reads its rows (:meth:`query_rows`).
    """

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    t_indptr: np.ndarray
    t_indices: np.ndarray
    t_data: np.ndarray
    group: np.ndarray
    zero_rows: np.ndarray
    spill: QuerySpill | None = field(default=None, repr=False)

    @property
    def num_docs(self) -> int:
        return len(self.indptr) - 1

    def has_duplicates(self, row: int) -> bool:
        return bool(self.group[row] >= 0)

    def query_rows(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(local_indptr, indices, data)``: the query layout of ``rows`` alone, row ``b`` of it is ``rows[b]``."""
        lengths = self.indptr[rows + 1] - self.indptr[rows]
        local = np.zeros(len(rows) + 1, np.int64)
        np.cumsum(lengths, out=local[1:])
        positions = _row_positions(self.indptr, rows)
        if self.spill is not None:
            indices, data = self.spill.gather(positions)
        else:
            indices, data = self.indices[positions], self.data[positions]
        return local, indices, data


def _row_positions(indptr: np.ndarray, rows: np.ndarray) -> np.ndarray | slice:
    """Positions of the entries of ``rows`` (in that order) in a CSR layout: a slice when they are consecutive.

    >>> _row_positions(np.array([0, 2, 3, 6]), np.array([2, 0])).tolist()
    [3, 4, 5, 0, 1]
    >>> _row_positions(np.array([0, 2, 3, 6]), np.array([1, 2]))
    slice(2, 6, None)
    """
    if len(rows) and rows[-1] - rows[0] == len(rows) - 1 and (len(rows) < 2 or np.all(np.diff(rows) == 1)):
        return slice(int(indptr[rows[0]]), int(indptr[rows[-1] + 1]))
    starts = indptr[rows]
    lengths = indptr[rows + 1] - starts
    ends = np.cumsum(lengths)
    return np.repeat(starts - (ends - lengths), lengths) + np.arange(int(ends[-1]) if len(ends) else 0)


def _duplicate_groups(text_keys: np.ndarray | None, num_docs: int) -> np.ndarray:
    """``group[row]``: a number shared by all rows with the same text key, -1 for texts that occur once."""
    group = np.full(num_docs, -1, np.int64)
    if text_keys is None or not len(text_keys):
        return group
    keys = np.asarray(text_keys, np.uint64)
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
    sizes = np.diff(np.r_[starts, len(keys)])
    for number, (start, size) in enumerate(zip(starts[sizes > 1], sizes[sizes > 1], strict=True)):
        group[order[start : start + size]] = number
    return group


def prepare(
    matrix: sp.csr_matrix,
    text_keys: np.ndarray | None = None,
    consume: bool = False,
    spill: bool = False,
    spill_dir: str | None = None,
) -> ScoringMatrix:
    """Build the :class:`ScoringMatrix` of a documents x features TF-IDF matrix.

    Memory: besides ``matrix`` (shared, not copied, when it is already canonical float32 CSR), the query
    layout and the posting lists (8 bytes per non-zero each) and a few bytes per hash bucket; no scipy
    transposed or column-sliced copies. ``consume=True`` (a worker loading the index) empties ``matrix``
    once the query layout is built, so the matrix and both layouts are never in memory together: the peak
    is about 16 bytes per non-zero (the caller must not use ``matrix`` afterwards). With ``spill`` the query
    layout is written a chunk at a time to a local folder (in ``spill_dir``, default the system's temporary
    one; 8 bytes per non-zero of disk) and the posting lists are built from those files: the peak is about
    8 bytes per non-zero (the matrix while it is read, then the posting lists), and the arrays are the same.
    """
    original = matrix
    matrix = sp.csr_matrix(matrix, dtype=np.float32)
    matrix.sum_duplicates()
    matrix.eliminate_zeros()
    matrix.sort_indices()
    num_docs, num_features = matrix.shape
    indptr, indices, data = matrix.indptr, matrix.indices, matrix.data
    zero_rows = np.flatnonzero(np.diff(indptr) == 0)
    shared = _shared_features(indices, num_features)
    # renumber the shared features 0..len-1 in column order: feature f of a query row is posting list f
    renumber = np.cumsum(shared, dtype=np.int64 if num_features >= 2**31 else np.int32) - 1
    renumber[~shared] = -1
    num_shared = int(renumber.max()) + 1 if num_features else 0
    del shared
    spilled = QuerySpill(spill_dir) if spill else None
    if spilled is None:
        q_indptr, q_indices, q_data = _query_layout(indptr, indices, data, renumber)
    else:
        q_indptr = _spill_query_layout(indptr, indices, data, renumber, spilled)
        q_indices, q_data = np.zeros(0, np.uint32), np.zeros(0, np.float32)
    del renumber, indptr, indices, data, matrix
    if consume:
        original.data, original.indices = np.zeros(0, np.float32), np.zeros(0, np.int32)
        original.indptr = np.zeros(1, np.int32)
    del original
    if spilled is None:
        t_indptr, t_indices, t_data = _posting_lists(q_indptr, q_indices, q_data, num_shared)
    else:
        t_indptr, t_indices, t_data = _posting_lists_from_spill(q_indptr, spilled, num_shared)
    return ScoringMatrix(
        indptr=q_indptr,
        indices=q_indices,
        data=q_data,
        t_indptr=t_indptr,
        t_indices=t_indices,
        t_data=t_data,
        group=_duplicate_groups(text_keys, num_docs),
        zero_rows=zero_rows,
        spill=spilled,
    )


def _row_chunks(indptr: np.ndarray, nnz_per_chunk: int | None = None) -> list[tuple[int, int]]:
    """``[(first_row, stop_row), ...]`` covering every row in order, each with about ``nnz_per_chunk``
    (default :data:`SPILL_CHUNK`) non-zeros (a longer row makes a longer chunk).

    >>> _row_chunks(np.array([0, 2, 3, 6, 6, 9]), 3)
    [(0, 2), (2, 3), (3, 5)]
    """
    step = nnz_per_chunk or SPILL_CHUNK
    num_rows = len(indptr) - 1
    cuts = np.searchsorted(indptr, np.arange(step, int(indptr[-1]), step), side="left")
    bounds = sorted({0, num_rows, *(int(c) for c in cuts if 0 < c < num_rows)})
    return [(a, b) for a, b in zip(bounds, bounds[1:], strict=False)]


def _spill_query_layout(indptr, indices, data, renumber, spill: QuerySpill) -> np.ndarray:
    """:func:`_query_layout`, a chunk of rows at a time, its ``indices``/``data`` appended to the spill files."""
    q_indptr = np.zeros(len(indptr), np.int64)
    fi, fd = spill.indices_file, spill.data_file
    for first, stop in _row_chunks(indptr):
        lo, hi = int(indptr[first]), int(indptr[stop])
        part_indptr, part_indices, part_data = _query_layout(
            indptr[first : stop + 1] - lo, indices[lo:hi], data[lo:hi], renumber
        )
        q_indptr[first + 1 : stop + 1] = part_indptr[1:] + q_indptr[first]
        fi.write(part_indices.tobytes())
        fd.write(part_data.tobytes())
    fi.flush()
    fd.flush()
    spill.nnz = int(q_indptr[-1])
    return q_indptr


def _posting_lists_from_spill(q_indptr: np.ndarray, spill: QuerySpill, num_features: int):
    """:func:`_posting_lists` of the spilled query layout, reading it a chunk of rows at a time (twice)."""
    t_indptr = np.zeros(num_features + 1, np.int64)
    chunks = _row_chunks(q_indptr)
    fi, fd = spill.indices_file, spill.data_file

    def read(first, stop):
        n = int(q_indptr[stop] - q_indptr[first])
        return (
            np.frombuffer(fi.read(4 * n), np.uint32, n),
            np.frombuffer(fd.read(4 * n), np.float32, n),
        )

    fi.seek(0)
    fd.seek(0)
    for first, stop in chunks:
        _count_features(read(first, stop)[0], t_indptr)
    np.cumsum(t_indptr, out=t_indptr)
    fill = t_indptr[:-1].copy()
    t_indices = np.empty(spill.nnz, np.uint32)
    t_data = np.empty(spill.nnz, np.float32)
    fi.seek(0)
    fd.seek(0)
    for first, stop in chunks:
        part_indices, part_data = read(first, stop)
        local = q_indptr[first : stop + 1] - q_indptr[first]
        _scatter_postings(local, part_indices, part_data, first, fill, t_indices, t_data)
    return t_indptr, t_indices, t_data


@njit(cache=True)
def _count_features(indices, t_indptr):
    """``t_indptr[f + 1] += 1`` for every entry (the first pass of the counting-sort transpose)."""
    for f in indices:
        t_indptr[f + 1] += 1


@njit(cache=True)
def _scatter_postings(indptr, indices, data, first_row, fill, t_indices, t_data):
    """The second pass of the counting-sort transpose for rows ``first_row, ...`` (``indptr`` local)."""
    for row in range(len(indptr) - 1):
        for p in range(indptr[row], indptr[row + 1]):
            q = fill[indices[p]]
            t_indices[q] = first_row + row
            t_data[q] = data[p]
            fill[indices[p]] = q + 1


@njit(cache=True)
def _query_layout(indptr, indices, data, renumber):
    """The rows restricted to the features with ``renumber[f] >= 0``, renumbered (order kept): CSR arrays."""
    count = 0
    for p in range(len(indices)):
        if renumber[indices[p]] >= 0:
            count += 1
    q_indptr = np.zeros(len(indptr), np.int64)
    q_indices = np.empty(count, np.uint32)
    q_data = np.empty(count, np.float32)
    c = 0
    for row in range(len(indptr) - 1):
        for p in range(indptr[row], indptr[row + 1]):
            f = renumber[indices[p]]
            if f >= 0:
                q_indices[c] = f
                q_data[c] = data[p]
                c += 1
        q_indptr[row + 1] = c
    return q_indptr, q_indices, q_data


@njit(cache=True)
def _shared_features(indices, num_features):
    """``shared[f]``: feature f occurs in at least two rows (a byte per feature, no int64 bincount)."""
    seen = np.zeros(num_features, np.uint8)
    for f in indices:
        if seen[f] < 2:
            seen[f] += 1
    return seen >= 2


def _posting_lists(indptr, indices, data, num_features):
    """The transpose of a CSR matrix (counting sort): per feature, its documents in row order and weights."""
    t_indptr = np.zeros(num_features + 1, np.int64)
    _count_features(indices, t_indptr)
    np.cumsum(t_indptr, out=t_indptr)
    t_indices = np.empty(len(indices), np.uint32)
    t_data = np.empty(len(indices), np.float32)
    _scatter_postings(indptr, indices, data, 0, t_indptr[:-1].copy(), t_indices, t_data)
    return t_indptr, t_indices, t_data


@njit(inline="always")
def _scatter_add(acc, t_indices, t_data, w, r, end):
    """``acc[t_indices[r:end]] += w * t_data[r:end]``, unrolled: four independent scatter-adds per step (the
    posting list of one query feature; both kernels run it for every feature of every query)."""
    while r + 4 <= end:
        d0, d1, d2, d3 = t_indices[r], t_indices[r + 1], t_indices[r + 2], t_indices[r + 3]
        v0, v1, v2, v3 = w * t_data[r], w * t_data[r + 1], w * t_data[r + 2], w * t_data[r + 3]
        acc[d0] += v0
        acc[d1] += v1
        acc[d2] += v2
        acc[d3] += v3
        r += 4
    while r < end:
        acc[t_indices[r]] += w * t_data[r]
        r += 1


@njit(fastmath={"nnan", "ninf", "nsz", "reassoc"}, inline="always")
def _chunk_max(acc, lo, hi):
    """max(0, acc[lo:hi]), vectorised (fast-math only here: the scores themselves are summed strictly)."""
    m = np.float32(0.0)
    for d in range(lo, hi):
        m = max(m, acc[d])
    return m


@njit(parallel=True, cache=True)
def _topk_kernel(indptr, indices, data, t_indptr, t_indices, t_data, group, rows, num_docs, k, lanes):
    """Query ``rows`` -> (cols, scores), each ``len(rows) x k``, best first, -1 / 0 past the end.

    ``indptr/indices/data`` hold the query layout of ``rows`` only (entry ``b`` is row ``rows[b]``).
    ``indices``/``t_indices`` are uint32: unsigned indices spare numba's negative-index check in the scatter.
    """
    num_rows = rows.shape[0]
    out_cols = np.full((num_rows, k), -1, np.int64)
    out_scores = np.zeros((num_rows, k), np.float32)
    for lane in prange(lanes):
        acc = np.zeros(num_docs, np.float32)
        best_s = np.zeros(k, np.float32)
        best_c = np.full(k, -1, np.int64)
        for b in range(lane, num_rows, lanes):
            q = rows[b]
            # 1. accumulate w_q * w_d along the posting list of every feature of the query
            for p in range(indptr[b], indptr[b + 1]):
                w = data[p]
                f = indices[p]
                _scatter_add(acc, t_indices, t_data, w, t_indptr[f], t_indptr[f + 1])
            acc[q] = 0.0
            # 2. select: documents in row order; a score must beat the current k-th, so ties keep the smaller row
            g = group[q]
            filled = 0
            threshold = np.float32(0.0)
            for lo in range(0, num_docs, 64):
                hi = min(lo + 64, num_docs)
                if _chunk_max(acc, lo, hi) <= threshold:
                    continue
                for d in range(lo, hi):
                    s = acc[d]
                    if s > threshold and (g < 0 or group[d] != g):
                        i = min(filled, k - 1)
                        while i > 0 and best_s[i - 1] < s:
                            best_s[i] = best_s[i - 1]
                            best_c[i] = best_c[i - 1]
                            i -= 1
                        best_s[i] = s
                        best_c[i] = d
                        if filled < k:
                            filled += 1
                        if filled == k:
                            threshold = best_s[k - 1]
            acc[:] = 0.0
            for i in range(filled):
                out_scores[b, i] = best_s[i]
                out_cols[b, i] = best_c[i]
    return out_cols, out_scores


def topk_block(
    scoring: ScoringMatrix, start: int, stop: int, k: int, threads: int | None = None
) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """Top-k neighbours ``(row, neighbour_rows, scores)`` of query rows ``start:stop``, on ``threads`` threads."""
    stop = min(stop, scoring.num_docs)
    return topk_rows(scoring, np.arange(start, max(start, stop), dtype=np.int64), k, threads)


def topk_rows(
    scoring: ScoringMatrix, rows: np.ndarray, k: int, threads: int | None = None
) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """Top-k neighbours ``(row, neighbour_rows, scores)`` of the query ``rows`` (any rows, any order).

    A row's neighbours are the same whichever other rows are queried with it: ``topk_rows(s, [3, 7], k)``
    gives rows 3 and 7 exactly what :func:`all_topk` gives them.
    """
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    if len(rows) == 0:
        return []
    q_indptr, q_indices, q_data = scoring.query_rows(rows)
    with _LAUNCH:
        previous = get_num_threads()
        if threads:
            set_num_threads(max(1, min(threads, previous)))
        try:
            lanes = min(len(rows), 4 * get_num_threads())
            cols, scores = _topk_kernel(
                q_indptr,
                q_indices,
                q_data,
                scoring.t_indptr,
                scoring.t_indices,
                scoring.t_data,
                scoring.group,
                rows,
                scoring.num_docs,
                k,
                lanes,
            )
        finally:
            set_num_threads(previous)
    out = []
    for b, row in enumerate(rows.tolist()):
        n = int(np.count_nonzero(cols[b] >= 0))
        out.append((row, cols[b, :n], scores[b, :n]))
    return out


def all_topk(
    scoring: ScoringMatrix, k: int, block_rows: int | None = None, threads: int | None = None
) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """Top-k neighbours of every row, block after block (a generator, for in-process use and tests)."""
    for start, stop in blocks(scoring.num_docs, block_rows or block_size(scoring.num_docs)):
        yield from topk_block(scoring, start, stop, k, threads)


# ---------------------------------------------------------------------------------------------------------------
# Each unordered pair once, documents in tiles that stay in cache
#
# The score of a pair is the same whichever of the two is the query: the query's features are walked in column
# order, only the features the two documents share add anything, and ``w_q * w_d == w_d * w_q`` exactly; so
# summed from the smaller row it is bit for bit the score :func:`_topk_kernel` gives either row. A *cell*
# (queries x a tile of documents [b0, b1)) walks, for each query q, only the tile's postings of rows d > q, adds
# into an accumulator of the tile's rows only (4 bytes a row: a tile of L2 / 8 rows keeps it and the documents'
# thresholds in cache), scans only the rows it reached, and offers each score to both documents' top-k.
# A top-k here is kept under the total order (score descending, row ascending), so it does not depend on the
# order the offers come in; the top-k of :func:`_topk_kernel` is the first k of that order (rows are scanned in
# order and must strictly beat the k-th), so merging the cells' top-k of a row gives exactly its row there.

CELL_CHUNK = 16  # accumulator entries per vectorised test of a cell's scan
TINY = np.float32(1e-45)  # the smallest positive float32: "not full" thresholds (any score > 0 may enter)


def l2_bytes() -> int:
    """The L2 cache of CPU 0 (sysfs), 1 MiB where it cannot be read."""
    base = "/sys/devices/system/cpu/cpu0/cache"
    try:
        import os

        for name in sorted(os.listdir(base)):
            with open(f"{base}/{name}/level") as f:
                if f.read().strip() != "2":
                    continue
            with open(f"{base}/{name}/size") as f:
                size = f.read().strip().upper()
            unit = {"K": 1 << 10, "M": 1 << 20}.get(size[-1:], 1)
            return int(size.rstrip("KM")) * unit
    except (OSError, ValueError):
        pass
    return 1 << 20


def tile_rows_for_cache(cache_bytes: int | None = None) -> int:
    """Rows per tile: the accumulator and the thresholds (8 bytes a row) in half the L2 cache.

    >>> tile_rows_for_cache(1 << 20)
    65536
    """
    return max(1024, (cache_bytes or l2_bytes()) // 16)


@njit(cache=True)
def _tile_offsets(t_indptr, t_indices, bounds):
    """``offsets[j, f]``: the first entry of posting list f whose row is >= ``bounds[j]`` (lists are in row
    order), for every tile bound; ``offsets[-1] == t_indptr[1:]``."""
    num_features = len(t_indptr) - 1
    offsets = np.empty((len(bounds), num_features), np.int64)
    for f in range(num_features):
        r = t_indptr[f]
        end = t_indptr[f + 1]
        for j in range(len(bounds)):
            while r < end and t_indices[r] < bounds[j]:
                r += 1
            offsets[j, f] = r
    return offsets


@njit(inline="always")
def _offer(h, key, keys, thr_bits, k):
    """Offer ``key`` (:func:`_key`) to top-k ``h``: ``keys[h]`` descending, 0 where empty."""
    if key <= keys[h, k - 1]:
        return
    i = k - 1
    while i > 0 and keys[h, i - 1] < key:
        keys[h, i] = keys[h, i - 1]
        i -= 1
    keys[h, i] = key
    if keys[h, k - 1]:
        # full: a score equal to the k-th may still enter (with a smaller row), a smaller one may not
        thr_bits[h] = np.uint32(keys[h, k - 1] >> np.uint64(32))


@njit(inline="always")
def _key(score_bits, row):
    """A score > 0 (its float32 bits, which order positive floats) and a row as one uint64 that orders
    (score descending, row ascending) as integers descending."""
    return (np.uint64(score_bits) << np.uint64(32)) | np.uint64(np.uint32(0xFFFFFFFF) - np.uint32(row))


@njit(fastmath={"nnan", "ninf", "nsz", "reassoc"}, inline="always")
def _chunk_tests(acc, thr, lo, hi, shift):
    """``(max(acc[lo:hi]), count of acc[c] >= thr[c + shift])``, vectorised."""
    m = np.float32(0.0)
    n = 0
    for c in range(lo, hi):
        a = acc[c]
        m = max(m, a)
        n += a >= thr[c + shift]
    return m, n


@njit(cache=True)
def _pairs_cell(
    rows,
    q_start,
    q_end,
    q_indices,
    q_data,
    lo,
    hi,
    t_indices,
    t_data,
    shift,
    cb0,
    cb1,
    group,
    q_heap,
    doc_heap0,
    keys,
    thr,
    acc,
):
    """The pairs (q, d), q in ``rows``, d in the tile, q < d: each score offered to both top-k.

    Query ``b`` is row ``rows[b]``, its features ``q_indices[q_start[b]:q_end[b]]``. Posting list f of the tile
    is ``t_indices[lo[f]:hi[f]]``: coordinates ``row - shift`` in row order, from ``cb0`` to ``cb1`` (exclusive).
    Top-k ``q_heap[b]`` is query b's; the document at coordinate c has top-k ``doc_heap0 + c - cb0``; a top-k
    is ``keys[h]`` (:func:`_key`, descending), ``thr[h]`` the least score that may enter it. ``acc``
    (coordinates ``cb0:cb1`` used, zero on entry and on return) is the accumulator.
    """
    k = keys.shape[1]
    dshift = doc_heap0 - cb0
    acc_bits = acc.view(np.uint32)
    thr_bits = thr.view(np.uint32)
    for b in range(rows.shape[0]):
        q = rows[b]
        qc = q - shift
        start = qc + 1 if qc >= cb0 else cb0
        if start >= cb1:
            continue
        diagonal = qc >= cb0
        for p in range(q_start[b], q_end[b]):
            w = q_data[p]
            f = q_indices[p]
            r = lo[f]
            end = hi[f]
            if diagonal:  # the first entry after the query itself (binary search: the list is in row order)
                a, z = r, end
                while a < z:
                    mid = (a + z) >> 1
                    if t_indices[mid] <= qc:
                        a = mid + 1
                    else:
                        z = mid
                r = a
            _scatter_add(acc, t_indices, t_data, w, r, end)
        g = group[q]
        qh = q_heap[b]
        for c0 in range(start, cb1, CELL_CHUNK):
            c1 = min(c0 + CELL_CHUNK, cb1)
            m, n = _chunk_tests(acc, thr, c0, c1, dshift)
            if n == 0 and m < thr[qh]:
                continue
            for c in range(c0, c1):
                s = acc[c]
                h = c + dshift
                if s < thr[h] and s < thr[qh]:
                    continue
                d = c + shift
                if g >= 0 and group[d] == g:
                    continue
                if s >= thr[qh]:
                    _offer(qh, _key(acc_bits[c], d), keys, thr_bits, k)
                if s >= thr[h]:
                    _offer(h, _key(acc_bits[c], q), keys, thr_bits, k)
        acc[start:cb1] = 0.0


@njit(parallel=True, cache=True)
def _merge_keys(keys, out):
    """``out[row]``: the top-k of ``keys[lane, row]`` over the lanes (all descending, 0 where empty)."""
    lanes, num_docs, k = keys.shape
    for row in prange(num_docs):
        for lane in range(lanes):
            for i in range(k):
                key = keys[lane, row, i]
                if key <= out[row, k - 1]:
                    break
                j = k - 1
                while j > 0 and out[row, j - 1] < key:
                    out[row, j] = out[row, j - 1]
                    j -= 1
                out[row, j] = key


@njit(parallel=True, cache=True)
def _pairs_block(
    rows, q_start, q_end, q_indices, q_data, lo, hi, t_indices, t_data, shift, b0, b1, group, k, lanes
):
    """The top-k keys a cell gives: queries ``rows`` (ascending; either all in the tile or all before it)
    against the tile's rows ``b0:b1`` (coordinates ``row - shift`` in ``t_indices``). Returns ``keys``: one
    top-k per tile row, then (queries before the tile) one per query. Lane L takes every lanes-th query into
    top-k of its own; the lanes' are merged."""
    nb = b1 - b0
    inside = len(rows) > 0 and rows[0] >= b0
    nh = nb if inside else nb + len(rows)
    q_heap = rows - b0 if inside else np.arange(nb, nb + len(rows))
    keys = np.zeros((lanes, nh, k), np.uint64)
    for lane in prange(lanes):
        thr = np.full(nh, TINY, np.float32)
        acc = np.zeros(b1 - shift, np.float32)  # coordinates below b0 - shift are never touched
        mine = np.arange(lane, len(rows), lanes)
        _pairs_cell(
            rows[mine],
            q_start[mine],
            q_end[mine],
            q_indices,
            q_data,
            lo,
            hi,
            t_indices,
            t_data,
            shift,
            b0 - shift,
            b1 - shift,
            group,
            q_heap[mine],
            0,
            keys[lane],
            thr,
            acc,
        )
    if lanes == 1:
        return keys[0]
    out = np.zeros((nh, k), np.uint64)
    _merge_keys(keys, out)
    return out


def decode_keys(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(cols, scores)`` of top-k keys (:func:`_key`): -1 / 0 where empty."""
    keys = np.asarray(keys, np.uint64)
    scores = (keys >> np.uint64(32)).astype(np.uint32).view(np.float32)
    cols = (np.uint64(0xFFFFFFFF) - (keys & np.uint64(0xFFFFFFFF))).astype(np.int64)
    cols[keys == 0] = -1
    return cols, scores


def tile_bounds(num_docs: int, tile_rows: int) -> np.ndarray:
    """``[0, tile_rows, 2 * tile_rows, ..., num_docs]``: the first row of every tile, then the end."""
    return np.array([*range(0, num_docs, max(1, tile_rows)), num_docs], np.int64)


def cell_keys(
    scoring: ScoringMatrix,
    queries: tuple[int, int],
    tile: tuple[int, int],
    k: int,
    offsets: tuple[np.ndarray, np.ndarray] | None = None,
    threads: int | None = None,
) -> list[tuple[int, np.ndarray]]:
    """The cell (query rows ``queries`` x document rows ``tile``) of the grid: ``[(first_row, keys), ...]``,
    top-k keys (:func:`_key`) of consecutive rows from ``first_row``, from the pairs q < d of the cell.

    ``queries`` is the tile itself or rows before it. ``offsets``: the tile's ``(lo, hi)`` in the posting
    lists (:func:`_tile_offsets`), computed here when not given."""
    (a0, a1), (b0, b1) = queries, tile
    if not (a0 == b0 and a1 == b1) and a1 > b0:
        raise ValueError(f"queries {queries} must be the tile {tile} or rows before it")
    if offsets is None:
        bounds = np.array([b0, b1], np.int64)
        both = _tile_offsets(scoring.t_indptr, scoring.t_indices, bounds)
        offsets = (both[0], both[1])
    rows = np.arange(a0, a1, dtype=np.int64)
    q_indptr, q_indices, q_data = scoring.query_rows(rows)
    with _LAUNCH:
        previous = get_num_threads()
        if threads:
            set_num_threads(max(1, min(threads, previous)))
        try:
            lanes = max(1, min(len(rows), get_num_threads()))
            keys = _pairs_block(
                rows,
                q_indptr[:-1],
                q_indptr[1:],
                q_indices,
                q_data,
                offsets[0],
                offsets[1],
                scoring.t_indices,
                scoring.t_data,
                0,
                b0,
                b1,
                scoring.group,
                k,
                lanes,
            )
        finally:
            set_num_threads(previous)
    if a0 == b0:
        return [(b0, keys)]
    return [(b0, keys[: b1 - b0]), (a0, keys[b1 - b0 :])]


@njit(cache=True)
def merge_keys(into, keys):
    """``into[i]`` becomes the top-k of ``into[i]`` and ``keys[i]`` (both descending, 0 where empty)."""
    k = into.shape[1]
    for row in range(keys.shape[0]):
        for i in range(k):
            key = keys[row, i]
            if key <= into[row, k - 1]:
                break
            j = k - 1
            while j > 0 and into[row, j - 1] < key:
                into[row, j] = into[row, j - 1]
                j -= 1
            into[row, j] = key


def grid(num_docs: int, tile_rows: int) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """The cells ``(queries, tile)``: every tile against itself and every tile before it.

    >>> grid(5, 2)
    [((0, 2), (0, 2)), ((0, 2), (2, 4)), ((2, 4), (2, 4)), ((0, 2), (4, 5)), ((2, 4), (4, 5)), ((4, 5), (4, 5))]
    """
    tiles = blocks(num_docs, tile_rows)
    return [(tiles[i], tiles[j]) for j in range(len(tiles)) for i in range(j + 1)]


def all_topk_pairs(
    scoring: ScoringMatrix, k: int, tile_rows: int | None = None, threads: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(cols, scores)``, each ``num_docs x k``: every row's top-k (-1 / 0 past the end), each pair scored once,
    cell after cell of the :func:`grid` of tiles of ``tile_rows`` documents (default :func:`tile_rows_for_cache`),
    the cells' top-k merged. The same neighbours as :func:`all_topk`."""
    num_docs = scoring.num_docs
    tile_rows = tile_rows or tile_rows_for_cache()
    keys = np.zeros((num_docs, k), np.uint64)
    bounds = tile_bounds(num_docs, tile_rows)
    offsets = _tile_offsets(scoring.t_indptr, scoring.t_indices, bounds)
    for queries, tile in grid(num_docs, tile_rows):
        j = tile[0] // tile_rows
        for first, part in cell_keys(scoring, queries, tile, k, (offsets[j], offsets[j + 1]), threads):
            merge_keys(keys[first : first + len(part)], part)
    return decode_keys(keys)


# ---------------------------------------------------------------------------------------------------------------
# A cell from its two tiles' rows alone (what a worker of the grid holds)
#
# A cell's pairs need the query rows (the earlier tile, or the tile itself) and the posting lists of the tile's
# rows, nothing else: :func:`read_cell` reads those rows from the index file by range (``retrieval.files``'s
# ``MatrixRows``), a chunk of rows at a time, and numbers the rows of the cell locally (the queries, then the
# tile). Features are renumbered to those present in the tile, in column order, so a pair's score is the same
# float32 sum as over the whole matrix (its shared features in column order, each posting list in row order),
# and rows keep their order, so the keys (score, then row) order the same and map back to global rows.
# Memory: 8 bytes per non-zero of the two tiles (query layout and posting lists), 8 bytes a feature of the
# hash while the tile's features are counted, a chunk of rows being read, and the accumulators.


@dataclass
class Cell:
    """The tile's side of one cell of the grid: its posting lists (coordinates ``0:nb``), its features'
    renumbering (``renumber[f]``: the posting list of feature f, -1 when absent from the tile) and the
    duplicate groups of the cell's rows numbered locally (queries ``0:na`` then the tile; on the diagonal the
    tile alone). The query rows are read a chunk at a time by :func:`read_cell_keys`."""

    queries: tuple[int, int]
    tile: tuple[int, int]
    t_indptr: np.ndarray
    t_indices: np.ndarray
    t_data: np.ndarray
    renumber: np.ndarray
    group: np.ndarray

    @property
    def diagonal(self) -> bool:
        return self.queries == self.tile


def _canonical(indptr, indices, data, num_features):
    """The rows with sorted, summed features and no explicit zeros (what :func:`prepare` makes of a matrix)."""
    m = sp.csr_matrix((data, indices, indptr), shape=(len(indptr) - 1, num_features))
    m.sum_duplicates()
    m.eliminate_zeros()
    return m.indptr, m.indices, m.data


def read_cell(
    rows, text_keys_of, queries: tuple[int, int], tile: tuple[int, int], chunk_nnz: int | None = None
):
    """The :class:`Cell` (queries x tile) read from ``rows`` (``retrieval.files.MatrixRows``: ``indptr(a, b)``,
    ``rows(a, b, indptr)``, ``num_features``) and ``text_keys_of(a, b)`` (the text keys of rows ``a:b``):
    the tile's rows only, ``chunk_nnz`` non-zeros at a time (default :data:`SPILL_CHUNK`)."""
    (a0, a1), (b0, b1) = queries, tile
    diagonal = (a0, a1) == (b0, b1)
    if not diagonal and a1 > b0:
        raise ValueError(f"queries {queries} must be the tile {tile} or rows before it")
    num_features = rows.num_features
    t_ptr = rows.indptr(b0, b1)
    t_chunks = _row_chunks(t_ptr - t_ptr[0], chunk_nnz)
    # 1. the tile's features: counted (4 bytes a feature of the hash), renumbered in column order
    counts = np.zeros(num_features + 1, np.int32)
    for first, stop in t_chunks:
        _, ind, _ = _canonical(*rows.rows(b0 + first, b0 + stop, t_ptr[first : stop + 1]), num_features)
        _count_features(ind, counts)
    present = counts[1:] > 0
    renumber = np.cumsum(present, dtype=np.int32) - 1
    renumber[~present] = -1
    t_indptr = np.zeros(int(np.count_nonzero(present)) + 1, np.int64)
    np.cumsum(counts[1:][present], out=t_indptr[1:])
    del counts, present
    # 2. the tile's posting lists (coordinates 0:nb), a chunk of rows at a time
    nnz = int(t_indptr[-1])
    t_indices = np.empty(nnz, np.uint32)
    t_data = np.empty(nnz, np.float32)
    fill = t_indptr[:-1].copy()
    for first, stop in t_chunks:
        part = _canonical(*rows.rows(b0 + first, b0 + stop, t_ptr[first : stop + 1]), num_features)
        lp, li, ld = _query_layout(part[0], part[1], part[2], renumber)
        _scatter_postings(lp, li, ld, first, fill, t_indices, t_data)
    del fill
    keys = text_keys_of(b0, b1) if diagonal else np.concatenate([text_keys_of(a0, a1), text_keys_of(b0, b1)])
    return Cell(
        queries=(a0, a1),
        tile=(b0, b1),
        t_indptr=t_indptr,
        t_indices=t_indices,
        t_data=t_data,
        renumber=renumber,
        group=_duplicate_groups(keys, len(keys)),
    )


def read_cell_keys(
    rows, cell: Cell, k: int, threads: int | None = None, chunk_nnz: int | None = None
) -> list[tuple[int, np.ndarray]]:
    """:func:`cell_keys` of a :class:`Cell`, its query rows read from ``rows`` ``chunk_nnz`` non-zeros at a
    time (features renumbered as the tile's; those absent from it add nothing and are dropped):
    ``[(first_row, keys), ...]`` in global rows, the same bytes (a top-k merged over the chunks is the same
    set under the keys' total order)."""
    (a0, a1), (b0, b1) = cell.queries, cell.tile
    na = 0 if cell.diagonal else a1 - a0
    nb = b1 - b0
    tile_keys = np.zeros((nb, k), np.uint64)
    query_keys = np.zeros((a1 - a0 if not cell.diagonal else 0, k), np.uint64)
    q_ptr = rows.indptr(a0, a1)
    lo, hi = cell.t_indptr[:-1], cell.t_indptr[1:]
    for first, stop in _row_chunks(q_ptr - q_ptr[0], chunk_nnz):
        part = _canonical(*rows.rows(a0 + first, a0 + stop, q_ptr[first : stop + 1]), rows.num_features)
        q_indptr, q_indices, q_data = _query_layout(part[0], part[1], part[2], cell.renumber)
        del part
        local = np.arange(first, stop, dtype=np.int64)
        with _LAUNCH:
            previous = get_num_threads()
            if threads:
                set_num_threads(max(1, min(threads, previous)))
            try:
                lanes = max(1, min(len(local), get_num_threads()))
                keys = _pairs_block(
                    local,
                    q_indptr[:-1],
                    q_indptr[1:],
                    q_indices,
                    q_data,
                    lo,
                    hi,
                    cell.t_indices,
                    cell.t_data,
                    na,
                    na,
                    na + nb,
                    cell.group,
                    k,
                    lanes,
                )
            finally:
                set_num_threads(previous)
        merge_keys(tile_keys, keys[:nb])
        if not cell.diagonal:
            query_keys[first:stop] = keys[nb:]
    out = [(b0, _global_keys(tile_keys, na, a0, b0))]
    if not cell.diagonal:
        out.append((a0, _global_keys(query_keys, na, a0, b0)))
    return out


def _global_keys(keys: np.ndarray, na: int, a0: int, b0: int) -> np.ndarray:
    """Keys of local rows (queries ``0:na`` are rows ``a0..``, the tile's ``na..`` rows ``b0..``) in global
    rows: the order of the rows is kept, so the keys order the same."""
    filled = keys != 0
    low = np.uint64(0xFFFFFFFF)
    local = (low - (keys[filled] & low)).astype(np.int64)
    rows = np.where(local < na, a0 + local, b0 + local - na).astype(np.uint64)
    keys[filled] = (keys[filled] & ~low) | (low - rows)
    return keys
