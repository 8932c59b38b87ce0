"""Input paths of the ingest commands: files as given, directories expanded, clear errors for the rest."""

from __future__ import annotations

import os

from schemas.records import InputError


def expand_inputs(
    paths: list[str], in_directories: tuple[str, ...], as_files: tuple[str, ...], expected: str
) -> list[str]:
    """Files to read, in the given order, each directory replaced by its matching files (recursive, sorted).

    ``in_directories``: suffixes picked up inside directories; ``as_files``: suffixes accepted when a file is
    named directly; ``expected``: what to say when a named file does not fit.
    """
    inputs: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            found = sorted(
                os.path.join(root, f)
                for root, _, files in os.walk(path)
                for f in files
                if f.endswith(in_directories)
            )
            if not found:
                raise InputError(f"{path}: directory holds no {' or '.join(in_directories)} files")
            inputs.extend(found)
        elif os.path.isfile(path):
            if not path.endswith(as_files):
                raise InputError(f"{path}: unsupported file type (expected {expected})")
            inputs.append(path)
        else:
            raise InputError(f"{path}: no such file or directory")
    return inputs
