"""MTurk's batch results as MTurk produces them, from the exported HIT template filled in a real browser.

The exported ``mturk/template.html`` is filled with a row of ``mturk/input.csv`` (as MTurk does), rendered in
Debian's headless chromium with a stand-in for ``crowd-form`` (:data:`CROWD_FORM`: crowd-html-elements.js is
not loaded in tests) that serialises the form the two ways crowd-form does: its default, the whole form as one
JSON list holding one object (``Answer.taskAnswers``; a radio group is ``{value: true|false}``), and
``answer-format="flatten-objects"`` (one column per key: ``Answer.answer_1.2`` = true/false for native radio
buttons); the plain form values give the third shape (``Answer.answer_1`` = the value). Three workers answer
every HIT with Selenium; the results CSV has MTurk's columns (HITId ... Last7DaysApprovalRate, Input.*,
Answer.*, Approve, Reject). Each shape imports every answer, and report and review give the figures computed
here.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import statistics
import time
from pathlib import Path

import pytest

from tests.annotation.test_annotate import ACCURACY, alpha_nominal, cli, dataset, expected_intruder, scripted  # noqa: F401
from tests.annotation.test_annotate_browser import CHROMEDRIVER, CHROMIUM, browser  # noqa: F401

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        not (CHROMIUM and CHROMEDRIVER),
        reason="no headless browser: install Debian's chromium and chromium-driver (.ci/run does) to run this test",
    ),
]

# A stand-in for crowd-html-elements.js's <crowd-form>: a Submit button that checks required radio groups and
# serialises the form as crowd-form does (taskAnswers JSON, flatten-objects keys) and as a plain form would.
CROWD_FORM = """<script>
(function () {
  function serialise(root) {
    var nested = {}, flat = {}, plain = {};
    root.querySelectorAll("input[name], select[name], textarea[name]").forEach(function (el) {
      if (el.type === "radio" || el.type === "checkbox") {
        nested[el.name] = nested[el.name] || {};
        nested[el.name][el.value] = el.checked;
        flat[el.name + "." + el.value] = el.checked;
        if (el.checked) plain[el.name] = el.value;
      } else {
        nested[el.name] = el.value; flat[el.name] = el.value; plain[el.name] = el.value;
      }
    });
    return {taskAnswers: JSON.stringify([nested]), flattened: flat, plain: plain};
  }
  customElements.define("crowd-form", class extends HTMLElement {});
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("crowd-form").forEach(function (form) {
      var button = document.createElement("button");
      button.id = "crowd-submit"; button.type = "button"; button.textContent = "Submit";
      button.addEventListener("click", function () {
        var names = {}, missing = [];
        form.querySelectorAll("input[type=radio][required]").forEach(function (r) { names[r.name] = 1; });
        Object.keys(names).forEach(function (n) {
          if (!form.querySelector("input[name='" + n + "']:checked")) missing.push(n);
        });
        if (missing.length) { window.crowdFormMissing = missing; return; }
        window.crowdFormSubmission = serialise(form);
      });
      form.appendChild(button);
    });
  });
})();
</script>
"""

HIT_COLUMNS = [
    "HITId", "HITTypeId", "Title", "Description", "Keywords", "Reward", "CreationTime", "MaxAssignments",
    "RequesterAnnotation", "AssignmentDurationInSeconds", "AutoApprovalDelayInSeconds", "Expiration",
    "NumberOfSimilarHITs", "LifetimeInSeconds", "AssignmentId", "WorkerId", "AssignmentStatus", "AcceptTime",
    "SubmitTime", "AutoApprovalTime", "ApprovalTime", "RejectionTime", "RequesterFeedback", "WorkTimeInSeconds",
    "LifetimeApprovalRate", "Last30DaysApprovalRate", "Last7DaysApprovalRate",
]  # fmt: skip
WORKERS = ["ann", "ben", "cat"]


def mturk_id(*parts: str, length: int = 30) -> str:
    """An id shaped like MTurk's (upper-case letters and digits)."""
    return hashlib.sha1("|".join(parts).encode()).hexdigest().upper()[:length]


def open_hit(browser, tmp_path: Path, template: str, row: dict) -> None:  # noqa: F811
    from incoherent.annotation.mturk import fill_template

    page = tmp_path / f"hit-{row['task_id']}.html"
    page.write_text("<!doctype html><meta charset='utf-8'>" + CROWD_FORM + fill_template(template, row))
    browser.get(page.as_uri())


def answer_hit(browser, answers: list[int]) -> dict:  # noqa: F811
    from selenium.webdriver.common.by import By

    for slot, value in enumerate(answers, start=1):
        browser.find_element(By.CSS_SELECTOR, f"input[name='answer_{slot}'][value='{value}']").click()
    browser.find_element(By.ID, "crowd-submit").click()
    submitted = browser.execute_script("return window.crowdFormSubmission || null")
    assert submitted, browser.execute_script("return window.crowdFormMissing || null")
    return submitted


def results_csv(submissions: list[dict], shape: str) -> str:
    """The batch results file MTurk gives for ``submissions`` (one per assignment) in one answer shape."""
    rows, answer_columns = [], set()
    for s in submissions:
        if shape == "taskAnswers":
            answers = {"Answer.taskAnswers": s["form"]["taskAnswers"]}
        elif shape == "flatten":
            answers = {f"Answer.{k}": str(v).lower() for k, v in s["form"]["flattened"].items()}
        else:
            answers = {f"Answer.{k}": v for k, v in s["form"]["plain"].items()}
        answer_columns |= set(answers)
        hit = s["input"]
        rows.append(
            {
                "HITId": mturk_id("hit", hit["task_id"]),
                "HITTypeId": mturk_id("type"),
                "Title": "Find the sentence that does not belong",
                "Description": "Read 4 short texts and choose the sentence that breaks the flow, if any.",
                "Keywords": "text, coherence",
                "Reward": "$0.40",
                "CreationTime": "Thu Nov 26 01:00:00 PST 2026",
                "MaxAssignments": "3",
                "RequesterAnnotation": "BatchId:5123456;OriginalHitTemplateId:928390;",
                "AssignmentDurationInSeconds": "3600",
                "AutoApprovalDelayInSeconds": "259200",
                "Expiration": "Thu Dec 03 01:00:00 PST 2026",
                "NumberOfSimilarHITs": "",
                "LifetimeInSeconds": "",
                "AssignmentId": mturk_id("assignment", hit["task_id"], s["worker"]),
                "WorkerId": "A" + mturk_id("worker", s["worker"], length=13),
                "AssignmentStatus": "Submitted",
                "AcceptTime": "Thu Nov 26 01:10:00 PST 2026",
                "SubmitTime": "Thu Nov 26 01:12:00 PST 2026",
                "AutoApprovalTime": "Sun Nov 29 01:12:00 PST 2026",
                "ApprovalTime": "",
                "RejectionTime": "",
                "RequesterFeedback": "",
                "WorkTimeInSeconds": "120",
                "LifetimeApprovalRate": "0% (0/0)",
                "Last30DaysApprovalRate": "0% (0/0)",
                "Last7DaysApprovalRate": "0% (0/0)",
                **{f"Input.{k}": v for k, v in hit.items()},
                **answers,
                "Approve": "",
                "Reject": "",
            }
        )
    header = HIT_COLUMNS + [f"Input.{k}" for k in submissions[0]["input"]] + sorted(answer_columns)
    out = io.StringIO()
    writer = csv.DictWriter(out, header + ["Approve", "Reject"], quoting=csv.QUOTE_ALL, lineterminator="\r\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def planned_answer(worker: str, item_id: str, item: dict) -> int:
    """The scripted answers; on control items ann and ben are right and cat is wrong (both of cat's assignments
    fail)."""
    if item["role"] == "control":
        return -1 if worker == "cat" else item["gold"]
    return scripted(worker, item_id, item["gold"], item["sentences"])


def test_each_mturk_shape_imports_every_answer(dataset, browser, tmp_path, capsys):  # noqa: F811
    tasks = tmp_path / "tasks"
    assert cli("annotate", "export", dataset, "--config", "intruder-wikipedia", "--split", "train",
               "--documents", "6", "--per-task", "4", "--workers", "3", "--out", tasks) == 0  # fmt: skip
    key = json.loads((tasks / "key.json").read_text())
    template = (tasks / "mturk" / "template.html").read_text()
    hits = list(csv.DictReader(io.StringIO((tasks / "mturk" / "input.csv").read_text())))
    submissions = []
    for hit in hits:
        items = json.loads(hit["items"])
        for worker in WORKERS:
            open_hit(browser, tmp_path, template, hit)
            planned = [planned_answer(worker, i["item_id"], key["items"][i["item_id"]]) for i in items]
            form = answer_hit(browser, planned)
            submissions.append({"input": hit, "worker": worker, "form": form, "planned": planned})
    # what crowd-form gives: the radio group as {value: checked} and the time on each item
    first = json.loads(submissions[0]["form"]["taskAnswers"])
    assert isinstance(first, list) and len(first) == 1
    assert first[0]["answer_1"][str(submissions[0]["planned"][0])] is True
    assert sum(first[0]["answer_1"].values()) == 1 and float(first[0]["seconds_1"]) >= 0

    expected_rows = {
        (s["input"]["task_id"], item["item_id"], "A" + mturk_id("worker", s["worker"], length=13), answer)
        for s in submissions
        for item, answer in zip(json.loads(s["input"]["items"]), s["planned"], strict=True)
    }
    imported = {}
    for shape in ("plain", "flatten", "taskAnswers"):
        results = tmp_path / f"Batch_5123456_batch_results-{shape}.csv"
        results.write_text(results_csv(submissions, shape))
        study = tmp_path / f"study-{shape}"
        assert cli("annotate", "import", results, "--format", "mturk", "--key", tasks, "--out", study) == 0
        summary = json.loads((study / "import.json").read_text())
        assert summary["answers_read"] == summary["answers_kept"] == 3 * 8, shape
        answers = [json.loads(line) for line in (study / "answers.jsonl").read_text().splitlines()]
        assert {(a["task_id"], a["item_id"], a["worker"], a["answer"]) for a in answers} == expected_rows
        assert all(
            a["hit_id"] and a["assignment_id"] and a["assignment_status"] == "Submitted" for a in answers
        )
        assert all(a["seconds"] is not None and a["seconds"] < 60 for a in answers)
        imported[shape] = answers
    assert imported["plain"] == imported["flatten"] == imported["taskAnswers"]

    # the report's figures, computed here from the planned answers (3 annotators, 2 must agree)
    study = tmp_path / "study-flatten"
    assert cli("annotate", "report", study, "--min-agreement", "2") == 0
    report = json.loads((study / "report.json").read_text())
    by_item = {}
    for s in submissions:
        for item, answer in zip(json.loads(s["input"]["items"]), s["planned"], strict=True):
            if key["items"][item["item_id"]]["role"] == "test":
                by_item.setdefault(item["item_id"], {})[s["worker"]] = answer
    expected = expected_intruder(key, by_item, 2)
    assert report["documents"] == 6 and report["annotators"] == 3
    assert report["annotators_per_document"] == {"min": 3, "median": 3, "max": 3}
    assert report["kept"]["documents"] == expected["kept"]
    assert report["human_accuracy"] == expected["accuracy"] and report["human_f1"] == expected["f1"]
    assert report["krippendorff_alpha"] == pytest.approx(
        alpha_nominal([list(v.values()) for v in by_item.values()]), abs=1e-4
    )
    for worker in WORKERS:
        given = [(iid, v[worker]) for iid, v in by_item.items()]
        right = sum(answer == key["items"][iid]["gold"] for iid, answer in given) / len(given)
        row = report["per_annotator"]["A" + mturk_id("worker", worker, length=13)]
        assert row["judgements"] == 6 and row["accuracy"] == round(right, 4)
    seconds = [a["seconds"] for a in imported["flatten"]]
    assert report["mean_seconds"] == pytest.approx(statistics.fmean(seconds), abs=1e-3)
    assert report["median_seconds"] == pytest.approx(statistics.median(seconds), abs=1e-3)
    assert report["control_accuracy"] == round(4 / 6, 4)  # ann and ben right on both controls, cat wrong

    # review: cat's two assignments fail their control item and are rejected with a reason, the rest approved
    capsys.readouterr()
    reviewed = tmp_path / "reviewed.csv"
    # the browser answers in fractions of a second, below any reading floor: the floor is off here and tested
    # in test_crowd_study.py
    assert cli("annotate", "review", study, "--out", reviewed, "--min-seconds", "0") == 0
    assert "4 to approve, 2 to reject" in capsys.readouterr().out
    original = list(
        csv.DictReader(io.StringIO((tmp_path / "Batch_5123456_batch_results-flatten.csv").read_text()))
    )
    rows = list(csv.DictReader(io.StringIO(reviewed.read_text())))
    assert [r["AssignmentId"] for r in rows] == [r["AssignmentId"] for r in original]
    assert list(rows[0]) == list(original[0])  # MTurk's columns, in MTurk's order
    cat = "A" + mturk_id("worker", "cat", length=13)
    for row, before in zip(rows, original, strict=True):
        assert {k: v for k, v in row.items() if k not in ("Approve", "Reject")} == {
            k: v for k, v in before.items() if k not in ("Approve", "Reject")
        }
        if row["WorkerId"] == cat:
            assert row["Approve"] == "" and row["Reject"].startswith("Wrong answer on 1 of 1 check documents")
        else:
            assert row["Approve"] == "x" and row["Reject"] == ""
    # --exclude-failing leaves out cat's failed assignments only
    assert cli("annotate", "import", tmp_path / "Batch_5123456_batch_results-taskAnswers.csv", "--format", "mturk",
               "--key", tasks, "--out", tmp_path / "excluded", "--exclude-failing") == 0  # fmt: skip
    summary = json.loads((tmp_path / "excluded" / "import.json").read_text())
    assert summary["answers_kept"] == 16 and summary["rejected"] == {"excluded_assignment": 8}
    assert sorted(summary["excluded_assignments"]) == sorted(
        mturk_id("assignment", hit["task_id"], "cat") for hit in hits
    )


def test_results_without_answers_stop_with_one_line(dataset, tmp_path, capsys):  # noqa: F811
    tasks = tmp_path / "tasks"
    assert cli("annotate", "export", dataset, "--config", "intruder-wikipedia", "--split", "train",
               "--documents", "3", "--per-task", "4", "--out", tasks) == 0  # fmt: skip
    hit = next(csv.DictReader(io.StringIO((tasks / "mturk" / "input.csv").read_text())))
    submission = {"input": hit, "worker": "ann", "form": {"plain": {"comment": "hello"}}}
    results = tmp_path / "results.csv"
    results.write_text(results_csv([submission], "plain"))
    capsys.readouterr()
    assert (
        cli("annotate", "import", results, "--format", "mturk", "--key", tasks, "--out", tmp_path / "s") == 2
    )
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "no answers kept (missing_answer: 4)" in err
    assert (
        "expected: Answer.answer_<n>, Answer.answer_<n>.<value>, Answer.taskAnswers; found: Answer.comment"
        in err
    )
    assert not (tmp_path / "s" / "answers.jsonl").exists()


def test_hit_times_each_item_not_since_page_load(dataset, browser, tmp_path):  # noqa: F811
    """seconds_<n> is the time spent on item n (from the previous answer), paused while the page is hidden."""
    from selenium.webdriver.common.by import By

    tasks = tmp_path / "tasks"
    assert cli("annotate", "export", dataset, "--config", "intruder-wikipedia", "--split", "train",
               "--documents", "3", "--per-task", "4", "--out", tasks) == 0  # fmt: skip
    template = (tasks / "mturk" / "template.html").read_text()
    hit = next(csv.DictReader(io.StringIO((tasks / "mturk" / "input.csv").read_text())))
    open_hit(browser, tmp_path, template, hit)

    def choose(slot: int, value: str = "-1") -> None:
        browser.find_element(By.CSS_SELECTOR, f"input[name='answer_{slot}'][value='{value}']").click()

    def visibility(state: str) -> None:
        browser.execute_script(
            "Object.defineProperty(document, 'visibilityState', {configurable: true, get: function () {"
            f" return '{state}'; }}}});"
            "document.dispatchEvent(new Event('visibilitychange'));"
        )

    def seconds() -> list[float]:
        return [
            float(browser.find_element(By.NAME, f"seconds_{slot}").get_attribute("value") or "nan")
            for slot in range(1, 5)
        ]

    # one answer every 2 s (since page load that would read 2, 4, 6 and, with 3 s hidden, 11 s); the bounds leave
    # up to 1.5 s for a slow (loaded) browser and never reach what a clock from page load would give
    time.sleep(2.0)
    choose(1)
    time.sleep(2.0)
    choose(2)
    time.sleep(2.0)
    choose(3)
    visibility("hidden")  # the worker switches to another tab for 3 s
    time.sleep(3.0)
    visibility("visible")
    time.sleep(2.0)
    choose(4)
    before = seconds()
    assert 2.0 <= before[0] <= 3.9 and all(1.9 <= s <= 3.5 for s in before[1:]), before
    time.sleep(1.0)
    choose(1, "2")  # a change of mind on item 1 adds the time since the previous answer to item 1
    after = seconds()
    assert 0.9 <= after[0] - before[0] <= 2.5 and after[1:] == before[1:], (before, after)


def test_hit_practice_items_give_feedback_and_are_never_submitted(dataset, browser, tmp_path):  # noqa: F811
    """--practice N: the HIT shows N practice items above the task; a choice shows the right answer at once,
    and the submitted form (each crowd-form shape) holds the study's answers only, which import as usual."""
    from selenium.webdriver.common.by import By

    tasks = tmp_path / "tasks"
    assert cli("annotate", "export", dataset, "--config", "intruder-wikipedia", "--split", "test",
               "--documents", "2", "--per-task", "3", "--workers", "1", "--practice", "2",
               "--out", tasks) == 0  # fmt: skip
    key = json.loads((tasks / "key.json").read_text())
    practice = json.loads((tasks / "tasks.json").read_text())["practice"]
    template = (tasks / "mturk" / "template.html").read_text()
    assert template.index("incoherent-instructions") < template.index("incoherent-practice")
    assert template.index("incoherent-practice") < template.index("<crowd-form")
    hit = next(csv.DictReader(io.StringIO((tasks / "mturk" / "input.csv").read_text())))
    open_hit(browser, tmp_path, template, hit)

    boxes = browser.find_elements(By.CSS_SELECTOR, "#incoherent-practice .doc.practice")
    assert len(boxes) == len(practice) == 2
    for slot, item in enumerate(practice, start=1):
        shown = [s.text for s in boxes[slot - 1].find_elements(By.CSS_SELECTOR, "span.opening, label")]
        assert shown[0] == "1. " + item["sentences"][0] and shown[-1] == "None of the above"
        assert browser.find_element(By.ID, f"practice-feedback-{slot}").text == ""  # nothing until a choice
    right = practice[0]["answer"]
    wrong = next(v for v in [-1, *range(1, len(practice[0]["sentences"]))] if v != right)
    label = {v: "None of the above" if v == -1 else f"sentence {v + 1}" for v in (right, wrong)}
    browser.find_element(By.CSS_SELECTOR, f"input[name='practice_1'][value='{wrong}']").click()
    feedback = browser.find_element(By.ID, "practice-feedback-1").text
    assert feedback == f"Your answer: {label[wrong]}. The right answer: {label[right]}."
    browser.find_element(By.CSS_SELECTOR, f"input[name='practice_1'][value='{right}']").click()
    feedback = browser.find_element(By.ID, "practice-feedback-1").text
    assert feedback == f"Your answer: {label[right]}. The right answer: {label[right]}. Well done."

    items = json.loads(hit["items"])
    planned = [key["items"][i["item_id"]]["gold"] for i in items]
    form = answer_hit(browser, planned)
    for shape in (json.loads(form["taskAnswers"])[0], form["flattened"], form["plain"]):
        assert not any(name.startswith("practice") for name in shape)
    results = tmp_path / "Batch_1_batch_results.csv"
    results.write_text(
        results_csv([{"input": hit, "worker": "ann", "form": form, "planned": planned}], "flatten")
    )
    study = tmp_path / "study"
    assert cli("annotate", "import", results, "--format", "mturk", "--key", tasks, "--out", study) == 0
    summary = json.loads((study / "import.json").read_text())
    assert summary["answers_read"] == summary["answers_kept"] == len(items)


def test_practice_text_holds_nothing_mturk_would_fill_in():
    """A practice sentence with ``${...}`` in it is escaped: MTurk fills in only the input CSV's columns."""
    from incoherent.annotation.mturk import fill_template, mturk_template

    practice = [
        {"item_id": "p1", "sentences": ["It costs ${price}.", "Then <b>this</b>.", "End."], "answer": -1}
    ]
    template = mturk_template("intruder", practice)
    assert "${price}" not in template and "<b>" not in template
    assert set(re.findall(r"\$\{(\w+)\}", template)) == {"export_id", "task_id", "items"}
    page = fill_template(template, {"export_id": "e", "task_id": "t", "items": "[]"})
    data = page.split('id="incoherent-practice-data">')[1].split("</script>")[0]
    assert json.loads(data)[0]["sentences"][0] == "It costs ${price}."


def test_pair_hit_and_its_practice_render_and_import(dataset, browser, tmp_path):  # noqa: F811
    """A shuffle (pair) study's HIT in the browser: each item shows Text A and Text B and two choices, the
    practice item gives feedback, and the submitted answers import."""
    from selenium.webdriver.common.by import By

    tasks = tmp_path / "tasks"
    assert cli("annotate", "export", dataset, "--config", "shuffle-wikipedia", "--per-k", "2", "--practice", "1",
               "--out", tasks) == 0  # fmt: skip
    key = json.loads((tasks / "key.json").read_text())
    practice = json.loads((tasks / "tasks.json").read_text())["practice"]
    hit = next(csv.DictReader(io.StringIO((tasks / "mturk" / "input.csv").read_text())))
    items = json.loads(hit["items"])
    open_hit(browser, tmp_path, (tasks / "mturk" / "template.html").read_text(), hit)
    boxes = browser.find_elements(By.CSS_SELECTOR, "#incoherent-items .doc")
    assert len(boxes) == len(items)
    for box, item in zip(boxes, items, strict=True):
        sides = box.find_elements(By.CSS_SELECTOR, ".pair > div")
        assert [s.find_element(By.TAG_NAME, "p").text for s in sides] == ["Text A", "Text B"]
        assert [s.find_elements(By.TAG_NAME, "p")[1].text for s in sides] == [
            " ".join(t) for t in item["texts"]
        ]
        assert [c.text for c in box.find_elements(By.TAG_NAME, "label")] == [
            "Text A is the original", "Text B is the original",
        ]  # fmt: skip
    right = practice[0]["answer"]
    browser.find_element(By.CSS_SELECTOR, f"input[name='practice_1'][value='{1 - right}']").click()
    name = {0: "Text A", 1: "Text B"}
    assert browser.find_element(By.ID, "practice-feedback-1").text == (
        f"Your answer: {name[1 - right]}. The right answer: {name[right]}."
    )
    planned = [key["items"][i["item_id"]]["gold"] for i in items]
    form = answer_hit(browser, planned)
    results = tmp_path / "Batch_2_batch_results.csv"
    results.write_text(
        results_csv([{"input": hit, "worker": "ann", "form": form, "planned": planned}], "taskAnswers")
    )
    study = tmp_path / "study"
    assert cli("annotate", "import", results, "--format", "mturk", "--key", tasks, "--out", study) == 0
    answers = [json.loads(line) for line in (study / "answers.jsonl").read_text().splitlines()]
    assert {a["item_id"]: a["answer"] for a in answers} == {
        i["item_id"]: answer for i, answer in zip(items, planned, strict=True)
    }
