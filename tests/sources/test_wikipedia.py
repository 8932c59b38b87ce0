"""sources.wikipedia: page record -> document row or Rejected (one test per reason)."""

from __future__ import annotations

from pathlib import Path

import pytest

from incoherent.schemas.records import Rejected
from incoherent.sources import wikitext
from incoherent.sources.mediawiki import read_pages
from incoherent.sources.wikipedia import article_url, compact, page_to_document

DATA = Path(__file__).resolve().parents[1] / "data/wiki"


def page(**fields) -> dict:
    base = {
        "page_id": 39,
        "ns": 0,
        "title": "Albedo",
        "redirect": None,
        "revision_id": 7,
        "timestamp": "2016-05-01T00:00:00Z",
        "lead": "'''Albedo''' ({{IPAc-en|æ|l}}) is a measure.<ref>x</ref> It is reflection.\n",
        "tail": "[[Category:Physics]]",
        "text_chars": 900,
        "dump": "enwiki.xml.bz2",
        "base": "https://en.wikipedia.org/wiki/",
    }
    base.update(fields)
    return base


def test_article_becomes_a_document():
    assert list(page_to_document(page())) == [
        {
            "id": "wikipedia:39",
            "source": "wikipedia",
            "title": "Albedo",
            "url": "https://en.wikipedia.org/wiki/Albedo",
            "sentences": ["Albedo is a measure.", "It is reflection."],
            "dump": "enwiki.xml.bz2",
            "revision_id": 7,
            "timestamp": "2016-05-01T00:00:00Z",
        }
    ]
    [doc] = page_to_document(page(title="Abraham Lincoln"), source="enwiki")
    assert doc["id"] == "enwiki:39" and doc["url"] == "https://en.wikipedia.org/wiki/Abraham_Lincoln"


def test_article_url():
    assert article_url("https://en.wikipedia.org/wiki/", "Abraham Lincoln") == (
        "https://en.wikipedia.org/wiki/Abraham_Lincoln"
    )
    assert article_url("https://en.wikipedia.org/wiki/", "What? 100% #1") == (
        "https://en.wikipedia.org/wiki/What%3F_100%25_%231"
    )
    assert (
        article_url("http://bg.wikipedia.org/wiki/", "Ферди Пиëх")
        == "http://bg.wikipedia.org/wiki/Ферди_Пиëх"
    )


@pytest.mark.parametrize(
    "fields, reason, detail",
    [
        ({"ns": 4, "title": "Wikipedia:About"}, "not_article", "ns=4: Wikipedia:About"),
        ({"redirect": "Computer accessibility", "title": "AC"}, "redirect", "AC -> Computer accessibility"),
        ({"lead": "#REDIRECT [[Pear]]", "title": "Pyrus"}, "redirect", "Pyrus -> #REDIRECT [[Pear]]"),
        ({"tail": "{{disambiguation}}", "title": "Alien"}, "disambiguation", "Alien: {{disambiguation}}"),
        ({"title": "Austin (disambiguation)"}, "disambiguation", "Austin (disambiguation): title"),
        ({"lead": "{{Compact ToC}}\n\n", "title": "List"}, "empty_lead", "List: 17 chars of lead wikitext"),
        ({"lead": "", "title": "Empty"}, "empty_lead", "Empty: 0 chars of lead wikitext"),
        ({"page_id": None, "title": "No id"}, "missing_id", "No id"),
    ],
)
def test_rejections(fields, reason, detail):
    [out] = page_to_document(page(**fields))
    assert isinstance(out, Rejected)
    assert (out.reason, out.detail, out.source) == (reason, detail, "wikipedia")
    assert out.id == (None if fields.get("page_id", 39) is None else "wikipedia:39")


def test_lead_that_decodes_to_a_lone_surrogate_is_a_parse_error():
    """A real page edited to hold ``&amp;#xD800;``: mwparserfromhell decodes it to a lone surrogate."""
    [record] = read_pages(str(DATA / "surrogate-entity-id1718.xml"))
    [out] = page_to_document(record)
    assert isinstance(out, Rejected) and out.reason == "parse_error" and out.id == "wikipedia:1718"
    assert out.detail.startswith("Ambrosiaster: UnicodeEncodeError")
    assert "&#xD800;" in out.record


def test_mwparserfromhell_failure_is_a_parse_error(monkeypatch):
    """mwparserfromhell's tokenizer bugs raise ParserError ("C tokenizer exited with BAD_ROUTE", issue #165)."""
    import mwparserfromhell
    from mwparserfromhell.parser import ParserError

    def broken(text, *args, **kwargs):
        raise ParserError("C tokenizer exited with BAD_ROUTE")

    monkeypatch.setattr(mwparserfromhell, "parse", broken)
    monkeypatch.setattr(wikitext, "_tokenize", broken)  # the token renderer's way in (see strip_markup)
    [out] = page_to_document(page())
    assert isinstance(out, Rejected) and out.reason == "parse_error"
    assert (
        out.detail
        == "Albedo: ParserError: This is a bug and should be reported. Info: C tokenizer exited with BAD_ROUTE."
    )


def test_real_empty_lead_page():
    [record] = read_pages(str(DATA / "list-of-anthropologists-empty-lead.xml"))
    [out] = page_to_document(record)
    assert isinstance(out, Rejected) and out.reason == "empty_lead"
    assert out.detail == "List of anthropologists: 17 chars of lead wikitext"


def test_full_history_page_uses_last_revision():
    [record] = read_pages(str(DATA / "article-pear.xml"))
    [doc] = page_to_document(record)
    assert doc["revision_id"] == 188924 and doc["timestamp"] == "2002-08-31T05:53:10Z"
    assert doc["sentences"][0].startswith(
        "Pears are trees of the genus Pyrus and the edible fruit of that tree."
    )


def test_compact_keeps_what_the_decision_needs():
    small = compact(page(tail="text\n{{Disambiguation}}\n[[Category:X]]"))
    assert "tail" not in small and small["disambiguation"] == "{{Disambiguation}}"
    assert small["lead"] == page()["lead"]
    [out] = page_to_document(small)
    assert isinstance(out, Rejected) and out.reason == "disambiguation"
    redirect = compact(page(redirect="Pear", lead="#REDIRECT [[Pear]]" + " {{R from move}}" * 50))
    assert len(redirect["lead"]) == 200 and redirect["disambiguation"] is None
    assert list(page_to_document(compact(page()))) == list(page_to_document(page()))
