#!/usr/bin/env python3
"""Peak memory of what the neighbours stage does first: load an index's matrix and prepare it for scoring.

    .venv/bin/python bench/bench_load_index.py INDEX_DIR             # as the neighbours stage does it
    .venv/bin/python bench/bench_load_index.py INDEX_DIR --in-memory # both layouts in memory (no spill file)
    PYTHONPATH=bench/work/src-old .venv/bin/python bench/bench_load_index.py INDEX_DIR   # another tree's code

Prints one JSON line: the matrix's non-zeros, resident memory after loading the matrix and the peak and
resident memory after ``retrieval.topk.prepare`` (maximum RSS of this process, from ``getrusage``, and a
psutil sample every 20 ms), and the seconds of each step.
"""

from __future__ import annotations

import inspect
import json
import resource
import sys
import threading
import time

import psutil

from incoherent.retrieval.index import TfidfIndex
from incoherent.retrieval.topk import prepare


def main() -> None:
    process, peak, done = psutil.Process(), [0], threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], process.memory_info().rss)
            time.sleep(0.02)

    threading.Thread(target=sample, daemon=True).start()
    started = time.perf_counter()
    index = TfidfIndex.load(sys.argv[1])
    matrix, text_keys = index.matrix, index.text_keys
    loaded, loaded_rss = time.perf_counter(), process.memory_info().rss
    options = {}  # what this tree's neighbours stage passes
    parameters = inspect.signature(prepare).parameters
    if "consume" in parameters:
        options["consume"] = True
    if "spill" in parameters and "--in-memory" not in sys.argv[2:]:
        options["spill"] = True
    scoring = prepare(matrix, text_keys, **options)
    prepared = time.perf_counter()
    del index, matrix
    done.set()
    print(
        json.dumps(
            {
                "index": sys.argv[1],
                "code": sys.modules["incoherent.retrieval.topk"].__file__,
                "options": options,
                "nnz": int(scoring.indptr[-1]),
                "rss_loaded_mb": loaded_rss >> 20,
                "peak_rss_mb": max(peak[0], resource.getrusage(resource.RUSAGE_SELF).ru_maxrss << 10) >> 20,
                "rss_prepared_mb": process.memory_info().rss >> 20,
                "load_seconds": round(loaded - started, 1),
                "prepare_seconds": round(prepared - loaded, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
