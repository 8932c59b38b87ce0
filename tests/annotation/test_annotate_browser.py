"""The annotation pages in a real headless browser: Debian's ``chromium`` driven by Selenium through
``chromedriver`` (both from the system; nothing is downloaded at run time). CI installs them (``.ci/run``)."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import signal
import time
from pathlib import Path

import pytest

from tests.annotation.lab_client import Server
from tests.annotation.test_annotate import dataset  # noqa: F401 - the module's private copy of the sample build
from tests.conftest import run_cli

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
CHROMEDRIVER = shutil.which("chromedriver")
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        not (CHROMIUM and CHROMEDRIVER),
        reason="no headless browser: install Debian's chromium and chromium-driver (.ci/run does) to run this test",
    ),
]


@pytest.fixture(scope="module")
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1000,900",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(20)
    yield driver
    driver.quit()


def export(dataset: Path, out: Path) -> dict:  # noqa: F811
    assert run_cli("annotate", "export", dataset, "--config", "intruder-wikipedia", "--split", "train",
                   "--documents", "3", "--per-task", "4", "--out", out, beam=[]) == 0  # fmt: skip
    return json.loads((out / "key.json").read_text())


def test_mturk_template_renders_without_gold(dataset, browser, tmp_path):  # noqa: F811
    from selenium.webdriver.common.by import By

    from incoherent.annotation.mturk import fill_template

    tasks = tmp_path / "tasks"
    key = export(dataset, tasks)
    template = (tasks / "mturk" / "template.html").read_text()
    row = next(csv.DictReader(io.StringIO((tasks / "mturk" / "input.csv").read_text())))
    page = tmp_path / "hit.html"
    page.write_text("<!doctype html><meta charset='utf-8'>" + fill_template(template, row))
    browser.get(page.as_uri())
    items = json.loads(row["items"])
    boxes = browser.find_elements(By.CSS_SELECTOR, "#incoherent-items .doc")
    assert len(boxes) == len(items) == 4
    radios = browser.find_elements(By.CSS_SELECTOR, "input[type=radio][name=answer_1]")
    assert len(radios) == len(items[0]["sentences"])  # every non-opening sentence and None of the above
    assert items[0]["sentences"][0] in boxes[0].text and "None of the above" in boxes[0].text
    guide = browser.find_element(By.ID, "incoherent-instructions")  # the instructions, above the documents
    assert "Worked example" in guide.text and guide.location["y"] < boxes[0].location["y"]
    shot = tmp_path / "hit.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 5000
    source = browser.page_source
    assert "gold" not in source and "control" not in source
    for item in key["items"].values():
        assert item["id"] not in source


def page_text(browser) -> str:
    return browser.execute_script("return document.body ? document.body.innerText : ''") or ""


def wait_text(browser, text: str) -> None:
    for _ in range(200):
        if text in page_text(browser):
            return
        time.sleep(0.05)
    raise AssertionError(f"page never showed {text!r}: {page_text(browser)[:300]}")


def login(browser, base: str, name: str) -> None:
    from selenium.webdriver.common.by import By

    browser.delete_all_cookies()
    browser.get(base + "/")
    browser.find_element(By.ID, "annotator").send_keys(name)
    browser.find_element(By.ID, "start").click()


def test_in_lab_session_resumes(dataset, browser, tmp_path):  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    from incoherent.annotation.tasks import annotator_sequence

    tasks = tmp_path / "tasks"
    key = export(dataset, tasks)
    doc = json.loads((tasks / "tasks.json").read_text())
    sequence = annotator_sequence(doc, "ann")

    def wait_for(text: str) -> None:
        wait_text(browser, text)

    def log_in(base: str) -> None:
        login(browser, base, "ann")

    given = []
    server = Server(tasks)
    try:
        log_in(server.base)
        wait_for("item 1 of")
        assert not browser.find_elements(By.CSS_SELECTOR, "#sentence-1 input")  # the opening cannot be chosen
        assert "None of the above" in browser.find_element(By.ID, "answer-form").text
        # item 1: the mouse on sentence 2 and the Next button
        browser.find_element(By.ID, "choice-2").click()
        browser.find_element(By.ID, "submit").click()
        given.append(1)
        wait_for("item 2 of")
        # item 2: the keyboard, None of the above then Enter
        browser.find_element(By.TAG_NAME, "body").send_keys("n")
        browser.find_element(By.TAG_NAME, "body").send_keys(Keys.ENTER)
        given.append(-1)
        wait_for("item 3 of")
    finally:
        server.stop(signal.SIGKILL)  # a crash: nothing answered may be lost
    server = Server(tasks)
    try:
        browser.delete_all_cookies()  # the browser closed, a new server: log in again and resume at item 3
        log_in(server.base)
        wait_for("item 3 of")
        browser.refresh()
        wait_for("item 3 of")
        # item 3: the keyboard on the last sentence
        last = min(len(sequence[2][1]["sentences"]), 9)
        browser.find_element(By.TAG_NAME, "body").send_keys(str(last))
        browser.find_element(By.TAG_NAME, "body").send_keys(Keys.ENTER)
        given.append(last - 1)
        wait_for("item 4 of")
    finally:
        server.stop()
    lines = [json.loads(line) for line in (tasks / "answers" / "ann.jsonl").read_text().splitlines()]
    assert [(r["task_id"], r["item_id"], r["answer"]) for r in lines] == [
        (task_id, item["item_id"], answer) for (task_id, item), answer in zip(sequence, given, strict=False)
    ]
    assert all(r["annotator"] == "ann" and r["export_id"] == key["export_id"] for r in lines)
    assert all(isinstance(r["seconds"], float) and 0 < r["seconds"] < 120 for r in lines)
    assert os.path.getsize(tasks / "answers" / "ann.jsonl") > 0


def answer_lines(tasks: Path, name: str) -> list[dict]:
    path = tasks / "answers" / f"{name}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def shown_item(browser) -> str:
    from selenium.webdriver.common.by import By

    return browser.find_element(By.CSS_SELECTOR, "input[name=item_id]").get_attribute("value")


def test_back_button_never_submits_and_an_answer_can_be_corrected(dataset, browser, tmp_path):  # noqa: F811
    """Back after an answer shows the answered item with nothing chosen; Enter there saves nothing; choosing
    again is a correction, appended, and `import` keeps the latest answer."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    tasks = tmp_path / "tasks"
    export(dataset, tasks)
    server = Server(tasks)
    try:
        login(browser, server.base, "bob")
        wait_text(browser, "item 1 of")
        first = shown_item(browser)
        browser.find_element(By.ID, "choice-2").click()
        browser.find_element(By.ID, "submit").click()
        wait_text(browser, "item 2 of")
        second = shown_item(browser)
        browser.find_element(By.ID, "choice-none").click()  # chosen on item 2 but not sent
        browser.back()
        wait_text(browser, "You answered this item: sentence 2")
        assert shown_item(browser) == first
        checked = "return document.querySelectorAll('input[type=radio]:checked').length"
        assert browser.execute_script(checked) == 0  # no value restored by the browser
        browser.find_element(By.TAG_NAME, "body").send_keys(Keys.ENTER)  # Enter with nothing chosen
        time.sleep(0.5)
        assert "item 1 of" in page_text(browser) and len(answer_lines(tasks, "bob")) == 1
        browser.forward()
        wait_text(browser, "item 2 of")
        assert browser.execute_script(checked) == 0
        browser.refresh()  # reload never resubmits (POST-redirect-GET)
        wait_text(browser, "item 2 of")
        assert len(answer_lines(tasks, "bob")) == 1
        # the correction of item 1, reached with the page's own link
        browser.find_element(By.ID, "back").click()
        wait_text(browser, "You answered this item")
        browser.find_element(By.TAG_NAME, "body").send_keys("n")
        browser.find_element(By.ID, "submit").click()
        wait_text(browser, "item 2 of")  # back where the annotator was
        assert shown_item(browser) == second
        browser.find_element(By.ID, "choice-3").click()
        browser.find_element(By.ID, "submit").click()
        wait_text(browser, "item 3 of")
    finally:
        server.stop()
    history = answer_lines(tasks, "bob")
    assert [(r["item_id"], r["answer"], r.get("correction", False)) for r in history] == [
        (first, 1, False),
        (first, -1, True),
        (second, 2, False),
    ]
    study = tmp_path / "study"
    assert run_cli("annotate", "import", tasks / "answers", "--format", "lab", "--key", tasks, "--out", study, beam=[]) == 0  # fmt: skip
    kept = {
        a["item_id"]: a["answer"] for a in map(json.loads, (study / "answers.jsonl").read_text().splitlines())
    }
    assert kept == {first: -1, second: 2}


def test_order_per_annotator_and_practice_items(dataset, browser, tmp_path):  # noqa: F811
    """Two annotators see the items in two orders, each drawn from the seed and the name (the same on a second
    export); the practice item comes first, shows the right answer and is not counted."""
    from selenium.webdriver.common.by import By

    from incoherent.annotation.tasks import annotator_sequence

    tasks = tmp_path / "tasks"
    assert run_cli("annotate", "export", dataset, "--config", "intruder-wikipedia", "--split", "train",
                   "--documents", "4", "--per-task", "3", "--practice", "1", "--out", tasks, beam=[]) == 0  # fmt: skip
    doc = json.loads((tasks / "tasks.json").read_text())
    practice = doc["practice"][0]
    shown: dict[str, list[str]] = {}
    server = Server(tasks)
    try:
        for name in ("ann", "ben"):
            login(browser, server.base, name)
            wait_text(browser, "practice item 1 of 1 (not counted)")
            assert shown_item(browser) == practice["item_id"]
            browser.find_element(By.ID, "choice-none").click()
            browser.find_element(By.ID, "submit").click()
            wait_text(browser, "The right answer")
            right = "None of the above" if practice["answer"] == -1 else f"sentence {practice['answer'] + 1}"
            assert browser.find_element(By.ID, "right").text == right
            assert browser.find_element(By.ID, "given").text == "None of the above"
            browser.find_element(By.ID, "next").click()
            shown[name] = []
            for number in range(1, 4):
                wait_text(browser, f"item {number} of")
                shown[name].append(shown_item(browser))
                browser.find_element(By.ID, "choice-2").click()
                browser.find_element(By.ID, "submit").click()
            wait_text(browser, "item 4 of")
    finally:
        server.stop()
    expected = {name: [i["item_id"] for _, i in annotator_sequence(doc, name)][:3] for name in shown}
    assert shown == expected and shown["ann"] != shown["ben"]
    again = tmp_path / "again"  # the same seed: the same export, the same orders
    assert run_cli("annotate", "export", dataset, "--config", "intruder-wikipedia", "--split", "train",
                   "--documents", "4", "--per-task", "3", "--practice", "1", "--out", again, beam=[]) == 0  # fmt: skip
    redo = json.loads((again / "tasks.json").read_text())
    assert [i["item_id"] for _, i in annotator_sequence(redo, "ann")][:3] == shown["ann"]
    assert all(practice["item_id"] not in (r["item_id"] for r in answer_lines(tasks, n)) for n in shown)
    study = tmp_path / "study"
    assert run_cli("annotate", "import", tasks / "answers", "--format", "lab", "--key", tasks, "--out", study, beam=[]) == 0  # fmt: skip
    summary = json.loads((study / "import.json").read_text())
    assert summary["answers_kept"] == 6 and summary["rejected"] == {}


class Attacker:
    """A page on another origin that auto-submits a forged answer to the app (plain http.server, own thread)."""

    def __init__(self, host: str, target: str, fields: dict[str, str]):
        import html
        import http.server
        import threading

        inputs = "".join(
            f'<input type="hidden" name="{k}" value="{html.escape(v)}">' for k, v in fields.items()
        )
        body = (f'<!doctype html><form id="f" method="post" action="{html.escape(target)}">{inputs}</form>'
                '<script>document.getElementById("f").submit();</script>').encode()  # fmt: skip

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer((host, 0), Handler)
        self.url = f"http://{host}:{self.server.server_address[1]}/"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_cross_site_post_is_refused_and_the_real_answer_kept(dataset, browser, tmp_path):  # noqa: F811
    """An annotator logged in on 127.0.0.1:P1 visits pages on 127.0.0.1:P2 (same site, another origin: the
    session cookie is sent) and on 127.0.0.2 (another site) that auto-submit an answer for the item the app
    shows. Neither is stored; the annotator's own answer is."""
    from selenium.webdriver.common.by import By

    tasks = tmp_path / "tasks"
    export(dataset, tasks)
    server = Server(tasks)
    attackers = []
    try:
        login(browser, server.base, "eve")
        wait_text(browser, "item 1 of")
        item_id = shown_item(browser)
        task_id = browser.find_element(By.CSS_SELECTOR, "input[name=task_id]").get_attribute("value")
        forged = {"task_id": task_id, "item_id": item_id, "answer": "-1", "seconds": "1", "correction": "0",
                  "csrf": "guessed"}  # fmt: skip
        target = server.base + "/a/eve/item/1"
        for host in ("127.0.0.1", "127.0.0.2"):
            attacker = Attacker(host, target, forged)
            attackers.append(attacker)
            browser.get(attacker.url)
            wait_text(browser, "nothing was saved")
            assert browser.current_url.startswith(
                server.base
            )  # the forged POST reached the app and was refused
            assert answer_lines(tasks, "eve") == []
        browser.get(server.base + "/a/eve")
        wait_text(browser, "item 1 of")
        browser.find_element(By.ID, "choice-2").click()
        browser.find_element(By.ID, "submit").click()
        wait_text(browser, "item 2 of")
        browser.get(attackers[0].url)  # again, now as a correction of the answered item
        attackers[0].stop()
        wait_text(browser, "nothing was saved")
    finally:
        for attacker in attackers[1:]:
            attacker.stop()
        log = server.stop()
    assert [(r["item_id"], r["answer"]) for r in answer_lines(tasks, "eve")] == [(item_id, 1)]
    assert log.count("refused a POST") >= 2 and "Traceback" not in log
