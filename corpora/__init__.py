"""Corpus construction logic (k-block shuffles, intruder sentences), free of Beam."""
