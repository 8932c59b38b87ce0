"""Reading and writing an index's files (``.npz`` + JSON) through an :data:`Opener`: the local disk by default,
Beam's filesystems (gs://, s3://) in the pipelines; ``.npz`` read without pickle, every error one line.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from typing import BinaryIO

import numpy as np
import scipy.sparse as sp

from incoherent.fileio.paths import is_remote
from incoherent.schemas.records import InputError

# ``opener(path, "rb" | "wb")`` -> a binary file; raises FileNotFoundError for a missing file. The default
# is the local disk; the pipelines pass one that goes through Beam's filesystems (gs://, s3://).
Opener = Callable[[str, str], BinaryIO]


def local_open(path: str, mode: str = "rb") -> BinaryIO:
    """The default :data:`Opener`: the local disk (parent folders created for writing)."""
    if "w" in mode:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    return open(path, mode)  # noqa: SIM115 - the caller closes it


def join(path: str, name: str) -> str:
    return f"{path.rstrip('/')}/{name}" if is_remote(path) else os.path.join(path, name)


def write_seekable(f: BinaryIO, fill: Callable[[BinaryIO], None]) -> None:
    """``fill(f)``, through a local temporary file when ``f`` cannot seek (a remote upload stream).

    ``.npz`` files are zip archives, whose bytes differ when written to an unseekable stream; through a
    seekable file they are the same everywhere, and no copy of a large matrix is held in memory.
    """
    seekable = getattr(f, "seekable", None)
    if seekable is not None and seekable():
        fill(f)
        return
    with tempfile.TemporaryFile() as tmp:
        fill(tmp)
        tmp.seek(0)
        shutil.copyfileobj(tmp, f, 16 * 2**20)


# --------------------------------------------------------------------------------------------- safe .npz reading


NPZ_ERRORS = (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zipfile.LargeZipFile)


def load_arrays(path: str, names: Sequence[str], opener: Opener = local_open) -> dict[str, np.ndarray]:
    """Arrays ``names`` of an ``.npz`` file, never unpickling; InputError for a missing or corrupt file."""
    try:
        with opener(path, "rb") as f, np.load(f, allow_pickle=False) as npz:
            return {name: npz[name] for name in names}
    except FileNotFoundError:
        raise InputError(f"{path}: missing index file (rebuild the index with `incoherent index`)") from None
    except NPZ_ERRORS as exc:
        raise InputError(f"{path}: corrupt or truncated .npz ({type(exc).__name__}: {exc})") from None


def load_matrix(path: str, shape: tuple[int, int], opener: Opener = local_open) -> sp.csr_matrix:
    arrays = load_arrays(path, ("format", "shape", "data", "indices", "indptr"), opener)
    if arrays["format"].item() not in ("csr", b"csr") or tuple(arrays["shape"]) != shape:
        raise InputError(
            f"{path}: expected a csr matrix of shape {shape}, found {arrays['format']} {tuple(arrays['shape'])}"
        )
    try:
        matrix = sp.csr_matrix((arrays["data"], arrays["indices"], arrays["indptr"]), shape=shape)
        matrix.check_format(full_check=False)
    except ValueError as exc:
        raise InputError(f"{path}: inconsistent sparse matrix ({exc})") from None
    return matrix
