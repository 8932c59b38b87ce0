"""Where a model comes from: a local directory, or a Hugging Face Hub name already in the local cache.

Every command that takes a model (``score-shuffle``, ``train-filter``, ``finetune-lm``, ``train-shuffle``,
``evaluate``, ``intruders --filter``) passes it through :func:`resolve_model` first, so a name that
``from_pretrained`` would find offline (``gpt2``, ``FacebookAI/roberta-large``) is accepted everywhere, and
what is loaded is always a local folder that the model checks (:mod:`filters.model_files`) can read before
anything is allocated. Nothing is ever downloaded: a name not in the cache is one line naming the option.

The cache is Hugging Face's layout, found as ``huggingface_hub`` finds it (``HF_HUB_CACHE``, else
``HF_HOME/hub``, else ``XDG_CACHE_HOME/huggingface/hub``, else ``~/.cache/huggingface/hub``)::

    models--openai-community--gpt2/refs/main              the commit hash of the cached revision
    models--openai-community--gpt2/snapshots/<hash>/...   its files (links into blobs/)
"""

from __future__ import annotations

import os
import re

from incoherent.schemas.records import InputError

# A Hub repository id: NAME or ORG/NAME, as huggingface_hub's validate_repo_id accepts them.
REPO_ID = re.compile(r"^(?:[A-Za-z0-9][A-Za-z0-9_.-]{0,95}/)?[A-Za-z0-9][A-Za-z0-9_.-]{0,95}$")


def hub_cache_dir() -> str:
    """The local Hugging Face Hub cache, read from the environment now (not when a library was imported)."""
    for variable in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if os.environ.get(variable):
            return os.path.expanduser(os.environ[variable])
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join("~", ".cache"), "huggingface"
    )
    return os.path.join(os.path.expanduser(home), "hub")


def cached_snapshot(name: str) -> str | None:
    """The snapshot folder of Hub model ``name`` at its cached ``main`` revision, or None (never downloads).

    >>> cached_snapshot("../etc") is None  # not a repository id: never a path into the cache
    True
    """
    if not REPO_ID.match(name) or ".." in name or "--" in name:
        return None
    repo = os.path.join(hub_cache_dir(), "models--" + name.replace("/", "--"))
    try:
        with open(os.path.join(repo, "refs", "main"), encoding="utf-8") as f:
            commit = f.read(100).strip()
    except OSError:
        return None
    if not re.fullmatch(r"[0-9a-f]{40}", commit):
        return None
    snapshot = os.path.join(repo, "snapshots", commit)
    return snapshot if os.path.isdir(snapshot) else None


def is_remote(path: str) -> bool:
    return "://" in path


def resolve_model(name_or_path: str, option: str) -> str:
    """The local folder of a model given as a directory or as a Hub name in the local cache.

    A remote folder (``gs://``) is returned as it is; an existing directory is itself; a path that does not
    exist, or a name the cache does not hold, is one :class:`InputError` line naming ``option``.
    """
    if is_remote(name_or_path) or os.path.isdir(name_or_path):
        return name_or_path
    looks_like_path = name_or_path.startswith(("/", ".", "~")) or os.path.exists(name_or_path)
    snapshot = None if looks_like_path else cached_snapshot(name_or_path)
    if snapshot is not None:
        return snapshot
    if looks_like_path or not REPO_ID.match(name_or_path):
        raise InputError(f"{option} {name_or_path}: no such model directory")
    raise InputError(
        f"{option} {name_or_path}: no such model directory, and no Hub model of that name in the local "
        f"Hugging Face cache ({hub_cache_dir()}); nothing is downloaded: give the folder of a model saved with "
        f"save_pretrained (copied from a machine with Hub access), or copy such a machine's Hugging Face "
        f"cache here and set HF_HOME (or HF_HUB_CACHE) to it, or fetch it (hf download {name_or_path}); "
        f"see docs/install.md#models-without-the-hub"
    )
