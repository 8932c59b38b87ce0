"""Progress bars: drawn only when stdout is a terminal and --quiet is not given."""

from __future__ import annotations

import io

import pytest

from incoherent.pipelines.runtime import progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture(autouse=True)
def reset():
    yield
    progress.close_all()
    progress.configure(quiet=True)


def test_bars_only_on_a_terminal_and_never_with_quiet():
    assert progress.configure(quiet=False, stream=Terminal()) is True
    assert progress.configure(quiet=True, stream=Terminal()) is False
    assert progress.configure(quiet=False, stream=io.StringIO()) is False


def test_advance_draws_done_of_total_with_a_rate_and_closes_at_the_total(capsys):
    progress.configure(quiet=False, stream=Terminal())
    progress.advance("neighbors: documents", 40, total=100)
    progress.advance("neighbors: documents", 60, total=100)
    err = capsys.readouterr().err
    assert "neighbors: documents" in err and "100/100" in err and "doc/s" in err
    assert "neighbors: documents" not in progress._BARS  # closed at its total


def test_advance_is_silent_when_off(capsys):
    progress.configure(quiet=False, stream=io.StringIO())
    progress.advance("ingest: pages", 5, unit="page", nbytes=1000)
    progress.write("[build] a log line")
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == "[build] a log line\n"


def test_the_cli_build_writes_no_bar_when_stdout_is_not_a_terminal(tmp_path, capsys):
    from tests.conftest import run_cli

    assert run_cli("build", tmp_path / "missing.yaml") == 2  # parses and configures, fails on the config
    assert progress.enabled() is False  # pytest's captured stdout is not a terminal
