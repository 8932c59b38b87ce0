"""Tests of corpora/: the corpus logic."""
