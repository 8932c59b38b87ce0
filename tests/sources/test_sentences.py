import random
import re

from incoherent.sources.sentences import merge_fragments, split_sentences


def test_abbreviations_punkt_misses_do_not_split():
    text = "The rate is approx. 5 per cent. It fell, e.g. in 2001. See Fig. 2 and No. 7 vs. No. 8 here."
    assert split_sentences(text) == [
        "The rate is approx. 5 per cent.",
        "It fell, e.g. in 2001.",
        "See Fig. 2 and No. 7 vs. No. 8 here.",
    ]


def test_military_titles_and_english_model_abbreviations():
    text = (
        "Gen. Smith met Lt. Col. Jones on Monday. Mr. Vinken is chairman of Elsevier N.V., the Dutch group."
    )
    assert split_sentences(text) == [
        "Gen. Smith met Lt. Col. Jones on Monday.",
        "Mr. Vinken is chairman of Elsevier N.V., the Dutch group.",
    ]


def test_paragraph_breaks_end_sentences_and_whitespace_is_collapsed():
    assert split_sentences("A heading without a period\n\nThen   a\nsentence.  ") == [
        "A heading without a period",
        "Then a sentence.",
    ]


def test_empty_text_gives_no_sentences():
    assert split_sentences("  \n\n ") == []


def test_lone_quotes_and_ellipses_join_a_neighbouring_sentence():
    assert merge_fragments(['He called him a "coward.', '"', "ESPN said so."]) == [
        'He called him a "coward."',
        "ESPN said so.",
    ]
    assert merge_fragments(["It was deplorable.", '"', 'These acts are egregious," he said.']) == [
        "It was deplorable.",
        '"These acts are egregious," he said.',
    ]
    assert merge_fragments(['"I ducked my head.', "...", "Then I saw the smoke."]) == [
        '"I ducked my head. ...',
        "Then I saw the smoke.",
    ]
    assert merge_fragments(["...", "Only this."]) == ["... Only this."]


def test_punkt_is_loaded_without_importing_all_of_nltk():
    """Punkt's modules are loaded under stand-ins for the nltk packages, then removed from sys.modules, so a
    later ``import nltk`` elsewhere gets the real package (see sources.sentences._punkt_module)."""
    import subprocess
    import sys

    code = (
        "import sys; from incoherent.sources.sentences import split_sentences; "
        "print(split_sentences('It rose. It fell.'), sorted(m for m in sys.modules if m.startswith(('nltk', 'scipy')))); "
        "import nltk; from nltk.tokenize.punkt import PunktSentenceTokenizer; "
        "print(nltk.tokenize.punkt.PunktSentenceTokenizer is PunktSentenceTokenizer)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["['It rose.', 'It fell.'] []", "True"]


def test_split_join_collapses_exactly_the_whitespace_regex_collapses():
    # split_sentences normalises white space with " ".join(text.split()) instead of re.sub(r"\s+", " ", ...)
    whitespace = [chr(c) for c in range(0x110000) if chr(c).isspace() or re.fullmatch(r"\s", chr(c))]
    assert all(c.isspace() and re.fullmatch(r"\s", c) for c in whitespace)
    rng = random.Random(0)
    alphabet = whitespace + list("ab.")
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 10)))
        assert " ".join(text.split()) == re.sub(r"\s+", " ", text).strip()
    assert split_sentences("A\u2003 cat\u00a0sat.\n\u2028It slept.") == ["A cat sat.", "It slept."]
