"""Agreement and human accuracy from answers and a key (pure functions; no Beam, no I/O).

Definitions follow INSteD (Shen et al. 2021, §4.5, Tables 3 and 5, Figures 2 and 3) and Laban et al. (2021, §4):

- the **majority answer** of a document is its most frequent answer; the document is **kept** when at least
  ``min_agreement`` annotators gave it (a tie for the most frequent answer is never kept);
- **human accuracy**: over kept documents, coherent (majority -1) vs incoherent compared with the gold label;
- **human F1**: sentence-level F1 of the intruder position of the majority answer (a wrong position is a false
  positive and a false negative), :func:`filters.metrics.f1_parts`;
- **unanimous**: documents on which every annotator (at least two) agrees, human answer by gold;
- **Krippendorff's alpha** (nominal) over all answers to documents under study (``krippendorff`` package) and,
  with exactly two annotators, **Cohen's kappa** (scikit-learn);
- for pairs (shuffle): the answer is which text is the original; accuracy, kappa and median seconds per k.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict

from incoherent.filters.metrics import f1_parts


def quality_control(answers: list[dict], key: dict, max_errors: float) -> dict[str, dict]:
    """Per worker: control items answered, wrong, error rate, and whether the rate is above ``max_errors``.

    >>> key = {"items": {"c": {"role": "control", "gold": 2}}}
    >>> quality_control([{"item_id": "c", "worker": "w", "answer": -1}], key, 0.5)["w"]["failing"]
    True
    """
    out: dict[str, dict] = {}
    for a in answers:
        row = out.setdefault(a["worker"], {"answers": 0, "controls": 0, "control_errors": 0})
        row["answers"] += 1
        item = key["items"][a["item_id"]]
        if item["role"] == "control":
            row["controls"] += 1
            row["control_errors"] += a["answer"] != item["gold"]
    for row in out.values():
        rate = row["control_errors"] / row["controls"] if row["controls"] else None
        row["control_error_rate"] = None if rate is None else round(rate, 4)
        row["failing"] = rate is not None and rate > max_errors
    return dict(sorted(out.items()))


def assignment_of(answer: dict) -> str:
    """The assignment an answer belongs to: MTurk's ``AssignmentId``, else one worker's work on one task.

    >>> assignment_of({"assignment_id": None, "worker": "ann", "task_id": "t0001"})
    'ann/t0001'
    """
    return answer.get("assignment_id") or f"{answer['worker']}/{answer['task_id']}"


def assignment_control(answers: list[dict], key: dict, max_errors: float) -> dict[str, dict]:
    """Per assignment (:func:`assignment_of`): its worker, task, HIT and status, answers, control items answered
    and wrong, the error rate and whether it is above ``max_errors``, and the seconds on its items (sum, median).

    >>> key = {"items": {"c": {"role": "control", "gold": 2}, "d": {"role": "test", "gold": -1}}}
    >>> rows = [{"item_id": "c", "worker": "w", "task_id": "t1", "answer": 2, "seconds": 3.0},
    ...         {"item_id": "d", "worker": "w", "task_id": "t1", "answer": 4, "seconds": 5.0}]
    >>> row = assignment_control(rows, key, 0.5)["w/t1"]
    >>> row["control_errors"], row["failing"], row["seconds"]
    (0, False, 8.0)
    """
    out: dict[str, dict] = {}
    times: dict[str, list[float]] = defaultdict(list)
    for a in answers:
        name = assignment_of(a)
        row = out.setdefault(
            name,
            {
                "worker": a["worker"],
                "task_id": a["task_id"],
                "hit_id": a.get("hit_id"),
                "assignment_status": a.get("assignment_status"),
                "answers": 0,
                "controls": 0,
                "control_errors": 0,
            },
        )
        row["answers"] += 1
        item = key["items"][a["item_id"]]
        if item["role"] == "control":
            row["controls"] += 1
            row["control_errors"] += a["answer"] != item["gold"]
        if a.get("seconds") is not None:
            times[name].append(a["seconds"])
    for name, row in out.items():
        rate = row["control_errors"] / row["controls"] if row["controls"] else None
        row["control_error_rate"] = None if rate is None else round(rate, 4)
        row["failing"] = rate is not None and rate > max_errors
        row["seconds"] = round(sum(times[name]), 3) if times[name] else None
        row["median_seconds"] = _median(times[name])
    return dict(sorted(out.items()))


def by_item(answers: list[dict], key: dict) -> dict[str, list[dict]]:
    """Answers to documents under study (controls left out), by item id, in key order."""
    grouped: dict[str, list[dict]] = {i: [] for i, item in key["items"].items() if item["role"] == "test"}
    for a in answers:
        if a["item_id"] in grouped:
            grouped[a["item_id"]].append(a)
    return grouped


def majority(values: list[int]) -> tuple[int | None, int]:
    """``(answer, count)`` of the most frequent answer; ``(None, count)`` on a tie.

    >>> majority([3, 3, -1, 3, 2])
    (3, 3)
    >>> majority([1, 1, 2, 2])
    (None, 2)
    """
    if not values:
        return None, 0
    ranked = Counter(values).most_common()
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return None, ranked[0][1]
    return ranked[0]


def document_scores(pairs: list[tuple[int, int]]) -> dict:
    """Document accuracy (coherent vs incoherent) and intruder-position F1 of ``(predicted, gold)`` positions.

    >>> document_scores([(2, 2), (-1, -1), (3, 2), (-1, 4)])
    {'documents': 4, 'accuracy': 0.75, 'f1': 0.4, 'precision': 0.5, 'recall': 0.3333}
    """
    tp = fp = fn = 0
    correct = 0
    for predicted, gold in pairs:
        correct += (predicted != -1) == (gold != -1)
        tp += predicted != -1 and predicted == gold
        fp += predicted != -1 and predicted != gold
        fn += gold != -1 and predicted != gold
    parts = f1_parts(tp, fp, fn)
    return {
        "documents": len(pairs),
        "accuracy": round(correct / len(pairs), 4) if pairs else None,
        "f1": parts["f1"] if pairs else None,
        "precision": parts["precision"] if pairs else None,
        "recall": parts["recall"] if pairs else None,
    }


def krippendorff_alpha(grouped: dict[str, list[dict]]) -> float | None:
    """Nominal alpha over the answers (workers x items, missing answers as NaN); None where undefined."""
    import krippendorff
    import numpy as np

    workers = sorted({a["worker"] for answers in grouped.values() for a in answers})
    items = list(grouped)
    if len(workers) < 2 or not items:
        return None
    data = np.full((len(workers), len(items)), np.nan)
    row = {w: i for i, w in enumerate(workers)}
    for j, item in enumerate(items):
        for a in grouped[item]:
            data[row[a["worker"]], j] = a["answer"]
    try:
        value = float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
    except (ValueError, ZeroDivisionError):  # one value in the whole domain, nothing pairable
        return None
    return None if math.isnan(value) else round(value, 4)


def cohen_kappa(grouped: dict[str, list[dict]]) -> float | None:
    """Cohen's kappa of exactly two annotators over the items both answered; None otherwise."""
    workers = sorted({a["worker"] for answers in grouped.values() for a in answers})
    if len(workers) != 2:
        return None
    first, second = [], []
    for answers in grouped.values():
        given = {a["worker"]: a["answer"] for a in answers}
        if len(given) == 2:
            first.append(given[workers[0]])
            second.append(given[workers[1]])
    if not first:
        return None
    import warnings

    from sklearn.metrics import cohen_kappa_score

    with warnings.catch_warnings():
        warnings.simplefilter(
            "ignore"
        )  # RuntimeWarning, sklearn's UndefinedMetricWarning: an undefined κ is None
        value = float(cohen_kappa_score(first, second))
    return None if math.isnan(value) else round(value, 4)


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def summarise(answers: list[dict], key: dict, min_agreement: int) -> dict:
    """The report's figures (without model predictions): see the module docstring."""
    grouped = by_item(answers, key)
    items = key["items"]
    per_item = {}
    for iid, given in grouped.items():
        values = [a["answer"] for a in given]
        answer, count = majority(values)
        per_item[iid] = {
            "id": items[iid]["id"],
            "gold": items[iid]["gold"],
            "annotators": len(values),
            "majority": answer,
            "agreement": count,
            "correct_annotators": sum(v == items[iid]["gold"] for v in values),
            "kept": answer is not None and count >= min_agreement,
        }
        if key["kind"] == "pair":
            per_item[iid]["block_size"] = items[iid]["block_size"]
    answered = [p for p in per_item.values() if p["annotators"]]
    kept = [p for p in answered if p["kept"]]
    report = {
        "kind": key["kind"],
        "export_id": key["export_id"],
        "config": key.get("config"),
        "split": key.get("split"),
        "documents": len(answered),
        "unanswered": len(per_item) - len(answered),
        "answers": sum(p["annotators"] for p in answered),
        "annotators": len({a["worker"] for a in answers}),
        "min_agreement": min_agreement,
        "kept": {
            "documents": len(kept),
            "fraction": round(len(kept) / len(answered), 4) if answered else None,
        },
        "krippendorff_alpha": krippendorff_alpha(grouped),
        "cohen_kappa": cohen_kappa(grouped),
        "median_seconds": _median([a["seconds"] for a in answers if a.get("seconds") is not None]),
        "mean_seconds": _mean([a["seconds"] for a in answers if a.get("seconds") is not None]),
        "annotators_per_document": _spread([p["annotators"] for p in answered]),
    }
    if key["kind"] == "intruder":
        scores = document_scores([(p["majority"], p["gold"]) for p in kept])
        report["human_accuracy"], report["human_f1"] = scores["accuracy"], scores["f1"]
        report["human_scores"] = scores
        report["unanimous"] = unanimous(answered)
    else:
        pairs_correct = [p["majority"] == p["gold"] for p in kept]
        report["human_accuracy"] = round(sum(pairs_correct) / len(kept), 4) if kept else None
        report["human_f1"] = None
        studied_pairs = [a for a in answers if items[a["item_id"]]["role"] == "test"]
        report["judgement_accuracy"] = _rate(
            [a["answer"] == items[a["item_id"]]["gold"] for a in studied_pairs]
        )
        report["per_k"] = per_block_size(studied_pairs, grouped, key)
    report["gold_agreement"] = {
        "all": _histogram([p["correct_annotators"] for p in answered]),
        "incoherent": _histogram([p["correct_annotators"] for p in answered if p["gold"] != -1])
        if key["kind"] == "intruder"
        else None,
    }
    controls = [a for a in answers if items[a["item_id"]]["role"] == "control"]
    report["control_accuracy"] = _rate([a["answer"] == items[a["item_id"]]["gold"] for a in controls])
    studied = [a for a in answers if items[a["item_id"]]["role"] == "test"]
    report["judgements"] = judgement_scores(studied, key)
    report["per_annotator"] = {
        w: judgement_scores([a for a in studied if a["worker"] == w], key)
        for w in sorted({a["worker"] for a in studied})
    }
    report["items"] = per_item
    return report


def judgement_scores(answers: list[dict], key: dict) -> dict:
    """Each answer to a document under study as one judgement: how many, the share with the gold answer
    (``accuracy``; intruders: the right position or rightly none) and, for intruders, the share right on
    coherent vs incoherent (``document_accuracy``), mean and median seconds.

    >>> key = {"kind": "intruder", "items": {"d": {"gold": 3}}}
    >>> judgement_scores([{"item_id": "d", "answer": 2, "seconds": 4.0}, {"item_id": "d", "answer": 3, "seconds": 2.0}], key)
    {'judgements': 2, 'accuracy': 0.5, 'document_accuracy': 1.0, 'f1': 0.5, 'precision': 0.5, 'recall': 0.5, 'mean_seconds': 3.0, 'median_seconds': 3.0}
    """
    items = key["items"]
    seconds = [a["seconds"] for a in answers if a.get("seconds") is not None]
    out = {
        "judgements": len(answers),
        "accuracy": _rate([a["answer"] == items[a["item_id"]]["gold"] for a in answers]),
    }
    if key["kind"] == "intruder":
        out["document_accuracy"] = _rate(
            [(a["answer"] == -1) == (items[a["item_id"]]["gold"] == -1) for a in answers]
        )
        out.update(judgement_f1(answers, key))
    out["mean_seconds"] = _mean(seconds)
    out["median_seconds"] = _median(seconds)
    return out


def judgement_f1(answers: list[dict], key: dict) -> dict:
    """Per-judgement F1 (INSteD Table 7's human row): every answer to an intruder document is a prediction of the
    intruder position, scored as a model's sentence-level prediction is. The right position is a true positive;
    a coherent answer on an incoherent document a miss (false negative); a position on a coherent document a
    false alarm (false positive); a wrong position both (the intruder missed, another sentence flagged).

    >>> key = {"items": {"a": {"gold": 2}, "b": {"gold": -1}}}
    >>> judgement_f1([{"item_id": "a", "answer": 2}, {"item_id": "a", "answer": -1},
    ...               {"item_id": "a", "answer": 3}, {"item_id": "b", "answer": 1}], key)
    {'f1': 0.3333, 'precision': 0.3333, 'recall': 0.3333}
    """
    scores = document_scores([(a["answer"], key["items"][a["item_id"]]["gold"]) for a in answers])
    if not answers:
        return {"f1": None, "precision": None, "recall": None}
    return {"f1": scores["f1"], "precision": scores["precision"], "recall": scores["recall"]}


def _mean(values: list[float]) -> float | None:
    return round(statistics.fmean(values), 3) if values else None


def _spread(values: list[int]) -> dict:
    """``{min, median, max}`` of counts (None when there are none).

    >>> _spread([2, 3, 3, 1])
    {'min': 1, 'median': 2.5, 'max': 3}
    """
    if not values:
        return {"min": None, "median": None, "max": None}
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def _rate(flags: list[bool]) -> float | None:
    return round(sum(flags) / len(flags), 4) if flags else None


def _histogram(values: list[int]) -> dict[str, int]:
    counts = Counter(values)
    top = max(counts, default=0)
    return {str(n): counts.get(n, 0) for n in range(top + 1)}


def unanimous(per_item: list[dict]) -> dict:
    """INSteD's Table 5: documents all (>= 2) annotators agree on, human answer by gold label."""
    table = {h: {"without_intruder": 0, "with_intruder": 0} for h in ("coherent", "incoherent")}
    right_position = 0
    for p in per_item:
        if p["annotators"] < 2 or p["agreement"] != p["annotators"]:
            continue
        human = "incoherent" if p["majority"] != -1 else "coherent"
        gold = "with_intruder" if p["gold"] != -1 else "without_intruder"
        table[human][gold] += 1
        right_position += p["majority"] != -1 and p["majority"] == p["gold"]
    return {
        **table,
        "documents": sum(sum(r.values()) for r in table.values()),
        "right_position": right_position,
    }


def per_block_size(answers: list[dict], grouped: dict[str, list[dict]], key: dict) -> dict[str, dict]:
    """Laban's Table 2 row and timing: accuracy, kappa and median seconds per judgement, per block size k (the
    documents under study; check pairs have no block size)."""
    items = key["items"]
    out = {}
    for k in sorted({item["block_size"] for item in items.values() if item["role"] == "test"}):
        ids = {i for i, item in items.items() if item["block_size"] == k}
        of_k = [a for a in answers if a["item_id"] in ids]
        out[str(k)] = {
            "judgements": len(of_k),
            "accuracy": _rate([a["answer"] == items[a["item_id"]]["gold"] for a in of_k]),
            "cohen_kappa": cohen_kappa({i: v for i, v in grouped.items() if i in ids}),
            "median_seconds": _median([a["seconds"] for a in of_k if a.get("seconds") is not None]),
        }
    return out


def with_model(report: dict, predictions: dict[str, int]) -> dict:
    """Model accuracy by the number of annotators who gave the gold answer (INSteD's Figure 3), and human vs
    model over the kept documents. ``predictions``: item id -> the model's answer in the key's terms."""
    per_item = report["items"]
    levels: dict[int, list[bool]] = defaultdict(list)
    missing = 0
    for iid, p in per_item.items():
        if not p["annotators"]:
            continue
        if iid not in predictions:
            missing += 1
            continue
        levels[p["correct_annotators"]].append(predictions[iid] == p["gold"])
    by_level = {str(n): {"documents": len(v), "model_accuracy": _rate(v)} for n, v in sorted(levels.items())}
    kept = [(iid, p) for iid, p in per_item.items() if p["kept"] and iid in predictions]
    if report["kind"] == "intruder":
        human = document_scores([(p["majority"], p["gold"]) for _, p in kept])
        model = document_scores([(predictions[iid], p["gold"]) for iid, p in kept])
    else:
        human = {"documents": len(kept), "accuracy": _rate([p["majority"] == p["gold"] for _, p in kept])}
        model = {
            "documents": len(kept),
            "accuracy": _rate([predictions[iid] == p["gold"] for iid, p in kept]),
        }
    out = {
        "by_agreement": by_level,
        "human_vs_model": {"human": human, "model": model},
        "without_prediction": missing,
    }
    if report["kind"] == "pair":  # Laban's Table 2: human judgements beside the model, per block size
        out["per_k"] = {
            k: {
                "human_accuracy": row["accuracy"],
                "model_accuracy": _rate(
                    [
                        predictions[iid] == p["gold"]
                        for iid, p in per_item.items()
                        if str(p["block_size"]) == k and iid in predictions
                    ]
                ),
            }
            for k, row in report["per_k"].items()
        }
    return out
