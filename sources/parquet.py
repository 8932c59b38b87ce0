"""Local Parquet files read whole or by schema, with one error for any unreadable file.

pyarrow raises several exception types for a file that is not Parquet or is corrupt (``ArrowInvalid``,
``OSError``, ...); every reader here turns them into one :class:`InputError` naming the file.
"""

from __future__ import annotations

from typing import Any, BinaryIO

from incoherent.schemas.records import InputError


def unreadable(path: str, exc: BaseException) -> InputError:
    """The one error for a Parquet file pyarrow cannot read."""
    return InputError(f"{path}: not a readable Parquet file ({exc})")


def read_table(path: str, columns: list[str] | None = None) -> Any:
    """The ``pyarrow.Table`` of a local Parquet file (only ``columns`` when given)."""
    import pyarrow.parquet as pq

    try:
        return pq.read_table(path, columns=columns)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for corrupt files
        raise unreadable(path, exc) from None


def read_open(handle: BinaryIO, columns: list[str] | None = None) -> Any:
    """The ``pyarrow.Table`` of an open Python file (Beam's ``FileSystems.open``, ``open``), read on this thread.

    pyarrow's defaults (``pre_buffer``, ``use_threads``) read a Python file from Arrow's I/O threads, which call
    back into Python; at interpreter exit such a thread can outlive the interpreter and the process dies in
    ``terminate called without an active exception`` (SIGABRT, apache/arrow#34314) after the command's work
    is done: 20 of 40 fresh processes here, 0 of 40 with both off (tests/sources/test_parquet_exit.py).
    """
    import pyarrow.parquet as pq

    return pq.read_table(handle, columns=columns, pre_buffer=False, use_threads=False)


def column_names(path: str, handle: BinaryIO | None = None) -> list[str]:
    """The column names of a Parquet file, from its footer (``handle``: an open file of ``path``)."""
    import pyarrow.parquet as pq

    try:
        return pq.read_schema(handle if handle is not None else path).names
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for corrupt files
        raise unreadable(path, exc) from None


def open_file(path: str) -> Any:
    """The ``pyarrow.parquet.ParquetFile`` of a local file (its footer read), for reading row groups."""
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises ArrowInvalid, OSError ...
        raise unreadable(path, exc) from None


def read_row_group(handle: Any, path: str, group: int, columns: list[str]) -> Any:
    """One row group of an open file; one that cannot be decoded (a corrupt data page behind a valid footer)
    makes the file unusable: an InputError naming the file and the row group."""
    try:
        return handle.read_row_group(group, columns=columns)
    except Exception as exc:  # noqa: BLE001 - pyarrow: ArrowInvalid, OSError, ... for corrupt pages
        message = str(exc).split("\n", 1)[0][:300]
        raise InputError(
            f"{path}: row group {group} cannot be read ({type(exc).__name__}: {message})"
        ) from None
