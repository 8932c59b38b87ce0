"""Parity with DrQA's scoring on a small real corpus (WSJ sample: 199 articles + their first paragraphs).

The reference below is written from the formulas, one query at a time, with plain dicts: DrQA's tokenizer
pattern, its n-gram filter, ``murmurhash3_32(gram, positive=True) % 2**24``, ``tf = log1p(count)``,
``idf = max(0, log((N - Nt + 0.5) / (Nt + 0.5)))``, score = dot product of the query's and the document's
vectors. Our batched neighbours must give the same top-10 sets for >= 99% of the queries, and any
difference must lie among documents tied with the 10th score.
"""

from __future__ import annotations

import json
import math
import unicodedata
from collections import Counter

import numpy as np
import regex
import scipy.sparse as sp
from sklearn.utils import murmurhash3_32

from incoherent.retrieval import TfidfIndex
from incoherent.retrieval.topk import all_topk, prepare
from tests.conftest import SAMPLES

K = 10
HASH = 2**24
STOP = set((SAMPLES.parent / "retrieval/data/drqa_stopwords.txt").read_text("utf-8").split("\n")) - {""}
TOKEN = regex.compile(
    r"([\p{L}\p{N}\p{M}]+)|([^\p{Z}\p{C}])", flags=regex.IGNORECASE + regex.UNICODE + regex.MULTILINE
)
PUNCT = regex.compile(r"^\p{P}+$")


def reference_counts(text: str) -> Counter:
    words = [m.group().lower() for m in TOKEN.finditer(unicodedata.normalize("NFD", text))]

    def bad(word: str) -> bool:
        word = unicodedata.normalize("NFD", word)
        return bool(PUNCT.match(word)) or word.lower() in STOP

    grams = []
    for start in range(len(words)):
        for end in range(start + 1, min(start + 2, len(words)) + 1):
            if not any(bad(w) for w in words[start:end]):
                grams.append(" ".join(words[start:end]))
    return Counter(murmurhash3_32(g, positive=True) % HASH for g in grams)


def corpus() -> list[tuple[str, str]]:
    docs = []
    for line in (SAMPLES / "wsj" / "wsj.jsonl").read_text("utf-8").splitlines():
        record = json.loads(line)
        docs.append((record["id"], record["text"]))
        docs.append(
            (record["id"] + "/p0", record["text"].split("\n\n")[0])
        )  # near-duplicates, some exact ones
    return docs


def test_batched_neighbours_match_per_query_drqa_scoring():
    docs = sorted(corpus())
    ids = [i for i, _ in docs]
    counts = [reference_counts(t) for _, t in docs]
    n = len(docs)
    df = Counter(f for c in counts for f in c)
    idf = {f: max(0.0, math.log((n - nt + 0.5) / (nt + 0.5))) for f, nt in df.items()}
    vectors = [{f: math.log1p(c) * idf[f] for f, c in doc.items() if idf[f] > 0} for doc in counts]
    column = {f: j for j, f in enumerate(sorted(idf))}  # hashed feature -> column of the reference matrix
    rows, cols, vals = [], [], []
    for r, vec in enumerate(vectors):
        for f, v in vec.items():
            rows.append(r), cols.append(column[f]), vals.append(v)
    doc_mat = sp.csr_matrix((vals, (rows, cols)), shape=(n, len(column)))

    index = TfidfIndex.build(docs)
    assert index.ids == ids
    ours = {
        row: (cols_, scores) for row, cols_, scores in all_topk(prepare(index.matrix, index.text_keys), K)
    }

    equal = at_ties = 0
    for q in range(n):
        query = np.zeros(len(column))
        for f, v in vectors[q].items():
            query[column[f]] = v
        scores = doc_mat @ query
        texts_equal = [d for d in range(n) if docs[d][1] == docs[q][1]]
        scores[texts_equal] = 0  # self and exact duplicates are not neighbours
        ranked = [d for d in np.lexsort((np.arange(n), -scores)) if scores[d] > 0][:K]
        got, got_scores = ours[q]
        if set(ranked) == set(got.tolist()):
            equal += 1
            assert np.allclose(got_scores, scores[got], rtol=1e-5)
        else:
            tenth = scores[ranked[-1]]
            differing = set(ranked) ^ set(got.tolist())
            assert all(abs(scores[d] - tenth) <= 1e-5 * tenth for d in differing), ids[q]
            at_ties += 1
    assert n == 398 and equal / n >= 0.99, (equal, at_ties)


def test_closest_finds_the_article_of_a_free_text_query():
    index = TfidfIndex.build(corpus())
    result = index.closest("Pierre Vinken will join the board as a nonexecutive director", k=3)
    assert result[0][0] in {"wsj_0001", "wsj_0001/p0"} and len(result) == 3
