"""DrQA-compatible hashed-bigram TF-IDF retrieval (Chen et al., 2017): featurizer, index, batched top-k.

>>> from retrieval import TfidfIndex
>>> index = TfidfIndex.load("out/index")          # doctest: +SKIP
>>> index.closest("Anarchism is a political philosophy", k=3)   # doctest: +SKIP
>>> index.similarity("The cat sat.", "A cat was sitting.")       # doctest: +SKIP
"""

from retrieval.index import IndexParams, TfidfIndex

__all__ = ["IndexParams", "TfidfIndex"]
