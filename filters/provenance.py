"""``provenance.json`` of a model this project trained: what it started from and what text it saw.

The shuffle test is zero-shot only when the model never saw shuffled text. ``finetune-lm`` writes
``saw_shuffled_text: false`` (unless its base model's own provenance says true), ``train-shuffle`` writes
``true``; ``score-shuffle`` reads the file and labels any model that saw shuffled text
:data:`SUPERVISED_LABEL` in its table, ``results.json`` and figure.

>>> label_for({"saw_shuffled_text": True})
'supervised (not zero-shot)'
>>> label_for({"saw_shuffled_text": False}) is None
True
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable

from incoherent.fileio.outputs import finite, replace_text
from incoherent.fileio.paths import is_remote
from incoherent.filters.model_files import read_json

PROVENANCE = "provenance.json"
SUPERVISED_LABEL = "supervised (not zero-shot)"


def data_fingerprint(documents: Iterable[tuple[str, Iterable[str]]]) -> str:
    """sha256 of the training documents ``(id, sentences)``, in id order (independent of reading order).

    >>> data_fingerprint([("b", ["x"]), ("a", ["y"])]) == data_fingerprint([("a", ["y"]), ("b", ["x"])])
    True
    """
    digest = hashlib.sha256()
    for doc_id, sentences in sorted((d, list(s)) for d, s in documents):
        digest.update(json.dumps([doc_id, sentences], ensure_ascii=False).encode("utf-8"))
        digest.update(b"\n")
    return "sha256:" + digest.hexdigest()


def read_provenance(model_dir: str) -> dict | None:
    """The model's ``provenance.json`` (local directories only), or None when it has none."""
    path = os.path.join(model_dir, PROVENANCE)
    if is_remote(model_dir) or not os.path.isfile(path):
        return None
    return read_json(path)


def saw_shuffled_text(provenance: dict | None) -> bool:
    return bool(provenance and provenance.get("saw_shuffled_text"))


def label_for(provenance: dict | None) -> str | None:
    """:data:`SUPERVISED_LABEL` for a model trained on shuffled text, else None."""
    return SUPERVISED_LABEL if saw_shuffled_text(provenance) else None


def write_provenance(model_dir: str, provenance: dict) -> None:
    """``provenance.json``, written whole; a non-finite number (a NaN loss) is written as ``null``, never as
    the bare ``NaN`` that is not JSON."""
    text = json.dumps(finite(provenance), indent=2, sort_keys=True, allow_nan=False)
    replace_text(os.path.join(model_dir, PROVENANCE), text + "\n")
