"""k-block shuffles for the zero-shot shuffle test (Laban et al., 2021).

A document is truncated to its first ``max_sentences`` sentences and cut into consecutive blocks of ``k``
sentences (the last block may be shorter); the blocks are permuted so that the order differs from the
original, sentences inside a block keep their order. The permutation comes from (seed, k, document id).

>>> row = next(shuffle_document({"id": "d", "source": "s", "sentences": ["a", "b", "c", "d"]}, 2, 0))
>>> row["block_order"], row["shuffled"]
([1, 0], ['c', 'd', 'a', 'b'])
"""

from __future__ import annotations

from collections.abc import Iterator

from corpora.seeding import rng_for
from schemas.records import Rejected

MAX_ATTEMPTS = 20


def blocks_of(sentences: list[str], k: int) -> list[list[str]]:
    return [sentences[i : i + k] for i in range(0, len(sentences), k)]


def shuffle_document(doc: dict, k: int, seed: int, max_sentences: int = 20) -> Iterator[dict | Rejected]:
    """One shuffled row of ``doc`` with block size ``k`` (split is filled in by the caller), or a Rejected."""
    if k < 1:
        raise ValueError(f"block size must be >= 1, got {k}")
    sentences = list(doc["sentences"])[:max_sentences]
    blocks = blocks_of(sentences, k)
    if len(blocks) < 2:
        yield Rejected(
            f"fewer_than_two_blocks_k{k}",
            id=doc["id"],
            source=doc["source"],
            detail=f"{len(sentences)} sentences, block size {k}",
        )
        return
    rng = rng_for(seed, f"shuffle-k{k}", doc["id"])
    identity = list(range(len(blocks)))
    if all(block == blocks[0] for block in blocks):
        yield Rejected(
            f"identical_blocks_k{k}",
            id=doc["id"],
            source=doc["source"],
            detail="every block has the same text",
        )
        return
    for _ in range(MAX_ATTEMPTS):
        order = identity[:]
        rng.shuffle(order)
        shuffled = [s for j in order for s in blocks[j]]
        if shuffled != sentences:
            break
    else:
        # Unlucky draws for a tiny document: rotate, which always changes the text (blocks differ).
        order = identity[1:] + identity[:1]
        shuffled = [s for j in order for s in blocks[j]]
        if shuffled == sentences:
            yield Rejected(
                f"cannot_reorder_k{k}", id=doc["id"], source=doc["source"], detail="no order changes the text"
            )
            return
    yield {
        "id": doc["id"],
        "source": doc["source"],
        "block_size": k,
        "original": sentences,
        "shuffled": shuffled,
        "block_order": order,
        "split": None,
    }
