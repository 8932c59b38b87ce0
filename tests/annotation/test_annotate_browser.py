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
pytestmark = pytest.mark.skipif(
    not (CHROMIUM and CHROMEDRIVER),
    reason="no headless browser: install Debian's chromium and chromium-driver (.ci/run does) to run this test",
)


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

    from annotation.formats import fill_template

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
    shot = tmp_path / "hit.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 5000
    source = browser.page_source
    assert "gold" not in source and "control" not in source
    for item in key["items"].values():
        assert item["id"] not in source


def test_in_lab_session_resumes(dataset, browser, tmp_path):  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    tasks = tmp_path / "tasks"
    key = export(dataset, tasks)
    doc = json.loads((tasks / "tasks.json").read_text())
    sequence = [(t["task_id"], item) for t in doc["tasks"] for item in t["items"]]

    def wait_for(text: str) -> None:
        for _ in range(200):
            if text in (browser.execute_script("return document.body ? document.body.innerText : ''") or ""):
                return
            time.sleep(0.05)
        raise AssertionError(f"page never showed {text!r}")

    def log_in(base: str) -> None:
        browser.get(base + "/")
        browser.find_element(By.ID, "annotator").send_keys("ann")
        browser.find_element(By.ID, "start").click()

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
