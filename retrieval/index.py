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

import json
import logging
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import BinaryIO

import numpy as np
import scipy.sparse as sp

from incoherent.fileio.paths import is_remote
from incoherent.retrieval.featurize import (
    HASH_SIZE,
    NGRAM,
    STOPWORDS_SHA256,
    TOKEN_PATTERN,
    TOKENIZER,
    feature_counts_batch,
)
from incoherent.retrieval.files import Opener, join, load_arrays, load_matrix, local_open, write_seekable
from incoherent.retrieval.tfidf import (
    corpus_fingerprint,
    document_fingerprint,
    idf_values,
    merge_document_frequencies,
    pair_cosines,
    text_key,
    tfidf_matrix,
)
from incoherent.schemas.records import InputError

LOG = logging.getLogger(__name__)

FORMAT = "incoherent-drqa-tfidf"
FORMAT_VERSION = 1
META_FILE = "index.json"
MATRIX_FILE = "tfidf.npz"
IDF_FILE = "idf.npz"
IDS_FILE = "ids.json"
DOCS_FILE = "docs.npz"


@dataclass(frozen=True)
class IndexParams:
    """What decides the features of a text; an index is only usable with the parameters it was built with."""

    ngram: int = NGRAM
    hash_size: int = HASH_SIZE
    tokenizer: str = TOKENIZER
    stopwords_sha256: str = STOPWORDS_SHA256

    TUNABLE = ("ngram", "hash_size")  # flags of `incoherent index`; the rest is fixed by this code

    def mismatches(self, other: IndexParams) -> list[str]:
        """``["hash_size: index has 1024, requested 16777216", ...]``; empty when they agree."""
        mine, theirs = asdict(self), asdict(other)
        return [f"{k}: index has {mine[k]!r}, requested {theirs[k]!r}" for k in mine if mine[k] != theirs[k]]


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
            with opener(join(path, name), "wb") as f:
                write_seekable(f, fill)

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

    @staticmethod
    def load_meta(
        path: str, expect: IndexParams | None = None, opener: Opener | None = None
    ) -> tuple[dict, IndexParams]:
        """``(index.json, params)`` of the index in ``path``, checked as :meth:`load` checks them; nothing else
        is read (a worker that reads the matrix by ranges needs no ids)."""
        opener = opener or local_open
        meta_path = join(path, META_FILE)
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
            if expect is None:
                expect = IndexParams(**{k: meta[k] for k in IndexParams.TUNABLE})
            params = IndexParams(**{k: meta[k] for k in asdict(expect)})
        except KeyError as exc:
            raise InputError(f"{meta_path}: missing field {exc}") from None
        mismatches = params.mismatches(expect)
        if mismatches:
            raise InputError(f"{path}: index built with other parameters ({'; '.join(mismatches)})")
        return meta, params

    @classmethod
    def load(cls, path: str, expect: IndexParams | None = None, opener: Opener | None = None) -> TfidfIndex:
        """Open the index in directory ``path``; ``expect`` must match. Without ``expect`` the index's own
        tunable parameters (:attr:`IndexParams.TUNABLE`: n-gram order, hash size, read from its ``index.json``,
        never assumed) are used, and its tokenizer and stopwords must be this code's.

        Files are read through ``opener`` (default: the local disk). Raises :class:`InputError` naming the
        file for a missing directory, corrupt files or mismatched parameters.
        """
        opener = opener or local_open
        meta, params = cls.load_meta(path, expect, opener)
        idf_path = join(path, IDF_FILE)
        arrays = load_arrays(idf_path, ("features", "df", "num_docs"), opener)
        num_docs = int(arrays["num_docs"])
        if num_docs != meta.get("num_docs") or len(arrays["features"]) != len(arrays["df"]):
            raise InputError(
                f"{idf_path}: inconsistent with {META_FILE} (num_docs {num_docs} vs {meta.get('num_docs')})"
            )
        ids_path = join(path, IDS_FILE)
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
            self._matrix = load_matrix(
                join(self.path, MATRIX_FILE), (self.num_docs, self.params.hash_size), self._opener
            )
        return self._matrix

    @property
    def text_keys(self) -> np.ndarray:
        """uint64 hash of each document's text (row order), read from ``docs.npz`` on first use."""
        if self._text_keys is None:
            path = join(self.path, DOCS_FILE)
            keys = load_arrays(path, ("text_key",), self._opener)["text_key"]
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
        return pair_cosines(starts, features, values, rows_a, rows_b)

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
