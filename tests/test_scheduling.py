"""The suite's own scheduling: ``--dist loadfile`` hands the longest end-to-end files out first (tests/conftest.py)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import LONGEST_FIRST, ROOT

RECORD = """
import fcntl, os

def pytest_runtest_call(item):
    with open(os.environ["ORDER_LOG"], "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.write(f"{os.environ['PYTEST_XDIST_WORKER']} {item.nodeid}\\n")
"""


def test_the_longest_file_is_the_first_its_worker_runs(tmp_path):
    """Without the hook xdist orders files by their number of tests, so a one-test file comes after a five- and a
    four-test file on its worker; with it, the first of LONGEST_FIRST is the first test of a worker."""
    longest = LONGEST_FIRST[0]
    (tmp_path / longest).parent.mkdir(parents=True)
    (tmp_path / longest).write_text("def test_long():\n    pass\n")
    for name, count in (("test_a.py", 5), ("test_b.py", 4)):
        (tmp_path / "tests" / name).write_text("".join(f"def test_{k}():\n    pass\n" for k in range(count)))
    (tmp_path / "tests" / "conftest.py").write_text(
        "from tests_conftest import LONGEST_FIRST, pytest_xdist_make_scheduler  # noqa: F401\n" + RECORD
    )
    (tmp_path / "tests_conftest.py").write_text((ROOT / "tests" / "conftest.py").read_text())
    log = tmp_path / "order.log"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            "-n",
            "2",
            "--dist",
            "loadfile",
            "-c",
            "/dev/null",
            "--rootdir",
            str(tmp_path),
            "tests",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "ORDER_LOG": str(log), "PYTHONPATH": f"{tmp_path}:{ROOT}"},
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    runs = [line.split(" ", 1) for line in log.read_text().splitlines()]
    assert len(runs) == 10
    first_of = {}
    for worker, nodeid in runs:
        first_of.setdefault(worker, nodeid)
    assert f"{longest}::test_long" in first_of.values(), runs
