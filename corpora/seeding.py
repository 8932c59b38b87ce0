"""Randomness and split assignment derived from (seed, document id), never from global state.

The same seed and id give the same draws on any runner, in any worker, in any order.

>>> rng_for(0, "shuffle", "cnn:abc").random() == rng_for(0, "shuffle", "cnn:abc").random()
True
>>> assign_split("wikipedia:12", {"test": 0.08})
'train'
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping


def stable_hash(*parts: object) -> int:
    """A 64-bit hash of the parts that is the same in every process (unlike ``hash()``)."""
    key = "\x1f".join(map(str, parts)).encode("utf-8")
    return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "big")


def unit_interval(*parts: object) -> float:
    """A number in [0, 1) determined by the parts."""
    return stable_hash(*parts) / 2**64


def rng_for(seed: int, purpose: str, doc_id: str) -> random.Random:
    """A private ``random.Random`` for one decision about one document."""
    return random.Random(stable_hash(seed, purpose, doc_id))


def assign_split(
    doc_id: str, fractions: Mapping[str, float], default: str = "train", salt: str = "split"
) -> str:
    """Split of a document by a stable hash of its id.

    ``fractions`` maps split names to their share, taken in the given order; the rest goes to ``default``.
    The seed is deliberately not part of the hash: a document stays in its split when the seed changes.
    """
    total = sum(fractions.values())
    if total > 1.0 + 1e-9 or any(f < 0 for f in fractions.values()):
        raise ValueError(f"split fractions must be >= 0 and sum to at most 1, got {dict(fractions)}")
    u = unit_interval(salt, doc_id)
    edge = 0.0
    for name, fraction in fractions.items():
        edge += fraction
        if u < edge:
            return name
    return default
