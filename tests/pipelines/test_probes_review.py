"""``incoherent probes ... --review N``: the review page (HTML and markdown) from the command on an INSteD-format
JSONL of real text, its sampling by seed, its escaping and output rules, and the page in a real headless browser
(Debian's chromium through chromedriver): what a reader sees, and the keyboard alone to judge a probe."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from incoherent.corpora.probes.review import html_page, markdown, referents, sample
from incoherent.corpora.probes.rows import probe_document
from tests.conftest import run_cli
from tests.pipelines.test_probes_cli import insted_jsonl

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
CHROMEDRIVER = shutil.which("chromedriver")
SHOTS = os.environ.get("INCOHERENT_SCREENSHOTS")  # a folder to keep the browser test's screenshot in

# real sentences: Wikipedia leads (CC BY-SA) and a CNN story of samples/cnn; the intruder is sentence 1
DOCUMENTS = [
    ["Hanoi is the capital and second-most populous city of Vietnam.",
     "The regime he created lasted until 1974, making it one of the longest-lived dictatorships in modern Europe.",
     "The city lies on the banks of the Red River."],
    ["Rock 'n' roll in those days was sort of like hula hoops.",
     "Cash wore a trademark all-black stage wardrobe, which earned him the nickname \"Man in Black\".",
     "Freberg also was the voice of Beaver in Disney's \"Lady and the Tramp\" (1955)."],
    ["Madrid lies on the River Manzanares.",
     "It was the first <b>capital</b> of British East Africa & <script>alert(1)</script> before 1907.",
     "Its metropolitan area is home to 534,842 inhabitants at the 2022 census."],
]  # fmt: skip


# a Wikipedia lead about a man (wiki:Paavo Nurmi, its sentence 2 replaced by one of wiki:Cai Lun): the pronoun
# phenomena rely on the context's he/his, which the page highlights
PERSON = ["Paavo Johannes Nurmi was a Finnish middle-distance and long-distance runner.",
          "He was called the \"Flying Finn\" because he dominated distance running in the 1920s.",
          "He occupies a pivotal place in the history of paper due to his addition of pulp via tree bark and hemp "
          "ends which resulted in the large-scale manufacture and worldwide spread of paper.",
          "At his peak, Nurmi was undefeated for 121 races at distances from 800 m upwards."]  # fmt: skip


def rows() -> list[dict]:
    out = []
    for n, sentences in enumerate(DOCUMENTS):
        doc = {"id": f"w:{n}", "source": "w", "split": "test", "sentences": sentences, "intruder_index": 1}
        out += [
            r for r in probe_document(doc, ["past-to-future", "negation", "number"], 0) if isinstance(r, dict)
        ]
    doc = {"id": "w:nurmi", "source": "w", "split": "test", "sentences": PERSON, "intruder_index": 2}
    out += [r for r in probe_document(doc, ["gender", "animacy-down"], 0) if isinstance(r, dict)]
    return out


def by_phenomenon(n: int, seed: int) -> dict[str, list[dict]]:
    grouped: dict[str, list[dict]] = {}
    for row in rows():
        grouped.setdefault(row["phenomenon"], []).append(row)
    return {p: sample(g, n, seed) for p, g in grouped.items()}


def test_the_page_escapes_every_text_and_loads_nothing():
    page = html_page(by_phenomenon(5, 0), "Probe <review>", 0)
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;b&gt;capital&lt;/b&gt;" in page and "Probe &lt;review&gt;" in page
    assert "src=" not in page and "http" not in page.replace('http-equiv="Content-Security-Policy"', "")
    assert "default-src 'none'" in page
    assert "<del>lasted</del>" in page and "<ins>will last</ins>" in page
    md = markdown(by_phenomenon(5, 0), "Probe <review>", 0)
    assert "<script>" not in md and "~~lasted~~" in md and "**will last**" in md and "- [ ] grammatical" in md


def test_the_context_highlights_what_the_pronoun_probes_relied_on():
    sampled = by_phenomenon(5, 0)
    assert [r["probed_sentence"][:12] for r in sampled["gender"] + sampled["animacy-down"]] == [
        "She occupies",
        "It occupies ",
    ]
    gender = sampled["gender"][0]
    assert "referent" not in gender  # no column: computed from the row's document when the page is made
    spans = referents(gender)
    assert [(r["sentence"], r["start"]) for r in spans] == [(1, 0), (1, 40), (3, 3)]
    assert [PERSON[r["sentence"]][r["start"] : r["end"]] for r in spans] == ["He", "he", "his"]
    page = html_page(sampled, "Probe review", 0)
    assert page.count("<mark>He</mark> was called") == 2 and page.count("<mark>his</mark> peak") == 2
    assert "because <mark>he</mark> dominated" in page
    assert all(not referents(r) for p in ("past-to-future", "negation") for r in sampled[p])
    assert "number" not in sampled  # the 1 of *alert(1)* counts nothing (issue #50: was *alert(1,000)*)
    assert referents({**gender, "referent": [{"sentence": 0, "start": 0, "end": 5}]}) == [
        {"sentence": 0, "start": 0, "end": 5}
    ]  # a row that names its referent keeps it


def test_the_sample_is_fixed_by_the_seed():
    assert by_phenomenon(1, 0) == by_phenomenon(1, 0)
    picks = {seed: [r["id"] for r in by_phenomenon(1, seed)["past-to-future"]] for seed in range(8)}
    assert len({tuple(p) for p in picks.values()}) > 1  # another seed, another probe


def test_probes_review_writes_the_page_and_its_markdown(tmp_path):
    data = tmp_path / "insted.jsonl"
    insted_jsonl(data)
    out = tmp_path / "probes"
    assert (
        run_cli("probes", data, "--out", out, "--phenomena", "negation", "number", "--review", "3", beam=[])
        == 0
    )
    page = (out / "review" / "index.html").read_text(encoding="utf-8")
    md = (out / "review" / "review.md").read_text(encoding="utf-8")
    assert page.count("<article") == 6 and md.count("- [ ] right kind") == 6
    summary = json.loads((out / "run_summary.json").read_text())
    assert summary["review"] == {"negation": 3, "number": 3}
    assert (
        summary["probes"]["number"]["skips"]
        and sum(summary["probes"]["number"]["skips"].values()) == (summary["probes"]["number"]["no_site"])
    )
    moves = summary["probes"]["number"]["moves"]  # the mix of number's moves, in the summary and the card
    assert moves and sum(moves.values()) == summary["probes"]["number"]["probes"]
    from incoherent.corpora.card.probes import probes_section

    assert any(line.startswith("Number probes by move: ") for line in probes_section({}, [summary]))
    # a second run replaces a link planted at the page's path, never writing through it
    victim = tmp_path / "victim.html"
    victim.write_text("keep", encoding="utf-8")
    (out / "review" / "index.html").unlink()
    os.symlink(victim, out / "review" / "index.html")
    assert run_cli("probes", data, "--out", out, "--phenomena", "negation", "number", "--review", "3",
                   "--overwrite", beam=[]) == 0  # fmt: skip
    assert victim.read_text() == "keep" and not os.path.islink(out / "review" / "index.html")
    assert (out / "review" / "index.html").read_text(encoding="utf-8") == page  # same input, same page


def test_review_must_be_positive(tmp_path, capsys):
    data = tmp_path / "insted.jsonl"
    insted_jsonl(data)
    assert run_cli("probes", data, "--out", tmp_path / "p", "--review", "0", beam=[]) == 2
    assert "--review: must be >= 1" in capsys.readouterr().err


@pytest.mark.skipif(
    not (CHROMIUM and CHROMEDRIVER), reason="no headless browser (Debian's chromium and driver)"
)
def test_the_page_in_a_browser_with_the_keyboard_alone(tmp_path):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    path = tmp_path / "index.html"
    path.write_text(html_page(by_phenomenon(5, 0), "Probe review", 0), encoding="utf-8")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1000,1400",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    try:
        driver.set_page_load_timeout(20)
        driver.get(path.as_uri())
        articles = driver.find_elements(By.TAG_NAME, "article")
        assert len(articles) == len(rows())
        first = articles[0]
        assert first.find_element(By.TAG_NAME, "del").text and first.find_element(By.TAG_NAME, "ins").text
        assert "<script>" in driver.find_element(By.TAG_NAME, "main").text  # shown as text, never run
        assert driver.execute_script("return performance.getEntriesByType('resource').length") == 0
        gender = driver.find_element(By.CSS_SELECTOR, "article[data-phenomenon=gender]")
        marks = gender.find_elements(By.TAG_NAME, "mark")  # the context's he/his, drawn highlighted
        assert [m.text for m in marks] == ["He", "he", "his"]
        colour = driver.execute_script("return getComputedStyle(arguments[0]).backgroundColor", marks[0])
        assert colour == "rgb(255, 226, 122)"
        body = driver.find_element(By.TAG_NAME, "body")
        body.send_keys("j")  # to the first probe, then the next
        assert driver.switch_to.active_element.get_attribute("id") == "p1"
        body = driver.switch_to.active_element
        body.send_keys("j")
        assert driver.switch_to.active_element.get_attribute("id") == "p2"
        driver.switch_to.active_element.send_keys("k")
        assert driver.switch_to.active_element.get_attribute("id") == "p1"
        driver.switch_to.active_element.send_keys(Keys.TAB)  # into the first probe's checks
        checkbox = driver.switch_to.active_element
        assert checkbox.get_attribute("name") == "kind"
        checkbox.send_keys(Keys.SPACE)
        assert checkbox.is_selected()
        assert driver.find_element(By.ID, "progress").text.startswith("1 of ")
        for _ in range(4):  # grammatical, minimal, detectable, note
            driver.switch_to.active_element.send_keys(Keys.TAB)
        note = driver.switch_to.active_element
        assert note.tag_name == "textarea"
        note.send_keys("j stays text here")
        assert note.get_attribute("value") == "j stays text here"
        outline = driver.execute_script("return getComputedStyle(arguments[0]).outlineStyle", note)
        assert outline != "none"  # the focused control is visible
        if SHOTS:
            Path(SHOTS).mkdir(parents=True, exist_ok=True)
            driver.save_screenshot(str(Path(SHOTS) / "probe-review.png"))
            driver.execute_script("arguments[0].scrollIntoView()", gender)
            driver.save_screenshot(str(Path(SHOTS) / "probe-review-referent.png"))
    finally:
        driver.quit()
