"""``incoherent neighbors DOCS_DIR --index INDEX_DIR --k 10 --out DIR``: top-k similar documents of every document.

Writes ``OUT/neighbors/neighbors-*.parquet`` (``NEIGHBORS_SCHEMA``: ``id``, ``neighbors: [{id, score}]``, best
first), score = DrQA's ``x_q . x_d`` (see :mod:`retrieval.topk`). The query rows are cut into blocks; each
worker loads the index matrix once (``apache_beam.utils.shared.Shared``) and scores whole blocks with sparse
matrix products. The documents of DOCS_DIR must be the ones the index was built from (corpus fingerprint).

Counters: ``neighbors/queries``, ``neighbors/zero_vector`` (query without any n-gram of idf > 0: no
neighbours, never a neighbour), ``neighbors/no_neighbors``, ``neighbors/fewer_than_k``,
``neighbors/has_duplicates`` (queries whose exact-duplicate texts were excluded).
"""

from __future__ import annotations

import argparse

import apache_beam as beam
from apache_beam.utils import shared
from threadpoolctl import threadpool_limits

from pipelines.common import ReadDocuments, WriteTable, count, document_files, print_report, run_pipeline
from pipelines.index import check_params
from retrieval.featurize import HASH_SIZE, NGRAM, document_text
from retrieval.index import IndexParams, TfidfIndex, corpus_fingerprint, document_fingerprint
from retrieval.topk import DEFAULT_MEMORY_BYTES, block_size, blocks, prepare, topk_block
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
        "--hash-size", type=int, default=HASH_SIZE, help="hash buckets the index must have (2**24)"
    )
    parser.add_argument(
        "--memory-mb",
        type=int,
        default=DEFAULT_MEMORY_BYTES // 2**20,
        help="score memory per worker, sets the query block size (default: 512)",
    )
    parser.add_argument(
        "--block-rows", type=int, default=None, help="query rows per block (default: from --memory-mb)"
    )
    parser.add_argument("--overwrite", action="store_true", help="replace an existing output directory")


class _Loaded:
    """What a worker holds once: ids and the prepared matrix (weak-referenceable for ``Shared``)."""

    def __init__(self, index_dir: str, params: IndexParams):
        index = TfidfIndex.load(index_dir, expect=params)
        self.ids = index.ids
        self.fingerprint = index.meta["corpus_fingerprint"]
        self.scoring = prepare(index.matrix, index.text_keys)


class TopKBlocks(beam.DoFn):
    """``(start, stop)`` query rows -> one ``NEIGHBORS_SCHEMA`` row per query."""

    def __init__(self, index_dir: str, params: IndexParams, k: int):
        self._index_dir, self._params, self._k = index_dir, params, k
        self._shared = shared.Shared()

    def setup(self):
        index_dir, params = self._index_dir, self._params
        self._loaded = self._shared.acquire(lambda: _Loaded(index_dir, params), tag=index_dir)

    def process(self, block, docs_fingerprint):
        loaded = self._loaded
        if docs_fingerprint != loaded.fingerprint:
            raise InputError(
                f"{self._index_dir}: index was built from other documents (index corpus fingerprint "
                f"{loaded.fingerprint}, documents {docs_fingerprint}); rebuild it with `incoherent index`"
            )
        scoring, ids, k = loaded.scoring, loaded.ids, self._k
        zero = set(scoring.zero_rows.tolist()) if len(scoring.zero_rows) else set()
        # One BLAS thread per worker: workers are the parallelism; BLAS threads of several worker processes
        # on the same cores slow each other down (measured: 3-6x variance in the GEMM under contention).
        with threadpool_limits(limits=1, user_api="blas"):
            results = topk_block(scoring, block[0], block[1], k)
        for row, cols, scores in results:
            count(STAGE, "queries")
            if row in zero:
                count(STAGE, "zero_vector")
            if row in scoring.dup_groups:
                count(STAGE, "has_duplicates")
            if len(cols) == 0:
                count(STAGE, "no_neighbors")
            elif len(cols) < k:
                count(STAGE, "fewer_than_k")
            yield {
                "id": ids[row],
                "neighbors": [{"id": ids[c], "score": float(s)} for c, s in zip(cols, scores, strict=True)],
            }


def _fingerprint_of(doc: dict) -> int:
    return document_fingerprint(doc["id"], document_text(doc["sentences"] or []))


class CorpusFingerprint(beam.CombineFn):
    """Document fingerprints -> ``"<count>:<sum mod 2**64>"``, the corpus fingerprint an index records."""

    def create_accumulator(self):
        return 0, 0

    def add_input(self, accumulator, value):
        return (accumulator[0] + value) % 2**64, accumulator[1] + 1

    def merge_accumulators(self, accumulators):
        total, n = 0, 0
        for a_total, a_n in accumulators:
            total, n = (total + a_total) % 2**64, n + a_n
        return total, n

    def extract_output(self, accumulator):
        return corpus_fingerprint(*accumulator)


class Neighbors(beam.PTransform):
    """Documents -> neighbour rows, scored against the index in ``index_dir``."""

    def __init__(self, index_dir: str, params: IndexParams, k: int, ranges: list[tuple[int, int]]):
        super().__init__()
        self._index_dir, self._params, self._k, self._ranges = index_dir, params, k, ranges

    def expand(self, docs):
        fingerprint = (
            docs
            | "DocFingerprints" >> beam.Map(_fingerprint_of)
            | "CorpusFingerprint" >> beam.CombineGlobally(CorpusFingerprint())
        )
        return (
            docs.pipeline
            | "QueryBlocks" >> beam.Create(self._ranges)
            | "SpreadBlocks" >> beam.Reshuffle()
            | "TopK"
            >> beam.ParDo(
                TopKBlocks(self._index_dir, self._params, self._k),
                docs_fingerprint=beam.pvalue.AsSingleton(fingerprint),
            )
        )


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    params = check_params(args.ngram, args.hash_size)
    if args.k < 1:
        raise InputError(f"--k: must be >= 1, got {args.k}")
    if args.block_rows is not None and args.block_rows < 1:
        raise InputError(f"--block-rows: must be >= 1, got {args.block_rows}")
    if args.memory_mb < 1:
        raise InputError(f"--memory-mb: must be >= 1, got {args.memory_mb}")
    index = TfidfIndex.load(args.index, expect=params)  # metadata only: fail before any work
    files = document_files(args.docs_dir)
    step = args.block_rows or block_size(index.num_docs, args.memory_mb * 2**20)
    ranges = blocks(index.num_docs, step)

    def build(pipeline):
        docs = pipeline | "ReadDocuments" >> ReadDocuments(args.docs_dir, files)
        rows = docs | "Neighbors" >> Neighbors(args.index, params, args.k, ranges)
        _ = rows | "WriteNeighbors" >> WriteTable(args.out, "neighbors", split="neighbors")

    summary = run_pipeline(
        build,
        command="neighbors",
        out_dir=args.out,
        params={
            "docs_dir": args.docs_dir,
            "index": args.index,
            "k": args.k,
            "ngram": params.ngram,
            "hash_size": params.hash_size,
            "block_rows": step,
            "corpus_fingerprint": index.meta["corpus_fingerprint"],
        },
        beam_args=beam_args,
        overwrite=args.overwrite,
    )
    print_report(summary, args.out)
    return 0
