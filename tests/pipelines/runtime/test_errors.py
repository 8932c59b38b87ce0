"""Direct tests of :mod:`pipelines.runtime.errors`: the one line of an expected error, however it was wrapped."""

from __future__ import annotations

import errno

from incoherent.pipelines.runtime.errors import disk_full_message, flink_buffers_message, input_error_message
from incoherent.schemas.records import InputError


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


# what `incoherent probes` on a Flink 1.19 TaskManager with 256 MiB of network buffers and Flink's default
# taskmanager.network.sort-shuffle.min-buffers (512) ended with, as Beam's portable runner raised it
FLINK_FAILURE = (
    "Pipeline BeamApp-root-1127210554-453e8d5_07b83120-430d-4324-94b9-42fa59c09bf8 failed in state FAILED: "
    "java.io.IOException: Insufficient number of network buffers: required 512, but only 431 available. The "
    "total number of network buffers is currently set to 16384 of 32768 bytes each. You can increase this number "
    "by setting the configuration keys 'taskmanager.memory.network.fraction', 'taskmanager.memory.network.min', "
    "and 'taskmanager.memory.network.max'."
)


def test_a_flink_job_short_of_network_buffers_is_one_line_naming_the_settings():
    try:
        try:
            raise RuntimeError(FLINK_FAILURE)
        except RuntimeError as inner:
            raise ValueError("wrapped") from inner
    except ValueError as outer:
        line = flink_buffers_message(outer)
    assert "\n" not in line and line.startswith(
        "the Flink TaskManagers ran out of network buffers (an exchange"
    )
    assert "needed 512, 431 were left" in line and "taskmanager.network.sort-shuffle.min-buffers: 64" in line
    assert (
        flink_buffers_message(RuntimeError("Pipeline failed in state FAILED: java.io.IOException: x")) is None
    )
