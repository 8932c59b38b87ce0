"""``incoherent shuffle DOCS_DIR --out DIR``: k-block shuffled corpora, ``OUT/shuffle-<source>/<split>-*.parquet``.

This module imports Beam only in :func:`run`; the transforms are in :mod:`pipelines.shuffle.transforms`.
"""

from __future__ import annotations

import argparse

from incoherent.pipelines.commands import add_overwrite, list_flag, list_item
from incoherent.schemas.records import InputError


def _block_sizes(values: list[int]) -> list[int]:
    sizes = sorted(set(values))
    if not sizes or sizes[0] < 1:
        raise InputError(f"--block-sizes: block sizes must be >= 1, got {' '.join(map(str, values))}")
    return sizes


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("docs_dir", metavar="DOCS_DIR", help="output of `incoherent ingest ...`")
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument(
        "--block-sizes",
        nargs="+",
        type=list_item(int, "--block-sizes"),
        default=[1, 2, 3, 4, 5],
        metavar="K",
        help="block sizes k (default: 1 2 3 4 5)",
    )
    parser.add_argument(
        "--max-sentences", type=int, default=20, help="truncate documents to this many sentences (20)"
    )
    parser.add_argument(
        "--permutations",
        type=int,
        default=1,
        help="distinct block orders per document and k (default: 1; fewer when fewer exist)",
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    parser.add_argument(
        "--test-fraction",
        type=float,
        default=1.0,
        help="share of documents in the test split (default: 1.0, zero-shot)",
    )
    parser.add_argument(
        "--validation-fraction", type=float, default=0.0, help="share in validation (default: 0)"
    )
    list_flag(
        parser,
        "--sample",
        metavar="[SOURCE=]N|FRACTION",
        help="shuffle only a stable sample by hash of (seed, id): N documents or a fraction (default: all)",
    )
    add_overwrite(parser)


MAX_PERMUTATIONS = 1000


def check_options(args: argparse.Namespace) -> list[int]:
    """The checks of the flags that need no input (``build`` runs them on its config first); the block sizes."""
    sizes = _block_sizes(args.block_sizes)
    if args.max_sentences < 2:
        raise InputError(f"--max-sentences: must be >= 2, got {args.max_sentences}")
    if args.permutations < 1:
        raise InputError(f"--permutations: must be >= 1, got {args.permutations}")
    if (
        args.permutations > MAX_PERMUTATIONS
    ):  # rows per document and block size: more is a typo (it ran for ever)
        raise InputError(
            f"--permutations: at most {MAX_PERMUTATIONS:,} shuffles per document and block size, got "
            f"{args.permutations:,}"
        )
    fractions = (args.test_fraction, args.validation_fraction)
    if min(fractions) < 0 or sum(fractions) > 1:
        raise InputError("--test-fraction/--validation-fraction: must be >= 0 and sum to at most 1")
    return sizes


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    import apache_beam as beam

    from incoherent.pipelines.runtime.run import print_report, run_pipeline
    from incoherent.pipelines.runtime.tables import (
        ReadDocuments,
        WriteRejected,
        WriteTable,
        document_files,
        source_of_file,
    )
    from incoherent.pipelines.sampling import parse_samples, sample_thresholds
    from incoherent.pipelines.shuffle.transforms import STAGE, ShuffleDocuments, sampled

    sizes = check_options(args)
    fractions = {"test": args.test_fraction, "validation": args.validation_fraction}
    by_source: dict[str, list[str]] = {}
    for path in document_files(args.docs_dir):
        by_source.setdefault(source_of_file(path), []).append(path)

    samples = parse_samples(args.sample, "--sample", sorted(by_source))
    thresholds = sample_thresholds(samples, [f for files in by_source.values() for f in files], args.seed)

    def build(p):
        rejected_parts = []
        for source, files in sorted(by_source.items()):
            docs = p | f"Read[{source}]" >> ReadDocuments(args.docs_dir, files)
            if source in thresholds:
                docs = docs | f"Sample[{source}]" >> beam.Filter(
                    sampled, seed=args.seed, threshold=thresholds[source]
                )
            rows, rejected = docs | f"Shuffle[{source}]" >> ShuffleDocuments(
                sizes, args.seed, args.max_sentences, fractions, args.permutations
            )
            rows | f"Write[{source}]" >> WriteTable(
                args.out, f"shuffle-{source}", sort_keys=("id", "block_size", "permutation")
            )
            rejected_parts.append(rejected)
        rejected_parts | "AllRejected" >> beam.Flatten() | "WriteRejected" >> WriteRejected(args.out, STAGE)

    params = {
        "docs_dir": args.docs_dir,
        "block_sizes": sizes,
        "max_sentences": args.max_sentences,
        "seed": args.seed,
        "permutations": args.permutations,
        "fractions": fractions,
    }
    if samples:
        params["sample"] = {source: str(spec) for source, spec in samples.items()}
    summary = run_pipeline(
        build,
        command="shuffle",
        out_dir=args.out,
        params=params,
        beam_args=beam_args,
        overwrite=args.overwrite,
    )
    print_report(summary, args.out)
    return 0
