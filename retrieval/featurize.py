"""DrQA's document featurizer: hashed unigrams and bigrams (Chen et al., 2017, ``drqa/retriever``).

For a text the features are computed exactly as DrQA's ``build_tfidf.py`` does:

1. NFD-normalise the text (``unicodedata.normalize("NFD", text)``);
2. tokens = matches of ``([\\p{L}\\p{N}\\p{M}]+)|([^\\p{Z}\\p{C}])`` (DrQA's ``SimpleTokenizer``), lower-cased;
3. n-grams of order 1 and 2 over consecutive tokens; an n-gram is dropped if ANY of its tokens is all
   punctuation (``^\\p{P}+$``) or a DrQA stopword (``retrieval/data/drqa_stopwords.txt``);
4. feature = ``murmurhash3_32(" ".join(ngram), positive=True) % 2**24`` (scikit-learn's murmurhash).

Example::

    >>> ngrams("The Cat sat.")
    ['cat', 'sat', 'cat sat']
    >>> features("The Cat sat.")  # doctest: +SKIP
    array([ 2467411, 13119950, 16182432])

:func:`ngrams` and :func:`features` spell the method out with strings. The hot path, :func:`feature_counts_batch`
(used by the index and by sentence similarity), computes the same features without building n-gram strings:
a document costs one NFD + regex scan and one dict lookup per token (each distinct token is lower-cased,
filtered and UTF-8 encoded once per process), then a compiled kernel (numba) hashes the n-grams by running
MurmurHash3 (x86, 32-bit, seed 0: what scikit-learn's ``murmurhash3_32`` computes over the UTF-8 string)
over the token bytes joined by spaces, and counts them per document.
"""

from __future__ import annotations

import hashlib
import re
import threading
import unicodedata
from collections.abc import Iterable
from importlib import resources

import numpy as np
import regex
from numba import njit

from incoherent.retrieval.params import HASH_SIZE, NGRAM

TOKENIZER = "drqa-simple"  # name written to index metadata; the pattern below is DrQA's SimpleTokenizer
TOKEN_PATTERN = r"([\p{L}\p{N}\p{M}]+)|([^\p{Z}\p{C}])"

# One group, same alternatives in the same order: findall returns the matched strings directly. DrQA compiles
# it with IGNORECASE | UNICODE | MULTILINE; both alternatives are single character classes that match exactly
# the same code points with or without IGNORECASE (tests check all of Unicode) and there is no ^ or $, so the
# flags change nothing but speed (IGNORECASE makes the scan ~1.7x slower).
_TOKEN = regex.compile(r"[\p{L}\p{N}\p{M}]+|[^\p{Z}\p{C}]")
# The same tokens for ASCII text (NFD changes no ASCII character): letters and digits are the only ASCII
# \p{L}\p{N}\p{M}, space the only \p{Z}, and 0-31 and 127 the \p{C}. ``re`` scans ~1.6x faster than ``regex``.
_ASCII_TOKEN = re.compile(r"[A-Za-z0-9]+|[^\x00-\x20\x7f]")
_PUNCT = regex.compile(r"^\p{P}+$")
_CACHE_LIMIT = 2_000_000
_TOKEN_LIMIT = 4_000_000


def _stopword_bytes() -> bytes:
    return resources.files("incoherent.retrieval").joinpath("data/drqa_stopwords.txt").read_bytes()


def load_stopwords() -> frozenset[str]:
    """DrQA's stopword list (``drqa/retriever/utils.py``), one word a line."""
    return frozenset(line for line in _stopword_bytes().decode("utf-8").split("\n") if line)


STOPWORDS = load_stopwords()
STOPWORDS_SHA256 = hashlib.sha256(_stopword_bytes()).hexdigest()

_is_dropped: dict[str, bool] = {}


def drop_token(token: str) -> bool:
    """DrQA's ``filter_word``: True for an all-punctuation token or a stopword.

    >>> drop_token("the"), drop_token("--"), drop_token("cat")
    (True, True, False)
    """
    cached = _is_dropped.get(token)
    if cached is None:
        text = unicodedata.normalize("NFD", token)
        cached = _PUNCT.match(text) is not None or text.lower() in STOPWORDS
        if len(_is_dropped) >= _CACHE_LIMIT:
            _is_dropped.clear()
        _is_dropped[token] = cached
    return cached


def tokenize(text: str) -> list[str]:
    """Lower-cased DrQA tokens of the NFD-normalised text: ``tokenize("Don't!") == ["don", "'", "t", "!"]``."""
    return [t.lower() for t in _TOKEN.findall(unicodedata.normalize("NFD", text))]


def ngrams(text: str, n: int = NGRAM) -> list[str]:
    """Surviving n-grams of order 1..n of ``text``, unigrams first (the order is irrelevant to the counts)."""
    words = tokenize(text)
    keep = [not drop_token(w) for w in words]
    grams = [w for w, k in zip(words, keep, strict=True) if k]
    if n >= 2:
        grams += [
            f"{a} {b}" for a, b, ka, kb in zip(words, words[1:], keep, keep[1:], strict=False) if ka and kb
        ]
    for order in range(3, n + 1):
        for start in range(len(words) - order + 1):
            if all(keep[start : start + order]):
                grams.append(" ".join(words[start : start + order]))
    return grams


def hash_ngrams(grams: Iterable[str], hash_size: int = HASH_SIZE) -> np.ndarray:
    """``murmurhash3_32(gram, positive=True) % hash_size`` for every n-gram, as an int64 array."""
    from sklearn.utils import murmurhash3_32  # sklearn's import costs ~2 s; only this reference path needs it

    return np.fromiter((murmurhash3_32(g, positive=True) for g in grams), dtype=np.int64) % hash_size


def features(text: str, hash_size: int = HASH_SIZE, n: int = NGRAM) -> np.ndarray:
    """Hashed n-gram ids of ``text``, one per n-gram occurrence (repeats kept)."""
    return hash_ngrams(ngrams(text, n), hash_size)


def feature_counts(text: str, hash_size: int = HASH_SIZE, n: int = NGRAM) -> tuple[np.ndarray, np.ndarray]:
    """Sorted unique feature ids of ``text`` and their counts (both int64; empty for a text with no n-gram).

    Two different n-grams that hash to one id add up, as in DrQA's ``Counter`` of hashes.
    """
    _, ids, counts = feature_counts_batch([text], hash_size, n)
    return ids, counts


class _Tokens:
    """Every distinct raw token seen by this process: its id, whether DrQA keeps it, its lower-cased UTF-8.

    Arrays grow by doubling, so adding tokens between calls is cheap; past ``_TOKEN_LIMIT`` distinct tokens the
    table starts afresh (ids only have to be stable within one :func:`feature_counts_batch` call).
    """

    def __init__(self):
        self.ids: dict[str, int] = {}
        self._keep = np.zeros(1024, np.uint8)
        self._utf8 = np.zeros(8192, np.uint8)
        self._starts = np.zeros(1025, np.int64)

    def add(self, token: str) -> int:
        token_id = len(self.ids)
        lowered = token.lower()
        data = np.frombuffer(lowered.encode("utf-8"), np.uint8)
        start = self._starts[token_id]
        if token_id + 1 >= len(self._keep):
            self._keep = np.resize(self._keep, 2 * len(self._keep))
            self._starts = np.resize(self._starts, 2 * len(self._starts))
        while start + len(data) > len(self._utf8):
            self._utf8 = np.resize(self._utf8, 2 * len(self._utf8))
        self._keep[token_id] = 0 if drop_token(lowered) else 1
        self._utf8[start : start + len(data)] = data
        self._starts[token_id + 1] = start + len(data)
        self.ids[token] = token_id
        return token_id

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(keep uint8[T], utf8 uint8[...], starts int64[T + 1])``: views, valid until the next :meth:`add`."""
        size = len(self.ids)
        return self._keep[:size], self._utf8[: self._starts[size]], self._starts[: size + 1]

    def encode(self, text: str) -> list[int]:
        if text.isascii():
            tokens = _ASCII_TOKEN.findall(text)
        else:
            tokens = _TOKEN.findall(unicodedata.normalize("NFD", text))
        ids = list(map(self.ids.get, tokens))
        if None in ids:
            ids = [self.ids[t] if t in self.ids else self.add(t) for t in tokens]
        return ids

    def reset_if_full(self) -> None:
        if len(self.ids) > _TOKEN_LIMIT:
            self.__init__()


_tokens = _Tokens()
_TOKENS_LOCK = threading.Lock()


def feature_counts_batch(
    texts: Iterable[str], hash_size: int = HASH_SIZE, n: int = NGRAM
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`feature_counts` of many texts at once: ``(lengths, features, counts)``, int64 arrays.

    Text i owns ``lengths[i]`` consecutive entries of ``features``/``counts`` (sorted unique features).
    """
    with _TOKENS_LOCK:  # one token table per process, shared by Beam's worker threads
        _tokens.reset_if_full()
        encoded: list[int] = []
        ends = [0]
        for text in texts:
            encoded += _tokens.encode(text)
            ends.append(len(encoded))
        keep, utf8, starts = _tokens.arrays()
        return _count_ngrams(
            np.array(encoded, np.int64), np.array(ends, np.int64), keep, utf8, starts, n, hash_size
        )


@njit(cache=True)
def _murmurhash3_32(buf, length):
    """MurmurHash3 x86 32-bit, seed 0, of ``buf[:length]`` (uint8), as an unsigned value."""
    mask = np.uint64(0xFFFFFFFF)
    c1, c2 = np.uint64(0xCC9E2D51), np.uint64(0x1B873593)
    h = np.uint64(0)
    blocks = length // 4
    for i in range(blocks):
        j = 4 * i
        k = (
            np.uint64(buf[j])
            | (np.uint64(buf[j + 1]) << np.uint64(8))
            | (np.uint64(buf[j + 2]) << np.uint64(16))
            | (np.uint64(buf[j + 3]) << np.uint64(24))
        )
        k = (k * c1) & mask
        k = ((k << np.uint64(15)) | (k >> np.uint64(17))) & mask
        k = (k * c2) & mask
        h ^= k
        h = ((h << np.uint64(13)) | (h >> np.uint64(19))) & mask
        h = (h * np.uint64(5) + np.uint64(0xE6546B64)) & mask
    tail = length & 3
    if tail:
        j = 4 * blocks
        k = np.uint64(0)
        if tail == 3:
            k ^= np.uint64(buf[j + 2]) << np.uint64(16)
        if tail >= 2:
            k ^= np.uint64(buf[j + 1]) << np.uint64(8)
        k ^= np.uint64(buf[j])
        k = (k * c1) & mask
        k = ((k << np.uint64(15)) | (k >> np.uint64(17))) & mask
        k = (k * c2) & mask
        h ^= k
    h ^= np.uint64(length)
    h ^= h >> np.uint64(16)
    h = (h * np.uint64(0x85EBCA6B)) & mask
    h ^= h >> np.uint64(13)
    h = (h * np.uint64(0xC2B2AE35)) & mask
    h ^= h >> np.uint64(16)
    return h


@njit(cache=True)
def _count_ngrams(tokens, ends, keep, utf8, starts, n, hash_size):
    """Per document (``tokens[ends[i]:ends[i + 1]]``): hash every kept n-gram of order 1..n, count them."""
    num_docs = len(ends) - 1
    lengths = np.zeros(num_docs, np.int64)
    features = np.empty(n * len(tokens), np.int64)
    counts = np.empty(n * len(tokens), np.int64)
    scratch = np.empty(64, np.uint8)
    hashes = np.empty(n * max(1, np.max(np.diff(ends)) if num_docs else 1), np.int64)
    out = 0
    for doc in range(num_docs):
        first, last = ends[doc], ends[doc + 1]
        m = 0
        for order in range(1, n + 1):
            for s in range(first, last - order + 1):
                size = order - 1
                ok = True
                for t in range(s, s + order):
                    if keep[tokens[t]] == 0:
                        ok = False
                        break
                    size += starts[tokens[t] + 1] - starts[tokens[t]]
                if not ok:
                    continue
                if size > len(scratch):
                    scratch = np.empty(2 * size, np.uint8)
                pos = 0
                for t in range(s, s + order):
                    if t > s:
                        scratch[pos] = 32  # the space of " ".join(ngram)
                        pos += 1
                    for b in range(starts[tokens[t]], starts[tokens[t] + 1]):
                        scratch[pos] = utf8[b]
                        pos += 1
                hashes[m] = np.int64(_murmurhash3_32(scratch, size) % np.uint64(hash_size))
                m += 1
        if m:
            ordered = np.sort(hashes[:m])
            features[out] = ordered[0]
            counts[out] = 1
            unique = 1
            for i in range(1, m):
                if ordered[i] == ordered[i - 1]:
                    counts[out + unique - 1] += 1
                else:
                    features[out + unique] = ordered[i]
                    counts[out + unique] = 1
                    unique += 1
            lengths[doc] = unique
            out += unique
    return lengths, features[:out].copy(), counts[:out].copy()


def document_text(sentences: Iterable[str]) -> str:
    """The text a document is indexed by: its sentences joined with single spaces."""
    return " ".join(sentences)
