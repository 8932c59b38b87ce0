"""Ctrl-C and ``kill`` at every moment of a command's life (issue #53, item 14): one line, 130 or 143.

Before, a signal in the first tenth of a second (the CLI's modules loading, its parser being built outside the
command's ``try``) printed a ``KeyboardInterrupt`` traceback, and a Ctrl-C while ``build``'s fork server was
importing Beam (seconds 2.5 to 8 of a build) printed the fork server's traceback under the build's
"interrupted" line. Each test has the process stop at a known phase (``INCOHERENT_TEST_PAUSE``: it says
``paused: <phase>`` on stderr and waits) and signals it there: an event, not a guessed sleep. The signal during
a running pipeline is ``tests/pipelines/test_sigterm.py``'s.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time

import pytest

from tests.conftest import ROOT, SAMPLES

pytestmark = pytest.mark.e2e  # signals real processes at each phase of their start

WSJ = SAMPLES / "wsj" / "wsj.jsonl"


class Stderr:
    """A process's stderr read line by line in a thread, so a test waits for a line with a deadline."""

    def __init__(self, process: subprocess.Popen):
        self.lines: queue.Queue = queue.Queue()
        self.seen: list[str] = []
        self.thread = threading.Thread(target=self._read, args=(process.stderr,), daemon=True)
        self.thread.start()

    def _read(self, stream) -> None:
        for line in stream:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def wait_for(self, wanted: str, seconds: float = 120) -> None:
        deadline = time.monotonic() + seconds
        while wanted not in self.seen:
            line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            assert line is not None, f"stderr ended before {wanted!r}: {self.seen}"
            self.seen.append(line)

    def rest(self, seconds: float = 120) -> list[str]:
        self.thread.join(seconds)
        assert not self.thread.is_alive(), "stderr still open"
        while (line := self.lines.get_nowait()) is not None:
            self.seen.append(line)
        return self.seen


def start(argv: list[str], phase: str, module: str = "incoherent", **popen) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "INCOHERENT_TEST_PAUSE": phase}
    command = [sys.executable, "-m", module, *argv]
    return subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True, **popen)


def stopped(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.kill()
    process.wait(60)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "kill"])
@pytest.mark.parametrize(
    ("phase", "module"),
    [("start", "incoherent"), ("parser", "incoherent"), ("parser", "incoherent.pipelines.cli")],
    ids=["loading", "parser", "parser-of-python-m-cli"],
)
def test_a_signal_before_the_command_runs_is_one_line(tmp_path, phase, module, signum):
    out = tmp_path / "out"
    process = start(["ingest", "text", str(WSJ), "--source", "wsj", "--out", str(out)], phase, module)
    try:
        err = Stderr(process)
        err.wait_for(f"paused: {phase}")
        process.send_signal(signum)
        lines = err.rest()
        assert process.wait(60) == 128 + signum, lines
    finally:
        stopped(process)
    assert lines == [f"paused: {phase}", "interrupted"], lines
    assert not out.exists()


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def test_ctrl_c_while_the_fork_server_imports_beam_is_one_line(tmp_path):
    """A terminal's Ctrl-C reaches the whole process group: the build, and its fork server while that imports
    its preload list (``pipelines/build/fork_server.py``). The fork server writes to the same stderr, so
    reading it to its end also waits for the fork server to be gone."""
    out = tmp_path / "build"
    process = start(["build", "--out", str(out), "--quiet"], "preload", start_new_session=True)
    try:
        err = Stderr(process)
        err.wait_for("paused: preload")
        os.killpg(process.pid, signal.SIGINT)
        lines = err.rest()
        assert process.wait(60) == 130, lines
    finally:
        stopped(process)
        deadline = time.monotonic() + 60
        while _group_alive(process.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if _group_alive(process.pid):
            os.killpg(process.pid, signal.SIGKILL)
    assert not any("Traceback" in line or "KeyboardInterrupt" in line for line in lines), lines
    assert lines[-1].startswith("interrupted"), lines
    assert not _group_alive(process.pid), "the fork server outlived the build"
