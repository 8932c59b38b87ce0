"""Writing a local output file or folder: the one writer every command uses, which never writes through a link.

A file is written whole to a new file ``<name>.partial`` beside it (created with ``O_EXCL``, so never through a
link; a leftover or a link there is removed first) and renamed over the final name: a symbolic link planted at that name (``dataset/README.md`` pointing at a file
outside ``--out``) is replaced by the new file, its target left untouched, and a killed run never leaves half a
file under the final name. A folder a command writes into is made by :func:`make_folder`, which replaces a link
there by a real folder. The output lock's file (:data:`LOCK_FILE`) is not content: :func:`entries` leaves it
out and :func:`clear_folder` keeps it, so a folder holding only a lock is empty and clearing it keeps the lock.

This sits in the lowest layer that reads files, so ``corpora`` (the card), ``filters`` (models) and
``annotation`` (studies) use it too.

>>> import tempfile
>>> root = tempfile.mkdtemp()
>>> victim = os.path.join(root, "victim.txt")
>>> _ = open(victim, "w").write("keep me")
>>> os.symlink(victim, os.path.join(root, "README.md"))
>>> replace_file(os.path.join(root, "README.md"), b"card")
>>> open(victim).read(), os.path.islink(os.path.join(root, "README.md"))
('keep me', False)
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import stat

from incoherent.errors import InputError
from incoherent.fileio.paths import file_kind

LOCK_FILE = ".incoherent-build.lock"  # OUT's lock (pipelines.runtime.safety.OutLock)
PARTIAL = ".partial"  # what is still being written: ``<name>.partial`` (pipelines.runtime.summary)


def make_folder(path: str) -> str:
    """``path`` as a real folder (parents made): a symbolic link at ``path`` is removed first, never followed."""
    if os.path.islink(path):
        os.unlink(path)
    os.makedirs(path, exist_ok=True)
    return path


def check_replaceable(path: str, option: str = "") -> None:
    """``path`` may be written by :func:`replace_file`: absent, a regular file or a link (replaced). A folder,
    a device (``/dev/null``: renaming over it would delete the device), a FIFO or a socket is one
    :class:`InputError` line."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
        where = f"{option} {path}" if option else path
        raise InputError(f"{where}: {file_kind(mode)}, not a regular file; choose a file to write")


def replace_file(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` through a new temporary file and a rename: a link at ``path`` is replaced,
    never written through; anything else but a regular file there is refused (:func:`check_replaceable`)."""
    check_replaceable(path)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + PARTIAL
    if os.path.lexists(tmp) and not os.path.isdir(tmp):
        os.unlink(tmp)  # a killed writer's leftover, or a link planted there: removed, never followed
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(tmp, flags, 0o666)  # O_EXCL: a new file, never one a link points at
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


FILE_MARKER = (
    ".incoherent.json"  # ``.<name>.incoherent.json`` beside a single-file output: whose, which bytes
)


def file_marker(path: str) -> str:
    """The marker of the single-file output ``path``: ``<folder>/.<name>.incoherent.json``."""
    folder, name = os.path.split(os.path.abspath(path))
    return os.path.join(folder, f".{name}{FILE_MARKER}")


def _sha256(path: str) -> str | None:
    import hashlib

    digest = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()


def written_by(path: str, command: str) -> bool:
    """``path`` is a regular file (not a link) that ``incoherent <command>`` wrote and nobody changed since: its
    marker (:func:`file_marker`) names the command and the file's sha256."""
    import json

    if os.path.islink(path) or not os.path.isfile(path):
        return False
    try:
        with open(file_marker(path), encoding="utf-8") as f:
            marker = json.load(f)
    except (OSError, ValueError, RecursionError):
        return False
    return (
        isinstance(marker, dict)
        and marker.get("written_by") == f"incoherent {command}"
        and marker.get("sha256") == _sha256(path)
    )


def check_output_file(path: str, option: str, command: str, overwrite: bool) -> None:
    """Before any work, a file a command writes (``evaluate --out``/``--predictions``, ``export insted``,
    ``annotate review``/``release``): a regular file's place (:func:`check_replaceable`), not below a file, and
    when something is there already, ``--overwrite`` and an earlier output of the same command, unchanged
    (:func:`written_by`); a user's file, another command's, a link, is never replaced.

    >>> import tempfile
    >>> mine = os.path.join(tempfile.mkdtemp(), "mine.json")
    >>> _ = open(mine, "w").write("{}")
    >>> check_output_file(mine, "--out", "evaluate", overwrite=True)
    Traceback (most recent call last):
    ...
    incoherent.errors.InputError: --out ...mine.json: not an earlier output of `incoherent evaluate` (or changed since); \
--overwrite replaces only those; choose another file
    """
    if not path.strip():
        raise InputError(f"{option}: an empty path; name the file to write")
    check_replaceable(path, option)
    parent = os.path.dirname(os.path.abspath(path))
    while not os.path.lexists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise InputError(
            f"{option} {path}: {parent} is {'a dangling link' if os.path.islink(parent) else 'a file'}, not a directory"
        )
    if not os.path.lexists(path):
        return
    if not overwrite:
        raise InputError(f"{option} {path}: exists (pass --overwrite to replace it)")
    if not written_by(path, command):
        raise InputError(
            f"{option} {path}: not an earlier output of `incoherent {command}` (or changed since); "
            "--overwrite replaces only those; choose another file"
        )


def write_output_file(path: str, data: bytes, command: str) -> None:
    """Write a single-file output (:func:`replace_file`), then its marker: the command and the bytes' sha256, so
    that only this output is what a later ``--overwrite`` of the command replaces (:func:`check_output_file`)."""
    import hashlib
    import json

    replace_file(path, data)
    marker = {
        "format": 1,
        "written_by": f"incoherent {command}",
        "kind": "file",
        "file": os.path.basename(path),
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    replace_file(file_marker(path), (json.dumps(marker) + "\n").encode("utf-8"))


def replace_text(path: str, text: str) -> None:
    """:func:`replace_file` of UTF-8 text (newlines written as given)."""
    replace_file(path, text.encode("utf-8"))


def finite(value):
    """``value`` with every non-finite float (NaN, infinity) as ``None``, so it dumps as JSON (``null``), never as
    the bare ``NaN`` that JSON readers reject.

    >>> finite({"loss": float("nan"), "history": [1.5, float("inf")]})
    {'loss': None, 'history': [1.5, None]}
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


def entries(folder: str) -> list[str]:
    """The names in ``folder`` but the output lock's file; ``[]`` when it does not exist."""
    if not os.path.isdir(folder):
        return []
    return sorted(name for name in os.listdir(folder) if name != LOCK_FILE)


def remove_entries(folder: str, names) -> None:
    """Delete the entries ``names`` of ``folder`` (links are removed, never followed; absent ones skipped); a
    name that is not a plain entry of ``folder`` (``..``, ``a/b``, the lock's file) is never touched."""
    present = set(entries(folder))
    for name in names:
        if name not in present or name in (".", "..") or "/" in name or os.sep in name:
            continue
        path = os.path.join(folder, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)


def own_files(folder: str, record: str) -> list[str] | None:
    """The entries of ``folder`` that its command wrote, as the JSON file ``record`` it wrote last (a model's
    ``provenance.json``, ``metrics.json``) lists them under ``files`` (the record itself and leftover
    ``.partial`` files of listed names too); None when the record lists none (an older ``incoherent``, or a
    hand-edited record), so the caller refuses rather than guess which files are the user's."""
    import json

    try:
        with open(os.path.join(folder, record), encoding="utf-8") as f:
            value = json.load(f)
    except (OSError, ValueError, RecursionError):
        return None
    files = value.get("files") if isinstance(value, dict) else None
    if not isinstance(files, list) or not all(isinstance(name, str) for name in files):
        return None
    listed = set(files) | {record}
    return [name for name in entries(folder) if name in listed or name.removesuffix(PARTIAL) in listed]


def files_written(folder: str, kept, record: str) -> list[str]:
    """What a command wrote in ``folder``: every entry but ``kept`` (what was there before it started), and
    ``record``, the file that will list them (written last)."""
    return sorted((set(entries(folder)) - set(kept)) | {record})


def clear_folder(folder: str) -> None:
    """Delete everything in ``folder`` but the output lock's file (links are removed, never followed)."""
    for name in entries(folder):
        path = os.path.join(folder, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)
