"""The in-lab app (`annotate serve`) under careless and hostile use, with Flask's test client and a real server on
127.0.0.1: torn and bad answer lines, a full disk, links, foreign origins, large bodies, odd seconds, answers out
of order and corrections, per-annotator order, practice items and instructions. The browser cases (Back button,
CSRF from another origin) are in test_annotate_browser.py."""

from __future__ import annotations

import errno
import json
import os
import shutil
import socket
import time
from collections import Counter
from pathlib import Path
from xml.etree import ElementTree

import pytest

from tests.annotation.lab_client import ORIGIN, LabSession, Server, form_of
from tests.annotation.test_annotate import dataset  # noqa: F401 - the module's private copy of the sample build
from tests.conftest import run_cli


def cli(*args) -> int:
    return run_cli(*args, beam=[])


def export(dataset: Path, out: Path, *extra) -> dict:  # noqa: F811
    assert cli("annotate", "export", dataset, "--config", "intruder-wikipedia", "--split", "train",
               "--documents", "3", "--per-task", "2", "--out", out, *extra) == 0  # fmt: skip
    return json.loads((out / "tasks.json").read_text())


@pytest.fixture
def tasks(dataset, tmp_path):  # noqa: F811
    export(dataset, tmp_path / "tasks")
    return tmp_path / "tasks"


def app_of(tasks: Path, **kwargs):
    from incoherent.annotation.webapp import create_app

    return create_app(str(tasks), **kwargs)


def lines(path: Path) -> list[dict]:
    """Every line of an answers file as strict JSON (NaN or Infinity would raise)."""

    def refuse(name):
        raise AssertionError(f"bare {name} in {path}")

    return [json.loads(line, parse_constant=refuse) for line in path.read_text().splitlines()]


def first_choice(fields) -> int:
    return -1


# ------------------------------------------------------------------------------------- answers file


def test_torn_last_line_is_fenced_and_the_answer_counts(tasks):
    app = app_of(tasks)
    lab = LabSession(app, "ann")
    assert lab.answer(first_choice).status_code == 303
    path = tasks / "answers" / "ann.jsonl"
    whole = path.read_bytes()
    path.write_bytes(whole + whole[:40])  # a crash mid-write: half a line, no newline
    page = lab.page()
    assert "item 2 of" in page and "1 unreadable line(s)" in page
    assert lab.answer(lambda f: 1).status_code == 303
    raw = path.read_bytes().split(b"\n")
    assert raw[1] == whole[:40] and raw[-1] == b""  # the torn tail is fenced onto its own line, kept as is
    assert [json.loads(r)["answer"] for r in (raw[0], raw[2])] == [-1, 1]
    assert "item 3 of" in lab.page()  # progress moved
    study = tasks.parent / "study"
    assert (
        cli("annotate", "import", tasks / "answers", "--format", "lab", "--key", tasks, "--out", study) == 0
    )
    summary = json.loads((study / "import.json").read_text())
    assert summary["answers_kept"] == 2 and summary["rejected"] == {"bad_json": 1}


def test_full_disk_gives_a_clear_page_and_keeps_earlier_answers(tasks, monkeypatch, caplog):
    app = app_of(tasks)
    lab = LabSession(app, "ann")
    assert lab.answer(first_choice).status_code == 303
    path = tasks / "answers" / "ann.jsonl"
    before = path.read_bytes()
    real_write = os.write

    def full_disk(fd, data):
        if os.readlink(f"/proc/self/fd/{fd}") == str(path):
            real_write(fd, bytes(data)[:17])  # part of the line reaches the disk, then the disk is full
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", full_disk)
    response = lab.answer(first_choice)
    monkeypatch.setattr(os, "write", real_write)
    page = response.get_data(as_text=True)
    assert (
        response.status_code == 507
        and "No space left on device" in page
        and "earlier answers are safe" in page
    )
    assert "Traceback" not in page and "Traceback" not in caplog.text
    assert path.read_bytes() == before  # the partial line was rolled back
    assert "item 2 of" in lab.page()
    assert lab.answer(first_choice).status_code == 303  # space again: the answer is saved
    assert [r["answer"] for r in lines(path)] == [-1, -1]


@pytest.mark.parametrize(
    "bad",
    [
        b"\xff\xfe not utf-8\n",
        b"[" * 200_000 + b"\n",
        b'{"answer": ' + b"9" * 5000 + b"}\n",
        b"[1, 2]\n",
        b"17\n",
    ],
    ids=["non-utf8", "deep", "huge-int", "list", "number"],
)
def test_bad_lines_are_skipped_and_counted(tasks, bad, caplog):
    app = app_of(tasks)
    lab = LabSession(app, "ann")
    assert lab.answer(first_choice).status_code == 303
    path = tasks / "answers" / "ann.jsonl"
    path.write_bytes(path.read_bytes() + bad)
    page = lab.page()
    assert "item 2 of" in page and "1 unreadable line(s) of your answers file skipped" in page
    assert lab.answer(first_choice).status_code == 303
    assert "item 3 of" in lab.page()
    assert "1 unreadable lines skipped" in caplog.text


def test_answers_are_never_written_through_links(tasks, tmp_path, capsys):
    from incoherent.schemas.records import InputError

    outside = tmp_path / "outside.jsonl"
    outside.write_text("precious\n")
    answers = tasks / "answers"
    answers.mkdir(exist_ok=True)
    (answers / "ann.jsonl").symlink_to(outside)
    with pytest.raises(InputError, match="ann.jsonl is a symbolic link"):
        app_of(tasks)
    assert cli("annotate", "serve", tasks, "--port", "0") == 2
    assert "is a symbolic link" in capsys.readouterr().err
    (answers / "ann.jsonl").unlink()
    app = app_of(tasks)
    lab = LabSession(app, "ann")
    action, fields = form_of(lab.page())
    (answers / "ann.jsonl").symlink_to(outside)  # made while the server runs
    response = lab.post(action, {**fields, "answer": -1})
    assert response.status_code == 500 and "symbolic link" in response.get_data(as_text=True)
    assert "symbolic link" in lab.page()  # reading it is refused too
    assert outside.read_text() == "precious\n"
    (answers / "ann.jsonl").unlink()
    shutil.rmtree(answers)
    (tasks / "answers").symlink_to(tmp_path)  # the whole folder a link
    with pytest.raises(InputError, match="answers is a symbolic link"):
        app_of(tasks)


def test_seconds_that_are_not_a_time_are_stored_as_unknown(tasks):
    lab = LabSession(app_of(tasks), "ann")
    posted = ["nan", "inf", "-3", "-inf", "1e400", "abc", "1e9"]
    while "answer-form" in lab.page() and posted:
        assert lab.answer(first_choice, seconds=posted.pop(0)).status_code == 303
    got = [r["seconds"] for r in lines(tasks / "answers" / "ann.jsonl")]
    assert len(got) >= 4 and all(s is None for s in got[:4])
    lab = LabSession(app_of(tasks), "ben")
    assert lab.answer(first_choice, seconds="1e9").status_code == 303
    assert lines(tasks / "answers" / "ben.jsonl")[0]["seconds"] == 86400.0  # capped at a day


# ------------------------------------------------------------------------------------------ origin


def test_posts_from_another_origin_or_without_the_token_are_refused(tasks):
    app = app_of(tasks)
    lab = LabSession(app, "ann")
    action, fields = form_of(lab.page())
    path = tasks / "answers" / "ann.jsonl"
    form = {**fields, "answer": -1, "seconds": 1}
    refused = [
        lab.post(action, form, Origin="http://127.0.0.2:8000"),  # another origin
        lab.post(action, form, Origin="null"),  # a sandboxed frame or file:// page
        lab.client.post(action, data=form),  # neither Origin nor Referer
        lab.client.post(action, data=form, headers={"Referer": "http://evil.example/page"}),
        lab.post(action, {**form, "csrf": "forged"}),  # the right origin, the wrong token
        lab.post(action, {k: v for k, v in form.items() if k != "csrf"}),
        lab.post(action, form, Host="rebound.example", Origin="http://rebound.example"),  # DNS rebinding
    ]
    assert [r.status_code for r in refused] == [403] * len(refused)
    assert "nothing was saved" in refused[0].get_data(as_text=True)
    assert not path.exists()
    other = LabSession(app, "ben")  # another browser cannot answer for ann, even with its own token
    _, theirs = form_of(other.page())
    assert other.post(action, {**form, "csrf": theirs["csrf"]}).status_code == 302  # to the start page
    assert not path.exists()
    same_page = lab.client.post(action, data=form, headers={"Referer": ORIGIN + "/a/ann/item/1"})
    assert same_page.status_code == 303 and len(lines(path)) == 1  # Referer of the app's own page
    reflected = lab.client.get("/?error=<script>alert(1)</script>").get_data(as_text=True)
    assert "<script>alert(1)" not in reflected and "&lt;script&gt;alert(1)" in reflected
    response = lab.client.get("/")
    assert response.headers["X-Frame-Options"] == "DENY" and response.headers["Cache-Control"] == "no-store"
    assert "frame-ancestors 'none'" in response.headers["Content-Security-Policy"]


def test_large_bodies_are_refused(tasks):
    lab = LabSession(app_of(tasks), "ann")
    action, fields = form_of(lab.page())
    start = time.perf_counter()
    response = lab.post(action, {**fields, "answer": -1, "pad": "x" * (8 << 20)})
    assert response.status_code == 413 and time.perf_counter() - start < 5
    assert "nothing was saved" in response.get_data(as_text=True)
    assert not (tasks / "answers" / "ann.jsonl").exists()


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_real_server_refuses_a_huge_body_at_once(tasks):
    """A POST announcing 1 GB gets 413 before its body is read; 64 MB actually sent do not grow the server."""
    server = Server(tasks)
    try:
        before = _rss_kib(server.process.pid)
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as conn:
            conn.sendall(
                b"POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                b"Content-Length: 1000000000\r\n\r\n" + b"a" * 4096
            )
            start = time.perf_counter()
            reply = conn.recv(4096)
            assert reply.startswith(b"HTTP/1.1 413") and time.perf_counter() - start < 5
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as conn:
            conn.sendall(b"POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n")
            chunk = b"%x\r\n%s\r\n" % (1 << 20, b"a" * (1 << 20))
            try:
                for _ in range(64):
                    conn.sendall(chunk)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the server closed the connection once the cap was passed
            conn.settimeout(5)
            try:
                reply = conn.recv(4096)
            except (ConnectionResetError, TimeoutError):
                reply = b""
            assert reply == b"" or reply.startswith(b"HTTP/1.1 413")
        assert _rss_kib(server.process.pid) - before < 20 * 1024
    finally:
        server.stop()


# ------------------------------------------------------------------------------------------ serve CLI


def test_serve_options_give_one_line(tasks, tmp_path, capsys):
    for host, expected in (("999.1.1.1", "--host: '999.1.1.1' is not an IP address"), ("a b", "--host:")):
        assert cli("annotate", "serve", tasks, "--host", host, "--port", "0") == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith(f"error: {expected}") and "\n" not in err and "Traceback" not in err
    afile = tmp_path / "answers.txt"
    afile.write_text("x")
    assert cli("annotate", "serve", tasks, "--answers", afile, "--port", "0") == 2
    err = capsys.readouterr().err.strip()
    assert err == f"error: --answers: {afile} is a file, not a folder"
    assert cli("annotate", "serve", tmp_path / "nowhere", "--port", "0") == 2
    assert "tasks.json: no such file" in capsys.readouterr().err
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    try:
        assert cli("annotate", "serve", tasks, "--port", busy.getsockname()[1]) == 2
        err = capsys.readouterr().err
        assert "cannot listen on 127.0.0.1" in err and "Address already in use" in err
    finally:
        busy.close()


# ------------------------------------------------------------------------------ order and corrections


def test_only_the_expected_item_or_a_correction_is_accepted(tasks):
    app = app_of(tasks)
    lab = LabSession(app, "ann")
    first_action, first = form_of(lab.page())
    assert lab.post(first_action, {**first, "answer": 1, "seconds": 2}).status_code == 303
    # the page of item 1 submitted again (Back, a second tab): not saved
    again = lab.post(first_action, {**first, "answer": -1})
    assert again.status_code == 409 and "nothing was saved" in again.get_data(as_text=True)
    second_action, second = form_of(lab.page())
    assert second_action.endswith("/item/2")
    # an item further on, or item 2's fields posted to item 1's address: not saved
    assert lab.post(second_action.replace("/item/2", "/item/3"), {**second, "answer": -1}).status_code == 409
    assert lab.post(first_action, {**second, "answer": -1}).status_code == 409
    path = tasks / "answers" / "ann.jsonl"
    assert len(lines(path)) == 1
    # the correction: item 1's page shows the earlier answer and a form marked as a correction
    review = lab.page(first_action)
    assert 'id="previous">sentence 2<' in review and "Change answer" in review
    _, fields = form_of(review)
    assert fields["correction"] == "1"
    assert lab.post(first_action, {**fields, "answer": -1, "seconds": 3}).status_code == 303
    history = lines(path)
    assert [(r["item_id"], r["answer"], r.get("correction")) for r in history] == [
        (first["item_id"], 1, None),
        (first["item_id"], -1, True),
    ]
    assert "item 2 of" in lab.page()  # back to where the annotator was
    lab.answer_all(first_choice)
    assert "items answered" in lab.page()
    review = lab.page(first_action)  # a change after the last item, from the review link of the end page
    assert 'id="previous">None of the above<' in review and "go back to the end" in review
    _, fields = form_of(review)
    assert lab.post(first_action, {**fields, "answer": 2}).status_code == 303
    assert "items answered" in lab.page()
    study = tasks.parent / "study"
    assert (
        cli("annotate", "import", tasks / "answers", "--format", "lab", "--key", tasks, "--out", study) == 0
    )
    summary = json.loads((study / "import.json").read_text())
    assert summary["rejected"] == {"superseded": 2}
    kept = [json.loads(line) for line in (study / "answers.jsonl").read_text().splitlines()]
    assert [a["answer"] for a in kept if a["item_id"] == first["item_id"]] == [2]  # the latest answer counts
    assert cli("annotate", "report", study, "--min-agreement", "1") == 0


def test_order_is_drawn_per_annotator_and_controls_are_shown_once(dataset, tmp_path):  # noqa: F811
    from incoherent.annotation.tasks import annotator_sequence, intruder_tasks

    rows = [{"id": f"d{n}", "intruder_index": 2, "sentences": ["a", "b", "c"]} for n in range(8)]
    pool = [{"id": f"c{n}", "intruder_index": 1, "sentences": ["a", "b"]} for n in range(4)]
    dealt, _ = intruder_tasks(rows, pool, seed=0, per_task=3, controls=1)
    controls = [i["item_id"] for t in dealt for i in t["items"] if len(i["sentences"]) == 2]
    assert len(controls) == len(set(controls)) == 4  # dealt without repeats while the pool lasts
    doc = export(dataset, tmp_path / "tasks", "--per-task", "3")
    orders = {
        name: [i["item_id"] for _, i in annotator_sequence(doc, name)] for name in ("ann", "ben", "cat")
    }
    assert len({tuple(o) for o in orders.values()}) == 3
    assert all(sorted(o) == sorted(orders["ann"]) and len(set(o)) == len(o) for o in orders.values())
    assert orders["ann"] == [i["item_id"] for _, i in annotator_sequence(json.loads(json.dumps(doc)), "ann")]
    # the app shows that order
    lab = LabSession(app_of(tmp_path / "tasks"), "ben")
    shown = []
    while "answer-form" in lab.page():
        shown.append(form_of(lab.page())[1]["item_id"])
        assert lab.answer(first_choice).status_code == 303
    assert shown == orders["ben"]
    # more tasks than controls: a control dealt to two tasks is shown once to each annotator
    many = {
        "seed": 0,
        "tasks": [{"task_id": f"t{n}", "items": [{"item_id": "c"}, {"item_id": f"d{n}"}]} for n in range(3)],
    }
    assert sorted(i["item_id"] for _, i in annotator_sequence(many, "ann")) == ["c", "d0", "d1", "d2"]


def test_shuffle_export_keeps_documents_distinct_and_mixes_k(dataset, tmp_path):  # noqa: F811
    out = tmp_path / "pairs"
    assert cli("annotate", "export", dataset, "--config", "shuffle-wikipedia", "--per-k", "4", "--per-task", "4",
               "--practice", "1", "--out", out) == 0  # fmt: skip
    key = json.loads((out / "key.json").read_text())
    docs = [i["id"] for i in key["items"].values() if i["role"] == "test"]
    assert len(docs) == len(set(docs)) == 8
    assert Counter(i["block_size"] for i in key["items"].values() if i["role"] == "test") == {1: 4, 3: 4}
    controls = [i["id"] for i in key["items"].values() if i["role"] == "control"]  # a check pair per task
    assert len(controls) == len(key["tasks"]) == 3 and not set(controls) & set(docs)
    doc = json.loads((out / "tasks.json").read_text())
    per_task = [sorted({i["block_size"] for i in t["items"]}) for t in doc["tasks"]]
    assert any(ks == [1, 3] for ks in per_task)  # not grouped by k
    # the pair practice item (a document of the split not under study) and its feedback
    (practice,) = doc["practice"]
    assert key["practice"][practice["item_id"]]["id"] not in docs
    lab = LabSession(app_of(out), "ann")
    action, fields = form_of(lab.page())
    assert fields["item_id"] == practice["item_id"] and action.endswith("/practice/1")
    assert lab.post(action, {**fields, "answer": 1 - practice["answer"]}).status_code == 303
    feedback = lab.page(action)
    assert f'id="right">Text {"AB"[practice["answer"]]}<' in feedback and "Well done" not in feedback
    assert "item 1 of 11" in lab.page()  # 8 pairs and a check pair in each of the 3 tasks


# ------------------------------------------------------------------------------ practice, instructions


def test_practice_items_give_feedback_and_are_never_counted(dataset, tmp_path, capsys):  # noqa: F811
    doc = export(dataset, tmp_path / "tasks", "--practice", "2")
    assert len(doc["practice"]) == 2 and all(p["item_id"].startswith("p") for p in doc["practice"])
    key = json.loads((tmp_path / "tasks" / "key.json").read_text())
    assert not set(key["practice"]) & set(key["items"])
    studied = {i["id"] for i in key["items"].values()}  # documents under study and control documents
    assert all(p["id"] not in studied and p["role"] == "practice" for p in key["practice"].values())
    assert [key["practice"][p["item_id"]]["gold"] for p in doc["practice"]] == [
        p["answer"] for p in doc["practice"]
    ]
    lab = LabSession(app_of(tmp_path / "tasks"), "ann")
    page = lab.page()
    assert "practice item 1 of 2 (not counted)" in page
    right = doc["practice"][0]["answer"]
    action, fields = form_of(page)
    assert lab.post(action, {**fields, "answer": right}).status_code == 303
    feedback = lab.page(action)
    assert 'id="right">' in feedback and "Well done" in feedback
    page = lab.page()
    assert "practice item 2 of 2" in page
    wrong = 1 if doc["practice"][1]["answer"] != 1 else -1
    action, fields = form_of(page)
    assert lab.post(action, {**fields, "answer": wrong}).status_code == 303
    feedback = lab.page(action)
    assert "Well done" not in feedback and "Start the study" in feedback
    assert "item 1 of" in lab.page()
    lab.answer_all(first_choice)
    assert (tmp_path / "tasks" / "answers" / "practice" / "ann.jsonl").exists()
    study = tmp_path / "study"
    assert (
        cli(
            "annotate",
            "import",
            tmp_path / "tasks" / "answers",
            "--format",
            "lab",
            "--key",
            tmp_path / "tasks",
            "--out",
            study,
        )
        == 0
    )
    summary = json.loads((study / "import.json").read_text())
    assert summary["rejected"] == {} and summary["answers_kept"] == len(key["items"])
    practice = lines(tmp_path / "tasks" / "answers" / "practice" / "ann.jsonl")
    assert [r["right"] for r in practice] == [True, False] and all(r["practice"] for r in practice)
    practice_file = tmp_path / "tasks" / "answers" / "practice" / "ann.jsonl"
    capsys.readouterr()
    assert cli("annotate", "import", practice_file, "--format", "lab", "--key", tmp_path / "tasks",
               "--out", tmp_path / "s2") == 2  # fmt: skip
    assert capsys.readouterr().err.strip() == f"error: {practice_file}: no answers kept (practice: 2)"


def test_instructions_are_shown_everywhere_and_escaped(dataset, tmp_path, capsys):  # noqa: F811
    guide = tmp_path / "guide.md"
    guide.write_text(
        "# Our study\n\nRead **carefully**. <script>alert(1)</script> ${items} [x](javascript:alert(1))\n\nConsent: yes.\n"
    )
    out = tmp_path / "tasks"
    export(dataset, out, "--instructions", guide)
    start = LabSession(app_of(out), "ann").client.get("/").get_data(as_text=True)
    assert (
        "<h1>Our study</h1>" in start and "<strong>carefully</strong>" in start and "Consent: yes." in start
    )
    template = (out / "mturk" / "template.html").read_text()
    assert template.index("incoherent-instructions") < template.index("<crowd-form")
    block = template[: template.index("<crowd-form")]
    assert "&#36;{items}" in block and "${items}" not in block  # MTurk never substitutes inside the text
    config = (out / "labelstudio" / "config.xml").read_text()
    ls_tasks = json.loads((out / "labelstudio" / "tasks.json").read_text())
    assert 'value="$instructions"' in config and all(
        "carefully" in t["data"]["instructions"] for t in ls_tasks
    )
    tags = [element.tag for element in ElementTree.fromstring(config)]
    assert tags[0] == "HyperText" and "Choices" in tags  # the instructions first, then the task
    for html in (start, block, ls_tasks[0]["data"]["instructions"], (out / "instructions.html").read_text()):
        assert "<script>alert" not in html and "&lt;script&gt;" in html and 'href="javascript' not in html
    # the default: the task's wording and a worked example
    export(dataset, tmp_path / "default")
    start = LabSession(app_of(tmp_path / "default"), "ann").client.get("/").get_data(as_text=True)
    assert "Worked example" in start and "None of the above" in start
    assert "Worked example" in (tmp_path / "default" / "mturk" / "template.html").read_text()
    pairs = tmp_path / "pairs"
    assert (
        cli("annotate", "export", dataset, "--config", "shuffle-wikipedia", "--per-k", "1", "--out", pairs)
        == 0
    )
    assert "Text A" in (pairs / "instructions.html").read_text()
    capsys.readouterr()
    for practice, why in (
        ("-1", "--practice: must be 0..20, got -1"),
        ("20", "--practice: 20 practice items, but"),
    ):
        assert cli("annotate", "export", dataset, "--config", "intruder-wikipedia", "--split", "train",
                   "--documents", "3", "--out", tmp_path / "p", "--practice", practice) == 2  # fmt: skip
        assert capsys.readouterr().err.strip().startswith(f"error: {why}")
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"\xff\xfe")
    for path, why in ((bad, "not UTF-8 text"), (tmp_path / "none.md", "no such file")):
        assert (
            cli(
                "annotate",
                "export",
                dataset,
                "--config",
                "intruder-wikipedia",
                "--out",
                tmp_path / "x",
                "--instructions",
                path,
            )
            == 2
        )
        assert capsys.readouterr().err.strip() == f"error: --instructions: {path}: {why}"


@pytest.mark.e2e
def test_two_tabs_answering_at_once_store_one_answer(tasks, monkeypatch):
    """Eight tabs of one session send the expected item at the same moment (on a slow disk, where the answers
    file may change while it is read): one answer is stored."""
    import threading

    from incoherent.annotation.lab_store import AnswerStore

    slow_read = AnswerStore.records

    def records(self, path):
        found = slow_read(self, path)
        time.sleep(0.3)  # a slow disk: the file may change before the reader is done
        return found

    app = app_of(tasks)
    lab = LabSession(app, "ann")
    action, fields = form_of(lab.page())
    cookie = lab.client.get_cookie("incoherent_lab")
    tabs = []
    for _ in range(8):
        tab = app.test_client()
        tab.set_cookie("incoherent_lab", cookie.value)
        tabs.append(tab)
    barrier, codes = threading.Barrier(len(tabs)), []

    def send(tab):
        barrier.wait()
        codes.append(tab.post(action, data={**fields, "answer": -1}, headers={"Origin": ORIGIN}).status_code)

    monkeypatch.setattr(AnswerStore, "records", records)
    threads = [threading.Thread(target=send, args=(tab,)) for tab in tabs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(codes) == [303] + [409] * 7
    assert len(lines(tasks / "answers" / "ann.jsonl")) == 1
