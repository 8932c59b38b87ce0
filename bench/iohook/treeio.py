"""Bench-only: run a command and report the bytes its whole process tree wrote and read with ``write``/``read``.

    python bench/iohook/treeio.py REPORT.json -- incoherent build ...

Linux adds a reaped process's I/O counters (``rchar``/``wchar`` of ``/proc/PID/io``: the ``read``/``write``
family of system calls, on files, pipes and sockets alike; not ``send``/``sendto``/``sendmsg``, with which gRPC
and the storage client write to their sockets) to its parent's. This process makes itself the child
subreaper (``PR_SET_CHILD_SUBREAPER``), so that the descendants the command leaves behind (a fork server, its
stage processes) are reparented to it and reaped here; when none is left its own counters, less what it had
before starting the command, are the tree's. Writes ``{"rc", "wchar", "rchar", "syscw", "syscr"}`` to
``REPORT.json`` and exits with the command's status. Used by ``bench/bench_distributed.py``.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys

PR_SET_CHILD_SUBREAPER = 36


def io_counters() -> dict[str, int]:
    with open("/proc/self/io") as f:
        return {k: int(v) for k, v in (line.split(": ") for line in f)}


def main() -> int:
    report, sep, *command = sys.argv[1:]
    if sep != "--" or not command:
        raise SystemExit("usage: treeio.py REPORT.json -- COMMAND ...")
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1) != 0:
        raise SystemExit("treeio.py: cannot become a child subreaper")
    before = io_counters()
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(command[0], command)
        finally:
            os._exit(127)
    rc = None
    while True:
        try:
            done, status = os.waitpid(-1, 0)
        except ChildProcessError:  # nothing left of the tree
            break
        if done == pid:
            rc = os.waitstatus_to_exitcode(status)
    after = io_counters()
    totals = {k: after[k] - before[k] for k in ("wchar", "rchar", "syscw", "syscr")}
    with open(report, "w") as f:
        json.dump({"rc": rc, **totals}, f)
    return rc if rc is not None and rc >= 0 else 1


if __name__ == "__main__":
    sys.exit(main())
