"""Control characters in text written into files people read (issue #53, item 16).

``card --name $'\\e]0;X\\a'`` wrote a raw ESC and BEL into the card's heading: ``cat README.md`` retitled the
terminal. Now every command refuses a command-line argument holding a control or format character (one line,
the value shown escaped), and the writers of text meant for people escape what comes from files and data: the
card (a config's licence terms, source text) and the probe review page (sentences of the data).
"""

from __future__ import annotations

import os

import pytest

from incoherent.corpora.card.render import render_card
from incoherent.corpora.probes.rows import probe_document
from incoherent.pipelines import cli
from incoherent.pipelines.probes import review
from tests.conftest import SAMPLES, run_cli

HOSTILE = ["\x1b]0;X\x07", "A\x1b[2Jcleared", "evil\u202etxt", "two\nlines", "C1\x9b31m"]
RAW = ("\x1b", "\x07", "\u202e", "\x9b")


@pytest.fixture(scope="module")
def shuffled(tmp_path_factory):
    root = tmp_path_factory.mktemp("card")
    assert run_cli("ingest", "cnn", SAMPLES / "cnn" / "allennlp", "--out", root / "docs") == 0
    assert run_cli("shuffle", root / "docs", "--out", root / "ds", "--test-fraction", "0.5") == 0
    return root / "ds"


def one_line(capsys, code: int) -> str:
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert err.startswith("error: ") and "\n" not in err and "control or format characters" in err, err
    assert not any(c in err for c in RAW), err
    return err


@pytest.mark.parametrize("name", HOSTILE)
def test_card_name_with_control_characters_is_refused_and_nothing_written(shuffled, capsys, name):
    before = sorted(os.listdir(shuffled))
    err = one_line(capsys, cli.main(["card", str(shuffled), "--name", name]))
    assert err.startswith("error: --name '"), err
    assert sorted(os.listdir(shuffled)) == before and "README.md" not in before


@pytest.mark.parametrize(
    "argv",
    [
        ["card", "DS", "--license", "\x1b]0;X\x07"],
        ["card", "DS", "--license=mit\x07"],
        ["ingest", "text", "news\x1b[2J.jsonl", "--out", "o"],
        ["ingest", "text", "n.jsonl", "--source", "a\u202eb", "--out", "o"],
        ["publish", "DS", "--repo-id", "me/x\x1b]0;X\x07"],
        ["annotate", "export", "DS", "--config", "shuffle-x\x07", "--out", "o"],
        ["build", "--out", "o\nb"],
    ],
    ids=lambda argv: " ".join(argv[:2]),
)
def test_every_command_refuses_control_characters_in_its_arguments(tmp_path, capsys, monkeypatch, argv):
    monkeypatch.chdir(tmp_path)
    one_line(capsys, cli.main(argv))
    assert os.listdir(tmp_path) == []


def test_the_card_escapes_what_comes_from_files(shuffled):
    """A name passed by a program, not the CLI (publish's card, a config's licence terms reach the same text):
    escaped in the card, its heading still one line."""
    text = render_card(str(shuffled), str(shuffled), "Corpora\x1b]0;X\x07 \u202eevil", "mit", figures=False)
    assert not any(c in text for c in RAW)
    assert "# Corpora\\x1b]0;X\\x07 \\u202eevil\n" in text


def test_the_review_page_escapes_sentences_of_the_data(tmp_path, monkeypatch):
    sentences = [
        "Hanoi is the capital and second-most populous city of Vietnam.",
        "The regime he created lasted until 1974\x1b]0;owned\x07, one of the longest-lived in Europe.",
        "The city lies on the banks of the Red River\u202e.",
    ]
    doc = {"id": "w:0", "source": "w", "split": "test", "sentences": sentences, "intruder_index": 1}
    rows = [r for r in probe_document(doc, ["past-to-future", "negation"], 0) if isinstance(r, dict)]
    assert rows
    monkeypatch.setattr(
        review, "_rows", lambda out, phenomenon, n, seed: [r for r in rows if r["phenomenon"] == phenomenon]
    )
    shown = review.write_review(str(tmp_path), sorted({r["phenomenon"] for r in rows}), 5, 0)
    assert sum(shown.values()) == len(rows)
    for name in ("index.html", "review.md"):
        text = (tmp_path / "review" / name).read_text(encoding="utf-8")
        assert not any(c in text for c in RAW), name
        assert "\\x1b" in text and "\\x07" in text and "\\u202e" in text, name
