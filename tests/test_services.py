"""A test run ended with SIGTERM (CI's timeout, a killed job) leaves none of the services of
:mod:`tests.services` running: a pytest process that uses the ``services`` fixture is sent SIGTERM while the
GCS emulator, Beam's job service and the worker pool run, and every process they started must be gone."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

from tests.conftest import ROOT

INNER = """
import json, os, time

import psutil

from tests.services import services_fixture  # noqa: F401 - the `services` fixture


def test_hold_the_services(services):
    processes = [child.pid for child in psutil.Process().children(recursive=True)]
    groups = sorted({os.getpgid(pid) for pid in processes} - {os.getpgid(0)})
    path = os.environ["INCOHERENT_TEST_PIDS"]
    with open(path + ".tmp", "w") as f:
        json.dump({"processes": processes, "groups": groups}, f)
    os.replace(path + ".tmp", path)
    time.sleep(600)  # until the SIGTERM
"""


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return any(alive(p.pid) for p in psutil.process_iter() if _pgid(p.pid) == pgid)


def _pgid(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return None


@pytest.mark.e2e
def test_sigterm_leaves_no_service_running(tmp_path):
    (tmp_path / "test_inner.py").write_text(INNER)
    pids = tmp_path / "pids.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT), INCOHERENT_TEST_PIDS=str(pids))
    runner = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_inner.py"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.time() + 240
        while not pids.exists():
            assert runner.poll() is None, runner.stdout.read().decode()[-3000:]
            assert time.time() < deadline, "the services did not start in 240 s"
            time.sleep(0.5)
        started = json.loads(pids.read_text())
        assert len(started["groups"]) == 3 and all(alive(p) for p in started["processes"])
        runner.send_signal(signal.SIGTERM)
        runner.wait(60)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
    assert runner.returncode == -signal.SIGTERM
    survivors = [p for p in started["processes"] if alive(p)]
    groups = [g for g in started["groups"] if group_alive(g)]
    for pid in survivors:  # clean up after a failure, so that it is reported once
        psutil.Process(pid).kill()
    assert survivors == [] and groups == []
