"""k-block shuffles for the zero-shot shuffle test (Laban et al., 2021).

A document is truncated to its first ``max_sentences`` sentences and cut into consecutive blocks of ``k``
sentences (the last block may be shorter); the blocks are permuted so that the order differs from the
original, sentences inside a block keep their order. The permutation comes from (seed, k, document id).
With ``permutations=N`` a document yields up to N rows per k with distinct shuffled texts (fewer when fewer
exist, e.g. one for two blocks); permutation 0 is the order drawn with ``permutations=1``.

>>> row = next(shuffle_document({"id": "d", "source": "s", "sentences": ["a", "b", "c", "d"]}, 2, 0))
>>> row["block_order"], row["shuffled"]
([1, 0], ['c', 'd', 'a', 'b'])
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from incoherent.corpora.seeding import rng_for
from incoherent.schemas.records import Rejected

MAX_ATTEMPTS = 20
ENUMERATE_BLOCKS = 7  # up to 7! = 5040 orders are listed exhaustively; more blocks are drawn at random
DRAWS_PER_PERMUTATION = 50


def blocks_of(sentences: list[str], k: int) -> list[list[str]]:
    return [sentences[i : i + k] for i in range(0, len(sentences), k)]


def _text_of(blocks: list[list[str]], order: list[int]) -> tuple[str, ...]:
    return tuple(s for j in order for s in blocks[j])


def more_orders(blocks: list[list[str]], rng, wanted: int, taken: set[tuple[str, ...]]) -> list[list[int]]:
    """Up to ``wanted`` block orders whose texts differ from each other and from every text in ``taken``.

    With at most :data:`ENUMERATE_BLOCKS` blocks every order is listed, orders giving the same text are kept
    once (first in lexicographic order) and ``rng`` picks among them, so fewer than ``wanted`` come back only
    when fewer exist. With more blocks (at least 8! = 40,320 orders) orders are drawn at random, at most
    ``DRAWS_PER_PERMUTATION * wanted`` draws.
    """
    taken = set(taken)
    found: list[list[int]] = []
    if len(blocks) <= ENUMERATE_BLOCKS:
        pool = []
        for order in itertools.permutations(range(len(blocks))):
            text = _text_of(blocks, list(order))
            if text not in taken:
                taken.add(text)
                pool.append(list(order))
        rng.shuffle(pool)
        return pool[:wanted]
    order = list(range(len(blocks)))
    for _ in range(DRAWS_PER_PERMUTATION * wanted):
        if len(found) == wanted:
            break
        rng.shuffle(order)
        text = _text_of(blocks, order)
        if text not in taken:
            taken.add(text)
            found.append(order[:])
    return found


def shuffle_document(
    doc: dict, k: int, seed: int, max_sentences: int = 20, permutations: int = 1
) -> Iterator[dict | Rejected]:
    """Shuffled rows of ``doc`` with block size ``k`` (split is filled in by the caller), or a Rejected.

    Row ``permutation`` 0 is drawn as it always was; rows 1..``permutations``-1 have other distinct texts.
    """
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
    orders = [order]
    if permutations > 1:
        orders += more_orders(blocks, rng, permutations - 1, {tuple(sentences), tuple(shuffled)})
    for index, order in enumerate(orders):
        yield {
            "id": doc["id"],
            "source": doc["source"],
            "block_size": k,
            "permutation": index,
            "original": sentences,
            "shuffled": [s for j in order for s in blocks[j]],
            "block_order": order,
            "split": None,
        }
