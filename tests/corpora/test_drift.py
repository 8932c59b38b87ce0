"""Drift-based Wikipedia test split (corpora/drift.py)."""

from __future__ import annotations

from incoherent.corpora import drift


def equal_texts(a, b):
    return [1.0 if x == y else 0.0 for x, y in zip(a, b, strict=True)]


def version(dump, sentences, revision=1):
    return {
        "id": "wikipedia:1",
        "source": "wikipedia",
        "sentences": sentences,
        "dump": dump,
        "revision_id": revision,
    }


NEW = version("2022", ["A.", "B.", "C."])


def test_an_unchanged_older_lead_is_not_eligible():
    chosen, info = drift.choose_old_version(NEW, [version("2019", ["A.", "B.", "C."])], equal_texts)
    assert chosen is None
    assert info == {"versions": 1, "min_similarity": 1.0, "drifted": 0, "eligible": 0}


def test_the_most_changed_usable_older_version_is_chosen():
    calls = []

    def sims(a, b):
        calls.append(len(a))
        table = {"Old one.": 0.5, "Older two.": 0.3, "Too short.": 0.1}
        return [table[x.split(" ", 2)[0] + " " + x.split(" ", 2)[1]] for x in a]

    olds = [
        version("2020", ["Old one.", "x.", "y."]),
        version("2019", ["Older two.", "x.", "y."]),
        version("2018", ["Too short.", "x."]),
    ]
    chosen, info = drift.choose_old_version(NEW, olds, sims, usable=lambda d: len(d["sentences"]) >= 3)
    assert chosen["dump"] == "2019"
    assert info == {"versions": 3, "min_similarity": 0.1, "drifted": 3, "eligible": 2}
    assert calls == [3]  # one batched call


def test_threshold_is_strict_and_ties_prefer_the_later_dump():
    def sims(a, b):
        return [0.72] * len(a)

    assert drift.choose_old_version(NEW, [version("2019", ["Z."])], sims)[0] is None
    olds = [version("2019", ["P."]), version("2020", ["Q."])]
    assert drift.choose_old_version(NEW, olds, lambda a, b: [0.2, 0.2])[0]["dump"] == "2020"


def test_no_history_means_no_candidate():
    assert drift.choose_old_version(NEW, [], equal_texts) == (
        None,
        {"versions": 0, "min_similarity": None, "drifted": 0, "eligible": 0},
    )


def test_test_rate_fills_the_fraction_when_enough_articles_drifted():
    assert drift.test_rate(0.08, 200, 1000) == 0.4
    assert drift.test_rate(0.08, 10, 1000) == 1.0
    assert drift.test_rate(0.08, 0, 1000) == 0.0
    ids = [f"wikipedia:{i}" for i in range(5000)]
    eligible = set(ids[:1000])
    rate = drift.test_rate(0.08, len(eligible), len(ids))
    splits = {i: drift.drift_split(i, i in eligible, rate, 0.08) for i in ids}
    test = [i for i, s in splits.items() if s == "test"]
    assert set(test) <= eligible  # only drifted articles are test documents
    assert abs(len(test) / len(ids) - 0.08) < 0.015


def test_validation_fraction_is_taken_from_non_test_documents():
    ids = [f"wikipedia:{i}" for i in range(5000)]
    splits = [drift.drift_split(i, False, 0.0, 0.08, 0.1) for i in ids]
    assert "test" not in splits
    assert abs(splits.count("validation") / len(ids) - 0.1 / 0.92) < 0.02
