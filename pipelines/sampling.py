"""``--sample [SOURCE=]N|FRACTION`` of ``intruders`` and ``shuffle``: which documents become dataset documents.

The driver reads the ``id`` column of each source's document files once and turns each sample into a
threshold (:mod:`corpora.sampling`); workers only compare a document's key with its source's threshold.
``incoherent build`` writes the sampled ids of a source as an id list for ``neighbors --queries``.
"""

from __future__ import annotations

from collections.abc import Iterable

from incoherent.corpora.sampling import SampleSpec, in_sample, parse_sample, threshold_for
from incoherent.pipelines.runtime.options import parse_per_source


def parse_samples(values: Iterable[object], option: str, sources: list[str]) -> dict[str, SampleSpec]:
    """``["wikipedia=106352", "0.1"]`` -> ``{"wikipedia": count 106352, <every other source>: fraction 0.1}``."""
    return parse_per_source(values, option, sources, parse_sample, metavar="N", what="sample")


def sample_thresholds(specs: dict[str, SampleSpec], files: Iterable[str], seed: int) -> dict[str, int]:
    """The key threshold of each sampled source, from the ids of its document files."""
    from incoherent.pipelines.runtime.tables import read_ids, source_of_file

    by_source: dict[str, list[str]] = {}
    for path in files:
        by_source.setdefault(source_of_file(path), []).append(path)
    return {
        source: threshold_for(spec, read_ids(by_source.get(source, [])), seed)
        for source, spec in sorted(specs.items())
    }


def sampled_ids(files: list[str], spec: SampleSpec, seed: int) -> list[str]:
    """The sorted distinct ids of ``files`` in the sample (e.g. for ``neighbors --queries``)."""
    from incoherent.pipelines.runtime.tables import read_ids

    threshold = threshold_for(spec, read_ids(files), seed)
    return sorted({doc_id for doc_id in read_ids(files) if in_sample(seed, doc_id, threshold)})


def write_id_list(path: str, ids: list[str]) -> None:
    """One id a line (the ``--queries`` format)."""
    from apache_beam.io.filesystems import FileSystems

    with FileSystems.create(path) as f:
        f.write("".join(f"{doc_id}\n" for doc_id in ids).encode("utf-8"))
