"""Intruder-sentence documents (INSteD method, Shen et al., 2021, §3), as plain functions.

The steps, each a function here and each seeded by ``(seed, purpose, document id)`` through
:mod:`corpora.seeding`, so the rows never depend on the runner:

1. **Length rule** (:func:`apply_length_rule`), chosen by the source's *kind* (:data:`KIND_POLICIES`, never
   its name): Wikipedia leads (and every kind but ``cnn``) are kept when they have 3-8 sentences, dropped
   otherwise; CNN articles are truncated to their first ``n`` sentences, ``n ~ U{3..8}`` drawn per article.
   Documents whose sentences are all identical are dropped.
2. **Which documents become incoherent** (:func:`wants_intruder`): half of them, by a draw per id.
3. **The sentence to replace** (:func:`replaced_index`): a uniform non-opening position ``1..n-1``.
4. **Candidates** (:func:`make_candidates`): from each of the top-``k`` neighbours ``D'`` of the same source
   one uniform non-opening sentence ``S'`` (:func:`candidate_index`). A candidate identical to a sentence of
   the document (after case and whitespace folding), or without any word character (a lone quote mark left
   by sentence splitting, whose TF-IDF vector is empty), is skipped and counted.
5. **Similarity filter** (:func:`below_threshold`): candidates whose TF-IDF cosine with the replaced sentence
   is ``>= threshold`` (0.6) are not eligible. Every candidate keeps its similarity in ``candidates/``, so
   the threshold can change later without re-running retrieval.
6. **Selection** (:func:`intruder_row`): one eligible candidate replaces ``S``, drawn by
   :func:`corpora.selection.choose_candidate` (hard candidates preferred when the adversarial filter scored
   them). If none is eligible the document stays coherent and ``fallback_reason`` says why.

>>> doc = {"id": "d1", "source": "wikipedia", "title": "T", "sentences": ["A.", "B.", "C."], "dump": None,
...        "revision_id": None}
>>> row = intruder_row(doc, "train", [], attempted=False, seed=0)
>>> row["label"], row["intruder_index"], row["sentences"]
(0, -1, ['A.', 'B.', 'C.'])
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from incoherent.corpora import drift, sampling
from incoherent.corpora.seeding import assign_split, rng_for
from incoherent.corpora.selection import UNFILTERED
from incoherent.schemas.records import Rejected, newest_first

Tally = Callable[..., None]  # tally(source, counter name, n=1): counts what a decision saw

MIN_SENTENCES = 3
MAX_SENTENCES = 8
INCOHERENT_RATE = 0.5
SIMILARITY_THRESHOLD = 0.6
DEFAULT_K = 10
FILTER, TRUNCATE = "filter", "truncate"


@dataclass(frozen=True)
class KindPolicy:
    """What the intruder method does differently per *kind* of source (``ingest wikipedia``, ``ingest cnn``,
    ``ingest text``): the share of documents in the test split and the length rule. A source's name never
    chooses it: a Wikipedia source named ``enwiki`` and one named ``wikipedia`` get the same policy."""

    test_fraction: float
    length_rule: str


# Shen et al. (2021): 8% of Wikipedia leads and 20% of CNN articles are test documents.
KIND_POLICIES = {"wikipedia": KindPolicy(0.08, FILTER), "cnn": KindPolicy(0.2, TRUNCATE)}
DEFAULT_POLICY = KindPolicy(0.2, FILTER)  # every other kind (``text``)


def policy(kind: str) -> KindPolicy:
    """The policy of a kind of source.

    >>> policy("wikipedia"), policy("text")
    (KindPolicy(test_fraction=0.08, length_rule='filter'), KindPolicy(test_fraction=0.2, length_rule='filter'))
    """
    return KIND_POLICIES.get(kind, DEFAULT_POLICY)


# Length-rule outcomes (counter names).
KEPT_IN_RANGE = "kept_in_range"  # filter rule, 3-8 sentences
KEPT_TRUNCATED = "kept_truncated"  # truncate rule, cut to the drawn n
KEPT_WHOLE = "kept_shorter_than_draw"  # truncate rule, fewer sentences than the drawn n (>= 3): kept whole
TOO_FEW = "too_few_sentences"
TOO_MANY = "too_many_sentences"
IDENTICAL = "identical_sentences"

# Why a document meant to be incoherent stayed coherent (``fallback_reason``).
NO_NEIGHBORS = "no_neighbors"  # the document has no neighbour at all
NO_CANDIDATES = "no_candidates"  # neighbours exist but none gave a usable sentence
ALL_TOO_SIMILAR = "all_too_similar"  # every candidate has similarity >= threshold

# Why a neighbour gave no candidate (counter names).
NEIGHBOR_MISSING = "neighbor_missing"  # listed by the neighbours table but not among the documents
NEIGHBOR_TOO_SHORT = "neighbor_too_short"  # fewer than two sentences: no non-opening sentence
NEIGHBOR_OTHER_SOURCE = "neighbor_other_source"
NEIGHBOR_IS_SELF = "neighbor_is_self"
IDENTICAL_CANDIDATE = "candidate_identical_to_document_sentence"
NO_WORDS_CANDIDATE = "candidate_without_words"  # e.g. a lone '"' left by sentence splitting

_WORD = re.compile(r"\w")


def normalise(sentence: str) -> str:
    """The form sentences are compared in for identity: case-folded, whitespace collapsed.

    >>> normalise("  The  Cat ") == normalise("the cat")
    True

    ``str.split()`` splits on exactly the characters ``\\s`` matches in a ``str`` pattern, and case folding
    makes no whitespace, so this equals ``re.sub(r"\\s+", " ", sentence).strip().casefold()`` (faster).
    """
    return " ".join(sentence.split()).casefold()


# --------------------------------------------------------------------------------------------- length rule


def length_mode(kind: str) -> str:
    """``truncate`` for the kind ``cnn`` (first n ~ U{3..8} sentences), ``filter`` (keep 3-8) for every other."""
    return policy(kind).length_rule


def truncation_length(seed: int, doc_id: str, lo: int = MIN_SENTENCES, hi: int = MAX_SENTENCES) -> int:
    """The n of the truncate rule, uniform on ``{lo..hi}`` and fixed by ``(seed, id)``."""
    return rng_for(seed, "truncate", doc_id).randint(lo, hi)


def apply_length_rule(
    doc: dict, seed: int, mode: str = FILTER, lo: int = MIN_SENTENCES, hi: int = MAX_SENTENCES
) -> tuple[dict, str] | Rejected:
    """``(document, outcome)`` with the document cut to its kept sentences, or a :class:`Rejected`; ``mode``:
    the length rule of the document's kind (:func:`length_mode`).

    >>> d = {"id": "w:1", "source": "wikipedia", "sentences": ["a", "b"]}
    >>> apply_length_rule(d, 0).reason
    'too_few_sentences'
    >>> apply_length_rule(dict(d, sentences=["a", "b", "c"]), 0)[1]
    'kept_in_range'
    """
    sentences = list(doc["sentences"])
    n = len(sentences)
    if n < lo:
        return Rejected(TOO_FEW, id=doc["id"], source=doc["source"], detail=f"{n} sentences, need >= {lo}")
    if mode == FILTER:
        if n > hi:
            return Rejected(
                TOO_MANY, id=doc["id"], source=doc["source"], detail=f"{n} sentences, need <= {hi}"
            )
        outcome = KEPT_IN_RANGE
    elif mode == TRUNCATE:
        target = truncation_length(seed, doc["id"], lo, hi)
        outcome = KEPT_TRUNCATED if n >= target else KEPT_WHOLE
        sentences = sentences[:target]
    else:
        raise ValueError(f"length rule must be {FILTER!r} or {TRUNCATE!r}, got {mode!r}")
    first = normalise(sentences[0]) if sentences else None
    if sentences and all(normalise(s) == first for s in sentences[1:]):  # stops at the first difference
        return Rejected(
            IDENTICAL, id=doc["id"], source=doc["source"], detail=f"{len(sentences)} copies of one sentence"
        )
    return dict(doc, sentences=sentences), outcome


# --------------------------------------------------------------------------------------------- splits


def test_fraction(kind: str) -> float:
    """Share of a kind's documents in the test split: CNN 20%, Wikipedia 8% (Shen et al., 2021), others 20%."""
    return policy(kind).test_fraction


def split_fractions(kind: str, validation_fraction: float = 0.0) -> dict[str, float]:
    """``{"test": ..., "validation": ...}`` for :func:`corpora.seeding.assign_split`."""
    fractions = {"test": test_fraction(kind)}
    if validation_fraction:
        fractions["validation"] = validation_fraction
    return fractions


def plain_split(doc_id: str, kind: str, validation_fraction: float = 0.0) -> str:
    """Split by a hash of the id (no protection against text a model saw in pre-training), at the test share
    of the document's kind."""
    return assign_split(doc_id, split_fractions(kind, validation_fraction))


# --------------------------------------------------------------------------------------------- draws


def wants_intruder(seed: int, doc_id: str, rate: float = INCOHERENT_RATE) -> bool:
    """Whether the document is meant to receive an intruder (half of them by default)."""
    return rng_for(seed, "incoherent", doc_id).random() < rate


def replaced_index(seed: int, doc_id: str, n_sentences: int) -> int:
    """The non-opening position ``1..n-1`` whose sentence is replaced."""
    if n_sentences < 2:
        raise ValueError(f"{doc_id}: a document needs two sentences to receive an intruder")
    return rng_for(seed, "replace", doc_id).randrange(1, n_sentences)


def candidate_index(seed: int, doc_id: str, neighbor_id: str, n_sentences: int) -> int | None:
    """The non-opening sentence of neighbour ``neighbor_id`` offered to ``doc_id`` (None if it has none)."""
    if n_sentences < 2:
        return None
    return rng_for(seed, "candidate", f"{doc_id}\x1f{neighbor_id}").randrange(1, n_sentences)


# --------------------------------------------------------------------------------------------- candidates


@dataclass(frozen=True)
class Offer:
    """What one neighbour offers a document: its rank (0 = most similar), score and one sentence.

    ``source`` is None when the neighbour is not among the documents; ``index``/``sentence`` are None when it
    has no non-opening sentence. Built by :func:`offer`, where the neighbour's document is at hand, so only
    one sentence per neighbour travels to the document.
    """

    rank: int
    id: str
    score: float
    source: str | None
    index: int | None
    sentence: str | None


def offer(seed: int, doc_id: str, rank: int, neighbor_id: str, score: float, neighbor: dict | None) -> Offer:
    """The sentence neighbour ``neighbor_id`` (row ``neighbor``, or None if unknown) offers ``doc_id``.

    >>> offer(0, "d", 0, "n", 0.5, {"source": "s", "sentences": ["x", "y"]}).sentence
    'y'
    """
    if neighbor is None:
        return Offer(rank, neighbor_id, float(score), None, None, None)
    sentences = neighbor["sentences"]
    index = candidate_index(seed, doc_id, neighbor_id, len(sentences))
    return Offer(
        rank,
        neighbor_id,
        float(score),
        neighbor["source"],
        index,
        None if index is None else sentences[index],
    )


def make_candidates(
    doc: dict, split: str, offers: Iterable[Offer], seed: int, k: int = DEFAULT_K
) -> tuple[list[dict], dict[str, int]]:
    """Candidate rows (``CANDIDATE_SCHEMA``, similarity not yet set) and skip counts for one document.

    ``doc`` is the document as it will appear in the dataset (after the length rule). Only the ``k``
    best-ranked offers are used. The replaced position is :func:`replaced_index`.
    """
    sentences = list(doc["sentences"])
    position = replaced_index(seed, doc["id"], len(sentences))
    own = {normalise(s) for s in sentences}
    skipped: dict[str, int] = {}
    candidates = []
    for o in sorted(offers, key=lambda o: (o.rank, o.id))[:k]:
        reason = None
        if o.id == doc["id"]:
            reason = NEIGHBOR_IS_SELF
        elif o.source is None:
            reason = NEIGHBOR_MISSING
        elif o.source != doc["source"]:
            reason = NEIGHBOR_OTHER_SOURCE
        elif o.index is None:
            reason = NEIGHBOR_TOO_SHORT
        elif not _WORD.search(o.sentence):
            reason = NO_WORDS_CANDIDATE
        elif normalise(o.sentence) in own:
            reason = IDENTICAL_CANDIDATE
        if reason:
            skipped[reason] = skipped.get(reason, 0) + 1
            continue
        candidates.append(
            {
                "id": doc["id"],
                "source": doc["source"],
                "split": split,
                "replaced_index": position,
                "original_sentence": sentences[position],
                "candidate_sentence": o.sentence,
                "candidate_source_id": o.id,
                "candidate_index": o.index,
                "neighbor_rank": o.rank,
                "neighbor_score": o.score,
                "similarity": None,
                "filter_score": None,
                "difficulty": None,
            }
        )
    return candidates, skipped


def with_similarities(
    candidates: Sequence[dict], similarities: Callable[[list[str], list[str]], Sequence[float]]
) -> list[dict]:
    """Fill ``similarity`` with ``similarities(originals, candidates)`` (pairwise TF-IDF cosine), in one call."""
    if not candidates:
        return []
    values = similarities(
        [c["original_sentence"] for c in candidates], [c["candidate_sentence"] for c in candidates]
    )
    return [dict(c, similarity=float(v)) for c, v in zip(candidates, values, strict=True)]


def below_threshold(candidates: Iterable[dict], threshold: float = SIMILARITY_THRESHOLD) -> list[dict]:
    """The candidates eligible to replace the sentence: similarity strictly below ``threshold``."""
    return [c for c in candidates if c["similarity"] < threshold]


def document_with(doc_sentences: Sequence[str], candidate: dict) -> list[str]:
    """The document's sentences with the candidate in place of the replaced one."""
    sentences = list(doc_sentences)
    sentences[candidate["replaced_index"]] = candidate["candidate_sentence"]
    return sentences


# --------------------------------------------------------------------------------------------- rows


def _choose(candidates: list[dict], seed: int, doc_id: str) -> dict:
    from incoherent.corpora.selection import choose_candidate

    return choose_candidate(candidates, rng_for(seed, "choose", doc_id))


def intruder_row(
    doc: dict,
    split: str,
    candidates: Sequence[dict],
    *,
    attempted: bool,
    seed: int,
    threshold: float = SIMILARITY_THRESHOLD,
    had_neighbors: bool = True,
) -> dict:
    """The ``INTRUDER_SCHEMA`` row of a document.

    ``candidates`` are the document's scored candidates (similarity set; ``difficulty`` set by the filter or
    ``"unfiltered"``). A document not ``attempted`` is a coherent original; an attempted one gets the
    chosen eligible candidate, or stays coherent with a ``fallback_reason``.
    """
    row = {
        "id": doc["id"],
        "source": doc["source"],
        "title": doc.get("title"),
        "sentences": list(doc["sentences"]),
        "label": 0,
        "intruder_index": -1,
        "original_sentence": None,
        "intruder_sentence": None,
        "intruder_source_id": None,
        "similarity": None,
        "filter_score": None,
        "difficulty": None,
        "num_candidates": 0,
        "fallback_reason": None,
        "dump": doc.get("dump"),
        "revision_id": doc.get("revision_id"),
        "split": split,
    }
    if not attempted:
        return row
    eligible = below_threshold(candidates, threshold)
    row["num_candidates"] = len(eligible)
    if not eligible:
        if candidates:
            row["fallback_reason"] = ALL_TOO_SIMILAR
        else:
            row["fallback_reason"] = NO_CANDIDATES if had_neighbors else NO_NEIGHBORS
        return row
    chosen = _choose(eligible, seed, doc["id"])
    row.update(
        sentences=document_with(doc["sentences"], chosen),
        label=1,
        intruder_index=chosen["replaced_index"],
        original_sentence=chosen["original_sentence"],
        intruder_sentence=chosen["candidate_sentence"],
        intruder_source_id=chosen["candidate_source_id"],
        similarity=chosen["similarity"],
        filter_score=chosen.get("filter_score"),
        difficulty=chosen.get("difficulty"),
    )
    return row


# --------------------------------------------------------------------------------------------- decisions
# What the Beam stages of ``incoherent intruders`` decide per document, as plain functions: ``tally(source,
# name, n=1)`` receives the counts (the stage turns them into Beam counters).


def choose_version(
    new: Sequence[dict],
    old: Sequence[dict],
    *,
    seed: int,
    sample_threshold: Callable[[str], int | None] = lambda source: None,
    history_sources: Collection[str] = (),
    similarities: Callable[[str], Callable[[list[str], list[str]], Sequence[float]]] | None = None,
    drift_threshold: float = drift.DRIFT_THRESHOLD,
    kinds: Mapping[str, str] | None = None,
    tally: Tally,
) -> list[tuple[str, tuple[str, dict, dict | None]]]:
    """``[(tag, (source, newest copy, eligible older version or None))]`` for the copies of one id.

    ``new`` are the copies in the newest documents, ``old`` the older versions (history). ``tag`` is
    ``"unsampled"`` for a document left out by the sample (:func:`corpora.sampling.in_sample` with
    ``sample_threshold(source)``: a candidate source only), ``"versions"`` otherwise. For the
    ``history_sources`` (those with older dumps) the most drifted usable older version is chosen
    (:func:`corpora.drift.choose_old_version` with the cosines ``similarities(source)``); an older version is
    usable when it passes the length rule of its source's kind (``kinds``: source -> kind).

    >>> seen = []
    >>> doc = {"id": "a", "source": "cnn", "sentences": ["A.", "B.", "C."]}
    >>> choose_version([doc], [], seed=0, tally=lambda *a: seen.append(a))
    [('versions', ('cnn', {'id': 'a', 'source': 'cnn', 'sentences': ['A.', 'B.', 'C.']}, None))]
    >>> seen
    [('cnn', 'read')]
    """
    newest = sorted(new, key=newest_first, reverse=True)
    olds = sorted(old, key=newest_first, reverse=True)
    if not newest:
        for o in olds:
            tally(o["source"], "history_unmatched_versions")
        return []
    doc = newest[0]
    source = doc["source"]
    if len(newest) > 1:
        tally(source, "duplicate_id_older_copies_ignored", len(newest) - 1)
    tally(source, "read")
    threshold = sample_threshold(source)
    if threshold is not None and not sampling.in_sample(seed, doc["id"], threshold):
        tally(source, "not_sampled")
        return [("unsampled", (source, doc, None))]
    if source not in history_sources:
        return [("versions", (source, doc, None))]
    tally(source, "history_candidates")
    olds = [o for o in olds if o["source"] == source]
    if olds:
        tally(source, "history_matched")
        tally(source, "history_versions_compared", len(olds))

    mode = length_mode((kinds or {})[source])

    def usable(version):
        return not isinstance(apply_length_rule(version, seed, mode), Rejected)

    version, info = drift.choose_old_version(doc, olds, similarities(source), drift_threshold, usable)
    if info["drifted"]:
        tally(source, "history_drifted")
    if version is not None:
        tally(source, "drift_eligible")
    return [("versions", (source, doc, version))]


def place_split(
    source: str,
    doc: dict,
    version: dict | None,
    counts: dict[tuple[str, str], int],
    *,
    kind: str,
    history: bool,
    validation_fraction: float = 0.0,
    tally: Tally,
) -> tuple[dict, str]:
    """``(the document to use, its split)``. Without history the split is :func:`plain_split` of the newest
    document; with history a document with an eligible older ``version`` goes to ``test`` at the rate that
    keeps the test share (``counts``: ``{(source, "eligible" | "total"): n}`` over the whole collection), and
    then the older version is the document. The test share is that of the source's ``kind``.

    >>> place_split("news", {"id": "a"}, None, {}, kind="cnn", history=False, tally=print)
    ({'id': 'a'}, 'train')
    """
    if not history:
        return doc, plain_split(doc["id"], kind, validation_fraction)
    fraction = test_fraction(kind)
    rate = drift.test_rate(fraction, counts.get((source, "eligible"), 0), counts.get((source, "total"), 0))
    split = drift.drift_split(doc["id"], version is not None, rate, fraction, validation_fraction)
    if split == "test":
        tally(source, "test_from_history")
        return version, split
    return doc, split


def place_document(
    source: str,
    newest: dict,
    version: dict | None,
    counts: dict[tuple[str, str], int],
    *,
    seed: int,
    kind: str,
    history: bool,
    validation_fraction: float = 0.0,
    tally: Tally,
) -> Rejected | tuple[str, dict, str]:
    """The split (:func:`place_split`), the length rule and the draw for one chosen document: a
    :class:`Rejected` (dead letter), ``("coherent", coherent row, split)`` or ``("target", kept document,
    split)`` for a document meant to receive an intruder. Split share and length rule: those of ``kind``.

    >>> doc = {"id": "d", "source": "enwiki", "sentences": ["A."]}
    >>> place_document("enwiki", doc, None, {}, seed=0, kind="wikipedia", history=False, tally=print).reason
    enwiki too_few_sentences
    'too_few_sentences'
    """
    doc, split = place_split(
        source,
        newest,
        version,
        counts,
        kind=kind,
        history=history,
        validation_fraction=validation_fraction,
        tally=tally,
    )
    result = apply_length_rule(doc, seed, length_mode(kind))
    if isinstance(result, Rejected):
        tally(doc["source"], result.reason)
        return result
    kept, outcome = result
    tally(kept["source"], outcome)
    if wants_intruder(seed, kept["id"]):
        return "target", kept, split
    tally(kept["source"], "coherent_by_draw")
    return "coherent", intruder_row(kept, split, [], attempted=False, seed=seed), split


def select_row(
    doc: dict,
    split: str,
    had_neighbors: bool,
    candidates: list[dict],
    *,
    seed: int,
    threshold: float = SIMILARITY_THRESHOLD,
    tally: Tally,
) -> dict:
    """The intruder row of an attempted document from its candidates (any order), counted as ``produced`` or
    ``fallback_<reason>``.

    >>> doc = {"id": "d", "source": "cnn", "sentences": ["A.", "B.", "C."]}
    >>> select_row(doc, "train", False, [], seed=0, tally=print)["fallback_reason"]
    cnn fallback_no_neighbors
    'no_neighbors'
    """
    row = intruder_row(
        doc, split, candidates, attempted=True, seed=seed, threshold=threshold, had_neighbors=had_neighbors
    )
    if row["label"]:
        tally(doc["source"], "produced")
    else:
        tally(doc["source"], f"fallback_{row['fallback_reason']}")
    return row


def eligibility_counts(
    versions: Iterable[tuple[str, dict, dict | None]],
) -> list[tuple[tuple[str, str], int]]:
    """``[((source, "total" | "eligible"), n)]`` of chosen versions ``(source, newest, older version or
    None)``, sorted: summed over the collection they are the ``counts`` of :func:`place_split`.

    >>> eligibility_counts([("wikipedia", {}, None), ("wikipedia", {}, {"id": "a"})])
    [(('wikipedia', 'eligible'), 1), (('wikipedia', 'total'), 2)]
    """
    counts: dict[tuple[str, str], int] = {}
    for source, _doc, version in versions:
        counts[(source, "total")] = counts.get((source, "total"), 0) + 1
        if version is not None:
            counts[(source, "eligible")] = counts.get((source, "eligible"), 0) + 1
    return sorted(counts.items())


def neighbors_to_ask(
    source: str, listed: Sequence[tuple[int, str, float]] | None, k: int, *, tally: Tally
) -> list[tuple[int, str, float]]:
    """The ``k`` best-ranked ``(rank, neighbour id, score)`` of a document meant to receive an intruder (its
    list in the neighbours table, or None when it has none), counted as ``incoherent_attempted`` and, when
    short, ``not_in_neighbors_table`` or ``fewer_than_k_neighbors``.

    >>> neighbors_to_ask("cnn", [(1, "b", 0.2), (0, "a", 0.3)], 1, tally=print)
    cnn incoherent_attempted
    [(0, 'a', 0.3)]
    """
    tally(source, "incoherent_attempted")
    if listed is None:
        tally(source, "not_in_neighbors_table")
        listed = []
    elif len(listed) < k:
        tally(source, "fewer_than_k_neighbors")
    return sorted(listed)[:k]


def finish_candidates(
    doc: dict, candidates: Sequence[dict], *, threshold: float, filtered: bool, tally: Tally
) -> None:
    """Ready a document's candidates (similarity set) to go on, in place: with the adversarial filter each gets
    ``document``, the document with it in place, for the model to read; without, ``difficulty`` is
    ``unfiltered``. Counts ``candidates`` and ``candidates_below_threshold`` (the eligible ones).

    >>> cands = [{"replaced_index": 1, "candidate_sentence": "X.", "similarity": 0.1}]
    >>> finish_candidates({"source": "cnn", "sentences": ["A.", "B."]}, cands, threshold=0.6, filtered=True,
    ...                   tally=print)
    cnn candidates 1
    cnn candidates_below_threshold
    >>> cands[0]["document"]
    ['A.', 'X.']
    """
    source = doc["source"]
    tally(source, "candidates", len(candidates))
    for candidate in candidates:
        if candidate["similarity"] < threshold:
            tally(source, "candidates_below_threshold")
        if filtered:
            candidate["document"] = document_with(doc["sentences"], candidate)
        else:
            candidate["difficulty"] = UNFILTERED
