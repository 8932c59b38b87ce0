"""The model stack (torch, transformers, tokenizers, safetensors) is an optional extra, ``incoherent[models]``.

Building corpora (ingest, index, neighbours, unfiltered intruders, shuffle, card, publish, annotate) needs none
of it. A command that does (``score-shuffle``, ``train-filter``, ``evaluate``, ``finetune-lm``,
``train-shuffle``, ``intruders`` and ``build`` with a model filter) calls :func:`require_model_stack` before any
work, and stops with one line when the extra is not installed::

    error: incoherent score-shuffle needs the model stack: .venv/bin/python -m pip install -e '.[models]'

The install command is the one that works for how ``incoherent`` was installed (:func:`install_command`): the
clone's extra for an editable install, the extra's pinned requirements otherwise (``incoherent`` is not on
PyPI, so ``pip install 'incoherent[models]'`` would find nothing). The check finds the modules without importing
them (importing torch takes seconds).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import shlex
import sys

from incoherent.schemas.records import InputError

MODEL_STACK = ("torch", "transformers", "tokenizers", "safetensors")


def _shown(path: str) -> str:
    """``path`` relative to the working directory when it lies inside it (``.venv/bin/python``, ``.``)."""
    relative = os.path.relpath(path)
    return relative if not relative.startswith("..") else path


def install_command() -> str:
    """The command that installs the model stack into this interpreter, for how ``incoherent`` was installed.

    An editable install (or a run from a source tree) installs the clone's extra, ``python -m pip install -e
    'CLONE[models]'``; an install from a wheel or a folder installs the extra's pinned requirements, read from
    the installed metadata (``python -m pip install 'torch==2.13.0' ...``). The interpreter is this one, so the
    command works whether or not the venv is activated.
    """
    pip = f"{shlex.quote(_shown(sys.executable))} -m pip install"
    here = os.path.realpath(__file__)
    requirements: list[str] = []
    try:
        dist = importlib.metadata.distribution("incoherent")
        installed = str(getattr(dist, "_path", "")).endswith(".dist-info") and (  # not a clone's egg-info
            os.path.realpath(str(dist.locate_file("incoherent/pipelines/runtime/model_stack.py"))) == here
        )
        requirements = [
            r.split(";", 1)[0].strip()
            for r in dist.requires or []
            if 'extra == "models"' in r.replace("'", '"')
        ]
    except importlib.metadata.PackageNotFoundError:
        installed = False
    if installed and requirements:  # from a wheel or a folder: this module lies in the installed files
        return f"{pip} {' '.join(shlex.quote(r) for r in requirements)}"
    clone = os.path.dirname(os.path.dirname(os.path.dirname(here)))  # an editable install, a source tree
    return f"{pip} -e {shlex.quote(_shown(clone) + '[models]')}"


def missing_model_stack() -> list[str]:
    """The modules of the model stack this interpreter cannot import (``[]`` when it is installed)."""
    missing = []
    for name in MODEL_STACK:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):  # a finder that refuses the module, a half-removed package
            found = False
        if not found:
            missing.append(name)
    return missing


def require_model_stack(command: str, why: str = "") -> None:
    """Raise :class:`InputError` naming ``command`` (``"score-shuffle"``) and, if given, ``why`` (the option
    that asks for a model) when the model stack is missing."""
    if missing_model_stack():
        because = f" ({why})" if why else ""
        raise InputError(f"incoherent {command} needs the model stack{because}: {install_command()}")
