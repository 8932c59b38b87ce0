"""Tests of pipelines/ingest/."""
