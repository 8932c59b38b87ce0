"""Paths, local and remote: the one remote-path test (:func:`is_remote`), absolute paths and joins for either,
safe names, local regular files opened without blocking, and input paths expanded (files as given, directories
expanded, clear errors for the rest).

    >>> absolute("gs://bucket/docs"), absolute("/data/../data/docs"), join("gs://b", "x", "y")
    ('gs://bucket/docs', '/data/docs', 'gs://b/x/y')
"""

from __future__ import annotations

import glob
import os
import posixpath
import re
import stat
from typing import BinaryIO, Protocol

from incoherent.errors import InputError

SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
NAME_RULE = "letters, digits, '.', '_', '-'; starting with a letter or digit; at most 64 characters; no '..'"


def is_safe_name(name: object) -> bool:
    """Whether a path may be built from ``name``: :data:`SAFE_NAME` and no ``..``."""
    return isinstance(name, str) and SAFE_NAME.fullmatch(name) is not None and ".." not in name


def check_name(name: object, where: str) -> str:
    """``name`` if it is safe to build a path from (:func:`is_safe_name`), else :class:`InputError`."""
    if not is_safe_name(name):
        raise InputError(f"{where}: name {str(name)!r} is not allowed ({NAME_RULE})")
    return str(name)


def is_remote(path: object) -> bool:
    """True for a URL of a filesystem other than the local one (``gs://b/x``, ``s3://b/x``): the one remote-path
    test. A ``file://`` URL is local.

    >>> is_remote("gs://b/x"), is_remote("s3://b/x"), is_remote("/data/x"), is_remote("file:///data/x")
    (True, True, False, False)
    """
    path = str(path)
    return "://" in path and not path.startswith("file://")


def absolute(path: str) -> str:
    """``path`` made absolute against this process's working directory (remote URLs unchanged): a worker of a
    distributed runner has another working directory, so a path goes into a transform absolute."""
    path = str(path)
    if is_remote(path):
        return path
    return os.path.abspath(os.path.expanduser(path))


def join(base: str, *parts: str) -> str:
    """Join path parts with ``/`` for URLs and ``os.path`` for local paths."""
    return posixpath.join(base, *parts) if is_remote(base) else os.path.join(base, *parts)


class Files(Protocol):
    """What the logic packages need of a filesystem: input expansion, input descriptions
    (:mod:`corpora.provenance`) and the dataset card (:mod:`corpora.card`). The one interface: the local disk
    here (:class:`LocalFiles`), Beam's filesystems in :class:`pipelines.runtime.storage.BeamFiles`."""

    def isdir(self, path: str) -> bool: ...

    def isfile(self, path: str) -> bool: ...

    def files_under(self, path: str) -> list[str]: ...

    def glob(self, pattern: str) -> list[str]: ...  # sorted; ``**`` crosses folders

    def size(self, path: str) -> int: ...

    def open(self, path: str) -> BinaryIO: ...  # binary reads; the caller closes it


class LocalFiles:
    """:class:`Files` of the local disk."""

    def isdir(self, path: str) -> bool:
        return os.path.isdir(path)

    def isfile(self, path: str) -> bool:
        return os.path.isfile(path)

    def files_under(self, path: str) -> list[str]:
        return [os.path.join(root, f) for root, _, files in os.walk(path) for f in files]

    def glob(self, pattern: str) -> list[str]:
        return sorted(glob.glob(pattern, recursive=True))

    def size(self, path: str) -> int:
        return os.path.getsize(path)

    def open(self, path: str) -> BinaryIO:
        return open_regular(path)  # the caller closes it


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words: ``stat.S_IFIFO`` -> ``"a FIFO"``."""
    for test, kind in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a directory"),
    ):
        if test(mode):
            return kind
    return "not a regular file"


def check_regular(path: str) -> None:
    """InputError unless the local ``path`` is (a link to) a regular file: FIFOs, devices (``/dev/zero``),
    sockets and dangling links are never opened (reading them hangs or never ends)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        if os.path.lexists(path):
            raise InputError(f"{path}: dangling symbolic link (its target does not exist)") from None
        raise InputError(f"{path}: no such file or directory") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot be read ({exc.strerror})") from None
    if not stat.S_ISREG(mode):
        raise InputError(f"{path}: {file_kind(mode)}, not a regular file; only regular files are read")


def open_regular(path: str) -> BinaryIO:
    """Open a local regular file for reading, or raise InputError (never blocks on a FIFO).

    The file is opened without blocking and checked on its descriptor, so a FIFO swapped in after a check
    is refused too.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        check_regular(path)  # says whether it is a dangling link
        raise
    except OSError as exc:
        raise InputError(f"{path}: cannot be read ({exc.strerror})") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise InputError(f"{path}: {file_kind(mode)}, not a regular file; only regular files are read")
    if hasattr(os, "set_blocking"):
        os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def expand_inputs(
    paths: list[str],
    in_directories: tuple[str, ...],
    as_files: tuple[str, ...],
    expected: str,
    files: Files | None = None,
) -> list[str]:
    """Files to read, in the given order, each directory replaced by its matching files (recursive, sorted).

    ``in_directories``: suffixes picked up inside directories; ``as_files``: suffixes accepted when a file is
    named directly; ``expected``: what to say when a named file does not fit; ``files``: the filesystem
    (default: the local disk).
    """
    files = files or LocalFiles()
    inputs: list[str] = []
    for path in paths:
        local = not is_remote(path)
        if files.isdir(path):
            found = sorted(f for f in files.files_under(path) if f.endswith(in_directories))
            if not found:
                raise InputError(f"{path}: directory holds no {' or '.join(in_directories)} files")
            for name in found if local else ():
                check_regular(name)
            inputs.extend(found)
        elif files.isfile(path):
            if not path.endswith(as_files):
                raise InputError(f"{path}: unsupported file type (expected {expected})")
            inputs.append(path)
        else:
            if local:
                check_regular(path)  # a dangling link, a FIFO, a device: say which
            raise InputError(f"{path}: no such file or directory")
    return inputs


def name_clash(named) -> tuple[str, str, str] | None:
    """The first name two inputs give, as ``(name, first path, second path)``, of ``(name, path)`` pairs; None
    when every name is given once (two inputs whose documents would get the same ids).

    >>> name_clash([("test", "wiki/test.jsonl"), ("cnn", "cnn.jsonl"), ("test", "cnn/test.jsonl")])
    ('test', 'wiki/test.jsonl', 'cnn/test.jsonl')
    """
    seen: dict[str, str] = {}
    for name, path in named:
        if name in seen:
            return name, seen[name], path
        seen[name] = path
    return None
