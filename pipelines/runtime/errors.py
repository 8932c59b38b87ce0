"""Recognising expected errors however a runner wrapped them, to end a command with one line.

A worker's exception reaches the driver wrapped (Beam re-raises it as text inside its own error, with
`` [while running 'Step']`` appended); these functions walk an exception's causes and its text and give the
one line the user reads, or None for an unexpected error (whose traceback is then shown).
"""

from __future__ import annotations

import errno
import re

from incoherent.schemas.records import InputError

_INPUT_ERROR_TEXT = re.compile(r"InputError: (.+)")


def input_error_message(exc: BaseException) -> str | None:
    """The message of an :class:`InputError` raised inside a worker, however the runner wrapped it."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, InputError):
            return str(exc).split("\n", 1)[0].split(" [while running", 1)[0]
        match = _INPUT_ERROR_TEXT.search(str(exc))
        if match:
            return match.group(1).split(" [while running", 1)[0].strip()
        exc = exc.__cause__ or exc.__context__
    return None


_DISK_FULL_TEXT = re.compile(r"(No space left on device|Disk quota exceeded)(?:: '([^'\n]{1,300})')?")


def disk_full_message(exc: BaseException) -> str | None:
    """One line for a write that failed because the disk (or the quota) is full, however it was wrapped (a
    Beam worker's error arrives as text); None for any other error.

    >>> disk_full_message(RuntimeError("OSError: [Errno 28] No space left on device: '/out/a.parquet'"))
    'no space left on device writing /out/a.parquet; free some space or choose another --out'
    """
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
            where = f" writing {exc.filename}" if exc.filename else ""
            return f"no space left on device{where}; free some space or choose another --out"
        found = _DISK_FULL_TEXT.search(str(exc))
        if found:
            where = f" writing {found.group(2)}" if found.group(2) else ""
            return f"no space left on device{where}; free some space or choose another --out"
        exc = exc.__cause__ or exc.__context__
    return None


_FLINK_BUFFERS_TEXT = re.compile(
    r"Insufficient number of network buffers: required (\d+), but only (\d+) available"
)


def flink_buffers_message(exc: BaseException) -> str | None:
    """One line for a Flink job that failed because its TaskManagers have too few network buffers (a Beam job
    is many operators deployed at once, and each blocking exchange of Flink 1.19 takes 512 buffers by default),
    however it was wrapped; None for any other error.

    >>> flink_buffers_message(RuntimeError("Pipeline BeamApp-x failed in state FAILED: java.io.IOException: "
    ...     "Insufficient number of network buffers: required 512, but only 431 available. The total ..."))[:95]
    'the Flink TaskManagers ran out of network buffers (an exchange needed 512, 431 were left): in t'
    """
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        found = _FLINK_BUFFERS_TEXT.search(str(exc))
        if found:
            return (
                f"the Flink TaskManagers ran out of network buffers (an exchange needed {found.group(1)}, "
                f"{found.group(2)} were left): in their flink-conf.yaml set taskmanager.network.sort-shuffle."
                "min-buffers: 64 or raise taskmanager.memory.network.min/max, as tools/flink-cluster.sh does "
                "(docs/scale-out.md#flink)"
            )
        exc = exc.__cause__ or exc.__context__
    return None
