"""Text to score and the windows over it: joining a document's sentences, and the strided windows of a text
longer than the model's positions (exact and Laban et al.'s released code), see :mod:`filters.lm`.
"""

from __future__ import annotations

from collections.abc import Sequence

JOINS = {"space": " ", "newline": "\n"}


def join_sentences(sentences: Sequence[str], join: str = "space") -> str:
    """The text a model reads: ``join_sentences(["A b.", "C."]) == "A b. C."`` (``newline``: ``"A b.\\nC."``)."""
    return JOINS[join].join(sentences)


# --------------------------------------------------------------------------------------------- windows


def causal_windows(length: int, window: int, stride: int) -> list[tuple[int, int, int]]:
    """``(begin, end, first)`` windows over ``length`` tokens: positions ``first..end-1`` are predicted from
    ``begin..position-1``; every position ``1..length-1`` is scored exactly once.

    >>> causal_windows(10, 4, 2)
    [(0, 4, 1), (2, 6, 4), (4, 8, 6), (6, 10, 8)]
    >>> causal_windows(3, 4, 2)
    [(0, 3, 1)]
    """
    if length < 2:
        return []
    end = min(window, length)
    out = [(0, end, 1)]
    while end < length:
        new_end = min(end + stride, length)
        out.append((max(0, new_end - window), new_end, end))
        end = new_end
    return out


def masked_windows(length: int, window: int, stride: int) -> list[tuple[int, int, int, int]]:
    """``(begin, end, lo, hi)`` windows over ``length`` tokens: tokens ``lo..hi-1`` are scored with context
    ``begin..end-1``; every token is scored exactly once, in the window where it is most central (the
    overlap of two windows is split at its middle).

    >>> masked_windows(10, 6, 2)
    [(0, 6, 0, 4), (2, 8, 4, 6), (4, 10, 6, 10)]
    >>> masked_windows(3, 6, 2)
    [(0, 3, 0, 3)]
    """
    if length <= window:
        return [(0, length, 0, length)] if length else []
    begins = list(range(0, length - window, stride)) + [length - window]
    cuts = [0] + [(begins[j + 1] + begins[j] + window) // 2 for j in range(len(begins) - 1)] + [length]
    return [(b, b + window, cuts[j], cuts[j + 1]) for j, b in enumerate(begins)]


def laban_causal_windows(length: int, max_length: int) -> list[tuple[int, int, int]]:
    """``(begin, end, weight)`` of ``run_gpt2_zeroshot.py``: ``stride = max_length // 2``, for ``i = 0, stride,
    ...``: ``begin = max(i + stride - max_length, 0)``, ``end = min(i + stride, length)``, ``weight = end - i``.

    >>> laban_causal_windows(5, 4)
    [(0, 2, 2), (0, 4, 2), (2, 5, 1)]
    """
    stride = max_length // 2
    return [
        (max(i + stride - max_length, 0), min(i + stride, length), min(i + stride, length) - i)
        for i in range(0, length, stride)
    ]


def laban_masked_windows(length: int, max_length: int) -> list[tuple[int, int]]:
    """``(begin, end)`` of ``run_bidir_zeroshot.py``'s ``compute_pseudologprob`` (same loop as the causal one).

    >>> laban_masked_windows(5, 4)
    [(0, 2), (0, 4), (2, 5)]
    """
    return [(b, e) for b, e, _ in laban_causal_windows(length, max_length)]
