"""Records of human annotation studies (``incoherent annotate``): JSON files, not Parquet, described here.

An export folder (``annotate export``) holds:

- ``tasks.json``, what annotators see (no gold)::

    {"format": "incoherent.annotation.tasks", "version": 1, "export_id": "3f0c...", "kind": "intruder",
     "workers": 5, "tasks": [{"task_id": "t0001", "items": [{"item_id": "i1a2b...", "sentences": [...]}]}]}

  an intruder item has ``sentences``; a pair item (shuffle configs) has ``block_size`` and ``texts`` (two lists
  of sentences, shown as A and B). ``seed`` draws each in-lab annotator's order; ``instructions`` is the
  Markdown shown to annotators; ``practice`` (``--practice N``) lists practice items, which carry their
  ``answer`` for feedback (they are not under study).
- ``key.json``, the gold, kept by the study's owner::

    {"format": "incoherent.annotation.key", "version": 1, "export_id": "3f0c...", "kind": "intruder",
     "config": "intruder-wikipedia", "split": "test", "seed": 0, "per_task": 5, "controls": 1, "workers": 5,
     "control_rule": "difficulty == easy", "documents": 20, "tasks": {"t0001": ["i1a2b...", ...]},
     "items": {"i1a2b...": {"id": "wikipedia:12", "role": "test", "gold": 3, "sentences": 6}}}

  ``gold`` is the 0-based intruder position or -1 (coherent) for intruder items, and for pairs the shown text
  (0 = A, 1 = B) that is the original; pair items also carry ``block_size`` and ``permutation``. ``practice``
  maps practice item ids (never in ``items``) to their document ``id``, ``role`` (``practice``) and ``gold``.

An import folder (``annotate import``) holds ``key.json`` (copied, or built from INSteD's file),
``answers.jsonl`` (one :data:`ANSWER_FIELDS` record a line), ``rejected.jsonl`` (:data:`REJECTED_FIELDS`),
``import.json`` (``written_by``: :data:`IMPORT_FORMAT`, the folder's marker; counts, quality control per worker
and per assignment) and, for MTurk, ``mturk_results.csv`` (the results read, for ``annotate review``). ``annotate report`` adds ``report.json`` and
``figures/``; ``annotate verify`` writes ``<config>/<split>_verified-*.parquet`` (the schema of the config) and
``human_verification/<config>.json`` (with ``written``: the split files it wrote and their sha256) and, for
intruder studies, ``human_verification/<config>-answers.jsonl`` (INSteD's released format) into the dataset.
"""

from __future__ import annotations

FORMAT_VERSION = 1
TASKS_FORMAT = "incoherent.annotation.tasks"
KEY_FORMAT = "incoherent.annotation.key"
KINDS = ("intruder", "pair")

# MTurk's assignment of an answer (null on other platforms): the HIT, the assignment, its status on MTurk
# (``Submitted``, ``Approved``).
ASSIGNMENT_FIELDS = ("hit_id", "assignment_id", "assignment_status")

# One answer of one annotator to one item of one task. ``answer``: intruder position (0-based, never 0) or -1
# for "none of the above"; for pairs the text judged original (0 = A, 1 = B). ``seconds``: time on the item
# (null where the platform does not say); then :data:`ASSIGNMENT_FIELDS`.
ANSWER_FIELDS = ("task_id", "item_id", "worker", "answer", "seconds", *ASSIGNMENT_FIELDS)

IMPORT_FORMAT = (
    "incoherent.annotation.import"  # ``import.json``: the marker of a folder `annotate import` wrote
)

# A line of an in-lab answers file (``TASKS_DIR/answers/<annotator>.jsonl``); a changed answer adds a line with
# ``"correction": true`` that supersedes the earlier ones. Practice answers (``answers/practice/<annotator>.jsonl``)
# carry ``"practice": true`` and ``right`` instead of ``answered_at``.
LAB_ANSWER_FIELDS = ("export_id", "task_id", "item_id", "annotator", "answer", "seconds", "answered_at")

# A rejected answer: why, where it came from (``file:line`` or ``file:row``), the record as read.
REJECTED_FIELDS = ("reason", "origin", "detail", "record")
