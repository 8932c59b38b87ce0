"""``annotate report``: the study's figures computed (:mod:`annotation.agreement`), its report and figures
written, a model's answers compared.
"""

from __future__ import annotations

import glob
import json
import os

from incoherent.annotation.study import check_places, read_study, write_json
from incoherent.annotation.textfile import read_text
from incoherent.schemas.records import InputError
from incoherent.sources.parquet import read_open


def read_predictions(path: str, key: dict) -> tuple[dict[str, int], str]:
    """Model answers by item id: ``evaluate --predictions`` JSONL (``id``, ``predicted_index``) for intruder
    studies, a ``score-shuffle`` output folder (``scores/``, ``correct``) for pairs."""
    by_doc: dict[tuple, str] = {}
    for iid, item in key["items"].items():
        if item["role"] == "test":
            by_doc[(item["id"], item.get("block_size"), item.get("permutation"))] = iid
    out: dict[str, int] = {}
    if key["kind"] == "intruder":
        for number, line in enumerate(read_text(path).splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                doc, predicted = record["id"], int(record["predicted_index"])
                if not isinstance(doc, str):
                    raise TypeError(doc)
            except (KeyError, TypeError, ValueError, RecursionError):
                raise InputError(
                    f"{path}:{number}: not an `evaluate --predictions` line (id, predicted_index)"
                ) from None
            if (doc, None, None) in by_doc:
                out[by_doc[(doc, None, None)]] = predicted
        return out, path

    files = sorted(glob.glob(os.path.join(path, "scores", "*.parquet")))
    if not files:
        raise InputError(f"{path}: no scores/*.parquet (a `score-shuffle` output folder is needed for pairs)")
    for f in files:
        for row in read_open(f, columns=["id", "block_size", "permutation", "correct"]).to_pylist():
            iid = by_doc.get((row["id"], row["block_size"], row["permutation"]))
            if iid is not None:  # the model's answer in the key's terms: the text it finds original
                gold = key["items"][iid]["gold"]
                out[iid] = gold if row["correct"] else 1 - gold
    return out, path


def report(
    study_dir: str,
    min_agreement: int = 3,
    predictions: str | None = None,
    allow_fewer_annotators: bool = False,
    baseline: dict | None = None,
) -> dict:
    """Write ``report.json`` and ``figures/`` into the import folder; returns the report. ``baseline``: the
    study's Table 7 human row against a baseline study (:func:`annotation.table7.human_row`), kept in it.

    When no document has ``min_agreement`` annotators (nothing could be kept), it stops with one line unless
    ``allow_fewer_annotators``."""
    from incoherent.annotation import agreement
    from incoherent.annotation import report as text

    if min_agreement < 1:
        raise InputError(f"--min-agreement: must be >= 1, got {min_agreement}")
    key, answers, summary = read_study(study_dir)
    result = agreement.summarise(answers, key, min_agreement)
    most = result["annotators_per_document"]["max"] or 0
    if most < min_agreement and not allow_fewer_annotators:
        raise InputError(
            f"--min-agreement: {min_agreement} annotators must agree to keep a document, but no document has "
            f"more than {most} (pass --min-agreement {most} or fewer, or --allow-fewer-annotators to report anyway)"
        )
    result["platform"] = summary.get("platform")
    result["excluded_assignments"] = summary.get("excluded_assignments", [])
    result["skipped_lines"] = summary["skipped_lines"]
    if baseline is not None:
        result["baseline"] = baseline
    if predictions:
        model_answers, name = read_predictions(predictions, key)
        result["model"] = {
            "predictions": os.path.basename(name.rstrip("/")),
            **agreement.with_model(result, model_answers),
        }
    check_places(study_dir, ("report.json", "figures/gold_agreement.png", "figures/model_by_agreement.png"))
    if os.path.islink(os.path.join(study_dir, "figures")):
        os.remove(os.path.join(study_dir, "figures"))  # a linked folder is replaced, never written through
    result["figures"] = text.write_figures(result, study_dir)
    write_json(os.path.join(study_dir, "report.json"), result)
    return result
