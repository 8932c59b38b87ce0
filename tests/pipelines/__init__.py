"""Tests of pipelines/: the commands."""
