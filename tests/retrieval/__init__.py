"""Tests of retrieval/: the TF-IDF index and top-k search."""
