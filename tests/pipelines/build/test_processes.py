"""Direct tests of :mod:`pipelines.build.processes` (a command run in a forked stage process) and of
:func:`pipelines.commands.run_in_process`, which runs it there."""

from __future__ import annotations

import pytest

from incoherent.pipelines import commands
from incoherent.pipelines.build import processes as stage_process
from incoherent.schemas.records import InputError
from tests.conftest import SAMPLES


def test_a_stage_runs_in_its_own_process_and_reports_its_peak_memory(tmp_path):
    out = tmp_path / "docs"
    argv = ["ingest", "cnn", str(SAMPLES / "cnn" / "frank"), "--out", str(out)]
    peak = stage_process.run_isolated(argv, [])
    assert peak > 0
    assert (out / "run_summary.json").exists()


def test_bad_input_in_a_stage_process_is_one_input_error(tmp_path):
    missing = tmp_path / "no-such-stories"
    with pytest.raises(InputError, match="no-such-stories"):
        stage_process.run_isolated(["ingest", "cnn", str(missing), "--out", str(tmp_path / "o")], [])


def test_an_unknown_command_is_refused_in_process():
    with pytest.raises(InputError, match="`nowhere` command is not available"):
        commands.run_in_process(["nowhere"], [])


def test_a_command_runs_in_this_process_without_its_report(tmp_path, capsys):
    out = tmp_path / "docs"
    commands.run_in_process(["ingest", "cnn", str(SAMPLES / "cnn" / "frank"), "--out", str(out)], [])
    assert (out / "run_summary.json").exists()
    assert capsys.readouterr().out == ""  # quiet: the report a command prints is dropped
