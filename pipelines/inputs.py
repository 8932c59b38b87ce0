"""What an ingest run read: each input's name, size and sha256, computed by a worker where the input lies.

The dataset card lists every input of a build with its sha256. Hashing a 22 GB dump is work over every byte,
so it runs in the ingest pipeline (:class:`DescribeInputs`, one element per input path, next to the reading),
not in the driver; each description is written as a small JSON file under ``OUT/_inputs/`` and
:func:`collect_descriptions` moves them into the run summary (``"inputs"``). The card then reads the summary
and never touches the inputs again, wherever they are (local disk, ``gs://``, ``s3://``).
"""

from __future__ import annotations

import json

import apache_beam as beam

from corpora.provenance import describe_input
from pipelines import storage

INPUTS_DIR = "_inputs"


def _describe(element: tuple[int, str], kind: str, folder: str) -> None:
    number, path = element
    info = describe_input(path, kind, storage.BeamFiles())
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
