"""DrQA's TF-IDF document index (``scripts/retriever/build_tfidf.py``), saved as ``.npz`` + JSON, no pickle.

For N documents, a feature t (hashed n-gram, see :mod:`retrieval.featurize`) with count c in document d and
document frequency Nt::

    tf(t, d) = log1p(c)
    idf(t)   = max(0, log((N - Nt + 0.5) / (Nt + 0.5)))
    x[d, t]  = tf(t, d) * idf(t)

A query or a sentence is vectorised the same way with the index's N and Nt (an n-gram absent from the
corpus has Nt = 0). DrQA ranks documents by the dot product ``x_query . x_doc``; sentence similarity is the
cosine of two such vectors.

An index directory holds::

    index.json   parameters (n-gram order, hash size, tokenizer, sha256 of the stopword list), N, the corpus
                 fingerprint and the names of the files below
    tfidf.npz    scipy.sparse CSR matrix, documents x hash_size, float32 TF-IDF, rows in id order
    idf.npz      features (int64, sorted) and their document frequencies df (int64): all that sentence
                 similarity needs, a few MB, loaded without the matrix
    ids.json     document ids, row order of tfidf.npz
    docs.npz     text_key (uint64): a hash of each document's text, to exclude exact duplicates
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import BinaryIO

import numpy as np
import scipy.sparse as sp
from numba import njit

from retrieval.featurize import (
    HASH_SIZE,
    NGRAM,
    STOPWORDS_SHA256,
    TOKEN_PATTERN,
    TOKENIZER,
    feature_counts_batch,
)
from schemas.records import InputError
from sources.paths import is_remote

LOG = logging.getLogger(__name__)

FORMAT = "incoherent-drqa-tfidf"
FORMAT_VERSION = 1
META_FILE = "index.json"
MATRIX_FILE = "tfidf.npz"
IDF_FILE = "idf.npz"
IDS_FILE = "ids.json"
DOCS_FILE = "docs.npz"

# ``opener(path, "rb" | "wb")`` -> a binary file; raises FileNotFoundError for a missing file. The default
# is the local disk; the pipelines pass one that goes through Beam's filesystems (gs://, s3://).
Opener = Callable[[str, str], BinaryIO]


def local_open(path: str, mode: str = "rb") -> BinaryIO:
    """The default :data:`Opener`: the local disk (parent folders created for writing)."""
    if "w" in mode:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    return open(path, mode)  # noqa: SIM115 - the caller closes it


def _join(path: str, name: str) -> str:
    return f"{path.rstrip('/')}/{name}" if is_remote(path) else os.path.join(path, name)


@dataclass(frozen=True)
class IndexParams:
    """What decides the features of a text; an index is only usable with the parameters it was built with."""

    ngram: int = NGRAM
    hash_size: int = HASH_SIZE
    tokenizer: str = TOKENIZER
    stopwords_sha256: str = STOPWORDS_SHA256

    def mismatches(self, other: IndexParams) -> list[str]:
        """``["hash_size: index has 1024, requested 16777216", ...]``; empty when they agree."""
        mine, theirs = asdict(self), asdict(other)
        return [f"{k}: index has {mine[k]!r}, requested {theirs[k]!r}" for k in mine if mine[k] != theirs[k]]


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
def _pair_cosines(starts, features, values, rows_a, rows_b):
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


# --------------------------------------------------------------------------------------------- the index


class TfidfIndex:
    """A DrQA TF-IDF index: documents (rows, sorted by id) x hashed n-gram features.

    ``TfidfIndex.load(path)`` reads the metadata, ids and idf; the document matrix is read on first use
    (``closest``, ``matrix``), so sentence similarity on a worker never loads it.

    >>> docs = [("a", "The cat sat on the mat."), ("b", "Dogs bark."), ("c", "A cat."), ("d", "Fish swim."), ("e", "")]
    >>> index = TfidfIndex.build(docs)
    >>> [doc for doc, _ in index.closest("cat on a mat", k=2)]
    ['a', 'c']
    """

    def __init__(
        self,
        *,
        params: IndexParams,
        ids: list[str],
        df_features: np.ndarray,
        df_counts: np.ndarray,
        num_docs: int,
        matrix: sp.csr_matrix | None = None,
        text_keys: np.ndarray | None = None,
        meta: dict | None = None,
        path: str | None = None,
    ):
        self.params = params
        self.ids = ids
        self.df_features = np.asarray(df_features, np.int64)
        self.df_counts = np.asarray(df_counts, np.int64)
        self.num_docs = int(num_docs)
        self._matrix = matrix
        self._compact: tuple[np.ndarray, sp.csr_matrix] | None = None
        self._text_keys = text_keys
        self.meta = meta or {}
        self.path = path
        self._opener: Opener = local_open
        self._unseen_idf = float(idf_values(np.zeros(1), self.num_docs)[0])
        self._idf = idf_values(self.df_counts, self.num_docs)

    # ----------------------------------------------------------------------------------------- building

    @classmethod
    def build(cls, docs: Iterable[tuple[str, str]], params: IndexParams | None = None) -> TfidfIndex:
        """In-memory index of ``(id, text)`` pairs (for tests and small corpora; the Beam stage scales out)."""
        params = params or IndexParams()
        by_id: dict[str, str] = {}
        for doc_id, text in docs:
            if doc_id in by_id:
                raise InputError(f"{doc_id}: duplicate document id")
            by_id[doc_id] = text
        ids = sorted(by_id)
        lengths, features, counts = feature_counts_batch(
            [by_id[i] for i in ids], params.hash_size, params.ngram
        )
        ends = np.cumsum(lengths)
        rows = [(features[e - n : e], counts[e - n : e]) for e, n in zip(ends, lengths, strict=True)]
        df_features, df_counts = merge_document_frequencies((f, np.ones(len(f), np.int64)) for f, _ in rows)
        total = sum(document_fingerprint(i, by_id[i]) for i in ids)
        return cls.from_rows(
            params=params,
            ids=ids,
            rows=rows,
            text_keys=np.array([text_key(by_id[i]) for i in ids], dtype=np.uint64),
            df_features=df_features,
            df_counts=df_counts,
            fingerprint=corpus_fingerprint(total, len(ids)),
        )

    @classmethod
    def from_rows(
        cls,
        *,
        params: IndexParams,
        ids: list[str],
        rows: Sequence[tuple[np.ndarray, np.ndarray]],
        text_keys: np.ndarray,
        df_features: np.ndarray,
        df_counts: np.ndarray,
        fingerprint: str,
    ) -> TfidfIndex:
        """Index from per-document ``(features, counts)`` in ``ids`` order and corpus document frequencies."""
        matrix = tfidf_matrix(rows, df_features, df_counts, len(ids), params.hash_size)
        return cls.with_matrix(
            params=params,
            ids=ids,
            matrix=matrix,
            text_keys=text_keys,
            df_features=df_features,
            df_counts=df_counts,
            fingerprint=fingerprint,
        )

    @classmethod
    def with_matrix(
        cls,
        *,
        params: IndexParams,
        ids: list[str],
        matrix: sp.csr_matrix,
        text_keys: np.ndarray,
        df_features: np.ndarray,
        df_counts: np.ndarray,
        fingerprint: str,
    ) -> TfidfIndex:
        """Index of a finished TF-IDF ``matrix`` (rows in ``ids`` order, no explicit zeros) and its metadata."""
        num_docs = len(ids)
        zero = int((np.diff(matrix.indptr) == 0).sum())
        meta = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            **asdict(params),
            "token_pattern": TOKEN_PATTERN,
            "normalization": "NFD",
            "tf": "log1p(count)",
            "idf": "max(0, log((N - Nt + 0.5) / (Nt + 0.5)))",
            "hash": "sklearn murmurhash3_32(' '.join(ngram), positive=True) % hash_size",
            "num_docs": num_docs,
            "num_zero_vector_docs": zero,
            "num_features": len(df_features),
            "nnz": int(matrix.nnz),
            "corpus_fingerprint": fingerprint,
            "files": {"matrix": MATRIX_FILE, "idf": IDF_FILE, "ids": IDS_FILE, "docs": DOCS_FILE},
        }
        return cls(
            params=params,
            ids=list(ids),
            df_features=df_features,
            df_counts=df_counts,
            num_docs=num_docs,
            matrix=matrix,
            text_keys=np.asarray(text_keys, np.uint64),
            meta=meta,
        )

    def save(self, path: str, opener: Opener | None = None) -> None:
        """Write the index files into directory ``path`` (created if needed) through ``opener``.

        ``index.json`` is written last, so a directory with it holds a complete index.
        """
        opener = opener or local_open

        def write(name: str, fill: Callable[[BinaryIO], None]) -> None:
            with opener(_join(path, name), "wb") as f:
                _write_seekable(f, fill)

        write(MATRIX_FILE, lambda f: sp.save_npz(f, self.matrix.tocsr(), compressed=False))
        write(
            IDF_FILE,
            lambda f: np.savez(
                f, features=self.df_features, df=self.df_counts, num_docs=np.int64(self.num_docs)
            ),
        )
        write(DOCS_FILE, lambda f: np.savez(f, text_key=self.text_keys))
        write(IDS_FILE, lambda f: f.write(json.dumps(self.ids, ensure_ascii=False).encode("utf-8")))
        write(META_FILE, lambda f: f.write((json.dumps(self.meta, indent=2) + "\n").encode("utf-8")))
        self.path = path
        self._opener = opener

    # ----------------------------------------------------------------------------------------- loading

    @classmethod
    def load(cls, path: str, expect: IndexParams | None = None, opener: Opener | None = None) -> TfidfIndex:
        """Open the index in directory ``path``; ``expect`` (default: this code's parameters) must match.

        Files are read through ``opener`` (default: the local disk). Raises :class:`InputError` naming the
        file for a missing directory, corrupt files or mismatched parameters.
        """
        expect = expect or IndexParams()
        opener = opener or local_open
        meta_path = _join(path, META_FILE)
        if not is_remote(path) and not os.path.isdir(path):
            raise InputError(f"{path}: no such index directory (build it with `incoherent index`)")
        try:
            with opener(meta_path, "rb") as f:
                meta = json.loads(f.read().decode("utf-8"))
        except FileNotFoundError:
            raise InputError(
                f"{meta_path}: missing, not an index directory (build it with `incoherent index`)"
            ) from None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise InputError(f"{meta_path}: not valid JSON ({exc})") from None
        if meta.get("format") != FORMAT or meta.get("format_version") != FORMAT_VERSION:
            raise InputError(
                f"{meta_path}: not an {FORMAT} v{FORMAT_VERSION} index "
                f"(format={meta.get('format')!r}, version={meta.get('format_version')!r})"
            )
        try:
            params = IndexParams(**{k: meta[k] for k in asdict(expect)})
        except KeyError as exc:
            raise InputError(f"{meta_path}: missing field {exc}") from None
        mismatches = params.mismatches(expect)
        if mismatches:
            raise InputError(f"{path}: index built with other parameters ({'; '.join(mismatches)})")
        idf_path = _join(path, IDF_FILE)
        arrays = _load_arrays(idf_path, ("features", "df", "num_docs"), opener)
        num_docs = int(arrays["num_docs"])
        if num_docs != meta.get("num_docs") or len(arrays["features"]) != len(arrays["df"]):
            raise InputError(
                f"{idf_path}: inconsistent with {META_FILE} (num_docs {num_docs} vs {meta.get('num_docs')})"
            )
        ids_path = _join(path, IDS_FILE)
        try:
            with opener(ids_path, "rb") as f:
                ids = json.loads(f.read().decode("utf-8"))
        except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise InputError(f"{ids_path}: unreadable ({exc})") from None
        if len(ids) != num_docs:
            raise InputError(f"{ids_path}: {len(ids)} ids for {num_docs} documents")
        index = cls(
            params=params,
            ids=ids,
            df_features=arrays["features"],
            df_counts=arrays["df"],
            num_docs=num_docs,
            meta=meta,
            path=path,
        )
        index._opener = opener
        return index

    @property
    def matrix(self) -> sp.csr_matrix:
        """Documents x hash_size TF-IDF matrix (float32 CSR), read from ``tfidf.npz`` on first use."""
        if self._matrix is None:
            self._matrix = _load_matrix(
                _join(self.path, MATRIX_FILE), (self.num_docs, self.params.hash_size), self._opener
            )
        return self._matrix

    @property
    def text_keys(self) -> np.ndarray:
        """uint64 hash of each document's text (row order), read from ``docs.npz`` on first use."""
        if self._text_keys is None:
            path = _join(self.path, DOCS_FILE)
            keys = _load_arrays(path, ("text_key",), self._opener)["text_key"]
            if len(keys) != self.num_docs:
                raise InputError(f"{path}: {len(keys)} text keys for {self.num_docs} documents")
            self._text_keys = keys.astype(np.uint64)
        return self._text_keys

    # ----------------------------------------------------------------------------------------- queries

    def idf(self, features: np.ndarray) -> np.ndarray:
        """idf of hashed feature ids (a feature absent from the corpus has Nt = 0)."""
        features = np.asarray(features, np.int64)
        position = np.searchsorted(self.df_features, features)
        position = np.minimum(position, max(len(self.df_features) - 1, 0))
        out = np.full(len(features), self._unseen_idf)
        if len(self.df_features):
            found = self.df_features[position] == features
            out[found] = self._idf[position[found]]
        return out

    def vectorize(self, texts: Sequence[str]) -> sp.csr_matrix:
        """TF-IDF rows (len(texts) x hash_size, float64 CSR) of texts, as DrQA's ``text2spvec``."""
        lengths, features, counts = feature_counts_batch(texts, self.params.hash_size, self.params.ngram)
        indptr = np.zeros(len(lengths) + 1, np.int64)
        np.cumsum(lengths, out=indptr[1:])
        values = np.log1p(counts) * self.idf(features)
        matrix = sp.csr_matrix((values, features, indptr), shape=(len(lengths), self.params.hash_size))
        matrix.eliminate_zeros()
        return matrix

    def similarities(self, texts_a: Sequence[str], texts_b: Sequence[str]) -> np.ndarray:
        """TF-IDF-weighted cosine of ``texts_a[i]`` and ``texts_b[i]`` for every i (float64; 0 for an empty vector).

        cos(a, b) = (x_a . x_b) / (|x_a| |x_b|), x as in :meth:`vectorize`. Each distinct text is featurised
        once (callers often compare many candidates with the same sentence).
        """
        if len(texts_a) != len(texts_b):
            raise ValueError(f"similarities: {len(texts_a)} texts against {len(texts_b)}")
        if not len(texts_a):
            return np.zeros(0)
        position: dict[str, int] = {}
        for text in (*texts_a, *texts_b):
            position.setdefault(text, len(position))
        lengths, features, counts = feature_counts_batch(
            list(position), self.params.hash_size, self.params.ngram
        )
        values = np.log1p(counts) * self.idf(features)
        starts = np.zeros(len(lengths) + 1, np.int64)
        np.cumsum(lengths, out=starts[1:])
        rows_a = np.fromiter((position[t] for t in texts_a), np.int64, len(texts_a))
        rows_b = np.fromiter((position[t] for t in texts_b), np.int64, len(texts_b))
        return _pair_cosines(starts, features, values, rows_a, rows_b)

    def similarity(self, a: str, b: str) -> float:
        """TF-IDF-weighted cosine of two texts: ``similarity("the cat sat", "a cat sat") == 1.0``."""
        return float(self.similarities([a], [b])[0])

    def closest(self, text: str, k: int = 10) -> list[tuple[str, float]]:
        """DrQA's ``closest_docs``: the k documents with the highest ``x_query . x_doc`` (> 0), ties by id."""
        if self._compact is None:  # documents x used features, so a query is a small dense vector
            used = np.unique(self.matrix.indices)
            compact = sp.csr_matrix(
                (self.matrix.data, np.searchsorted(used, self.matrix.indices), self.matrix.indptr),
                shape=(self.num_docs, max(len(used), 1)),
            )
            self._compact = (used, compact)
        used, compact = self._compact
        query = self.vectorize([text])
        position = np.searchsorted(used, query.indices)
        found = (
            (position < len(used)) & (used[np.minimum(position, len(used) - 1)] == query.indices)
            if len(used)
            else []
        )
        dense = np.zeros(compact.shape[1])
        dense[position[found]] = query.data[found]
        scores = compact @ dense
        candidates = np.flatnonzero(scores > 0)
        if len(candidates) > k:
            kth = np.partition(scores[candidates], len(candidates) - k)[len(candidates) - k]
            candidates = candidates[scores[candidates] >= kth]
        order = np.lexsort((candidates, -scores[candidates]))[:k]
        return [(self.ids[candidates[i]], float(scores[candidates[i]])) for i in order]


# --------------------------------------------------------------------------------------------- streamed assembly

# ``read_part(path, names)`` -> the named arrays of one featurized part (``ids``, ``lengths``, ``features``,
# ``counts``, ``text_keys``, ``fingerprint``; see ``pipelines/index.py``).
PartReader = Callable[[str, Sequence[str]], dict[str, np.ndarray]]


def tfidf_from_parts(
    *,
    params: IndexParams,
    part_paths: Sequence[str],
    read_part: PartReader,
    df_features: np.ndarray,
    df_counts: np.ndarray,
    source: str,
) -> TfidfIndex:
    """The index of featurized parts in any order, streamed: equal to :meth:`TfidfIndex.from_rows` of their rows.

    Two passes over the parts, one part in memory at a time (three when some feature has idf 0: its
    features are read once more to count what each row keeps). The first reads the small per-document arrays
    (ids, lengths, text keys, fingerprints), sorts the ids and computes the final ``indptr`` (a row keeps its
    features of idf > 0); the last computes each part's ``log1p(count) * idf`` and scatters it into the
    preallocated ``data``/``indices`` arrays at its rows' sorted positions. Beyond the matrix (8 bytes per
    non-zero) memory holds the ids and a few integers per document, never an object per row.
    ``source`` names the documents in errors (no documents, a duplicate id).
    """
    df_features = np.asarray(df_features, np.int64)
    df_counts = np.asarray(df_counts, np.int64)
    ids: list[str] = []
    kept_parts: list[np.ndarray] = []
    keys_parts: list[np.ndarray] = []
    total = 0
    for path in part_paths:
        part = read_part(path, ("ids", "lengths", "text_keys", "fingerprint"))
        ids.extend(part["ids"].tolist())
        keys_parts.append(np.asarray(part["text_keys"], np.uint64))
        kept_parts.append(np.asarray(part["lengths"], np.int64))
        total += int(part["fingerprint"])
    num_docs = len(ids)
    if not num_docs:
        raise InputError(f"{source}: no documents to index")
    idf = idf_values(df_counts, num_docs)
    dropped = df_features[idf == 0]  # entries whose value is 0: not stored (as eliminate_zeros)
    if len(dropped):  # rarely any: features in more than half of the documents
        for i, path in enumerate(part_paths):
            part = read_part(path, ("lengths", "features"))
            gone = np.isin(np.asarray(part["features"], np.int64), dropped).astype(np.int64)
            kept_parts[i] = kept_parts[i] - _row_sums(gone, part["lengths"])
    order = np.array(sorted(range(num_docs), key=ids.__getitem__), dtype=np.int64)
    ids = [ids[i] for i in order]
    for a, b in zip(ids, ids[1:], strict=False):
        if a == b:
            raise InputError(f"{source}: duplicate document id {a!r}")
    row_of = np.empty(num_docs, np.int64)  # final row of the i-th document in part order
    row_of[order] = np.arange(num_docs)
    kept = np.concatenate(kept_parts)
    del kept_parts
    indptr = np.zeros(num_docs + 1, np.int64)
    np.cumsum(kept[order], out=indptr[1:])
    text_keys = np.concatenate(keys_parts)[order]
    del keys_parts, kept, order
    nnz = int(indptr[-1])
    data = np.empty(nnz, np.float32)
    indices = np.empty(nnz, np.int32)
    first = 0
    filled = 0
    for path in part_paths:
        part = read_part(path, ("lengths", "features", "counts"))
        lengths = np.asarray(part["lengths"], np.int64)
        features = np.asarray(part["features"], np.int64)
        position = np.searchsorted(df_features, features)
        if len(features) and (
            position.max() >= len(df_features) or (df_features[position] != features).any()
        ):
            raise ValueError("document features missing from the document-frequency table")
        values = (np.log1p(np.asarray(part["counts"], np.int64)) * idf[position]).astype(np.float32)
        keep = values != 0
        rows = row_of[first : first + len(lengths)]
        kept_lengths = _row_sums(keep.astype(np.int64), lengths)
        if (kept_lengths != np.diff(indptr)[rows]).any():
            raise ValueError(f"{path}: part changed between the two passes")
        # destination of the j-th kept entry of a row: indptr[row] + j
        row_starts = np.repeat(indptr[rows], kept_lengths)
        rank = np.arange(len(row_starts)) - np.repeat(np.cumsum(kept_lengths) - kept_lengths, kept_lengths)
        target = row_starts + rank
        data[target] = values[keep]
        indices[target] = features[keep]
        first += len(lengths)
        filled += len(target)
    if first != num_docs or filled != nnz:
        raise ValueError("parts changed between the two passes")
    matrix = sp.csr_matrix((data, indices, indptr), shape=(num_docs, params.hash_size))
    return TfidfIndex.with_matrix(
        params=params,
        ids=ids,
        matrix=matrix,
        text_keys=text_keys,
        df_features=df_features,
        df_counts=df_counts,
        fingerprint=corpus_fingerprint(total, num_docs),
    )


def _row_sums(values: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Sums of consecutive runs of ``values`` of the given ``lengths`` (0 for an empty run)."""
    lengths = np.asarray(lengths, np.int64)
    ends = np.cumsum(lengths)
    cumulative = np.zeros(len(values) + 1, np.int64)
    np.cumsum(values, out=cumulative[1:])
    return cumulative[ends] - cumulative[ends - lengths]


def _write_seekable(f: BinaryIO, fill: Callable[[BinaryIO], None]) -> None:
    """``fill(f)``, through a local temporary file when ``f`` cannot seek (a remote upload stream).

    ``.npz`` files are zip archives, whose bytes differ when written to an unseekable stream; through a
    seekable file they are the same everywhere, and no copy of a large matrix is held in memory.
    """
    seekable = getattr(f, "seekable", None)
    if seekable is not None and seekable():
        fill(f)
        return
    with tempfile.TemporaryFile() as tmp:
        fill(tmp)
        tmp.seek(0)
        shutil.copyfileobj(tmp, f, 16 * 2**20)


# --------------------------------------------------------------------------------------------- safe .npz reading


_NPZ_ERRORS = (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zipfile.LargeZipFile)


def _load_arrays(path: str, names: Sequence[str], opener: Opener = local_open) -> dict[str, np.ndarray]:
    """Arrays ``names`` of an ``.npz`` file, never unpickling; InputError for a missing or corrupt file."""
    try:
        with opener(path, "rb") as f, np.load(f, allow_pickle=False) as npz:
            return {name: npz[name] for name in names}
    except FileNotFoundError:
        raise InputError(f"{path}: missing index file (rebuild the index with `incoherent index`)") from None
    except _NPZ_ERRORS as exc:
        raise InputError(f"{path}: corrupt or truncated .npz ({type(exc).__name__}: {exc})") from None


def _load_matrix(path: str, shape: tuple[int, int], opener: Opener = local_open) -> sp.csr_matrix:
    arrays = _load_arrays(path, ("format", "shape", "data", "indices", "indptr"), opener)
    if arrays["format"].item() not in ("csr", b"csr") or tuple(arrays["shape"]) != shape:
        raise InputError(
            f"{path}: expected a csr matrix of shape {shape}, found {arrays['format']} {tuple(arrays['shape'])}"
        )
    try:
        matrix = sp.csr_matrix((arrays["data"], arrays["indices"], arrays["indptr"]), shape=shape)
        matrix.check_format(full_check=False)
    except ValueError as exc:
        raise InputError(f"{path}: inconsistent sparse matrix ({exc})") from None
    return matrix
