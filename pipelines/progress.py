"""Progress bars (tqdm) for long local work: only on a terminal, never with ``--quiet``.

The CLI calls :func:`configure` once, in the driver process, before any command runs. Bars are drawn by that
process only: DoFns that run in it (Beam's default in-process runner) advance a shared bar per task with
:func:`advance`; in worker processes (``--direct_running_mode=multi_processing``, distributed runners) the
module is never configured, so nothing is drawn there and Beam's counters remain the source of truth.
"""

from __future__ import annotations

import sys
import threading

_ENABLED = False
_BARS: dict[str, object] = {}
_LOCK = threading.Lock()


def configure(quiet: bool, stream=None) -> bool:
    """Turn bars on when ``stream`` (default: stdout) is a terminal and not ``quiet``; returns whether on."""
    global _ENABLED
    stream = sys.stdout if stream is None else stream
    _ENABLED = not quiet and hasattr(stream, "isatty") and stream.isatty()
    return _ENABLED


def enabled() -> bool:
    return _ENABLED


def bar(**kwargs):
    """A tqdm bar on stderr (call only when :func:`enabled`)."""
    from tqdm import tqdm

    kwargs.setdefault("dynamic_ncols", True)
    kwargs.setdefault("leave", True)
    return tqdm(file=sys.stderr, **kwargs)


def advance(task: str, n: int = 1, total: int | None = None, unit: str = "doc", scale: bool = False) -> None:
    """Add ``n`` to the bar of ``task`` (created on first use with ``total``); a no-op when bars are off."""
    if not _ENABLED or n <= 0:
        return
    with _LOCK:
        current = _BARS.get(task)
        if current is None:
            current = bar(total=total, desc=task, unit=unit, unit_scale=scale, smoothing=0.1)
            _BARS[task] = current
        current.update(n)
        if total is not None and current.n >= total:
            current.close()
            del _BARS[task]


def close_all() -> None:
    """Close the bars left open (e.g. a task whose total was not known)."""
    with _LOCK:
        for current in _BARS.values():
            current.close()
        _BARS.clear()


def write(message: str) -> None:
    """A log line on stdout that does not break a bar being drawn."""
    if _ENABLED:
        from tqdm import tqdm

        tqdm.write(message, file=sys.stdout)
        sys.stdout.flush()
    else:
        print(message, flush=True)
