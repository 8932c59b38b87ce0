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
import signal
import threading

from incoherent.schemas.terminal import printable

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
