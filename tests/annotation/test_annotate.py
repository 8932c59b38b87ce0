"""`incoherent annotate`: export -> answers of scripted annotators -> import -> report -> verified split.

The annotators answer correctly with known probabilities (drawn from a stable hash), and every expected figure
(kept documents, human accuracy and F1, Krippendorff's alpha, Cohen's kappa) is computed here from the key and
the scripted answers with formulas written out in this file, not with the code under test.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import statistics
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from incoherent.corpora.seeding import unit_interval
from tests.annotation.lab_client import LabSession, form_of
from tests.conftest import run_cli
from tests.sample_build import wikipedia_build

ACCURACY = {"ann": 0.95, "ben": 0.85, "cat": 0.75, "dan": 0.9, "spam": 0.0}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    """A private copy of the sample build's dataset (verify writes into it)."""
    copy = tmp_path_factory.mktemp("annotate") / "dataset"
    shutil.copytree(wikipedia_build(tmp_path_factory) / "dataset", copy)
    return copy


def cli(*args) -> int:
    return run_cli(*args, beam=[])


def scripted(worker: str, item: str, gold: int, n: int) -> int:
    """The worker's answer: the gold with probability ACCURACY[worker], else a wrong one; spam says -1."""
    if worker == "spam":
        return -1
    if unit_interval("scripted", worker, item) < ACCURACY[worker]:
        return gold
    return -1 if gold != -1 else 1 + int(unit_interval("wrong", worker, item) * (n - 1))


# ------------------------------------------------------------------------------------------ the oracle


def alpha_nominal(units: list[list[int]]) -> float:
    """Krippendorff's alpha, nominal, from the coincidence matrix (Krippendorff 2011, "Computing ...")."""
    coincidences: Counter = Counter()
    for values in units:
        m = len(values)
        if m < 2:
            continue
        for i, c in enumerate(values):
            for j, k in enumerate(values):
                if i != j:
                    coincidences[(c, k)] += 1 / (m - 1)
    totals: Counter = Counter()
    for (c, _), v in coincidences.items():
        totals[c] += v
    n = sum(totals.values())
    observed = sum(v for (c, k), v in coincidences.items() if c != k)
    expected = sum(totals[c] * totals[k] for c in totals for k in totals if c != k) / (n - 1)
    return 1 - observed / expected


def kappa(first: list[int], second: list[int]) -> float:
    n = len(first)
    po = sum(a == b for a, b in zip(first, second, strict=True)) / n
    ca, cb = Counter(first), Counter(second)
    pe = sum(ca[v] * cb[v] for v in set(first) | set(second)) / n / n
    return (po - pe) / (1 - pe)


def expected_intruder(key: dict, answers: dict[str, dict[str, int]], min_agreement: int) -> dict:
    """answers: item id -> {worker: answer}, documents under study only."""
    kept, unanimous = [], Counter()
    for iid, given in answers.items():
        values = list(given.values())
        (top, count), *rest = Counter(values).most_common()
        gold = key["items"][iid]["gold"]
        if count >= min_agreement and not (rest and rest[0][1] == count):
            kept.append((top, gold))
        if len(values) >= 2 and len(set(values)) == 1:
            unanimous[(values[0] != -1, gold != -1)] += 1
    correct = sum((h != -1) == (g != -1) for h, g in kept)
    tp = sum(h == g != -1 for h, g in kept)
    fp = sum(h != -1 and h != g for h, g in kept)
    fn = sum(g != -1 and h != g for h, g in kept)
    return {
        "kept": len(kept),
        "accuracy": round(correct / len(kept), 4),
        "f1": round(2 * tp / (2 * tp + fp + fn), 4) if tp else 0.0,
        "unanimous": unanimous,
    }


# ------------------------------------------------------------------------------------------- platforms


def mturk_results(tasks_dir: Path, workers: list[str], key: dict) -> str:
    """MTurk's batch results CSV for the export's input CSV, answered by the scripted workers."""
    rows = list(csv.DictReader(io.StringIO((tasks_dir / "mturk" / "input.csv").read_text())))
    slots = max(len(json.loads(r["items"])) for r in rows)
    header = ["HITId", "AssignmentId", "WorkerId", "AssignmentStatus", "WorkTimeInSeconds"]
    header += [f"Input.{c}" for c in ("export_id", "task_id", "items")]
    header += [f"Answer.{k}_{s}" for s in range(1, slots + 1) for k in ("answer", "seconds")]
    out = io.StringIO()
    writer = csv.DictWriter(out, header, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        items = json.loads(row["items"])
        for worker in workers:
            record = {
                "HITId": row["task_id"],
                "AssignmentId": f"{row['task_id']}-{worker}",
                "WorkerId": worker,
            }
            record |= {"AssignmentStatus": "Submitted", "WorkTimeInSeconds": "60"}
            record |= {f"Input.{c}": row[c] for c in ("export_id", "task_id", "items")}
            for slot, item in enumerate(items, start=1):
                gold = key["items"][item["item_id"]]["gold"]
                record[f"Answer.answer_{slot}"] = scripted(
                    worker, item["item_id"], gold, len(item["sentences"])
                )
                record[f"Answer.seconds_{slot}"] = 10 + slot
            writer.writerow(record)
    return out.getvalue()


def test_intruder_study_end_to_end(dataset, tmp_path, capsys):
    tasks = tmp_path / "tasks"
    assert cli("annotate", "export", dataset, "--config", "intruder-wikipedia", "--split", "train",
               "--documents", "6", "--per-task", "4", "--out", tasks) == 0  # fmt: skip
    key = json.loads((tasks / "key.json").read_text())
    assert key["workers"] == 5 and len(key["tasks"]) == 2
    roles = Counter(item["role"] for item in key["items"].values())
    assert roles == {"test": 6, "control": len({i for t in key["tasks"].values() for i in t}) - 6}
    # no gold in what annotators and platforms see
    seen = "".join(
        (tasks / f).read_text() for f in ("tasks.json", "mturk/input.csv", "labelstudio/tasks.json")
    )
    assert '"gold"' not in seen and "wikipedia:" not in seen and "control" not in seen

    workers = list(ACCURACY)
    results = tmp_path / "results.csv"
    results.write_text(mturk_results(tasks, workers, key))
    study = tmp_path / "study"
    assert cli("annotate", "import", results, "--format", "mturk", "--key", tasks, "--out", study,
               "--exclude-failing") == 0  # fmt: skip
    summary = json.loads((study / "import.json").read_text())

    # quality control computed here, per assignment (one worker's task): share of wrong control answers above 0.5
    def control_errors(worker: str, task: str) -> float:
        controls = [i for i in key["tasks"][task] if key["items"][i]["role"] == "control"]
        wrong = sum(
            scripted(worker, i, key["items"][i]["gold"], 9) != key["items"][i]["gold"] for i in controls
        )
        return wrong / len(controls)

    failing = sorted((t, w) for t in key["tasks"] for w in workers if control_errors(w, t) > 0.5)
    assert ("t0001", "spam") in failing and ("t0002", "spam") in failing
    assert summary["excluded_assignments"] == sorted(f"{t}-{w}" for t, w in failing)
    assert summary["rejected"] == {"excluded_assignment": 4 * len(failing)}
    assert summary["assignments"]["t0001-spam"] == {
        "worker": "spam", "task_id": "t0001", "hit_id": "t0001", "assignment_status": "Submitted",
        "answers": 4, "controls": 1, "control_errors": 1, "control_error_rate": 1.0, "failing": True,
        "seconds": 11.0 + 12 + 13 + 14, "median_seconds": 12.5,
    }  # fmt: skip
    kept = [json.loads(line) for line in (study / "answers.jsonl").read_text().splitlines()]
    assert {(a["hit_id"], a["assignment_id"], a["assignment_status"]) for a in kept} == {
        (t, f"{t}-{w}", "Submitted") for t in key["tasks"] for w in workers if (t, w) not in failing
    }

    assert cli("annotate", "report", study) == 0
    printed = capsys.readouterr().out
    assert "human accuracy" in printed and "Krippendorff" in printed
    report = json.loads((study / "report.json").read_text())
    task_of = {i: t for t, items in key["tasks"].items() for i in items}
    answers = {
        iid: {
            w: scripted(w, iid, item["gold"], item["sentences"])
            for w in workers
            if (task_of[iid], w) not in failing
        }
        for iid, item in key["items"].items()
        if item["role"] == "test"
    }
    expected = expected_intruder(key, answers, 3)
    assert report["documents"] == 6 and report["kept"]["documents"] == expected["kept"]
    assert report["human_accuracy"] == expected["accuracy"] and report["human_f1"] == expected["f1"]
    assert report["krippendorff_alpha"] == pytest.approx(
        alpha_nominal([list(a.values()) for a in answers.values()]), abs=1e-4
    )
    assert report["cohen_kappa"] is None  # more than two annotators
    u = report["unanimous"]
    assert u["incoherent"]["with_intruder"] == expected["unanimous"][(True, True)]
    assert u["coherent"]["without_intruder"] == expected["unanimous"][(False, False)]
    correct_counts = Counter(
        sum(a == key["items"][i]["gold"] for a in given.values()) for i, given in answers.items()
    )
    assert {int(n): c for n, c in report["gold_agreement"]["all"].items() if c} == dict(correct_counts)
    assert report["median_seconds"] == statistics.median([10 + s for s in range(1, 5)])
    assert (study / "figures" / "gold_agreement.png").stat().st_size > 1000

    # a model's predictions (evaluate --predictions): always "coherent"
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(
        "".join(
            json.dumps({"id": item["id"], "predicted_index": -1}) + "\n" for item in key["items"].values()
        )
    )
    assert cli("annotate", "report", study, "--predictions", predictions) == 0
    model = json.loads((study / "report.json").read_text())["model"]
    coherent_share = sum(g == -1 for _, g in [(0, key["items"][i]["gold"]) for i in answers]) / 6
    by_level = model["by_agreement"]
    assert sum(v["documents"] for v in by_level.values()) == 6
    assert sum(v["documents"] * v["model_accuracy"] for v in by_level.values()) == pytest.approx(
        coherent_share * 6, abs=1e-3
    )
    assert (study / "figures" / "model_by_agreement.png").exists()

    # the verified split and the card
    assert cli("annotate", "verify", study, dataset) == 0
    verified = pq.read_table(
        dataset / "intruder-wikipedia" / "train_verified-00000-of-00001.parquet"
    ).to_pylist()
    assert len(verified) == expected["kept"] and {r["split"] for r in verified} <= {"train_verified"}
    card = (dataset / "README.md").read_text()
    assert "## Human verification" in card and "train_verified" in card
    assert "](human_verification/intruder-wikipedia-gold_agreement.png)" in card
    assert (dataset / "human_verification" / "intruder-wikipedia-model_by_agreement.png").exists()
    assert f"| human accuracy (majority answer, kept documents) | {expected['accuracy']:.4f} |" in card

    # the same inputs give the same bytes
    first = {p.relative_to(tmp_path): p.read_bytes() for p in sorted(tmp_path.rglob("*")) if p.is_file()}
    first_split = (dataset / "intruder-wikipedia" / "train_verified-00000-of-00001.parquet").read_bytes()
    again = tmp_path / "again"
    assert cli("annotate", "export", dataset, "--config", "intruder-wikipedia", "--split", "train",
               "--documents", "6", "--per-task", "4", "--out", again / "tasks") == 0  # fmt: skip
    assert cli("annotate", "import", results, "--format", "mturk", "--key", again / "tasks", "--out",
               again / "study", "--exclude-failing") == 0  # fmt: skip
    assert cli("annotate", "report", again / "study", "--predictions", predictions) == 0
    assert cli("annotate", "verify", again / "study", dataset) == 0
    for rel, data in first.items():
        if rel.parts[0] in ("tasks", "study"):
            assert (again / rel).read_bytes() == data, rel
    assert (
        dataset / "intruder-wikipedia" / "train_verified-00000-of-00001.parquet"
    ).read_bytes() == first_split


def test_label_studio_two_annotators_kappa(dataset, tmp_path):
    tasks = tmp_path / "tasks"
    assert cli("annotate", "export", dataset, "--config", "intruder-wikipedia", "--split", "train",
               "--controls", "0", "--out", tasks) == 0  # fmt: skip
    key = json.loads((tasks / "key.json").read_text())
    config = (tasks / "labelstudio" / "config.xml").read_text()
    assert 'value="$options"' in config and "gold" not in config
    exported = json.loads((tasks / "labelstudio" / "tasks.json").read_text())
    for number, task in enumerate(exported, start=1):  # what Label Studio's JSON export looks like
        task["id"] = number
        n = len(task["data"]["options"])
        annotations = []
        for person, worker in ((1, "ann"), ({"id": 2, "email": "cat@lab"}, "cat")):
            iid = task["data"]["item_id"]
            answer = scripted(worker, iid, key["items"][iid]["gold"], n + 1)
            choice = "None of the above" if answer == -1 else f"Sentence {answer + 1}"
            result = [
                {
                    "from_name": "answer",
                    "to_name": "document",
                    "type": "choices",
                    "value": {"choices": [choice]},
                }
            ]
            annotations.append(
                {"completed_by": person, "result": result, "lead_time": 7.5, "was_cancelled": False}
            )
        task["annotations"] = annotations
    path = tmp_path / "export.json"
    path.write_text(json.dumps(exported))
    study = tmp_path / "study"
    assert cli("annotate", "import", path, "--format", "labelstudio", "--key", tasks, "--out", study) == 0
    assert cli("annotate", "report", study, "--min-agreement", "2") == 0
    report = json.loads((study / "report.json").read_text())
    first = [scripted("ann", i, key["items"][i]["gold"], key["items"][i]["sentences"]) for i in key["items"]]
    second = [scripted("cat", i, key["items"][i]["gold"], key["items"][i]["sentences"]) for i in key["items"]]
    assert report["documents"] == 9 and report["annotators"] == 2
    assert report["cohen_kappa"] == pytest.approx(kappa(first, second), abs=1e-4)
    assert report["kept"]["documents"] == sum(a == b for a, b in zip(first, second, strict=True))
    assert report["median_seconds"] == 7.5


def test_shuffle_pairs_in_lab(dataset, tmp_path):
    """Pairs answered through the web application (Flask's test client); accuracy and seconds per k."""
    from incoherent.annotation.webapp import create_app

    tasks = tmp_path / "tasks"
    assert cli("annotate", "export", dataset, "--config", "shuffle-wikipedia", "--per-k", "3", "--controls", "0",
               "--out", tasks) == 0  # fmt: skip
    key = json.loads((tasks / "key.json").read_text())
    assert key["workers"] == 2 and Counter(i["block_size"] for i in key["items"].values()) == {1: 3, 3: 3}
    app = create_app(str(tasks))
    for worker, right in (("ann", {1, 3}), ("ben", {3})):  # ben is always wrong on k=1
        lab = LabSession(app, worker)
        for _ in range(6):
            _, fields = form_of(lab.page())
            item = key["items"][fields["item_id"]]
            answer = item["gold"] if item["block_size"] in right else 1 - item["gold"]
            assert lab.answer(lambda f, a=answer: a, seconds=item["block_size"] * 2).status_code == 303
    assert "All 6 items answered" in lab.page()
    study = tmp_path / "study"
    assert (
        cli("annotate", "import", tasks / "answers", "--format", "lab", "--key", tasks, "--out", study) == 0
    )
    assert cli("annotate", "report", study, "--min-agreement", "2") == 0
    report = json.loads((study / "report.json").read_text())
    golds = [item["gold"] for item in key["items"].values() if item["block_size"] == 1]
    expected_kappa = round(kappa(golds, [1 - g for g in golds]), 4)
    assert report["per_k"]["1"] == {
        "judgements": 6,
        "accuracy": 0.5,
        "cohen_kappa": expected_kappa,
        "median_seconds": 2.0,
    }
    assert report["per_k"]["3"]["accuracy"] == 1.0 and report["per_k"]["3"]["median_seconds"] == 6.0
    assert report["kept"]["documents"] == 3 and report["human_accuracy"] == 1.0
    # score-shuffle's scores: the model is right on k=1 and wrong on k=3
    import pyarrow as pa

    from incoherent.schemas.tables import SCORES_SCHEMA

    scores = [
        {"id": item["id"], "source": "wikipedia", "block_size": item["block_size"], "permutation": 0,
         "score_original": 1.0, "score_shuffled": 2.0 if item["block_size"] == 1 else 0.5,
         "tokens_original": 10, "tokens_shuffled": 10, "correct": item["block_size"] == 1, "tie": False}
        for item in key["items"].values()
    ]  # fmt: skip
    (tmp_path / "lm" / "scores").mkdir(parents=True)
    pq.write_table(
        pa.Table.from_pylist(scores, schema=SCORES_SCHEMA),
        tmp_path / "lm" / "scores" / "test-00000-of-00001.parquet",
    )
    assert cli("annotate", "report", study, "--min-agreement", "2", "--predictions", tmp_path / "lm") == 0
    model = json.loads((study / "report.json").read_text())["model"]
    assert model["per_k"] == {
        "1": {"human_accuracy": 0.5, "model_accuracy": 1.0},
        "3": {"human_accuracy": 1.0, "model_accuracy": 0.0},
    }
    # ann and ben agree only on k=3 (both right), where the model is wrong
    assert model["by_agreement"] == {
        "1": {"documents": 3, "model_accuracy": 1.0},
        "2": {"documents": 3, "model_accuracy": 0.0},
    }
    assert model["human_vs_model"]["model"] == {"documents": 3, "accuracy": 0.0}
    assert cli("annotate", "verify", study, dataset, "--split-name", "test_verified") == 0
    rows = pq.read_table(dataset / "shuffle-wikipedia" / "test_verified-00000-of-00001.parquet").to_pylist()
    assert sorted(r["block_size"] for r in rows) == [3, 3, 3]


INSTED = [
    {"file_id": 1, "gold": "3", "annoated": ["3", "3", "3", "3", "3"]},  # unanimous, right
    {"file_id": 2, "gold": "-1", "annoated": ["-1", "-1", "-1", "-1", "-1"]},  # unanimous, coherent
    {"file_id": 3, "gold": "2", "annoated": ["-1", "-1", "-1", "-1", "-1"]},  # unanimous, missed
    {"file_id": 4, "gold": "4", "annoated": ["4", "4", "4", "2", "-1"]},  # kept, right
    {"file_id": 5, "gold": "-1", "annoated": ["2", "2", "2", "-1", "-1"]},  # kept, wrong (false alarm)
    {"file_id": 6, "gold": "5", "annoated": ["5", "5", "2", "2", "-1"]},  # not kept (2 of 5)
]


def test_insted_released_format(tmp_path):
    path = tmp_path / "insted_annotations.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in INSTED))
    study = tmp_path / "study"
    assert cli("annotate", "import", path, "--format", "insted", "--out", study) == 0
    assert cli("annotate", "report", study) == 0
    report = json.loads((study / "report.json").read_text())
    assert report["documents"] == 6 and report["kept"] == {"documents": 5, "fraction": 0.8333}
    # kept: 1 (3 vs 3), 2 (-1 vs -1), 3 (-1 vs 2), 4 (4 vs 4), 5 (2 vs -1)
    assert report["human_accuracy"] == 0.6  # 1, 2, 4 right on coherent vs incoherent
    assert report["human_f1"] == round(2 * 2 / (2 * 2 + 1 + 1), 4)  # tp: 1, 4; fp: 5; fn: 3
    assert report["unanimous"] == {
        "coherent": {"without_intruder": 1, "with_intruder": 1},
        "incoherent": {"without_intruder": 0, "with_intruder": 1},
        "documents": 3,
        "right_position": 1,
    }
    assert report["gold_agreement"]["all"] == {"0": 1, "1": 0, "2": 2, "3": 1, "4": 0, "5": 2}
    assert report["gold_agreement"]["incoherent"] == {"0": 1, "1": 0, "2": 1, "3": 1, "4": 0, "5": 1}
    units = [[int(a) for a in r["annoated"]] for r in INSTED]
    assert report["krippendorff_alpha"] == pytest.approx(alpha_nominal(units), abs=1e-4)


def test_bad_answers_are_counted_or_one_line(dataset, tmp_path, capsys):
    tasks = tmp_path / "tasks"
    assert cli("annotate", "export", dataset, "--config", "intruder-wikipedia", "--split", "train",
               "--documents", "3", "--per-task", "4", "--out", tasks) == 0  # fmt: skip
    doc = json.loads((tasks / "tasks.json").read_text())
    task = doc["tasks"][0]
    first, second = task["items"][0]["item_id"], task["items"][1]["item_id"]

    def line(item, answer, who="ann", task_id=task["task_id"], export=doc["export_id"]):
        record = {
            "export_id": export,
            "task_id": task_id,
            "item_id": item,
            "annotator": who,
            "answer": answer,
        }
        return json.dumps(record) + "\n"

    answers = tmp_path / "ann.jsonl"
    answers.write_text(
        line(first, -1) + line(first, -1) + line(second, 99) + line("i000", -1) + line(second, -1, task_id="t9")
        + "{broken\n" + line(second, "x")
    )  # fmt: skip
    study = tmp_path / "study"
    assert cli("annotate", "import", answers, "--format", "lab", "--key", tasks, "--out", study) == 0
    summary = json.loads((study / "import.json").read_text())
    assert summary["answers_kept"] == 1
    assert summary["rejected"] == {"bad_json": 1, "duplicate": 1, "out_of_range": 2, "unknown_item": 2}
    assert len((study / "rejected.jsonl").read_text().splitlines()) == 6
    capsys.readouterr()
    other = tmp_path / "other.jsonl"
    other.write_text(line(first, -1, export="0123456789ab"))
    assert cli("annotate", "import", other, "--format", "lab", "--key", tasks, "--out", tmp_path / "s2") == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {other}: answers for export '0123456789ab'") and "\n" not in err
    assert cli("annotate", "import", answers, "--format", "lab", "--out", tmp_path / "s3") == 2
    assert "--key: needed" in capsys.readouterr().err
    assert cli("annotate", "export", dataset, "--config", "documents-wikipedia", "--out", tmp_path / "x") == 2
    assert (
        cli(
            "annotate",
            "export",
            dataset,
            "--config",
            "shuffle-wikipedia",
            "--documents",
            "3",
            "--out",
            tmp_path / "y",
        )
        == 2
    )
    again = ("annotate", "export", dataset, "--config", "intruder-wikipedia", "--out", tasks)
    assert cli(*again) == 2  # not empty
    (tasks / "answers").mkdir()
    (tasks / "answers" / "ann.jsonl").write_text(line(first, -1))
    capsys.readouterr()
    assert cli(*again, "--overwrite") == 2  # answers are never replaced
    assert "holds answers to an earlier export" in capsys.readouterr().err


def test_documented_commands_parse():
    """Every `incoherent annotate` line of docs/annotation.md names flags the CLI knows (the example study itself
    needs the Quickstart build and people; the tests above run the same commands on the sample build)."""
    from incoherent.pipelines.commands import build_parser, selected_module

    text = (Path(__file__).resolve().parents[2] / "docs" / "annotation.md").read_text()
    commands = []
    for block in text.split("```bash")[1:]:
        joined = block.split("```", 1)[0].replace("\\\n", " ")
        commands += [
            line.split("#", 1)[0].replace("[", "").replace("]", "").split()[1:]
            for line in joined.splitlines()
            if line.startswith("incoherent annotate")
        ]
    assert len(commands) >= 12
    for argv in commands:
        parser = build_parser(selected_module(argv))
        args, unknown = parser.parse_known_args(argv)
        assert not unknown and args._module.startswith("incoherent.pipelines.annotate."), argv


def test_platform_formats_of_pairs_and_script_safety():
    from incoherent.annotation import formats, labelstudio, mturk, tasks

    row = {
        "id": "d",
        "block_size": 2,
        "permutation": 0,
        "original": ["a", "b</script>"],
        "shuffled": ["b</script>", "a"],
    }
    task_list, key_items = tasks.pair_tasks([row], seed=3, per_task=5)
    doc, key = tasks.documents("pair", task_list, key_items, {"seed": 3, "workers": 2})
    cell = mturk.mturk_input_csv(doc).splitlines()[1]
    assert "</script>" not in cell and "\\u003c/script\\u003e" in cell
    template = mturk.mturk_template("pair")
    assert "${items}" in template and "Text B is the original" in template
    (ls_task,) = labelstudio.labelstudio_tasks(doc)
    assert {"text_a", "text_b", "block_size"} <= set(ls_task["data"]) and "&lt;/script&gt;" in ls_task[
        "data"
    ]["text_a"]
    assert '<Choice value="B" hotkey="b"/>' in labelstudio.labelstudio_config("pair")
    iid = ls_task["data"]["item_id"]
    ls_task["annotations"] = [
        {"completed_by": 7, "result": [{"from_name": "answer", "value": {"choices": ["B"]}}], "lead_time": 3}
    ]
    collector = formats.Collector(key)
    labelstudio.parse_labelstudio(json.dumps([ls_task]), "export.json", collector)
    assert collector.answers == [
        {
            "task_id": "t0001",
            "item_id": iid,
            "worker": "7",
            "answer": 1,
            "seconds": 3.0,
            "origin": "export.json:task 0",
            "hit_id": None,
            "assignment_id": None,
            "assignment_status": None,
        }
    ]
    results = "WorkerId,Input.export_id,Input.task_id,Input.items,Answer.answer_1,WorkTimeInSeconds\n"
    results += f'w1,{doc["export_id"]},t0001,"{cell.split(",", 2)[2][1:-1]}",2,30\n'
    collector = formats.Collector(key)
    mturk.parse_mturk(results, "batch.csv", collector)
    assert collector.answers == [] and collector.rejected[0]["reason"] == "out_of_range"
