"""DrQA-compatible hashed-bigram TF-IDF retrieval (Chen et al., 2017): featurizer, index, batched top-k.

>>> from incoherent.retrieval import TfidfIndex
>>> index = TfidfIndex.load("out/index")          # doctest: +SKIP
>>> index.closest("Anarchism is a political philosophy", k=3)   # doctest: +SKIP
>>> index.similarity("The cat sat.", "A cat was sitting.")       # doctest: +SKIP
"""

__all__ = ["IndexParams", "TfidfIndex"]


def __getattr__(name: str):
    """``IndexParams`` and ``TfidfIndex`` on first use: importing ``retrieval.params`` (a command's flag
    defaults) then needs neither numba nor scipy."""
    if name in __all__:
        from incoherent.retrieval import index

        return getattr(index, name)
    raise AttributeError(f"module 'retrieval' has no attribute {name!r}")
