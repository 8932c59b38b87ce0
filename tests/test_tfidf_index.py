"""TfidfIndex: DrQA's tf-idf formulas, .npz/JSON round trip, query API, sentence similarity, bad index files."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest
import scipy.sparse as sp

from retrieval import IndexParams, TfidfIndex
from retrieval.featurize import features
from retrieval.index import idf_values, merge_document_frequencies
from schemas.records import InputError

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

    lines = (Path(__file__).resolve().parent.parent / "samples/wsj/wsj.jsonl").read_text("utf-8").splitlines()
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
