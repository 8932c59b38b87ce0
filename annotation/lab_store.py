"""The in-lab app's files: the export it serves (:func:`load_tasks`), its answers folder, and the answers store
(one fsynced JSONL file per annotator, a torn last line fenced before the next append).
"""

from __future__ import annotations

import errno
import json
import os
import stat
import threading
from collections import Counter

from incoherent.schemas.records import InputError

MAX_LINE = 1 << 20  # an answers line longer than this is skipped and counted
MAX_FILE = 64 << 20  # an answers file larger than this is refused (one annotator writes a few KB)


def load_tasks(tasks_dir: str) -> dict:
    from incoherent.schemas.annotation import TASKS_FORMAT

    path = os.path.join(tasks_dir, "tasks.json")
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file (TASKS_DIR must be an `annotate export` folder)") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not JSON ({exc})") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None
    if not isinstance(doc, dict) or doc.get("format") != TASKS_FORMAT:
        raise InputError(f"{path}: not an `annotate export` tasks file")
    return doc


def answers_folder(tasks_dir: str, answers_dir: str | None) -> str:
    """The answers folder, checked and created: never a link, a file, or a folder holding linked answer files."""
    flag = "--answers" if answers_dir else "TASKS_DIR/answers"
    folder = answers_dir or os.path.join(tasks_dir, "answers")
    if os.path.islink(folder):
        raise InputError(f"{flag}: {folder} is a symbolic link; answers are never written through links")
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise InputError(f"{flag}: {folder} is a file, not a folder")
    for sub in (folder, os.path.join(folder, "practice")):
        if os.path.islink(sub):
            raise InputError(f"{flag}: {sub} is a symbolic link; answers are never written through links")
        try:
            os.makedirs(sub, exist_ok=True)
        except FileExistsError:
            raise InputError(f"{flag}: {sub} is a file, not a folder") from None
        except OSError as exc:
            raise InputError(f"{flag}: cannot create {sub} ({exc.strerror})") from None
        for entry in os.scandir(sub):
            if entry.is_symlink():
                raise InputError(
                    f"{flag}: {entry.path} is a symbolic link; answers are never written through links "
                    "(move the file there instead)"
                )
    if not os.access(folder, os.W_OK):
        raise InputError(f"{flag}: {folder} is not writable")
    return folder


class AnswerFileError(Exception):
    """An answers file that cannot be used (a link, not a regular file, too large)."""


def _valid(record) -> bool:
    return (
        isinstance(record, dict)
        and isinstance(record.get("task_id"), str)
        and isinstance(record.get("item_id"), str)
        and type(record.get("answer")) is int
    )


class AnswerStore:
    """Append-only answers per annotator; an answer is on disk (written and fsynced) before it counts."""

    def __init__(self, answers_dir: str, export_id: str):
        self.dir, self.export_id = answers_dir, export_id
        self._lock = threading.Lock()

    def path(self, name: str) -> str:
        return os.path.join(self.dir, f"{name}.jsonl")

    @staticmethod
    def _open(path: str, flags: int) -> int:
        try:
            fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise AnswerFileError(
                    f"{path} is a symbolic link; answers are never written through links"
                ) from None
            raise
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
            os.close(fd)
            raise AnswerFileError(f"{path} is not a regular file of its own (a device, FIFO or hard link)")
        if info.st_size > MAX_FILE:
            os.close(fd)
            raise AnswerFileError(f"{path} is larger than {MAX_FILE >> 20} MiB")
        return fd

    def records(self, path: str) -> tuple[list[dict], Counter]:
        """The readable answers of this export in file order, and the lines skipped by reason."""
        skipped: Counter = Counter()
        try:
            fd = self._open(path, os.O_RDONLY)
        except FileNotFoundError:
            return [], skipped
        with os.fdopen(fd, "rb") as f:
            data = f.read(MAX_FILE + 1)
        lines = data.split(b"\n")
        if lines[-1]:
            skipped["torn_last_line"] += 1  # a crash or a full disk mid-write: fenced off by the next append
        out = []
        for raw in lines[:-1]:
            if not raw.strip():
                continue
            if len(raw) > MAX_LINE:
                skipped["too_long"] += 1
                continue
            try:
                record = json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError:
                skipped["not_utf8"] += 1
                continue
            except (ValueError, RecursionError):  # not JSON, an int beyond Python's digit limit, deep nesting
                skipped["bad_json"] += 1
                continue
            if not _valid(record):
                skipped["not_an_answer"] += 1
            elif record.get("export_id") != self.export_id:
                skipped["other_export"] += 1
            else:
                out.append(record)
        return out, skipped

    def append(self, path: str, record: dict) -> None:
        """Append one JSON line, after a newline that fences off a torn last line; written and fsynced.

        A failed write (a full disk) is rolled back to the earlier size and raised: earlier answers stay readable.
        """
        data = (json.dumps(record, ensure_ascii=False, allow_nan=False, sort_keys=True) + "\n").encode(
            "utf-8"
        )
        with self._lock:
            created = not os.path.lexists(path)
            fd = self._open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
            try:
                size = os.fstat(fd).st_size
                if size and os.pread(fd, 1, size - 1) != b"\n":
                    data = b"\n" + data
                try:
                    view = memoryview(data)
                    while view:
                        view = view[os.write(fd, view) :]
                    os.fsync(fd)
                except OSError:
                    try:
                        os.ftruncate(fd, size)
                        os.fsync(fd)
                    except OSError:
                        pass
                    raise
            finally:
                os.close(fd)
            if created:
                dir_fd = os.open(os.path.dirname(path) or ".", os.O_RDONLY | os.O_DIRECTORY)
                try:
                    os.fsync(dir_fd)
                finally:
                    os.close(dir_fd)
