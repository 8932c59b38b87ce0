"""Running one ``incoherent`` command for ``build``: in this process, or in a fresh one that dies with it.

``build`` runs its stages one after another. In one process, what a stage leaves behind stays resident for
the rest of the build: Beam's ``Shared`` keeps the neighbours' scoring matrix (2 GB at a million documents)
alive after the stage, and Python keeps the arenas of the millions of small objects a stage made. Measured
on the 1,000,000-document collection, the intruder stage peaked at 5.3 GB alone and at 7.7 GB as part of a
build. :func:`run_isolated` runs the stage in a child process that starts without the build's memory or threads, so a
build's peak is the largest stage's peak, not their sum.

Children are forked from a fork server that has Beam imported (``spawn`` would re-import it, seconds per
stage). A child ends as soon as the build does (a pipe whose only write end the build holds: a thread in the
child reads its EOF), so a killed build leaves no stage running to write into the folder a resumed build is
cleaning; the fork server then has no child left and ends too. An
:class:`InputError` in the child comes back as the same one-line error; any other failure as
:class:`pipelines.runtime.options.StageFailed` (its traceback is printed by the child). A child that finishes sends
its peak resident memory back: stage processes are the fork server's children, not the build's, so the
build's own ``RUSAGE_CHILDREN`` never sees them.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading

from incoherent.pipelines.commands import run_in_process, stage_modules
from incoherent.pipelines.runtime import interrupts, progress
from incoherent.pipelines.runtime.options import StageFailed
from incoherent.schemas.records import InputError

PR_SET_PDEATHSIG = 1
# imported once by the fork server, so that stages forked from it do not import them again (``pipelines.cli`` first, for
# the log filters it installs on import: a worker's InputError traceback and, without the dataflow extra, Beam's
# "apitools not found" warning stay off the terminal)
PRELOAD = [
    "incoherent.pipelines.build.fork_server",  # first: Ctrl-C ignored from the server's first moment
    "incoherent.pipelines.cli",
    "apache_beam",
    "incoherent.pipelines.build.processes",
    *stage_modules(),
]


def run_imports(module: str) -> list[str]:
    """The project modules that ``module``'s ``run`` imports in its own body (``incoherent.pipelines.index.command`` ->
    ``["incoherent.pipelines.index.transforms", "incoherent.pipelines.runtime.run", ...]``), read from its source: a stage imports its
    Beam transforms only when it runs, so that ``--help`` is fast."""
    import ast
    import importlib.util

    origin = importlib.util.find_spec(module).origin
    with open(origin, encoding="utf-8") as f:
        tree = ast.parse(f.read(), origin)
    found: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "run":
            for inner in node.body:  # what run always imports (not a model filter's, under an `if`)
                if isinstance(inner, ast.ImportFrom) and inner.module and inner.level == 0:
                    found.append(inner.module)
                elif isinstance(inner, ast.Import):
                    found.extend(alias.name for alias in inner.names)
    return [m for m in dict.fromkeys(found) if m.split(".")[:2] in PROJECT_PACKAGES]


PROJECT_PACKAGES = [["incoherent", p] for p in ("pipelines", "sources", "retrieval", "corpora", "schemas")]
# ... and the transforms each stage imports when it runs (filters and the model stack stay out: a build without
# a model filter never imports them)
PRELOAD += [
    m for m in dict.fromkeys(m for stage in stage_modules() for m in run_imports(stage)) if m not in PRELOAD
]


def _context():
    """A fork server with Beam and the commands already imported (a stage starts in milliseconds, not the
    seconds a fresh interpreter takes to import them); ``spawn`` where there is no fork server (Windows)."""
    import multiprocessing

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)  # no effect once this process's fork server runs
    start_fork_server()
    return context


def start_fork_server() -> None:
    """Start the fork server now (nothing if it runs), with :data:`pipelines.build.fork_server.VARIABLE` set in
    its environment only: it ignores Ctrl-C while it imports its preload list."""
    from multiprocessing import forkserver

    from incoherent.pipelines.build.fork_server import VARIABLE

    os.environ[VARIABLE] = "1"
    try:
        forkserver.ensure_running()
    finally:
        os.environ.pop(VARIABLE, None)


def peak_rss_mb() -> int:
    """High-water resident memory of this process, or of the largest process it started and waited for
    (a decoder process, Beam's worker processes), in MB (Linux reports ``ru_maxrss`` in KB)."""
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return int(max(own, children) // 1024)


def run_isolated(argv: list[str], beam_args: list[str]) -> int:
    """Run one ``incoherent`` command like :func:`pipelines.commands.run_in_process`, in a child process; returns the child's
    :func:`peak_rss_mb` (0 if it sent none)."""
    context = _context()
    receive, send = context.Pipe(duplex=False)
    # The child's lifeline: only this process holds the write end, so the child reads EOF when it ends. (The
    # fork server is no guide: it stays alive while any child it forked lives.)
    lifeline, keep = context.Pipe(duplex=False)
    # the fork server was started earlier: the child takes this process's current directory and environment
    state = (
        progress.enabled(),
        progress.outer_bars(),
        progress.quiet(),
        logging.getLogger().level,
        os.getcwd(),
        dict(os.environ),
    )
    child = context.Process(
        target=_child, args=(list(argv), list(beam_args), state, send, lifeline), daemon=True
    )
    child.start()
    send.close()
    lifeline.close()
    try:
        child.join()
    except BaseException:  # Ctrl-C (the child gets it too) or an error here: the stage stops with the build
        child.terminate()
        child.join()
        raise
    finally:
        keep.close()
    try:
        outcome = receive.recv() if receive.poll() else None
    except EOFError:  # the child closed the pipe without a word: it finished, or it was killed
        outcome = None
    receive.close()
    if child.exitcode == 0 and (outcome is None or outcome[0] == "done"):
        return outcome[1] if outcome else 0
    command = f"incoherent {' '.join(argv[:2])}"
    if outcome is not None and outcome[0] == "input":
        raise InputError(outcome[1])
    if outcome is not None:
        raise StageFailed(f"{command} failed: {outcome[1]} (its traceback is above)")
    if child.exitcode is not None and child.exitcode < 0:
        name = signal.Signals(-child.exitcode).name
        hint = " (out of memory?)" if child.exitcode == -signal.SIGKILL else ""
        raise StageFailed(f"{command}: its process was killed by {name}{hint}")
    raise StageFailed(f"{command}: its process exited with status {child.exitcode}")


def _child(argv, beam_args, state, send, lifeline) -> None:
    signal.signal(signal.SIGINT, signal.default_int_handler)  # the fork server ignores it (fork_server.py)
    _die_with_parent(os.getppid(), lifeline)
    bars, outer, quiet, level, cwd, environ = state
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(environ)
    interrupts.log_to_terminal(level)
    progress.inherit(bars, outer, quiet)
    from incoherent.pipelines.runtime.options import use_storage_options

    try:
        # Ctrl-C at a terminal reaches this process too: an interrupt with a message, which Beam re-raises as
        # one (the build says it was interrupted). SIGTERM stays the build's way to end it at once.
        with interrupts.signals_as_interrupts(sigterm=False):
            use_storage_options(beam_args)
            run_in_process(argv, beam_args)
        send.send(("done", peak_rss_mb()))
    except InputError as exc:
        send.send(("input", str(exc)))
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(130)
    except SystemExit:  # argparse has said why
        raise
    except BaseException as exc:
        import traceback

        from incoherent.pipelines.runtime.errors import disk_full_message

        if disk_full_message(exc):  # one line, as the command alone would print
            send.send(("input", disk_full_message(exc)))
            sys.exit(2)
        traceback.print_exc()
        send.send(("error", f"{type(exc).__name__}: {exc}"))
        sys.exit(1)


def _die_with_parent(parent_pid: int, lifeline) -> None:
    """End this process as soon as the build that started it is gone (killed builds leave no orphaned stage).

    The build holds the only write end of ``lifeline``: when it ends, however, the read here returns EOF. The
    parent process is the fork server, which outlives the build while this process runs (its children hold
    its liveness pipe), so it is watched as a backstop only (Linux: ``PR_SET_PDEATHSIG``)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent_pid:  # the parent died before the signal was armed
        os._exit(1)

    def watch() -> None:
        with contextlib.suppress(EOFError, OSError):
            while True:
                lifeline.recv()  # nothing is ever sent: this returns only by EOF
        os._exit(1)

    threading.Thread(target=watch, name="watch-build", daemon=True).start()
