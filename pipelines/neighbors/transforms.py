"""The transforms of ``incoherent neighbors`` (imported by :func:`pipelines.neighbors.run`, so ``--help``
imports no Beam or numba)."""

from __future__ import annotations

from collections.abc import Callable

import apache_beam as beam
import numpy as np
import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems
from apache_beam.utils import shared

from incoherent.pipelines.runtime import progress, storage
from incoherent.pipelines.runtime.tables import count
from incoherent.retrieval.featurize import document_text
from incoherent.retrieval.index import IndexParams, TfidfIndex
from incoherent.retrieval.tfidf import corpus_fingerprint, document_fingerprint
from incoherent.retrieval.topk import cell_keys, decode_keys, merge_keys, prepare, topk_block, topk_rows
from incoherent.schemas.records import InputError

STAGE = "neighbors"


class _Loaded:
    """What a worker holds once: ids and the prepared matrix (weak-referenceable for ``Shared``)."""

    def __init__(self, index_dir: str, params: IndexParams):
        index = TfidfIndex.load(index_dir, expect=params, opener=storage.open_file)
        self.ids = index.ids
        self.fingerprint = index.meta["corpus_fingerprint"]
        # The query layout goes to a local temporary file a chunk at a time and each block reads its own rows;
        # the matrix is emptied once that file is written, then the posting lists are built from it: the
        # worker holds one layout (8 bytes per non-zero), never the matrix and a layout together.
        self.scoring = prepare(index.matrix, index.text_keys, consume=True, spill=True)


def neighbor_row(
    ids: list[str],
    row: int,
    cols,
    scores,
    k: int,
    *,
    zero_vector: bool,
    has_duplicates: bool,
    tally: Callable[[str], None],
) -> dict:
    """The ``NEIGHBORS_SCHEMA`` row of query ``row`` (neighbour rows ``cols`` with ``scores``, best first),
    counted: ``queries``, ``zero_vector``, ``has_duplicates``, ``no_neighbors`` or ``fewer_than_k``.

    >>> neighbor_row(["a", "b"], 0, [1], [0.5], 10, zero_vector=False, has_duplicates=False, tally=print)
    queries
    fewer_than_k
    {'id': 'a', 'neighbors': [{'id': 'b', 'score': 0.5}]}
    """
    tally("queries")
    if zero_vector:
        tally("zero_vector")
    if has_duplicates:
        tally("has_duplicates")
    if len(cols) == 0:
        tally("no_neighbors")
    elif len(cols) < k:
        tally("fewer_than_k")
    return {
        "id": ids[row],
        "neighbors": [{"id": ids[c], "score": float(s)} for c, s in zip(cols, scores, strict=True)],
    }


class TopKBlocks(beam.DoFn):
    """``(start, stop)`` query rows -> one ``NEIGHBORS_SCHEMA`` row per query."""

    def __init__(
        self, index_dir: str, params: IndexParams, k: int, threads: int, query_rows: np.ndarray | None = None
    ):
        self._index_dir, self._params, self._k, self._threads = index_dir, params, k, threads
        # None: rows start:stop of the index; else positions start:stop of these rows
        self._query_rows = query_rows
        self._total = None if query_rows is None else len(query_rows)
        self._shared = shared.Shared()

    def setup(self):
        index_dir, params = self._index_dir, self._params
        self._loaded = self._shared.acquire(lambda: _Loaded(index_dir, params), tag=index_dir)
        if self._total is None:
            self._total = len(self._loaded.ids)

    def process(self, block, docs_fingerprint):
        loaded = self._loaded
        if docs_fingerprint != loaded.fingerprint:
            raise InputError(
                f"{self._index_dir}: index was built from other documents (index corpus fingerprint "
                f"{loaded.fingerprint}, documents {docs_fingerprint}); rebuild it with `incoherent index`"
            )
        scoring, ids, k = loaded.scoring, loaded.ids, self._k
        zero = set(scoring.zero_rows.tolist()) if len(scoring.zero_rows) else set()
        if self._query_rows is None:
            results = topk_block(scoring, block[0], block[1], k, self._threads)
        else:
            results = topk_rows(scoring, self._query_rows[block[0] : block[1]], k, self._threads)
        progress.advance("neighbors: documents", len(results), total=self._total)
        for row, cols, scores in results:
            yield neighbor_row(
                ids,
                row,
                cols,
                scores,
                k,
                zero_vector=row in zero,
                has_duplicates=scoring.has_duplicates(row),
                tally=_count,
            )


class TopKCells(beam.DoFn):
    """A cell ``(queries, tile)`` of the grid (:func:`retrieval.topk.grid`) -> ``(first_row, keys)``: the top-k
    keys its pairs give the tile's rows and the queries' rows (raw uint64 bytes, merged by
    :class:`MergeKeys`)."""

    def __init__(self, index_dir: str, params: IndexParams, k: int, threads: int, total: int, handle):
        self._index_dir, self._params, self._k, self._threads = index_dir, params, k, threads
        self._total = total
        self._shared = handle  # the handle of CellRows: a worker loads the index once for both

    def setup(self):
        index_dir, params = self._index_dir, self._params
        self._loaded = self._shared.acquire(lambda: _Loaded(index_dir, params), tag=index_dir)

    def process(self, cell, docs_fingerprint):
        loaded = self._loaded
        if docs_fingerprint != loaded.fingerprint:
            raise InputError(
                f"{self._index_dir}: index was built from other documents (index corpus fingerprint "
                f"{loaded.fingerprint}, documents {docs_fingerprint}); rebuild it with `incoherent index`"
            )
        queries, tile = cell
        for first, keys in cell_keys(loaded.scoring, queries, tile, self._k, threads=self._threads):
            yield first, np.ascontiguousarray(keys).tobytes()
        progress.advance("neighbors: cells", 1, total=self._total)


class MergeKeys(beam.CombineFn):
    """The top-k keys of a run of rows from every cell that gave them some: merged (the order of the cells
    does not matter: a top-k of keys is a set under a total order)."""

    def __init__(self, k: int):
        self._k = k

    def create_accumulator(self):
        return None

    def add_input(self, accumulator, value):
        keys = np.frombuffer(value, np.uint64).reshape(-1, self._k)
        if accumulator is None:
            return keys.copy()
        merge_keys(accumulator, keys)
        return accumulator

    def merge_accumulators(self, accumulators):
        merged = None
        for keys in accumulators:
            if keys is None:
                continue
            if merged is None:
                merged = keys.copy()
            else:
                merge_keys(merged, keys)
        return merged

    def extract_output(self, accumulator):
        return accumulator.tobytes()


class CellRows(beam.DoFn):
    """``(first_row, merged keys)`` -> one ``NEIGHBORS_SCHEMA`` row per row of the run."""

    def __init__(self, index_dir: str, params: IndexParams, k: int, handle):
        self._index_dir, self._params, self._k = index_dir, params, k
        self._shared = handle

    def setup(self):
        index_dir, params = self._index_dir, self._params
        self._loaded = self._shared.acquire(lambda: _Loaded(index_dir, params), tag=index_dir)

    def process(self, element):
        first, value = element
        scoring, ids, k = self._loaded.scoring, self._loaded.ids, self._k
        cols, scores = decode_keys(np.frombuffer(value, np.uint64).reshape(-1, k))
        zero = set(scoring.zero_rows.tolist()) if len(scoring.zero_rows) else set()
        for i in range(len(cols)):
            row = first + i
            n = int(np.count_nonzero(cols[i] >= 0))
            yield neighbor_row(
                ids,
                row,
                cols[i, :n],
                scores[i, :n],
                k,
                zero_vector=row in zero,
                has_duplicates=scoring.has_duplicates(row),
                tally=_count,
            )


def _count(name: str) -> None:
    count(STAGE, name)


def file_fingerprint(path: str) -> tuple[int, int]:
    """``(sum of document fingerprints mod 2**64, documents)`` of one documents Parquet file.

    One Beam element per file (not per document): the check reads two columns and never ships documents.
    """
    with FileSystems.open(path) as f:
        table = pq.read_table(f, columns=["id", "sentences"])
    total = 0
    for doc_id, sentences in zip(
        table.column("id").to_pylist(), table.column("sentences").to_pylist(), strict=True
    ):
        total += document_fingerprint(doc_id, document_text(sentences or []))
    return total % 2**64, table.num_rows


class CorpusFingerprint(beam.CombineFn):
    """Per-file ``(sum, count)`` -> ``"<count>:<sum mod 2**64>"``, the corpus fingerprint an index records."""

    def create_accumulator(self):
        return 0, 0

    def add_input(self, accumulator, value):
        return (accumulator[0] + value[0]) % 2**64, accumulator[1] + value[1]

    def merge_accumulators(self, accumulators):
        total, n = 0, 0
        for a_total, a_n in accumulators:
            total, n = (total + a_total) % 2**64, n + a_n
        return total, n

    def extract_output(self, accumulator):
        return corpus_fingerprint(*accumulator)


class Neighbors(beam.PTransform):
    """Neighbour rows of the documents in ``files``, scored against the index in ``index_dir``."""

    def __init__(
        self,
        files: list[str],
        index_dir: str,
        params: IndexParams,
        k: int,
        ranges: list[tuple[int, int]],
        threads: int = 0,
        query_rows: np.ndarray | None = None,
        cells: list | None = None,
    ):
        super().__init__()
        self._cells = cells
        self._files = files
        self._index_dir, self._params, self._k, self._ranges = index_dir, params, k, ranges
        self._threads, self._query_rows = threads, query_rows

    def expand(self, pbegin):
        fingerprint = (
            pbegin
            | "DocumentFiles" >> beam.Create(self._files)
            | "FileFingerprints" >> beam.Map(file_fingerprint)
            | "CorpusFingerprint" >> beam.CombineGlobally(CorpusFingerprint())
        )
        fingerprint = beam.pvalue.AsSingleton(fingerprint)
        if self._cells is not None:
            # every pair once: the cells of the grid, each row's top-k merged over the cells that gave it some
            handle = shared.Shared()
            return (
                pbegin
                | "Cells" >> beam.Create(self._cells)
                | "SpreadCells" >> beam.Reshuffle()
                | "TopKCells"
                >> beam.ParDo(
                    TopKCells(
                        self._index_dir, self._params, self._k, self._threads, len(self._cells), handle
                    ),
                    docs_fingerprint=fingerprint,
                )
                | "MergeKeys" >> beam.CombinePerKey(MergeKeys(self._k))
                | "Rows" >> beam.ParDo(CellRows(self._index_dir, self._params, self._k, handle))
            )
        return (
            pbegin
            | "QueryBlocks" >> beam.Create(self._ranges)
            | "SpreadBlocks" >> beam.Reshuffle()
            | "TopK"
            >> beam.ParDo(
                TopKBlocks(self._index_dir, self._params, self._k, self._threads, self._query_rows),
                docs_fingerprint=fingerprint,
            )
        )
