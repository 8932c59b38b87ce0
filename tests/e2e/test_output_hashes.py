"""Output bytes pinned: the default build and a WSJ build write exactly the files in ``output_hashes.json``.

A change that must not change output (a refactoring, a safety check) keeps this test green. A change that
means to change output regenerates the file and says why in its commit::

    INCOHERENT_UPDATE_HASHES=1 python -m pytest tests/e2e/test_output_hashes.py

Run summaries are left out: they hold seconds and peak memory. Every other file a build writes is pinned,
the dataset card and its figures included.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.sample_build import quickstart_build

HASHES = ROOT / "tests" / "data" / "output_hashes.json"
TIMED = {"run_summary.json", "build_summary.json"}
BUILDS = {
    "default": ROOT / "pipelines" / "configs" / "default.yaml",
    "wsj": ROOT / "tests" / "data" / "wsj-build.yaml",
}


def tree_hashes(root: Path) -> dict[str, str]:
    """sha256 of every file under ``root`` but the timed summaries, by relative POSIX path."""
    hashes = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.name not in TIMED:
            hashes[path.relative_to(root).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return hashes


@pytest.mark.e2e
@pytest.mark.parametrize("name", sorted(BUILDS))
def test_build_output_bytes_are_pinned(name, tmp_path, tmp_path_factory):
    if name == "default":  # the Quickstart build the tests share (the default config)
        out, done = quickstart_build(tmp_path_factory)
    else:
        out = tmp_path / name
        command = [
            sys.executable,
            "-m",
            "incoherent.pipelines.cli",
            "build",
            str(BUILDS[name]),
            "--out",
            str(out),
        ]
        command.append("--quiet")
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Warning" not in done.stderr, done.stderr[-3000:]  # --quiet: nothing but errors
    got = tree_hashes(out)
    pinned = json.loads(HASHES.read_text("utf-8")) if HASHES.exists() else {}
    if os.environ.get("INCOHERENT_UPDATE_HASHES") == "1":
        pinned[name] = got
        HASHES.write_text(json.dumps(pinned, indent=1, sort_keys=True) + "\n", "utf-8")
    expected = pinned[name]
    changed = sorted(p for p in set(got) | set(expected) if got.get(p) != expected.get(p))
    assert not changed, f"{len(changed)} files differ from tests/data/output_hashes.json: {changed[:10]}"
