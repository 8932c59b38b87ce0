"""The forward requests of :mod:`filters.lm` (:class:`Piece`, a text's :class:`Plan`) and the shared-prefix path:
a causal window that begins with another's tokens reuses its keys and values there, and losses are put back
together per text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

MIN_SHARED_POSITIONS = 16  # a window reuses another's keys and values for at least this many leading tokens


class Piece(NamedTuple):
    """One row of a forward pass: ``ids`` (shared between the masked copies of a window), the position to
    replace by the mask token (``-1``: none), and the targets: the predictions at positions ``start``,
    ``start + 1``, ... of the token ids ``gold`` count (their log-probabilities), all added to ``group`` of
    text ``text``. Every scorer's targets are such a run of consecutive positions. (A named tuple: a pool
    makes about a hundred thousand of them.)"""

    ids: tuple[int, ...]
    mask_at: int
    start: int
    gold: tuple[int, ...]
    text: int
    group: int


@dataclass(frozen=True)
class Plan:
    """How a text's losses become its score: ``mode`` exact (sum / tokens), laban-causal (per-group means
    weighted by ``weights``, / tokens) or laban-masked (mean of the group means)."""

    mode: str
    tokens: int
    weights: tuple[int, ...] = ()


def shared_prefixes(pieces: Sequence[Piece]) -> list[tuple[int, int] | None]:
    """For each causal piece, ``(j, n)``: its first ``n`` targets equal targets of piece ``j`` (an earlier
    piece in sorted order, whose own leading targets may come from another), or None.

    A causal piece predicts, at window position ``c``, its token ``c + 1`` from tokens ``0..c``; two pieces
    whose ids agree on their first ``L`` tokens make the same predictions at positions ``c < L - 1``. Pieces
    are sorted by their ids, so each one's longest common prefix with any earlier piece is the one with its
    predecessor; a piece takes the shared targets from it when the predecessor's targets start no later.

    >>> a = Piece((1, 2, 3, 4), -1, 0, (2, 3, 4), 0, 0)
    >>> b = Piece((1, 2, 3, 9, 9), -1, 0, (2, 3, 9, 9), 1, 0)
    >>> shared_prefixes([a, b])
    [None, (0, 2)]
    >>> shared_prefixes([a, Piece((1, 2, 3), -1, 0, (2, 3), 2, 0)])  # all of a prefix's targets
    [(1, 2), None]
    """
    order = sorted(range(len(pieces)), key=lambda i: pieces[i].ids)
    sources: list[tuple[int, int] | None] = [None] * len(pieces)
    for prev, cur in zip(order, order[1:], strict=False):
        p, q = pieces[prev], pieces[cur]
        if p.start > q.start or p.mask_at >= 0 or q.mask_at >= 0:
            continue
        common = common_prefix(p.ids, q.ids)
        # q's positions start .. common - 2 are predicted the same way by p, where p has targets there
        n = min(common - 1, p.start + len(p.gold)) - q.start
        n = min(n, len(q.gold))
        offset = q.start - p.start
        if n > 0 and q.gold[:n] == p.gold[offset : offset + n]:
            sources[cur] = (prev, n)
    return sources


def shared_bodies(
    pieces: Sequence[Piece], minimum: int = MIN_SHARED_POSITIONS
) -> list[tuple[int, int] | None]:
    """For each causal piece, ``(j, n)``: piece ``j``, run in full, begins with the same ``n`` tokens, so its
    keys and values serve the piece's first ``n`` positions; or None (run in full). ``n`` is at least
    ``minimum`` and stops before the piece's first target (whose hidden state is needed) and its last token.

    Pieces are sorted by their ids; a piece's common prefix with its predecessor bounds the one with the
    predecessor's own source, so every shared piece points at a piece run in full.

    >>> a = Piece((1, 2, 3, 4, 5), -1, 0, (2, 3, 4, 5), 0, 0)
    >>> b = Piece((1, 2, 3, 4, 9, 9), -1, 3, (9, 9), 1, 0)
    >>> c = Piece((1, 2, 3, 7), -1, 2, (7,), 2, 0)
    >>> shared_bodies([a, b, c], minimum=2)
    [None, (0, 3), (0, 2)]
    """
    order = sorted(range(len(pieces)), key=lambda i: pieces[i].ids)
    out: list[tuple[int, int] | None] = [None] * len(pieces)
    reach = [len(p.ids) for p in pieces]  # common prefix with the piece's source (its length for a source)
    for prev, cur in zip(order, order[1:], strict=False):
        p, q = pieces[prev], pieces[cur]
        if p.mask_at >= 0 or q.mask_at >= 0:
            continue
        common = min(common_prefix(p.ids, q.ids), reach[prev])
        n = min(common, q.start, len(q.ids) - 1)
        if n >= minimum:
            out[cur], reach[cur] = (prev if out[prev] is None else out[prev][0], n), common
    return out


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading ids ``a`` and ``b`` share: ``common_prefix((1, 2, 3), (1, 2, 9)) == 2``."""
    common = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        common += 1
    return common


def assemble_losses(pieces: Sequence[Piece], sources: Sequence, own: Sequence) -> list:
    """Every piece's target losses: the shared leading ones from its source piece, then its own."""
    import numpy as np

    empty = np.empty(0)
    losses: list = [None] * len(pieces)
    for first in range(len(pieces)):
        chain, i = [], first  # the piece, its source, its source's source ... down to one already known
        while losses[i] is None and sources[i] is not None:
            chain.append(i)
            i = sources[i][0]
        if losses[i] is None:
            losses[i] = own[i] if own[i] is not None else empty
        for k in reversed(chain):
            j, n = sources[k]
            offset = pieces[k].start - pieces[j].start
            shared = losses[j][offset : offset + n]
            losses[k] = np.concatenate([shared, own[k]]) if own[k] is not None else shared
    return losses


def combine(plan: Plan, groups: dict[int, list[float]]) -> tuple[float, int]:
    """A text's ``(score, tokens)`` from the ``[loss sum, count]`` of each group of its pieces."""
    nan = float("nan")
    if plan.mode == "exact":
        total, count = (sum(v[0] for v in groups.values()), sum(v[1] for v in groups.values()))
        return (total / count, count) if count else (nan, 0)
    if plan.mode == "laban-causal":
        if not groups or any(groups.get(g, [0, 0])[1] == 0 for g in range(len(plan.weights))):
            return nan, 0  # a one-token text: their loss is a mean over no positions
        weighted = sum(groups[g][0] / groups[g][1] * w for g, w in enumerate(plan.weights))
        return weighted / plan.tokens, plan.tokens
    means = [groups[g][0] / groups[g][1] for g in sorted(groups)]
    return (sum(means) / len(means), plan.tokens) if means else (nan, 0)
