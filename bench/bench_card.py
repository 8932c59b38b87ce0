"""Peak memory and time of the card's statistics (``corpora.card.stats``) as intruder tables grow.

The input is the ``intruder-wikipedia`` table of a finished build (``--dataset``, e.g. ``out/sample/dataset``),
repeated with fresh ids until it has N rows, written as Parquet shards of 50,000 rows. For each N, two child
processes read the same files: ``intruder_stats`` (record batches of a few columns) and, as the baseline,
``pyarrow.parquet.read_table`` of those files (what reading the table whole costs). Each child reports its own
peak RSS (``ru_maxrss``) and wall time; the script prints both and their ratio. Example::

    python bench/bench_card.py --dataset out/sample/dataset --rows 100000,400000
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

CHILD = """
import json, resource, sys, time, glob
sys.path.insert(0, {root!r})
files = sorted(glob.glob({pattern!r}))
started = time.time()
if {mode!r} == "stats":
    from incoherent.corpora.card.stats import intruder_stats
    result = intruder_stats(files)
    rows = sum(c["documents"] for c in result["by_split"].values())
else:
    import pyarrow.parquet as pq
    tables = [pq.read_table(f, columns=["sentences", "label", "intruder_index", "similarity", "split"]) for f in files]
    rows = sum(t.num_rows for t in tables)
print(json.dumps({{"rows": rows, "seconds": round(time.time() - started, 2),
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}}))
"""


def make_table(source: pa.Table, rows: int, folder: str, shard: int = 50_000) -> str:
    os.makedirs(folder, exist_ok=True)
    written, copy = 0, 0
    while written < rows:
        take = min(shard, rows - written)
        parts = []
        while sum(p.num_rows for p in parts) < take:
            ids = pc.binary_join_element_wise(source.column("id"), pa.scalar(f"-{copy}"), "")
            parts.append(source.set_column(source.schema.get_field_index("id"), "id", ids))
            copy += 1
        table = pa.concat_tables(parts).slice(0, take)
        pq.write_table(
            table, os.path.join(folder, f"train-{written // shard:05d}.parquet"), row_group_size=10_000
        )
        written += take
    return os.path.join(folder, "*.parquet")


def child(mode: str, pattern: str) -> dict:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = CHILD.format(root=root, pattern=pattern, mode=mode)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default="out/sample/dataset")
    parser.add_argument("--rows", default="100000,400000")
    args = parser.parse_args()
    files = sorted(glob.glob(os.path.join(args.dataset, "intruder-wikipedia", "*.parquet")))
    if not files:
        sys.exit(f"error: {args.dataset}: no intruder-wikipedia tables (run `incoherent build` first)")
    source = pa.concat_tables([pq.read_table(f) for f in files])
    with tempfile.TemporaryDirectory() as tmp:
        for n in [int(x) for x in args.rows.split(",")]:
            pattern = make_table(source, n, os.path.join(tmp, str(n)))
            size = sum(os.path.getsize(f) for f in glob.glob(pattern)) / 2**20
            stats, whole = child("stats", pattern), child("whole", pattern)
            assert stats["rows"] == whole["rows"] == n
            print(
                f"rows {n:>9,} ({size:,.0f} MiB Parquet): card_stats {stats['peak_rss_mb']:,} MB peak, "
                f"{stats['seconds']} s | read_table {whole['peak_rss_mb']:,} MB peak, {whole['seconds']} s | "
                f"memory ratio {stats['peak_rss_mb'] / whole['peak_rss_mb']:.2f}",
                flush=True,
            )
            for f in glob.glob(pattern):
                os.remove(f)


if __name__ == "__main__":
    started = time.time()
    main()
    print(f"total {time.time() - started:.0f} s")
