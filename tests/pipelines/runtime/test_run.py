"""The test hook of :func:`incoherent.pipelines.runtime.run.run_pipeline` (``INCOHERENT_TEST_PAUSE_FILE``): nothing is
added to a pipeline unless it is set, and then only to the named command's; the step creates its file whole,
once, and waits at most its bound. The signal tests that use it: tests/pipelines/test_sigterm.py."""

from __future__ import annotations

import os

import apache_beam as beam

from incoherent.pipelines.runtime import run


def test_no_step_unless_the_hook_is_set(monkeypatch):
    monkeypatch.delenv(run.PAUSE_ENV, raising=False)
    monkeypatch.delenv(run.PAUSE_COMMAND_ENV, raising=False)
    pipeline = beam.Pipeline(runner="DirectRunner")
    run._add_test_pause(pipeline, "ingest text")
    assert pipeline.applied_labels == set()


def test_the_step_goes_to_the_named_command_only(monkeypatch, tmp_path):
    monkeypatch.setenv(run.PAUSE_ENV, str(tmp_path / "paused"))
    monkeypatch.setenv(run.PAUSE_COMMAND_ENV, "intruders")
    other, named = beam.Pipeline(runner="DirectRunner"), beam.Pipeline(runner="DirectRunner")
    run._add_test_pause(other, "ingest text")
    run._add_test_pause(named, "intruders")
    assert other.applied_labels == set()
    assert {"TestPause", "PauseHere"} <= named.applied_labels
    monkeypatch.delenv(run.PAUSE_COMMAND_ENV)
    every = beam.Pipeline(runner="DirectRunner")
    run._add_test_pause(every, "shuffle")  # no command named: every pipeline gets it
    assert "TestPause" in every.applied_labels


def test_the_first_pipeline_waits_and_a_later_one_does_not(monkeypatch, tmp_path):
    monkeypatch.setattr(run, "PAUSE_SECONDS", 0.2)
    path = tmp_path / "paused"
    run._pause_here(str(path))  # creates it, then waits its 0.2 s
    assert path.read_text() == f"{os.getpid()}\n"
    monkeypatch.setattr(run, "PAUSE_SECONDS", 600.0)
    run._pause_here(str(path))  # there already: returns at once (the test would hang otherwise)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["paused"]  # no temporary file left
