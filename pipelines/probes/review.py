"""``incoherent probes ... --review N``: the review page of a finished probe run (imported only when asked).

Reads the written ``OUT/probe-<phenomenon>/`` tables a record batch at a time, keeps the ``N`` rows of each
phenomenon with the smallest hash of (seed, "review", phenomenon, id) (:func:`corpora.probes.review.sample`) and
writes ``OUT/review/index.html`` (self-contained) and ``OUT/review/review.md``. Local files are written through
a temporary file and a rename, so a link at either path is replaced, never followed.
"""

from __future__ import annotations

import posixpath

from incoherent.corpora.probes.review import html_page, markdown, sample
from incoherent.pipelines.runtime import storage
from incoherent.terminal import printable

REVIEW_DIR = "review"
COLUMNS = ["id", "phenomenon", "sentences", "intruder_index", "intruder_sentence", "probed_sentence", "edits"]


def _rows(out: str, phenomenon: str, n: int, seed: int) -> list[dict]:
    import pyarrow.parquet as pq
    from apache_beam.io.filesystems import FileSystems

    def rows():
        for path in storage.list_files(posixpath.join(out, f"probe-{phenomenon}", "*.parquet")):
            with FileSystems.open(path) as f:
                parquet = pq.ParquetFile(f)
                columns = [c for c in [*COLUMNS, "referent"] if c in parquet.schema_arrow.names]
                for batch in parquet.iter_batches(batch_size=2048, columns=columns):
                    yield from batch.to_pylist()

    return sample(rows(), n, seed)


def write_review(out: str, phenomena: list[str], n: int, seed: int) -> dict[str, int]:
    """Write the review page and its markdown under ``OUT/review/``; returns the probes shown per phenomenon."""
    sampled = {p: _rows(out, p, n, seed) for p in phenomena}
    sampled = {p: rows for p, rows in sampled.items() if rows}
    title = f"Probe review: {n} random probes per phenomenon"
    files = {"index.html": html_page(sampled, title, seed), "review.md": markdown(sampled, title, seed)}
    # sentences from the data, read by people (`cat review.md` too): control characters escaped
    files = {name: printable(text, lines=True) for name, text in files.items()}
    folder = posixpath.join(out, REVIEW_DIR)
    if storage.is_remote(out):
        for name, text in files.items():
            storage.write_bytes(posixpath.join(folder, name), text.encode("utf-8"))
    else:
        from incoherent.fileio.outputs import make_folder, replace_text

        make_folder(folder)
        for name, text in files.items():
            replace_text(posixpath.join(folder, name), text)
    return {p: len(rows) for p, rows in sampled.items()}
