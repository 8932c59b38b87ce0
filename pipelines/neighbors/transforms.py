"""The transforms of ``incoherent neighbors`` (imported by :func:`pipelines.neighbors.run`, so ``--help``
imports no Beam or numba)."""

from __future__ import annotations

import json
from collections.abc import Callable

import apache_beam as beam
import numpy as np
from apache_beam.io.filesystems import FileSystems
from apache_beam.utils import shared

from incoherent.pipelines.runtime import progress, storage
from incoherent.pipelines.runtime.tables import count
from incoherent.retrieval.featurize import document_text
from incoherent.retrieval.files import MatrixRows, NpzRanges, join
from incoherent.retrieval.index import DOCS_FILE, IDS_FILE, MATRIX_FILE, IndexParams, TfidfIndex
from incoherent.retrieval.tfidf import corpus_fingerprint, document_fingerprint
from incoherent.retrieval.topk import (
    _duplicate_groups,
    decode_keys,
    merge_keys,
    prepare,
    read_cell,
    read_cell_keys,
    topk_block,
    topk_rows,
)
from incoherent.schemas.records import InputError
from incoherent.sources.parquet import read_open

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


class _IndexRanges:
    """A cell worker's view of the index: ``index.json`` and the index files opened for reading by ranges
    (``tfidf.npz``, ``docs.npz``): nothing is loaded but what a cell reads (its two tiles' rows)."""

    def __init__(self, index_dir: str, params: IndexParams):
        meta, _ = TfidfIndex.load_meta(index_dir, params, storage.open_file)
        self.fingerprint = meta["corpus_fingerprint"]
        shape = (int(meta["num_docs"]), params.hash_size)
        matrix_path, docs_path = join(index_dir, MATRIX_FILE), join(index_dir, DOCS_FILE)
        self._files = []
        try:
            self.matrix = MatrixRows(self._open(matrix_path), matrix_path, shape)
            self.docs = NpzRanges(self._open(docs_path), docs_path)
        except BaseException:
            self.close()
            raise
        if self.docs.shape("text_key") != (shape[0],):
            raise InputError(f"{docs_path}: {self.docs.shape('text_key')} text keys for {shape[0]} documents")

    def _open(self, path: str):
        try:
            f = storage.open_seekable(path)
        except FileNotFoundError:
            raise InputError(
                f"{path}: missing index file (rebuild the index with `incoherent index`)"
            ) from None
        self._files.append(f)
        return f

    def text_keys(self, first: int, stop: int) -> np.ndarray:
        return self.docs.read("text_key", first, stop).astype(np.uint64)

    def close(self) -> None:
        for f in self._files:
            f.close()
        self._files = []


class TopKCells(beam.DoFn):
    """A cell ``(queries, tile)`` of the grid (:func:`retrieval.topk.grid`) -> ``(first_row, keys)``: the top-k
    keys its pairs give the tile's rows and the queries' rows (raw uint64 bytes, merged by
    :class:`MergeKeys`). The worker reads the rows of the cell's two tiles from the index file by byte range
    and holds only them while it scores the cell (:func:`retrieval.topk.read_cell`), never the matrix."""

    def __init__(self, index_dir: str, params: IndexParams, k: int, threads: int, total: int):
        self._index_dir, self._params, self._k, self._threads = index_dir, params, k, threads
        self._total = total

    def setup(self):
        self._ranges = _IndexRanges(self._index_dir, self._params)

    def teardown(self):
        ranges = getattr(self, "_ranges", None)
        if ranges is not None:
            ranges.close()

    def process(self, cell, docs_fingerprint):
        ranges = self._ranges
        if docs_fingerprint != ranges.fingerprint:
            raise InputError(
                f"{self._index_dir}: index was built from other documents (index corpus fingerprint "
                f"{ranges.fingerprint}, documents {docs_fingerprint}); rebuild it with `incoherent index`"
            )
        queries, tile = (tuple(part) for part in cell)
        data = read_cell(ranges.matrix, ranges.text_keys, queries, tile)
        for first, keys in read_cell_keys(ranges.matrix, data, self._k, threads=self._threads):
            yield first, np.ascontiguousarray(keys).tobytes()
        del data
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


class _RowFacts:
    """What :class:`CellRows` needs of every row: its id (``ids.json``), whether it is a zero vector (the
    matrix's ``indptr`` alone) and whether its text occurs more than once (``docs.npz``); not the matrix."""

    def __init__(self, index_dir: str, params: IndexParams):
        meta, _ = TfidfIndex.load_meta(index_dir, params, storage.open_file)
        num_docs = int(meta["num_docs"])
        ids_path = join(index_dir, IDS_FILE)
        try:
            with storage.open_file(ids_path) as f:
                self.ids = json.loads(f.read().decode("utf-8"))
        except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise InputError(f"{ids_path}: unreadable ({exc})") from None
        if len(self.ids) != num_docs:
            raise InputError(f"{ids_path}: {len(self.ids)} ids for {num_docs} documents")
        ranges = _IndexRanges(index_dir, params)
        try:
            self.zero = np.diff(ranges.matrix.indptr(0, num_docs)) == 0
            self.duplicated = _duplicate_groups(ranges.text_keys(0, num_docs), num_docs) >= 0
        finally:
            ranges.close()


class CellRows(beam.DoFn):
    """``(first_row, merged keys)`` -> one ``NEIGHBORS_SCHEMA`` row per row of the run."""

    def __init__(self, index_dir: str, params: IndexParams, k: int):
        self._index_dir, self._params, self._k = index_dir, params, k
        self._shared = shared.Shared()

    def setup(self):
        index_dir, params = self._index_dir, self._params
        self._facts = self._shared.acquire(lambda: _RowFacts(index_dir, params), tag=index_dir)

    def process(self, element):
        first, value = element
        facts, k = self._facts, self._k
        cols, scores = decode_keys(np.frombuffer(value, np.uint64).reshape(-1, k))
        for i in range(len(cols)):
            row = first + i
            n = int(np.count_nonzero(cols[i] >= 0))
            yield neighbor_row(
                facts.ids,
                row,
                cols[i, :n],
                scores[i, :n],
                k,
                zero_vector=bool(facts.zero[row]),
                has_duplicates=bool(facts.duplicated[row]),
                tally=_count,
            )


def _count(name: str) -> None:
    count(STAGE, name)


def file_fingerprint(path: str) -> tuple[int, int]:
    """``(sum of document fingerprints mod 2**64, documents)`` of one documents Parquet file.

    One Beam element per file (not per document): the check reads two columns and never ships documents.
    """
    with FileSystems.open(path) as f:
        table = read_open(f, columns=["id", "sentences"])
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
            return (
                pbegin
                | "Cells" >> beam.Create(self._cells)
                | "SpreadCells" >> beam.Reshuffle()
                | "TopKCells"
                >> beam.ParDo(
                    TopKCells(self._index_dir, self._params, self._k, self._threads, len(self._cells)),
                    docs_fingerprint=fingerprint,
                )
                | "MergeKeys" >> beam.CombinePerKey(MergeKeys(self._k))
                | "Rows" >> beam.ParDo(CellRows(self._index_dir, self._params, self._k))
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
