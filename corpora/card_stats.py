"""Statistics of a built dataset for its card, read from the Parquet tables column by column.

Every table is streamed in record batches of the few columns a statistic needs, and only counts and fixed-bin
histograms are kept, so memory does not grow with the number of rows. Example (one intruder table)::

    >>> stats = intruder_stats(["intruder-cnn/test-00000-of-00001.parquet"])   # doctest: +SKIP
    >>> stats["by_split"]["test"]
    {'documents': 9, 'sentences': 52, 'words': 1102, 'positives': 4}
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

BATCH_ROWS = 4096
SIMILARITY_BINS = np.linspace(0.0, 1.0, 51)  # 0.02 wide: the 0.6 threshold is a bin edge
SCORE_BINS = np.linspace(0.0, 1.0, 21)


def _batches(files: list[str], columns: list[str]):
    for path in files:
        parquet = pq.ParquetFile(path)
        present = [c for c in columns if c in parquet.schema_arrow.names]
        yield from parquet.iter_batches(batch_size=BATCH_ROWS, columns=present)


def _histogram(values: pa.Array, bins: np.ndarray) -> np.ndarray:
    array = values.drop_null().to_numpy(zero_copy_only=False).astype(np.float64)
    return np.histogram(np.clip(array, bins[0], bins[-1]), bins=bins)[0]


def intruder_stats(files: list[str]) -> dict:
    """Per split: documents, sentences, words (whitespace tokens), positives; and the figures' counts.

    ``sentences_per_document`` and ``intruder_position`` are :class:`Counter` s of integers; ``chosen_similarity``
    is a histogram over :data:`SIMILARITY_BINS` of the similarity of every inserted intruder.
    """
    by_split: dict[str, Counter] = {}
    lengths: Counter = Counter()
    positions: Counter = Counter()
    chosen = np.zeros(len(SIMILARITY_BINS) - 1, dtype=np.int64)
    for batch in _batches(files, ["sentences", "label", "intruder_index", "similarity", "split"]):
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


def candidate_stats(files: list[str]) -> dict[str, dict]:
    """Per source: candidate count, similarity histogram (all candidates) and filter-score histogram (if scored)."""
    out: dict[str, dict] = {}
    for batch in _batches(files, ["source", "similarity", "filter_score"]):
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


def shuffle_stats(files: list[str]) -> dict[str, dict[int, int]]:
    """``{split: {block size k: rows}}`` of one shuffle table."""
    counts: Counter = Counter()
    for batch in _batches(files, ["split", "block_size"]):
        counts.update(
            zip(batch.column("split").to_pylist(), batch.column("block_size").to_pylist(), strict=True)
        )
    out: dict[str, dict[int, int]] = {}
    for (split, k), n in sorted(counts.items()):
        out.setdefault(split, {})[int(k)] = n
    return out


def sources_of(files: list[str]) -> set[str]:
    """The distinct ``source`` values of a table."""
    found: set[str] = set()
    for batch in _batches(files, ["source"]):
        found.update(pc.unique(batch.column("source")).to_pylist())
    return found
