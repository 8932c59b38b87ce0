"""Resumable builds: which stages of an earlier build are finished and still valid.

A stage is finished when its output directory holds a complete ``run_summary.json`` and ``build_summary.json``
records it with the same *fingerprint*: a hash of its command line, of the files it reads from outside the
build (path, size, modification time) and of the fingerprints of the stages it reads from. A stage whose
fingerprint changed, or that never finished, is redone from a clean state; so is every stage after it that
reads its output (their fingerprints change with it).

A stage writes to ``<out>.partial`` and the directory is renamed to its final name only when the stage has
finished, so a killed stage never leaves files under a final name.

>>> a = fingerprint(["index", "docs"], {}, [])
>>> a == fingerprint(["index", "docs"], {}, []) and a != fingerprint(["index", "docs", "--k", "5"], {}, [])
True
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil

from incoherent.pipelines.runtime.summary import PARTIAL, SUMMARY_FILE


def file_fingerprints(paths: list[str]) -> dict[str, list[int]]:
    """``{path: [size, mtime_ns]}`` of every file under ``paths`` (files or directories), sorted."""
    found: dict[str, list[int]] = {}
    for path in paths:
        if os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs.sort()
                for name in sorted(files):
                    full = os.path.join(root, name)
                    stat = os.stat(full)
                    found[full] = [stat.st_size, stat.st_mtime_ns]
        elif os.path.exists(path):
            stat = os.stat(path)
            found[path] = [stat.st_size, stat.st_mtime_ns]
    return dict(sorted(found.items()))


def fingerprint(argv: list[str], inputs: dict[str, list[int]], upstream: list[str]) -> str:
    """A hash of what determines a stage's output (see the module docstring)."""
    text = json.dumps({"argv": argv, "inputs": inputs, "upstream": upstream}, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def run_complete(out_dir: str) -> bool:
    """Whether ``out_dir`` holds a ``run_summary.json`` that says the run completed."""
    try:
        with open(os.path.join(out_dir, SUMMARY_FILE), encoding="utf-8") as f:
            return json.load(f).get("complete") is True
    except (OSError, ValueError):
        return False


def is_finished(record: dict | None, print_: str, out_dir: str) -> bool:
    """The stage recorded by an earlier build with the same fingerprint, and its output is still there."""
    return bool(record) and record.get("fingerprint") == print_ and run_complete(out_dir)


def remove(path: str) -> None:
    if os.path.isdir(path):
        shutil.rmtree(path)
    elif os.path.exists(path):
        os.remove(path)


def clean(out_dir: str) -> None:
    """Remove a stage's output and any partial output of an interrupted run."""
    remove(out_dir + PARTIAL)
    remove(out_dir)


def publish(out_dir: str) -> None:
    """``<out>.partial`` -> ``<out>`` (a rename: the final name appears with every file in it)."""
    os.replace(out_dir + PARTIAL, out_dir)
