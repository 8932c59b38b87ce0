"""INSteD's Table 7 human row: per-judgement F1 in `annotate report`, and `--baseline` (annotation.table7)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.annotation.lab_client import LabSession, form_of
from tests.annotation.test_annotate import INSTED, dataset  # noqa: F401 (the fixture)
from tests.conftest import run_cli


def cli(*args) -> int:
    return run_cli(*args, beam=[])


def insted_study(tmp_path: Path, name: str, records: list[dict]) -> Path:
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    study = tmp_path / f"study-{name}"
    assert cli("annotate", "import", path, "--format", "insted", "--out", study) == 0
    return study


def test_every_judgement_scored_by_hand(tmp_path, capsys):
    """INSTED's 30 answers as 30 predictions of the intruder position (counted by hand):
    1 (gold 3): five 3s, tp 5; 2 (gold -1): five -1s, nothing; 3 (gold 2): five -1s, fn 5;
    4 (gold 4): 4 4 4 2 -1, tp 3, fp 1 + fn 1 (wrong position), fn 1; 5 (gold -1): 2 2 2 -1 -1, fp 3;
    6 (gold 5): 5 5 2 2 -1, tp 2, fp 2 + fn 2, fn 1. tp 10, fp 6, fn 10."""
    study = insted_study(tmp_path, "main", INSTED)
    assert cli("annotate", "report", study) == 0
    judgements = json.loads((study / "report.json").read_text())["judgements"]
    assert judgements["judgements"] == 30
    assert judgements["precision"] == 0.625 and judgements["recall"] == 0.5
    assert judgements["f1"] == round(2 * 10 / (2 * 10 + 6 + 10), 4) == 0.5556
    printed = capsys.readouterr().out
    lines = [" ".join(line.split()) for line in printed.splitlines()]
    assert "human F1, every judgement (30) 0.5556" in lines
    assert "human F1 (intruder position) 0.6667" in lines  # the majority F1 of kept documents, as before


GENDER = [  # INSteD's per-phenomenon answer files have the main file's shape; file_id 7 is not in the main file
    {"file_id": 1, "gold": "3", "annoated": ["3", "3", "3", "3", "-1"]},  # tp 4, fn 1
    {"file_id": 3, "gold": "2", "annoated": ["2", "2", "2", "-1", "4"]},  # tp 3, fn 1, fp 1 + fn 1
    {"file_id": 4, "gold": "4", "annoated": ["4", "4", "4", "4", "4"]},  # tp 5
    {"file_id": 7, "gold": "1", "annoated": ["1", "1", "1", "1", "1"]},  # tp 5
]


def test_insted_probe_answers_against_the_main_file(tmp_path, capsys):
    main, gender = insted_study(tmp_path, "main", INSTED), insted_study(tmp_path, "gender", GENDER)
    assert cli("annotate", "report", gender, "--baseline", main) == 0
    row = json.loads((gender / "report.json").read_text())["baseline"]
    # the probe study over its 4 documents: tp 17, fp 1, fn 3
    probed = round(2 * 17 / (2 * 17 + 1 + 3), 4)
    # the baseline over the 3 it shares (1, 3, 4): 1 tp 5; 3 fn 5; 4 tp 3, fp 1, fn 2 -> tp 8, fp 1, fn 7
    unprobed = round(2 * 8 / (2 * 8 + 1 + 7), 4)
    assert (row["f1"], row["baseline_f1"]) == (probed, unprobed) == (0.8947, 0.6667)
    assert row["delta_f1"] == 0.228
    assert (row["documents"], row["judgements"], row["baseline_documents"], row["baseline_judgements"]) == (
        4,
        20,
        3,
        15,
    )
    assert row["phenomenon"] == "gender"
    printed = capsys.readouterr().out
    line = next(x for x in printed.splitlines() if x.startswith("gender"))
    assert line.split() == ["gender", "0.6667", "+0.2280", "0.8947", "4", "20", "3", "15"]
    # the study's own report is whole beside the row; the baseline's folder is only read
    assert "krippendorff_alpha" in json.loads((gender / "report.json").read_text())
    assert not (main / "report.json").exists()
    copy = tmp_path / "copy-of-main"  # #53: the same INSteD file imported again (the same export id)
    __import__("shutil").copytree(main, copy)
    assert cli("annotate", "report", main, "--baseline", copy) == 2
    err = capsys.readouterr().err
    assert "the same export as" in err and "a study is not its own baseline" in err, err


def test_several_probe_studies_are_one_table(tmp_path, capsys):
    main = insted_study(tmp_path, "main", INSTED)
    gender = insted_study(tmp_path, "gender", GENDER)
    negation = insted_study(tmp_path, "negation", [{"file_id": 6, "gold": "5", "annoated": ["-1"] * 5}])
    assert cli("annotate", "report", gender, negation, "--baseline", main) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    names = [r[0] for r in rows if r and r[0] in ("gender", "negation")]
    assert names == ["gender", "negation"]
    # negation: five misses, F1 0; the baseline on file 6: tp 2, fp 2, fn 3 -> 4 / 9
    neg = json.loads((negation / "report.json").read_text())["baseline"]
    assert (neg["f1"], neg["baseline_f1"], neg["delta_f1"]) == (0.0, 0.4444, -0.4444)


@pytest.mark.parametrize(
    "args, message",
    [
        (["gender", "main"], "several studies are reported together only with --baseline"),
        (["gender", "--baseline", "gender"], "is also one of the studies"),
        (["gender", "gender", "--baseline", "main"], "a study is named twice"),
        (["other", "--baseline", "main"], "no document in common with the baseline"),
    ],
)
def test_wrong_uses_are_one_line(tmp_path, capsys, args, message):
    insted_study(tmp_path, "main", INSTED)
    insted_study(tmp_path, "gender", GENDER)
    insted_study(tmp_path, "other", [{"file_id": 99, "gold": "2", "annoated": ["2"] * 3}])
    paths = [a if a.startswith("--") else str(tmp_path / f"study-{a}") for a in args]
    assert cli("annotate", "report", *paths) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err
    assert not (tmp_path / "study-gender" / "report.json").exists()  # nothing written before the line


def answer_all(app, name: str, choose) -> None:
    lab = LabSession(app, name)
    while "answer-form" in lab.page():
        _, fields = form_of(lab.page())
        assert lab.answer(lambda f: choose(f["item_id"]), seconds=3.0).status_code == 303


@pytest.mark.e2e
def test_probe_study_and_its_unprobed_baseline_through_the_lab_app(dataset, tmp_path, capsys):  # noqa: F811
    """The whole route on the sample build: probes, a probe study and its --unprobed baseline answered in the
    lab app by three scripted annotators, imported, and the human Table 7 row; then the card shows it."""
    from incoherent.annotation.webapp import create_app

    probes = tmp_path / "probes"
    assert cli("probes", dataset, "--out", probes, "--split", "train", "--phenomena", "negation") == 0
    keys = {}
    for name, extra in (("probed", []), ("unprobed", ["--unprobed"])):
        assert cli("annotate", "export", probes, "--config", "probe-negation", "--split", "train",
                   "--documents", "5", "--workers", "3", "--out", tmp_path / name, *extra) == 0  # fmt: skip
        keys[name] = json.loads((tmp_path / name / "key.json").read_text())
    docs = {name: sorted(i["id"] for i in key["items"].values()) for name, key in keys.items()}
    n = len(
        docs["probed"]
    )  # up to 5: the sample build's train split has 3 negation probes (2026-11-29 rules)
    assert docs["probed"] == docs["unprobed"] and 3 <= n <= 5  # the same documents
    assert keys["unprobed"]["unprobed"] is True and "unprobed" not in keys["probed"]
    shown = {
        name: {
            item["item_id"]: item
            for task in json.loads((tmp_path / name / "tasks.json").read_text())["tasks"]
            for item in task["items"]
        }
        for name in keys
    }
    rows = {
        r["id"]: r
        for r in __import__("pyarrow.parquet", fromlist=["x"])
        .read_table(probes / "probe-negation" / "train-00000-of-00001.parquet")
        .to_pylist()
    }
    for name, key in keys.items():  # the annotators read the probed sentence, or the one before the probe
        for iid, item in key["items"].items():
            row = rows[item["id"]]
            text = json.dumps(shown[name][iid], ensure_ascii=False)
            wanted = row["probed_sentence"] if name == "probed" else row["intruder_sentence"]
            assert json.dumps(wanted, ensure_ascii=False)[1:-1] in text

    # every document is incoherent: ann always finds the intruder; on the baseline ben says coherent on
    # every document, on the probes he finds it on the first two (in id order) and says coherent on the rest;
    # cat names sentence 1, or 2 where sentence 1 is the intruder (a wrong position) on both
    order = docs["probed"]

    def scripted(key, worker):
        def choose(iid):
            item = key["items"][iid]
            gold = item["gold"]
            if worker == "ann":
                return gold
            if worker == "ben":
                return gold if key is keys["probed"] and order.index(item["id"]) < 2 else -1
            return 2 if gold == 1 else 1

        return choose

    for name, key in keys.items():
        app = create_app(str(tmp_path / name))
        for worker in ("ann", "ben", "cat"):
            answer_all(app, worker, scripted(key, worker))
        assert cli("annotate", "import", tmp_path / name / "answers", "--format", "lab", "--key",
                   tmp_path / name, "--out", tmp_path / f"study-{name}") == 0  # fmt: skip
    capsys.readouterr()
    assert (
        cli("annotate", "report", tmp_path / "study-probed", "--baseline", tmp_path / "study-unprobed") == 0
    )
    printed = capsys.readouterr().out
    # probed: ann tp n; ben tp 2, fn n - 2; cat fp n + fn n -> tp n + 2, fp n, fn 2n - 2
    # unprobed: ann tp n; ben fn n; cat fp n + fn n -> tp n, fp n, fn 2n (F1 0.4 for any n)
    tp = n + 2
    probed, unprobed = round(2 * tp / (2 * tp + n + 2 * n - 2), 4), round(2 * n / (2 * n + n + 2 * n), 4)
    row = json.loads((tmp_path / "study-probed" / "report.json").read_text())["baseline"]
    assert (row["f1"], row["baseline_f1"]) == (probed, unprobed)
    assert unprobed == 0.4 and probed == {3: 0.5882, 4: 0.5455, 5: 0.5185}[n]
    assert row["delta_f1"] == round(probed - unprobed, 4)
    assert (row["documents"], row["judgements"], row["baseline_documents"], row["baseline_judgements"]) == (
        n,
        3 * n,
        n,
        3 * n,
    )
    line = next(x for x in printed.splitlines() if x.startswith("negation "))
    assert line.split() == [
        "negation", "0.4000", f"+{probed - unprobed:.4f}", f"{probed:.4f}", str(n), str(3 * n), str(n), str(3 * n)
    ]  # fmt: skip

    # #53: the probed study as the baseline, the unprobed one as the study, a copy of the study as its own
    # baseline (same export id): each one line (each printed a ΔF1 row, exit 0)
    import shutil

    shutil.copytree(tmp_path / "study-probed", tmp_path / "study-copy")
    for study, baseline, message in (
        ("study-unprobed", "study-probed", "a study of the probed documents (probe-negation)"),
        ("study-probed", "study-copy", "the same export as"),
        ("study-unprobed", "study-copy", "a study of the probed documents"),
    ):
        assert cli("annotate", "report", tmp_path / study, "--baseline", tmp_path / baseline) == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1, err
    capsys.readouterr()
    assert cli("annotate", "report", tmp_path / "study-copy", "--baseline", tmp_path / "study-unprobed") == 0

    # the unprobed documents are in no table of the dataset: verify says so in one line
    assert cli("annotate", "report", tmp_path / "study-unprobed") == 0
    assert cli("annotate", "verify", tmp_path / "study-unprobed", probes) == 2
    assert "--unprobed export" in capsys.readouterr().err
    # the verified probe study's card shows the human row (ann and ben agree on the first two documents)
    assert cli("annotate", "report", tmp_path / "study-probed", "--baseline", tmp_path / "study-unprobed",
               "--min-agreement", "2") == 0  # fmt: skip
    assert cli("annotate", "verify", tmp_path / "study-probed", probes) == 0
    card = (probes / "README.md").read_text()
    assert f"| human F1, every judgement ({3 * n} judgements) | {probed:.4f} |" in card
    assert (
        f"| unprobed baseline (INSteD Table 7 human row): F1 on the same {n} documents ({3 * n} judgements), ΔF1 "
        f"| 0.4000, +{probed - unprobed:.4f} |"
    ) in card


def test_a_hand_edited_answers_file_is_checked_line_by_line(tmp_path, capsys):
    """#53: ``report`` on a hand-edited ``answers.jsonl`` counted duplicate lines as extra judgements and took
    answers 99, -5, 2**70 and seconds -1 or 1e308 (a 300-digit mean broke the table). Every such line is now
    skipped and counted, as the import checks answers; the report is the one of the file as imported."""
    study = insted_study(tmp_path, "main", INSTED)
    assert cli("annotate", "report", study) == 0
    clean = json.loads((study / "report.json").read_text())
    capsys.readouterr()
    path = study / "answers.jsonl"
    lines = path.read_text().splitlines()
    first = json.loads(lines[0])
    bad = [lines[0], lines[1]]  # duplicates of lines already there
    wrong = [{"answer": a} for a in (2**70, 1000, -5, True, "3")]  # INSteD gives no sentence counts: < 1,000
    wrong += [{"seconds": s} for s in (-1, 1e308, "1", float("nan"))] + [{"task_id": "no-such-task"}]
    bad += [json.dumps({**first, "worker": f"zz{i}", **change}) for i, change in enumerate(wrong)]
    path.write_text("\n".join(lines + bad) + "\n")
    assert cli("annotate", "report", study) == 0
    printed = capsys.readouterr().out
    assert f"skipped: {len(bad)} lines of answers.jsonl that are not answers" in printed, printed
    report = json.loads((study / "report.json").read_text())
    assert report["judgements"] == clean["judgements"]
    assert report["mean_seconds"] == clean["mean_seconds"]
