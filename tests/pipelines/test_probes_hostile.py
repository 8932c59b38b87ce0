"""``incoherent probes`` against careless and hostile input (issue 40): inputs that share a file name, ``ctx``
kept byte for byte, hostile records (deep nesting, a lone surrogate, a ``file_id`` beyond int64), a first
record over the line limit, a split no record has, and the INSteD fields validated as the format says."""

from __future__ import annotations

import json

from incoherent.pipelines.probes import command as probes
from tests.conftest import read_rows, run_cli
from tests.pipelines.test_probes_cli import insted_jsonl, jsonl, summary_of


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err


def test_two_inputs_sharing_a_file_name_are_refused_not_half_dropped(tmp_path, capsys):
    (tmp_path / "wiki").mkdir()
    (tmp_path / "cnn").mkdir()
    insted_jsonl(tmp_path / "wiki" / "test.jsonl")
    insted_jsonl(tmp_path / "cnn" / "test.jsonl")
    out = tmp_path / "out"
    code = run_cli("probes", tmp_path / "wiki" / "test.jsonl", tmp_path / "cnn" / "test.jsonl", "--out", out)
    assert code == 2
    err = one_line_error(capsys)
    assert "both give source name 'test'" in err and not out.exists()
    # distinct names: both inputs' documents are kept, none dead-lettered as a duplicate
    (tmp_path / "cnn" / "test.jsonl").rename(tmp_path / "cnn" / "cnn_test.jsonl")
    code = run_cli(
        "probes", tmp_path / "wiki" / "test.jsonl", tmp_path / "cnn" / "cnn_test.jsonl", "--out", out
    )
    assert code == 0
    assert "duplicate_id" not in summary_of(out)["counters"]["probes"]


def test_ctx_is_written_back_unchanged(tmp_path):
    data = tmp_path / "insted.jsonl"
    records = insted_jsonl(data)
    for r in records:  # INSteD's ctx as a paragraph break and a double space would leave them
        r["ctx"] = r["ctx"].replace(". ", ".\n", 1).replace(". ", ".  ", 1)
    data.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    out = tmp_path / "out"
    assert run_cli("probes", data, "--out", out, "--split", "train") == 0
    by_file_id = {r["file_id"]: r for r in records}
    written = [r for p in (out / "insted").iterdir() for r in jsonl(p)]
    assert written and any("\n" in r["ctx"] for r in written)
    for record in written:
        assert record["ctx"] == by_file_id[record["file_id"]]["ctx"]


def test_hostile_records_are_counted_dead_letters_and_the_run_goes_on(tmp_path):
    data = tmp_path / "insted.jsonl"
    good = '"ctx": "A b. C d. E f.", "to_be_replaced": "C d.", "replace_with": "He left.", "sen_position": 1'
    hostile = [
        "[" * 100_000 + "]" * 100_000,  # RecursionError in json.loads
        '{"file_id": 9, "ctx": "A b. C d. E f.", "to_be_replaced": "C d.", "replace_with": "He \\udc80 left.", '
        '"sen_position": 1, "train": 1}',  # a lone surrogate: UnicodeEncodeError in any writer
        "{" + f'"file_id": {2**63}, {good}, "train": 1' + "}",  # OverflowError in the Parquet writer
        "{" + f'"file_id": {-(2**63) - 1}, {good}, "train": 1' + "}",
        '{"file_id": ' + "9" * 5000 + "}",  # an integer Python will not convert
    ]
    insted_jsonl(data, hostile)
    out = tmp_path / "out"
    assert run_cli("probes", data, "--out", out, "--split", "train") == 0
    counters = summary_of(out)["counters"]["probes"]
    assert counters["json_too_deep"] == 1 and counters["lone_surrogate"] == 1
    assert counters["not_insted_format"] == 2 and counters["bad_json"] == 1
    assert counters["in_split"] == counters["incoherent"] + counters.get("coherent", 0) > 0
    reasons = sorted(r["reason"] for r in read_rows(out, "rejected/probes"))
    assert reasons.count("lone_surrogate") == 1 and reasons.count("json_too_deep") == 1


def test_a_first_record_over_the_line_limit_is_counted_not_a_refused_file(tmp_path):
    data = tmp_path / "insted.jsonl"
    records = insted_jsonl(data)
    huge = json.dumps(records[0] | {"ctx": "A b. " * (probes.MAX_LINE_BYTES // 5 + 10)})
    data.write_text(huge + "\n" + data.read_text(encoding="utf-8"), encoding="utf-8")
    out = tmp_path / "out"
    assert run_cli("probes", data, "--out", out, "--split", "train") == 0
    counters = summary_of(out)["counters"]["probes"]
    assert counters["record_too_large"] == 1 and counters["incoherent"] > 0


def test_a_split_no_record_has_is_refused(tmp_path, capsys):
    data = tmp_path / "insted.jsonl"
    records = insted_jsonl(data)
    out = tmp_path / "out"
    assert run_cli("probes", data, "--out", out, "--split", "validation") == 2
    assert "train and test only" in one_line_error(capsys) and not out.exists()
    only_test = tmp_path / "test_only.jsonl"
    only_test.write_text("".join(json.dumps(r | {"train": 0}) + "\n" for r in records), encoding="utf-8")
    assert run_cli("probes", only_test, "--out", out, "--split", "train") == 2
    err = one_line_error(capsys)
    assert "--split train: no document of DATA is in that split (found: test" in err
    assert not (out / "run_summary.json").exists()
    # the failed run is replaced without --overwrite
    assert run_cli("probes", only_test, "--out", out, "--split", "test") == 0
    counters = summary_of(out)["counters"]["probes"]
    assert counters["in_split"] == counters["incoherent"] + counters["coherent"] > 0


def test_sen_position_and_train_are_validated_as_the_format_says(tmp_path):
    data = tmp_path / "insted.jsonl"
    base = {"ctx": "A b. C d. E f.", "to_be_replaced": "C d.", "replace_with": "He left."}
    bad = [
        base | {"file_id": 1, "sen_position": -7, "train": 1},
        base | {"file_id": 2, "sen_position": 0, "train": 1},
        base | {"file_id": 3, "sen_position": 1, "train": True},
        base | {"file_id": 4, "sen_position": 1, "train": 1.0},
        base | {"file_id": 5, "sen_position": 1.0, "train": 1},
    ]
    insted_jsonl(data, [json.dumps(r) for r in bad])
    out = tmp_path / "out"
    assert run_cli("probes", data, "--out", out, "--split", "train") == 0
    assert summary_of(out)["counters"]["probes"]["not_insted_format"] == len(bad)
    details = [r["detail"] for r in read_rows(out, "rejected/probes") if r["reason"] == "not_insted_format"]
    assert any("sen_position -7" in d for d in details) and any("train True" in d for d in details)
