"""Real builds shared by every test of a run, each built once per run (not once per pytest-xdist worker).

The first process that needs a build takes a lock (``fcntl.flock``) on a file beside the shared folder,
builds into that folder and writes ``shared.json`` there; the others wait on the lock and read the folder. The
folder is under the run's base temporary directory: under xdist its parent, which every worker of the run
shares (pytest-xdist's documented pattern for session fixtures). Tests only read a shared build; a test that
writes into one works on its own copy.

- :func:`wikipedia_build` (the card and publish tests): Wikipedia only (a 2022 minidump, its 2019 version as
  history), built with ``incoherent build`` from a config in a temporary folder.
- :func:`quickstart_build` (the docs, the pinned output bytes, the light install): the Quickstart's
  ``incoherent build``, in a subprocess that cannot import the model stack.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import yaml

from tests.conftest import ROOT, run_cli
from tests.no_model_stack import env_without_model_stack

_BUILT: dict[str, object] = {}

CONFIG = {
    "base": str(ROOT),
    "seed": 0,
    "sources": {
        "wikipedia": {
            "kind": "wikipedia",
            "inputs": ["samples/wikipedia/2022-08-24_minidumps-en_3def73f3.xml.bz2"],
            "history": ["samples/wikipedia/history/2019-08-16_minidumps-en_89657c7a.xml.bz2"],
        }
    },
    "shuffle": {"block_sizes": [1, 3]},
    "card": {"name": "Wikipedia intruders (test build)"},
}


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
    returned facts (JSON) kept in ``FOLDER/shared.json``; every later call, in any worker, reads them. A
    ``make`` that raised leaves no ``shared.json``: the next caller builds again (and fails the same way)."""
    if name not in _BUILT:
        folder = run_root(tmp_path_factory) / f"shared-{name}"
        with _locked(folder.with_name(folder.name + ".lock")):
            facts = folder / "shared.json"
            if not facts.exists():
                shutil.rmtree(folder, ignore_errors=True)
                folder.mkdir()
                made = make(folder)
                facts.write_text(json.dumps(made))
            _BUILT[name] = (folder, json.loads(facts.read_text()))
    return _BUILT[name]


def _build_wikipedia(root: Path) -> dict:
    config = root / "build.yaml"
    config.write_text(yaml.safe_dump(CONFIG))
    assert run_cli("build", config, "--out", root / "out") == 0
    return {}


def wikipedia_build(tmp_path_factory) -> Path:
    """The build's output folder (``OUT``); ``OUT/dataset`` holds the card, figures and tables."""
    root, _ = shared(tmp_path_factory, "wikipedia-build", _build_wikipedia)
    return root / "out"


class Built(subprocess.CompletedProcess):
    """A finished build process, with the environment it ran in."""

    env: dict


def quickstart_build(tmp_path_factory) -> tuple[Path, Built]:
    """``(OUT, the process)`` of the Quickstart's ``incoherent build --out OUT``, run from the checkout in a
    fresh interpreter that cannot import the model stack (:mod:`tests.no_model_stack`). Check its return code
    where it is used: a failed build fails each test that uses it, with its stderr."""
    root, facts = shared(tmp_path_factory, "quickstart", _build_quickstart)
    result = Built(facts["args"], facts["returncode"], facts["stdout"], facts["stderr"])
    result.env = facts["env"]
    return root / "out" / "sample", result


def _build_quickstart(root: Path) -> dict:
    env = env_without_model_stack(root / "no-model-stack")
    out = root / "out" / "sample"
    done = subprocess.run(
        [sys.executable, "-m", "incoherent.pipelines.cli", "build", "--out", str(out), "--quiet"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    return {"args": done.args, "returncode": done.returncode, "stdout": done.stdout, "stderr": done.stderr,
            "env": env}  # fmt: skip
