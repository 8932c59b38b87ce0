"""Resuming a build whose ``--out`` is remote (``gs://``, ``s3://``): :mod:`pipelines.build.resume` through Beam's
filesystems.

The fingerprints are the local ones (:func:`pipelines.build.resume.fingerprint`); a remote input is fingerprinted
from its metadata, ``[size, checksum]`` (the CRC32C of a GCS object, the ETag of an S3 one, from
``FileSystems.checksum``), so a file replaced under the same name changes it. As locally, a stage writes to
``<dir>.partial``; then its objects are renamed under ``<dir>`` (a copy inside the store, nothing passes
through the driver) and ``<dir>.complete`` is written last, holding the stage's fingerprint. Object stores
have no atomic rename of a folder, so the marker is what says a folder is whole: a stage whose marker is
missing or names another fingerprint is redone from a clean state (its ``.partial``, its folder and its
tables in the dataset deleted first).
"""

from __future__ import annotations

import json
import posixpath

from incoherent.pipelines.build.resume import file_fingerprints
from incoherent.pipelines.runtime import storage
from incoherent.pipelines.runtime.summary import PARTIAL, SUMMARY_FILE

COMPLETE = ".complete"


def input_fingerprints(paths: list[str]) -> dict[str, list]:
    """:func:`pipelines.build.resume.file_fingerprints` for local paths, ``{url: [size, checksum]}`` for every
    object under a remote file or folder; sorted by path."""
    local = [p for p in paths if not storage.is_remote(p)]
    found: dict[str, list] = dict(file_fingerprints(local))
    for path in paths:
        if storage.is_remote(path):
            found.update(remote_fingerprints(path))
    return dict(sorted(found.items()))


def remote_fingerprints(path: str) -> dict[str, list]:
    """``{url: [size, checksum]}`` of a remote object, or of every object under a remote folder."""
    from apache_beam.io.filesystems import FileSystems

    patterns = [path, posixpath.join(path.rstrip("/"), "**")]
    found: dict[str, list] = {}
    for result in FileSystems.match(patterns):
        for meta in result.metadata_list:
            if meta.path.endswith("/"):
                continue
            found[meta.path] = [meta.size_in_bytes, str(FileSystems.checksum(meta.path))]
    return found


def marker(out_dir: str) -> str:
    return out_dir.rstrip("/") + COMPLETE


def is_finished(record: dict | None, print_: str, out_dir: str) -> bool:
    """The stage recorded with the same fingerprint, its completion marker names that fingerprint, and its
    ``run_summary.json`` says complete."""
    if not record or record.get("fingerprint") != print_:
        return False
    try:
        done = json.loads(storage.read_bytes(marker(out_dir)))
        summary = json.loads(storage.read_bytes(storage.join(out_dir, SUMMARY_FILE)))
    except (FileNotFoundError, ValueError):
        return False
    return done.get("fingerprint") == print_ and summary.get("complete") is True


def clean(out_dir: str, tables: list[str] = ()) -> None:
    """Remove a stage's marker first (its folder is no longer whole), then its partial output, its output and
    the dataset ``tables`` it moved there."""
    if storage.exists(marker(out_dir)):
        from apache_beam.io.filesystems import FileSystems

        FileSystems.delete([marker(out_dir)])
    for path in (out_dir + PARTIAL, out_dir, *tables):
        storage.delete_tree(path)


def publish(out_dir: str, print_: str) -> None:
    """``<out>.partial/*`` renamed to ``<out>/*`` (copies inside the store), then the marker, last."""
    from apache_beam.io.filesystems import FileSystems

    partial = out_dir.rstrip("/") + PARTIAL
    sources = storage.list_files(posixpath.join(partial, "**"))
    targets = [out_dir.rstrip("/") + path[len(partial) :] for path in sources]
    if sources:
        FileSystems.rename(sources, targets)
    storage.write_bytes(marker(out_dir), json.dumps({"fingerprint": print_}).encode("utf-8"))


def earlier_records(out: str, summary_name: str) -> dict[str, dict]:
    """The stage records of an earlier build in a remote ``out`` (empty when there is none, or it is
    unreadable: every stage is then redone)."""
    try:
        return json.loads(storage.read_bytes(storage.join(out, summary_name))).get("stages") or {}
    except (FileNotFoundError, ValueError, AttributeError):
        return {}
