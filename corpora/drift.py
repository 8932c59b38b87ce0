"""Drift-based Wikipedia test split (Shen et al., 2021, §3): test articles whose text moved on since.

A pre-trained model may have read today's Wikipedia. Given older dumps (the *history*), an article is
eligible for the test split only if its lead in an older dump differs enough from its lead in the newest dump
(the reference "online" version): TF-IDF cosine ``< 0.72``. The test document is then the **older** lead.
Among several eligible older versions the most changed one (lowest cosine; ties: the later dump name) is used.

The test share is kept at the source's fraction of all documents where possible: an eligible article goes to
test when ``u(id) < min(1, fraction * total / eligible)``, ``u`` the same id hash as
:func:`corpora.seeding.assign_split`; when fewer articles are eligible than the fraction asks for, all of them
are test documents and the run summary shows the shortfall.

>>> def cos(a, b):  # a toy similarity: 1.0 for equal texts, 0.0 otherwise
...     return [float(x == y) for x, y in zip(a, b)]
>>> new = {"id": "w:1", "sentences": ["A.", "B.", "C."], "dump": "2022"}
>>> old = {"id": "w:1", "sentences": ["X.", "Y.", "Z."], "dump": "2019"}
>>> version, info = choose_old_version(new, [old], cos)
>>> version["dump"], info["eligible"]
('2019', 1)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from incoherent.corpora.seeding import unit_interval

DRIFT_THRESHOLD = 0.72


def lead_text(doc: dict) -> str:
    """The lead as one string (sentences joined by a space), as it is compared."""
    return " ".join(doc["sentences"])


def choose_old_version(
    newest: dict,
    olds: Sequence[dict],
    similarities: Callable[[list[str], list[str]], Sequence[float]],
    threshold: float = DRIFT_THRESHOLD,
    usable: Callable[[dict], bool] = lambda doc: True,
) -> tuple[dict | None, dict]:
    """The older version to use as a test document (or None), and what was seen.

    ``similarities(a, b)`` is the pairwise TF-IDF cosine; ``usable(doc)`` says whether a version passes the
    length rule. The info dict has ``versions`` (older versions compared), ``min_similarity``,
    ``drifted`` (versions below the threshold) and ``eligible`` (drifted and usable).
    """
    info = {"versions": len(olds), "min_similarity": None, "drifted": 0, "eligible": 0}
    if not olds:
        return None, info
    sims = [float(s) for s in similarities([lead_text(o) for o in olds], [lead_text(newest)] * len(olds))]
    info["min_similarity"] = min(sims)
    drifted = [(s, o) for s, o in zip(sims, olds, strict=True) if s < threshold]
    info["drifted"] = len(drifted)
    eligible = [(s, o) for s, o in drifted if usable(o)]
    info["eligible"] = len(eligible)
    if not eligible:
        return None, info
    best = min(
        eligible, key=lambda so: (so[0], _negated(so[1].get("dump") or ""), -(so[1].get("revision_id") or 0))
    )
    return best[1], info


def _negated(text: str) -> tuple[int, ...]:
    """A key that sorts strings in reverse order (later dump names first)."""
    return tuple(-ord(c) for c in text) + (0,)


def test_rate(fraction: float, eligible: int, total: int) -> float:
    """Probability with which an eligible article goes to test so that about ``fraction * total`` do.

    >>> test_rate(0.08, 20, 100), test_rate(0.08, 4, 100), test_rate(0.08, 0, 100)
    (0.4, 1.0, 0.0)
    """
    if eligible <= 0:
        return 0.0
    return min(1.0, fraction * total / eligible)


def drift_split(
    doc_id: str, eligible: bool, rate: float, test_fraction: float, validation_fraction: float = 0.0
) -> str:
    """``test`` for a sampled eligible article; the rest ``validation`` (its share of all) or ``train``."""
    if eligible and unit_interval("split", doc_id) < rate:
        return "test"
    if validation_fraction and unit_interval("validation", doc_id) < validation_fraction / (
        1.0 - test_fraction
    ):
        return "validation"
    return "train"
