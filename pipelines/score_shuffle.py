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
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import posixpath
from collections.abc import Callable

import apache_beam as beam
import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems
from apache_beam.ml.inference.base import ModelHandler, RunInference

from corpora.seeding import stable_hash
from corpora.shuffle_results import compare, format_table, format_table1, plot_accuracy, summarize, table1
from pipelines.commands import DEVICE_HELP, DTYPE_HELP, add_overwrite, list_flag
from pipelines.runtime.run import run_pipeline
from pipelines.runtime.tables import ApplyWithRejects, WriteRejected, WriteTable, count, list_tables
from pipelines.runtime.threads import add_torch_threads_argument, check_torch_threads, torch_threads
from schemas import SCORES_SCHEMA
from schemas.records import InputError, Rejected
from sources import parquet

STAGE = "score-shuffle"
REQUIRED_COLUMNS = {"id", "source", "block_size", "original", "shuffled"}
DEFAULT_POOL_SIZE = 64
DROPPED = ("empty_document", "no_scored_tokens")  # counters of pairs that were read but not scored


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


def text_key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def make_pair(row: dict, join: str) -> dict | Rejected:
    """A shuffle row -> ``{id, source, block_size, permutation, original, shuffled}`` (their sentences, empty
    ones left out) and the keys of their joined texts, or a Rejected for an empty document."""
    from filters.lm import join_sentences

    original = tuple(s for s in row["original"] or [] if s)
    shuffled = tuple(s for s in row["shuffled"] or [] if s)
    original_text, shuffled_text = join_sentences(original, join), join_sentences(shuffled, join)
    if not original_text.strip() or not shuffled_text.strip():
        return Rejected(
            "empty_document",
            id=row.get("id"),
            source=row.get("source"),
            detail=f"block_size {row.get('block_size')}: {'original' if not original_text.strip() else 'shuffled'} is empty",
        )
    return {
        "id": row["id"],
        "source": row["source"],
        "block_size": int(row["block_size"]),
        "permutation": int(row.get("permutation") or 0),
        "original": original,
        "shuffled": shuffled,
        "original_key": text_key(original_text),
        "shuffled_key": text_key(shuffled_text),
    }


def finish_pair(
    pair: dict, original: tuple[float, int], shuffled: tuple[float, int], tally: Callable[[str], None]
) -> dict | Rejected:
    """A row of :data:`schemas.SCORES_SCHEMA`, or a Rejected when a text had no token to score; a pair whose
    shuffled text is its original (e.g. one block) counts as ``identical_texts``."""
    if pair["original_key"] == pair["shuffled_key"]:
        tally("identical_texts")
    (score_o, tokens_o), (score_s, tokens_s) = original, shuffled
    if not tokens_o or not tokens_s:
        return Rejected(
            "no_scored_tokens",
            id=pair["id"],
            source=pair["source"],
            detail=f"block_size {pair['block_size']}: tokens scored {tokens_o} / {tokens_s}",
        )
    correct, tie = compare(score_o, score_s)
    return {
        "id": pair["id"],
        "source": pair["source"],
        "block_size": pair["block_size"],
        "permutation": pair["permutation"],
        "score_original": score_o,
        "score_shuffled": score_s,
        "tokens_original": tokens_o,
        "tokens_shuffled": tokens_s,
        "correct": correct,
        "tie": tie,
    }


def pool_of(document_key: str, texts: int, pool_size: int = DEFAULT_POOL_SIZE) -> int:
    """The pool of a text, by a stable hash of its document's original key: ``ceil(texts / pool_size)``
    pools (at least one) over all ``texts`` distinct texts, so a document's texts share one.

    >>> pool_of("k", 10, 64)
    0
    """
    pools = max(1, -(-texts // pool_size))
    return stable_hash("pool", document_key) % pools


def _count(name: str) -> None:
    count(STAGE, name)


class ScoreShufflePairs(beam.PTransform):
    """Shuffle rows -> ``(score rows, rejected)``: distinct texts pooled, scored once, joined back.

    ``handler`` is a :class:`filters.handler.LanguageModelHandler` (or any handler taking
    ``(pool id, [(key, sentences)])`` elements and predicting ``[(key, score, tokens)]``), joining sentences
    with ``join`` as :func:`make_pair` does.
    """

    def __init__(self, handler: ModelHandler, join: str = "space", pool_size: int = DEFAULT_POOL_SIZE):
        super().__init__()
        self._handler, self._join, self._pool_size = handler, join, pool_size

    def expand(self, rows):
        join, pool_size = self._join, self._pool_size

        def to_pair(row):
            yield make_pair(row, join)

        def texts_of(pair):
            yield pair["original_key"], (pair["original_key"], pair["original"])
            yield pair["shuffled_key"], (pair["original_key"], pair["shuffled"])

        def first_text(element):
            key, texts = element
            return key, min(texts)  # (its document's original key, sentences): the smallest if several

        def to_pool(keyed, total):
            key, (document, text) = keyed
            return pool_of(document, total, pool_size), (key, text)

        def sorted_pool(element):
            pool, texts = element
            return pool, sorted(texts)

        def unpack(prediction):
            for key, score, tokens in prediction.inference:
                yield key, (score, tokens)

        def by_original(pair):
            return pair["original_key"], pair

        def with_original(element):
            _, grouped = element
            (score,) = list(grouped["scores"])[:1] or [(float("nan"), 0)]
            for pair in grouped["pairs"]:
                yield pair["shuffled_key"], (pair, score)

        def finish(element):
            _, grouped = element
            (score,) = list(grouped["scores"])[:1] or [(float("nan"), 0)]
            for pair, original in grouped["pairs"]:
                yield finish_pair(pair, original, score, _count)

        pairs, rejected_rows = rows | "MakePairs" >> ApplyWithRejects(to_pair, STAGE, kept="pairs")
        texts = (
            pairs
            | "TextsOfPairs" >> beam.FlatMap(texts_of)
            | "GroupTexts" >> beam.GroupByKey()
            | "DistinctTexts" >> beam.Map(first_text)
        )
        total = texts | "CountTexts" >> beam.combiners.Count.Globally()
        scores = (
            texts
            | "AssignPool" >> beam.Map(to_pool, total=beam.pvalue.AsSingleton(total))
            | "GroupPools" >> beam.GroupByKey()
            | "SortPools" >> beam.Map(sorted_pool)
            | "ScoreTexts" >> RunInference(self._handler)
            | "TextScores" >> beam.FlatMap(unpack)
        )
        half = (
            {"pairs": pairs | "ByOriginal" >> beam.Map(by_original), "scores": scores}
            | "JoinOriginals" >> beam.CoGroupByKey()
            | "AddOriginalScore" >> beam.FlatMap(with_original)
        )
        done, rejected_scores = (
            {"pairs": half, "scores": scores}
            | "JoinShuffled" >> beam.CoGroupByKey()
            | "AddShuffledScore" >> ApplyWithRejects(finish, STAGE, kept="scored_pairs")
        )
        rejected = (rejected_rows, rejected_scores) | "AllRejected" >> beam.Flatten()
        return done, rejected


def shuffle_files(data_dir: str, configs: list[str] | None, split: str) -> list[str]:
    """The ``shuffle-*/<split>-*.parquet`` files to score; a clear error when there are none."""
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
    from filters.provenance import SUPERVISED_LABEL, label_for

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
    schemas.records.InputError: m: no pair was scored (no_scored_tokens 6); nothing to report
    """
    if counters.get("scored_pairs", 0):
        return
    skipped = ", ".join(f"{k} {v:,}" for k, v in sorted(counters.items()) if k in DROPPED and v)
    raise InputError(f"{model_dir}: no pair was scored ({skipped or 'no pairs read'}); nothing to report")


def read_scores(out_dir: str) -> list[dict]:
    """The columns of ``OUT/scores/`` that the accuracy needs (small: four per pair)."""
    rows: list[dict] = []
    for path in list_tables(out_dir, "scores"):
        with FileSystems.open(path) as f:
            table = pq.read_table(f, columns=["source", "block_size", "correct", "tie"])
        rows.extend(table.to_pylist())
    return rows


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    from filters.handler import ClassifierHandler, LanguageModelHandler, is_remote
    from filters.lm import check_language_model
    from filters.model_source import resolve_model
    from filters.provenance import read_provenance
    from filters.shuffle_classifier import check_classifier

    if args.batch_size < 1 or args.pool_size < 1:
        raise InputError("--batch-size/--pool-size: must be >= 1")
    if args.stride is not None and args.stride < 1:  # 0 was taken for "not given" (half the window)
        raise InputError(f"--stride: must be >= 1, got {args.stride}")
    if args.stride is not None and args.window == "laban":
        raise InputError("--stride: only with --window exact (laban windows are the authors')")
    threads = torch_threads(beam_args, check_torch_threads(args.torch_threads))
    files = shuffle_files(args.data_dir, args.config, args.split)
    model_dir = resolve_model(args.model_dir, "MODEL_DIR")  # a directory, or a Hub name in the local cache
    kind = args.scorer
    if kind == "classifier":
        if args.window != "exact" or args.stride is not None:
            raise InputError("--window/--stride: language-model windows; a classifier reads each text once")
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
    provenance = read_provenance(model_dir)
    label = model_label(provenance, kind)

    def build(p):
        rows = p | "ShuffleFiles" >> beam.Create(files) | "ReadShuffles" >> beam.io.ReadAllFromParquet()
        scored, rejected = rows | "ScorePairs" >> ScoreShufflePairs(handler, args.join, args.pool_size)
        scored | "WriteScores" >> WriteTable(
            args.out,
            "scores",
            split=args.split,
            sort_keys=("id", "block_size", "permutation"),
            schema=SCORES_SCHEMA,
        )
        rejected | "WriteRejected" >> WriteRejected(args.out, STAGE)

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

    def results(summary: dict) -> dict:
        check_scored(summary["counters"].get(STAGE, {}), args.model_dir)  # before run_summary.json
        accuracy = summarize(read_scores(args.out))
        report = {
            **{k: params[k] for k in ("model_dir", "scorer", "window", "join", "split")},
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

    summary = run_pipeline(
        build,
        command="score-shuffle",
        out_dir=args.out,
        params=params,
        beam_args=beam_args,
        overwrite=args.overwrite,
        extra_summary=results,
    )
    title = f"{args.model_dir} ({kind}, {args.window} windows, {args.join}-joined) on {args.data_dir} [{args.split}]"
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
    return 0
