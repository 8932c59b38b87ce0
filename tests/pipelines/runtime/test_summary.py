"""Direct tests of :mod:`pipelines.runtime.summary`: run summaries and files written whole."""

from __future__ import annotations

import json
import os

from incoherent.pipelines.runtime import summary


def test_write_json_atomic_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "summary.json"
    summary.write_json_atomic(str(path), {"a": 1, "when": object})
    assert json.loads(path.read_text())["a"] == 1
    assert path.read_text().endswith("}\n")
    assert os.listdir(tmp_path) == ["summary.json"]


def test_write_json_atomic_replaces_a_whole_file_and_a_stale_partial(tmp_path):
    path = tmp_path / "summary.json"
    path.write_text('{"old": true}\n')
    (tmp_path / ("summary.json" + summary.PARTIAL)).write_text("{half")  # a killed writer's leftover
    summary.write_json_atomic(str(path), {"new": True})
    assert json.loads(path.read_text()) == {"new": True}
    assert os.listdir(tmp_path) == ["summary.json"]


def test_write_summary_writes_run_summary_json_in_the_folder(tmp_path):
    summary.write_summary(str(tmp_path), {"command": "index", "complete": True})
    written = tmp_path / summary.SUMMARY_FILE
    assert json.loads(written.read_text()) == {"command": "index", "complete": True}
    assert written.read_text() == '{\n  "command": "index",\n  "complete": true\n}\n'
