"""Something made once per test run and shared by every process of it (every pytest-xdist worker): the sample
builds (:mod:`tests.sample_build`), the tiny models (:mod:`tests.tiny_model`, :mod:`tests.tiny_lm`).

The first process that asks takes a lock (``fcntl.flock``) on a file beside the shared folder, makes the thing
in that folder and writes ``FOLDER.json`` beside it last; the others wait on the lock, then read. The folder is in
the run's base temporary directory, or under xdist in its parent, which every worker of the run shares
(pytest-xdist's pattern for session fixtures). No pytest import: the builders also serve the GPU suite.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

_SHARED: dict[str, tuple[Path, dict]] = {}


def run_root(tmp_path_factory) -> Path:
    """The folder every process of this test run shares: the base temp directory, or under pytest-xdist its
    parent (each worker has its own base directory beneath it)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)  # released when the file is closed, and by the kernel if we die
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def shared(tmp_path_factory, name: str, make: Callable[[Path], dict]) -> tuple[Path, dict]:
    """``(FOLDER, facts)``: ``make(FOLDER)`` run once per test run, by whichever process asks first, its
    returned facts (JSON) kept in ``FOLDER.json``; every later call, in any worker, reads them. A ``make``
    that raised leaves no ``FOLDER.json``: the next caller makes it again (and fails the same way)."""
    if name not in _SHARED:
        folder = run_root(tmp_path_factory) / f"shared-{name}"
        with _locked(folder.with_name(folder.name + ".lock")):
            facts = folder.with_name(folder.name + ".json")  # beside it: the folder holds only what make made
            if not facts.exists():
                shutil.rmtree(folder, ignore_errors=True)
                folder.mkdir()
                made = make(folder)
                facts.write_text(json.dumps(made))
            _SHARED[name] = (folder, json.loads(facts.read_text()))
    return _SHARED[name]
