"""Hard-candidate selection (Shen et al., 2021, §3.3 step 5) and the easy/hard threshold.

Score first, threshold later: the model's intruder probability is stored as ``filter_score`` on every
candidate; :func:`difficulty` turns it into ``easy``/``hard`` and :func:`choose_candidate` picks the one that
replaces the sentence.
"""

from __future__ import annotations

import random

EASY, HARD, UNFILTERED = "easy", "hard", "unfiltered"
DEFAULT_EASY_THRESHOLD = 0.5
_SORT_FIELDS = (
    "replaced_index",
    "neighbor_rank",
    "candidate_source_id",
    "candidate_index",
    "candidate_sentence",
)


def difficulty(score: float | None, easy_threshold: float = DEFAULT_EASY_THRESHOLD) -> str:
    """``"easy"`` when the model finds the intruder (``score >= easy_threshold``), ``"hard"`` otherwise.

    >>> difficulty(0.7), difficulty(0.2), difficulty(None)
    ('easy', 'hard', 'unfiltered')
    """
    if score is None:
        return UNFILTERED
    return EASY if score >= easy_threshold else HARD


def _sort_key(candidate: dict) -> tuple:
    key = []
    for field in _SORT_FIELDS:
        value = candidate.get(field)
        key.append(
            (0, value, "") if isinstance(value, int | float) else (1, 0, "" if value is None else str(value))
        )
    return tuple(key)


def eligible(candidates: list[dict]) -> list[dict]:
    """The candidates a draw is made from, in a stable order.

    If there are both hard and easy candidates, the hard ones (plus any ``unfiltered`` ones, which are never
    excluded); otherwise all of them.
    """
    ordered = sorted(candidates, key=_sort_key)
    kinds = {c.get("difficulty") or UNFILTERED for c in ordered}
    if HARD in kinds and EASY in kinds:
        return [c for c in ordered if (c.get("difficulty") or UNFILTERED) != EASY]
    return ordered


def choose_candidate(candidates: list[dict], rng: random.Random) -> dict:
    """Draw the replacing candidate uniformly from :func:`eligible` ones; deterministic given ``rng``.

    >>> cands = [{"neighbor_rank": 0, "difficulty": "easy"}, {"neighbor_rank": 1, "difficulty": "hard"}]
    >>> choose_candidate(cands, random.Random(0))["neighbor_rank"]
    1
    """
    if not candidates:
        raise ValueError("choose_candidate needs at least one candidate")
    pool = eligible(candidates)
    return pool[rng.randrange(len(pool))]
