"""Direct tests of :mod:`pipelines.runtime.errors`: the one line of an expected error, however it was wrapped."""

from __future__ import annotations

import errno

from pipelines.runtime.errors import disk_full_message, input_error_message
from schemas.records import InputError


def test_input_error_message_ignores_other_errors():
    assert input_error_message(ValueError("boom")) is None
    assert (
        input_error_message(RuntimeError("x\nschemas.records.InputError: a.xml: bad [while running 'R']"))
        == "a.xml: bad"
    )


def test_input_error_message_follows_the_causes():
    try:
        try:
            raise InputError("docs/a.parquet: not a documents table\nmore detail")
        except InputError as inner:
            raise RuntimeError("the runner's wrapper") from inner
    except RuntimeError as outer:
        assert input_error_message(outer) == "docs/a.parquet: not a documents table"


def test_disk_full_message_from_an_oserror_or_a_workers_text():
    full = OSError(errno.ENOSPC, "No space left on device", "OUT/x.parquet")
    assert disk_full_message(full) == (
        "no space left on device writing OUT/x.parquet; free some space or choose another --out"
    )
    quota = RuntimeError("worker failed: OSError: [Errno 122] Disk quota exceeded")
    assert disk_full_message(quota) == "no space left on device; free some space or choose another --out"
    assert disk_full_message(OSError(errno.EACCES, "Permission denied")) is None
    assert disk_full_message(ValueError("boom")) is None
