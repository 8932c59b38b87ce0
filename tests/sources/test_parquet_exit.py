"""A process that read a Parquet table from an open Python file exits cleanly (:func:`sources.parquet.read_open`).

With pyarrow's defaults, Arrow's I/O threads read the Python file and could outlive the interpreter: the process
then died at exit with ``terminate called without an active exception`` (SIGABRT) after its work was done, in
20 of 40 fresh processes on this machine (the e2e step's ``docs/lm-eval.md`` block, ``incoherent export lm-eval``,
failed on it once).
"""

from __future__ import annotations

import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq

from tests.conftest import ROOT

READ = """
import sys
from incoherent.sources.parquet import read_open
with open(sys.argv[1], "rb") as f:
    print(read_open(f, columns=["a", "b"]).num_rows)
"""


def test_reading_an_open_file_never_aborts_the_process_at_exit(tmp_path):
    path = tmp_path / "t.parquet"
    rows = 200_000
    pq.write_table(
        pa.table({"a": list(range(rows)), "b": [str(i) for i in range(rows)]}), path, row_group_size=5000
    )
    # 12 processes: with the defaults about half aborted, so all 12 passing by chance is about 1 in 4,000
    for _ in range(12):
        done = subprocess.run([sys.executable, "-c", READ, str(path)], capture_output=True, text=True, timeout=60,
                              cwd=ROOT)  # fmt: skip
        assert (done.returncode, done.stdout) == (0, f"{rows}\n"), done.stderr[-500:]
