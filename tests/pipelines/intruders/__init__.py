"""Tests of pipelines/intruders/."""
