"""Pure logic of the intruder corpus (corpora/intruders.py): tiny literal inputs, exact outputs."""

from __future__ import annotations

import pytest

from incoherent.corpora import intruders as logic
from incoherent.corpora.intruders import Offer
from incoherent.schemas import INTRUDER_SCHEMA
from incoherent.schemas.records import Rejected
from incoherent.schemas.tables import CANDIDATE_SCHEMA


def doc(doc_id="wikipedia:1", source="wikipedia", sentences=("A a.", "B b.", "C c.", "D d.")):
    return {
        "id": doc_id,
        "source": source,
        "title": "T",
        "sentences": list(sentences),
        "dump": "x",
        "revision_id": 7,
    }


# ------------------------------------------------------------------------------------------- length rule


@pytest.mark.parametrize(
    ("n", "expected"),
    [(2, logic.TOO_FEW), (3, logic.KEPT_IN_RANGE), (8, logic.KEPT_IN_RANGE), (9, logic.TOO_MANY)],
)
def test_wikipedia_keeps_leads_of_three_to_eight_sentences(n, expected):
    result = logic.apply_length_rule(doc(sentences=[f"S{i}." for i in range(n)]), seed=0)
    outcome = result.reason if isinstance(result, Rejected) else result[1]
    assert outcome == expected
    if not isinstance(result, Rejected):
        assert result[0]["sentences"] == [f"S{i}." for i in range(n)]


def test_cnn_is_truncated_to_a_seeded_uniform_length():
    lengths = [logic.truncation_length(0, f"cnn:{i}") for i in range(2000)]
    assert set(lengths) == {3, 4, 5, 6, 7, 8}
    assert all(abs(lengths.count(n) / 2000 - 1 / 6) < 0.03 for n in range(3, 9))
    story = doc("cnn:abc", "cnn", [f"S{i}." for i in range(30)])
    kept, outcome = logic.apply_length_rule(story, seed=0, mode=logic.length_mode("cnn"))
    n = logic.truncation_length(0, "cnn:abc")
    assert outcome == logic.KEPT_TRUNCATED and kept["sentences"] == story["sentences"][:n]
    assert logic.apply_length_rule(story, seed=0, mode=logic.TRUNCATE) == (kept, outcome)  # same cut


def test_cnn_shorter_than_its_draw_is_kept_whole_and_too_short_is_dropped():
    ids = [f"cnn:{i}" for i in range(50)]
    long_draw = next(i for i in ids if logic.truncation_length(0, i) >= 5)
    story = doc(long_draw, "cnn", ["A.", "B.", "C.", "D."])
    kept, outcome = logic.apply_length_rule(story, seed=0, mode=logic.TRUNCATE)
    assert outcome == logic.KEPT_WHOLE and kept["sentences"] == ["A.", "B.", "C.", "D."]
    short = doc("cnn:x", "cnn", ["A.", "B."])
    assert logic.apply_length_rule(short, seed=0, mode=logic.TRUNCATE).reason == logic.TOO_FEW


def test_policy_follows_the_kind_never_the_name():
    """A source's test share and length rule are its kind's, whatever it is called (issue 49: a Wikipedia
    source named ``enwiki`` got CNN's 20% test split, and any source called ``cnn`` was truncated)."""
    assert (logic.test_fraction("wikipedia"), logic.length_mode("wikipedia")) == (0.08, logic.FILTER)
    assert (logic.test_fraction("cnn"), logic.length_mode("cnn")) == (0.2, logic.TRUNCATE)
    assert (logic.test_fraction("text"), logic.length_mode("text")) == (0.2, logic.FILTER)
    story = doc("news:abc", "news", [f"S{i}." for i in range(30)])  # a CNN source called news
    placed = [
        logic.place_document("news", dict(story, id=f"news:{i}"), None, {}, seed=0, kind="cnn",
                             history=False, tally=lambda *a: None)
        for i in range(400)
    ]  # fmt: skip
    assert all(len(p[1]["sentences"]) <= 8 for p in placed)  # truncated, not dropped as too long
    as_cnn = [p[2] for p in placed]
    enwiki = [logic.place_split("enwiki", {"id": f"news:{i}"}, None, {}, kind="wikipedia", history=False,
                                tally=print)[1] for i in range(400)]  # fmt: skip
    assert as_cnn.count("test") > 2 * enwiki.count("test") > 0  # 20% against 8% of the same ids
    named_cnn = logic.place_document("cnn", story, None, {}, seed=0, kind="text", history=False,
                                     tally=lambda *a: None)  # fmt: skip
    assert isinstance(named_cnn, Rejected) and named_cnn.reason == logic.TOO_MANY  # a text source called cnn


def test_documents_whose_sentences_are_all_identical_are_dropped():
    result = logic.apply_length_rule(doc(sentences=["Same.", "same. ", "Same."]), seed=0)
    assert isinstance(result, Rejected) and result.reason == logic.IDENTICAL and result.id == "wikipedia:1"


# ------------------------------------------------------------------------------------------- draws


@pytest.mark.parametrize(
    "sentence",
    [
        "  The  Cat ",
        "a\u00a0b\u2003c",
        "x\x1cy\x1fz",
        "\u1680lead\u3000",
        "Stra\u00dfe \u0130 \ufb03",
        "\t\n",
        "",
    ],
)
def test_normalise_equals_the_regular_expression_form(sentence):
    import re

    assert logic.normalise(sentence) == re.sub(r"\s+", " ", sentence).strip().casefold()


def test_identical_sentences_are_found_by_their_normal_form_whatever_the_order():
    same = doc(sentences=["A  cat.", "a cat.", "A CAT."])
    assert logic.apply_length_rule(same, seed=0).reason == logic.IDENTICAL
    differs_first = doc(sentences=["Other.", "a cat.", "A cat."])
    assert logic.apply_length_rule(differs_first, seed=0)[1] == logic.KEPT_IN_RANGE
    differs_last = doc(sentences=["a cat.", "A cat.", "Other."])
    assert logic.apply_length_rule(differs_last, seed=0)[1] == logic.KEPT_IN_RANGE


def test_half_of_documents_are_meant_to_be_incoherent():
    share = sum(logic.wants_intruder(0, f"d{i}") for i in range(4000)) / 4000
    assert 0.47 < share < 0.53
    assert [logic.wants_intruder(1, f"d{i}") for i in range(50)] != [
        logic.wants_intruder(0, f"d{i}") for i in range(50)
    ]


def test_replaced_and_candidate_positions_are_never_the_opening_sentence():
    assert {logic.replaced_index(0, f"d{i}", 4) for i in range(500)} == {1, 2, 3}
    assert {logic.candidate_index(0, "d", f"n{i}", 3) for i in range(500)} == {1, 2}
    assert logic.candidate_index(0, "d", "n", 1) is None
    with pytest.raises(ValueError):
        logic.replaced_index(0, "d", 1)


def test_splits_follow_the_paper_fractions():
    def share(source, split):
        return sum(logic.plain_split(f"{source}:{i}", source) == split for i in range(5000)) / 5000

    assert abs(share("cnn", "test") - 0.2) < 0.02
    assert abs(share("wikipedia", "test") - 0.08) < 0.015
    assert share("wikipedia", "validation") == 0
    with_validation = [logic.plain_split(f"cnn:{i}", "cnn", 0.1) for i in range(5000)]
    assert abs(with_validation.count("validation") / 5000 - 0.1) < 0.02


# ------------------------------------------------------------------------------------------- candidates


def offers_for(target, neighbors, seed=0):
    return [
        logic.offer(seed, target["id"], rank, n["id"], 1.0 - rank / 10, n) for rank, n in enumerate(neighbors)
    ]


def test_candidates_take_one_non_opening_sentence_per_neighbour():
    target = doc()
    neighbors = [
        doc(f"wikipedia:{i}", sentences=[f"N{i} open.", f"N{i} one.", f"N{i} two."]) for i in range(2, 5)
    ]
    candidates, skipped = logic.make_candidates(target, "train", offers_for(target, neighbors), seed=0)
    assert skipped == {}
    position = logic.replaced_index(0, "wikipedia:1", 4)
    assert [c["candidate_source_id"] for c in candidates] == ["wikipedia:2", "wikipedia:3", "wikipedia:4"]
    for c, n in zip(candidates, neighbors, strict=True):
        assert set(c) == set(CANDIDATE_SCHEMA.names)
        assert c["candidate_index"] >= 1 and n["sentences"][c["candidate_index"]] == c["candidate_sentence"]
        assert c["replaced_index"] == position and c["original_sentence"] == target["sentences"][position]
    assert [c["neighbor_rank"] for c in candidates] == [0, 1, 2]


def test_bad_neighbours_are_skipped_and_counted():
    target = doc(sentences=["Open.", "Shared sentence.", "Other."])
    offers = [
        Offer(0, "wikipedia:1", 0.9, "wikipedia", 1, "x"),  # the document itself
        Offer(1, "wikipedia:404", 0.8, None, None, None),  # not in the corpus
        Offer(2, "cnn:9", 0.7, "cnn", 1, "A CNN sentence."),  # other domain
        Offer(3, "wikipedia:5", 0.6, "wikipedia", None, None),  # one sentence only
        Offer(4, "wikipedia:6", 0.5, "wikipedia", 2, "shared   SENTENCE."),  # identical to one of ours
        Offer(5, "wikipedia:8", 0.45, "wikipedia", 1, '"'),  # no word at all
        Offer(6, "wikipedia:7", 0.4, "wikipedia", 1, "A fine sentence."),
    ]
    candidates, skipped = logic.make_candidates(target, "test", offers, seed=0)
    assert [c["candidate_source_id"] for c in candidates] == ["wikipedia:7"]
    assert skipped == {
        logic.NEIGHBOR_IS_SELF: 1,
        logic.NEIGHBOR_MISSING: 1,
        logic.NEIGHBOR_OTHER_SOURCE: 1,
        logic.NEIGHBOR_TOO_SHORT: 1,
        logic.IDENTICAL_CANDIDATE: 1,
        logic.NO_WORDS_CANDIDATE: 1,
    }


def test_only_the_top_k_neighbours_are_used():
    target = doc()
    offers = [Offer(r, f"wikipedia:{100 + r}", 1.0, "wikipedia", 1, f"Sentence {r}.") for r in range(12)]
    candidates, _ = logic.make_candidates(target, "train", list(reversed(offers)), seed=0, k=10)
    assert [c["neighbor_rank"] for c in candidates] == list(range(10))


def test_similarity_threshold_is_strict():
    cands = [{"similarity": s} for s in (0.0, 0.5999, 0.6, 0.95)]
    assert [c["similarity"] for c in logic.below_threshold(cands, 0.6)] == [0.0, 0.5999]


def test_with_similarities_makes_one_batched_call():
    calls = []

    def sims(a, b):
        calls.append((a, b))
        return [0.1 * i for i in range(len(a))]

    cands = [{"original_sentence": "o", "candidate_sentence": f"c{i}"} for i in range(3)]
    scored = logic.with_similarities(cands, sims)
    assert [round(c["similarity"], 6) for c in scored] == [0.0, 0.1, 0.2]
    assert calls == [(["o", "o", "o"], ["c0", "c1", "c2"])]
    assert logic.with_similarities([], sims) == [] and len(calls) == 1


# ------------------------------------------------------------------------------------------- rows


def candidate(rank, similarity, difficulty="unfiltered", score=None, index=2):
    return {
        "id": "wikipedia:1", "source": "wikipedia", "split": "train", "replaced_index": index,
        "original_sentence": "C c.", "candidate_sentence": f"Intruder {rank}.", "candidate_source_id": f"wikipedia:{10 + rank}",
        "candidate_index": 1, "neighbor_rank": rank, "neighbor_score": 1.0, "similarity": similarity,
        "filter_score": score, "difficulty": difficulty,
    }  # fmt: skip


def test_coherent_row_is_the_source_document_unchanged():
    row = logic.intruder_row(doc(), "train", [], attempted=False, seed=0)
    assert set(row) == set(INTRUDER_SCHEMA.names)
    assert row["sentences"] == doc()["sentences"] and row["label"] == 0 and row["intruder_index"] == -1
    assert row["fallback_reason"] is None and row["num_candidates"] == 0
    assert (row["dump"], row["revision_id"], row["title"]) == ("x", 7, "T")


def test_incoherent_row_replaces_the_sentence_with_an_eligible_candidate():
    cands = [candidate(0, 0.8), candidate(1, 0.2), candidate(2, 0.1)]
    row = logic.intruder_row(doc(), "train", cands, attempted=True, seed=0)
    assert row["label"] == 1 and row["intruder_index"] == 2 and row["num_candidates"] == 2
    assert row["intruder_source_id"] in {"wikipedia:11", "wikipedia:12"}
    assert row["sentences"][2] == row["intruder_sentence"] and row["original_sentence"] == "C c."
    assert row["sentences"][:2] + row["sentences"][3:] == ["A a.", "B b.", "D d."]
    assert row["similarity"] < 0.6 and row["difficulty"] == "unfiltered" and row["filter_score"] is None
    assert logic.intruder_row(doc(), "train", list(reversed(cands)), attempted=True, seed=0) == row


def test_hard_candidates_are_preferred_when_the_filter_scored_them():
    cands = [candidate(0, 0.1, "easy", 0.9), candidate(1, 0.1, "hard", 0.2), candidate(2, 0.1, "easy", 0.8)]
    for seed in range(10):
        row = logic.intruder_row(doc(), "train", cands, attempted=True, seed=seed)
        assert (row["intruder_source_id"], row["difficulty"], row["filter_score"]) == (
            "wikipedia:11",
            "hard",
            0.2,
        )


@pytest.mark.parametrize(
    ("cands", "had_neighbors", "reason"),
    [
        ([], False, logic.NO_NEIGHBORS),
        ([], True, logic.NO_CANDIDATES),
        ([candidate(0, 0.6), candidate(1, 0.9)], True, logic.ALL_TOO_SIMILAR),
    ],
)
def test_fallback_to_coherent_says_why(cands, had_neighbors, reason):
    row = logic.intruder_row(doc(), "test", cands, attempted=True, seed=0, had_neighbors=had_neighbors)
    assert row["label"] == 0 and row["intruder_index"] == -1 and row["fallback_reason"] == reason
    assert row["sentences"] == doc()["sentences"] and row["split"] == "test"


def test_document_with_puts_the_candidate_in_place():
    assert logic.document_with(["a", "b", "c"], {"replaced_index": 1, "candidate_sentence": "X"}) == [
        "a",
        "X",
        "c",
    ]


# --------------------------------------------------------------------------------------------- decisions


def _tally():
    seen: dict[tuple[str, str], int] = {}

    def tally(source, name, n=1):
        seen[(source, name)] = seen.get((source, name), 0) + n

    return seen, tally


def _doc(doc_id, source="wikipedia", sentences=("A a.", "B b.", "C c."), **extra):
    return {"id": doc_id, "source": source, "sentences": list(sentences), **extra}


def test_choose_version_keeps_the_newest_copy_and_counts_the_others():
    seen, tally = _tally()
    old_copy, new_copy = _doc("w:1", revision_id=1), _doc("w:1", revision_id=2)
    chosen = logic.choose_version([old_copy, new_copy], [], seed=0, tally=tally)
    assert chosen == [("versions", ("wikipedia", new_copy, None))]
    assert seen == {("wikipedia", "duplicate_id_older_copies_ignored"): 1, ("wikipedia", "read"): 1}


def test_choose_version_history_without_a_newest_copy_is_unmatched():
    seen, tally = _tally()
    assert logic.choose_version([], [_doc("w:1"), _doc("w:1", dump="x")], seed=0, tally=tally) == []
    assert seen == {("wikipedia", "history_unmatched_versions"): 2}


def test_choose_version_leaves_unsampled_documents_to_the_pool():
    seen, tally = _tally()
    chosen = logic.choose_version([_doc("w:1")], [], seed=0, sample_threshold=lambda source: 0, tally=tally)
    assert chosen[0][0] == "unsampled"
    assert seen[("wikipedia", "not_sampled")] == 1


def test_choose_version_picks_a_drifted_usable_older_version():
    seen, tally = _tally()
    new = _doc("w:1", dump="2022")
    drifted = _doc("w:1", dump="2019", sentences=("X x.", "Y y.", "Z z."))
    too_short = _doc("w:1", dump="2018", sentences=("Q q.",))

    def similarities(source):
        assert source == "wikipedia"
        return lambda a, b: [float(x == y) for x, y in zip(a, b, strict=True)]

    chosen = logic.choose_version(
        [new],
        [drifted, too_short],
        seed=0,
        history_sources={"wikipedia"},
        similarities=similarities,
        kinds={"wikipedia": "wikipedia"},
        tally=tally,
    )
    assert chosen == [("versions", ("wikipedia", new, drifted))]
    assert seen == {
        ("wikipedia", "read"): 1,
        ("wikipedia", "history_candidates"): 1,
        ("wikipedia", "history_matched"): 1,
        ("wikipedia", "history_versions_compared"): 2,
        ("wikipedia", "history_drifted"): 1,
        ("wikipedia", "drift_eligible"): 1,
    }


def test_place_split_takes_the_older_version_for_test_documents():
    seen, tally = _tally()
    counts = {("wikipedia", "eligible"): 1, ("wikipedia", "total"): 1000}  # the rate is capped at 1: all test
    new, old = _doc("w:1", dump="2022"), _doc("w:1", dump="2019")
    wiki = {"kind": "wikipedia", "history": True, "tally": tally}
    assert logic.place_split("wikipedia", new, old, counts, **wiki) == (old, "test")
    assert seen == {("wikipedia", "test_from_history"): 1}
    doc, split = logic.place_split("wikipedia", new, None, counts, **wiki)
    assert doc is new and split != "test"
    assert logic.place_split("cnn", new, None, {}, kind="cnn", history=False, tally=tally) == (
        new,
        logic.plain_split("w:1", "cnn"),
    )


def test_select_row_counts_produced_or_the_fallback():
    seen, tally = _tally()
    doc = _doc("w:1")
    candidate = {
        "replaced_index": 1,
        "neighbor_rank": 0,
        "candidate_source_id": "w:2",
        "candidate_index": 1,
        "original_sentence": "B b.",
        "candidate_sentence": "N n.",
        "similarity": 0.1,
        "difficulty": "unfiltered",
    }
    row = logic.select_row(doc, "train", True, [candidate], seed=0, tally=tally)
    assert row["label"] == 1 and row["sentences"][1] == "N n."
    row = logic.select_row(doc, "train", True, [dict(candidate, similarity=0.9)], seed=0, tally=tally)
    assert row["fallback_reason"] == logic.ALL_TOO_SIMILAR
    assert seen == {("wikipedia", "produced"): 1, ("wikipedia", "fallback_all_too_similar"): 1}


def test_place_document_rejects_keeps_or_draws():
    seen, tally = _tally()
    rejected = logic.place_document(
        "wikipedia",
        _doc("w:1", sentences=("A a.",)),
        None,
        {},
        seed=0,
        kind="wikipedia",
        history=False,
        tally=tally,
    )
    assert isinstance(rejected, Rejected) and rejected.reason == logic.TOO_FEW
    placed = [
        logic.place_document(
            "wikipedia", _doc(f"w:{i}"), None, {}, seed=0, kind="wikipedia", history=False, tally=tally
        )
        for i in range(40)
    ]
    kinds = {kind for kind, _value, _split in placed}
    assert kinds == {"coherent", "target"}  # half by draw
    for kind, value, split in placed:
        assert split == logic.plain_split(value["id"], "wikipedia")
        if kind == "coherent":
            assert value["label"] == 0 and value["split"] == split
        else:
            assert logic.wants_intruder(0, value["id"])
    coherent = sum(kind == "coherent" for kind, _value, _split in placed)
    assert seen[("wikipedia", "coherent_by_draw")] == coherent
    assert seen[("wikipedia", logic.KEPT_IN_RANGE)] == 40
    assert seen[("wikipedia", logic.TOO_FEW)] == 1


def test_eligibility_counts_count_every_version_and_those_with_an_older_one():
    versions = [
        ("wikipedia", _doc("w:1"), None),
        ("cnn", _doc("c:1"), None),
        ("wikipedia", _doc("w:2"), _doc("w:2")),
    ]
    assert logic.eligibility_counts(versions) == [
        (("cnn", "total"), 1),
        (("wikipedia", "eligible"), 1),
        (("wikipedia", "total"), 2),
    ]
    assert logic.eligibility_counts([]) == []


def test_neighbors_to_ask_takes_the_k_best_ranked_and_counts_short_lists():
    seen, tally = _tally()
    listed = [(2, "w:4", 0.1), (0, "w:2", 0.5), (1, "w:3", 0.3)]
    assert logic.neighbors_to_ask("wikipedia", listed, 2, tally=tally) == [(0, "w:2", 0.5), (1, "w:3", 0.3)]
    assert seen == {("wikipedia", "incoherent_attempted"): 1}
    assert logic.neighbors_to_ask("wikipedia", listed, 4, tally=tally) == sorted(listed)
    assert logic.neighbors_to_ask("wikipedia", None, 4, tally=tally) == []
    assert seen == {
        ("wikipedia", "incoherent_attempted"): 3,
        ("wikipedia", "fewer_than_k_neighbors"): 1,
        ("wikipedia", "not_in_neighbors_table"): 1,
    }


def test_finish_candidates_counts_eligible_ones_and_readies_them_for_the_filter_or_not():
    doc = _doc("w:1")
    made = [
        candidate(0, 0.1, difficulty=None, index=1),
        candidate(1, 0.6, difficulty=None, index=1),
        candidate(2, 0.9, difficulty=None, index=2),
    ]
    seen, tally = _tally()
    unfiltered = [dict(c) for c in made]
    logic.finish_candidates(doc, unfiltered, threshold=0.6, filtered=False, tally=tally)
    assert [c["difficulty"] for c in unfiltered] == ["unfiltered"] * 3
    assert not any("document" in c for c in unfiltered)
    assert seen == {("wikipedia", "candidates"): 3, ("wikipedia", "candidates_below_threshold"): 1}
    seen, tally = _tally()
    filtered = [dict(c) for c in made]
    logic.finish_candidates(doc, filtered, threshold=0.95, filtered=True, tally=tally)
    assert [c["document"] for c in filtered] == [logic.document_with(doc["sentences"], c) for c in made]
    assert [c["difficulty"] for c in filtered] == [None] * 3
    assert seen == {("wikipedia", "candidates"): 3, ("wikipedia", "candidates_below_threshold"): 3}
    seen, tally = _tally()
    logic.finish_candidates(doc, [], threshold=0.6, filtered=False, tally=tally)
    assert seen == {("wikipedia", "candidates"): 0}
