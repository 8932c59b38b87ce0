"""The transforms of ``incoherent shuffle`` (imported by :func:`pipelines.shuffle.run`, so ``--help`` imports
no Beam)."""

from __future__ import annotations

import apache_beam as beam

from incoherent.corpora.sampling import in_sample
from incoherent.corpora.seeding import assign_split
from incoherent.corpora.shuffle import shuffle_document
from incoherent.pipelines.runtime.tables import ApplyWithRejects, count

STAGE = "shuffle"


class ShuffleDocuments(beam.PTransform):
    """Documents -> ``(shuffled rows, rejected)`` for every block size, each row with its split."""

    def __init__(
        self,
        block_sizes: list[int],
        seed: int,
        max_sentences: int,
        fractions: dict[str, float],
        permutations: int = 1,
    ):
        super().__init__()
        self._block_sizes, self._seed, self._max = block_sizes, seed, max_sentences
        self._fractions, self._permutations = fractions, permutations

    def expand(self, docs):
        block_sizes, seed, max_sentences, fractions, permutations = (
            self._block_sizes,
            self._seed,
            self._max,
            self._fractions,
            self._permutations,
        )

        def shuffle_all(doc):
            split = assign_split(doc["id"], fractions)
            for k in block_sizes:
                for out in shuffle_document(doc, k, seed, max_sentences, permutations):
                    if isinstance(out, dict):
                        out["split"] = split
                    yield out

        return docs | "Shuffle" >> ApplyWithRejects(shuffle_all, STAGE)


def sampled(doc: dict, seed: int, threshold: int) -> bool:
    if in_sample(seed, doc["id"], threshold):
        return True
    count(STAGE, "not_sampled")
    return False
