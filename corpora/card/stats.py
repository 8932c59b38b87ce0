"""Statistics of a built dataset for its card, read from the Parquet tables column by column.

Every table is streamed in record batches of the few columns a statistic needs, and only counts and fixed-bin
histograms are kept, so memory does not grow with the number of rows. Example (one intruder table)::

    >>> stats = intruder_stats(["intruder-cnn/test-00000-of-00001.parquet"])   # doctest: +SKIP
    >>> stats["by_split"]["test"]  # doctest: +SKIP
    {'documents': 9, 'sentences': 52, 'words': 1102, 'positives': 4}
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

BATCH_ROWS = 4096
SIMILARITY_BINS = np.linspace(0.0, 1.0, 51)  # 0.02 wide: the 0.6 threshold is a bin edge
SCORE_BINS = np.linspace(0.0, 1.0, 21)


def _open_local(path: str) -> BinaryIO:
    return open(path, "rb")  # noqa: SIM115 - closed by _batches


def _batches(files: list[str], columns: list[str], opener: Callable[[str], BinaryIO] | None = None):
    for path in files:
        with (opener or _open_local)(path) as handle:
            parquet = pq.ParquetFile(handle)
            present = [c for c in columns if c in parquet.schema_arrow.names]
            yield from parquet.iter_batches(batch_size=BATCH_ROWS, columns=present)


def _histogram(values: pa.Array, bins: np.ndarray) -> np.ndarray:
    array = values.drop_null().to_numpy(zero_copy_only=False).astype(np.float64)
    return np.histogram(np.clip(array, bins[0], bins[-1]), bins=bins)[0]


def intruder_stats(files: list[str], opener: Callable[[str], BinaryIO] | None = None) -> dict:
    """Per split: documents, sentences, words (whitespace tokens), positives; and the figures' counts.

    ``sentences_per_document`` and ``intruder_position`` are :class:`Counter` s of integers; ``chosen_similarity``
    is a histogram over :data:`SIMILARITY_BINS` of the similarity of every inserted intruder.
    """
    by_split: dict[str, Counter] = {}
    lengths: Counter = Counter()
    positions: Counter = Counter()
    chosen = np.zeros(len(SIMILARITY_BINS) - 1, dtype=np.int64)
    for batch in _batches(files, ["sentences", "label", "intruder_index", "similarity", "split"], opener):
        n_sentences = pc.list_value_length(batch.column("sentences"))
        words = pc.list_value_length(pc.utf8_split_whitespace(pc.list_flatten(batch.column("sentences"))))
        # words per document: the flattened sentences' word counts summed back per row
        offsets = batch.column("sentences").offsets.to_numpy()
        offsets = offsets - offsets[0]
        per_sentence = np.append(words.to_numpy(zero_copy_only=False), 0)
        word_counts = np.add.reduceat(per_sentence, offsets[:-1])
        word_counts[offsets[:-1] == offsets[1:]] = 0
        table = pa.table(
            {
                "split": batch.column("split"),
                "n": n_sentences,
                "label": batch.column("label"),
                "w": word_counts,
            }
        )
        grouped = table.group_by("split").aggregate(
            [("n", "count"), ("n", "sum"), ("w", "sum"), ("label", "sum")]
        )
        for row in grouped.to_pylist():
            c = by_split.setdefault(row["split"], Counter())
            c["documents"] += row["n_count"]
            c["sentences"] += row["n_sum"]
            c["words"] += row["w_sum"]
            c["positives"] += row["label_sum"]
        lengths.update(n_sentences.to_numpy(zero_copy_only=False).tolist())
        positive = pc.equal(batch.column("label"), 1)
        positions.update(pc.filter(batch.column("intruder_index"), positive).to_pylist())
        chosen += _histogram(pc.filter(batch.column("similarity"), positive), SIMILARITY_BINS)
    return {
        "by_split": {split: dict(c) for split, c in sorted(by_split.items())},
        "sentences_per_document": lengths,
        "intruder_position": positions,
        "chosen_similarity": chosen,
    }


def candidate_stats(files: list[str], opener: Callable[[str], BinaryIO] | None = None) -> dict[str, dict]:
    """Per source: candidate count, similarity histogram (all candidates) and filter-score histogram (if scored)."""
    out: dict[str, dict] = {}
    for batch in _batches(files, ["source", "similarity", "filter_score"], opener):
        for source in pc.unique(batch.column("source")).to_pylist():
            rows = batch.filter(pc.equal(batch.column("source"), source))
            stats = out.setdefault(
                source,
                {
                    "candidates": 0,
                    "similarity": np.zeros(len(SIMILARITY_BINS) - 1, dtype=np.int64),
                    "filter_score": np.zeros(len(SCORE_BINS) - 1, dtype=np.int64),
                    "scored": 0,
                },
            )
            stats["candidates"] += rows.num_rows
            stats["similarity"] += _histogram(rows.column("similarity"), SIMILARITY_BINS)
            if "filter_score" in rows.schema.names:
                scores = rows.column("filter_score")
                stats["scored"] += len(scores) - scores.null_count
                stats["filter_score"] += _histogram(scores, SCORE_BINS)
    return dict(sorted(out.items()))


def shuffle_stats(
    files: list[str], opener: Callable[[str], BinaryIO] | None = None
) -> dict[str, dict[int, int]]:
    """``{split: {block size k: rows}}`` of one shuffle table."""
    counts: Counter = Counter()
    for batch in _batches(files, ["split", "block_size"], opener):
        counts.update(
            zip(batch.column("split").to_pylist(), batch.column("block_size").to_pylist(), strict=True)
        )
    out: dict[str, dict[int, int]] = {}
    for (split, k), n in sorted(counts.items()):
        out.setdefault(split, {})[int(k)] = n
    return out


def probe_stats(
    files: list[str], opener: Callable[[str], BinaryIO] | None = None
) -> dict[str, dict[str, int]]:
    """``{source: {split: rows}}`` of one probe table (``incoherent probes``)."""
    counts: Counter = Counter()
    for batch in _batches(files, ["source", "split"], opener):
        counts.update(zip(batch.column("source").to_pylist(), batch.column("split").to_pylist(), strict=True))
    out: dict[str, dict[str, int]] = {}
    for (source, split), n in sorted(counts.items()):
        out.setdefault(source, {})[split] = n
    return out


# Per-file statistics add up: a distributed card computes them per file on workers and merges them.


def merge_stats(a, b):
    """The statistics of two sets of files combined: counts and histograms added, key by key (sorted keys)."""
    if isinstance(a, dict):
        keys = sorted(set(a) | set(b))
        merged = {k: merge_stats(a[k], b[k]) if k in a and k in b else a.get(k, b.get(k)) for k in keys}
        return Counter(merged) if isinstance(a, Counter) else merged
    return a + b


def to_json(stats) -> str:
    """Statistics as JSON (Counters, integer keys and histograms tagged, so :func:`from_json` restores them)."""

    def encode(value):
        if isinstance(value, np.ndarray):
            return {"__array__": value.tolist()}
        if isinstance(value, dict):
            items = [[k, encode(v)] for k, v in sorted(value.items())]
            return {"__counter__" if isinstance(value, Counter) else "__dict__": items}
        return value.item() if isinstance(value, np.generic) else value

    return json.dumps(encode(stats), sort_keys=True)


def from_json(text: str):
    def decode(value):
        if isinstance(value, dict):
            if "__array__" in value:
                return np.asarray(value["__array__"], dtype=np.int64)
            if "__counter__" in value:
                return Counter({k: decode(v) for k, v in value["__counter__"]})
            return {k: decode(v) for k, v in value["__dict__"]}
        return value

    return decode(json.loads(text))
