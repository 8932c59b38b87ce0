"""Paths as workers see them: every data path through Beam's ``FileSystems`` (local, ``gs://``, ``s3://``).

Workers of a distributed runner are other processes, often on other machines, with another working
directory: a relative path means something else there. :func:`absolute` turns a local path into an absolute
one on the driver, before the path goes into a transform; remote URLs are kept as they are.

    >>> absolute("gs://bucket/docs")
    'gs://bucket/docs'
    >>> absolute("/data/../data/docs")
    '/data/docs'

:func:`open_file` is the opener :class:`retrieval.index.TfidfIndex` saves and loads through, so an index can
live in a bucket and is never written to a worker's local disk.
"""

from __future__ import annotations

import contextlib
import glob
import io
import os
import posixpath
import shutil
import tempfile
from collections.abc import Iterator
from typing import BinaryIO

from incoherent.fileio.paths import absolute, is_remote, join
from incoherent.pipelines.runtime.options import bound_driver_retries, storage_options
from incoherent.schemas.records import InputError

__all__ = [
    "absolute",
    "is_remote",
    "join",
]  # the floor's (incoherent.fileio.paths), re-exported: pipelines call storage.join


S3_CONNECT_SECONDS = 5
S3_ATTEMPTS = 3
_REACHED: set[str] = set()


def _worker_options():
    """On an SDK worker, the pipeline's options, which Beam's ``sdk_worker_main`` hands to its filesystems
    (``FileSystems.set_options``; ``incoherent-sdk-worker`` starts it with them): a worker host's own S3 calls then
    use the build's ``--s3_*`` endpoint and keys, as Beam's S3 filesystem there does. None elsewhere."""
    from apache_beam.io.filesystems import FileSystems

    return getattr(FileSystems, "_pipeline_options", None)


def check_reachable(path: str) -> None:
    """For an ``s3://`` path: one bounded request to its bucket before Beam's S3 client touches it.

    Beam retries a failing S3 call 7 times with exponential backoff (botocore retrying each): an unreachable
    endpoint took 6.7 minutes to fail here. This check gives up after a few seconds with one line saying
    what is wrong (endpoint, bucket, credentials); it runs once per endpoint, bucket and process. ``gs://`` has its own
    bound (:func:`pipelines.runtime.options.bound_driver_retries`).
    """
    if not str(path).startswith("s3://"):
        return
    bucket = path[len("s3://") :].split("/", 1)[0]
    try:
        import boto3
        from botocore.config import Config
        from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError
    except ImportError:
        raise InputError(
            f"{path}: s3:// paths need boto3 (install incoherent with the `aws` extra: pip install 'incoherent[aws]')"
        ) from None
    from apache_beam.options.pipeline_options import PipelineOptions, S3Options

    options = (storage_options() or _worker_options() or PipelineOptions([])).view_as(S3Options)
    reached = f"{options.s3_endpoint_url or ''} {bucket}"
    if reached in _REACHED:
        return
    client = boto3.session.Session().client(
        "s3",
        region_name=options.s3_region_name,
        endpoint_url=options.s3_endpoint_url,
        use_ssl=not options.s3_disable_ssl,
        verify=options.s3_verify,
        aws_access_key_id=options.s3_access_key_id,
        aws_secret_access_key=options.s3_secret_access_key,
        aws_session_token=options.s3_session_token,
        config=Config(
            connect_timeout=S3_CONNECT_SECONDS,
            read_timeout=4 * S3_CONNECT_SECONDS,
            retries={"max_attempts": S3_ATTEMPTS, "mode": "standard"},
        ),
    )
    try:
        client.head_bucket(Bucket=bucket)
    except NoCredentialsError:
        raise InputError(
            f"{path}: no AWS credentials (pass --s3_access_key_id/--s3_secret_access_key or configure AWS)"
        ) from None
    except ClientError as exc:
        code = str(exc.response.get("Error", {}).get("Code", ""))
        reason = {"404": "no such bucket", "NoSuchBucket": "no such bucket", "403": "access denied"}.get(
            code, str(exc).splitlines()[0][:200]
        )
        raise InputError(f"{path}: {reason} (bucket {bucket})") from None
    except BotoCoreError as exc:
        raise InputError(f"{path}: cannot reach S3 ({str(exc).splitlines()[0][:200]})") from None
    _REACHED.add(reached)


def exists(path: str) -> bool:
    """Whether a file or a directory (a prefix with objects under it, for object stores) exists (driver side)."""
    from apache_beam.io.filesystems import FileSystems

    if is_remote(path):
        bound_driver_retries()
        check_reachable(path)
    try:
        if FileSystems.exists(path):
            return True
        if is_remote(path):
            return bool(list_files(posixpath.join(path.rstrip("/"), "**")))
        return False
    except Exception as exc:  # noqa: BLE001 - Beam wraps every storage failure in its own types
        raise InputError(f"{path}: cannot be read ({storage_error(exc)})") from None


def list_files(pattern: str) -> list[str]:
    """Paths matching a glob (``**`` crosses folders), sorted."""
    from apache_beam.io.filesystems import FileSystems

    return sorted(m.path for r in FileSystems.match([pattern]) for m in r.metadata_list)


def storage_error(exc: BaseException) -> str:
    """The first line of a storage failure, without Beam's wrapping (``BeamIOError: Match operation ...``)."""
    causes = getattr(exc, "exception_details", None)
    if isinstance(causes, dict) and causes:
        exc = next(iter(causes.values()))
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]


def open_file(path: str, mode: str = "rb") -> BinaryIO:
    """Open ``path`` for binary reading (``"rb"``) or writing (``"wb"``) through Beam's filesystems.

    Raises ``FileNotFoundError`` for a missing file. Local paths use the local disk directly (parent
    folders are created for writing); remote files are read whole (readers get a seekable buffer).
    """
    from apache_beam.io.filesystem import CompressionTypes
    from apache_beam.io.filesystems import FileSystems

    if not is_remote(path):
        if "w" in mode:
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        return open(path, mode)  # noqa: SIM115 - the caller closes it
    if "w" in mode:
        return FileSystems.create(path, compression_type=CompressionTypes.UNCOMPRESSED)
    if not FileSystems.exists(path):
        raise FileNotFoundError(path)
    with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as f:
        return io.BytesIO(f.read())


def read_bytes(path: str) -> bytes:
    with open_file(path, "rb") as f:
        return f.read()


def write_bytes(path: str, data: bytes) -> None:
    with open_file(path, "wb") as f:
        f.write(data)


def delete_tree(path: str) -> None:
    """Delete a folder and everything under it (a prefix, for object stores); nothing if it is missing."""
    from apache_beam.io.filesystems import FileSystems

    files = list_files(posixpath.join(path.rstrip("/"), "**")) if is_remote(path) else []
    if is_remote(path):
        if files:
            FileSystems.delete(files)
        return
    shutil.rmtree(path, ignore_errors=True)


def open_any(path: str) -> BinaryIO:
    """A file opened for binary reads: remote ones streamed (:func:`open_raw`), local ones with ``open``."""
    return open_raw(path) if is_remote(path) else open(path, "rb")  # noqa: SIM115 - the caller closes it


class BeamFiles:
    """:class:`incoherent.fileio.paths.Files` through Beam's filesystems (local paths with plain file calls): a remote
    "directory" is a prefix with files. Parquet footers and JSON are read where they lie (``open`` streams;
    pyarrow reads a footer by seeking to the end)."""

    def glob(self, pattern: str) -> list[str]:
        if not is_remote(pattern):
            return sorted(glob.glob(pattern, recursive=True))
        return list_files(pattern)

    def size(self, path: str) -> int:
        from apache_beam.io.filesystems import FileSystems

        if not is_remote(path):
            return os.path.getsize(path)
        return FileSystems.match([path])[0].metadata_list[0].size_in_bytes

    def open(self, path: str) -> BinaryIO:
        return open_any(path)

    def isdir(self, path: str) -> bool:
        if not is_remote(path):
            return os.path.isdir(path)
        return bool(self.files_under(path))

    def isfile(self, path: str) -> bool:
        from apache_beam.io.filesystems import FileSystems

        if not is_remote(path):
            return os.path.isfile(path)
        bound_driver_retries()  # listing inputs is the driver's work
        check_reachable(path)
        try:
            return FileSystems.exists(path) and not path.endswith("/")
        except Exception as exc:  # noqa: BLE001
            raise InputError(f"{path}: cannot be read ({storage_error(exc)})") from None

    def files_under(self, path: str) -> list[str]:
        if not is_remote(path):
            return [os.path.join(root, f) for root, _, files in os.walk(path) for f in files]
        bound_driver_retries()
        check_reachable(path)
        try:
            return list_files(posixpath.join(path.rstrip("/"), "**"))
        except Exception as exc:  # noqa: BLE001
            raise InputError(f"{path}: cannot be listed ({storage_error(exc)})") from None


def open_raw(path: str) -> BinaryIO:
    """A remote file opened for streaming binary reads (no decompression by Beam)."""
    from apache_beam.io.filesystem import CompressionTypes
    from apache_beam.io.filesystems import FileSystems

    return FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED)


@contextlib.contextmanager
def local_copy(path: str) -> Iterator[str]:
    """A local path with the contents of ``path``: the path itself, or a worker-local temporary copy with the
    same file name (deleted afterwards) for remote files that a library can only read from disk."""
    if not is_remote(path):
        yield path
        return
    folder = tempfile.mkdtemp(prefix="incoherent-copy-")
    try:
        target = os.path.join(folder, posixpath.basename(path))
        with open_raw(path) as src, open(target, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        yield target
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def open_seekable(path: str) -> BinaryIO:
    """``path`` opened for reading by ranges: a local file, or Beam's stream of a ``gs://`` / ``s3://`` object
    (its seeks become ranged reads, so only the bytes read are fetched). A remote stream that cannot seek is
    copied once to an anonymous local temporary file (the whole object is then fetched)."""
    if not is_remote(path):
        return open(path, "rb")  # noqa: SIM115 - the caller closes it
    from apache_beam.io.filesystems import FileSystems

    if not FileSystems.exists(path):
        raise FileNotFoundError(path)
    stream = open_raw(path)
    if getattr(stream, "seekable", None) is not None and stream.seekable():
        return stream
    copy = tempfile.TemporaryFile(prefix="incoherent-copy-")  # noqa: SIM115 - the caller closes it
    with stream:
        shutil.copyfileobj(stream, copy, 1 << 20)
    copy.seek(0)
    return copy
