import json

import apache_beam as beam
import pyarrow.parquet as pq
import pytest

from incoherent.pipelines.runtime.run import run_pipeline
from incoherent.pipelines.runtime.tables import ApplyWithRejects, DropDuplicateIds, WriteRejected, WriteTable
from incoherent.schemas.records import InputError, Rejected, document
from tests.conftest import IN_PROCESS, MULTI_PROCESS, file_bytes, read_rows


def docs(n):
    return [document(f"t:{i:03d}", "t", [f"Sentence {i}."]) for i in range(n)]


def keep_even(row):
    number = int(row["id"].split(":")[1])
    if number % 2:
        yield Rejected("odd", id=row["id"], source="t", detail=str(number))
    else:
        yield row


def build_into(out, rows, shard_rows):
    def build(p):
        kept, rejected = p | beam.Create(rows) | ApplyWithRejects(keep_even, "stage")
        kept | WriteTable(str(out), "documents-t", split="documents", rows_per_shard=shard_rows)
        rejected | WriteRejected(str(out), "stage")

    return build


@pytest.mark.parametrize(
    "beam_args",
    [IN_PROCESS, pytest.param(MULTI_PROCESS, marks=pytest.mark.e2e)],
    ids=["in-process", "multi-process"],
)
def test_sharded_output_is_sorted_complete_and_counted(tmp_path, beam_args):
    out = tmp_path / "out"
    summary = run_pipeline(
        build_into(out, docs(50), 10), command="t", out_dir=str(out), params={}, beam_args=beam_args
    )
    names = sorted(p.name for p in (out / "documents-t").iterdir())
    assert names == [f"documents-{i:05d}-of-00003.parquet" for i in range(3)]
    rows = read_rows(out, "documents-t")
    assert sorted(r["id"] for r in rows) == [f"t:{i:03d}" for i in range(0, 50, 2)]
    for name in names:
        ids = pq.read_table(out / "documents-t" / name).column("id").to_pylist()
        assert ids == sorted(ids)
    assert summary["counters"] == {"stage": {"kept": 25, "odd": 25}}
    assert summary["outputs"] == {"documents-t": {"documents": 25}, "rejected/stage": {"rejected": 25}}
    assert json.loads((out / "run_summary.json").read_text())["complete"] is True


@pytest.mark.e2e  # every runner in turn: 39 s at load 18
def test_output_bytes_do_not_depend_on_runner_or_input_order(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    run_pipeline(build_into(a, docs(30), 7), command="t", out_dir=str(a), params={}, beam_args=IN_PROCESS)
    run_pipeline(
        build_into(b, docs(30)[::-1], 7), command="t", out_dir=str(b), params={}, beam_args=MULTI_PROCESS
    )
    assert file_bytes(a) == file_bytes(b)


def test_duplicate_ids_keep_newest_revision(tmp_path):
    old = document("w:1", "w", ["Old."], revision_id=1, timestamp="2019-01-01T00:00:00Z", dump="old.xml")
    new = document("w:1", "w", ["New."], revision_id=2, timestamp="2022-01-01T00:00:00Z", dump="new.xml")

    def build(p):
        unique, rejected = p | beam.Create([old, new]) | DropDuplicateIds("ingest")
        unique | WriteTable(str(tmp_path / "o"), "documents-w", split="documents")
        rejected | WriteRejected(str(tmp_path / "o"), "ingest")

    run_pipeline(build, command="t", out_dir=str(tmp_path / "o"), params={}, beam_args=IN_PROCESS)
    assert [r["sentences"] for r in read_rows(tmp_path / "o", "documents-w")] == [["New."]]
    (dropped,) = read_rows(tmp_path / "o", "rejected/ingest")
    assert dropped["reason"] == "duplicate_id" and "Old." in dropped["record"]


def fail_on_three(row):
    if row["id"] == "t:003":
        raise InputError("corpus.xml: truncated bz2 stream")
    yield row


@pytest.mark.parametrize(
    "beam_args",
    [IN_PROCESS, pytest.param(MULTI_PROCESS, marks=pytest.mark.e2e)],
    ids=["in-process", "multi-process"],
)
def test_input_error_inside_a_worker_surfaces_as_one_line(tmp_path, beam_args):
    def build(p):
        p | beam.Create(docs(5)) | beam.FlatMap(fail_on_three)

    with pytest.raises(InputError) as info:
        run_pipeline(build, command="t", out_dir=str(tmp_path / "o"), params={}, beam_args=beam_args)
    assert str(info.value) == "corpus.xml: truncated bz2 stream"
    assert not (tmp_path / "o" / "run_summary.json").exists()


def test_sort_rows_orders_equal_keys_by_content_whatever_the_arrival_order():
    from incoherent.pipelines.runtime.tables import sort_rows

    rows = [
        {"id": "b", "x": 2},
        {"id": "a", "x": 3},
        {"id": "b", "x": 1},
        {"id": None, "x": 0},
        {"id": "a", "x": 3},
    ]
    expected = [
        {"id": None, "x": 0},
        {"id": "a", "x": 3},
        {"id": "a", "x": 3},
        {"id": "b", "x": 1},
        {"id": "b", "x": 2},
    ]
    assert sort_rows(rows, ["id"]) == expected
    assert sort_rows(list(reversed(rows)), ["id"]) == expected


def test_sort_table_gives_the_order_of_sort_rows():
    import pyarrow as pa

    from incoherent.pipelines.runtime.tables import sort_rows, sort_table

    rows = [
        {"id": "b", "x": 2, "s": "p"},
        {"id": "a", "x": 3, "s": "q"},
        {"id": "b", "x": 1, "s": None},
        {"id": None, "x": 0, "s": "r"},
        {"id": "a", "x": 3, "s": "a"},
    ]
    for order in (rows, rows[::-1], rows[2:] + rows[:2]):
        table = pa.Table.from_pylist(order)
        assert sort_table(table, ["id"]).to_pylist() == sort_rows(order, ["id"])
        assert sort_table(table, ["id", "x"]).to_pylist() == sort_rows(order, ["id", "x"])


@pytest.mark.parametrize("shard_rows", [7, 100])
def test_batched_rows_write_the_same_files_as_single_rows(tmp_path, shard_rows):
    rows = docs(40)

    def build(batched):
        def run(p):
            created = p | beam.Create([rows[i : i + 6] for i in range(0, len(rows), 6)])
            if not batched:
                created = created | beam.FlatMap(list)
            created | WriteTable(
                str(out), "documents-t", split="documents", rows_per_shard=shard_rows, batched=batched
            )

        return run

    outs = {}
    for batched in (False, True):
        out = outs[batched] = tmp_path / str(batched)
        run_pipeline(build(batched), command="t", out_dir=str(out), params={}, beam_args=IN_PROCESS)
    assert file_bytes(outs[True]) == file_bytes(outs[False])
    assert len(list((outs[True] / "documents-t").iterdir())) == -(-40 // shard_rows)


def probe_rows(n: int) -> list[dict]:
    """Rows of three probe tables, uneven in size, in two splits."""
    rows = []
    for i in range(n):
        phenomenon = ("negation", "number", "gender")[i % 7 % 3]
        rows.append(
            {"id": f"p:{i:03d}", "source": "t", "split": ("test", "validation")[i % 5 == 0],
             "phenomenon": phenomenon, "sentences": [f"Sentence {i}.", "Another one."], "label": i % 2,
             "intruder_index": 1, "original_sentence": "Another one.", "intruder_sentence": "Another one.",
             "probed_sentence": "Another one.", "edits": [], "source_id": f"s:{i}", "file_id": i, "ctx": ""}
        )  # fmt: skip
    return rows


@pytest.mark.parametrize("shard_rows", [4, 1000])
def test_several_tables_in_one_pass_write_the_files_of_one_pass_per_table(tmp_path, shard_rows):
    """WriteTables without spill files (Beam's own grouping, as on Flink, Spark or Dataflow) writes every table
    byte for byte as one WriteTable per table does with them (the local runner's way)."""
    from apache_beam.testing.util import assert_that, equal_to

    from incoherent.corpora.seeding import stable_hash
    from incoherent.pipelines.runtime import spill
    from incoherent.pipelines.runtime.tables import WriteTables

    rows = probe_rows(60)
    configs = ["probe-negation", "probe-number", "probe-gender"]

    def per_table(p):
        created = p | beam.Create(rows)
        for config in configs:
            phenomenon = config.removeprefix("probe-")
            only = created | f"Only[{config}]" >> beam.Filter(lambda r, ph=phenomenon: r["phenomenon"] == ph)
            only | f"Write[{config}]" >> WriteTable(str(tmp_path / "a"), config, rows_per_shard=shard_rows)

    run_pipeline(per_table, command="t", out_dir=str(tmp_path / "a"), params={}, beam_args=IN_PROCESS)
    with beam.Pipeline(options=beam.options.pipeline_options.PipelineOptions(IN_PROCESS)) as p:
        assert spill.spill_dir_of(p) is None  # no spill folder given: Beam's GroupByKey, one for all tables
        written = (
            p
            | beam.Create(rows[::-1])
            | WriteTables(
                str(tmp_path / "b"), configs, lambda r: f"probe-{r['phenomenon']}", rows_per_shard=shard_rows
            )
        )
        files = written | beam.Map(lambda w: (w["config"], w["split"], w["rows"]))
        expected = []
        for config in configs:
            for split in ("test", "validation"):
                table = [r for r in rows if f"probe-{r['phenomenon']}" == config and r["split"] == split]
                shards = -(-len(table) // shard_rows)
                for index in range(shards):
                    count = sum(1 for r in table if stable_hash(r["id"]) % shards == index)
                    expected.append((config, split, count))
        assert_that(files, equal_to(expected))
    assert file_bytes(tmp_path / "b") == file_bytes(tmp_path / "a") and len(file_bytes(tmp_path / "a")) >= 6
