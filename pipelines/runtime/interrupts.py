"""Ctrl-C and ``kill``: one way out for every command and every stage process, and log lines safe to print.

While a command runs, SIGINT raises ``KeyboardInterrupt("interrupted")`` and SIGTERM (``kill``, a batch
scheduler's stop, ``docker stop``) :class:`Terminated`, a ``KeyboardInterrupt`` too: the command lets go of its
lock, stops the job servers and stage processes it started, removes what it made and says so in one line.

Both carry a message because Beam re-raises what a transform raised as ``type(exc)(exc.args[0] + where)``:
Python's own KeyboardInterrupt has no message, so a Ctrl-C inside a pipeline came out of Beam as a
RuntimeError and a traceback. Beam also logs that exception with its traceback; :func:`terminal_record` drops
such records (the command's own line says it was interrupted) and escapes control characters in the others.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
import time

from incoherent.terminal import printable

LOG_FORMAT = "%(levelname)s %(name)s: %(message)s"


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled as Ctrl-C is (exit status 143 instead of 130)."""


def _terminated(signum, frame):
    raise Terminated("terminated")


def _interrupted(signum, frame):
    raise KeyboardInterrupt("interrupted")


def exit_status(interrupt: KeyboardInterrupt) -> int:
    """128 + the signal: 143 for ``kill``, 130 for Ctrl-C."""
    return 128 + (signal.SIGTERM if isinstance(interrupt, Terminated) else signal.SIGINT)


@contextlib.contextmanager
def signals_as_interrupts(sigterm: bool = True):
    """SIGINT (and SIGTERM unless ``sigterm`` is false) raise an interrupt with a message in the main thread while
    the block runs. A handler someone else set (a test harness running the CLI in its own process) is left as
    it is; each handler is put back afterwards. Elsewhere than the main thread: nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    ours = {signal.SIGINT: (signal.default_int_handler, _interrupted)}
    if sigterm:
        ours[signal.SIGTERM] = (signal.SIG_DFL, _terminated)
    previous = {}
    for signum, (default, handler) in ours.items():
        if signal.getsignal(signum) in (default, None):
            previous[signum] = signal.signal(signum, handler)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)


def handle_for_whole_life() -> None:
    """From the first line of the ``incoherent`` entry point (``incoherent.__main__``) to its last: SIGINT and
    SIGTERM raise the interrupts above, so a signal while the CLI's own modules are still being imported, its
    parser built or its exit status returned ends with one line and 130/143 too. The signals are blocked while
    the handlers are put in place: one that comes meanwhile is delivered after, to them."""
    both = {signal.SIGINT, signal.SIGTERM}
    if threading.current_thread() is not threading.main_thread():
        return
    signal.pthread_sigmask(signal.SIG_BLOCK, both)
    try:
        signal.signal(signal.SIGINT, _interrupted)
        signal.signal(signal.SIGTERM, _terminated)
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, both)


def ignore_from_now() -> None:
    """The command's exit status is decided: a signal from here to the interpreter's end changes nothing
    (Python's own handler would print a KeyboardInterrupt traceback while it shuts down)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)


# tests only: a phase where the process says so and waits for a signal
PAUSE_VARIABLE = "INCOHERENT_TEST_PAUSE"


def pause_for_test(phase: str) -> None:
    """Tests only (``INCOHERENT_TEST_PAUSE=<phase>``): say ``paused: <phase>`` on stderr and wait there for a
    signal, so a test signals the process at a known moment of its life, not after a guessed sleep. A no-op
    unless the variable names this phase. The wait ends when a handler raises (the CLI's phases), or, where
    signals are ignored (the fork server's preload), when the process that started this one is gone; at most
    60 s either way."""
    if os.environ.get(PAUSE_VARIABLE) != phase:
        return
    print(f"paused: {phase}", file=sys.stderr, flush=True)
    parent, deadline = os.getppid(), time.monotonic() + 60
    while os.getppid() == parent and time.monotonic() < deadline:
        time.sleep(0.05)  # a signal's handler raises out of this; a poll of the parent otherwise


def terminal_record(record: logging.LogRecord) -> bool:
    """A log handler's filter: a record of an interrupt is not printed; any other has its message with control
    characters escaped (an origin, a path, a server's text never drives the terminal)."""
    if record.exc_info and isinstance(record.exc_info[1], KeyboardInterrupt):
        return False
    message = printable(record.getMessage())
    record.msg, record.args = message, ()
    return True


def log_to_terminal(level: int) -> None:
    """The root logger at ``level`` on stderr, through :func:`terminal_record` (the CLI and each stage process)."""
    logging.basicConfig(level=level, format=LOG_FORMAT, force=True)
    for handler in logging.getLogger().handlers:
        handler.addFilter(terminal_record)
