"""TfidfIndex: DrQA's tf-idf formulas, .npz/JSON round trip, query API, sentence similarity, bad index files."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest
import scipy.sparse as sp

from incoherent.retrieval import IndexParams, TfidfIndex
from incoherent.retrieval.featurize import features
from incoherent.retrieval.tfidf import idf_values, merge_document_frequencies
from incoherent.schemas.records import InputError

DOCS = [
    ("d1", "The cat sat on the mat."),
    ("d2", "A dog chased the cat."),
    ("d3", "Stock markets fell sharply."),
    ("d4", "Markets rallied after the fall."),
    ("d5", "The of and."),  # only stopwords: zero vector
    ("d0", "Cats and dogs."),
]


def h(gram: str) -> int:
    return int(features(gram)[0]) if " " not in gram else int(features(gram)[-1])


@pytest.fixture(scope="module")
def index(tmp_path_factory) -> TfidfIndex:
    path = tmp_path_factory.mktemp("index")
    TfidfIndex.build(DOCS).save(str(path))
    return TfidfIndex.load(str(path))


def test_rows_are_sorted_by_id_and_matrix_has_the_formula_values(index):
    assert index.ids == ["d0", "d1", "d2", "d3", "d4", "d5"]
    n = 6
    cat = h("cat")  # in d1 and d2: Nt = 2
    idf = math.log((n - 2 + 0.5) / (2 + 0.5))
    row = index.ids.index("d1")
    assert index.matrix[row, cat] == pytest.approx(math.log1p(1) * idf, rel=1e-6)
    assert index.matrix.dtype == np.float32 and index.matrix.shape == (6, 2**24)
    assert index.matrix[index.ids.index("d5")].nnz == 0
    assert index.meta["num_zero_vector_docs"] == 1 and index.meta["num_docs"] == 6


def test_idf_is_clipped_at_zero_and_unseen_features_have_nt_zero():
    assert idf_values(np.array([0, 1, 3, 5]), 6).tolist() == pytest.approx(
        [math.log(6.5 / 0.5), math.log(5.5 / 1.5), 0.0, 0.0]
    )


def test_merge_document_frequencies_sums_counts():
    f, c = merge_document_frequencies(
        [(np.array([1, 5]), np.array([1, 1])), (np.array([5, 9]), np.array([2, 1]))]
    )
    assert f.tolist() == [1, 5, 9] and c.tolist() == [1, 3, 1]


def test_closest_ranks_by_dot_product_ties_by_id(index):
    result = index.closest("cat", k=5)
    assert [doc for doc, _ in result] == [
        "d1",
        "d2",
    ]  # equal scores (one "cat" each, same length tf): id order
    assert result[0][1] == pytest.approx(result[1][1])
    assert index.closest("zebra", k=3) == []


def test_similarity_is_tfidf_cosine(index):
    assert index.similarity("the cat sat", "a cat sat") == pytest.approx(1.0)
    assert index.similarity("stock markets", "the of and") == 0.0
    a, b = index.vectorize(["markets fell", "markets rallied"])[0], index.vectorize(["markets rallied"])[0]
    expected = a.multiply(b).sum() / math.sqrt(a.multiply(a).sum() * b.multiply(b).sum())
    assert index.similarity("markets fell", "markets rallied") == pytest.approx(expected)
    assert 0 < expected < 1


def test_similarities_pairwise_matches_single_calls(index):
    a = ["the cat sat", "stock markets fell", "", "dogs chased cats"]
    b = ["a cat sat", "markets rallied", "cat", "the dog chased the cat"]
    batch = index.similarities(a, b)
    assert batch.shape == (4,) and batch[2] == 0.0
    assert batch.tolist() == pytest.approx([index.similarity(x, y) for x, y in zip(a, b, strict=True)])
    with pytest.raises(ValueError):
        index.similarities(["a"], [])


def test_vectorize_rows_are_csr_tfidf(index):
    v = index.vectorize(["cat cat", "the"])
    assert isinstance(v, sp.csr_matrix) and v.shape == (2, 2**24) and v[1].nnz == 0
    assert v[0, h("cat")] == pytest.approx(math.log1p(2) * math.log(4.5 / 2.5))


def test_load_reads_idf_without_the_matrix(tmp_path):
    TfidfIndex.build(DOCS).save(str(tmp_path))
    os.remove(tmp_path / "tfidf.npz")  # sentence similarity needs only idf.npz
    index = TfidfIndex.load(str(tmp_path))
    assert index.similarity("cat sat", "cat sat") == pytest.approx(1.0)
    with pytest.raises(InputError, match="tfidf.npz: missing index file"):
        index.closest("cat")


def test_one_document_corpus_has_all_idf_zero(tmp_path):
    index = TfidfIndex.build([("only", "A single document about cats.")])
    assert index.num_docs == 1 and index.matrix.nnz == 0 and index.closest("cats") == []


def test_duplicate_ids_are_refused():
    with pytest.raises(InputError, match="duplicate document id"):
        TfidfIndex.build([("a", "x"), ("a", "y")])


# --------------------------------------------------------------------------------------------- bad index files


@pytest.fixture
def saved(tmp_path):
    TfidfIndex.build(DOCS).save(str(tmp_path))
    return tmp_path


def test_missing_directory(tmp_path):
    with pytest.raises(InputError, match="no such index directory"):
        TfidfIndex.load(str(tmp_path / "nope"))


def test_parameter_mismatch_names_the_parameter(saved):
    with pytest.raises(InputError, match=r"hash_size: index has 16777216, requested 1024"):
        TfidfIndex.load(str(saved), expect=IndexParams(hash_size=1024))
    meta = json.loads((saved / "index.json").read_text())
    meta["stopwords_sha256"] = "0" * 64
    (saved / "index.json").write_text(json.dumps(meta))
    with pytest.raises(InputError, match="stopwords_sha256"):
        TfidfIndex.load(str(saved))


def test_truncated_npz_is_a_clear_error(saved):
    data = (saved / "tfidf.npz").read_bytes()
    (saved / "tfidf.npz").write_bytes(data[: len(data) // 2])
    index = TfidfIndex.load(str(saved))
    with pytest.raises(InputError, match=r"tfidf.npz: corrupt or truncated \.npz"):
        _ = index.matrix
    (saved / "idf.npz").write_bytes(b"not a zip file")
    with pytest.raises(InputError, match=r"idf.npz: corrupt or truncated \.npz"):
        TfidfIndex.load(str(saved))


def test_pickled_arrays_are_refused(saved):
    np.savez(
        saved / "idf.npz", features=np.array([object()], dtype=object), df=np.array([1]), num_docs=np.int64(6)
    )
    with pytest.raises(InputError, match="corrupt or truncated"):
        TfidfIndex.load(str(saved))


def test_corrupt_metadata(saved):
    (saved / "index.json").write_text("{not json")
    with pytest.raises(InputError, match="index.json: not valid JSON"):
        TfidfIndex.load(str(saved))
    (saved / "index.json").write_text(json.dumps({"format": "something-else"}))
    with pytest.raises(InputError, match="not an incoherent-drqa-tfidf"):
        TfidfIndex.load(str(saved))


def test_similarities_equal_cosines_of_the_vectorized_rows_on_real_sentences():
    from pathlib import Path

    lines = (Path(__file__).resolve().parents[2] / "samples/wsj/wsj.jsonl").read_text("utf-8").splitlines()
    texts = [json.loads(line)["text"] for line in lines]
    wsj = TfidfIndex.build([(f"w{i}", t) for i, t in enumerate(texts)])
    sentences = [s for t in texts for s in t.split(". ") if s][:400]
    a, b = sentences[:200], sentences[200:400][::-1]
    a[5], a[7], b[7] = "the of and", a[3], b[3]  # a zero vector, and a repeated pair
    x, y = wsj.vectorize(a), wsj.vectorize(b)

    def row_sums(m):
        return np.asarray(m.sum(axis=1)).ravel()

    norms = np.sqrt(row_sums(x.multiply(x)) * row_sums(y.multiply(y)))
    expected = np.divide(row_sums(x.multiply(y)), norms, out=np.zeros(len(a)), where=norms > 0)
    got = wsj.similarities(a, b)
    assert got[5] == 0.0 and got[7] == pytest.approx(got[3]) and (got > 0).sum() >= 15
    assert got == pytest.approx(np.minimum(expected, 1.0), abs=1e-12)


# --------------------------------------------------------------------------------------------- streamed assembly


def wsj_docs() -> list[tuple[str, str]]:
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "samples/wsj/wsj.jsonl"
    return [
        (f"w{i:03d}", json.loads(line)["text"]) for i, line in enumerate(path.read_text("utf-8").splitlines())
    ]


def parts_of(docs: list[tuple[str, str]], sizes: list[int], params: IndexParams) -> dict[str, dict]:
    """Featurized parts as the index stage writes them (``pipelines/index/command.py``), in the given order."""
    from incoherent.retrieval.featurize import feature_counts_batch
    from incoherent.retrieval.tfidf import document_fingerprint, text_key

    parts, start = {}, 0
    for number, size in enumerate(sizes):
        batch = docs[start : start + size]
        start += size
        lengths, feats, counts = feature_counts_batch([t for _, t in batch], params.hash_size, params.ngram)
        parts[f"part-{number}"] = {
            "ids": np.array([i for i, _ in batch], dtype=str),
            "lengths": lengths,
            "features": feats,
            "counts": counts,
            "text_keys": np.array([text_key(t) for _, t in batch], np.uint64),
            "fingerprint": np.uint64(sum(document_fingerprint(i, t) for i, t in batch) % 2**64),
        }
    assert start == len(docs)
    return parts


def streamed(parts: dict[str, dict], params: IndexParams, reads: list | None = None) -> TfidfIndex:
    from incoherent.retrieval.assembly import tfidf_from_parts

    def read_part(path, names):
        if reads is not None:
            reads.append((path, tuple(names)))
        return {name: parts[path][name] for name in names}

    every = np.concatenate(
        [np.zeros(0, np.int64)] + [p["features"] for p in parts.values()]
    )  # unique per document
    df_features, df_counts = merge_document_frequencies(
        [(np.array(every, np.int64), np.ones(len(every), np.int64))]
    )
    return tfidf_from_parts(
        params=params,
        part_paths=list(parts),
        read_part=read_part,
        df_features=df_features,
        df_counts=df_counts,
        source="docs/",
    )


def saved_bytes(index: TfidfIndex, path) -> dict[str, bytes]:
    index.save(str(path))
    return {p.name: p.read_bytes() for p in sorted(path.iterdir())}


def test_streamed_assembly_of_scrambled_parts_saves_the_bytes_of_build(tmp_path):
    rng = np.random.default_rng(7)
    docs = wsj_docs() + DOCS
    scrambled = [docs[i] for i in rng.permutation(len(docs))]  # parts hold documents in no id order
    params = IndexParams()
    reads = []
    parts = parts_of(scrambled, [1, 64, 0, 90, 50], params)
    index = streamed(parts, params, reads)
    expected = saved_bytes(TfidfIndex.build(docs), tmp_path / "built")
    assert saved_bytes(index, tmp_path / "streamed") == expected
    assert index.meta["num_docs"] == 205 and index.meta["num_zero_vector_docs"] == 1
    # one pass over the per-document arrays, one over the features (some n-grams are in more than half of
    # the WSJ documents: their idf is 0 and rows drop them), one that fills the matrix
    assert [names for _, names in reads] == (
        [("ids", "lengths", "text_keys", "fingerprint")] * 5
        + [("lengths", "features")] * 5
        + [("lengths", "features", "counts")] * 5
    )
    assert index.matrix.nnz < sum(len(p["features"]) for p in parts.values())


def test_streamed_assembly_drops_the_entries_of_idf_zero_features(tmp_path):
    docs = [
        (f"z{i}", f"zebra crossing number {word}")
        for i, word in enumerate(["alpha", "beta", "gamma", "delta"])
    ]
    docs += [("y0", "giraffe necks"), ("y1", "zebra stripes"), ("y2", "")]  # "zebra" in 5 of 7: idf 0
    params = IndexParams(hash_size=2**20)
    index = streamed(parts_of(docs[::-1], [3, 4], params), params)
    built = TfidfIndex.build(docs, params)
    zebra = int(features("zebra", hash_size=2**20)[0])
    assert zebra in built.df_features and zebra not in index.matrix.indices
    assert index.matrix.nnz == built.matrix.nnz < sum(len(features(t, 2**20)) for _, t in docs)
    assert saved_bytes(index, tmp_path / "streamed") == saved_bytes(built, tmp_path / "built")


def test_streamed_assembly_refuses_duplicate_ids_and_no_documents():
    params = IndexParams()
    with pytest.raises(InputError, match=r"^docs/: duplicate document id 'd1'$"):
        streamed(parts_of(DOCS + [("d1", "again")], [3, 4], params), params)
    with pytest.raises(InputError, match=r"^docs/: no documents to index$"):
        streamed(parts_of([], [0], params), params)


class Unseekable:
    """A write stream like a remote upload: no seek, no tell."""

    def __init__(self, sink: dict, name: str):
        self.sink, self.name, self.chunks = sink, name, []

    def seekable(self) -> bool:
        return False

    def write(self, data) -> int:
        self.chunks.append(bytes(data))
        return len(data)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.sink[self.name] = b"".join(self.chunks)


def test_save_through_an_unseekable_stream_writes_the_same_bytes(tmp_path):
    index = TfidfIndex.build(wsj_docs())
    sink: dict[str, bytes] = {}
    index.save("mem://index", opener=lambda path, mode: Unseekable(sink, path.rsplit("/", 1)[1]))
    assert sink == saved_bytes(index, tmp_path / "local")
