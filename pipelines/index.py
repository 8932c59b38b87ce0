"""``incoherent index DOCS_DIR --out INDEX_DIR``: DrQA hashed-bigram TF-IDF index of the documents.

Stages: read documents -> featurize batches of them (hashed n-gram counts, in parallel) -> document
frequencies as a ``CombineGlobally`` over the per-document feature sets (works on any runner) -> one writer builds the
TF-IDF matrix with the frequencies as a side input and saves ``INDEX_DIR/{index.json, tfidf.npz, idf.npz,
ids.json, docs.npz}`` (see :mod:`retrieval.index`). Counters: ``index/documents``, ``index/empty_text``,
``index/zero_vector`` (no n-gram survives the stopword/punctuation filter, or all have idf 0).
"""

from __future__ import annotations

import argparse

import apache_beam as beam
import numpy as np

from pipelines.common import ReadDocuments, count, document_files, print_report, run_pipeline
from retrieval.featurize import HASH_SIZE, NGRAM, document_text, feature_counts_batch
from retrieval.index import (
    IndexParams,
    TfidfIndex,
    corpus_fingerprint,
    document_fingerprint,
    merge_document_frequencies,
    text_key,
)
from schemas.records import InputError

STAGE = "index"
COMPACT_EVERY = 64


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("docs_dir", metavar="DOCS_DIR", help="output of `incoherent ingest ...`")
    parser.add_argument("--out", required=True, help="index directory (local)")
    parser.add_argument("--ngram", type=int, default=NGRAM, help=f"n-gram order (default: {NGRAM}, as DrQA)")
    parser.add_argument(
        "--hash-size",
        type=int,
        default=HASH_SIZE,
        help=f"number of hash buckets (default: 2**24 = {HASH_SIZE})",
    )
    parser.add_argument("--overwrite", action="store_true", help="replace an existing index directory")


def check_params(ngram: int, hash_size: int) -> IndexParams:
    if not 1 <= ngram <= 3:
        raise InputError(f"--ngram: must be 1, 2 or 3, got {ngram}")
    if not 2 <= hash_size <= 2**31 - 1:
        raise InputError(f"--hash-size: must be between 2 and 2**31 - 1, got {hash_size}")
    return IndexParams(ngram=ngram, hash_size=hash_size)


def featurize_batch(docs: list[dict], params: IndexParams) -> dict:
    """A batch of document rows -> their hashed n-gram counts as concatenated arrays.

    ``{"ids": [...], "lengths": int64[n], "features": int64[...], "counts": int64[...], "text_keys":
    uint64[n], "fingerprints": [int, ...]}``; document i owns ``lengths[i]`` consecutive entries of
    ``features``/``counts`` (sorted unique features). One element per batch keeps Beam's per-element cost
    (pickling a dict of small arrays per document) out of the index build.
    """
    ids, texts, keys, fingerprints = [], [], [], []
    for doc in docs:
        text = document_text(doc["sentences"] or [])
        ids.append(doc["id"])
        texts.append(text)
        keys.append(text_key(text))
        fingerprints.append(document_fingerprint(doc["id"], text))
        if not text.strip():
            count(STAGE, "empty_text")
    count(STAGE, "documents", len(docs))
    lengths, features, counts = feature_counts_batch(texts, params.hash_size, params.ngram)
    return {
        "ids": ids,
        "lengths": lengths,
        "features": features,
        "counts": counts,
        "text_keys": np.array(keys, np.uint64),
        "fingerprints": fingerprints,
    }


class DocumentFrequencies(beam.CombineFn):
    """Sum feature sets (one entry per document having the feature) into sorted ``(features, df)`` arrays."""

    def create_accumulator(self):
        return []

    def add_input(self, accumulator, features):
        accumulator.append(np.unique(features, return_counts=True))
        if len(accumulator) >= COMPACT_EVERY:
            accumulator[:] = [merge_document_frequencies(accumulator)]
        return accumulator

    def merge_accumulators(self, accumulators):
        return [merge_document_frequencies(part for acc in accumulators for part in acc)]

    def compact(self, accumulator):
        return [merge_document_frequencies(accumulator)]

    def extract_output(self, accumulator):
        return merge_document_frequencies(accumulator)


def write_index(out_dir: str, batches, df, params: IndexParams, docs_dir: str) -> dict:
    """Build the TF-IDF matrix of all featurized batches (rows sorted by id) and save the index."""
    ids: list[str] = []
    rows: list[tuple[np.ndarray, np.ndarray]] = []
    keys: list[np.ndarray] = []
    total = 0
    for batch in batches:
        ends = np.cumsum(batch["lengths"])
        starts = ends - batch["lengths"]
        ids.extend(batch["ids"])
        rows.extend((batch["features"][a:b], batch["counts"][a:b]) for a, b in zip(starts, ends, strict=True))
        keys.append(batch["text_keys"])
        total += sum(batch["fingerprints"])
    if not ids:
        raise InputError(f"{docs_dir}: no documents to index")
    order = sorted(range(len(ids)), key=ids.__getitem__)
    ids = [ids[i] for i in order]
    for a, b in zip(ids, ids[1:], strict=False):
        if a == b:
            raise InputError(f"{docs_dir}: duplicate document id {a!r}")
    text_keys = np.concatenate(keys)[order]
    index = TfidfIndex.from_rows(
        params=params,
        ids=ids,
        rows=[rows[i] for i in order],
        text_keys=text_keys,
        df_features=df[0],
        df_counts=df[1],
        fingerprint=corpus_fingerprint(total, len(ids)),
    )
    count(STAGE, "zero_vector", index.meta["num_zero_vector_docs"])
    index.save(out_dir)
    return index.meta


class BuildIndex(beam.PTransform):
    """Document rows -> index files in ``out_dir``; returns a PCollection with the index metadata."""

    def __init__(self, out_dir: str, params: IndexParams, docs_dir: str):
        super().__init__()
        self._out_dir, self._params, self._docs_dir = out_dir, params, docs_dir

    def expand(self, docs):
        params, docs_dir = self._params, self._docs_dir
        batches = (
            docs
            | "Batch" >> beam.BatchElements(min_batch_size=64, max_batch_size=2048)
            | "Featurize" >> beam.Map(featurize_batch, params=params)
        )
        df = (
            batches
            | "FeatureSets" >> beam.Map(_features_of)
            | "DocumentFrequencies" >> beam.CombineGlobally(DocumentFrequencies())
        )
        return (
            docs.pipeline
            | "IndexDir" >> beam.Create([self._out_dir])
            | "WriteIndex"
            >> beam.Map(
                write_index,
                batches=beam.pvalue.AsIter(batches),
                df=beam.pvalue.AsSingleton(df),
                params=params,
                docs_dir=docs_dir,
            )
        )


def _features_of(batch: dict) -> np.ndarray:
    """The features of a batch, each document's counted once (its features are unique)."""
    return batch["features"]


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    params = check_params(args.ngram, args.hash_size)
    if "://" in args.out:
        raise InputError(f"--out {args.out}: the index is written to a local directory")
    files = document_files(args.docs_dir)

    def build(pipeline):
        _ = (
            pipeline
            | "ReadDocuments" >> ReadDocuments(args.docs_dir, files)
            | "BuildIndex" >> BuildIndex(args.out, params, args.docs_dir)
        )

    def index_summary(_summary: dict) -> dict:
        meta = TfidfIndex.load(args.out, expect=params).meta
        keys = ("num_docs", "num_zero_vector_docs", "num_features", "nnz", "corpus_fingerprint")
        return {"index": {k: meta[k] for k in keys}}

    summary = run_pipeline(
        build,
        command="index",
        out_dir=args.out,
        params={"docs_dir": args.docs_dir, "ngram": params.ngram, "hash_size": params.hash_size},
        beam_args=beam_args,
        overwrite=args.overwrite,
        extra_summary=index_summary,
    )
    print_report(summary, args.out)
    info = summary["index"]
    print(
        f"{args.out}: {info['num_docs']:,} documents ({info['num_zero_vector_docs']:,} zero vectors), "
        f"{info['num_features']:,} features, {info['nnz']:,} non-zeros"
    )
    return 0
