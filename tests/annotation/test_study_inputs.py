"""`annotate import/report/verify/release` under careless and hostile use: every case is one line and exit 2,
or a counted, dead-lettered record; nothing the commands did not write is replaced."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.annotation.test_annotate import cli, scripted
from tests.sample_build import wikipedia_build


@pytest.fixture
def dataset(tmp_path_factory, tmp_path) -> Path:
    """A private copy of the sample build's dataset for each test (verify writes into it)."""
    copy = tmp_path / "dataset"
    shutil.copytree(wikipedia_build(tmp_path_factory) / "dataset", copy)
    return copy


def export(dataset: Path, tasks: Path, *extra: str) -> dict:
    assert cli("annotate", "export", dataset, "--config", "intruder-wikipedia", "--split", "train",
               "--per-task", "4", "--out", tasks, *extra) == 0  # fmt: skip
    return json.loads((tasks / "key.json").read_text())


def lab_answers(tasks: Path, workers: list[str], key: dict) -> None:
    """In-lab answer files of scripted annotators (controls answered right)."""
    doc = json.loads((tasks / "tasks.json").read_text())
    (tasks / "answers").mkdir(exist_ok=True)
    for worker in workers:
        lines = []
        for task in doc["tasks"]:
            for item in task["items"]:
                gold = key["items"][item["item_id"]]
                answer = (
                    gold["gold"]
                    if gold["role"] == "control"
                    else scripted(worker, item["item_id"], gold["gold"], gold["sentences"])
                )
                lines.append(
                    {
                        "export_id": doc["export_id"],
                        "task_id": task["task_id"],
                        "item_id": item["item_id"],
                        "annotator": worker,
                        "answer": answer,
                        "seconds": 4.0,
                    }  # fmt: skip
                )
        (tasks / "answers" / f"{worker}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err, err
    return err


def test_verify_never_replaces_a_split_it_did_not_write(dataset, tmp_path, capsys):
    tasks, study = tmp_path / "tasks", tmp_path / "study"
    key = export(dataset, tasks, "--documents", "6")
    lab_answers(tasks, ["ann", "ben", "cat"], key)
    assert (
        cli("annotate", "import", tasks / "answers", "--format", "lab", "--key", tasks, "--out", study) == 0
    )
    with (study / "answers.jsonl").open("a") as f:  # not an answer: counted by report, release and verify
        f.write('{"item_id": 5}\n')
    assert cli("annotate", "report", study, "--min-agreement", "2") == 0
    capsys.readouterr()
    assert cli("annotate", "verify", study, dataset) == 0
    assert "skipped: 1 lines of answers.jsonl that are not answers" in capsys.readouterr().out
    config = dataset / "intruder-wikipedia"
    originals = {p.name: p.read_bytes() for p in config.glob("*.parquet") if "verified" not in p.name}
    capsys.readouterr()
    for name in ("test", "train"):  # after a verify ran: an original split is still never replaced
        assert cli("annotate", "verify", study, dataset, "--split-name", name) == 2
        assert "was not written by `annotate verify`" in one_line_error(capsys)
    assert {p.name: p.read_bytes() for p in config.glob("*.parquet") if "verified" not in p.name} == originals
    assert cli("annotate", "verify", study, dataset) == 0  # its own split: replaced with the same bytes
    record = json.loads((dataset / "human_verification" / "intruder-wikipedia.json").read_text())
    assert list(record["written"]) == ["intruder-wikipedia/train_verified-00000-of-00001.parquet"]
    # a split of that name changed since verify wrote it (the user's own now) is never replaced either
    verified = config / "train_verified-00000-of-00001.parquet"
    table = pq.read_table(verified)
    pq.write_table(table.slice(0, 1), verified)
    mine = verified.read_bytes()
    capsys.readouterr()
    assert cli("annotate", "verify", study, dataset) == 2
    assert "changed since" in one_line_error(capsys) and verified.read_bytes() == mine
    # the card: annotators actually per document, and the released answers
    assert cli("annotate", "verify", study, dataset, "--split-name", "train_checked") == 0
    card = (dataset / "README.md").read_text()
    assert "3 annotators per document (5 planned)" in card
    protocol = json.loads((dataset / "human_verification" / "intruder-wikipedia.json").read_text())[
        "protocol"
    ]
    assert protocol["workers_planned"] == 5 and protocol["annotators_per_document"] == {
        "min": 3,
        "median": 3,
        "max": 3,
    }
    assert "(human_verification/intruder-wikipedia-answers.jsonl)" in card
    released = (dataset / "human_verification" / "intruder-wikipedia-answers.jsonl").read_text().splitlines()
    assert len(released) == 6 and all(len(json.loads(line)["annoated"]) == 3 for line in released)
    # links in the dataset are replaced, never written through
    outside = tmp_path / "outside.json"
    outside.write_text("{}\n")
    for name in ("intruder-wikipedia.json", "intruder-wikipedia-answers.jsonl"):
        (dataset / "human_verification" / name).unlink()
        (dataset / "human_verification" / name).symlink_to(outside)
    assert cli("annotate", "verify", study, dataset, "--split-name", "train_checked2") == 0
    assert outside.read_text() == "{}\n"
    assert not (dataset / "human_verification" / "intruder-wikipedia.json").is_symlink()
    assert not (dataset / "human_verification" / "intruder-wikipedia-answers.jsonl").is_symlink()


def test_report_and_verify_refuse_to_verify_nothing(dataset, tmp_path, capsys):
    tasks, study = tmp_path / "tasks", tmp_path / "study"
    key = export(dataset, tasks, "--documents", "6")
    lab_answers(tasks, ["ann", "ben"], key)
    assert (
        cli("annotate", "import", tasks / "answers", "--format", "lab", "--key", tasks, "--out", study) == 0
    )
    capsys.readouterr()
    assert cli("annotate", "report", study) == 2  # the default asks for 3 agreeing annotators
    err = one_line_error(capsys)
    assert "no document has more than 2" in err and "--allow-fewer-annotators" in err
    assert not (study / "report.json").exists()
    assert cli("annotate", "report", study, "--allow-fewer-annotators") == 0
    report = json.loads((study / "report.json").read_text())
    assert report["kept"]["documents"] == 0 and report["annotators_per_document"] == {
        "min": 2,
        "median": 2,
        "max": 2,
    }
    capsys.readouterr()
    assert cli("annotate", "verify", study, dataset) == 2
    assert "no split of 0 rows" in one_line_error(capsys)
    assert not list((dataset / "intruder-wikipedia").glob("train_verified-*"))
    assert not (dataset / "human_verification").exists()


def test_import_overwrite_refuses_a_folder_it_did_not_write(dataset, tmp_path, capsys):
    tasks = tmp_path / "tasks"
    key = export(dataset, tasks, "--documents", "3")
    lab_answers(tasks, ["ann"], key)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "answers.jsonl").write_text("my own answers\n")
    (mine / "key.json").write_text('{"mine": true}\n')
    capsys.readouterr()
    assert cli("annotate", "import", tasks / "answers", "--format", "lab", "--key", tasks, "--out", mine,
               "--overwrite") == 2  # fmt: skip
    assert "not a folder `annotate import` wrote" in one_line_error(capsys)
    assert (mine / "answers.jsonl").read_text() == "my own answers\n" and (
        mine / "key.json"
    ).read_text() == '{"mine": true}\n'
    study = tmp_path / "study"
    assert (
        cli("annotate", "import", tasks / "answers", "--format", "lab", "--key", tasks, "--out", study) == 0
    )
    assert cli("annotate", "import", tasks / "answers", "--format", "lab", "--key", tasks, "--out", study,
               "--overwrite") == 0  # fmt: skip
    # an import that keeps nothing stops with one line and writes nothing
    empty = tmp_path / "empty.jsonl"
    empty.write_text("[1]\n")
    capsys.readouterr()
    assert (
        cli("annotate", "import", empty, "--format", "lab", "--key", tasks, "--out", tmp_path / "none") == 2
    )
    assert "no answers kept (bad_json: 1)" in one_line_error(capsys)
    assert not (tmp_path / "none").exists()


def test_big_and_hostile_records_are_counted(dataset, tmp_path, capsys):
    from incoherent.annotation.mturk import MAX_CSV_CELL

    tasks = tmp_path / "tasks"
    export(dataset, tasks, "--documents", "3", "--controls", "0")
    doc = json.loads((tasks / "tasks.json").read_text())
    (task,) = doc["tasks"]
    first, second, third = (i["item_id"] for i in task["items"])

    # MTurk: an Input.items cell above csv's default 128 KiB limit is read; one above the bound is one line
    def results(pad: int) -> str:
        items = [{**i, "pad": "x" * pad} for i in task["items"]]
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(["HITId", "AssignmentId", "WorkerId", "AssignmentStatus", "Input.export_id",
                         "Input.task_id", "Input.items", "Answer.answer_1", "Answer.answer_2", "Answer.answer_3"])  # fmt: skip
        writer.writerow(
            ["H1", "A1", "W1", "Submitted", doc["export_id"], task["task_id"], json.dumps(items), -1, -1, -1]
        )
        return out.getvalue()

    big = tmp_path / "big.csv"
    big.write_text(results(100_000))  # ~300 KB in one cell
    assert cli("annotate", "import", big, "--format", "mturk", "--key", tasks, "--out", tmp_path / "m") == 0
    assert json.loads((tmp_path / "m" / "import.json").read_text())["answers_kept"] == 3
    big.write_text(results(MAX_CSV_CELL // 3 + 10))
    capsys.readouterr()
    assert cli("annotate", "import", big, "--format", "mturk", "--key", tasks, "--out", tmp_path / "m2") == 2
    assert f"{big}: row 1: not a readable CSV row" in one_line_error(capsys)

    # Label Studio: result a string, a task an int, 200,000-deep nesting, a 5,000-digit int
    def ls_task(item: str, result, who=1) -> dict:
        return {"id": 7, "data": {"export_id": doc["export_id"], "task_id": task["task_id"], "item_id": item},
                "annotations": [{"completed_by": who, "result": result, "lead_time": 3}]}  # fmt: skip

    good = [{"from_name": "answer", "value": {"choices": ["None of the above"]}}]
    elements = [
        json.dumps(ls_task(first, good)),
        json.dumps(ls_task(second, "Sentence 2")),
        "5",
        '{"data": ' + "[" * 200_000 + "]" * 200_000 + "}",
        '{"id": ' + "9" * 5000 + ', "data": {}}',
        json.dumps(ls_task(third, good, who=[1, 2])),
    ]
    export_file = tmp_path / "ls.json"
    export_file.write_text("[" + ",\n".join(elements) + "]")
    study = tmp_path / "ls"
    assert (
        cli("annotate", "import", export_file, "--format", "labelstudio", "--key", tasks, "--out", study) == 0
    )
    summary = json.loads((study / "import.json").read_text())
    assert summary["answers_kept"] == 1 and summary["rejected"] == {"bad_record": 5}
    # the same without the records Python cannot parse (the file is read at once, not task by task)
    export_file.write_text("[" + ",\n".join(elements[:3] + elements[5:]) + "]")
    assert cli("annotate", "import", export_file, "--format", "labelstudio", "--key", tasks, "--out", study,
               "--overwrite") == 0  # fmt: skip
    summary = json.loads((study / "import.json").read_text())
    assert summary["answers_kept"] == 1 and summary["rejected"] == {"bad_record": 3}

    # lab: the annotator a list, deep nesting, a huge int
    def lab(item: str, annotator="ann", answer=-1) -> str:
        return json.dumps({"export_id": doc["export_id"], "task_id": task["task_id"], "item_id": item,
                           "annotator": annotator, "answer": answer, "seconds": 2})  # fmt: skip

    answers = tmp_path / "lab.jsonl"
    answers.write_text(
        "\n".join(
            [
                lab(first),
                lab(second, annotator=["ann"]),
                "[" * 200_000 + "]" * 200_000,
                lab(third).replace('"answer": -1', '"answer": ' + "7" * 5000),
                lab(third, answer=10**40),
            ]
        )  # fmt: skip
    )
    study = tmp_path / "lab"
    assert cli("annotate", "import", answers, "--format", "lab", "--key", tasks, "--out", study) == 0
    summary = json.loads((study / "import.json").read_text())
    assert summary["answers_kept"] == 1
    assert summary["rejected"] == {"bad_json": 2, "bad_record": 1, "out_of_range": 1}

    # report: predictions with a deeply nested line, predictions naming a folder, a non-object answers line
    with (study / "answers.jsonl").open("a") as f:
        f.write("[1, 2]\n")
    assert cli("annotate", "report", study, "--min-agreement", "1") == 0
    assert "skipped: 1 lines of answers.jsonl" in capsys.readouterr().out
    deep = tmp_path / "predictions.jsonl"
    deep.write_text("[" * 200_000 + "]" * 200_000 + "\n")
    assert cli("annotate", "report", study, "--min-agreement", "1", "--predictions", deep) == 2
    assert f"{deep}:1: not an `evaluate --predictions` line" in one_line_error(capsys)
    assert cli("annotate", "report", study, "--min-agreement", "1", "--predictions", tmp_path) == 2
    assert f"{tmp_path}: a folder, not a file" in one_line_error(capsys)


def test_lone_surrogates_and_hostile_insted_lines(dataset, tmp_path, capsys):
    """A lone surrogate escape (valid JSON, a string no UTF-8 writer encodes) in a worker's name is a counted
    dead letter, written escaped; in INSteD's annotation file, it, deep nesting and a 5,000-digit integer make
    the file unusable in one line (every line of that file is a document under study), never a traceback."""
    tasks = tmp_path / "tasks"
    export(dataset, tasks, "--documents", "3", "--controls", "0")
    doc = json.loads((tasks / "tasks.json").read_text())
    (task,) = doc["tasks"]
    first, second, _ = (i["item_id"] for i in task["items"])
    lab = [{"export_id": doc["export_id"], "task_id": task["task_id"], "item_id": item, "annotator": who,
            "answer": -1, "seconds": 2} for item, who in ((first, "ann"), (second, "\udc80ann"))]  # fmt: skip
    answers = tmp_path / "lab.jsonl"
    answers.write_text("".join(json.dumps(r) + "\n" for r in lab))  # json.dumps escapes it: \udc80
    study = tmp_path / "lab"
    assert cli("annotate", "import", answers, "--format", "lab", "--key", tasks, "--out", study) == 0
    summary = json.loads((study / "import.json").read_text())
    assert summary["answers_kept"] == 1 and summary["rejected"] == {"bad_record": 1}
    (dead,) = [json.loads(line) for line in (study / "rejected.jsonl").read_text().splitlines()]
    assert dead["record"]["annotator"] == "\udc80ann"  # kept as given, escaped in the file
    good = '{"file_id": 1, "gold": "2", "annoated": ["2", "2"]}'
    for bad in ('{"file_id": "\\udc80", "gold": "2", "annoated": ["2"]}', "[" * 100_000 + "]" * 100_000,
                '{"file_id": ' + "9" * 5000 + ', "gold": "2", "annoated": ["2"]}'):  # fmt: skip
        released = tmp_path / "insted.jsonl"
        released.write_text(good + "\n" + bad + "\n")
        assert cli("annotate", "import", released, "--format", "insted", "--out", tmp_path / "i") == 2
        assert f"{released}:2: not INSteD's annotation format" in one_line_error(capsys)
        assert not (tmp_path / "i").exists()
    for gold in ('"0"', '"-3"', "true"):  # as the format says: the intruder's position (never 0) or -1
        released.write_text(good + "\n" + '{"file_id": 2, "gold": ' + gold + ', "annoated": ["2"]}\n')
        assert cli("annotate", "import", released, "--format", "insted", "--out", tmp_path / "i") == 2
        assert f"{released}:2: gold" in one_line_error(capsys) and not (tmp_path / "i").exists()


def test_release_round_trips_through_the_insted_import(dataset, tmp_path, capsys):
    tasks, study = tmp_path / "tasks", tmp_path / "study"
    key = export(dataset, tasks, "--documents", "6")
    lab_answers(tasks, ["ann", "ben", "cat", "dan"], key)
    assert (
        cli("annotate", "import", tasks / "answers", "--format", "lab", "--key", tasks, "--out", study) == 0
    )
    assert cli("annotate", "report", study, "--min-agreement", "3") == 0
    released = tmp_path / "human_answers.jsonl"
    assert cli("annotate", "release", study, "--out", released) == 0
    lines = [json.loads(line) for line in released.read_text().splitlines()]
    tests = {i["id"]: i for i in key["items"].values() if i["role"] == "test"}
    assert [r["file_id"] for r in lines] == sorted(tests)
    for record in lines:
        item_id = next(iid for iid, i in key["items"].items() if i["id"] == record["file_id"])
        item = tests[record["file_id"]]
        assert record["gold"] == str(item["gold"])
        assert record["annoated"] == [
            str(scripted(w, item_id, item["gold"], item["sentences"])) for w in ("ann", "ben", "cat", "dan")
        ]
    again = tmp_path / "again"
    assert cli("annotate", "import", released, "--format", "insted", "--out", again) == 0
    assert cli("annotate", "report", again, "--min-agreement", "3") == 0
    first, second = (json.loads((d / "report.json").read_text()) for d in (study, again))
    for figure in ("documents", "answers", "kept", "human_accuracy", "human_f1", "krippendorff_alpha", "unanimous",
                   "gold_agreement", "annotators_per_document"):  # fmt: skip
        assert first[figure] == second[figure], figure
    capsys.readouterr()
    assert cli("annotate", "release", study, "--out", released) == 2
    assert "exists (pass --overwrite" in one_line_error(capsys)
    before = (study / "answers.jsonl").read_bytes()
    assert cli("annotate", "release", study, "--out", study / "answers.jsonl", "--overwrite") == 2  # an input
    one_line_error(capsys)
    assert (study / "answers.jsonl").read_bytes() == before
    # a line of answers.jsonl that is not an answer: counted and said, as report says it
    with (study / "answers.jsonl").open("a") as f:
        f.write('[1, 2]\n{"item_id": 5}\n')
    assert cli("annotate", "release", study, "--out", released, "--overwrite") == 0
    assert "skipped: 2 lines of answers.jsonl that are not answers" in capsys.readouterr().out


def test_label_studio_hotkeys_match_sentence_numbers(dataset, tmp_path):
    tasks = tmp_path / "tasks"
    export(dataset, tasks, "--documents", "3", "--controls", "0")
    for task in json.loads((tasks / "labelstudio" / "tasks.json").read_text()):
        options = task["data"]["options"]
        assert options[0] == {"value": "Sentence 2", "hotkey": "2"}  # sentence 1 cannot be chosen
        for option in options[:-1]:
            number = int(option["value"].split()[1])
            assert option.get("hotkey") == (str(number) if number <= 9 else None)
        assert options[-1] == {"value": "None of the above", "hotkey": "0"}


def test_review_decides_per_assignment(dataset, tmp_path, capsys):
    """Hand-made MTurk results in crowd-form's default shape (Answer.taskAnswers): a fast assignment, a slow one,
    one already approved and one rejected on MTurk; review --min-seconds rejects only the fast one."""
    tasks = tmp_path / "tasks"
    key = export(dataset, tasks, "--documents", "3")
    doc = json.loads((tasks / "tasks.json").read_text())
    (task,) = doc["tasks"]
    header = ["HITId", "AssignmentId", "WorkerId", "AssignmentStatus", "WorkTimeInSeconds", "Input.export_id",
              "Input.task_id", "Input.items", "Answer.taskAnswers", "Approve", "Reject"]  # fmt: skip
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    for assignment, status, seconds in (("A1", "Submitted", 0.5), ("A2", "Submitted", 6.0),
                                        ("A3", "Approved", 6.0), ("A4", "Rejected", 6.0)):  # fmt: skip
        form = {"export_id": doc["export_id"], "task_id": task["task_id"]}
        for slot, item in enumerate(task["items"], start=1):
            gold = key["items"][item["item_id"]]["gold"]
            values = ["-1"] + [str(j) for j in range(1, len(item["sentences"]))]
            form[f"answer_{slot}"] = {v: v == str(gold) for v in values}
            form[f"seconds_{slot}"] = str(seconds)
        writer.writerow(["H1", assignment, f"W{assignment}", status, "60", doc["export_id"], task["task_id"],
                         json.dumps(task["items"]), json.dumps([form]), "", ""])  # fmt: skip
    results = tmp_path / "results.csv"
    results.write_text(out.getvalue())
    study = tmp_path / "study"
    assert cli("annotate", "import", results, "--format", "mturk", "--key", tasks, "--out", study) == 0
    summary = json.loads((study / "import.json").read_text())
    assert summary["answers_kept"] == 12 and summary["rejected"] == {"rejected_on_mturk": 1}
    capsys.readouterr()
    reviewed = tmp_path / "reviewed.csv"
    assert cli("annotate", "review", study, "--out", reviewed, "--min-seconds", "2") == 0
    assert "1 to approve, 1 to reject" in capsys.readouterr().out
    rows = {r["AssignmentId"]: (r["Approve"], r["Reject"]) for r in csv.DictReader(reviewed.open())}
    assert rows["A1"][0] == "" and rows["A1"][1].startswith("Answered in 0.5 seconds per document")
    assert rows["A2"] == ("x", "") and rows["A3"] == ("", "") and rows["A4"] == ("", "")
    # review needs MTurk results
    lab_answers(tasks, ["ann"], key)
    assert (
        cli(
            "annotate",
            "import",
            tasks / "answers",
            "--format",
            "lab",
            "--key",
            tasks,
            "--out",
            tmp_path / "lab",
        )
        == 0
    )
    capsys.readouterr()
    assert cli("annotate", "review", tmp_path / "lab", "--out", tmp_path / "r.csv") == 2
    assert "review needs an import of MTurk results (this one read lab)" in one_line_error(capsys)
