"""An interpreter without the model stack (``incoherent[models]``), simulated for a subprocess: a
``sitecustomize`` on its path replaces the path finder with one that does not see those modules, so that
importing them raises ``ModuleNotFoundError`` and ``importlib.util.find_spec`` finds nothing, as in an
interpreter without them (every process of a build loads it: they are fresh interpreters).

The light install itself (a venv without them) is what ``.ci/run`` builds the Quickstart with.
"""

from __future__ import annotations

import os
from pathlib import Path

from incoherent.pipelines.runtime.model_stack import MODEL_STACK
from tests.conftest import ROOT

BLOCKER = f'''import sys
from importlib.machinery import PathFinder


class WithoutModelStack(PathFinder):
    """The path finder, blind to {MODEL_STACK}: `import torch` raises ModuleNotFoundError and
    importlib.util.find_spec("torch") is None, as in an interpreter without incoherent[models]."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name.partition(".")[0] in {tuple(sorted(MODEL_STACK))!r}:
            return None
        return super().find_spec(name, path, target)


sys.meta_path[:] = [WithoutModelStack if finder is PathFinder else finder for finder in sys.meta_path]
'''


def env_without_model_stack(folder: Path) -> dict:
    """This process's environment, with ``folder`` (made to hold the blocker) and the checkout on the path."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(BLOCKER)
    return dict(os.environ, PYTHONPATH=f"{folder}{os.pathsep}{ROOT}")
