"""The transforms of ``incoherent index`` (imported by :func:`pipelines.index.run`, so ``--help`` imports no
Beam or numba)."""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Sequence

import apache_beam as beam
import numpy as np

from incoherent.pipelines.runtime import storage
from incoherent.pipelines.runtime.tables import count
from incoherent.retrieval.assembly import tfidf_from_parts
from incoherent.retrieval.featurize import document_text, feature_counts_batch
from incoherent.retrieval.index import META_FILE, IndexParams
from incoherent.retrieval.tfidf import document_fingerprint, merge_document_frequencies, text_key

STAGE = "index"
COMPACT_EVERY = 64


def featurize_batch(docs: list[dict], params: IndexParams) -> dict:
    """A batch of document rows -> their hashed n-gram counts as concatenated arrays.

    ``{"ids": [...], "lengths": int64[n], "features": int64[...], "counts": int64[...], "text_keys":
    uint64[n], "fingerprints": [int, ...]}``; document i owns ``lengths[i]`` consecutive entries of
    ``features``/``counts`` (sorted unique features). One element per batch keeps Beam's per-element cost
    (pickling a dict of small arrays per document) out of the index build.
    """
    ids, texts, keys, fingerprints = [], [], [], []
    for doc in docs:
        text = document_text(doc["sentences"] or [])
        ids.append(doc["id"])
        texts.append(text)
        keys.append(text_key(text))
        fingerprints.append(document_fingerprint(doc["id"], text))
        if not text.strip():
            count(STAGE, "empty_text")
    count(STAGE, "documents", len(docs))
    lengths, features, counts = feature_counts_batch(texts, params.hash_size, params.ngram)
    return {
        "ids": ids,
        "lengths": lengths,
        "features": features,
        "counts": counts,
        "text_keys": np.array(keys, np.uint64),
        "fingerprints": fingerprints,
    }


class DocumentFrequencies(beam.CombineFn):
    """Sum feature sets (one entry per document having the feature) into sorted ``(features, df)`` arrays."""

    def create_accumulator(self):
        return []

    def add_input(self, accumulator, features):
        accumulator.append(np.unique(features, return_counts=True))
        if len(accumulator) >= COMPACT_EVERY:
            accumulator[:] = [merge_document_frequencies(accumulator)]
        return accumulator

    def merge_accumulators(self, accumulators):
        return [merge_document_frequencies(part for acc in accumulators for part in acc)]

    def compact(self, accumulator):
        return [merge_document_frequencies(accumulator)]

    def extract_output(self, accumulator):
        return merge_document_frequencies(accumulator)


PARTS_DIR = "_parts"
MANIFEST = "parts.json"
DF_FILE = "df.npz"


def part_name(ids: list[str]) -> str:
    """A batch's file name, from its ids: a retried bundle rewrites the same file."""
    return f"part-{hashlib.sha256(chr(0).join(ids).encode('utf-8')).hexdigest()[:24]}.npz"


def write_part(batch: dict, parts_dir: str) -> str:
    """Save one featurized batch as ``PARTS_DIR/part-<hash>.npz`` through Beam's filesystems; its path."""
    buffer = io.BytesIO()
    np.savez(
        buffer,
        ids=np.array(batch["ids"], dtype=str),
        lengths=np.asarray(batch["lengths"], np.int64),
        features=np.asarray(batch["features"], np.int64),
        counts=np.asarray(batch["counts"], np.int64),
        text_keys=np.asarray(batch["text_keys"], np.uint64),
        fingerprint=np.uint64(sum(batch["fingerprints"]) % 2**64),
    )
    path = storage.join(parts_dir, part_name(batch["ids"]))
    storage.write_bytes(path, buffer.getvalue())
    return path


def write_manifest(paths: list[str], parts_dir: str) -> None:
    """The list of parts the pipeline committed (a failed bundle's retry may leave others behind)."""
    storage.write_bytes(storage.join(parts_dir, MANIFEST), json.dumps(sorted(paths)).encode("utf-8"))


def write_df(df: tuple[np.ndarray, np.ndarray], parts_dir: str) -> None:
    buffer = io.BytesIO()
    np.savez(buffer, features=df[0], counts=df[1])
    storage.write_bytes(storage.join(parts_dir, DF_FILE), buffer.getvalue())


def _npz(path: str) -> dict[str, np.ndarray]:
    with np.load(io.BytesIO(storage.read_bytes(path)), allow_pickle=False) as npz:
        return {name: npz[name] for name in npz.files}


def read_part_arrays(path: str, names: Sequence[str]) -> dict[str, np.ndarray]:
    """Arrays ``names`` of one part; only those are read from a local file (a remote one is fetched whole)."""
    with storage.open_file(path, "rb") as f, np.load(f, allow_pickle=False) as npz:
        return {name: npz[name] for name in names}


def assemble_index(out_dir: str, params: IndexParams, docs_dir: str) -> dict:
    """The last step of the pipeline, on one worker: the TF-IDF matrix from the committed parts, rows sorted
    by id.

    Reads ``OUT/_parts/`` (written by the workers through Beam's filesystems) one part at a time
    (:func:`retrieval.assembly.tfidf_from_parts`: memory is the matrix plus a few numbers per document), saves
    the index files into ``out_dir`` through the same filesystems and deletes the parts. Returns the index
    metadata. A retry after the parts were deleted finds the saved index and returns its metadata.
    """
    parts_dir = storage.join(out_dir, PARTS_DIR)
    manifest = storage.join(parts_dir, MANIFEST)
    if not storage.exists(manifest) and storage.exists(storage.join(out_dir, META_FILE)):
        return read_meta(out_dir)
    paths = json.loads(storage.read_bytes(manifest))
    df = _npz(storage.join(parts_dir, DF_FILE))
    index = tfidf_from_parts(
        params=params,
        part_paths=paths,
        read_part=read_part_arrays,
        df_features=df["features"],
        df_counts=df["counts"],
        source=docs_dir,
    )
    index.save(out_dir, opener=storage.open_file)
    storage.delete_tree(parts_dir)
    return index.meta


def read_meta(out_dir: str) -> dict:
    """The metadata of a saved index (``index.json``, a few hundred bytes): all the driver reads of it."""
    return json.loads(storage.read_bytes(storage.join(out_dir, META_FILE)))


class BuildIndex(beam.PTransform):
    """Document rows -> featurized parts and document frequencies under ``out_dir/_parts/`` -> the index.

    Every worker writes its own batches (no single worker sees the whole corpus); once the manifest and the
    document frequencies are written, :func:`assemble_index` turns them into the index on one worker (the
    one step whose memory grows with the matrix: on Dataflow a high-memory worker type), so the matrix
    never passes through the driver. The output is the index metadata (one small dict).
    """

    def __init__(self, out_dir: str, params: IndexParams, docs_dir: str):
        super().__init__()
        self._out_dir = storage.absolute(out_dir)
        self._parts_dir = storage.join(self._out_dir, PARTS_DIR)
        self._params, self._docs_dir = params, docs_dir

    def expand(self, docs):
        params, parts_dir = self._params, self._parts_dir
        batches = (
            docs
            | "Batch" >> beam.BatchElements(min_batch_size=64, max_batch_size=2048)
            | "Featurize" >> beam.Map(featurize_batch, params=params)
        )
        df_written = (
            batches
            | "FeatureSets" >> beam.Map(_features_of)
            | "DocumentFrequencies" >> beam.CombineGlobally(DocumentFrequencies())
            | "WriteDf" >> beam.Map(write_df, parts_dir=parts_dir)
        )
        return (
            batches
            | "WriteParts" >> beam.Map(write_part, parts_dir=parts_dir)
            | "PartPaths" >> beam.combiners.ToList()
            | "WriteManifest" >> beam.Map(write_manifest, parts_dir=parts_dir)
            | "Assemble"
            >> beam.Map(
                _assemble_after,
                beam.pvalue.AsSingleton(df_written),
                out_dir=self._out_dir,
                params=params,
                docs_dir=self._docs_dir,
            )
        )


def _assemble_after(_manifest_written, _df_written, out_dir: str, params: IndexParams, docs_dir: str) -> dict:
    """:func:`assemble_index` once both the manifest and the document frequencies are written (the side
    input makes the step wait for the second)."""
    return assemble_index(out_dir, params, docs_dir)


def _features_of(batch: dict) -> np.ndarray:
    """The features of a batch, each document's counted once (its features are unique)."""
    return batch["features"]
