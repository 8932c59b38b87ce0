"""``incoherent index DOCS_DIR --out INDEX_DIR``: DrQA hashed-bigram TF-IDF index of the documents.

Stages: read documents -> featurize batches of them (hashed n-gram counts, in parallel) -> each batch saved by
its worker as ``INDEX_DIR/_parts/part-<hash>.npz`` through Beam's filesystems, and document frequencies as a
``CombineGlobally`` over the per-document feature sets saved next to them. The pipeline's last step, on one
worker, assembles the TF-IDF matrix from the committed parts (listed in ``_parts/parts.json``), saves
``INDEX_DIR/{index.json, tfidf.npz, idf.npz, ids.json, docs.npz}`` (see :mod:`retrieval.index`) through the
same filesystems (local, gs://, s3://) and deletes the parts; the driver reads only ``index.json``. Only that
step holds the whole matrix, and nothing is written to a worker's local disk. Counters: ``index/documents``,
``index/empty_text``, ``index/zero_vector`` (no n-gram survives the stopword/punctuation filter, or all have
idf 0; from ``index.json``).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from incoherent.pipelines.commands import add_overwrite
from incoherent.retrieval.params import HASH_SIZE, NGRAM
from incoherent.schemas.records import InputError

if TYPE_CHECKING:
    from incoherent.retrieval.index import IndexParams


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("docs_dir", metavar="DOCS_DIR", help="output of `incoherent ingest ...`")
    parser.add_argument("--out", required=True, help="index directory (local, gs://, s3://)")
    parser.add_argument("--ngram", type=int, default=NGRAM, help=f"n-gram order (default: {NGRAM}, as DrQA)")
    parser.add_argument(
        "--hash-size",
        type=int,
        default=HASH_SIZE,
        help=f"number of hash buckets (default: 2**24 = {HASH_SIZE})",
    )
    add_overwrite(parser)


def check_params(ngram: int, hash_size: int) -> IndexParams:
    if not 1 <= ngram <= 3:
        raise InputError(f"--ngram: must be 1, 2 or 3, got {ngram}")
    if not 2 <= hash_size <= 2**31 - 1:
        raise InputError(f"--hash-size: must be between 2 and 2**31 - 1, got {hash_size}")
    from incoherent.retrieval.index import IndexParams

    return IndexParams(ngram=ngram, hash_size=hash_size)


def check_options(args: argparse.Namespace) -> IndexParams:
    """The checks of the flags that need no input (``build`` runs them on its config first); the parameters."""
    return check_params(args.ngram, args.hash_size)


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    from incoherent.pipelines.index.transforms import STAGE, BuildIndex, read_meta
    from incoherent.pipelines.runtime.run import print_report, run_pipeline
    from incoherent.pipelines.runtime.tables import ReadDocuments, document_files

    params = check_options(args)
    files = document_files(args.docs_dir)

    def build(pipeline):
        _ = (
            pipeline
            | "ReadDocuments" >> ReadDocuments(args.docs_dir, files)
            | "BuildIndex" >> BuildIndex(args.out, params, args.docs_dir)
        )

    def index_summary(_summary: dict) -> dict:
        meta = read_meta(args.out)  # the pipeline assembled and saved the index on a worker
        keys = ("num_docs", "num_zero_vector_docs", "num_features", "nnz", "corpus_fingerprint")
        counters = dict(_summary["counters"])
        counters[STAGE] = dict(
            sorted({**counters.get(STAGE, {}), "zero_vector": meta["num_zero_vector_docs"]}.items())
        )
        return {"index": {k: meta[k] for k in keys}, "counters": counters}

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
