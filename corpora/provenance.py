"""Provenance of a build for its dataset card: inputs by name, size and sha256, and paths made relative.

A published card must not show the builder's file system. Every path it prints goes through
:func:`relativise`: under the build's output folder it becomes ``OUT/...``; under the config's ``base`` it is
written relative to ``base``, as the config itself names inputs; under the config's own folder, relative to
that folder; anything else is shown by file name only.

>>> roots = {"out": "/b/out", "config_dir": "/b/configs", "base": "/b"}
>>> relativise("/b/out/work/x", roots)
'OUT/work/x'
>>> relativise("/b/samples/dump.xml.bz2", roots)
'samples/dump.xml.bz2'
>>> relativise("--index=wikipedia=/srv/idx", {"out": "/o", "config_dir": "/c", "base": "/c"})
'--index=wikipedia=idx'
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
from collections.abc import Callable
from typing import BinaryIO

from incoherent.fileio.paths import Files, LocalFiles, is_remote
from incoherent.schemas.records import InputError

CHUNK = 1 << 20
# Dump file names carry their date: enwiki-20260801-pages-articles.xml.bz2, 2022-08-24_minidumps-en_3def73f3.xml.bz2
_DATE_COMPACT = re.compile(r"(?<!\d)(20\d{2}|19\d{2})(0[1-9]|1[0-2])([0-3]\d)(?!\d)")
_DATE_DASHED = re.compile(r"(?<!\d)((?:19|20)\d{2})-(0[1-9]|1[0-2])-([0-3]\d)(?!\d)")
_WIKI_PREFIX = re.compile(r"^([a-z_\-]+wiki(?:[a-z]+)?)-")


def sha256_file(path: str, opener: Callable[[str], BinaryIO] | None = None) -> str:
    """Hex sha256 of a file, read in 1 MiB chunks (bounded memory for dumps of any size)."""
    digest = hashlib.sha256()
    with (opener or _open_local)(path) as f:
        while chunk := f.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _open_local(path: str) -> BinaryIO:
    return open(path, "rb")  # noqa: SIM115 - the caller closes it


def dump_date_from_name(name: str) -> str | None:
    """``"enwiki-20260801-pages-articles.xml.bz2" -> "2026-08-01"``; None when the name holds no date (``latest``)."""
    for pattern in (_DATE_DASHED, _DATE_COMPACT):
        match = pattern.search(name)
        if match:
            return "-".join(match.groups())
    return None


def wiki_from_name(name: str) -> str | None:
    """``"enwiki-latest-pages-articles1.xml..." -> "enwiki"``."""
    match = _WIKI_PREFIX.match(name)
    return match.group(1) if match else None


def describe_input(path: str, kind: str, files: Files | None = None) -> dict:
    """One input of the build: name, size and sha256 (a folder: file count, total size, sha256 over its files).

    For Wikipedia dumps also the wiki (``<siteinfo>``'s ``<dbname>``, else the file name) and the dump date
    (from the file name: dumps carry no date inside). ``files`` reads the input (default: the local disk;
    ``incoherent ingest`` passes Beam's filesystems, so a worker describes a ``gs://`` input where it lies).
    """
    files = files or LocalFiles()
    remote = is_remote(path)
    if not remote and not os.path.exists(path):
        raise InputError(f"{path}: input of the build no longer exists (the card describes every input)")
    name = (
        posixpath.basename(path.rstrip("/")) if remote else os.path.basename(os.path.normpath(path))
    ) or path
    if files.isdir(path):
        root = path.rstrip("/") + "/" if remote else os.path.join(os.path.normpath(path), "")
        found = sorted(
            full[len(root) :] if remote else os.path.relpath(full, path) for full in files.files_under(path)
        )
        digest = hashlib.sha256()
        size = 0
        for rel in found:
            full = root + rel if remote else os.path.join(path, rel)
            size += files.size(full)
            digest.update(f"{rel}\0{sha256_file(full, files.open)}\n".encode())
        info = {"name": name + "/", "files": len(found), "size": size, "sha256": digest.hexdigest()}
        return info
    info = {"name": name, "size": files.size(path), "sha256": sha256_file(path, files.open)}
    if kind == "wikipedia":
        from incoherent.sources.mediawiki import read_siteinfo

        site = read_siteinfo(path, opener=files.open if remote else None)
        info["wiki"] = site.dbname or wiki_from_name(name)
        if site.base:
            info["site"] = site.base.rsplit("/", 1)[0] + "/" if "/" in site.base else site.base
        info["dump_date"] = dump_date_from_name(name)
    return info


def _under(path: str, root: str | None) -> bool:
    if not root:
        return False
    root = os.path.normpath(root)
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


_STORAGE_URL = re.compile(r"^(gs|s3|hdfs|azfs)://")


def _under_url(path: str, root: str | None) -> str | None:
    """``path`` relative to the object-storage folder ``root`` ("" for the folder itself), else None."""
    if not root or not _STORAGE_URL.match(root):
        return None
    root = root.rstrip("/")
    if path.rstrip("/") == root:
        return ""
    return path[len(root) + 1 :] if path.startswith(root + "/") else None


def relativise_path(path: str, roots: dict[str, str | None]) -> str:
    """An absolute path as the card shows it (see the module docstring); relative paths are kept.

    Object-storage URLs too: ``gs://b/out/work/x`` -> ``OUT/work/x`` for a build in ``gs://b/out``, any other
    bucket path by its name only.

    >>> relativise_path("gs://b/out/work/x", {"out": "gs://b/out"})
    'OUT/work/x'
    >>> relativise_path("gs://b/inputs/dump.xml.bz2", {"out": "gs://b/out"})
    'dump.xml.bz2'
    """
    if _STORAGE_URL.match(path):
        rel = _under_url(path, roots.get("out"))
        if rel is not None:
            return f"OUT/{rel}" if rel else "OUT"
        return posixpath.basename(path.rstrip("/")) or path
    if not os.path.isabs(path):
        return path
    path = os.path.normpath(path)
    if _under(path, roots.get("out")):
        rel = os.path.relpath(path, roots["out"])
        return "OUT" if rel == "." else f"OUT/{rel}"
    for root in (roots.get("base"), roots.get("config_dir")):
        if root and _under(path, root):
            return os.path.relpath(path, root)
    return os.path.basename(path) or path


def relativise(value, roots: dict[str, str | None]):
    """:func:`relativise_path` applied to every path in a string, list or mapping (``--flag=a=/p`` included)."""
    if isinstance(value, dict):
        return {k: relativise(v, roots) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [relativise(v, roots) for v in value]
    if not isinstance(value, str):
        return value
    if os.path.isabs(value) or _STORAGE_URL.match(value):
        return relativise_path(value, roots)
    if "=" in value:
        head, _, tail = value.rpartition("=")
        if os.path.isabs(tail) or _STORAGE_URL.match(tail):
            return f"{head}={relativise_path(tail, roots)}"
    return value
