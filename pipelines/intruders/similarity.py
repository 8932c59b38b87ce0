"""The per-worker index cache of ``incoherent intruders``: TF-IDF cosines between sentences of a source.

A worker process loads each retrieval index (``incoherent index``) once, the first time a transform asks for a
similarity of its source, and keeps it for the rest of the run: the drift test (:class:`ChooseVersion`) and
the similarity filter (:class:`MakeCandidates`) of :mod:`pipelines.intruders.transforms` share it.
"""

from __future__ import annotations

_INDEXES: dict[str, object] = {}


def load_index(index_dir: str):
    """The retrieval index of ``index_dir``, loaded once per worker process."""
    index = _INDEXES.get(index_dir)
    if index is None:
        from incoherent.pipelines.runtime.storage import open_file
        from incoherent.retrieval import TfidfIndex

        index = TfidfIndex.load(index_dir, opener=open_file)
        _INDEXES[index_dir] = index
    return index


def similarities_for(index_dir: str):
    """``f(texts_a, texts_b) -> cosines`` with the IDF of the index (pairwise, vectorised).

    :meth:`retrieval.TfidfIndex.similarities` featurises each distinct text once: a document's candidates all
    face the same original sentence (and drift compares several old leads with one new lead).
    """

    def similarities(a: list[str], b: list[str]):
        return load_index(index_dir).similarities(a, b)

    return similarities
