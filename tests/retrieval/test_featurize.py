"""DrQA featurizer: tokens, stopword/punctuation filter, n-grams and murmurhash features."""

from __future__ import annotations

import hashlib
import json
import unicodedata

import numpy as np
import pytest
from sklearn.utils import murmurhash3_32

from incoherent.retrieval import featurize as F

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wsj_texts() -> list[str]:
    lines = (ROOT / "samples" / "wsj" / "wsj.jsonl").read_text("utf-8").splitlines()
    return [json.loads(line)["text"] for line in lines]


def test_tokenize_splits_like_drqa_simple_tokenizer():
    assert F.tokenize("Don't stop--now!") == ["don", "'", "t", "stop", "-", "-", "now", "!"]
    assert F.tokenize("U.S. GDP rose 2.5%") == ["u", ".", "s", ".", "gdp", "rose", "2", ".", "5", "%"]
    assert F.tokenize("  \t\n ") == []


def test_tokenize_normalises_to_nfd_and_keeps_combining_marks_in_the_word():
    assert F.tokenize("Café") == [unicodedata.normalize("NFD", "café")]
    assert F.tokenize("Café") == F.tokenize(unicodedata.normalize("NFD", "Café"))


def test_drop_token_punctuation_and_stopwords():
    assert F.drop_token("the") and F.drop_token("--") and F.drop_token("'s") and F.drop_token("``")
    assert not F.drop_token("cat") and not F.drop_token("$") and not F.drop_token("2")


def test_ngrams_drop_any_gram_with_a_stopword_or_punctuation_token():
    assert F.ngrams("The big cat, sat.") == ["big", "cat", "sat", "big cat"]
    assert F.ngrams("the of and") == []
    assert F.ngrams("") == []


def test_ngrams_order_one_and_three():
    assert F.ngrams("big red cat", n=1) == ["big", "red", "cat"]
    assert F.ngrams("big red cat", n=3) == ["big", "red", "cat", "big red", "red cat", "big red cat"]


def test_features_are_sklearn_murmurhash_of_the_joined_ngram():
    expected = [murmurhash3_32(g, positive=True) % 2**24 for g in ["big", "cat", "big cat"]]
    assert F.features("The big cat.").tolist() == expected
    assert F.features("big cat", hash_size=8).max() < 8


def test_feature_counts_sorted_unique_with_counts():
    ids, counts = F.feature_counts("cat cat dog")
    cat = murmurhash3_32("cat", positive=True) % 2**24
    assert dict(zip(ids.tolist(), counts.tolist(), strict=True))[cat] == 2
    assert ids.tolist() == sorted(ids.tolist()) and counts.sum() == 5  # cat x2, dog, "cat cat", "cat dog"
    empty_ids, empty_counts = F.feature_counts("the")
    assert empty_ids.dtype == np.int64 and len(empty_ids) == 0 and len(empty_counts) == 0


def test_stopword_list_is_drqas_and_its_hash_is_recorded():
    assert len(F.STOPWORDS) == 162 and {"the", "``", "''", "'s", "n't"} <= F.STOPWORDS
    data = (F.resources.files("incoherent.retrieval") / "data/drqa_stopwords.txt").read_bytes()
    assert F.STOPWORDS_SHA256 == hashlib.sha256(data).hexdigest()


def test_document_text_joins_sentences_with_spaces():
    assert F.document_text(["A b.", "C d."]) == "A b. C d."
    assert F.document_text([]) == ""


def test_token_pattern_without_drqa_flags_matches_the_same_code_points():
    import regex

    for alternative in (r"[\p{L}\p{N}\p{M}]", r"[^\p{Z}\p{C}]"):
        drqa = regex.compile(alternative, flags=regex.IGNORECASE | regex.UNICODE | regex.MULTILINE)
        ours = regex.compile(alternative)
        everything = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
        assert drqa.findall(everything) == ours.findall(everything)


def test_ascii_fast_path_gives_the_tokens_of_the_unicode_pattern_for_every_ascii_pair():
    import unicodedata

    ascii_chars = [chr(c) for c in range(128)]
    pairs = [a + b for a in ascii_chars for b in ascii_chars]
    for text in [*pairs, "Don't stop--now!\tA1b2 ~x"]:
        assert F._ASCII_TOKEN.findall(text) == F._TOKEN.findall(unicodedata.normalize("NFD", text)), repr(
            text
        )


def test_batch_features_equal_the_string_reference_on_real_and_odd_text(wsj_texts):
    texts = wsj_texts[:300] + [
        "Café naïve – Ελληνικά ΟΔΟΣ. 中文字符 😀 emoji, x",
        "",
        "the of and",
        "a" * 100 + " " + "b" * 70,
        "İstanbul ǅemal ﬁnance ß",
    ]
    for n in (1, 2, 3):
        lengths, features, counts = F.feature_counts_batch(texts, n=n)
        assert len(lengths) == len(texts) and lengths.sum() == len(features) == len(counts)
        offset = 0
        for text, length in zip(texts, lengths, strict=True):
            ids, reference_counts = np.unique(F.hash_ngrams(F.ngrams(text, n)), return_counts=True)
            assert features[offset : offset + length].tolist() == ids.tolist()
            assert counts[offset : offset + length].tolist() == reference_counts.tolist()
            offset += length


def test_batch_features_match_sklearn_murmurhash_for_every_utf8_length():
    for size in range(0, 12):
        word = unicodedata.normalize("NFD", "é" * size + "x" * (size % 3))  # 3 UTF-8 bytes per "é" in NFD
        (feature,) = F.feature_counts(word, n=1)[0].tolist() or [None]
        expected = murmurhash3_32(word, positive=True) % 2**24 if word else None
        assert feature == expected


def test_batch_features_from_several_threads_equal_one_thread(wsj_texts):
    from concurrent.futures import ThreadPoolExecutor

    F._tokens.__init__()  # an empty token table: the threads race to add the same new tokens
    chunks = [wsj_texts[i::4] for i in range(4)] * 3
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(F.feature_counts_batch, chunks))
    for chunk, (lengths, features, counts) in zip(chunks, results, strict=True):
        expected = F.feature_counts_batch(chunk)
        assert lengths.tolist() == expected[0].tolist() and features.tolist() == expected[1].tolist()
        assert counts.tolist() == expected[2].tolist()
