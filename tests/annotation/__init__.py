"""Tests of annotation/ and the annotate commands."""
