"""Real builds shared by every test of a run, each built once per run (not once per pytest-xdist worker).

:func:`tests.run_once.shared` makes each of them once per run, for every xdist worker. Tests only read a shared
build; a test that writes into one works on its own copy.

- :func:`wikipedia_build` (the card and publish tests): Wikipedia only (a 2022 minidump, its 2019 version as
  history), built with ``incoherent build`` from a config in a temporary folder.
- :func:`quickstart_build` (the docs, the pinned output bytes, the light install): the Quickstart's
  ``incoherent build``, in a subprocess that cannot import the model stack.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from tests.conftest import ROOT, run_cli
from tests.no_model_stack import env_without_model_stack
from tests.run_once import shared

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


def build_wikipedia(root: Path) -> dict:
    """``ROOT/build.yaml`` and its build, ``ROOT/out``: what :func:`wikipedia_build` shares, for a test that
    needs a build of its own."""
    config = root / "build.yaml"
    config.write_text(yaml.safe_dump(CONFIG))
    assert run_cli("build", config, "--out", root / "out") == 0
    return {}


def wikipedia_build(tmp_path_factory) -> Path:
    """The build's output folder (``OUT``); ``OUT/dataset`` holds the card, figures and tables."""
    root, _ = shared(tmp_path_factory, "wikipedia-build", build_wikipedia)
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
