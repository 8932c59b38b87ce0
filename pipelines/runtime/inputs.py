"""What an ingest run read: each input's name, size and sha256, computed by a worker where the input lies.

The dataset card lists every input of a build with its sha256. Hashing a 22 GB dump is work over every byte,
so it runs in the ingest pipeline (:class:`DescribeInputs`, one element per input path, next to the reading),
not in the driver; each description is written as a small JSON file under ``OUT/_inputs/`` and
:func:`collect_descriptions` moves them into the run summary (``"inputs"``). The card then reads the summary
and never touches the inputs again, wherever they are (local disk, ``gs://``, ``s3://``).

The hash must be of the bytes the run read. The readers read a large file in byte ranges on several workers at
once, so no one pass sees every byte in order; instead every local input file's identity (:func:`fingerprint`:
inode, size, modification and change times; the kernel updates the change time on every write, and no
user can set it back) is taken when the pipeline is built, before any byte is read, and must be the same
before and after the file is hashed and again when the run has finished. A file truncated, appended to or
rewritten during the run fails it with one line naming the file, and no run summary is written (the output is
never presented as complete with the sha256 of other bytes).
"""

from __future__ import annotations

import json
import os
import stat

import apache_beam as beam

from incoherent.corpora.provenance import describe_input
from incoherent.fileio.paths import open_regular
from incoherent.pipelines.runtime import storage
from incoherent.schemas.records import InputError

INPUTS_DIR = "_inputs"


class BeamInputFiles(storage.BeamFiles):
    """:class:`corpora.provenance.InputFiles` through Beam's filesystems (local paths too).

    Local files are opened only when regular (:func:`incoherent.fileio.paths.open_regular`): a FIFO, a device or a
    socket in an input folder is left out of its hash (no ingest reads it), never read (reading hangs).
    """

    def files_under(self, path: str) -> list[str]:
        found = super().files_under(path)
        if storage.is_remote(path):
            return found
        return [name for name in found if _regular(name)]

    def size(self, path: str) -> int:
        if not storage.is_remote(path):
            return os.path.getsize(path)
        return super().size(path)

    def open(self, path: str):
        return storage.open_raw(path) if storage.is_remote(path) else open_regular(path)


def _regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:  # a dangling link
        return False


FINGERPRINTS = "_fingerprints"  # key of a description while the run goes on (removed by collect_descriptions)


def fingerprint(path: str) -> list[int]:
    """A local file's identity: inode, size, modification and change times (nanoseconds). Not the device
    number, which differs between machines that mount one network file system."""
    info = os.stat(path)
    return [info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns]


def fingerprints(path: str) -> dict[str, list[int]]:
    """:func:`fingerprint` of every regular file of a local input (a file or a folder); ``{}`` for a remote one."""
    if storage.is_remote(path) or not os.path.exists(path):
        return {}
    files = BeamInputFiles()
    names = files.files_under(path) if os.path.isdir(path) else [path]
    return {name: fingerprint(name) for name in names if _regular(name)}


def check_unchanged(before: dict[str, list[int]]) -> None:
    """Every file of ``before`` still has its fingerprint, else one line naming the first that changed."""
    for name, was in sorted(before.items()):
        try:
            now = fingerprint(name)
        except OSError:
            now = None
        if now != was:
            how = (
                "was removed"
                if now is None
                else f"changed size ({was[1]:,} -> {now[1]:,} bytes)"
                if now[1] != was[1]
                else "was replaced"
                if now[0] != was[0]
                else "was written to"
            )
            raise InputError(
                f"{name}: {how} while this run read it; the output and the input's sha256 would not match, "
                "run again once the input is stable"
            )


def _describe(element: tuple[int, str, dict], kind: str, folder: str) -> None:
    number, path, before = element
    check_unchanged(before)
    info = describe_input(path, kind, BeamInputFiles())
    check_unchanged(before)  # the hash is of the bytes the run started with
    info[FINGERPRINTS] = before
    storage.write_bytes(storage.join(folder, f"{number:05d}.json"), json.dumps(info, sort_keys=True).encode())


class DescribeInputs(beam.PTransform):
    """Input paths (absolute, as workers see them) -> one JSON description each under ``OUT/_inputs/``."""

    def __init__(self, paths: list[str], kind: str, out_dir: str):
        super().__init__()
        self._paths = [storage.absolute(p) for p in paths]
        self._kind = kind
        self._folder = storage.join(storage.absolute(out_dir), INPUTS_DIR)
        self._before = {path: fingerprints(path) for path in self._paths}  # before the pipeline reads a byte

    def expand(self, pbegin):
        return (
            pbegin
            | "InputPaths" >> beam.Create([(i, p, self._before[p]) for i, p in enumerate(self._paths)])
            | "SpreadInputs" >> beam.Reshuffle()
            | "Describe" >> beam.Map(_describe, self._kind, self._folder)
        )


def collect_descriptions(out_dir: str) -> dict:
    """``{"inputs": [description, ...]}`` in the order of the paths, read from ``OUT/_inputs/`` (then deleted)."""
    folder = storage.join(storage.absolute(out_dir), INPUTS_DIR)
    paths = storage.list_files(storage.join(folder, "*.json"))
    inputs = [json.loads(storage.read_bytes(path)) for path in paths]
    storage.delete_tree(folder)
    for info in inputs:  # the run has finished reading: the inputs must still be what was hashed
        check_unchanged(info.pop(FINGERPRINTS, {}))
    return {"inputs": inputs}
