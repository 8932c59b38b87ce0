"""The intruder-detection task format (Shen et al., 2021, §5), shared by training, filtering and evaluation.

Every non-opening sentence of a document is one binary example, "is this sentence an intruder?", paired with
the whole document::

    >>> examples(["A cat sat.", "It purred.", "Stocks fell."])
    [(1, 'It purred.', 'A cat sat. It purred. Stocks fell.'), (2, 'Stocks fell.', 'A cat sat. It purred. Stocks fell.')]

Encoding: the model sees a sentence pair, ``text = sentence`` and ``text_pair = document`` (sentences joined
with one space), with the tokenizer's own special tokens for pairs (XLNet: ``S <sep> D <sep> <cls>``, token
type ids 0/1/2; BERT: ``[CLS] S [SEP] D [SEP]``; RoBERTa: ``<s> S </s></s> D </s>``). Label 1 means
"intruder". :func:`encode` is the only place that turns an example into token ids, so the three uses can
never disagree.

Long documents: when sentence + document exceed ``max_length`` tokens, the document is cut to a window of
tokens that always contains the example's sentence, cutting from the far side first (the side of the sentence
with more tokens loses tokens until both sides are equal), and ``Encoded.truncated`` is set so callers can
count it. A sentence longer than a quarter of the window is itself cut to that length (also ``truncated``).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

SEPARATOR = " "
SENTENCE_SHARE = 4  # the sentence part may use at most 1/SENTENCE_SHARE of the window


def examples(sentences: list[str]) -> list[tuple[int, str, str]]:
    """One ``(position, sentence, document text)`` example per non-opening sentence (position >= 1)."""
    document = SEPARATOR.join(sentences)
    return [(i, sentences[i], document) for i in range(1, len(sentences))]


def labels(sentences: list[str], intruder_index: int) -> list[int]:
    """Labels aligned with :func:`examples`: 1 at ``intruder_index``, else 0 (``-1``: all 0).

    >>> labels(["a", "b", "c"], 2)
    [0, 1]
    """
    return [int(i == intruder_index) for i in range(1, len(sentences))]


def sentence_spans(sentences: list[str]) -> list[tuple[int, int]]:
    """Character ``[start, end)`` of every sentence in the document text of :func:`examples`.

    >>> sentence_spans(["ab", "c"])
    [(0, 2), (3, 4)]
    """
    spans, start = [], 0
    for sentence in sentences:
        spans.append((start, start + len(sentence)))
        start += len(sentence) + len(SEPARATOR)
    return spans


@dataclass(frozen=True)
class Encoded:
    """Model inputs of one example (no padding): ``input_ids``, ``token_type_ids`` and a truncation flag."""

    input_ids: list[int]
    token_type_ids: list[int]
    truncated: bool


def _token_span(offsets: list[tuple[int, int]], start: int, end: int) -> tuple[int, int]:
    """Token indices ``[a, b)`` of the tokens overlapping characters ``[start, end)``."""
    ends = [o[1] for o in offsets]
    a = bisect.bisect_right(ends, start)
    b = a
    while b < len(offsets) and offsets[b][0] < end:
        b += 1
    return a, max(b, a)


def window(n_tokens: int, span: tuple[int, int], budget: int) -> tuple[int, int]:
    """The ``[start, end)`` window of at most ``budget`` tokens that keeps ``span`` and cuts the far side first.

    >>> window(100, (10, 20), 30)   # 10 tokens before, 80 after: the after side is cut
    (0, 30)
    >>> window(100, (80, 90), 30)   # 80 before, 10 after: the before side is cut
    (70, 100)
    >>> window(100, (45, 55), 30)   # balanced: both sides keep 10
    (35, 65)
    """
    if n_tokens <= budget:
        return 0, n_tokens
    a, b = span
    if b - a >= budget:
        return a, a + budget
    rest = budget - (b - a)
    before, after = a, n_tokens - b
    keep_before = min(before, max(rest // 2, rest - after))
    keep_after = min(after, rest - keep_before)
    return a - keep_before, b + keep_after


def encode(tokenizer, sentences: list[str], position: int, max_length: int) -> Encoded:
    """Token ids of the example at ``position`` (>= 1) of a document, at most ``max_length`` tokens.

    ``tokenizer`` is a Hugging Face tokenizer backed by the ``tokenizers`` library (``backend_tokenizer``);
    its post-processor adds the special tokens, so any model family works.
    """
    if not 1 <= position < len(sentences):
        raise ValueError(
            f"position {position} is not a non-opening sentence of a {len(sentences)}-sentence document"
        )
    backend = tokenizer.backend_tokenizer
    if backend.truncation is not None:
        backend.no_truncation()
    if backend.padding is not None:
        backend.no_padding()
    _, sentence, document = examples(sentences)[position - 1]
    start, end = sentence_spans(sentences)[position]
    special = tokenizer.num_special_tokens_to_add(pair=True)
    room = max_length - special
    if room < 2:
        raise ValueError(f"max_length {max_length} leaves no room for a sentence pair")
    first = backend.encode(sentence, add_special_tokens=False)
    second = backend.encode(document, add_special_tokens=False)
    truncated = False
    cap = max(1, room // SENTENCE_SHARE)
    if len(first.ids) > cap:
        first.truncate(cap, direction="right")
        truncated = True
    budget = room - len(first.ids)
    if len(second.ids) > budget:
        span = _token_span(second.offsets, start, end)
        lo, hi = window(len(second.ids), span, budget)
        second.truncate(hi, direction="right")
        second.truncate(hi - lo, direction="left")
        truncated = True
    final = backend.post_process(first, second, add_special_tokens=True)
    return Encoded(list(final.ids), list(final.type_ids), truncated)
