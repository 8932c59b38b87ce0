"""A call with a bound on its whole time: what a per-request timeout cannot give.

A socket timeout bounds each read only, so a server that drips a header line or a body one byte at a time would
hold a command for ever. :func:`within` runs the call in a daemon thread and abandons it (with its connections)
at the deadline; the command then ends, and the thread with it. Ctrl-C still stops the wait at once.

    >>> within(5, sum, [1, 2])
    3
    >>> import time
    >>> within(0.05, time.sleep, 5)
    Traceback (most recent call last):
    ...
    incoherent.deadline.DeadlinePassed: 0.05 s
"""

from __future__ import annotations

import threading


class DeadlinePassed(Exception):
    """The call of :func:`within` did not end in time (not a TimeoutError: the call may raise one of its own)."""


def within(seconds: float, function, *args):
    """``function(*args)``, waited for at most ``seconds``: its value, or its own exception, or
    :class:`DeadlinePassed`."""
    outcome: dict = {}

    def target():
        try:
            outcome["value"] = function(*args)
        except BaseException as exc:  # handed to the caller's thread
            outcome["error"] = exc

    thread = threading.Thread(target=target, name=getattr(function, "__name__", "call"), daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        raise DeadlinePassed(f"{seconds:g} s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
