"""The paper's evaluation metrics (Shen et al., 2021, §4.3), from per-sentence intruder probabilities.

- **Document accuracy**: a document is predicted incoherent when any of its non-opening sentences is
  predicted an intruder (probability >= threshold); compared with its label.
- **Sentence F1**: over all non-opening sentences, positive class "intruder".
- **Majority-class baseline**: always the more frequent class (documents: coherent or not; sentences: almost
  always "not intruder", whose F1 for the intruder class is 0).
"""

from __future__ import annotations

from collections.abc import Sequence

DEFAULT_THRESHOLD = 0.5


def f1_parts(tp: int, fp: int, fn: int) -> dict[str, float]:
    """Precision, recall and F1 of the positive class (0 where undefined).

    >>> f1_parts(2, 1, 1)
    {'precision': 0.6667, 'recall': 0.6667, 'f1': 0.6667}
    """
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": round(precision, 4), "recall": round(recall, 4), "f1": round(f1, 4)}


def evaluate_scores(
    intruder_indices: Sequence[int],
    scores: Sequence[Sequence[float]],
    threshold: float = DEFAULT_THRESHOLD,
) -> dict:
    """Metrics of documents given ``intruder_index`` (-1 coherent) and the scores of sentences 1..n-1.

    ``scores[d][j]`` is the intruder probability of sentence ``j + 1`` of document ``d``.

    >>> m = evaluate_scores([2, -1, 1], [[0.1, 0.9], [0.2, 0.3], [0.4, 0.1]])
    >>> m["document_accuracy"], m["sentence"]["f1"], m["majority"]["document_accuracy"]
    (0.6667, 0.6667, 0.6667)
    """
    if len(intruder_indices) != len(scores):
        raise ValueError("one list of sentence scores per document is needed")
    tp = fp = fn = tn = 0
    correct_docs = 0
    positives = 0
    for index, doc_scores in zip(intruder_indices, scores, strict=True):
        predicted = [p >= threshold for p in doc_scores]
        label = index > 0
        positives += label
        correct_docs += any(predicted) == label
        for j, is_predicted in enumerate(predicted, start=1):
            truth = j == index
            tp += is_predicted and truth
            fp += is_predicted and not truth
            fn += truth and not is_predicted
            tn += not truth and not is_predicted
    n_docs = len(scores)
    n_sentences = tp + fp + fn + tn
    sentence_positives = tp + fn
    majority_doc = max(positives, n_docs - positives) / n_docs if n_docs else 0.0
    if sentence_positives * 2 > n_sentences:  # "intruder" is the majority: always predict it
        majority_sentence = f1_parts(sentence_positives, n_sentences - sentence_positives, 0)
    else:
        majority_sentence = f1_parts(0, 0, sentence_positives)
    return {
        "threshold": threshold,
        "documents": n_docs,
        "incoherent_documents": positives,
        "sentences": n_sentences,
        "intruder_sentences": sentence_positives,
        "document_accuracy": round(correct_docs / n_docs, 4) if n_docs else 0.0,
        "sentence": f1_parts(tp, fp, fn)
        | {"accuracy": round((tp + tn) / n_sentences, 4) if n_sentences else 0.0},
        "majority": {
            "document_accuracy": round(majority_doc, 4),
            "document_class": "incoherent" if positives * 2 > n_docs else "coherent",
            "sentence_f1": majority_sentence["f1"],
        },
    }


def predicted_index(doc_scores: Sequence[float], threshold: float = DEFAULT_THRESHOLD) -> int:
    """The predicted intruder position of one document: the most probable of sentences 1..n-1 when it reaches
    the threshold, else -1 (coherent). ``doc_scores[j]`` is the probability of sentence ``j + 1``.

    >>> predicted_index([0.1, 0.8, 0.6]), predicted_index([0.2, 0.3])
    (2, -1)
    """
    if not doc_scores or max(doc_scores) < threshold:
        return -1
    return max(range(len(doc_scores)), key=doc_scores.__getitem__) + 1


def format_table(metrics: dict, title: str = "") -> str:
    """A small text table of the headline figures (for the CLI)."""
    rows = [
        ("", "model", "majority"),
        (
            "document accuracy",
            f"{metrics['document_accuracy']:.4f}",
            f"{metrics['majority']['document_accuracy']:.4f}",
        ),
        ("sentence F1", f"{metrics['sentence']['f1']:.4f}", f"{metrics['majority']['sentence_f1']:.4f}"),
        ("sentence precision", f"{metrics['sentence']['precision']:.4f}", ""),
        ("sentence recall", f"{metrics['sentence']['recall']:.4f}", ""),
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = [title] if title else []
    lines.append(
        f"{metrics['documents']} documents ({metrics['incoherent_documents']} incoherent), "
        f"{metrics['sentences']} non-opening sentences ({metrics['intruder_sentences']} intruders)"
    )
    lines += ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join(lines)
