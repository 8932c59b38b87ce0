import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from incoherent.schemas.records import InputError
from incoherent.sources.textfiles import check_parquet_columns, parse_json_line, source_name
from tests.conftest import SAMPLES, read_rows, run_cli


def reasons(line):
    return [getattr(x, "reason", "row") for x in parse_json_line(line, "f.jsonl", "id", "text", "news")]


def test_json_line_becomes_document():
    (doc,) = parse_json_line(
        '{"id": 7, "text": "One sentence. Another one."}', "f.jsonl", "id", "text", "news"
    )
    assert doc["id"] == "news:7" and doc["source"] == "news"
    assert doc["sentences"] == ["One sentence.", "Another one."]


def test_bad_lines_are_rejected_with_reasons():
    assert reasons('{"id": 1, "text": "ok."') == ["bad_json"]
    assert reasons("[1, 2]") == ["not_an_object"]
    assert reasons('{"text": "no id."}') == ["missing_id"]
    assert reasons('{"id": 1}') == ["missing_text"]
    assert reasons('{"id": 1, "text": 5}') == ["bad_text_type"]
    assert reasons('{"id": 1.5, "text": "x."}') == ["bad_id_type"]
    assert reasons('{"id": 1, "text": "   "}') == ["empty_text"]
    assert reasons("   ") == []  # blank lines are not records


def test_source_name_strips_suffixes():
    assert source_name("/a/news.jsonl.gz") == "news"


def test_parquet_without_text_column_is_unusable(tmp_path):
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"id": ["a"], "body": ["x"]}), path)
    with pytest.raises(InputError, match="no column 'text' \\(--text-field\\)"):
        check_parquet_columns(str(path), "id", "text")


def test_cli_jsonl_and_parquet_with_bad_records(tmp_path):
    lines = [json.dumps({"id": i, "text": f"Sentence {i} here. And another {i}."}) for i in range(5)]
    lines += [
        '{"id": 9, "text": broken',
        json.dumps({"id": 3, "text": "A duplicate id."}),
        json.dumps({"text": "x"}),
    ]
    (tmp_path / "news.jsonl").write_text("\n".join(lines) + "\n")
    pq.write_table(
        pa.table({"doc": ["p1", "p2"], "body": ["Parquet text one.", None]}), tmp_path / "pq.parquet"
    )
    out = tmp_path / "out"
    assert run_cli("ingest", "text", tmp_path / "news.jsonl", "--out", out) == 0
    docs = read_rows(out, "documents-news")
    assert [d["id"] for d in docs] == [f"news:{i}" for i in range(5)]
    reasons_seen = sorted(r["reason"] for r in read_rows(out, "rejected/ingest-text"))
    assert reasons_seen == ["bad_json", "duplicate_id", "missing_id"]
    counters = json.loads((out / "run_summary.json").read_text())["counters"]["ingest-text"]
    assert counters == {"kept": 5, "bad_json": 1, "duplicate_id": 1, "missing_id": 1}  # kept: 6 before

    out2 = tmp_path / "out2"
    assert (
        run_cli(
            "ingest",
            "text",
            tmp_path / "pq.parquet",
            "--out",
            out2,
            "--id-field",
            "doc",
            "--text-field",
            "body",
            "--source",
            "mine",
        )
        == 0
    )
    assert [d["id"] for d in read_rows(out2, "documents-mine")] == ["mine:p1"]
    assert [r["reason"] for r in read_rows(out2, "rejected/ingest-text")] == ["missing_text"]


def test_cli_wsj_sample(tmp_path):
    out = tmp_path / "out"
    assert run_cli("ingest", "text", SAMPLES / "wsj" / "wsj.jsonl", "--out", out) == 0
    docs = read_rows(out, "documents-wsj")
    assert len(docs) == 199
    first = next(d for d in docs if d["id"] == "wsj:wsj_0001")
    assert first["sentences"] == [
        "Pierre Vinken, 61 years old, will join the board as a nonexecutive director Nov. 29.",
        "Mr. Vinken is chairman of Elsevier N.V., the Dutch publishing group.",
    ]


def test_cli_refuses_non_empty_output_without_overwrite(tmp_path, capsys):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "old.txt").write_text("x")
    assert run_cli("ingest", "text", SAMPLES / "wsj" / "wsj.jsonl", "--out", mine, "--overwrite") == 2
    assert "not the output of `incoherent ingest text`" in capsys.readouterr().err
    assert (mine / "old.txt").exists()  # not ours: never replaced
    out = tmp_path / "out"
    assert run_cli("ingest", "text", SAMPLES / "wsj" / "wsj.jsonl", "--out", out) == 0
    assert run_cli("ingest", "text", SAMPLES / "wsj" / "wsj.jsonl", "--out", out) == 2
    assert "pass --overwrite" in capsys.readouterr().err
    assert run_cli("ingest", "text", SAMPLES / "wsj" / "wsj.jsonl", "--out", out, "--overwrite") == 0


def test_hostile_json_lines_are_counted_reasons():
    """The hostile records of issue 40 against `ingest text`: each a reason, never an exception."""
    assert reasons('{"id": "a", "text": "He left \\udc80 the house."}') == ["lone_surrogate"]
    assert reasons('{"id": "\\ud800", "text": "He left."}') == ["lone_surrogate"]
    assert reasons("[" * 100_000 + "]" * 100_000) == ["json_too_deep"]
    assert reasons('{"id": ' + "9" * 5000 + ', "text": "He left."}') == ["bad_json"]


def test_row_ids_of_two_files_sharing_a_name_are_refused(tmp_path, capsys):
    """``a/test.jsonl`` and ``b/test.jsonl`` with ``--row-ids``: both would give ids test-0, test-1, ... and the
    second file's documents were dropped as duplicate ids (issue 40's probes case, in ingest text)."""
    lines = (SAMPLES / "wsj" / "wsj.jsonl").read_text(encoding="utf-8").splitlines()
    for folder, part in (("a", lines[:3]), ("b", lines[3:6])):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "test.jsonl").write_text("\n".join(part) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    args = ["ingest", "text", tmp_path / "a" / "test.jsonl", tmp_path / "b" / "test.jsonl", "--row-ids"]
    assert run_cli(*args, "--out", out) == 2
    err = capsys.readouterr().err
    assert "both give row ids test-<row>" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()
    assert run_cli(*args[:-1], "--out", out) == 0  # their own ids (wsj_0001 ...): distinct, all kept
    assert len(read_rows(out, "documents-test")) == 6


def test_a_duplicate_id_is_counted_once_and_read_is_the_lines(tmp_path, capsys):
    """#53: three lines, one id twice: "read: 4 records", counter kept 3, 2 documents written. Now read is the
    3 lines, kept the 2 documents written, the copy counted and dead-lettered."""
    lines = [
        {"id": "a", "text": "The cat sat on the mat. It was warm there."},
        {"id": "a", "text": "A dog ran down the road. It was fast."},
        {"id": "b", "text": "Rain fell all day. The streets were wet."},
    ]
    (tmp_path / "c.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "o"
    capsys.readouterr()
    assert run_cli("ingest", "text", tmp_path / "c.jsonl", "--out", out) == 0
    printed = capsys.readouterr().out
    assert "2 documents -> " in printed and "(read: 3 records)" in printed, printed
    assert "rejected duplicate_id: 1" in printed
    counters = json.loads((out / "run_summary.json").read_text())["counters"]["ingest-text"]
    assert counters == {"kept": 2, "duplicate_id": 1}
    assert len(read_rows(out, "documents-c")) == 2
    assert [r["id"] for r in read_rows(out, "rejected/ingest-text")] == ["c:a"]
