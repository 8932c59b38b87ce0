"""Grouping through files: the same groups as Beam's own transforms, nothing left on disk afterwards."""

from __future__ import annotations

import os

import apache_beam as beam
from apache_beam.runners.portability.fn_api_runner import FnApiRunner
from apache_beam.testing.util import assert_that, equal_to

from incoherent.corpora.seeding import stable_hash
from incoherent.pipelines.runtime import spill, spill_shards


def run_with_spill(tmp_path, build, buckets_dir="spill"):
    spill_dir = str(tmp_path / buckets_dir)
    with beam.Pipeline(runner=FnApiRunner()) as p:
        spill.use_spill_dir(p, spill_dir)
        build(p)
    leftovers = [f for _, _, files in os.walk(spill_dir) for f in files]
    assert leftovers == []  # every chunk is deleted once read
    return spill_dir


def sorted_groups(element):
    key, values = element
    return key, sorted(values)


def test_group_by_key_through_files_equals_beams(tmp_path):
    pairs = [(f"k{i % 7}", {"n": i, "t": (i, "x")}) for i in range(300)]
    expected = [(f"k{k}", sorted((v for key, v in pairs if key == f"k{k}"), key=str)) for k in range(7)]

    def build(p):
        grouped = (
            p
            | beam.Create(pairs)
            | spill.SpillGroupByKey(buckets=4, chunk_values=25)
            | beam.Map(lambda e: (e[0], sorted(e[1], key=str)))
        )
        assert_that(grouped, equal_to(expected))

    run_with_spill(tmp_path, build)


def test_co_group_by_key_and_barrier(tmp_path):
    def build(p):
        left = p | "L" >> beam.Create([("a", 1), ("b", 2), ("a", 3)])
        right = p | "R" >> beam.Create([("a", "x"), ("c", "y")])
        joined = (
            {"left": left, "right": right}
            | spill.SpillCoGroupByKey(buckets=3, chunk_values=2)
            | beam.Map(lambda e: (e[0], sorted(e[1]["left"]), sorted(e[1]["right"])))
        )
        assert_that(
            joined, equal_to([("a", [1, 3], ["x"]), ("b", [2], []), ("c", [], ["y"])]), label="Joined"
        )
        through = p | "N" >> beam.Create(range(50)) | spill.Barrier(chunk_values=7)
        assert_that(through, equal_to(list(range(50))), label="Through")

    run_with_spill(tmp_path, build)


def test_shards_are_cut_by_the_hash_of_the_id_with_the_count_per_split(tmp_path):
    rows = [{"id": f"d{i}", "split": "train" if i % 3 else "test"} for i in range(50)]

    def split_of(row):
        return row["split"]

    def build(p):
        shards = (
            p
            | beam.Create(rows)
            | spill_shards.SpillShards(split_of, rows_per_shard=10, chunk_values=6)
            | beam.Map(lambda e: (e[0], sorted(r["id"] for r in e[1])))
        )
        expected = {}
        for row in rows:
            n = sum(r["split"] == row["split"] for r in rows)
            total = -(-n // 10)
            key = (row["split"], stable_hash(row["id"]) % total, total)
            expected.setdefault(key, []).append(row["id"])
        assert_that(shards, equal_to([(k, sorted(v)) for k, v in expected.items()]))

    run_with_spill(tmp_path, build)


def test_without_a_spill_dir_the_transforms_are_beams_own():
    with beam.Pipeline(runner=FnApiRunner()) as p:
        grouped = p | beam.Create([("a", 1), ("a", 2)]) | spill.SpillGroupByKey()
        assert spill.spill_dir_of(p) is None
        assert_that(grouped | beam.Map(sorted_groups), equal_to([("a", [1, 2])]))


def test_co_group_buckets_gathers_every_batch_of_a_bucket_with_and_without_files(tmp_path):
    left = [(0, ["a", "b"]), (1, ["c"]), (0, ["d"])]
    right = [(1, [("x", 1)]), (2, [("y", 2)])]
    expected = [(0, ["a", "b", "d"], []), (1, ["c"], [("x", 1)]), (2, [], [("y", 2)])]

    def build(p):
        joined = (
            {"left": p | "L" >> beam.Create(left), "right": p | "R" >> beam.Create(right)}
            | spill.CoGroupBuckets()
            | beam.Map(lambda e: (e[0], sorted(e[1]["left"]), sorted(e[1]["right"])))
        )
        assert_that(joined, equal_to(expected))

    run_with_spill(tmp_path, build)
    with beam.Pipeline(runner=FnApiRunner()) as p:  # no spill dir: Beam groups the batches
        build(p)


def test_to_buckets_batches_by_the_crc32_bucket_of_the_key(tmp_path):
    words = [f"w{i}" for i in range(30)]

    def build(p):
        batches = p | beam.Create(words) | spill.ToBuckets(str, buckets=4, limit=5)
        flat = batches | beam.FlatMap(lambda e: [(e[0], w) for w in e[1]])
        assert_that(flat, equal_to([(spill.bucket_of(w, 4), w) for w in words]))

    with beam.Pipeline(runner=FnApiRunner()) as p:
        build(p)


def test_shard_tables_hold_the_rows_of_the_same_shards_as_single_rows(tmp_path):
    import pyarrow as pa

    rows = [{"id": f"d{i}", "split": "train" if i % 3 else "test", "n": i} for i in range(50)]
    schema = pa.schema([("id", pa.string()), ("split", pa.string()), ("n", pa.int64())])
    expected = {}
    for row in rows:
        total = -(-sum(r["split"] == row["split"] for r in rows) // 10)
        key = (row["split"], stable_hash(row["id"]) % total, total)
        expected.setdefault(key, []).append(row)

    def split_of(row):
        return row["split"]

    def build(p):
        tables = (
            p
            | beam.Create([rows[i : i + 8] for i in range(0, 50, 8)])
            | spill_shards.SpillShardTables(split_of, rows_per_shard=10, schema=schema, chunk_values=6)
            | beam.Map(lambda e: (e[0], sorted(e[1].to_pylist(), key=lambda r: r["id"])))
        )
        assert_that(tables, equal_to([(k, sorted(v, key=lambda r: r["id"])) for k, v in expected.items()]))

    run_with_spill(tmp_path, build)
