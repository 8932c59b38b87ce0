"""Run a command that ends when the process that started it ends, however that ends (kill -9 included):
Linux's PR_SET_PDEATHSIG asks the kernel for a SIGTERM then, and exec keeps the pid and the request.
Usage: python3 -S tools/die-with-parent.py PARENT_PID COMMAND [ARG...] (the tools/flink-*.sh scripts: a node's
JVMs do not outlive their script). PARENT_PID is the starter's pid, to catch a starter that died before the
request was made (the command then does not run: exit status 1).
"""

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1
if sys.platform.startswith("linux"):
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
if os.getppid() != int(sys.argv[1]):
    sys.exit(1)
os.execvp(sys.argv[2], sys.argv[2:])
