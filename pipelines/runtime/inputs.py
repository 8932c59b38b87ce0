"""What an ingest run read: each input's name, size and sha256, computed by a worker where the input lies.

The dataset card lists every input of a build with its sha256. Hashing a 22 GB dump is work over every byte,
so it runs in the ingest pipeline (:class:`DescribeInputs`, one element per input path, next to the reading),
not in the driver; each description is written as a small JSON file under ``OUT/_inputs/`` and
:func:`collect_descriptions` moves them into the run summary (``"inputs"``). The card then reads the summary
and never touches the inputs again, wherever they are (local disk, ``gs://``, ``s3://``).
"""

from __future__ import annotations

import json
import os
import stat

import apache_beam as beam

from corpora.provenance import describe_input
from pipelines.runtime import storage
from sources.paths import open_regular

INPUTS_DIR = "_inputs"


class BeamInputFiles(storage.BeamFiles):
    """:class:`corpora.provenance.InputFiles` through Beam's filesystems (local paths too).

    Local files are opened only when regular (:func:`sources.paths.open_regular`): a FIFO, a device or a
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


def _describe(element: tuple[int, str], kind: str, folder: str) -> None:
    number, path = element
    info = describe_input(path, kind, BeamInputFiles())
    storage.write_bytes(storage.join(folder, f"{number:05d}.json"), json.dumps(info, sort_keys=True).encode())


class DescribeInputs(beam.PTransform):
    """Input paths (absolute, as workers see them) -> one JSON description each under ``OUT/_inputs/``."""

    def __init__(self, paths: list[str], kind: str, out_dir: str):
        super().__init__()
        self._paths = [storage.absolute(p) for p in paths]
        self._kind = kind
        self._folder = storage.join(storage.absolute(out_dir), INPUTS_DIR)

    def expand(self, pbegin):
        return (
            pbegin
            | "InputPaths" >> beam.Create(list(enumerate(self._paths)))
            | "SpreadInputs" >> beam.Reshuffle()
            | "Describe" >> beam.Map(_describe, self._kind, self._folder)
        )


def collect_descriptions(out_dir: str) -> dict:
    """``{"inputs": [description, ...]}`` in the order of the paths, read from ``OUT/_inputs/`` (then deleted)."""
    folder = storage.join(storage.absolute(out_dir), INPUTS_DIR)
    paths = storage.list_files(storage.join(folder, "*.json"))
    inputs = [json.loads(storage.read_bytes(path)) for path in paths]
    storage.delete_tree(folder)
    return {"inputs": inputs}
