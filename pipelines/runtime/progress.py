"""Progress bars (tqdm) for long local work: only on a terminal, never with ``--quiet``.

The CLI calls :func:`configure` once, in the driver process, before any command runs. Bars are drawn by that
process only: DoFns that run in it (Beam's default in-process runner) advance a shared bar per task with
:func:`advance`; in worker processes (``--direct_running_mode=multi_processing``, distributed runners) the
module is never configured, so nothing is drawn there and Beam's counters remain the source of truth.

When bars are off (``--quiet``, or no terminal) the libraries stay quiet too (:func:`quiet_libraries`):
transformers' and huggingface_hub's bars ("Loading weights", "Writing model shards") and their warnings
(``loss_type=None``, load reports), in this process and, through the environment, in the processes it starts.
"""

from __future__ import annotations

import os
import sys
import threading
import time

_ENABLED = False
_QUIET = False  # --quiet: progress lines (note) are not printed either
_OUTER = 0  # bars opened with bar() (the build's bar of stages)
_BARS: dict[str, _Task] = {}
_LOCK = threading.Lock()


def configure(quiet: bool, stream=None) -> bool:
    """Turn bars on when ``stream`` (default: stdout) is a terminal and not ``quiet``; returns whether on."""
    global _ENABLED, _QUIET
    _QUIET = quiet
    if quiet:
        quiet_beam()
    stream = sys.stdout if stream is None else stream
    _ENABLED = not quiet and hasattr(stream, "isatty") and stream.isatty()
    if not _ENABLED:
        quiet_libraries()
    return _ENABLED


# The environment transformers and huggingface_hub read when they are imported: no bars, errors only.
QUIET_ENVIRONMENT = {
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TRANSFORMERS_VERBOSITY": "error",
    "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1",
}


def quiet_beam() -> None:
    """``--quiet``: Beam's own warnings (its runners, job servers and SDK workers) are not printed; its errors
    are, and so is every line of ``incoherent``'s."""
    import logging

    logging.getLogger("apache_beam").setLevel(logging.ERROR)


def quiet_libraries() -> None:
    """No progress bars and no warnings from transformers and huggingface_hub: set in the environment (for
    processes started from here: a build's stages, Beam's worker processes, and imports still to come) and,
    where they are already imported, in the libraries themselves."""
    os.environ.update(QUIET_ENVIRONMENT)
    if "transformers" in sys.modules:
        from transformers.utils import logging as transformers_logging

        transformers_logging.set_verbosity_error()
        transformers_logging.disable_progress_bar()
    if "huggingface_hub" in sys.modules:
        from huggingface_hub.utils import disable_progress_bars

        disable_progress_bars()


def enabled() -> bool:
    return _ENABLED


def quiet() -> bool:
    """``--quiet`` was given: no progress lines (:func:`note`)."""
    return _QUIET


def outer_bars() -> int:
    """Bars opened with :func:`bar` and not closed (a stage's bars are drawn below them)."""
    return _OUTER


def inherit(on: bool, outer: int, quiet: bool = False) -> None:
    """In a build's stage process: bars on or off and ``--quiet`` as in the build, bars drawn below its
    ``outer`` open bars."""
    global _ENABLED, _OUTER, _QUIET
    _ENABLED, _OUTER, _QUIET = on, outer, quiet
    if quiet:
        quiet_beam()
    if not on:
        quiet_libraries()


def bar(**kwargs):
    """A tqdm bar on stderr (call only when :func:`enabled`); the bars of a stage's tasks go below it."""
    global _OUTER
    from tqdm import tqdm

    kwargs.setdefault("dynamic_ncols", True)
    _OUTER += 1
    return tqdm(file=sys.stderr, **kwargs)


def close(outer) -> None:
    """Close a bar opened with :func:`bar`."""
    global _OUTER
    outer.close()
    _OUTER = max(0, _OUTER - 1)


class _Task:
    def __init__(self, task: str, total: int | None, unit: str):
        from tqdm import tqdm

        self.bar = tqdm(
            file=sys.stderr,
            total=total,
            desc=task,
            unit=unit,
            smoothing=0.1,
            dynamic_ncols=True,
            position=_OUTER + len(_BARS),  # below the build's bar of stages and the open bars
            leave=_OUTER == 0,
        )
        self.bytes = 0
        self.started = self.shown = time.monotonic()


def advance(task: str, n: int = 1, total: int | None = None, unit: str = "doc", nbytes: int = 0) -> None:
    """Add ``n`` to the bar of ``task`` (created on first use with ``total``); a no-op when bars are off.

    ``nbytes``: bytes read with these ``n`` items, shown as MB and MB/s next to the bar.
    """
    if not _ENABLED or n <= 0:
        return
    with _LOCK:
        current = _BARS.get(task)
        if current is None:
            current = _BARS[task] = _Task(task, total, unit)
        current.bar.update(n)
        if nbytes:
            current.bytes += nbytes
            now = time.monotonic()
            if now - current.shown > 0.5:
                mb = current.bytes / 1e6
                current.bar.set_postfix_str(f"{mb:,.1f} MB, {mb / (now - current.started):.1f} MB/s")
                current.shown = now
        if total is not None and current.bar.n >= total:
            current.bar.close()
            del _BARS[task]


def close_all() -> None:
    """Close the bars left open (e.g. a task whose total was not known)."""
    with _LOCK:
        for current in _BARS.values():
            current.bar.close()
        _BARS.clear()


def note(message: str) -> None:
    """A progress line (``[build] stage 2 of 9, index: ...``): :func:`write` unless ``--quiet`` was given,
    which prints nothing but the result."""
    if not _QUIET:
        write(message)


def write(message: str) -> None:
    """A log line on stdout that does not break a bar being drawn."""
    if _ENABLED:
        from tqdm import tqdm

        tqdm.write(message, file=sys.stdout)
        sys.stdout.flush()
    else:
        print(message, flush=True)
