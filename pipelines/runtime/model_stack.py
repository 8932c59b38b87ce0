"""The model stack (torch, transformers, tokenizers, safetensors) is an optional extra, ``incoherent[models]``.

Building corpora (ingest, index, neighbours, unfiltered intruders, shuffle, card, publish, annotate) needs none
of it. A command that does (``score-shuffle``, ``train-filter``, ``evaluate``, ``finetune-lm``,
``train-shuffle``, ``intruders`` and ``build`` with a model filter) calls :func:`require_model_stack` before any
work, and stops with one line when the extra is not installed::

    error: incoherent score-shuffle needs the model stack: pip install 'incoherent[models]'

The check finds the modules without importing them (importing torch takes seconds).
"""

from __future__ import annotations

import importlib.util

from schemas.records import InputError

MODEL_STACK = ("torch", "transformers", "tokenizers", "safetensors")
INSTALL = "pip install 'incoherent[models]'"


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
        raise InputError(f"incoherent {command} needs the model stack{because}: {INSTALL}")
