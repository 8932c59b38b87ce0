"""Without the model stack (``incoherent[models]``: torch, transformers, tokenizers, safetensors) the commands
that need it stop with one line and exit 2, and building corpora works (``--help`` of every command without it:
``tests/pipelines/test_lazy_imports.py``).

The missing stack is simulated in a subprocess (:mod:`tests.no_model_stack`); the Quickstart build that the tests
of one process share is built that way (:func:`tests.sample_build.quickstart_build`).
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from incoherent.pipelines.runtime.model_stack import MODEL_STACK, install_command, missing_model_stack
from tests.conftest import ROOT
from tests.no_model_stack import BLOCKER, env_without_model_stack
from tests.sample_build import quickstart_build

# What a clone's editable install is told, run from a folder outside the clone (the tests' working folder):
# pip of this very interpreter, and the clone's extra (incoherent is not on PyPI: `pip install
# 'incoherent[models]'` would find nothing).
INSTALL = f"{shlex.quote(sys.executable)} -m pip install -e {shlex.quote(str(ROOT) + '[models]')}"


def test_the_install_command_fits_an_editable_install(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert install_command() == INSTALL
    monkeypatch.chdir(ROOT)  # in the clone: the clone is `.` (as the README writes it)
    python = (
        os.path.relpath(sys.executable)
        if not os.path.relpath(sys.executable).startswith("..")
        else sys.executable
    )
    assert install_command() == f"{shlex.quote(python)} -m pip install -e '.[models]'"


@pytest.fixture(scope="module")
def light_env(tmp_path_factory) -> dict:
    return env_without_model_stack(tmp_path_factory.mktemp("no-model-stack"))


def incoherent(args: list[str], env: dict, cwd) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "incoherent.pipelines.cli", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_blocker_hides_the_stack(light_env, tmp_path):
    code = "from incoherent.pipelines.runtime.model_stack import missing_model_stack; print(missing_model_stack())"
    out = subprocess.run(
        [sys.executable, "-c", code], env=light_env, cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert out.stdout.strip() == repr(list(MODEL_STACK))
    if importlib.util.find_spec("torch") is not None:  # a full install: only the blocker hides the stack
        assert missing_model_stack() == []


@pytest.mark.parametrize(
    "command, args",
    [
        ("score-shuffle", ["score-shuffle", "{model}", "{data}", "--out", "{out}"]),
        ("train-filter", ["train-filter", "{data}", "--base-model", "{model}", "--out", "{out}"]),
        ("evaluate", ["evaluate", "{model}", "{data}"]),
        ("finetune-lm", ["finetune-lm", "{data}", "--base-model", "{model}", "--out", "{out}"]),
        ("train-shuffle", ["train-shuffle", "{data}", "--base-model", "{model}", "--out", "{out}"]),
        ("intruders", ["intruders", "{data}", "--filter", "{model}", "--out", "{out}"]),
    ],
)
def test_model_commands_print_one_line(light_env, tmp_path, command, args):
    model, data = tmp_path / "model", tmp_path / "data"
    model.mkdir()
    data.mkdir()
    argv = [a.format(model=model, data=data, out=tmp_path / "out") for a in args]
    result = incoherent(argv, light_env, tmp_path)
    assert result.returncode == 2, result.stderr
    why = " (--filter)" if command == "intruders" else ""
    assert result.stderr == f"error: incoherent {command} needs the model stack{why}: {INSTALL}\n"
    assert not (tmp_path / "out").exists()


def test_build_with_a_model_filter_prints_one_line(light_env, tmp_path):
    (tmp_path / "model").mkdir()
    config = tmp_path / "filtered.yaml"
    config.write_text(
        f"base: {ROOT}\nout: {tmp_path / 'out'}\nsources:\n  cnn:\n    kind: cnn\n    inputs: [samples/cnn/frank]\n"
        f"intruders:\n  filter: {tmp_path / 'model'}\n"
    )
    result = incoherent(["build", str(config)], light_env, tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr == (
        f"error: incoherent build needs the model stack (intruders.filter in {config}): {INSTALL}\n"
    )


@pytest.mark.e2e
def test_corpora_build_without_the_model_stack(tmp_path_factory):
    """The Quickstart build (ingest, index, neighbours, unfiltered intruders, shuffle, card) never imports the
    model stack: every stage process runs under the blocker (the shared build is made that way)."""
    out, result = quickstart_build(tmp_path_factory)
    assert result.returncode == 0, result.stderr[-3000:]
    blocker = Path(result.env["PYTHONPATH"].split(os.pathsep)[0]) / "sitecustomize.py"
    assert blocker.read_text() == BLOCKER
    dataset = out / "dataset"
    assert (dataset / "README.md").is_file()
    assert sorted(p.name for p in dataset.glob("intruder-*")) == ["intruder-cnn", "intruder-wikipedia"]
    assert sorted(p.name for p in dataset.glob("shuffle-*")) == ["shuffle-cnn", "shuffle-wikipedia"]
