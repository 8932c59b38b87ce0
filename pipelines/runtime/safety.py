"""Write only under ``--out``, delete only what we wrote: the checks every command makes before any work.

- :func:`sources.paths.check_name` (the lowest layer, so ``annotation`` uses it too): a name a path is built
  from (a source, a config, a history dump's label) matches one safe pattern, so ``OUT/work/documents/<name>``
  can never leave ``OUT``.
- :func:`check_out_vs_inputs`: an ``--out`` that equals, contains or lies inside an input is refused (an
  ``--overwrite`` there would delete the input).
- A build is recognised by :data:`BUILD_MARKER`, a file only ``build`` writes (first, before anything
  else), and a single command's output by :data:`RUN_MARKER` (or the ``run_summary.json`` it writes last); a
  folder that holds neither is never deleted or written into.
- :class:`OutLock`: an exclusive lock on a local ``--out`` (``fcntl.flock``), so two builds never share one.

This module imports neither Beam nor any other heavy package: the CLI runs its checks before a command starts.

>>> from sources.paths import check_name
>>> check_name("wiki.en_2022-08", "--source")
'wiki.en_2022-08'
>>> check_name("../../VICTIM", "sources")
Traceback (most recent call last):
...
schemas.records.InputError: sources: name '../../VICTIM' is not allowed (letters, digits, '.', '_', '-'; \
starting with a letter or digit; at most 64 characters; no '..')
>>> is_within("/data/out/work", "/data/out"), is_within("/data/outside", "/data/out")
(True, False)
>>> is_within("gs://b/x/y", "gs://b/x/"), is_within("gs://b/xy", "gs://b/x")
(True, False)
"""

from __future__ import annotations

import contextlib
import json
import os
import posixpath
import socket
import time

from schemas.records import InputError
from sources.paths import is_remote

BUILD_MARKER = ".incoherent-build.json"  # written first by `incoherent build`, in OUT
RUN_MARKER = ".incoherent-run.json"  # written first by a single command, in its OUT
LOCK_FILE = ".incoherent-build.lock"
MARKER_FORMAT = 1


def _normal_url(path: str) -> str:
    scheme, rest = str(path).split("://", 1)
    return f"{scheme.lower()}://{posixpath.normpath('/' + rest).lstrip('/')}"


def _normal(path: str) -> str:
    """A comparable form: a normalised URL, or the real path of a local file (links resolved)."""
    if is_remote(path):
        return _normal_url(path)
    if str(path).startswith("file://"):
        path = str(path)[len("file://") :]
    return os.path.realpath(os.path.expanduser(str(path)))


def is_within(path: str, folder: str) -> bool:
    """``path`` is ``folder`` or lies inside it (local real paths, or normalised URLs of one scheme)."""
    if is_remote(path) != is_remote(folder):
        return False
    a, b = _normal(path), _normal(folder)
    if is_remote(a):
        return a == b or a.startswith(b.rstrip("/") + "/")
    return a == b or a.startswith(b.rstrip(os.sep) + os.sep)


def check_out_vs_inputs(out: str, inputs: list[str], option: str = "--out") -> None:
    """Refuse an ``out`` that equals, contains or lies inside one of ``inputs`` (before any deletion)."""
    for path in inputs:
        if not path or not (is_remote(path) or os.path.exists(path)):
            continue
        if is_within(out, path) or is_within(path, out):
            how = (
                "is"
                if _normal(out) == _normal(path)
                else "contains"
                if is_within(path, out)
                else "lies inside"
            )
            raise InputError(
                f"{option} {out} {how} the input {path}; choose an output folder apart from every input"
            )


def path_arguments(values: dict, skip: tuple[str, ...] = ("out",)) -> list[str]:
    """Every string argument of a parsed command that names an existing path or a URL (``NAME=PATH`` too)."""
    found = []
    for key, value in values.items():
        if key in skip or key.startswith("_"):
            continue
        for item in value if isinstance(value, list | tuple) else [value]:
            if not isinstance(item, str) or not item:
                continue
            for candidate in dict.fromkeys([item, item.split("=", 1)[-1]]):
                if is_remote(candidate) or os.path.exists(candidate):
                    found.append(candidate)
    return found


def check_writable_dir(out: str, option: str = "--out") -> None:
    """A local ``out`` must be a directory (or not exist yet) that this process can write."""
    if is_remote(out):
        return
    if os.path.exists(out) and not os.path.isdir(out):
        raise InputError(f"{option} {out}: is a file, not a directory")
    existing = os.path.abspath(out)
    while not os.path.exists(existing):
        parent = os.path.dirname(existing)
        if parent == existing:
            break
        existing = parent
    if not os.path.isdir(existing):
        raise InputError(f"{option} {out}: {existing} is a file, not a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise InputError(f"{option} {out}: not writable ({existing} is read-only for this user)")


# ------------------------------------------------------------------------------------------------ markers


def marker_bytes(kind: str, command: str) -> bytes:
    """The marker's content: deterministic (no time, no host), so a build's bytes do not change with it."""
    text = json.dumps({"format": MARKER_FORMAT, "written_by": f"incoherent {command}", "kind": kind})
    return (text + "\n").encode("utf-8")


def read_marker(path: str) -> dict | None:
    """The marker at ``path`` (local), or None when there is none or it is not ours."""
    try:
        with open(path, encoding="utf-8") as f:
            value = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(value, dict) or not str(value.get("written_by", "")).startswith("incoherent "):
        return None
    return value


def write_marker(folder: str, name: str, kind: str, command: str) -> None:
    path = os.path.join(folder, name)
    with open(path + ".partial", "wb") as f:
        f.write(marker_bytes(kind, command))
    os.replace(path + ".partial", path)


# ------------------------------------------------------------------------------------------------ lock


class OutLock:
    """An exclusive ``fcntl.flock`` on ``OUT/.incoherent-build.lock`` for as long as the build runs.

    The holder writes its pid, host and start time into the file; a second build reads them for its one-line
    refusal. The lock goes with the process (a killed build holds nothing); the file is emptied on release, so
    what a finished build leaves is the same bytes every time. Local folders only: object stores have no lock.
    """

    def __init__(self, out: str):
        self.path = os.path.join(out, LOCK_FILE)
        self._fd: int | None = None

    def acquire(self) -> None:
        import fcntl

        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.read(fd, 4096).decode("utf-8", "replace").strip()
            os.close(fd)
            try:
                info = json.loads(holder)
                who = f"pid {info['pid']} on {info['host']}, started {info['started']}"
            except (ValueError, KeyError, TypeError):
                who = "another process"
            raise InputError(
                f"{os.path.dirname(self.path)}: another build is running there ({who}); wait for it or "
                "choose another --out"
            ) from None
        started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        info = {"pid": os.getpid(), "host": socket.gethostname(), "started": started}
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(info) + "\n").encode("utf-8"), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is None:
            return
        import fcntl

        with contextlib.suppress(OSError):
            os.ftruncate(self._fd, 0)
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> OutLock:
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()
