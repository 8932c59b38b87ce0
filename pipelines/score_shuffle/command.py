"""``incoherent score-shuffle MODEL_DIR DATA_DIR --out OUT``: the zero-shot k-block shuffle test (Laban et al.,
2021) of a causal or masked language model on shuffle corpora.

Every row of ``DATA_DIR/shuffle-<source>/<split>-*.parquet`` is a pair (one document, one k, one permutation).
Texts (a pair's original and shuffled sentences) are keyed by a hash of their joined content, so a document's
original is scored once and reused for all its k and permutations. Distinct texts are grouped into pools by a stable hash of their document (its original's
key), so a document's texts share a pool and the windows they have in common run once; the pools depend on
the data only, never on the runner. Each pool goes through ``RunInference`` with
:class:`filters.handler.LanguageModelHandler`, which buckets the windows of all the pool's texts by length.

Writes ``OUT/scores/<split>-*.parquet`` (:data:`schemas.SCORES_SCHEMA`), ``OUT/results.json`` (accuracy,
ties and pairs per source and k; over several sources, ``table1``: Laban et al.'s Table 1 row per k),
``OUT/accuracy.png`` and ``OUT/run_summary.json``, and prints the accuracy table (Table 2's layout) and, over
several sources, Table 1's. ``--scorer classifier`` scores with a ``train-shuffle`` classifier
(:mod:`filters.shuffle_classifier`). A model whose ``provenance.json`` shows shuffled training text, and any
classifier, is labelled "supervised (not zero-shot)" in the table, ``results.json`` and the figure.
``--compare sum`` decides a pair by summed NLL (score x tokens) instead of the mean per token: the statistic of
lm-evaluation-harness's ``acc`` on the tasks of ``incoherent export lm-eval`` (docs/lm-eval.md); the default
writes exactly what it wrote before the flag existed (no ``compare`` key anywhere).
"""

from __future__ import annotations

import argparse
import io
import json
import posixpath

from incoherent.corpora.shuffle_results import format_table, format_table1, plot_accuracy, summarize, table1
from incoherent.pipelines.commands import DEVICE_HELP, DTYPE_HELP, add_overwrite, list_flag
from incoherent.pipelines.runtime.model_stack import require_model_stack
from incoherent.pipelines.runtime.threads import (
    add_torch_threads_argument,
    check_torch_threads,
    torch_threads,
)
from incoherent.schemas import SCORES_SCHEMA
from incoherent.schemas.records import InputError
from incoherent.sources import parquet
from incoherent.sources.parquet import read_open

REQUIRED_COLUMNS = {"id", "source", "block_size", "original", "shuffled"}
DEFAULT_POOL_SIZE = 64
DROPPED = ("empty_document", "no_scored_tokens")  # counters of pairs that were read but not scored
COMPARE = ("mean", "sum")  # --compare: mean NLL per token (the default) or summed NLL (lm-eval's acc)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "model_dir",
        metavar="MODEL_DIR",
        help="a causal or masked LM: a Hugging Face directory, or a Hub name in the local cache (gpt2)",
    )
    parser.add_argument("data_dir", metavar="DATA_DIR", help="a folder of shuffle-<source>/ configs")
    parser.add_argument("--out", required=True, help="output directory")
    list_flag(
        parser, "--config", metavar="CONFIG", help="only these configs, e.g. shuffle-wsj (default: all)"
    )
    parser.add_argument("--split", default="test", help="split to score (test)")
    parser.add_argument(
        "--scorer",
        default="auto",
        choices=("auto", "causal", "masked", "classifier"),
        help="auto, causal or masked LM; classifier: a model from `incoherent train-shuffle` (auto)",
    )
    parser.add_argument(
        "--window",
        default="exact",
        choices=("exact", "laban"),
        help="exact: every token scored once (default); laban: the authors' released code",
    )
    parser.add_argument(
        "--join",
        default="space",
        choices=("space", "newline"),
        help="what joins the sentences of a text: space or newline (default: space)",
    )
    parser.add_argument(
        "--compare",
        default="mean",
        choices=COMPARE,
        help="what decides a pair: mean NLL per token (default) or summed NLL, the statistic of "
        "lm-evaluation-harness's acc (docs/lm-eval.md)",
    )
    parser.add_argument("--device", default="auto", choices=("auto", "cuda", "cpu"), help=DEVICE_HELP)
    parser.add_argument(
        "--dtype", default="auto", choices=("auto", "float32", "bfloat16", "float16"), help=DTYPE_HELP
    )
    parser.add_argument("--batch-size", type=int, default=16, help="windows per micro-batch (16)")
    parser.add_argument("--stride", type=int, default=None, help="exact windows: stride (half the window)")
    parser.add_argument(
        "--pool-size", type=int, default=DEFAULT_POOL_SIZE, help="texts per pool, whole documents (about 64)"
    )
    add_torch_threads_argument(parser)
    add_overwrite(parser)


def shuffle_files(data_dir: str, configs: list[str] | None, split: str) -> list[str]:
    """The ``shuffle-*/<split>-*.parquet`` files to score; a clear error when there are none."""
    from apache_beam.io.filesystems import FileSystems

    from incoherent.pipelines.runtime.tables import list_tables

    files = list_tables(data_dir, "shuffle-")
    if not files:
        raise InputError(
            f"{data_dir}: no shuffle-*/ configs (write them with `incoherent shuffle` or `build`)"
        )
    found = sorted({posixpath.basename(posixpath.dirname(f)) for f in files})
    if configs:
        wanted = list(dict.fromkeys(configs))
        unknown = [c for c in wanted if c not in found]
        if unknown:
            raise InputError(f"--config: {', '.join(unknown)} not in {data_dir} (found: {', '.join(found)})")
        files = [f for f in files if posixpath.basename(posixpath.dirname(f)) in wanted]
    chosen = [f for f in files if posixpath.basename(f).startswith(f"{split}-")]
    if not chosen:
        splits = sorted({posixpath.basename(f).split("-", 1)[0] for f in files})
        raise InputError(f"--split {split}: no such split in {data_dir} (found: {', '.join(splits)})")
    with FileSystems.open(chosen[0]) as f:
        names = set(parquet.column_names(chosen[0], f))
    missing = REQUIRED_COLUMNS - names
    if missing:
        raise InputError(f"{chosen[0]}: not a shuffle table, missing columns {sorted(missing)}")
    return chosen


TABLE1_KS = (1, 2, 3, 4, 5)


def _has_k(accuracy: dict, k: int) -> bool:
    return any(str(k) in per for per in accuracy.values())


def model_label(provenance: dict | None, scorer: str) -> str | None:
    """ "supervised (not zero-shot)" for a model whose ``provenance.json`` shows shuffled training text, and for
    any coherence classifier (``--scorer classifier``), whose training data is supervision; else None.

    >>> model_label({"saw_shuffled_text": True}, "causal"), model_label(None, "causal")
    ('supervised (not zero-shot)', None)
    """
    from incoherent.filters.provenance import SUPERVISED_LABEL, label_for

    return label_for(provenance) or (SUPERVISED_LABEL if scorer == "classifier" else None)


def provenance_summary(provenance: dict | None) -> dict | None:
    """The keys of a model's ``provenance.json`` that ``results.json`` repeats."""
    if not provenance:
        return None
    keys = ("command", "base_model", "data_fingerprint", "saw_shuffled_text", "epochs", "seed", "block_sizes")
    return {k: provenance[k] for k in keys if k in provenance}


def check_scored(counters: dict, model_dir: str) -> None:
    """A run that scored no pair is an error, never a complete run with empty results.

    >>> check_scored({"scored_pairs": 0, "no_scored_tokens": 6}, "m")
    Traceback (most recent call last):
    incoherent.errors.InputError: m: no pair was scored (no_scored_tokens 6); nothing to report
    """
    if counters.get("scored_pairs", 0):
        return
    skipped = ", ".join(f"{k} {v:,}" for k, v in sorted(counters.items()) if k in DROPPED and v)
    raise InputError(f"{model_dir}: no pair was scored ({skipped or 'no pairs read'}); nothing to report")


def read_scores(out_dir: str) -> list[dict]:
    """The columns of ``OUT/scores/`` that the accuracy needs (small: four per pair)."""
    from apache_beam.io.filesystems import FileSystems

    from incoherent.pipelines.runtime.tables import list_tables

    rows: list[dict] = []
    for path in list_tables(out_dir, "scores"):
        with FileSystems.open(path) as f:
            table = read_open(f, columns=["source", "block_size", "correct", "tie"])
        rows.extend(table.to_pylist())
    return rows


def check_options(args: argparse.Namespace) -> None:
    """The checks of the flags alone (no model, no data): one line for a value or a combination refused."""
    if args.batch_size < 1 or args.pool_size < 1:
        raise InputError("--batch-size/--pool-size: must be >= 1")
    if args.stride is not None and args.stride < 1:  # 0 was taken for "not given" (half the window)
        raise InputError(f"--stride: must be >= 1, got {args.stride}")
    if args.stride is not None and args.window == "laban":
        raise InputError("--stride: only with --window exact (laban windows are the authors')")
    if args.scorer == "classifier":
        if args.compare != "mean":
            raise InputError("--compare sum: language-model scores; a classifier gives one score per text")
        if args.window != "exact" or args.stride is not None:
            raise InputError("--window/--stride: language-model windows; a classifier reads each text once")


def scoring_handler(args: argparse.Namespace, model_dir: str, threads: int | None):
    """The model handler for ``--scorer`` and the scorer it resolves to (``auto``: what the model is)."""
    from incoherent.filters.handler import ClassifierHandler, LanguageModelHandler, is_remote
    from incoherent.filters.lm_load import check_language_model
    from incoherent.filters.shuffle_classifier import check_classifier

    kind = args.scorer
    if kind == "classifier":
        if not is_remote(model_dir):
            check_classifier(model_dir)
        handler = ClassifierHandler(
            model_dir,
            args.device,
            args.dtype,
            join=args.join,
            threads=threads,
            batch_size=args.batch_size,
        )
    else:
        if not is_remote(model_dir):
            kind = check_language_model(model_dir, args.scorer)
        handler = LanguageModelHandler(
            model_dir,
            args.device,
            args.dtype,
            join=args.join,
            threads=threads,
            scorer=kind,
            window=args.window,
            batch_size=args.batch_size,
            stride=args.stride,
        )
    return handler, kind


def _run_params(args: argparse.Namespace, kind: str, threads: int | None) -> dict:
    """The run summary's ``params``; ``compare`` only when not the default (whose outputs stay as before)."""
    params = {
        "model_dir": args.model_dir,
        "data_dir": args.data_dir,
        "configs": args.config,
        "split": args.split,
        "scorer": kind,
        "window": args.window,
        "join": args.join,
        "device": args.device,
        "dtype": args.dtype,
        "batch_size": args.batch_size,
        "stride": args.stride,
        "pool_size": args.pool_size,
        "torch_threads": threads,
    }
    if args.compare != "mean":
        params["compare"] = args.compare
    return params


def _write_results(
    args: argparse.Namespace, params: dict, label: str | None, provenance: dict | None
) -> dict:
    """``results.json`` and ``accuracy.png`` from the scores written; the summary's part of them."""
    from apache_beam.io.filesystems import FileSystems

    accuracy = summarize(read_scores(args.out))
    report = {
        **{k: params[k] for k in ("model_dir", "scorer", "window", "join", "split")},
        **({"compare": params["compare"]} if "compare" in params else {}),
        "zero_shot": label is None,
        "label": label,
        "provenance": provenance_summary(provenance),
        "results": accuracy,
    }
    if len(accuracy) > 1:
        report["table1"] = {f"k={k}": table1(accuracy, k) for k in TABLE1_KS if _has_k(accuracy, k)}
    with FileSystems.create(posixpath.join(args.out, "results.json")) as f:
        f.write((json.dumps(report, indent=2) + "\n").encode("utf-8"))
    figure = io.BytesIO()
    name = posixpath.basename(args.model_dir.rstrip("/"))
    plot_accuracy(accuracy, figure, title=f"{name}: {label}" if label else name)
    with FileSystems.create(posixpath.join(args.out, "accuracy.png")) as f:
        f.write(figure.getvalue())
    return {"results": accuracy, "zero_shot": label is None, "label": label}


def _print_results(args: argparse.Namespace, summary: dict, kind: str, label: str | None) -> None:
    """The accuracy table (Table 2's layout), Table 1's row over several sources, what was skipped, where."""
    from incoherent.pipelines.score_shuffle.transforms import STAGE

    by = ", summed NLL" if args.compare == "sum" else ""
    title = f"{args.model_dir} ({kind}, {args.window} windows, {args.join}-joined{by}) on {args.data_dir} [{args.split}]"
    if label:
        title = f"{title}: {label.upper()}"
    print(format_table(summary["results"], title=f"accuracy (%): {title}"))
    if len(summary["results"]) > 1 and _has_k(summary["results"], 1):
        name = posixpath.basename(args.model_dir.rstrip("/")) + (f" [{label}]" if label else "")
        print(format_table1(table1(summary["results"], 1), name, 1))
    counters = summary["counters"].get(STAGE, {})
    dropped = {k: v for k, v in counters.items() if k in DROPPED}
    if dropped:
        print("skipped: " + ", ".join(f"{name} {value:,}" for name, value in dropped.items()))
    print(f"{posixpath.join(args.out, 'scores')}/, results.json, accuracy.png ({summary['seconds']:.1f} s)")


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    require_model_stack("score-shuffle")  # before any work: one line when the extra is missing
    check_options(args)
    from incoherent.filters.model_source import resolve_model

    # a directory, or a Hub name in the local cache: a missing model is refused before Beam or torch loads
    model_dir = resolve_model(args.model_dir, "MODEL_DIR")
    import apache_beam as beam

    from incoherent.filters.provenance import read_provenance
    from incoherent.pipelines.runtime.run import run_pipeline
    from incoherent.pipelines.runtime.tables import WriteRejected, WriteTable
    from incoherent.pipelines.score_shuffle.transforms import STAGE, ScoreShufflePairs

    threads = torch_threads(beam_args, check_torch_threads(args.torch_threads))
    files = shuffle_files(args.data_dir, args.config, args.split)
    handler, kind = scoring_handler(args, model_dir, threads)
    provenance = read_provenance(model_dir)
    label = model_label(provenance, kind)

    def build(p):
        rows = p | "ShuffleFiles" >> beam.Create(files) | "ReadShuffles" >> beam.io.ReadAllFromParquet()
        scored, rejected = rows | "ScorePairs" >> ScoreShufflePairs(
            handler, args.join, args.pool_size, args.compare
        )
        scored | "WriteScores" >> WriteTable(
            args.out,
            "scores",
            split=args.split,
            sort_keys=("id", "block_size", "permutation"),
            schema=SCORES_SCHEMA,
        )
        rejected | "WriteRejected" >> WriteRejected(args.out, STAGE)

    params = _run_params(args, kind, threads)

    def results(summary: dict) -> dict:
        check_scored(summary["counters"].get(STAGE, {}), args.model_dir)  # before run_summary.json
        return _write_results(args, params, label, provenance)

    summary = run_pipeline(
        build,
        command="score-shuffle",
        out_dir=args.out,
        params=params,
        beam_args=beam_args,
        overwrite=args.overwrite,
        extra_summary=results,
    )
    _print_results(args, summary, kind, label)
    return 0
