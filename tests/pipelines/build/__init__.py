"""Tests of pipelines/build/."""
