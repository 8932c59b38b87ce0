"""Shared fixtures: the bundled samples and a CLI runner pinned to Beam's local (FnApiRunner) engine."""

from __future__ import annotations

import glob
import logging
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from incoherent.pipelines import cli

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
IN_PROCESS = ["--runner", "DirectRunner"]
MULTI_PROCESS = [
    "--runner",
    "DirectRunner",
    "--direct_running_mode=multi_processing",
    "--direct_num_workers=2",
]

# The longest test files, handed out first by `--dist loadfile` (xdist otherwise orders files by their number of
# tests, so the two-test multi-host file, about 15 min, came last and the step ended on it alone): one worker
# starts each while the other works through the rest. Files not selected are simply not in the queue.
LONGEST_FIRST = ("tests/e2e/test_hosts.py", "tests/e2e/test_flink_build.py", "tests/e2e/test_flink_faults.py")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile`` with :data:`LONGEST_FIRST` at the head of the queue; any other mode as xdist makes it."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class LongestFirst(LoadFileScheduling):
        def _assign_work_unit(self, node):
            for path in reversed(LONGEST_FIRST):
                if path in self.workqueue:
                    self.workqueue.move_to_end(path, last=False)
            super()._assign_work_unit(node)

    return LongestFirst(config, log)


def run_cli(*args: str, beam: list[str] | None = None) -> int:
    """Run the ``incoherent`` CLI in-process with an explicit runner."""
    return cli.main([str(a) for a in args] + (IN_PROCESS if beam is None else beam))


def read_rows(directory: str | os.PathLike, config: str) -> list[dict]:
    """All rows of one output config, in file order (files sorted by name)."""
    files = sorted(glob.glob(os.path.join(directory, config, "*.parquet")))
    return [row for f in files for row in pq.read_table(f).to_pylist()]


def file_bytes(directory: str | os.PathLike) -> dict[str, bytes]:
    """Every Parquet file under a directory, by relative path, for byte-for-byte comparisons."""
    out = {}
    for f in sorted(glob.glob(os.path.join(directory, "**", "*.parquet"), recursive=True)):
        out[os.path.relpath(f, directory)] = Path(f).read_bytes()
    return out


@pytest.fixture(scope="session")
def samples() -> Path:
    return SAMPLES


@pytest.fixture(autouse=True)
def _beams_log_level_restored():
    """``--quiet`` sets Beam's loggers to ERROR for the rest of the process (a command runs once per process);
    a test that runs the CLI in-process must not pass that on to the next test of its worker."""
    beam = logging.getLogger("apache_beam")
    level = beam.level
    yield
    beam.setLevel(level)
