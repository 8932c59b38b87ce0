"""The index assembled from featurized parts in any order, streamed (the index stage's workers write parts)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import scipy.sparse as sp

from incoherent.retrieval.index import IndexParams, TfidfIndex
from incoherent.retrieval.tfidf import corpus_fingerprint, idf_values
from incoherent.schemas.records import InputError

# --------------------------------------------------------------------------------------------- streamed assembly

# ``read_part(path, names)`` -> the named arrays of one featurized part (``ids``, ``lengths``, ``features``,
# ``counts``, ``text_keys``, ``fingerprint``; see ``pipelines/index/command.py``).
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
