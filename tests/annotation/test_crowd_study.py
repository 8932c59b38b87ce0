"""A requester's whole MTurk study, scripted: three workers (careful, random, spammer) answer every HIT of an
intruder study and of a pair (shuffle) study; the batch results file has MTurk's own columns (those of
:mod:`tests.annotation.test_mturk_results`) and crowd-form's ``flatten-objects`` answers, as the exported
template submits them. ``annotate review`` rejects every assignment of the spammer in both kinds, never one of
the careful worker; verify warns about failing assignments kept and the card tells the truth about the crowd.

Every expected figure is computed here from the key and the scripted answers, not with the code under test.
"""

from __future__ import annotations

import csv
import io
import json
import statistics
from pathlib import Path

import pytest

from incoherent.corpora.seeding import unit_interval
from tests.annotation.test_annotate import cli, dataset  # noqa: F401 - the module's private copy of the build
from tests.annotation.test_mturk_results import results_csv

CAREFUL_WPM = 250  # a careful reader (the review's floor assumes 700: skimming)


def words(item: dict) -> int:
    text = item["sentences"] if "sentences" in item else item["texts"][0]
    return sum(len(s.split()) for s in text)


def options(item: dict) -> list[int]:
    return list(range(1, len(item["sentences"]))) + [-1] if "sentences" in item else [0, 1]


def answer(worker: str, item: dict, gold: int) -> tuple[int, float]:
    """``(answer, seconds)``: the careful worker reads at 250 words a minute and is right; the random worker
    takes a plausible time and picks at random; the spammer always takes the first choice at 0.1 s."""
    if worker == "careful":
        return gold, round(words(item) * 60 / CAREFUL_WPM, 1)
    if worker == "random":
        choices = options(item)
        return choices[int(unit_interval("random", item["item_id"]) * len(choices))], 12.0
    return options(item)[0], 0.1


def submissions(tasks: Path, key: dict) -> list[dict]:
    """One crowd-form submission per (HIT, worker), flattened as ``answer-format="flatten-objects"`` gives it."""
    out = []
    for hit in csv.DictReader(io.StringIO((tasks / "mturk" / "input.csv").read_text())):
        items = json.loads(hit["items"])
        for worker in ("careful", "random", "spammer"):
            flat, planned = {"export_id": hit["export_id"], "task_id": hit["task_id"]}, []
            for slot, item in enumerate(items, start=1):
                value, seconds = answer(worker, item, key["items"][item["item_id"]]["gold"])
                planned.append((value, seconds))
                for choice in options(item):
                    flat[f"answer_{slot}.{choice}"] = choice == value
                flat[f"seconds_{slot}"] = f"{seconds:.1f}"
            out.append({"input": hit, "worker": worker, "form": {"flattened": flat}, "planned": planned})
    return out


def expected_review(key: dict, subs: list[dict]) -> dict[str, tuple[str, str]]:
    """``{(task, worker): decision}``: reject above 50% wrong check documents, or a median below the HIT's floor
    (the median words of its documents at 700 words a minute)."""
    out = {}
    for s in subs:
        items = json.loads(s["input"]["items"])
        controls = [
            (v, key["items"][i["item_id"]]["gold"])
            for i, (v, _) in zip(items, s["planned"], strict=True)
            if key["items"][i["item_id"]]["role"] == "control"
        ]
        wrong = sum(v != g for v, g in controls)
        floor = round(statistics.median(words(i) for i in items) * 60 / 700, 1)
        median = statistics.median(sec for _, sec in s["planned"])
        bad = (controls and wrong / len(controls) > 0.5) or median < floor
        out[(s["input"]["task_id"], s["worker"])] = "reject" if bad else "approve"
    return out


@pytest.mark.e2e
@pytest.mark.parametrize(
    "kind, export_args",
    [
        (
            "intruder",
            ["--config", "intruder-wikipedia", "--split", "train", "--documents", "8", "--per-task", "5"],
        ),
        ("pair", ["--config", "shuffle-wikipedia", "--per-k", "4", "--per-task", "5"]),
    ],
)
def test_three_worker_study_rejects_the_spammer_and_the_card_tells(
    dataset,  # noqa: F811
    tmp_path,
    capsys,
    kind,
    export_args,
):
    tasks, study = tmp_path / "tasks", tmp_path / "study"
    assert cli("annotate", "export", dataset, *export_args, "--out", tasks) == 0
    key = json.loads((tasks / "key.json").read_text())
    controls = {i for i, item in key["items"].items() if item["role"] == "control"}
    assert all(set(t) & controls for t in key["tasks"].values())  # a check document in every HIT, pairs too
    template = (tasks / "mturk" / "template.html").read_text()
    assert "Worker ID" in template and "name you type" not in template and "Keys:" not in template

    subs = submissions(tasks, key)
    results = tmp_path / "Batch_5123456_batch_results.csv"
    results.write_text(results_csv(subs, "flatten"), newline="")
    assert cli("annotate", "import", results, "--format", "mturk", "--key", tasks, "--out", study) == 0
    capsys.readouterr()
    reviewed = tmp_path / "reviewed.csv"
    assert cli("annotate", "review", study, "--out", reviewed) == 0
    out = capsys.readouterr()
    header = out.out.splitlines()[0].split()
    assert header[:2] == ["assignment", "worker"] and "median" in header and "floor" in header
    by_worker = {}
    worker_of = {s["worker"]: "A" for s in subs}
    rows = list(csv.DictReader(reviewed.open(newline="")))
    expected = expected_review(key, subs)
    for row, s in zip(rows, subs, strict=True):
        decision = "approve" if row["Approve"] == "x" else "reject" if row["Reject"] else "?"
        assert decision == expected[(s["input"]["task_id"], s["worker"])], (s["worker"], row["Reject"])
        by_worker.setdefault(s["worker"], set()).add(decision)
        worker_of[s["worker"]] = row["WorkerId"]
    assert by_worker["spammer"] == {"reject"} and by_worker["careful"] == {"approve"}
    assert "warning" not in out.err  # every assignment had check documents and item times

    # the requester kept every answer (no --exclude-failing): verify says so, and so does the card
    assert cli("annotate", "report", study, "--min-agreement", "2") == 0
    printed = capsys.readouterr().out.splitlines()
    # two means, each named by what it averages: every answer (checks included), judgements (checks left out)
    every = [sec for s in subs for _, sec in s["planned"]]
    judged = [
        sec
        for s in subs
        for i, (_, sec) in zip(json.loads(s["input"]["items"]), s["planned"], strict=True)
        if i["item_id"] not in controls
    ]
    (mean_line,) = [
        line for line in printed if line.startswith("mean seconds per answer (check documents included)")
    ]
    assert mean_line.split()[-1] == f"{round(statistics.fmean(every), 3):.4f}"
    assert "per annotator (documents under study only: check documents left out):" in printed
    (all_line,) = [line for line in printed if line.startswith("all judgements")]
    assert all_line.split()[-2] == f"{round(statistics.fmean(judged), 3):.4f}"
    assert cli("annotate", "verify", study, dataset, "--split-name", f"crowd_{kind}") == 0
    err = capsys.readouterr().err
    summary = json.loads((study / "import.json").read_text())
    failing = [
        n
        for n, a in summary["assignments"].items()
        if a["controls"] and a["control_errors"] / a["controls"] > 0.5
    ]
    assert failing, "the spammer fails some check documents"
    control_answers = [
        (v, key["items"][i["item_id"]]["gold"])
        for s in subs
        for i, (v, _) in zip(json.loads(s["input"]["items"]), s["planned"], strict=True)
        if i["item_id"] in controls
    ]
    accuracy = round(sum(v == g for v, g in control_answers) / len(control_answers), 4)
    assert f"warning: {len(failing)} of {len(subs)} assignments answered more than 50% of their check" in err
    config = export_args[1]
    record = json.loads((dataset / "human_verification" / f"{config}.json").read_text())
    assert record["protocol"]["failing_assignments"] == len(failing) == record["protocol"]["failing_kept"]
    assert record["protocol"]["assignments"] == len(subs) and record["protocol"]["excluded_assignments"] == 0
    assert record["report"]["control_accuracy"] == accuracy
    card = (dataset / "README.md").read_text()
    section = card[card.index(f"### `{config}` split `crowd_{kind}`") :]
    assert (
        f"{len(failing)} of {len(subs)} assignments answered more than 50% of their check documents wrong"
        in section
    )
    assert f"0 excluded, **{len(failing)} kept among the answers**" in section
    assert f"| control accuracy (check documents, every answer) | {accuracy:.4f} |" in section

    # imported again with --exclude-failing: none kept, the record and the card say they were excluded
    assert cli("annotate", "import", results, "--format", "mturk", "--key", tasks, "--out", tmp_path / "strict",
               "--exclude-failing") == 0  # fmt: skip
    # who is left (the careful worker, perhaps the random one) may be one annotator
    assert cli("annotate", "report", tmp_path / "strict", "--min-agreement", "1") == 0
    capsys.readouterr()
    assert cli("annotate", "verify", tmp_path / "strict", dataset, "--split-name", f"crowd_{kind}") == 0
    assert "warning" not in capsys.readouterr().err
    record = json.loads((dataset / "human_verification" / f"{config}.json").read_text())
    assert (
        record["protocol"]["excluded_assignments"] == len(failing) and record["protocol"]["failing_kept"] == 0
    )
    assert f"{len(failing)} excluded, **0 kept among the answers**" in (dataset / "README.md").read_text()


def test_instructions_are_written_per_platform(dataset, tmp_path):  # noqa: F811
    """The default text tells each platform's annotators what holds there: the lab app's keys and typed name
    only in the lab app; on MTurk the Worker ID and the checks that may reject a HIT; Label Studio's hotkeys."""
    for config, extra in (("intruder-wikipedia", ["--split", "train", "--documents", "3"]),
                          ("shuffle-wikipedia", ["--per-k", "1"])):  # fmt: skip
        tasks = tmp_path / config
        assert cli("annotate", "export", dataset, "--config", config, *extra, "--out", tasks) == 0
        lab = json.loads((tasks / "tasks.json").read_text())["instructions"]
        mturk = (tasks / "mturk" / "template.html").read_text()
        studio = json.loads((tasks / "labelstudio" / "tasks.json").read_text())[0]["data"]["instructions"]
        assert "name you type" in lab and "`Enter` goes on" in lab
        for text in (mturk, studio):
            assert "name you type" not in text and "Enter" not in text and "Worked example" in text
        assert "Keys" not in mturk and "Worker ID" in mturk and "checks" in mturk
        assert "Label Studio account" in studio and "Keys:" in studio and "<code>n</code>" not in studio
    own = tmp_path / "own.md"
    own.write_text("## Our study\n\nPress `a` or `b`.\n")
    tasks = tmp_path / "own"
    assert cli("annotate", "export", dataset, "--config", "shuffle-wikipedia", "--per-k", "1", "--instructions",
               own, "--out", tasks) == 0  # fmt: skip
    assert "Press <code>a</code> or <code>b</code>." in (tasks / "mturk" / "template.html").read_text()
    assert json.loads((tasks / "tasks.json").read_text())["instructions"] == own.read_text()


def test_review_warns_when_it_has_no_signal(dataset, tmp_path, capsys):  # noqa: F811
    """A pair study without check pairs, reviewed with the time floor off: every approval is a guess, said so."""
    tasks, study = tmp_path / "tasks", tmp_path / "study"
    assert cli("annotate", "export", dataset, "--config", "shuffle-wikipedia", "--per-k", "2", "--controls", "0",
               "--out", tasks) == 0  # fmt: skip
    key = json.loads((tasks / "key.json").read_text())
    assert {i["role"] for i in key["items"].values()} == {"test"}
    subs = [s for s in submissions(tasks, key) if s["worker"] == "spammer"]
    results = tmp_path / "results.csv"
    results.write_text(results_csv(subs, "flatten"), newline="")
    assert cli("annotate", "import", results, "--format", "mturk", "--key", tasks, "--out", study) == 0
    capsys.readouterr()
    assert cli("annotate", "review", study, "--out", tmp_path / "off.csv", "--min-seconds", "0") == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == len(subs) and all("approved without a signal: no check documents" in e for e in err)
    # the default floor (reading speed) still catches the 0.1 s spammer without check pairs
    assert cli("annotate", "review", study, "--out", tmp_path / "floor.csv") == 0
    assert capsys.readouterr().err == ""
    rows = list(csv.DictReader((tmp_path / "floor.csv").open(newline="")))
    assert all(r["Approve"] == "" and "seconds per document (median)" in r["Reject"] for r in rows)


def test_release_writes_insteds_bare_numbers_for_insted_data(tmp_path):
    """INSteD's released answers (numeric file_id) come back out of `release` as numbers; documents that came
    from INSteD-format data (probes of INSteD's JSONL: source_id is the file_id) are released by their number."""
    from incoherent.annotation.release import release_text
    from incoherent.annotation.tasks import intruder_tasks

    released = tmp_path / "insted.jsonl"
    lines = [
        {"file_id": 290, "gold": "3", "annoated": ["3", "3", "-1"]},
        {"file_id": 17, "gold": "-1", "annoated": ["-1", "2", "-1"]},
    ]
    released.write_text("".join(json.dumps(r) + "\n" for r in lines))
    assert cli("annotate", "import", released, "--format", "insted", "--out", tmp_path / "study") == 0
    assert cli("annotate", "release", tmp_path / "study", "--out", tmp_path / "again.jsonl") == 0
    again = [json.loads(line) for line in (tmp_path / "again.jsonl").read_text().splitlines()]
    assert again == sorted(lines, key=lambda r: r["file_id"])
    rows = [
        {"id": "official_wikipedia:290", "source_id": "290", "file_id": 290, "intruder_index": 2,
         "sentences": ["The river rises in the hills.", "Bread needs flour.", "It ends in the sea."]},
        {"id": "official_wikipedia:17", "source_id": "17", "file_id": 17, "intruder_index": -1,
         "sentences": ["Cats sleep a lot.", "They hunt at night.", "Mice fear them."]},
    ]  # fmt: skip
    tasks, key_items = intruder_tasks(rows, [], seed=0, per_task=5, controls=0)
    key = {"kind": "intruder", "items": key_items}
    given = [{"item_id": i["item_id"], "worker": "w1", "answer": 2} for t in tasks for i in t["items"]]
    out = [json.loads(line) for line in release_text(key, given).splitlines()]
    assert [r["file_id"] for r in out] == [17, 290]
    ours = [dict(r, source_id=r["id"], file_id=n) for n, r in enumerate(rows)]  # our build: our string ids
    tasks, key_items = intruder_tasks(ours, [], seed=0, per_task=5, controls=0)
    given = [{"item_id": i["item_id"], "worker": "w1", "answer": 2} for t in tasks for i in t["items"]]
    out = [
        json.loads(line)
        for line in release_text({"kind": "intruder", "items": key_items}, given).splitlines()
    ]
    assert [r["file_id"] for r in out] == ["official_wikipedia:17", "official_wikipedia:290"]
