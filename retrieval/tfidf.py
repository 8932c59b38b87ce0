"""DrQA's TF-IDF numerics (``scripts/retriever/build_tfidf.py``): document frequencies, idf, the TF-IDF matrix,
and the hashes that identify documents and corpora (see :mod:`retrieval.index` for the formulas).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

import numpy as np
import scipy.sparse as sp
from numba import njit

# --------------------------------------------------------------------------------------------- hashing helpers


def _hash64(*parts: str) -> int:
    digest = hashlib.sha256("\x00".join(parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "little")


def text_key(text: str) -> int:
    """64-bit hash of a document's text; equal texts (exact duplicates) have equal keys."""
    return _hash64(text)


def document_fingerprint(doc_id: str, text: str) -> int:
    """64-bit hash of (id, text); summed over documents (mod 2**64) it fingerprints a corpus in any order."""
    return _hash64(doc_id, text)


def corpus_fingerprint(total: int, count: int) -> str:
    """``"<count>:<sum of document fingerprints mod 2**64, hex>"`` (order-independent, combinable)."""
    return f"{count}:{total % 2**64:016x}"


@njit(cache=True)
def pair_cosines(starts, features, values, rows_a, rows_b):
    """cos(x_a, x_b) of text pairs, each text a sorted run ``features/values[starts[t]:starts[t + 1]]``."""
    out = np.zeros(len(rows_a))
    for i in range(len(rows_a)):
        a0, a1 = starts[rows_a[i]], starts[rows_a[i] + 1]
        b0, b1 = starts[rows_b[i]], starts[rows_b[i] + 1]
        norm_a = 0.0
        for p in range(a0, a1):
            norm_a += values[p] * values[p]
        norm_b = 0.0
        for p in range(b0, b1):
            norm_b += values[p] * values[p]
        if norm_a == 0.0 or norm_b == 0.0:
            continue
        dot = 0.0
        p, q = a0, b0
        while p < a1 and q < b1:
            if features[p] < features[q]:
                p += 1
            elif features[p] > features[q]:
                q += 1
            else:
                dot += values[p] * values[q]
                p += 1
                q += 1
        out[i] = min(dot / np.sqrt(norm_a * norm_b), 1.0)
    return out


# --------------------------------------------------------------------------------------------- document frequency


def merge_document_frequencies(
    parts: Iterable[tuple[np.ndarray, np.ndarray]],
) -> tuple[np.ndarray, np.ndarray]:
    """Sum ``(features, counts)`` pairs into one sorted ``(features, counts)`` pair (int64 arrays).

    >>> merge_document_frequencies([(np.array([3, 5]), np.array([1, 1])), (np.array([5]), np.array([2]))])
    (array([3, 5]), array([1, 3]))
    """
    parts = list(parts)
    if not parts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    features = np.concatenate([np.asarray(f, np.int64) for f, _ in parts])
    counts = np.concatenate([np.asarray(c, np.int64) for _, c in parts])
    unique, inverse = np.unique(features, return_inverse=True)
    return unique, np.bincount(inverse, weights=counts, minlength=len(unique)).astype(np.int64)


def idf_values(df: np.ndarray, num_docs: int) -> np.ndarray:
    """``max(0, log((N - Nt + 0.5) / (Nt + 0.5)))`` for document frequencies ``df`` (float64)."""
    df = np.asarray(df, dtype=np.float64)
    return np.maximum(0.0, np.log((num_docs - df + 0.5) / (df + 0.5)))


def tfidf_matrix(
    rows: Sequence[tuple[np.ndarray, np.ndarray]],
    df_features: np.ndarray,
    df_counts: np.ndarray,
    num_docs: int,
    hash_size: int,
) -> sp.csr_matrix:
    """CSR matrix (len(rows) x hash_size, float32) of ``log1p(count) * idf`` from per-document feature counts.

    Entries whose idf is 0 (features in more than half of the documents) are not stored.
    """
    lengths = np.fromiter((len(f) for f, _ in rows), dtype=np.int64, count=len(rows))
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    if indptr[-1]:
        indices = np.concatenate([np.asarray(f, np.int64) for f, _ in rows])
        counts = np.concatenate([np.asarray(c, np.int64) for _, c in rows])
    else:
        indices, counts = np.zeros(0, np.int64), np.zeros(0, np.int64)
    position = np.searchsorted(df_features, indices)
    if len(indices) and (position.max() >= len(df_features) or (df_features[position] != indices).any()):
        raise ValueError("document features missing from the document-frequency table")
    values = np.log1p(counts) * idf_values(df_counts, num_docs)[position]
    matrix = sp.csr_matrix(
        (values.astype(np.float32), indices.astype(np.int32), indptr), shape=(len(rows), hash_size)
    )
    matrix.eliminate_zeros()
    return matrix
