"""Bench-only: count the bytes every process reads and writes through Beam's ``FileSystems``.

``bench/bench_distributed.py`` puts this folder first on ``PYTHONPATH`` of the build (the driver) and of the SDK
worker pool, with ``INCOHERENT_BENCH_IO`` naming a folder and ``INCOHERENT_BENCH_ROLE`` the side (``driver``,
``worker``). Each file opened through ``FileSystems.open``/``create`` appends one line when it is closed:
``time role pid read_bytes written_bytes path``. Socket traffic to the storage is not in ``/proc/PID/io``, and
processes of the pool end without running ``atexit``, hence a line per file. Not used outside the benchmark.
"""

import os

_DIR = os.environ.get("INCOHERENT_BENCH_IO")


def _install(FileSystems) -> None:  # noqa: N803 - the class
    import time

    role = os.environ.get("INCOHERENT_BENCH_ROLE", "?")
    log = os.path.join(_DIR, f"io-{role}.log")
    opened, created = FileSystems.open, FileSystems.create

    class Counted:
        def __init__(self, f, path):
            self._f, self._path, self._read, self._written, self._done = f, path, 0, 0, False

        def read(self, *args):
            data = self._f.read(*args)
            self._read += len(data)
            return data

        def readinto(self, buffer):
            n = self._f.readinto(buffer)
            self._read += n or 0
            return n

        def readline(self, *args):
            data = self._f.readline(*args)
            self._read += len(data)
            return data

        def write(self, data):
            self._written += len(data)
            return self._f.write(data)

        def close(self):
            try:
                return self._f.close()
            finally:
                if not self._done:
                    self._done = True
                    line = (
                        f"{time.time():.3f} {role} {os.getpid()} {self._read} {self._written} {self._path}\n"
                    )
                    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
                    try:
                        os.write(fd, line.encode())
                    finally:
                        os.close(fd)

        def __getattr__(self, name):
            return getattr(self._f, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.close()

        def __iter__(self):
            for line in self._f:
                self._read += len(line)
                yield line

    def open_(path, *args, **kwargs):
        return Counted(opened(path, *args, **kwargs), path)

    def create(path, *args, **kwargs):
        return Counted(created(path, *args, **kwargs), path)

    FileSystems.open = staticmethod(open_)
    FileSystems.create = staticmethod(create)


class _PatchOnImport:
    """Patch ``FileSystems`` when a process imports it, not before: importing Beam here would add its
    memory to every process, the build's own included."""

    name = "apache_beam.io.filesystems"

    def find_spec(self, name, path, target=None):
        if name != self.name:
            return None
        import importlib.util
        import sys

        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _install(module.FileSystems)

        spec.loader.exec_module = exec_module
        return spec


if _DIR:
    import sys

    sys.meta_path.insert(0, _PatchOnImport())

if os.environ.get(
    "STORAGE_EMULATOR_HOST"
):  # the bench's GCS emulator: SDK workers connect without credentials
    from incoherent.pipelines.runtime.options import use_gcs_emulator

    use_gcs_emulator()
