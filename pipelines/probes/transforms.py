"""The transform of ``incoherent probes`` (imported by :func:`pipelines.probes.run`, so ``--help`` imports no
Beam)."""

from __future__ import annotations

import apache_beam as beam

from incoherent.corpora.seeding import stable_hash
from incoherent.pipelines.runtime.tables import ApplyWithRejects, DropDuplicateIds, count

STAGE = "probes"


class _Probe(beam.DoFn):
    def __init__(
        self, phenomena: tuple[str, ...], seed: int, demonstrative: str = "insted", number: str = "insted"
    ):
        self._phenomena, self._seed, self._demonstrative = phenomena, seed, demonstrative
        self._number = number

    def process(self, doc):
        from incoherent.corpora.probes.rows import probe_document

        def tally(name: str) -> None:
            count(STAGE, name)

        yield from probe_document(doc, self._phenomena, self._seed, tally, self._demonstrative, self._number)


def _rank(seed: int):
    def rank(row: dict) -> tuple[int, str]:
        return stable_hash(seed, row["phenomenon"], row["id"]), row["id"]

    return rank


class GenerateProbes(beam.PTransform):
    """Document rows -> ``(probe rows, rejected)``; documents of other splits are counted and dropped, one row
    kept per id (:class:`DropDuplicateIds`), at most ``per_phenomenon`` probes per phenomenon."""

    def __init__(
        self,
        phenomena: list[str],
        split: str,
        seed: int,
        per_phenomenon: int | None,
        demonstrative: str = "insted",
        number: str = "insted",
    ):
        super().__init__()
        self._phenomena, self._split, self._seed = tuple(phenomena), split, seed
        self._demonstrative, self._number = demonstrative, number
        self._per = per_phenomenon

    def expand(self, docs):
        split = self._split

        def in_split(doc: dict) -> bool:
            if doc["split"] == split:
                count(STAGE, "in_split")
                return True
            count(STAGE, f"other_split/{doc['split']}")
            return False

        unique, duplicates = docs | "InSplit" >> beam.Filter(in_split) | "OnePerId" >> DropDuplicateIds(STAGE)
        probes, rejected = unique | "Probe" >> ApplyWithRejects(
            _Probe(self._phenomena, self._seed, self._demonstrative, self._number).process, STAGE, kept=None
        )
        if self._per is not None:
            probes = (
                probes
                | "ByPhenomenon" >> beam.Map(lambda row: (row["phenomenon"], row))
                | "Sample" >> beam.combiners.Top.PerKey(self._per, key=_rank(self._seed), reverse=True)
                | "Flatten" >> beam.FlatMap(lambda kv: kv[1])
            )
        rejected = (duplicates, rejected) | "AllRejected" >> beam.Flatten()
        return probes, rejected
