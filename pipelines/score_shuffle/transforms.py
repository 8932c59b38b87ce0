"""The transform of ``incoherent score-shuffle`` (imported by :func:`pipelines.score_shuffle.run`, so ``--help``
imports no Beam)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import apache_beam as beam
from apache_beam.ml.inference.base import ModelHandler, RunInference

from incoherent.corpora.seeding import stable_hash
from incoherent.corpora.shuffle_results import compare
from incoherent.pipelines.runtime.tables import ApplyWithRejects, count
from incoherent.schemas.records import Rejected

STAGE = "score-shuffle"


def text_key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def make_pair(row: dict, join: str) -> dict | Rejected:
    """A shuffle row -> ``{id, source, block_size, permutation, original, shuffled}`` (their sentences, empty
    ones left out) and the keys of their joined texts, or a Rejected for an empty document."""
    from incoherent.filters.lm_windows import join_sentences

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
    pair: dict,
    original: tuple[float, int],
    shuffled: tuple[float, int],
    tally: Callable[[str], None],
    compare_by: str = "mean",
) -> dict | Rejected:
    """A row of :data:`schemas.SCORES_SCHEMA`, or a Rejected when a text had no token to score; a pair whose
    shuffled text is its original (e.g. one block) counts as ``identical_texts``.

    ``compare_by`` is the statistic that decides ``correct`` and ``tie``: ``mean`` the texts' scores (mean
    NLL per token), ``sum`` their summed NLL (score x tokens, what lm-evaluation-harness's ``acc`` compares).
    The score columns hold the mean NLL either way.

    >>> pair = {"id": "d", "source": "s", "block_size": 2, "permutation": 0, "original_key": "a",
    ...         "shuffled_key": "b"}
    >>> row = finish_pair(pair, (2.0, 10), (1.9, 12), print)
    >>> row["correct"], finish_pair(pair, (2.0, 10), (1.9, 12), print, "sum")["correct"]
    (False, True)
    """
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
    if compare_by == "sum":
        correct, tie = compare(score_o * tokens_o, score_s * tokens_s)
    else:
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


def pool_of(document_key: str, texts: int, pool_size: int) -> int:
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

    def __init__(self, handler: ModelHandler, join: str, pool_size: int, compare_by: str = "mean"):
        super().__init__()
        self._handler, self._join, self._pool_size = handler, join, pool_size
        self._compare_by = compare_by

    def expand(self, rows):
        join, pool_size, compare_by = self._join, self._pool_size, self._compare_by

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
                yield finish_pair(pair, original, score, _count, compare_by)

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
