"""``incoherent neighbors DOCS_DIR --index INDEX_DIR --k 10 --out DIR``: top-k similar documents of every document.

Writes ``OUT/neighbors/neighbors-*.parquet`` (``NEIGHBORS_SCHEMA``: ``id``, ``neighbors: [{id, score}]``, best
first), score = DrQA's ``x_q . x_d`` (see :mod:`retrieval.topk`). Every document a query: the documents are
cut into tiles (``--block-rows``, default: a tile's scores fit in half the L2 cache) and a Beam element is a
cell of the grid, a tile against itself or an earlier tile, whose pairs (q < d) are each scored once and offered
to both documents' top-k; each row's top-k is merged over the cells by key. Each worker loads the index matrix
once (``apache_beam.utils.shared.Shared``), keeps its posting lists in memory and its rows in a local temporary
file (``TMPDIR``; 8 bytes per non-zero), and scores a cell with a compiled kernel on ``--threads`` threads. The
documents of DOCS_DIR must be the ones the index was built from (corpus fingerprint).

``--queries DOCS_DIR_OR_ID_LIST`` computes the neighbours of those documents only (against the whole index):
a documents directory, or a text file with one id per line (e.g. the sample of ``incoherent intruders
--sample``). A query's neighbours are exactly the ones the full run gives it.

Counters: ``neighbors/queries``, ``neighbors/zero_vector`` (query without any n-gram of idf > 0: no
neighbours, never a neighbour), ``neighbors/no_neighbors``, ``neighbors/fewer_than_k``,
``neighbors/has_duplicates`` (queries whose exact-duplicate texts were excluded).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from incoherent.pipelines.commands import add_overwrite
from incoherent.pipelines.index.command import check_params
from incoherent.pipelines.runtime import storage
from incoherent.pipelines.runtime.threads import available_cores
from incoherent.retrieval.params import HASH_SIZE, NGRAM
from incoherent.schemas.records import InputError

if TYPE_CHECKING:
    import numpy as np

    from incoherent.retrieval.index import IndexParams


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("docs_dir", metavar="DOCS_DIR", help="the documents the index was built from")
    parser.add_argument("--index", required=True, help="output of `incoherent index`")
    parser.add_argument("--k", type=int, default=10, help="neighbours per document (default: 10)")
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument(
        "--ngram",
        type=int,
        default=None,
        help=f"n-gram order the index must have (default: the index's own, from its index.json; {NGRAM} "
        "unless `incoherent index --ngram` said otherwise)",
    )
    parser.add_argument(
        "--hash-size",
        type=int,
        default=None,
        help=f"hash buckets the index must have (default: the index's own, from its index.json; 2**24 = "
        f"{HASH_SIZE} unless `incoherent index --hash-size` said otherwise)",
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
        help="documents per tile (every document a query: a Beam element is a tile against itself or an "
        "earlier tile; default: a tile's scores fit in half the L2 cache) or query rows per Beam element "
        "(--queries; default: from their number)",
    )
    parser.add_argument(
        "--queries",
        metavar="DOCS_DIR|ID_LIST",
        help="only these documents are queries (a documents directory or a file of ids, one per line); "
        "default: every document",
    )
    add_overwrite(parser)


def scoring_threads(requested: int, beam_args: list[str]) -> tuple[int, int]:
    """``(threads per worker, workers)`` for ``--threads`` (0 = auto) and Beam's flags.

    The in-process runner has one worker: it gets every core (so does ``multi_threading``, whose worker threads
    take turns at the kernel). ``--direct_running_mode=multi_processing`` with W workers: cores / W each.
    Distributed runners start a worker process per core: one thread each, and many small blocks.
    """
    from apache_beam.options.pipeline_options import DirectOptions, PipelineOptions, StandardOptions

    from incoherent.pipelines.runtime.options import is_local_runner

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
    from apache_beam.io.filesystems import FileSystems

    from incoherent.pipelines.runtime.tables import list_tables, read_ids

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
    import numpy as np

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


# What this stage must share with an earlier one (``incoherent build`` checks a config against it before any
# work): flag key -> the stage whose output says it (the index's index.json, read by ``run``, never assumed).
AGREE_WITH = {"ngram": "index", "hash_size": "index"}


def check_options(args: argparse.Namespace) -> None:
    """The checks of the flags that need no input (``build`` runs them on its config first)."""
    check_params(
        NGRAM if args.ngram is None else args.ngram, HASH_SIZE if args.hash_size is None else args.hash_size
    )
    if args.k < 1:
        raise InputError(f"--k: must be >= 1, got {args.k}")
    if args.k > MAX_K:
        raise InputError(f"--k: at most {MAX_K:,} neighbours per document, got {args.k:,}")
    if args.block_rows is not None and args.block_rows < 1:
        raise InputError(f"--block-rows: must be >= 1, got {args.block_rows}")
    if args.threads < 0:
        raise InputError(f"--threads: must be >= 0 (0 = auto), got {args.threads}")


def check_agreement(args: argparse.Namespace, params: IndexParams, index_dir: str) -> None:
    """``--ngram``/``--hash-size``, when given, must be those of the index in ``index_dir`` (``params``, from
    its ``index.json``): one line naming the flag and the index's value otherwise."""
    for key in AGREE_WITH:
        requested = getattr(args, key)
        if requested is not None and requested != getattr(params, key):
            flag = "--" + key.replace("_", "-")
            raise InputError(
                f"{flag} {requested}: the index {index_dir} was built with {key} {getattr(params, key)} "
                f"(its index.json); leave {flag} out to use the index's"
            )


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    from incoherent.pipelines.neighbors.transforms import Neighbors
    from incoherent.pipelines.runtime.run import print_report, run_pipeline
    from incoherent.pipelines.runtime.tables import WriteTable, document_files
    from incoherent.retrieval.index import TfidfIndex
    from incoherent.retrieval.topk import block_size, blocks, grid, tile_rows_for_cache

    check_options(args)
    args.index = storage.absolute(args.index)
    index = TfidfIndex.load(args.index, opener=storage.open_file)  # its own parameters; no matrix: fail early
    params = index.params
    check_agreement(args, params, args.index)
    files = document_files(args.docs_dir)
    threads, workers = scoring_threads(args.threads, beam_args)
    query_rows = None
    num_queries = index.num_docs
    if args.queries:
        query_rows = query_rows_of(read_query_ids(args.queries), index.ids)
        num_queries = len(query_rows)
    cells = None
    if query_rows is None:  # every document: each pair once, in tiles (a tile's accumulator fits in L2)
        step = args.block_rows or tile_rows_for_cache()
        ranges, cells = [], grid(index.num_docs, step)
    else:
        step = args.block_rows or block_size(num_queries, workers)
        ranges = blocks(num_queries, step)
    k = clamp_k(args.k, index.num_docs)
    if k < args.k:
        print(
            f"neighbors: --k {args.k:,} is more than the {index.num_docs - 1:,} other documents; using k = {k:,}"
        )

    def build(pipeline):
        rows = pipeline | "Neighbors" >> Neighbors(
            files, args.index, params, k, ranges, threads, query_rows, cells
        )
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
