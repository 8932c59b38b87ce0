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

The per-token stopword/punctuation test is cached, so a document costs one regex scan, one list of n-gram
strings and one C-level murmurhash call per n-gram (see ``bench/README_retrieval.md`` for the measured split).
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Iterable
from importlib import resources

import numpy as np
import regex
from sklearn.utils import murmurhash3_32

HASH_SIZE = 2**24
NGRAM = 2
TOKENIZER = "drqa-simple"  # name written to index metadata; the pattern below is DrQA's SimpleTokenizer
TOKEN_PATTERN = r"([\p{L}\p{N}\p{M}]+)|([^\p{Z}\p{C}])"

# One group, same alternatives in the same order: findall returns the matched strings directly.
_TOKEN = regex.compile(
    r"[\p{L}\p{N}\p{M}]+|[^\p{Z}\p{C}]", flags=regex.IGNORECASE | regex.UNICODE | regex.MULTILINE
)
_PUNCT = regex.compile(r"^\p{P}+$")
_CACHE_LIMIT = 2_000_000


def _stopword_bytes() -> bytes:
    return resources.files("retrieval").joinpath("data/drqa_stopwords.txt").read_bytes()


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
    return np.fromiter((murmurhash3_32(g, positive=True) for g in grams), dtype=np.int64) % hash_size


def features(text: str, hash_size: int = HASH_SIZE, n: int = NGRAM) -> np.ndarray:
    """Hashed n-gram ids of ``text``, one per n-gram occurrence (repeats kept)."""
    return hash_ngrams(ngrams(text, n), hash_size)


def feature_counts(text: str, hash_size: int = HASH_SIZE, n: int = NGRAM) -> tuple[np.ndarray, np.ndarray]:
    """Sorted unique feature ids of ``text`` and their counts (both int64; empty for a text with no n-gram).

    Two different n-grams that hash to one id add up, as in DrQA's ``Counter`` of hashes.
    """
    ids, counts = np.unique(features(text, hash_size, n), return_counts=True)
    return ids.astype(np.int64), counts.astype(np.int64)


def document_text(sentences: Iterable[str]) -> str:
    """The text a document is indexed by: its sentences joined with single spaces."""
    return " ".join(sentences)
