"""Tests of pipelines/runtime/."""
