"""``annotate review``: MTurk's results with every assignment approved or rejected (the rules are in
:mod:`annotation.mturk_review`).
"""

from __future__ import annotations

import os

from incoherent.annotation.release import write_out_file
from incoherent.annotation.study import MTURK_RESULTS, read_study
from incoherent.annotation.textfile import read_text
from incoherent.schemas.records import InputError


def review(
    study_dir: str,
    out_path: str,
    *,
    min_seconds: float | None = None,
    overwrite: bool = False,
) -> dict:
    """The MTurk results an import read, with ``Approve`` (``x``) or ``Reject`` (the reason) filled for every
    submitted assignment, as MTurk's "Upload CSV" of a batch's review takes them back; returns the decisions.

    An assignment is rejected when its share of wrong control answers is above the import's
    ``--max-control-errors``, when none of its answers could be used, or when its median seconds per item is
    below ``min_seconds`` (None: the reading floor of its HIT, :func:`annotation.mturk_review.reading_floor`;
    0: off); assignments already approved or rejected are left as they are.
    """
    from incoherent.annotation import mturk_review

    key, _, summary = read_study(study_dir)
    if summary.get("format") != "mturk":
        raise InputError(
            f"{study_dir}: review needs an import of MTurk results (this one read {summary.get('format')})"
        )
    if min_seconds is not None and not (min_seconds >= 0 and min_seconds < float("inf")):
        raise InputError(f"--min-seconds: must be a number >= 0, got {min_seconds}")
    text = read_text(os.path.join(study_dir, MTURK_RESULTS))
    assignments = summary.get("assignments") or {}
    limit = summary.get("max_control_errors")
    fields = ("answers", "controls", "control_errors", "failing", "seconds", "median_seconds")
    if (
        type(limit) not in (int, float)
        or not 0 <= limit <= 1
        or not isinstance(assignments, dict)
        or not all(isinstance(a, dict) and all(f in a for f in fields) for a in assignments.values())
    ):
        raise InputError(
            f"{os.path.join(study_dir, 'import.json')}: not what `annotate import` wrote (import again)"
        )
    decisions = mturk_review.review_decisions(
        text, assignments, limit, min_seconds, os.path.join(study_dir, MTURK_RESULTS), key["kind"]
    )
    write_out_file(out_path, study_dir, decisions["csv"], overwrite, "annotate review")
    return decisions
