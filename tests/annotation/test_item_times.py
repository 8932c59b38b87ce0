"""One rule for an item's seconds on both platforms (docs/annotation.md, "Item times"), in Debian's headless
chromium: the time of an item runs while its document is the one being worked on, summed over every visit and
every change of answer; time on the instructions and on practice items is no item's.

- MTurk: the first document's time starts at the last practice answer (or when the documents come into view),
  not at page load;
- the lab app: a reload, and a correction later, add to the item's time instead of starting it again;
- the lab app's practice feedback page goes on with Enter, as every other page does.
"""

from __future__ import annotations

import csv
import io
import json
import time

import pytest

from tests.annotation.lab_client import Server
from tests.annotation.test_annotate import dataset  # noqa: F401 - the module's private copy of the build
from tests.annotation.test_annotate_browser import (
    CHROMEDRIVER,
    CHROMIUM,
    browser,  # noqa: F401
    login,
    page_text,
    shown_item,
    wait_text,
)  # noqa: F401
from tests.annotation.test_mturk_results import open_hit
from tests.conftest import run_cli

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        not (CHROMIUM and CHROMEDRIVER),
        reason="no headless browser: install Debian's chromium and chromium-driver (.ci/run does) to run this test",
    ),
]


def export(dataset, tasks, *extra: str) -> dict:  # noqa: F811
    assert run_cli("annotate", "export", dataset, "--config", "intruder-wikipedia", "--split", "train",
                   "--documents", "3", "--per-task", "4", "--out", tasks, *extra, beam=[]) == 0  # fmt: skip
    return json.loads((tasks / "key.json").read_text())


def test_hit_practice_time_is_no_items_time(dataset, browser, tmp_path):  # noqa: F811
    """A worker spends 2 s on the practice item, then answers document 1 at once: document 1 took under a second
    (it used to carry the practice's 2 s, and the instructions' reading time)."""
    from selenium.webdriver.common.by import By

    tasks = tmp_path / "tasks"
    export(dataset, tasks, "--practice", "1")
    hit = next(csv.DictReader(io.StringIO((tasks / "mturk" / "input.csv").read_text())))
    open_hit(browser, tmp_path, (tasks / "mturk" / "template.html").read_text(), hit)
    time.sleep(2.0)
    browser.find_element(By.CSS_SELECTOR, "input[name='practice_1'][value='-1']").click()
    browser.find_element(By.CSS_SELECTOR, "input[name='answer_1'][value='-1']").click()
    seconds = float(browser.find_element(By.NAME, "seconds_1").get_attribute("value"))
    assert seconds < 1.0
    time.sleep(1.0)  # and a change of mind adds to the item's time
    browser.find_element(By.CSS_SELECTOR, "input[name='answer_1'][value='1']").click()
    assert float(browser.find_element(By.NAME, "seconds_1").get_attribute("value")) >= seconds + 1.0


def answers(tasks, name: str) -> list[dict]:
    return [json.loads(line) for line in (tasks / "answers" / f"{name}.jsonl").read_text().splitlines()]


def test_lab_time_survives_a_reload_and_a_correction_adds(dataset, browser, tmp_path):  # noqa: F811
    from selenium.webdriver.common.by import By

    tasks = tmp_path / "tasks"
    export(dataset, tasks)
    server = Server(tasks)
    try:
        login(browser, server.base, "eve")
        wait_text(browser, "item 1 of")
        first = shown_item(browser)
        time.sleep(1.2)
        browser.refresh()  # the time before the reload is kept
        wait_text(browser, "item 1 of")
        time.sleep(1.2)
        browser.find_element(By.ID, "choice-2").click()
        browser.find_element(By.ID, "submit").click()
        wait_text(browser, "item 2 of")
        browser.find_element(By.ID, "back").click()
        wait_text(browser, "You answered this item")
        time.sleep(1.2)
        browser.find_element(By.ID, "choice-none").click()
        browser.find_element(By.ID, "submit").click()
        wait_text(browser, "item 2 of")
    finally:
        server.stop()
    given, corrected = answers(tasks, "eve")
    assert given["item_id"] == corrected["item_id"] == first and corrected["correction"] is True
    assert 2.4 <= given["seconds"] < 10  # both visits before the answer
    assert corrected["seconds"] >= given["seconds"] + 1.2  # the correction's visit added
    study = tmp_path / "study"
    assert run_cli("annotate", "import", tasks / "answers", "--format", "lab", "--key", tasks, "--out", study,
                   beam=[]) == 0  # fmt: skip
    (kept,) = [json.loads(line) for line in (study / "answers.jsonl").read_text().splitlines()]
    assert kept["answer"] == -1 and kept["seconds"] == round(corrected["seconds"], 3)


def test_enter_goes_on_from_practice_feedback(dataset, browser, tmp_path):  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    tasks = tmp_path / "tasks"
    export(dataset, tasks, "--practice", "1")
    server = Server(tasks)
    try:
        login(browser, server.base, "kim")
        wait_text(browser, "practice item 1 of 1")
        body = browser.find_element(By.TAG_NAME, "body")
        body.send_keys("n")
        body.send_keys(Keys.ENTER)
        wait_text(browser, "The right answer")
        browser.find_element(By.TAG_NAME, "body").send_keys(Keys.ENTER)
        wait_text(browser, "item 1 of")
        assert "practice" not in page_text(browser).split("\n")[0]
    finally:
        server.stop()
