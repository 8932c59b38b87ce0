"""Write only under ``--out``, delete only what we wrote: the checks every command makes before any work.

- :func:`incoherent.fileio.paths.check_name` (the lowest layer, so ``annotation`` uses it too): a name a path is built
  from (a source, a config, a history dump's label) matches one safe pattern, so ``OUT/work/documents/<name>``
  can never leave ``OUT``.
- :func:`check_out_vs_inputs`: an ``--out`` that equals, contains or lies inside an input is refused (an
  ``--overwrite`` there would delete the input).
- A build is recognised by :data:`BUILD_MARKER`, a file only ``build`` writes (first, before anything
  else), and a single command's output by :data:`RUN_MARKER` (or the ``run_summary.json`` it writes last); a
  folder that holds neither is never deleted or written into.
- :func:`check_outputs`: the same rule for every path a command writes (``--out``, ``evaluate --predictions``,
  ...): apart from every input (a model folder too) and from each other.
- :class:`OutLock`: an exclusive lock on a local ``--out`` (``fcntl.flock``), so two builds never share one;
  :func:`command_lock` takes it for every other command that writes a folder (the CLI does, before ``run``).
- Files are written by :func:`incoherent.fileio.outputs.replace_file`, which replaces a link and never writes through it.

This module imports neither Beam nor any other heavy package: the CLI runs its checks before a command starts.

>>> from incoherent.fileio.paths import check_name
>>> check_name("wiki.en_2022-08", "--source")
'wiki.en_2022-08'
>>> check_name("../../VICTIM", "sources")
Traceback (most recent call last):
...
incoherent.errors.InputError: sources: name '../../VICTIM' is not allowed (letters, digits, '.', '_', '-'; \
starting with a letter or digit; at most 64 characters; no '..')
>>> is_within("/data/out/work", "/data/out"), is_within("/data/outside", "/data/out")
(True, False)
>>> is_within("gs://b/x/y", "gs://b/x/"), is_within("gs://b/xy", "gs://b/x")
(True, False)
"""

from __future__ import annotations

import contextlib
import json
import os
import posixpath
import socket
import time

from incoherent.fileio.outputs import LOCK_FILE, PARTIAL, replace_file
from incoherent.fileio.paths import is_remote
from incoherent.schemas.records import InputError

BUILD_MARKER = ".incoherent-build.json"  # written first by `incoherent build`, in OUT
RUN_MARKER = ".incoherent-run.json"  # written first by a single command, in its OUT
MARKER_FORMAT = 1
RUN_MARKER_FORMAT = 2  # a single command's marker listing what it kept and wrote (format 1 listed nothing)


def just_started(names, marker: str) -> bool:
    """Whether a folder holding ``names`` (its lock's file left out) holds nothing but what a run killed while
    it wrote ``marker`` leaves (the marker is written to ``<marker>.partial``, then renamed): nothing anyone
    could lose, so the next run takes the folder as empty.

    >>> just_started([".incoherent-run.json.partial"], RUN_MARKER)
    True
    >>> just_started([".incoherent-run.json.partial", "docs"], RUN_MARKER)
    False
    """
    return set(names) <= {marker + PARTIAL}


def _normal_url(path: str) -> str:
    scheme, rest = str(path).split("://", 1)
    return f"{scheme.lower()}://{posixpath.normpath('/' + rest).lstrip('/')}"


def _normal(path: str) -> str:
    """A comparable form: a normalised URL, or the real path of a local file (links resolved)."""
    if is_remote(path):
        return _normal_url(path)
    if str(path).startswith("file://"):
        path = str(path)[len("file://") :]
    return os.path.realpath(os.path.expanduser(str(path)))


def is_within(path: str, folder: str) -> bool:
    """``path`` is ``folder`` or lies inside it (local real paths, or normalised URLs of one scheme)."""
    if is_remote(path) != is_remote(folder):
        return False
    a, b = _normal(path), _normal(folder)
    if is_remote(a):
        return a == b or a.startswith(b.rstrip("/") + "/")
    return a == b or a.startswith(b.rstrip(os.sep) + os.sep)


def check_out_vs_inputs(out: str, inputs: list[str], option: str = "--out", kind: str = "folder") -> None:
    """Refuse an ``out`` that equals, contains or lies inside one of ``inputs`` (before any deletion)."""
    for path in inputs:
        if not path or not (is_remote(path) or os.path.exists(path)):
            continue
        if is_within(out, path) or is_within(path, out):
            how = (
                "is"
                if _normal(out) == _normal(path)
                else "contains"
                if is_within(path, out)
                else "lies inside"
            )
            raise InputError(
                f"{option} {out} {how} the input {path}; choose an output {kind} apart from every input"
            )


def check_outputs(outputs: dict[str, str], inputs: list[str]) -> None:
    """Every path a command writes, by option (``{"--out": OUT, "--predictions": FILE}``), apart from every
    input (:func:`check_out_vs_inputs`, links resolved) and from the others, before any work.

    >>> check_outputs({"--out": "/tmp/r.json", "--predictions": "/tmp/r.json"}, [])
    Traceback (most recent call last):
    ...
    incoherent.errors.InputError: --predictions /tmp/r.json is the path of --out too; give each output its own path
    """
    seen: dict[str, str] = {}
    for option, path in outputs.items():
        if not isinstance(path, str) or not path:
            continue
        check_out_vs_inputs(path, inputs, option, "folder" if option == "--out" else "file")
        for other, earlier in seen.items():
            if is_within(path, earlier) or is_within(earlier, path):
                raise InputError(
                    f"{option} {path} is the path of {other} too; give each output its own path"
                    if _normal(path) == _normal(earlier)
                    else f"{option} {path} overlaps {other} {earlier}; give each output its own path"
                )
        seen[option] = path


WILDCARDS = "[*?"  # what Beam's FileSystems.match (and so its delete) reads as a pattern, in any path


def check_no_wildcards(path: str, option: str) -> None:
    """A path a command writes or reads as a folder of its own files may not hold ``[``, ``*`` or ``?``
    anywhere in its full path (the working folder too): Beam's file systems match every path they delete or
    list as a glob, so ``OUT/.spill`` under ``o[1]`` is "not found" and a table folder under it holds "no
    files". Escaping (``[[]``) cannot help: Beam's local match then walks the whole parent folder and never
    matches a folder. Refused in one line, before any work.

    >>> check_no_wildcards("/tmp/runs/o[1]", "--out")
    Traceback (most recent call last):
    ...
    incoherent.errors.InputError: --out /tmp/runs/o[1]: the path holds '[', which Apache Beam's file \
systems read as a wildcard (as '*' and '?'); use a path without them
    """
    full = path if is_remote(path) else os.path.abspath(path)
    found = [c for c in WILDCARDS if c in full]
    if found:
        where = "" if full == path else f" (full path {full})"
        raise InputError(
            f"{option} {path}{where}: the path holds {found[0]!r}, which Apache Beam's file systems read as "
            "a wildcard (as '*' and '?'); use a path without them"
        )


def path_arguments(values: dict, skip: tuple[str, ...] = ("out",)) -> list[str]:
    """Every string argument of a parsed command that names an existing path or a URL (``NAME=PATH`` too)."""
    found = []
    for key, value in values.items():
        if key in skip or key.startswith("_"):
            continue
        for item in value if isinstance(value, list | tuple) else [value]:
            if not isinstance(item, str) or not item:
                continue
            for candidate in dict.fromkeys([item, item.split("=", 1)[-1]]):
                if is_remote(candidate) or os.path.exists(candidate):
                    found.append(candidate)
    return found


def check_writable_dir(out: str, option: str = "--out") -> None:
    """A local ``out`` must be a directory (or not exist yet) that this process can write."""
    if is_remote(out):
        return
    if os.path.exists(out) and not os.path.isdir(out):
        raise InputError(f"{option} {out}: is a file, not a directory")
    existing = os.path.abspath(out)
    while not os.path.exists(existing):
        if os.path.islink(existing):  # a dangling link: makedirs would fail on it with a traceback
            raise InputError(
                f"{option} {out}: {existing} is a link to {os.readlink(existing)}, which does not exist; "
                "name a real folder"
            )
        parent = os.path.dirname(existing)
        if parent == existing:
            break
        existing = parent
    if not os.path.isdir(existing):
        raise InputError(f"{option} {out}: {existing} is a file, not a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise InputError(f"{option} {out}: not writable ({existing} is read-only for this user)")


# ------------------------------------------------------------------------------------------------ markers


def marker_bytes(kind: str, command: str, **names: list[str]) -> bytes:
    """The marker's content: deterministic (no time, no host), so a build's bytes do not change with it.

    A single command's marker lists names too (:func:`pipelines.runtime.run.prepare_output`): ``kept``, the
    entries of ``OUT`` that were there before it started (a user's files), and once it finished ``wrote``, the
    entries it wrote: ``--overwrite`` deletes only those.

    >>> marker_bytes("run", "ingest text", kept=["NOTES.txt"])
    b'{"format": 2, "written_by": "incoherent ingest text", "kind": "run", "kept": ["NOTES.txt"]}\\n'
    """
    value: dict = {"format": RUN_MARKER_FORMAT if names else MARKER_FORMAT}
    value.update({"written_by": f"incoherent {command}", "kind": kind})
    value.update({key: sorted(listed) for key, listed in names.items()})
    return (json.dumps(value) + "\n").encode("utf-8")


def read_marker(path: str) -> dict | None:
    """The marker at ``path`` (local), or None when there is none or it is not ours."""
    try:
        with open(path, encoding="utf-8") as f:
            value = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(value, dict) or not str(value.get("written_by", "")).startswith("incoherent "):
        return None
    return value


def write_marker(folder: str, name: str, kind: str, command: str) -> None:
    replace_file(os.path.join(folder, name), marker_bytes(kind, command))


# ------------------------------------------------------------------------------------------------ lock


class OutLock:
    """An exclusive ``fcntl.flock`` on ``OUT/.incoherent-build.lock`` for as long as the build (or command) runs.

    The holder writes its command, pid, host and start time into the file; a second run reads them for its
    one-line refusal. The lock goes with the process (a killed build holds nothing); the file is emptied on release, so
    what a finished build leaves is the same bytes every time. Local folders only: object stores have no lock.
    """

    def __init__(self, out: str, command: str = "build"):
        self.path = os.path.join(out, LOCK_FILE)
        self.command = command
        self._fd: int | None = None

    def acquire(self) -> None:
        import fcntl

        if os.path.islink(self.path):  # never follow a planted link out of OUT
            os.unlink(self.path)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.read(fd, 4096).decode("utf-8", "replace").strip()
            os.close(fd)
            what = "build"
            try:
                info = json.loads(holder)
                who = f"pid {info['pid']} on {info['host']}, started {info['started']}"
                if info.get("command", "build") != "build":
                    what, who = "run", f"`incoherent {info['command']}`, " + who
            except (ValueError, KeyError, TypeError, AttributeError):
                who = "another process"
            raise InputError(
                f"{os.path.dirname(self.path)}: another {what} is running there ({who}); wait for it or "
                "choose another --out"
            ) from None
        started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        info = {"command": self.command, "pid": os.getpid(), "host": socket.gethostname(), "started": started}
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(info) + "\n").encode("utf-8"), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is None:
            return
        import fcntl

        with contextlib.suppress(OSError):
            os.ftruncate(self._fd, 0)
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> OutLock:
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()


@contextlib.contextmanager
def no_imports_from_cwd():
    """While a command runs, every Python process it starts (``build``'s fork server and stage processes, Beam's
    SDK workers of ``multi_processing`` mode, helpers run with ``-c``) imports nothing from the current
    directory: ``PYTHONSAFEPATH=1`` (Python 3.11+) stops ``python -m``/``-c`` from putting it first on
    ``sys.path``, where a ``dis.py`` in the folder ``build`` was started in was imported and run by the fork
    server. The variable is restored when the command ends (the CLI runs in-process in tests)."""
    before = os.environ.get("PYTHONSAFEPATH")
    os.environ["PYTHONSAFEPATH"] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("PYTHONSAFEPATH", None)
        else:
            os.environ["PYTHONSAFEPATH"] = before


def dataset_of_build(path: str) -> str:
    """``OUT/dataset`` when ``path`` is the folder of a build (its marker, or its summary, and a ``dataset/``
    beside it), else ``path``: every command that reads a dataset takes the build folder or its ``dataset/``
    alike (``incoherent card out/enwiki`` is ``incoherent card out/enwiki/dataset``)."""
    if is_remote(path) or not os.path.isdir(os.path.join(path, "dataset")):
        return path
    if any(os.path.isfile(os.path.join(path, name)) for name in (BUILD_MARKER, "build_summary.json")):
        return os.path.join(path, "dataset")
    return path


def dataset_lock_folder(dataset_dir: str) -> str:
    """Where the lock of a dataset lies: the build folder when ``dataset_dir`` is ``OUT/dataset`` of a build
    (the build holds that lock while it writes the dataset), else the dataset folder itself."""
    parent = os.path.dirname(os.path.abspath(dataset_dir))
    if any(os.path.isfile(os.path.join(parent, name)) for name in (BUILD_MARKER, "build_summary.json")):
        return parent
    return dataset_dir


@contextlib.contextmanager
def command_lock(out: str, command: str):
    """Hold ``out``'s :class:`OutLock` while a command other than ``build`` writes that folder.

    Taken before the command looks at or deletes anything in ``out``, so a second command on the same folder
    ends at once, naming the holder. The lock file is removed when the command ends (it is not part of the
    output), and when the command failed so are the folders made for it (a refused command leaves nothing).
    Remote folders, a path that is a file and one that cannot be created are left to the command's own checks
    and messages.
    """
    if is_remote(out) or (os.path.exists(out) and not os.path.isdir(out)):
        yield
        return
    check_writable_dir(out)  # before anything is created: one line for a read-only parent or a file above
    made = []
    folder = os.path.abspath(out)
    while not os.path.exists(folder):
        made.append(folder)
        folder = os.path.dirname(folder)
    try:
        os.makedirs(out, exist_ok=True)
    except OSError:
        yield
        return
    lock = OutLock(out, command)
    existed = os.path.exists(lock.path)
    try:
        lock.acquire()
    except BaseException:  # the holder's lock file stays (it may have made it a moment before we looked)
        _remove_made(made)
        raise
    ok = False
    try:
        yield
        ok = True
    finally:
        if not existed:  # removed while still held: whoever opens it next makes a new one
            with contextlib.suppress(OSError):
                os.unlink(lock.path)
        lock.release()
        if not ok:
            _remove_made(made)


def _remove_made(made: list[str]) -> None:
    for folder in made:  # deepest first; only folders left empty
        with contextlib.suppress(OSError):
            os.rmdir(folder)
