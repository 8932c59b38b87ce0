"""``incoherent neighbors DOCS_DIR --index INDEX_DIR --k 10 --out DIR``: top-k similar documents of every document.

Writes ``OUT/neighbors/neighbors-*.parquet`` (``NEIGHBORS_SCHEMA``: ``id``, ``neighbors: [{id, score}]``, best
first), score = DrQA's ``x_q . x_d`` (see :mod:`retrieval.topk`). The query rows are cut into blocks (one Beam
element each); each worker loads the index matrix once (``apache_beam.utils.shared.Shared``), keeps its posting
lists in memory and its rows in a local temporary file (``TMPDIR``; 8 bytes per non-zero), and scores a block
with a compiled kernel on ``--threads`` threads. The documents of DOCS_DIR must be the ones the index was built from (corpus fingerprint).

``--queries DOCS_DIR_OR_ID_LIST`` computes the neighbours of those documents only (against the whole index):
a documents directory, or a text file with one id per line (e.g. the sample of ``incoherent intruders
--sample``). A query's neighbours are exactly the ones the full run gives it.

Counters: ``neighbors/queries``, ``neighbors/zero_vector`` (query without any n-gram of idf > 0: no
neighbours, never a neighbour), ``neighbors/no_neighbors``, ``neighbors/fewer_than_k``,
``neighbors/has_duplicates`` (queries whose exact-duplicate texts were excluded).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import apache_beam as beam
import numpy as np
import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import DirectOptions, PipelineOptions, StandardOptions
from apache_beam.utils import shared

from pipelines.commands import add_overwrite
from pipelines.index import check_params
from pipelines.runtime import progress, storage
from pipelines.runtime.options import is_local_runner
from pipelines.runtime.run import print_report, run_pipeline
from pipelines.runtime.tables import WriteTable, count, document_files, list_tables, read_ids
from pipelines.runtime.threads import available_cores
from retrieval.featurize import HASH_SIZE, NGRAM, document_text
from retrieval.index import IndexParams, TfidfIndex, corpus_fingerprint, document_fingerprint
from retrieval.topk import block_size, blocks, prepare, topk_block, topk_rows
from schemas.records import InputError

STAGE = "neighbors"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("docs_dir", metavar="DOCS_DIR", help="the documents the index was built from")
    parser.add_argument("--index", required=True, help="output of `incoherent index`")
    parser.add_argument("--k", type=int, default=10, help="neighbours per document (default: 10)")
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument(
        "--ngram", type=int, default=NGRAM, help=f"n-gram order the index must have ({NGRAM})"
    )
    parser.add_argument(
        "--hash-size",
        type=int,
        default=HASH_SIZE,
        help=f"hash buckets the index must have (default: 2**24 = {HASH_SIZE})",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=0,
        help="scoring threads per worker (default 0 = auto: all cores with the in-process runner, cores / "
        "workers with --direct_running_mode=multi_processing, 1 on other runners, which run a worker per core)",
    )
    parser.add_argument(
        "--block-rows",
        type=int,
        default=None,
        help="query rows per Beam element (default: from the corpus size)",
    )
    parser.add_argument(
        "--queries",
        metavar="DOCS_DIR|ID_LIST",
        help="only these documents are queries (a documents directory or a file of ids, one per line); "
        "default: every document",
    )
    add_overwrite(parser)


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
    ):
        super().__init__()
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
        return (
            pbegin
            | "QueryBlocks" >> beam.Create(self._ranges)
            | "SpreadBlocks" >> beam.Reshuffle()
            | "TopK"
            >> beam.ParDo(
                TopKBlocks(self._index_dir, self._params, self._k, self._threads, self._query_rows),
                docs_fingerprint=beam.pvalue.AsSingleton(fingerprint),
            )
        )


def scoring_threads(requested: int, beam_args: list[str]) -> tuple[int, int]:
    """``(threads per worker, workers)`` for ``--threads`` (0 = auto) and Beam's flags.

    The in-process runner has one worker: it gets every core (so does ``multi_threading``, whose worker threads
    take turns at the kernel). ``--direct_running_mode=multi_processing`` with W workers: cores / W each.
    Distributed runners start a worker process per core: one thread each, and many small blocks.
    """
    options = PipelineOptions(beam_args)
    direct = options.view_as(DirectOptions)
    cores = available_cores()
    if not is_local_runner(options.view_as(StandardOptions).runner):
        auto, workers = 1, 64
    elif direct.direct_running_mode == "multi_processing":
        workers = direct.direct_num_workers or cores  # Beam: 0 means one worker per core
        auto = max(1, cores // workers)
    else:
        auto, workers = cores, 1
    return (requested or auto), workers


def read_query_ids(value: str) -> list[str]:
    """The ids named by ``--queries``: a documents directory (its ``id`` column) or a file of ids, one a line."""
    if not FileSystems.exists(value):
        raise InputError(f"--queries {value}: no such file or directory")
    files = list_tables(value, "documents-")
    if files:
        return list(read_ids(files))
    try:
        with FileSystems.open(value) as f:
            text = f.read().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(
            f"--queries {value}: neither a documents directory nor a text file of ids ({exc})"
        ) from None
    return [line.strip() for line in text.splitlines() if line.strip()]


def query_rows_of(ids: list[str], index_ids: list[str], option: str = "--queries") -> np.ndarray:
    """Index rows of ``ids`` in row order (duplicates once); an id the index does not hold is an error."""
    row_of = {doc_id: row for row, doc_id in enumerate(index_ids)}
    missing = sorted({doc_id for doc_id in ids if doc_id not in row_of})
    if missing:
        raise InputError(
            f"{option}: {len(missing):,} ids are not documents of the index, e.g. {missing[:3]} "
            "(queries must come from the indexed documents)"
        )
    return np.array(sorted({row_of[doc_id] for doc_id in ids}), dtype=np.int64)


MAX_K = 100_000  # neighbours per document; more is a typo (the output would hold k rows per document)


def clamp_k(k: int, num_docs: int) -> int:
    """``k`` bounded by the other documents of the index (at least 1).

    >>> clamp_k(10, 1000), clamp_k(30_000_000, 23), clamp_k(5, 1)
    (10, 22, 1)
    """
    return max(1, min(k, num_docs - 1))


def check_options(args: argparse.Namespace) -> IndexParams:
    """The checks of the flags that need no input (``build`` runs them on its config first); the index
    parameters."""
    params = check_params(args.ngram, args.hash_size)
    if args.k < 1:
        raise InputError(f"--k: must be >= 1, got {args.k}")
    if args.k > MAX_K:
        raise InputError(f"--k: at most {MAX_K:,} neighbours per document, got {args.k:,}")
    if args.block_rows is not None and args.block_rows < 1:
        raise InputError(f"--block-rows: must be >= 1, got {args.block_rows}")
    if args.threads < 0:
        raise InputError(f"--threads: must be >= 0 (0 = auto), got {args.threads}")
    return params


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    params = check_options(args)
    args.index = storage.absolute(args.index)
    index = TfidfIndex.load(args.index, expect=params, opener=storage.open_file)  # no matrix: fail early
    files = document_files(args.docs_dir)
    threads, workers = scoring_threads(args.threads, beam_args)
    query_rows = None
    num_queries = index.num_docs
    if args.queries:
        query_rows = query_rows_of(read_query_ids(args.queries), index.ids)
        num_queries = len(query_rows)
    step = args.block_rows or block_size(num_queries, workers)
    ranges = blocks(num_queries, step)
    k = clamp_k(args.k, index.num_docs)
    if k < args.k:
        print(
            f"neighbors: --k {args.k:,} is more than the {index.num_docs - 1:,} other documents; using k = {k:,}"
        )

    def build(pipeline):
        rows = pipeline | "Neighbors" >> Neighbors(files, args.index, params, k, ranges, threads, query_rows)
        _ = rows | "WriteNeighbors" >> WriteTable(args.out, "neighbors", split="neighbors")

    summary = run_pipeline(
        build,
        command="neighbors",
        out_dir=args.out,
        params={
            "docs_dir": args.docs_dir,
            "index": args.index,
            "k": k,
            **({"k_requested": args.k} if k < args.k else {}),
            "ngram": params.ngram,
            "hash_size": params.hash_size,
            "block_rows": step,
            "threads_per_worker": threads,
            "corpus_fingerprint": index.meta["corpus_fingerprint"],
            **({"queries": args.queries, "num_queries": num_queries} if args.queries else {}),
        },
        beam_args=beam_args,
        overwrite=args.overwrite,
    )
    print_report(summary, args.out)
    return 0
