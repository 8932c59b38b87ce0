"""The §4.4 artefact check (corpora/artefacts.py)."""

from __future__ import annotations

import random

import pytest

from incoherent.corpora.artefacts import artefact_check, sentence_examples

WORDS = "river city music war school league church film station election".split()


def rows(n, marked=False, seed=0):
    """Documents of random sentences; with ``marked`` every intruder contains the word ``zebra``."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        sentences = [" ".join(rng.choices(WORDS, k=6)) + "." for _ in range(5)]
        intruder = rng.randrange(1, 5) if i % 2 else -1
        if marked and intruder > 0:
            sentences[intruder] = "zebra " + sentences[intruder]
        out.append(
            {
                "id": f"d{i}",
                "sentences": sentences,
                "intruder_index": intruder,
                "split": "test" if i % 5 == 0 else "train",
            }
        )
    return out


def test_examples_are_the_non_opening_sentences():
    texts, y, groups, splits = sentence_examples(
        [{"id": "a", "sentences": ["s0", "s1", "s2"], "intruder_index": 2, "split": "train"}]
    )
    assert (
        texts == ["s1", "s2"]
        and y.tolist() == [0, 1]
        and groups == ["a", "a"]
        and splits == ["train", "train"]
    )


def test_random_intruders_are_not_detectable_out_of_context():
    report = artefact_check(rows(300))
    assert report["method"] == "train/test" and report["examples"] == 1200 and report["positives"] == 150
    assert report["f1"] < 0.3
    assert report["accuracy"] <= report["majority_accuracy"] + 0.02


def test_an_artefact_is_detected():
    report = artefact_check(rows(300, marked=True))
    assert report["f1"] > 0.9 and report["accuracy"] > report["majority_accuracy"] + 0.05


def test_small_builds_use_grouped_cross_validation_and_tiny_ones_are_skipped():
    small = [dict(r, split="train") for r in rows(30, marked=True)]
    report = artefact_check(small)
    assert report["method"].endswith("grouped cross-validation") and report["evaluated"] == 120
    assert artefact_check(rows(2)) == {
        "documents": 2,
        "examples": 8, "positives": 1, "method": "skipped",
        "reason": "need >= 2 intruder and coherent sentences",
    }  # fmt: skip


def test_large_builds_are_checked_on_a_fixed_sample():
    report = artefact_check(rows(300), max_documents=100)
    assert report["documents"] == 100 and report["examples"] == 400
    assert artefact_check(rows(300), max_documents=100) == report


@pytest.mark.parametrize("limit", [1, 3, 10, 25])
def test_stream_sample_documents_picks_what_sample_documents_picks(limit):
    from incoherent.corpora.artefacts import sample_documents, stream_sample_documents

    rows = [{"id": f"doc-{i}"} for i in range(20)]
    assert stream_sample_documents(iter(rows), limit) == sample_documents(rows, limit)
