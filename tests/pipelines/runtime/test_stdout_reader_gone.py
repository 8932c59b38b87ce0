"""A reader of stdout that goes away (issue #53, item 15): ``incoherent ingest text ... | head -0`` printed a
``BrokenPipeError`` traceback and exited 1. Now every command ends without a word and with exit status 141
(128 + SIGPIPE, what ``yes | head`` gives), its files written as usual (``pipelines/runtime/stdout.py``).

Each command's stdout is a pipe whose reading end is already closed: the first write fails for certain (no
race with a ``head`` that may or may not have left yet).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT, SAMPLES


def run_into_closed_pipe(*argv: str, cwd=ROOT) -> subprocess.CompletedProcess:
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        return subprocess.run(
            [sys.executable, "-m", "incoherent", *argv],
            stdout=write_end, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd, timeout=300,
        )  # fmt: skip
    finally:
        os.close(write_end)


def test_ingest_into_a_pipe_nobody_reads_is_quiet_and_complete(tmp_path):
    out = tmp_path / "docs"
    done = run_into_closed_pipe("ingest", "text", str(SAMPLES / "wsj" / "wsj.jsonl"), "--out", str(out))
    assert done.returncode == 141, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr[-3000:]
    assert json.loads((out / "run_summary.json").read_text())["complete"] is True


@pytest.mark.parametrize(
    "argv",
    [["completion", "bash"], ["completion", "zsh"], ["completion", "tcsh"]],
    ids=" ".join,
)
def test_printing_commands_into_a_pipe_nobody_reads_are_quiet(argv):
    done = run_into_closed_pipe(*argv)
    assert done.returncode == 141, done.stderr[-3000:]
    assert done.stderr == "", done.stderr[-3000:]


@pytest.mark.parametrize(
    "argv",
    [["--help"], ["ingest", "text", "--help"], ["--version"], [], ["annotate"]],
    ids=lambda argv: " ".join(argv) or "no command",
)
def test_help_into_a_pipe_nobody_reads_is_quiet(argv):
    """argparse prints the help and the version and ignores a failed write itself (its ``_print_message``
    catches ``OSError``): quiet, with argparse's own status 0."""
    done = run_into_closed_pipe(*argv)
    assert done.returncode == 0 and done.stderr == "", done.stderr[-3000:]


def test_a_broken_pipe_that_is_not_stdout_is_not_hidden(tmp_path):
    """Only a reader of stdout that left is taken for ``| head``: stdout a file, the same error raised by the
    command is reported as it was (a traceback, status 1)."""
    from incoherent.pipelines.runtime import stdout

    with open(tmp_path / "out.txt", "w") as f:
        code = (
            "import sys; sys.argv = ['incoherent', 'completion', 'bash']\n"
            "import incoherent.pipelines.cli as cli\n"
            "def broken(argv=None): raise BrokenPipeError(32, 'a worker pipe')\n"
            "from incoherent.__main__ import main\n"
            "sys.exit(main(cli=broken))\n"
        )
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        done = subprocess.run(
            [sys.executable, "-c", code], stdout=f, stderr=subprocess.PIPE, text=True, env=env
        )
    assert done.returncode == 1 and "BrokenPipeError: [Errno 32] a worker pipe" in done.stderr, done.stderr
    assert stdout.STATUS == 141
