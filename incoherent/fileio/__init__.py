"""The floor for file I/O: every layer's paths and files go through here, and it knows nothing of the project.

- :mod:`incoherent.fileio.paths`: local and remote paths (the one remote-path test, absolute paths, joins), safe
  names, opening a local regular file without blocking on a FIFO, the :class:`~incoherent.fileio.paths.Files`
  interface and the expansion of input paths.
- :mod:`incoherent.fileio.outputs`: writing a local output file or folder, never through a link: atomic
  replacement, the markers of files a command wrote, clearing a folder, the names of the lock and of partial
  files.

Beam's filesystems (``gs://``, ``s3://``) are reached through :mod:`pipelines.runtime.storage`, which takes its
paths from here.
"""
