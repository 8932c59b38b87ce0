"""Artefact check in the spirit of Shen et al. (2021, §4.4): can an intruder be spotted out of context?

Every non-opening sentence of every document is one example, label 1 if it is the intruder. A TF-IDF
bag-of-words logistic regression sees the sentence **alone** (no document). If it beats the majority class
clearly, intruders differ from their neighbours in ways that do not need coherence (vocabulary, length,
punctuation) and a coherence model could cheat.

Evaluation: trained on the ``train`` split and scored on ``test`` when both hold examples of both classes;
otherwise 5-fold cross-validation grouped by document (small builds). Reported: accuracy and F1 of the
intruder class, for the classifier and for the majority class.

>>> rows = [{"id": f"d{i}", "sentences": ["a", "b x", "c"], "intruder_index": 2 if i % 2 else -1,
...          "split": "train" if i < 16 else "test"} for i in range(20)]
>>> r = artefact_check(rows)
>>> r["method"], r["examples"], r["positives"], r["evaluated"], r["majority_accuracy"]
('train/test', 40, 10, 8, 0.75)
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable

import numpy as np

from incoherent.corpora.seeding import stable_hash

MIN_PER_CLASS = 2
MAX_DOCUMENTS = 50_000


def sentence_examples(rows: Iterable[dict]) -> tuple[list[str], np.ndarray, list[str], list[str]]:
    """``(sentences, labels, document ids, splits)`` over every non-opening sentence."""
    texts, labels, groups, splits = [], [], [], []
    for row in rows:
        for i, sentence in enumerate(row["sentences"]):
            if i == 0:
                continue
            texts.append(sentence)
            labels.append(int(i == row["intruder_index"]))
            groups.append(row["id"])
            splits.append(row["split"])
    return texts, np.asarray(labels, dtype=np.int64), groups, splits


def _scores(y_true: np.ndarray, y_pred: np.ndarray) -> tuple[float, float]:
    from sklearn.metrics import accuracy_score, f1_score

    return float(accuracy_score(y_true, y_pred)), float(f1_score(y_true, y_pred, zero_division=0))


def _model():
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    return make_pipeline(
        TfidfVectorizer(lowercase=True, token_pattern=r"(?u)\b\w+\b"), LogisticRegression(max_iter=1000)
    )


def sample_documents(rows: Iterable[dict], max_documents: int | None) -> list[dict]:
    """At most ``max_documents`` rows, chosen by a stable hash of the id (the same on every run)."""
    rows = list(rows)
    if max_documents is None or len(rows) <= max_documents:
        return rows
    return sorted(rows, key=lambda r: stable_hash("artefact-check", r["id"]))[:max_documents]


def stream_sample_documents(rows: Iterable[dict], max_documents: int = MAX_DOCUMENTS) -> list[dict]:
    """What :func:`sample_documents` picks, holding at most ``max_documents + 1`` rows at a time: every row in
    order while there are at most ``max_documents``, else the ``max_documents`` smallest stable hashes of the id
    (a bounded heap), so a corpus of any size can be streamed through it.

    >>> rows = [{"id": f"d{i}"} for i in range(10)]
    >>> stream_sample_documents(rows, 3) == sample_documents(rows, 3)
    True
    """
    kept: list[dict] | None = []
    heap: list[tuple[int, int, dict]] = []  # (-hash, order, row): the max_documents smallest hashes
    total = 0
    for row in rows:
        total += 1
        key = stable_hash("artefact-check", row["id"])
        if kept is not None:
            kept.append(row)
            if len(kept) <= max_documents:
                continue
            for i, r in enumerate(kept):
                heapq.heappush(heap, (-stable_hash("artefact-check", r["id"]), i, r))
                if len(heap) > max_documents:
                    heapq.heappop(heap)
            kept = None
        elif -heap[0][0] > key:
            heapq.heapreplace(heap, (-key, total, row))
    if kept is not None:
        return kept
    return [row for _, _, row in sorted(heap, key=lambda e: (-e[0], e[1]))]


def artefact_check(rows: Iterable[dict], folds: int = 5, max_documents: int | None = MAX_DOCUMENTS) -> dict:
    """Accuracy and F1 of an out-of-context sentence classifier against the majority class.

    Returns ``{"method", "documents", "examples", "positives", "accuracy", "f1", "majority_accuracy",
    "majority_f1"}``; ``method`` is ``"skipped"`` (with a ``reason``) when there are too few examples of a
    class. Large builds are checked on a fixed sample of ``max_documents`` documents.
    """
    rows = sample_documents(rows, max_documents)
    texts, y, groups, splits = sentence_examples(rows)
    report: dict = {
        "documents": len(rows),
        "examples": len(texts),
        "positives": int(y.sum()) if len(y) else 0,
    }
    if len(y) == 0 or report["positives"] < MIN_PER_CLASS or len(y) - report["positives"] < MIN_PER_CLASS:
        report.update(method="skipped", reason=f"need >= {MIN_PER_CLASS} intruder and coherent sentences")
        return report
    split_array = np.asarray(splits)
    train, test = split_array == "train", split_array == "test"
    if all(len(set(y[mask].tolist())) == 2 for mask in (train, test)):
        model = _model().fit([texts[i] for i in np.flatnonzero(train)], y[train])
        y_true = y[test]
        y_pred = model.predict([texts[i] for i in np.flatnonzero(test)])
        majority = int(np.bincount(y[train], minlength=2).argmax())
        method = "train/test"
    else:
        from sklearn.model_selection import GroupKFold

        n_groups = len(set(groups))
        k = max(2, min(folds, report["positives"], n_groups))
        y_pred = np.empty_like(y)
        majority_pred = np.empty_like(y)
        for fit_idx, eval_idx in GroupKFold(n_splits=k).split(texts, y, groups):
            if len(set(y[fit_idx].tolist())) < 2:
                y_pred[eval_idx] = y[fit_idx][0]
            else:
                model = _model().fit([texts[i] for i in fit_idx], y[fit_idx])
                y_pred[eval_idx] = model.predict([texts[i] for i in eval_idx])
            majority_pred[eval_idx] = int(np.bincount(y[fit_idx], minlength=2).argmax())
        y_true = y
        method = f"{k}-fold grouped cross-validation"
    if method == "train/test":
        majority_pred = np.full_like(y_true, majority)
    accuracy, f1 = _scores(y_true, y_pred)
    maj_accuracy, maj_f1 = _scores(y_true, majority_pred)
    report.update(method=method, evaluated=len(y_true), accuracy=accuracy, f1=f1)
    report.update(majority_accuracy=maj_accuracy, majority_f1=maj_f1)
    return report
