"""The first module ``build``'s fork server imports (:data:`pipelines.build.processes.PRELOAD`): Ctrl-C ignored there
from its first moment.

Python's fork server ignores SIGINT only once it has imported its preload list, and importing Beam and the
stages takes seconds: a Ctrl-C at the terminal in that time (it reaches the whole process group) printed a
``KeyboardInterrupt`` traceback from the fork server under the build's "interrupted" line. The build itself
handles the signal (its stage processes get it too, and a fork server whose build is gone ends by itself).

Only the fork server is touched: :func:`pipelines.build.processes.start_fork_server` starts it with
:data:`VARIABLE` set, and anything else importing this module changes nothing.
"""

from __future__ import annotations

import os
import signal

from incoherent.pipelines.runtime import interrupts

VARIABLE = "INCOHERENT_FORK_SERVER"

if os.environ.get(VARIABLE) == "1":
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    interrupts.pause_for_test("preload")
