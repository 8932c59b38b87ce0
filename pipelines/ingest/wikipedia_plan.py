"""Read tasks of a Wikipedia dump: one per file, or one per byte range of a multistream dump.

Planned on the driver for local dumps; a remote multistream dump (``gs://``, ``s3://``) is planned as one task
naming its index, which :func:`expand_task` cuts into byte ranges on a worker. Plain functions, no Beam graph:
the command (:mod:`pipelines.ingest.wikipedia`) plans, the transforms (:mod:`pipelines.ingest.wikipedia_read`)
expand and read.
"""

from __future__ import annotations

import os

from incoherent.fileio.paths import is_remote
from incoherent.schemas.records import InputError
from incoherent.sources import bz2decode, mediawiki


def plan_reads(
    dumps: list[str],
    range_bytes: int = bz2decode.RANGE_BYTES,
    min_ranges: int = bz2decode.MIN_RANGES,
    whole_files: bool = False,
    indexes: dict[str, str] | None = None,
) -> list[dict]:
    """Read tasks: one per file, or one per byte range of a multistream dump (checked up front).

    A local multistream dump is cut into ranges here. A remote one (``gs://``, ``s3://``) becomes one
    *planning* task naming its index (found beside it, or given in ``indexes``): :func:`expand_task` cuts it
    into ranges on a worker, so the driver never reads the index (a quarter of a gigabyte for English).
    """
    indexes = indexes or {}
    tasks: list[dict] = []
    for path in dumps:
        if is_remote(path):  # remote (gs://, s3://): read through Beam's filesystems
            from incoherent.pipelines.runtime import storage

            if not storage.BeamFiles().isfile(path):
                raise InputError(f"{path}: no such file")
            site = mediawiki.read_siteinfo(path, opener=storage.open_raw)  # the header only
            index = None if whole_files else indexes.get(path) or remote_multistream_index(path)
            if index is None:
                tasks.append({"path": path})
                continue
            tasks.append(
                {
                    "path": path,
                    "index": index,
                    "range_bytes": range_bytes,
                    "min_ranges": min_ranges,
                    "site": _site_fields(site),
                }
            )
            continue
        if not os.path.exists(path):
            raise InputError(f"{path}: no such file")
        if os.path.isdir(path):
            raise InputError(f"{path}: is a directory, not a dump file")
        site = mediawiki.read_siteinfo(path)  # fails early on files that are not MediaWiki XML
        index = None if whole_files else indexes.get(path) or bz2decode.multistream_index(path)
        if index is None:
            tasks.append({"path": path})
            continue
        size = os.path.getsize(path)
        opener = None
        if is_remote(index):
            from incoherent.pipelines.runtime.storage import open_raw as opener
        offsets = bz2decode.stream_offsets(index, opener=opener)
        tasks.extend(_range_tasks(path, offsets, size, range_bytes, min_ranges, _site_fields(site)))
    return tasks


def _site_fields(site: mediawiki.SiteInfo) -> dict:
    return {"base": site.base, "dbname": site.dbname, "namespaces": site.namespaces}


def _range_tasks(
    path: str, offsets: list[int], size: int, range_bytes: int, min_ranges: int, site: dict
) -> list[dict]:
    ranges = bz2decode.multistream_ranges(
        path, offsets, size, target_bytes=range_bytes, min_ranges=min_ranges
    )
    return [
        {"path": path, "start": start, "end": end, "last": i == len(ranges) - 1, "site": site}
        for i, (start, end) in enumerate(ranges)
    ]


def remote_multistream_index(path: str) -> str | None:
    """The index beside a remote multistream dump, found through Beam's filesystems, or None for a dump
    that is not named as a multistream one. A multistream dump without its index is an InputError saying
    how to get it: read whole, it would be one task on one worker, however large the cluster.
    """
    from incoherent.pipelines.runtime import storage

    folder, name = path.rsplit("/", 1)
    names = bz2decode.multistream_index_names(name)
    if not names:
        return None
    for candidate in names:
        if storage.BeamFiles().isfile(f"{folder}/{candidate}"):
            return f"{folder}/{candidate}"
    raise InputError(
        f"{path}: its multistream index {folder}/{names[0]} is missing; copy it there from the dump's "
        "folder on https://dumps.wikimedia.org/ (or pass --multistream-index), so workers can split the dump"
    )


def expand_task(task: dict) -> list[dict]:
    """The read tasks of one planned task: a remote multistream dump's byte ranges, from its index read on
    this worker through Beam's filesystems (offsets only, streamed); any other task as it is."""
    if "index" not in task:
        return [task]
    from apache_beam.io.filesystems import FileSystems

    from incoherent.pipelines.runtime.storage import open_raw

    size = FileSystems.match([task["path"]])[0].metadata_list[0].size_in_bytes
    offsets = bz2decode.stream_offsets(task["index"], opener=open_raw)
    tasks = _range_tasks(task["path"], offsets, size, task["range_bytes"], task["min_ranges"], task["site"])
    if "limits" in task:  # the read limits travel with every range
        for each in tasks:
            each["limits"] = task["limits"]
    return tasks


def index_flags(dumps: list[str], given: list[str] | None) -> dict[str, str]:
    """``--multistream-index`` values paired with the dumps (one per dump, in order)."""
    if not given:
        return {}
    if len(given) != len(dumps):
        raise InputError(
            f"--multistream-index: given {len(given)} times for {len(dumps)} dumps; give it once per dump"
        )
    from incoherent.fileio.paths import absolute
    from incoherent.pipelines.runtime.storage import BeamFiles

    indexes = [absolute(i) for i in given]
    for index in indexes:
        if not BeamFiles().isfile(index):
            raise InputError(f"--multistream-index: {index}: no such file")
    return dict(zip(dumps, indexes, strict=True))
