"""Tests of filters/: the classifier, language-model scoring and training."""
