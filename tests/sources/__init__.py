"""Tests of sources/: the readers of raw collections."""
