"""Ctrl-C and ``kill`` (SIGTERM: a batch scheduler's stop, ``docker stop``, CI's timeout) ends every command the same way:
exit status 130 or 143, one line, the ``--out`` lock let go, no run summary (a stopped run is never presented as
complete). Real processes, signalled while their pipeline runs: a test hook of :func:`run_pipeline` (``INCOHERENT_TEST_PAUSE_FILE``)
holds the pipeline inside a transform until the signal comes, so a corpus of 50 records is enough."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import ROOT


def _corpus(path, n: int = 50) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            text = f"Document {i} opens here. It goes on for a while. It ends on its own sentence number {i}."
            f.write(json.dumps({"id": f"d{i}", "text": text}) + "\n")


def _wait_for(path, process, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not os.path.exists(path):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


@pytest.mark.e2e  # a signal test
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["kill", "ctrl-c"])
def test_a_signal_stops_a_pipeline_command_with_one_line(tmp_path, signum):
    """Inside a transform, too: Beam re-raises what a transform raised with its step's name, and Python's own
    KeyboardInterrupt (no message) came out of that as a RuntimeError and a traceback."""
    corpus, out = tmp_path / "corpus.jsonl", tmp_path / "out"
    _corpus(corpus)
    command = [sys.executable, "-m", "incoherent.pipelines.cli", "ingest", "text", str(corpus), "--out", str(out),
               "--quiet", "--runner", "DirectRunner"]  # fmt: skip
    paused = tmp_path / "paused"  # the pipeline's test hook (pipelines/runtime/run.py) creates it, then waits
    env = dict(os.environ, INCOHERENT_TEST_PAUSE_FILE=str(paused))
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        _wait_for(paused, process)  # the pipeline runs: a transform of it waits for the signal
        process.send_signal(signum)
        stdout, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 128 + signum, (stdout, stderr[-3000:])
    assert stderr.strip().splitlines()[-1] == "interrupted" and "Traceback" not in stderr, stderr[-3000:]
    assert not (out / ".incoherent-build.lock").exists()
    assert not (out / "run_summary.json").exists()
    # the folder is usable at once: the same command runs to the end there
    again = subprocess.run([*command, "--overwrite"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-3000:]
    assert json.loads((out / "run_summary.json").read_text())["complete"] is True


def test_sigterm_handler_is_only_the_commands_own(monkeypatch):
    """In-process (a test harness, a notebook) the CLI sets SIGTERM only while the command runs and puts the
    default back; a handler the caller set is kept as it is."""
    from incoherent.pipelines import cli
    from incoherent.pipelines.runtime import interrupts

    def harness(signum, frame):  # pragma: no cover - never called
        pass

    seen = []
    monkeypatch.setattr(cli, "_main", lambda argv: seen.append(signal.getsignal(signal.SIGTERM)) or 0)
    previous = signal.signal(
        signal.SIGTERM, signal.SIG_DFL
    )  # this test process's (tests.services may set one)
    try:
        assert cli.main([]) == 0
        assert seen == [interrupts._terminated] and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
        signal.signal(signal.SIGTERM, harness)
        assert cli.main([]) == 0
        assert seen[-1] is harness and signal.getsignal(signal.SIGTERM) is harness
    finally:
        signal.signal(signal.SIGTERM, previous)
