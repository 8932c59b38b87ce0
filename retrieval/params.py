"""The defaults of the hashed n-gram features, apart from the numba kernels of :mod:`retrieval.featurize`, so
that a command's flags (``incoherent index --help``) can show them without compiling or importing numba."""

HASH_SIZE = 2**24  # DrQA's default number of hash buckets
NGRAM = 2  # DrQA's default n-gram order (unigrams and bigrams)
