"""A run's ``run_summary.json`` and files written whole: the one writer of a run summary, and the one
atomic JSON writer (a killed run never leaves half a file under the final name).

``<name>.partial`` is what is still being written, a file (:func:`write_json_atomic`) or a build stage's
folder (:mod:`pipelines.build.resume`); the final name appears only once it is whole.
"""

from __future__ import annotations

import json
import os
import posixpath

from incoherent.fileio import outputs
from incoherent.fileio.outputs import replace_text
from incoherent.pipelines.runtime import storage

PARTIAL = (
    outputs.PARTIAL
)  # ``<name>.partial``: one definition, where files are written (incoherent.fileio.outputs)
SUMMARY_FILE = "run_summary.json"


def write_json_atomic(path: str, value: dict) -> None:
    """Write JSON to ``path`` through a temporary file, so a kill never leaves half a file."""
    replace_text(path, json.dumps(value, indent=2, default=str) + "\n")


def write_summary(out_dir: str, summary: dict) -> None:
    """Write ``OUT/run_summary.json``: the one writer of it (locally through a temporary file and a rename, so a
    killed run never leaves half a summary; remote through Beam's filesystems)."""
    if not storage.is_remote(out_dir):
        write_json_atomic(os.path.join(out_dir, SUMMARY_FILE), summary)
        return
    from apache_beam.io.filesystems import FileSystems

    with FileSystems.create(posixpath.join(out_dir, SUMMARY_FILE)) as f:
        f.write((json.dumps(summary, indent=2, sort_keys=False, default=str) + "\n").encode("utf-8"))


def read_summary(out_dir: str) -> dict | None:
    """``OUT/run_summary.json`` of a finished run (local or remote), or ``None`` when there is none or it is not
    a JSON object."""
    path = storage.join(out_dir, SUMMARY_FILE)
    try:
        value = json.loads(storage.read_bytes(path))
    except Exception:  # noqa: BLE001 - missing, unreadable or not JSON: no summary
        return None
    return value if isinstance(value, dict) else None
