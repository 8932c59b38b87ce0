"""Test-only: log which process reads which bytes of which file through Beam's ``FileSystems``.

The worker pool of :func:`tests.services.services_fixture` imports this module from its ``sitecustomize`` with
``INCOHERENT_TEST_READS`` naming a folder. Every file a process opens through ``FileSystems.open`` then logs one
JSON line per contiguous stretch it read (``pid``, ``path``, ``start`` offset, ``bytes``, and ``callers``: the
function names on the stack when the file was opened, to tell a ranged page read from a whole-file hash) into
``reads-<pid>.jsonl`` of that folder, when the reader seeks away or closes the file. A line per stretch, written
at once: processes of the pool end without running ``atexit``. :func:`read_log` reads the lines back.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ENV = "INCOHERENT_TEST_READS"


class _Logged:
    """A file opened through ``FileSystems.open`` whose reads are logged as (start, bytes) stretches."""

    def __init__(self, f, path: str, folder: str, callers: list[str]):
        self._f, self._path, self._folder, self._callers = f, path, folder, callers
        self._start = self._pos = 0
        self._closed = False

    def _flush(self) -> None:
        if self._pos > self._start:
            line = {
                "pid": os.getpid(),
                "path": self._path,
                "start": self._start,
                "bytes": self._pos - self._start,
                "callers": self._callers,
            }
            log = os.path.join(self._folder, f"reads-{os.getpid()}.jsonl")
            fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, (json.dumps(line) + "\n").encode())
            finally:
                os.close(fd)
        self._start = self._pos

    def _advance(self, n: int) -> None:
        self._pos += n or 0

    def read(self, *args):
        data = self._f.read(*args)
        self._advance(len(data))
        return data

    def read1(self, *args):
        data = self._f.read1(*args)
        self._advance(len(data))
        return data

    def readinto(self, buffer):
        n = self._f.readinto(buffer)
        self._advance(n)
        return n

    def readline(self, *args):
        data = self._f.readline(*args)
        self._advance(len(data))
        return data

    def seek(self, *args):
        where = self._f.seek(*args)
        if where is None:
            where = self._f.tell()
        if where != self._pos:  # a jump: the stretch read so far ends here
            self._flush()
            self._start = self._pos = where
        return where

    def close(self):
        try:
            return self._f.close()
        finally:
            if not self._closed:
                self._closed = True
                self._flush()

    def __getattr__(self, name):
        return getattr(self._f, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __iter__(self):
        for line in self._f:
            self._advance(len(line))
            yield line


def install(folder: str) -> None:
    """Log every read through ``FileSystems.open`` of this process into ``folder``."""
    from apache_beam.io.filesystems import FileSystems

    opened = FileSystems.open

    def open_(path, *args, **kwargs):
        frame, callers = sys._getframe(1), []
        while frame is not None and len(callers) < 12:
            callers.append(frame.f_code.co_name)
            frame = frame.f_back
        return _Logged(opened(path, *args, **kwargs), path, folder, callers)

    FileSystems.open = staticmethod(open_)


def read_log(folder: Path, path: str) -> list[dict]:
    """The stretches of ``path`` that the logged processes read, in the order they were logged per process."""
    lines = []
    for log in sorted(folder.glob("reads-*.jsonl")):
        lines.extend(json.loads(line) for line in log.read_text().splitlines())
    return [line for line in lines if line["path"] == path]


if os.environ.get(ENV):
    install(os.environ[ENV])
