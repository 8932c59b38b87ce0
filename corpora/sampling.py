"""Stable samples of documents: a document is in the sample when its hash of (seed, id) is small enough.

A sample is ``N`` documents (a count) or a share of them (a fraction in (0, 1)). Both become one threshold on
``sample_key(seed, id)``: a fraction ``f`` keeps keys below ``f * 2**64``; a count ``N`` keeps the ``N``
smallest keys of the collection's distinct ids. So every runner and every worker agrees on the sample (a
worker only needs the threshold), and a larger sample always contains a smaller one of the same seed.

>>> spec = parse_sample("0.25", "--sample")
>>> spec
SampleSpec(count=None, fraction=0.25)
>>> threshold_for(spec, ["a", "b"], seed=0) == int(0.25 * 2**64)
True
>>> keep = threshold_for(parse_sample("1", "--sample"), ["a", "b", "c"], seed=0)
>>> sum(in_sample(0, doc_id, keep) for doc_id in ["a", "b", "c"])
1
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from dataclasses import dataclass

from incoherent.corpora.seeding import stable_hash
from incoherent.schemas.records import InputError

ALL = 2**64  # a threshold above every key: the whole collection


@dataclass(frozen=True)
class SampleSpec:
    """``count`` documents, or a ``fraction`` of them (exactly one is set)."""

    count: int | None = None
    fraction: float | None = None

    def __str__(self) -> str:
        return str(self.count) if self.count is not None else repr(self.fraction)


def parse_sample(value: object, option: str) -> SampleSpec:
    """``"100000"`` / ``100000`` -> a count; ``"0.1"`` -> a fraction; anything else is an :class:`InputError`."""
    text = str(value).strip().replace("_", "")
    try:
        number = float(text)
    except ValueError:
        raise InputError(
            f"{option}: expected a document count or a fraction in (0, 1), got {value!r}"
        ) from None
    if number.is_integer() and "." not in text and "e" not in text.lower():
        if number < 1:
            raise InputError(f"{option}: a sample count must be >= 1, got {value!r}")
        return SampleSpec(count=int(number))
    if not 0.0 < number < 1.0:
        raise InputError(f"{option}: a sample fraction must be in (0, 1), got {value!r}")
    return SampleSpec(fraction=number)


def sample_key(seed: int, doc_id: str) -> int:
    """The 64-bit key that orders documents for sampling (independent of every other draw)."""
    return stable_hash(seed, "sample", doc_id)


def threshold_for(spec: SampleSpec, ids: Iterable[str], seed: int) -> int:
    """The smallest key *not* in the sample: ``in_sample(seed, id, threshold)`` picks the sampled ids.

    For a count the ids are read once, keeping the ``count`` smallest keys (a heap, so memory is O(count)).
    A count at least the number of distinct ids keeps them all.
    """
    if spec.fraction is not None:
        return int(spec.fraction * ALL)
    assert spec.count is not None
    size = spec.count + 1
    heap: list[int] = []  # the `size` smallest distinct keys so far, negated (a max-heap)
    members: set[int] = set()
    for doc_id in ids:
        key = sample_key(seed, doc_id)
        if key in members or (len(heap) == size and key >= -heap[0]):
            continue
        members.add(key)
        if len(heap) < size:
            heapq.heappush(heap, -key)
        else:
            members.discard(-heapq.heappushpop(heap, -key))
    if len(heap) < size:
        return ALL
    return -heap[0]


def in_sample(seed: int, doc_id: str, threshold: int) -> bool:
    return threshold >= ALL or sample_key(seed, doc_id) < threshold
