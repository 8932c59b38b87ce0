"""Bounded reads of the small text files a study takes: instructions, results, answers, keys, predictions.

One rule for all of them: a regular UTF-8 file (a BOM dropped, line ends as ``\\n``) no larger than the limit
its caller gives. A folder, a device, a FIFO (which would wait forever) or a larger file is one line naming
the file, and the option it came from where there is one.
"""

from __future__ import annotations

import os
import stat

from incoherent.schemas.records import InputError

MAX_INPUT_BYTES = 256 << 20  # a study file read whole (results, answers, keys, predictions); ~9x in memory


def size_text(limit: int) -> str:
    """``256 MiB``, ``64 KiB``: a limit as the messages give it."""
    return f"{limit >> 20} MiB" if limit >= 1 << 20 else f"{limit >> 10} KiB"


def read_text(path: str, what: str = "", limit: int = MAX_INPUT_BYTES, option: str = "") -> str:
    """The text of ``path`` read whole; ``what`` says in the message what the file was for, ``option`` (e.g.
    ``--instructions``) which option named it.

    >>> read_text("/")
    Traceback (most recent call last):
    ...
    incoherent.errors.InputError: /: a folder, not a file
    """
    where = f"{option}: {path}" if option else path
    about = f" ({what})" if what else ""
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        raise InputError(f"{where}: no such file{about}") from None
    except OSError as exc:
        raise InputError(f"{where}: cannot read ({exc.strerror or exc}){about}") from None
    if stat.S_ISDIR(info.st_mode):
        raise InputError(f"{where}: a folder, not a file{about}")
    if not stat.S_ISREG(info.st_mode):
        raise InputError(f"{where}: not a regular file (a device, FIFO or socket){about}")
    if info.st_size > limit:
        raise InputError(f"{where}: larger than {size_text(limit)}{about}")
    try:
        with open(path, encoding="utf-8-sig") as f:
            text = f.read(limit + 1)
    except UnicodeDecodeError:
        raise InputError(f"{where}: not UTF-8 text{about}") from None
    except OSError as exc:
        raise InputError(f"{where}: cannot read ({exc.strerror or exc}){about}") from None
    if len(text) > limit:  # grown since the size was read
        raise InputError(f"{where}: larger than {size_text(limit)}{about}")
    return text
