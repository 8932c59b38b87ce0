"""INSteD's Table 7 human row (Shen et al., 2021, §7): per-judgement F1 of a probe study, the same of its
unprobed baseline study over the documents both share, and ΔF1 (probed - unprobed).

Every answer is one judgement of the intruder position (:func:`annotation.agreement.judgement_f1`), as the
paper's human rows score every annotator's answer rather than a majority. Documents are matched by the id the
two studies' keys give them: a probe row keeps the id of the document it was made from, and INSteD's released
answer files (``import --format insted``) use ``file_id``.

>>> study = ("probe-gender", {"kind": "intruder", "config": "probe-gender", "items": {
...     "x": {"id": "d1", "role": "test", "gold": 2}, "y": {"id": "d2", "role": "test", "gold": 1}}},
...     [{"item_id": "x", "answer": 2}, {"item_id": "y", "answer": 1}], {})
>>> baseline = ("base", {"kind": "intruder", "config": "intruder-wikipedia", "items": {
...     "p": {"id": "d1", "role": "test", "gold": 2}, "q": {"id": "d9", "role": "test", "gold": -1}}},
...     [{"item_id": "p", "answer": -1}, {"item_id": "q", "answer": -1}], {})
>>> row = human_row(study, baseline)
>>> row["phenomenon"], row["f1"], row["baseline_f1"], row["delta_f1"], row["documents"], row["baseline_documents"]
('gender', 1.0, 0.0, 1.0, 2, 1)
"""

from __future__ import annotations

import os

from incoherent.annotation.agreement import judgement_f1
from incoherent.schemas.records import InputError

Study = tuple[str, dict, list[dict], dict]  # (folder, key, answers, import summary), as read_study gives them


def phenomenon(study_dir: str, key: dict, summary: dict) -> str:
    """The row's name: the phenomenon of a ``probe-<phenomenon>`` export, the config of another export, the
    answer file's name for INSteD's released answers, else the folder's name."""
    config = key.get("config")
    if isinstance(config, str) and config:
        return config.removeprefix("probe-") + (" (unprobed)" if key.get("unprobed") else "")
    files = summary.get("files") or []
    if files and isinstance(files[0], str):
        return os.path.basename(files[0]).rsplit(".", 1)[0]
    return os.path.basename(os.path.normpath(study_dir))


def _judgements(key: dict, answers: list[dict]) -> dict[str, list[dict]]:
    """Answers to documents under study (control items left out), by document id."""
    by_doc: dict[str, list[dict]] = {}
    for a in answers:
        item = key["items"][a["item_id"]]
        if item["role"] == "test":
            by_doc.setdefault(item["id"], []).append(a)
    return by_doc


def human_row(study: Study, baseline: Study) -> dict:
    """One Table 7 row: the study's judgement F1 over all its documents, the baseline's over the documents of
    the study that it has, ΔF1, and both document and judgement counts; one line when nothing is shared."""
    (study_dir, key, answers, summary), (base_dir, base_key, base_answers, _) = study, baseline
    for folder, k in ((study_dir, key), (base_dir, base_key)):
        if k["kind"] != "intruder":
            raise InputError(f"{folder}: a shuffle (pair) study has no intruder position, so no Table 7 row")
    if key.get("export_id") is not None and key.get("export_id") == base_key.get("export_id"):
        raise InputError(
            f"--baseline {base_dir}: the same export as {study_dir} (export id {key['export_id']}); a study is "
            "not its own baseline"
        )
    config = base_key.get("config")
    if isinstance(config, str) and config.startswith("probe-") and not base_key.get("unprobed"):
        raise InputError(
            f"--baseline {base_dir}: a study of the probed documents ({config}); the baseline is the study of the "
            "same documents before the probe (annotate export --unprobed)"
        )
    if key.get("unprobed"):
        raise InputError(
            f"{study_dir}: a study of unprobed documents (annotate export --unprobed) is a baseline, not a study "
            "to compare with one"
        )
    ours = _judgements(key, answers)
    theirs = {doc: given for doc, given in _judgements(base_key, base_answers).items() if doc in ours}
    if not ours:
        raise InputError(f"{study_dir}: no answers to documents under study")
    if not theirs:
        raise InputError(
            f"{study_dir}: no document in common with the baseline {base_dir} (documents are matched by the id "
            "their keys give them: the same build's documents, or file_id of INSteD's files)"
        )
    probed = judgement_f1([a for given in ours.values() for a in given], key)
    unprobed = judgement_f1([a for given in theirs.values() for a in given], base_key)
    return {
        "phenomenon": phenomenon(study_dir, key, summary),
        "study": study_dir,
        "baseline": base_dir,
        "baseline_export_id": base_key.get("export_id"),
        "documents": len(ours),
        "judgements": sum(map(len, ours.values())),
        "baseline_documents": len(theirs),
        "baseline_judgements": sum(map(len, theirs.values())),
        "baseline_f1": unprobed["f1"],
        "f1": probed["f1"],
        "delta_f1": round(probed["f1"] - unprobed["f1"], 4),
        "precision": probed["precision"],
        "recall": probed["recall"],
        "baseline_precision": unprobed["precision"],
        "baseline_recall": unprobed["recall"],
    }


def format_rows(rows: list[dict], baseline_dir: str) -> str:
    """The human row in ``evaluate``'s Table 7 layout: per phenomenon the baseline's F1 on the unprobed
    documents, ΔF1 with the probe, and the documents and judgements of each study."""
    width = max(len("phenomenon"), *(len(r["phenomenon"]) for r in rows)) + 2
    lines = [
        f"humans, every judgement: F1 of the baseline {baseline_dir} on the unprobed documents, ΔF1 probed "
        "(INSteD Table 7 layout)",
        "phenomenon".ljust(width)
        + f"{'F1':>9}{'ΔF1':>9}{'probed F1':>11}{'docs':>7}{'judgements':>12}{'baseline docs':>15}"
        + f"{'judgements':>12}",
    ]
    for r in rows:
        lines.append(
            r["phenomenon"].ljust(width)
            + f"{r['baseline_f1']:>9.4f}{r['delta_f1']:>+9.4f}{r['f1']:>11.4f}{r['documents']:>7}"
            + f"{r['judgements']:>12}{r['baseline_documents']:>15}{r['baseline_judgements']:>12}"
        )
    return "\n".join(lines)
