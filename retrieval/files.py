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


# --------------------------------------------------------------------------------------------- row ranges of a matrix


class NpzRanges:
    """Ranges of the members of an uncompressed ``.npz`` (``np.savez``, ``sp.save_npz(compressed=False)``), read
    with a seek and a read each: nothing but the zip's directory, the ``.npy`` headers and the ranges asked for
    is read, so a worker that needs rows ``a:b`` of a 6M-row matrix reads those rows' bytes only.

    ``f`` must be seekable (a local file, or the stream of Beam's filesystems for ``gs://`` / ``s3://``, whose
    seeks become ranged reads). ``entries_read`` counts the array entries read (tests check it)."""

    def __init__(self, f: BinaryIO, path: str):
        self._f, self._path = f, path
        self._members: dict[str, tuple[int, np.dtype, tuple[int, ...]]] = {}
        self.entries_read = 0
        try:
            with zipfile.ZipFile(f) as archive:
                infos = archive.infolist()
            for info in infos:
                if not info.filename.endswith(".npy"):
                    continue
                if info.compress_type != zipfile.ZIP_STORED:
                    raise ValueError(f"member {info.filename} is compressed (rows cannot be read by range)")
                f.seek(info.header_offset)
                local = f.read(30)
                if len(local) != 30 or local[:4] != b"PK\x03\x04":
                    raise ValueError(f"member {info.filename}: bad local header")
                f.seek(
                    info.header_offset
                    + 30
                    + int.from_bytes(local[26:28], "little")
                    + int.from_bytes(local[28:30], "little")
                )
                version = np.lib.format.read_magic(f)
                read_header = (
                    np.lib.format.read_array_header_1_0
                    if version == (1, 0)
                    else np.lib.format.read_array_header_2_0
                )
                shape, fortran, dtype = read_header(f)
                if fortran or dtype.hasobject:
                    raise ValueError(f"member {info.filename}: not a plain C-order array")
                self._members[info.filename[:-4]] = (f.tell(), dtype, shape)
        except NPZ_ERRORS as exc:
            raise InputError(f"{path}: corrupt or truncated .npz ({type(exc).__name__}: {exc})") from None

    def shape(self, name: str) -> tuple[int, ...]:
        return self._member(name)[2]

    def _member(self, name: str):
        if name not in self._members:
            raise InputError(f"{self._path}: no array {name!r} (rebuild the index with `incoherent index`)")
        return self._members[name]

    def read(self, name: str, start: int, stop: int) -> np.ndarray:
        """Entries ``start:stop`` of the 1-d array ``name``."""
        offset, dtype, shape = self._member(name)
        if not (0 <= start <= stop <= (shape[0] if shape else 1)):
            raise InputError(f"{self._path}: {name}[{start}:{stop}] is outside its {shape} entries")
        n = stop - start
        self._f.seek(offset + start * dtype.itemsize)
        raw = self._f.read(n * dtype.itemsize)
        if len(raw) != n * dtype.itemsize:
            raise InputError(f"{self._path}: truncated (array {name!r})")
        self.entries_read += n
        return np.frombuffer(raw, dtype, n).copy() if n else np.zeros(0, dtype)

    def scalar(self, name: str) -> np.ndarray:
        offset, dtype, shape = self._member(name)
        self._f.seek(offset)
        count = int(np.prod(shape)) if shape else 1
        raw = self._f.read(count * dtype.itemsize)
        return np.frombuffer(raw, dtype, count).reshape(shape)


class MatrixRows:
    """Row ranges of an index's ``tfidf.npz`` (CSR), read without loading the matrix (:class:`NpzRanges`).

    ``ranges_read`` lists the row ranges whose entries were read (``indptr`` entries aside): a cell worker
    reads its two tiles' rows and nothing else."""

    def __init__(self, f: BinaryIO, path: str, shape: tuple[int, int]):
        self.npz = NpzRanges(f, path)
        fmt = self.npz.scalar("format").item()
        found = tuple(int(x) for x in self.npz.scalar("shape"))
        if fmt not in ("csr", b"csr") or found != tuple(shape):
            raise InputError(f"{path}: expected a csr matrix of shape {tuple(shape)}, found {fmt} {found}")
        if self.npz.shape("indptr") != (shape[0] + 1,):
            raise InputError(f"{path}: inconsistent sparse matrix (indptr of {self.npz.shape('indptr')})")
        self.path, self.num_rows, self.num_features = path, shape[0], shape[1]
        self.ranges_read: list[tuple[int, int]] = []

    def indptr(self, first: int, stop: int) -> np.ndarray:
        """``indptr[first:stop + 1]`` (int64, absolute positions)."""
        return self.npz.read("indptr", first, stop + 1).astype(np.int64)

    def rows(self, first: int, stop: int, indptr: np.ndarray | None = None, data: bool = True):
        """``(indptr, indices, data)`` of rows ``first:stop``, ``indptr`` from 0 (int64, int32, float32; data
        None when not asked for). ``indptr``: :meth:`indptr` of these rows, when already read."""
        if indptr is None:
            indptr = self.indptr(first, stop)
        lo, hi = int(indptr[0]), int(indptr[-1])
        if np.any(np.diff(indptr) < 0) or hi > self.npz.shape("indices")[0]:
            raise InputError(f"{self.path}: inconsistent sparse matrix (indptr of rows {first}:{stop})")
        indices = self.npz.read("indices", lo, hi).astype(np.int32, copy=False)
        values = self.npz.read("data", lo, hi).astype(np.float32, copy=False) if data else None
        if len(indices) and (indices.min() < 0 or indices.max() >= self.num_features):
            raise InputError(
                f"{self.path}: inconsistent sparse matrix (feature out of range in rows {first}:{stop})"
            )
        self.ranges_read.append((first, stop))
        return indptr - lo, indices, values
