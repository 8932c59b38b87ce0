"""``incoherent intruders DOCS_DIR [DOCS_DIR ...] --out DIR``: the INSteD-style intruder-sentence corpus.

Writes ``OUT/intruder-<source>/<split>-*.parquet`` (``INTRUDER_SCHEMA``), every candidate of every document
meant to be incoherent in ``OUT/candidates/<split>-*.parquet`` (``CANDIDATE_SCHEMA``, with its similarity and,
with ``--filter``, its model score), dead letters in ``OUT/rejected/intruders/`` and ``OUT/run_summary.json``.

Retrieval: ``--index`` and ``--neighbors`` name the outputs of ``incoherent index`` / ``incoherent
neighbors``, as ``DIR`` (for every source) or ``SOURCE=DIR``. Without them, each DOCS_DIR gets its own index
and top-k neighbours, built before the pipeline by the retrieval commands into a temporary directory that is
removed afterwards (``incoherent build`` keeps them). Candidates only come from neighbours of the same source.

This module holds the command: its flags, the checks of flags and inputs, and ``run``. The pipeline is
:class:`pipelines.intruders.transforms.BuildIntruders` (the logic it calls is in :mod:`corpora.intruders` and
:mod:`corpora.drift`), the retrieval it builds when needed is :mod:`pipelines.intruders.retrieval`, the run
summary :mod:`pipelines.intruders.summary`, the adversarial filter :mod:`pipelines.intruders.filter_stage`.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from incoherent.corpora import drift
from incoherent.corpora import intruders as logic
from incoherent.corpora.kinds import source_kinds
from incoherent.pipelines.commands import DEVICE_HELP, INGEST_KINDS, add_overwrite, list_flag
from incoherent.pipelines.runtime import storage
from incoherent.pipelines.runtime.model_stack import require_model_stack
from incoherent.pipelines.runtime.options import parse_per_source
from incoherent.pipelines.runtime.threads import (
    add_torch_threads_argument,
    check_torch_threads,
    torch_threads,
)
from incoherent.schemas.records import InputError

# --------------------------------------------------------------------------------------------- options


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "docs", nargs="+", metavar="DOCS_DIR", help="documents written by `incoherent ingest ...`"
    )
    parser.add_argument("--out", required=True, help="output directory")
    add_overwrite(parser)
    list_flag(
        parser,
        "--index",
        metavar="[SOURCE=]DIR",
        help="index of `incoherent index` (for one source with SOURCE=DIR); default: built for each DOCS_DIR",
    )
    list_flag(
        parser,
        "--neighbors",
        metavar="[SOURCE=]DIR",
        help="output of `incoherent neighbors` (for one source with SOURCE=DIR); default: computed",
    )
    parser.add_argument(
        "--filter",
        default="none",
        metavar="none|MODEL_DIR",
        help="adversarial filter: `none` (the default), or a classifier trained with `incoherent train-filter` "
        "(a directory, or a Hub name in the local Hugging Face cache)",
    )
    parser.add_argument(
        "--history",
        nargs="+",
        action="extend",
        default=[],
        metavar="OLD_DOCS_DIR",
        help="documents ingested from older Wikipedia dumps: drift-based test split (DOCS_DIR is the newest)",
    )
    list_flag(
        parser,
        "--kind",
        metavar="[SOURCE=]KIND",
        help="the kind of a source (wikipedia, cnn, text: its test share and length rule) whose DOCS_DIR does "
        "not say it; default: the kind its `incoherent ingest` run wrote in DOCS_DIR/run_summary.json",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of every random draw (default 0)")
    parser.add_argument(
        "--similarity-threshold",
        type=float,
        default=logic.SIMILARITY_THRESHOLD,
        help="candidates with TF-IDF cosine >= this with the replaced sentence are not used (default 0.6)",
    )
    parser.add_argument(
        "--drift-threshold",
        type=float,
        default=drift.DRIFT_THRESHOLD,
        help="an older lead is a test document when its cosine with the newest lead is below this (0.72)",
    )
    parser.add_argument(
        "--validation-fraction", type=float, default=0.0, help="share of documents in a validation split (0)"
    )
    parser.add_argument("--k", type=int, default=logic.DEFAULT_K, help="neighbours per document (default 10)")
    list_flag(
        parser,
        "--sample",
        metavar="[SOURCE=]N|FRACTION",
        help="dataset documents: a stable sample by hash of (seed, id), N documents or a fraction, for every "
        "source or per source; every document stays in the retrieval and candidate pool (default: all)",
    )
    group = parser.add_argument_group("adversarial filter (with --filter MODEL_DIR)")
    group.add_argument("--device", default="auto", choices=("auto", "cuda", "cpu"), help=DEVICE_HELP)
    group.add_argument(
        "--batch-size",
        type=int,
        default=16,
        help="candidates per micro-batch of the filter model (default: 16)",
    )
    group.add_argument(
        "--max-length", type=int, default=512, help="tokens per sentence + document input (default: 512)"
    )
    group.add_argument(
        "--easy-threshold",
        type=float,
        default=0.5,
        help="a candidate whose intruder probability is >= this is easy; a hard one is drawn when a document "
        "has one (default: 0.5)",
    )
    add_torch_threads_argument(group)


def check_options(args: argparse.Namespace) -> None:
    """The checks of the flags that need no input (``build`` runs them on its config first)."""
    if not 0.0 <= args.validation_fraction < 1.0:
        raise InputError(f"--validation-fraction: must be in [0, 1), got {args.validation_fraction}")
    if args.k < 1:
        raise InputError(f"--k: must be >= 1, got {args.k}")
    check_torch_threads(args.torch_threads)
    for name in ("similarity_threshold", "drift_threshold"):
        value = getattr(args, name)
        if not 0.0 < value <= 1.0:
            raise InputError(f"--{name.replace('_', '-')}: must be in (0, 1], got {value}")


# --------------------------------------------------------------------------------------------- inputs


def parse_mapping(values: list[str], option: str, sources: list[str]) -> dict[str, str]:
    """``["wikipedia=I1", "I2"]`` -> ``{"wikipedia": "I1", <every other source>: "I2"}``."""
    mapping = parse_per_source(values, option, sources, lambda path, _where: storage.absolute(path))
    for source, path in mapping.items():
        if not storage.exists(path):
            raise InputError(f"{option} {path}: no such directory (for source {source})")
    return mapping


def parse_kinds(values: list[str], sources: list[str]) -> dict[str, str]:
    """``--kind [SOURCE=]KIND``: the kind of sources whose documents folder does not say it."""

    def kind(value: str, where: str) -> str:
        if value not in INGEST_KINDS:
            raise InputError(f"{where}: unknown kind {value!r} (kinds: {', '.join(INGEST_KINDS)})")
        return value

    return parse_per_source(values, "--kind", sources, kind, metavar="KIND")


def document_kinds(sources_by_dir: dict[str, list[str]], given: dict[str, str]) -> dict[str, str]:
    """``{source: kind}`` of the documents folders, from each folder's ``run_summary.json`` of ``incoherent
    ingest`` (:func:`corpora.kinds.source_kinds`), else from ``--kind`` (``given``); a folder that says one kind
    and ``--kind`` another, or a source whose kind nothing says, is one line."""
    from incoherent.pipelines.runtime.summary import read_summary

    kinds = {}
    for docs_dir, sources in sources_by_dir.items():
        summary = read_summary(docs_dir)
        said = source_kinds([summary]) if summary else {}
        for source in sources:
            kind = said.get(source) or given.get(source)
            if kind is None:
                raise InputError(
                    f"{docs_dir}: does not say the kind of source {source!r} (no run_summary.json of "
                    f"`incoherent ingest` naming it); pass --kind {source}=KIND ({'|'.join(INGEST_KINDS)})"
                )
            if given.get(source, kind) != kind:
                raise InputError(f"--kind {source}={given[source]}: {docs_dir} was ingested as kind {kind!r}")
            kinds[source] = kind
    return kinds


def neighbor_files(neighbors_dir: str) -> list[str]:
    from incoherent.pipelines.runtime.tables import require_tables

    return require_tables(neighbors_dir, "neighbors", "incoherent neighbors")


def shares_an_id(files_a: list[str], files_b: list[str], sample: int = 100_000) -> bool:
    """Whether any of the first ``sample`` ids of ``files_a`` is among the ids of ``files_b`` (bounded memory:
    the sample; ``files_b`` is streamed until the first shared id)."""
    from incoherent.pipelines.runtime.tables import read_ids

    ids = set()
    for doc_id in read_ids(files_a):
        ids.add(doc_id)
        if len(ids) >= sample:
            break
    return any(doc_id in ids for doc_id in read_ids(files_b))


# --------------------------------------------------------------------------------------------- running


@dataclass
class Inputs:
    """What ``run`` reads, resolved and checked before any work: the documents, their sources and kinds, the
    older versions, the retrieval directories given."""

    doc_files: list[str]
    sources_by_dir: dict[str, list[str]]
    sources: list[str]
    kinds: dict[str, str]
    history_files: list[str]
    history_sources: list[str]
    index_map: dict[str, str]
    neighbor_map: dict[str, str]


def resolve_inputs(args: argparse.Namespace) -> Inputs:
    """The documents (each source with its kind), the history and the retrieval directories of ``args``; one
    line (:class:`InputError`) for the first fault."""
    from incoherent.pipelines.runtime.tables import document_files, source_of_file

    sources_by_dir = {d: sorted({source_of_file(f) for f in document_files(d)}) for d in args.docs}
    doc_files = sorted(f for d in args.docs for f in document_files(d))
    sources = sorted({s for ss in sources_by_dir.values() for s in ss})
    if len(doc_files) != len(set(doc_files)):
        raise InputError("DOCS_DIR: the same directory is given twice")
    kinds = document_kinds(sources_by_dir, parse_kinds(args.kind, sources))
    history_files = sorted(f for d in args.history for f in document_files(d))
    history_sources = sorted({source_of_file(f) for f in history_files})
    check_history(args.history, history_sources, sources, doc_files)
    index_map = parse_mapping(args.index, "--index", sources)
    neighbor_map = parse_mapping(args.neighbors, "--neighbors", sources)
    if storage.is_remote(args.out) and (set(index_map) != set(sources) or set(neighbor_map) != set(sources)):
        raise InputError("--index/--neighbors: required for every source when --out is not a local directory")
    return Inputs(
        doc_files, sources_by_dir, sources, kinds, history_files, history_sources, index_map, neighbor_map
    )


def check_history(history: list[str], history_sources: list[str], sources: list[str], doc_files) -> None:
    """Every older dump is of a source of DOCS_DIR and shares an article with it."""
    from incoherent.pipelines.runtime.tables import document_files, source_of_file

    for source in history_sources:
        if source not in sources:
            raise InputError(
                f"--history: documents of source {source!r}, but DOCS_DIR has none (sources: {sources})"
            )
    newest = [f for f in doc_files if source_of_file(f) in history_sources]
    for old_dir in history:
        if not shares_an_id(document_files(old_dir), newest):
            raise InputError(
                f"--history {old_dir}: shares no article with DOCS_DIR (ids differ; wrong dump?)"
            )


def resolve_filter(args: argparse.Namespace) -> bool:
    """Whether ``--filter`` names a model; ``args.filter`` becomes its absolute directory."""
    if args.filter == "none":
        return False
    from incoherent.filters.model_source import resolve_model

    args.filter = storage.absolute(resolve_model(args.filter, "--filter"))
    if not storage.exists(args.filter):
        raise InputError(f"--filter {args.filter}: no such model directory (or pass --filter none)")
    return True


def filter_scorer(args: argparse.Namespace, beam_args: list[str]):
    """``(the ScoreCandidates transform, torch threads)`` of ``--filter MODEL_DIR``."""
    from incoherent.pipelines.intruders.filter_stage import ScoreCandidates

    threads = torch_threads(beam_args, args.torch_threads)
    score = ScoreCandidates(
        args.filter,
        device=args.device,
        batch_size=args.batch_size,
        max_length=args.max_length,
        easy_threshold=args.easy_threshold,
        threads=threads,
    )
    return score, threads


def run_params(args: argparse.Namespace, kinds: dict[str, str], samples: dict, threads: int | None) -> dict:
    """The ``params`` of ``run_summary.json``: the flags, the kind of each source, the sample, the filter's."""
    params = {
        "docs": args.docs,
        "index": args.index,
        "neighbors": args.neighbors,
        "filter": args.filter,
        "history": args.history,
        "seed": args.seed,
        "similarity_threshold": args.similarity_threshold,
        "drift_threshold": args.drift_threshold,
        "validation_fraction": args.validation_fraction,
        "k": args.k,
        "kinds": kinds,
    }
    if samples:
        params["sample"] = {source: str(spec) for source, spec in samples.items()}
    if threads is not None:
        params.update(
            device=args.device,
            batch_size=args.batch_size,
            max_length=args.max_length,
            easy_threshold=args.easy_threshold,
            torch_threads=threads,
        )
    return params


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    from incoherent.pipelines.intruders.retrieval import retrieval_for
    from incoherent.pipelines.intruders.summary import print_table
    from incoherent.pipelines.intruders.transforms import Options
    from incoherent.pipelines.runtime.run import print_report
    from incoherent.pipelines.sampling import parse_samples, sample_thresholds

    check_options(args)
    if args.filter != "none":
        require_model_stack("intruders", "--filter")  # before any work: one line when the extra is missing
    found = resolve_inputs(args)
    filtered = resolve_filter(args)
    samples = parse_samples(args.sample, "--sample", found.sources)
    thresholds = sample_thresholds(samples, found.doc_files, args.seed)
    options = Options(
        sample_thresholds=tuple(sorted(thresholds.items())),
        seed=args.seed,
        k=args.k,
        similarity_threshold=args.similarity_threshold,
        drift_threshold=args.drift_threshold,
        validation_fraction=args.validation_fraction,
        filtered=filtered,
        kinds=tuple(sorted(found.kinds.items())),
    )
    score, threads = filter_scorer(args, beam_args) if filtered else (None, None)
    params = run_params(args, found.kinds, samples, threads)
    with retrieval_for(
        args.docs, found.sources_by_dir, found.index_map, found.neighbor_map, args.k, beam_args
    ) as (indexes, nbrs):
        summary = run_intruders(args, beam_args, found, options, samples, score, params, indexes, nbrs)
    print_report(summary, args.out)
    print_table(summary)
    return 0


def run_intruders(args, beam_args, found: Inputs, options, samples, score, params, indexes, nbrs) -> dict:
    """The intruder pipeline on retrieval ``indexes`` and ``nbrs`` (source -> directory): its summary."""
    import apache_beam as beam

    from incoherent.pipelines.intruders.summary import summary_fields
    from incoherent.pipelines.intruders.transforms import STAGE, BuildIntruders, rows_of
    from incoherent.pipelines.runtime.run import run_pipeline
    from incoherent.pipelines.runtime.tables import WriteRejected, WriteTable

    sources = found.sources
    n_files = sorted({f for source in sources for f in neighbor_files(nbrs[source])})

    def build(p):
        rows, candidates, rejected = p | "BuildIntruders" >> BuildIntruders(
            found.doc_files, n_files, indexes, options, found.history_files, score
        )
        for source in sources:
            (
                rows
                | f"Rows-{source}" >> beam.Map(rows_of, source)
                | f"Write-{source}" >> WriteTable(args.out, f"intruder-{source}", batched=True)
            )
        candidates | "WriteCandidates" >> WriteTable(
            args.out, "candidates", sort_keys=("id", "neighbor_rank", "candidate_source_id"), batched=True
        )
        rejected | "WriteRejected" >> WriteRejected(args.out, STAGE)

    def extra(summary):
        retrieval = {"index": indexes, "neighbors": nbrs}
        return summary_fields(
            summary, args.out, sources, found.history_sources, samples, retrieval, found.kinds
        )

    return run_pipeline(
        build,
        command="intruders",
        out_dir=args.out,
        params=params,
        beam_args=beam_args,
        overwrite=args.overwrite,
        extra_summary=extra,
    )
