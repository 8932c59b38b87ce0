"""Recall on INSteD's own hand-chosen probe sites (``bench/probe_hand_sites.py`` on the copy of INSteD's
``linguistic_probe_data/original_*.txt`` in ``tests/data/probes/insted_hand_sites/``): each sentence back in its
document, ``probes`` makes the authors' edit (an edit of ours overlaps a token they changed) for at least the
counts reached (issue #50). A rule that loses a hand site fails here; one that wins more raises the floor."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_SPEC = importlib.util.spec_from_file_location("probe_hand_sites", ROOT / "bench" / "probe_hand_sites.py")
hand = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(hand)

# sites found / records with an edit, reached on the rules of this commit (issue #50's targets in comments)
FLOORS = {
    "gender": (81, 100),  # >= 80%
    "animacy-down": (86, 100),  # >= 80%
    "animacy-up": (82, 99),  # >= 80%; 85 before the 4 animal species (English calls an animal he or she)
    "demonstrative": (87, 97),  # >= 80%
    "conjunction": (60, 99),  # >= 60%
    "past-to-future": (82, 100),  # >= 80%
    "negation": (75, 100),  # >= 40% (87 before foreign_year: 12 dated by a year their context lacks)
    "number": (81, 100),  # 84 before years without a clash, 82 before invented_floor (the authors' year of
    # *the YouTube video* moved to 1993 is no site now; we move its count); any site >= 90%: test_a_number_probe_...
}


@pytest.mark.parametrize("phenomenon", sorted(FLOORS))
def test_hand_sites_found(phenomenon):
    found, total, misses = hand.hand_sites(phenomenon)
    floor, records = FLOORS[phenomenon]
    assert total == records
    assert found >= floor, [(m["reason"], m["to_be_replaced"]) for m in misses][:10]
    assert found + len(misses) == total


def test_a_number_probe_for_most_hand_sites():
    """Issue #50's target for number is a probe at any site of the sentence (INSteD's authors often changed
    several numbers, or a number word: *two albums*): 90 of 100 on the rules of this commit (93 before years
    moved a few years rather than centuries, within 40 years and the sentence's own order; 95 before a year with
    nothing in the context to clash with was no site; 81 before the number words)."""
    found, total, misses = hand.hand_sites("number")
    elsewhere = sum(m["reason"] == "other_site" for m in misses)
    assert total == 100 and found + elsewhere >= 90, [(m["reason"], m["to_be_replaced"]) for m in misses]


def test_changed_spans_of_real_hand_edits():
    before = "Stinson was selected in the sixth round, where he played."
    after = "She was selected in the sixth round, where she played."
    assert hand.changed_spans(before, after) == [(0, 7), (47, 49)]
    assert hand.changed_spans("It was there.", "It was not there.") == [(3, 12)]
    assert hand.changed_spans("A b.", "A b.") == []
