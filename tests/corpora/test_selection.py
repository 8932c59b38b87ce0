import random

import pytest

from incoherent.corpora.selection import choose_candidate, difficulty, eligible


def _cand(rank: int, diff: str | None, score: float | None = None) -> dict:
    return {
        "id": "wsj:1",
        "replaced_index": 2,
        "neighbor_rank": rank,
        "candidate_source_id": f"wsj:{rank + 10}",
        "candidate_index": 1,
        "candidate_sentence": f"sentence {rank}",
        "filter_score": score,
        "difficulty": diff,
    }


def test_difficulty_threshold():
    assert difficulty(0.5) == "easy"
    assert difficulty(0.4999) == "hard"
    assert difficulty(0.9, easy_threshold=0.95) == "hard"
    assert difficulty(None) == "unfiltered"


def test_mixed_only_hard_chosen():
    cands = [_cand(0, "easy"), _cand(1, "hard"), _cand(2, "easy"), _cand(3, "hard")]
    assert [c["neighbor_rank"] for c in eligible(cands)] == [1, 3]
    chosen = {choose_candidate(cands, random.Random(seed))["neighbor_rank"] for seed in range(50)}
    assert chosen == {1, 3}


def test_all_easy_falls_back_to_all():
    cands = [_cand(0, "easy"), _cand(1, "easy"), _cand(2, "easy")]
    chosen = {choose_candidate(cands, random.Random(seed))["neighbor_rank"] for seed in range(50)}
    assert chosen == {0, 1, 2}


def test_all_hard_and_unfiltered_use_all():
    assert len(eligible([_cand(0, "hard"), _cand(1, "hard")])) == 2
    assert len(eligible([_cand(0, "unfiltered"), _cand(1, None)])) == 2


def test_unfiltered_never_excluded():
    cands = [_cand(0, "easy"), _cand(1, "hard"), _cand(2, "unfiltered")]
    assert [c["neighbor_rank"] for c in eligible(cands)] == [1, 2]


def test_deterministic_whatever_the_input_order():
    cands = [_cand(r, "hard") for r in range(6)]
    first = [choose_candidate(cands, random.Random(s))["neighbor_rank"] for s in range(20)]
    shuffled = list(reversed(cands))
    second = [choose_candidate(shuffled, random.Random(s))["neighbor_rank"] for s in range(20)]
    assert first == second
    assert choose_candidate(cands, random.Random(7)) == cands[random.Random(7).randrange(6)]


def test_empty_is_an_error():
    with pytest.raises(ValueError):
        choose_candidate([], random.Random(0))
