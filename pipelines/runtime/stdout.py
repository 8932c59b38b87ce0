"""A reader of stdout that goes away (``incoherent completion bash | head -0``, ``... | less`` quit early): the
conventional quiet exit, as Python's documentation recommends for SIGPIPE.

Python ignores SIGPIPE, so a write to a pipe nobody reads raises ``BrokenPipeError``; uncaught it printed a
traceback and exit status 1, and the interpreter's own last flush another "Exception ignored" line. Instead
the command ends without a word (nobody reads its output any more; its files are written as usual) with exit
status 141, the status of a program that SIGPIPE ended (``yes | head`` gives it; ``set -o pipefail`` sees it),
and stdout is pointed at ``/dev/null`` so that the last flush has somewhere to go.
"""

from __future__ import annotations

import os
import select
import sys

STATUS = 128 + 13  # 128 + SIGPIPE


def reader_gone() -> bool:
    """Whether stdout is a pipe or socket whose reading end is closed (``poll`` reports an error on it); a
    ``BrokenPipeError`` from anything else (a worker's pipe, a server) is not ours to hide."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return False
    poller = select.poll()
    poller.register(fd, 0)  # POLLERR and POLLHUP are reported whatever is asked
    return any(events & select.POLLERR for _, events in poller.poll(0))


def quiet_exit() -> int:
    """Stdout to ``/dev/null`` (what is still buffered is dropped there); the status to exit with."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return STATUS
