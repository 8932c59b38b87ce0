"""sources.pagescan: the fast page reader gives expat's records, on real dumps and on generated edge cases."""

from __future__ import annotations

import random
from pathlib import Path
from xml.parsers import expat

import pytest

from incoherent.schemas.records import InputError
from incoherent.sources import bz2decode, mediawiki, mediawiki_xml, pagescan
from incoherent.sources.pagescan import TAIL_CHARS, scan_page, xml_text
from tests.sources.test_mediawiki import counting

ROOT = Path(__file__).resolve().parents[2]
DUMPS = sorted(
    [*ROOT.glob("samples/wikipedia/**/*.bz2"), *(ROOT / "tests/data/wiki").glob("*")],
    key=lambda p: p.name,
)
DUMPS = [p for p in DUMPS if p.suffix != ".md"]
GENSIM = ROOT / "samples/wikipedia/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"


def read(path: Path, scan: bool, monkeypatch, chunk: int | None = None):
    """Records and counters of one file, or the InputError it raises, with the fast path on or off."""
    monkeypatch.setattr(mediawiki_xml, "SCAN_PAGES", scan)
    if chunk:
        monkeypatch.setattr(bz2decode, "READ_CHUNK", chunk)
    counts, inc = counting()
    try:
        return list(mediawiki.read_pages(str(path), count=inc)), dict(counts)
    except InputError as exc:
        return InputError, str(exc).split(":")[0]


def declined_pages(monkeypatch) -> list[bytes]:
    """Record the pages the fast path declines while a test reads."""
    declined: list[bytes] = []

    def watching(buf, start, limit):
        fields, end = scan_page(buf, start, limit)
        if fields is None and buf.find(b"</page>", start, limit) >= 0:
            declined.append(buf[start : buf.find(b"</page>", start, limit) + 7])
        return fields, end

    monkeypatch.setattr(mediawiki_xml, "scan_page", watching)
    return declined


@pytest.mark.parametrize("path", DUMPS, ids=lambda p: p.name)
def test_every_bundled_dump_reads_the_same_with_and_without_the_fast_path(path, monkeypatch):
    assert read(path, True, monkeypatch) == read(path, False, monkeypatch)


def test_the_fast_path_reads_real_pages(monkeypatch):
    declined = declined_pages(monkeypatch)
    pages, counts = read(GENSIM, True, monkeypatch)
    assert counts["pages_read"] == len(pages) == 206
    assert declined == []  # every page of the gensim fragment is read without expat


PAGE = (
    "<page>\n    <title>{title}</title>\n    <ns>0</ns>\n    <id>{id}</id>\n{extra}"
    "    <revision>\n      <id>{rev}</id>\n      <parentid>1</parentid>\n"
    "      <timestamp>2020-01-0{rev}T00:00:00Z</timestamp>\n"
    "      <contributor>\n        <username>A &amp; B</username>\n        <id>99</id>\n      </contributor>\n"
    "      <comment>fix &lt;ref&gt;</comment>\n      <model>wikitext</model>\n      <format>text/x-wiki</format>\n"
    '      <text bytes="12" xml:space="preserve">{text}</text>\n      <sha1>abc</sha1>\n    </revision>\n'
    "  </page>\n"
)


def page(
    text: str = "Lead.\n== H ==\nBody.", title: str = "T", id: int = 1, rev: int = 5, extra: str = ""
) -> str:
    return PAGE.format(text=text, title=title, id=id, rev=rev, extra=extra)


def dump(*pages: str, head: str = "<mediawiki>\n  ", tail: str = "</mediawiki>\n") -> str:
    return head + "  ".join(pages) + tail


EDGE_CASES = {
    "plain": dump(page(), page(id=2)),
    "entities in title and text": dump(
        page("&quot;A&quot; &amp;amp; &lt;b&gt;&apos;\n==x==\n&lt;", title="A &amp; B")
    ),
    "character reference in lead": dump(page("It&#39;s.\n== H ==\nx"), page(id=2)),
    "character reference in tail": dump(page("Lead.\n== H ==\n" + "x" * 5000 + "&#x27;"), page(id=2)),
    "character reference at the tail boundary": dump(
        page("Lead.\n== H ==\n" + "&#x1F600;" * 600 + "é" * 3990), page(id=2)
    ),
    "unknown entity": dump(page("a &nbsp; b")),
    "carriage return": dump(page("Lead\r\n== H ==\r\nBody\rEnd"), page(id=2)),
    "carriage return in title": dump(page(title="A\rB"), page(id=2)),
    "comment in text": dump(page("Lead <!-- c --> x"), page(id=2)),
    "comment in revision": dump(page().replace("<model>", "<!-- c --><model>"), page(id=2)),
    "comment between pages": dump(page(), "<!-- <page>x</page> -->\n  ", page(id=2), page(id=3)),
    "comment in prolog": dump(page(), page(id=2), head="<mediawiki>\n  <!-- x -->\n  "),
    "processing instruction between pages": dump(page(), "<?pi x?>\n  ", page(id=2)),
    "xml declaration": dump(page(), head='<?xml version="1.0" encoding="utf-8"?>\n<mediawiki>\n  '),
    "cdata in text": dump(page("Lead <![CDATA[ <x> ]]> y"), page(id=2)),
    "control character in lead": dump(page("Lead \x01 x")),
    "U+FFFF in lead": dump(page("Lead \uffff x")),
    "heading at the start": dump(page("== Only ==\nbody"), page("==\nx", id=2)),
    "no heading": dump(page("Just a lead.\nTwo lines. a==b")),
    "heading after a single equals": dump(page("a\n=Not=\n== Yes ==\nz")),
    "empty text": dump(page("")),
    "self-closing text": dump(
        page().replace(
            '<text bytes="12" xml:space="preserve">Lead.\n== H ==\nBody.</text>', '<text bytes="0" />'
        )
    ),
    "deleted text": dump(
        page().replace(
            '<text bytes="12" xml:space="preserve">Lead.\n== H ==\nBody.</text>', '<text deleted="deleted" />'
        )
    ),
    "no text element": dump(
        page().replace('<text bytes="12" xml:space="preserve">Lead.\n== H ==\nBody.</text>', "")
    ),
    "no timestamp": dump(page().replace("<timestamp>2020-01-05T00:00:00Z</timestamp>", "")),
    "revision without id": dump(page().replace("<id>5</id>\n      <parentid>", "<parentid>")),
    "redirect": dump(
        page(extra='    <redirect title="Foo &amp; &quot;bar&quot;\tbaz&#10;x" />\n'), page(id=2)
    ),
    "redirect, plain": dump(page(extra='    <redirect title="Pear (fruit)" />\n'), page(id=2)),
    "redirect without title": dump(page(extra="    <redirect />\n")),
    "restrictions": dump(page(extra="    <restrictions>edit=sysop:move=sysop</restrictions>\n")),
    "no namespace (schema 0.3)": dump(page(title="Talk:Pear").replace("<ns>0</ns>\n    ", ""), page(id=2)),
    "non-ASCII digits": dump(page().replace("<ns>0</ns>", "<ns>\u0661\u0664</ns>")),
    "not a number": dump(page().replace("<id>1</id>", "<id>x1</id>")),
    "full history": dump(
        page("Old lead.\n== H ==\nold").replace(
            "    </revision>\n",
            "    </revision>\n    <revision>\n"
            "      <id>7</id>\n      <timestamp>2021</timestamp>\n      <text>New lead.\n== H ==\nnew</text>\n"
            "    </revision>\n",
            1,
        )
    ),
    "upload element": dump(
        page().replace("  </page>", "    <upload><timestamp>x</timestamp></upload>\n  </page>")
    ),
    "page without revision": dump(
        "<page>\n    <title>Empty</title>\n    <ns>0</ns>\n    <id>3</id>\n  </page>\n", page(id=2)
    ),
    "second text element": dump(page().replace("<sha1>abc</sha1>", "<text>second</text>")),
    "multibyte title": dump(page(title="Ærø – 東京 🍐")),
    "multibyte text at the tail boundary": dump(page("Lead.\n== H ==\n" + ("aé東🍐" * 1400))),
    "entities at the tail boundary": dump(page("Lead.\n== H ==\n" + ("&amp;x" * 1000) + ("&quot;" * 1300))),
    "junk after the root": dump(page(), page(id=2)) + "<html>error page</html>\n",
    "bare page fragments": "  ".join([page(), page(id=2)]),
}


@pytest.mark.parametrize("chunk", [7, 100, 1 << 17])
@pytest.mark.parametrize("name", sorted(EDGE_CASES))
def test_edge_cases_read_the_same_with_and_without_the_fast_path(tmp_path, monkeypatch, name, chunk):
    path = tmp_path / "dump.xml"
    path.write_text(EDGE_CASES[name], encoding="utf-8")
    fast = read(path, True, monkeypatch, chunk)
    assert fast == read(path, False, monkeypatch, chunk)
    if fast[0] is not InputError and chunk > 100:
        assert fast[1]["pages_read"] == len(fast[0]) >= 1


@pytest.mark.parametrize(
    "name",
    [
        "plain",
        "entities in title and text",
        "redirect, plain",
        "full history",
        "multibyte text at the tail boundary",
        "no namespace (schema 0.3)",
    ],
)
def test_the_fast_path_reads_the_shapes_mediawiki_writes(tmp_path, monkeypatch, name):
    path = tmp_path / "dump.xml"
    path.write_text(EDGE_CASES[name], encoding="utf-8")
    declined = declined_pages(monkeypatch)
    pages, _ = read(path, True, monkeypatch)
    assert pages and declined == []


def test_declined_shapes_go_to_expat(tmp_path, monkeypatch):
    path = tmp_path / "dump.xml"
    path.write_text(EDGE_CASES["comment in text"], encoding="utf-8")
    declined = declined_pages(monkeypatch)
    pages, _ = read(path, True, monkeypatch)
    assert [p["lead"] for p in pages] == ["Lead  x", "Lead.\n"]  # expat drops the comment
    assert len(declined) == 1 and b"<!-- c -->" in declined[0]


def test_random_texts_give_expat_leads_and_tails(tmp_path, monkeypatch):
    rng = random.Random(7)
    pieces = [
        "a",
        "b ",
        "\n",
        "==",
        "\n==",
        "é",
        "東",
        "🍐",
        "&amp;",
        "&lt;",
        "&gt;",
        "&quot;",
        "&apos;",
        ";",
        "&amp;amp;",
    ]
    texts = []
    for _ in range(60):
        n = rng.choice([10, 900, 3000, 4200, 6000, 12000])
        texts.append("".join(rng.choice(pieces) for _ in range(n)))
    path = tmp_path / "dump.xml"
    path.write_text(dump(*(page(t, id=i + 1) for i, t in enumerate(texts))), encoding="utf-8")
    declined = declined_pages(monkeypatch)
    fast = read(path, True, monkeypatch)
    assert fast == read(path, False, monkeypatch)
    assert declined == [] and any(len(p["tail"]) == TAIL_CHARS for p in fast[0])


def test_an_error_after_fast_pages_names_its_byte_offset(tmp_path, monkeypatch):
    text = dump(page(), page(id=2), page(id=3).replace("</title>", "</titel>"), page(id=4))
    path = tmp_path / "dump.xml"
    path.write_text(text, encoding="utf-8")
    parser = expat.ParserCreate()
    with pytest.raises(expat.ExpatError):
        parser.Parse(text.encode("utf-8"), True)
    monkeypatch.setattr(mediawiki_xml, "SCAN_PAGES", True)
    with pytest.raises(InputError, match=rf"mismatched tag, byte {parser.ErrorByteIndex} of the XML\)$"):
        list(mediawiki.read_pages(str(path)))
    monkeypatch.setattr(mediawiki_xml, "SCAN_PAGES", False)
    with pytest.raises(InputError, match=rf"mismatched tag, line {parser.ErrorLineNumber}, column"):
        list(mediawiki.read_pages(str(path)))


def test_pages_longer_than_the_scan_limit_stream_through_expat(tmp_path, monkeypatch):
    monkeypatch.setattr(mediawiki_xml, "MAX_SCANNED_PAGE", 300)
    path = tmp_path / "dump.xml"
    path.write_text(dump(page(), page("Long lead. " * 200, id=2), page(id=3)), encoding="utf-8")
    assert read(path, True, monkeypatch, 100) == read(path, False, monkeypatch, 100)


def test_truncated_page_is_an_error_on_both_paths(tmp_path, monkeypatch):
    path = tmp_path / "dump.xml"
    path.write_text(dump(page(), page(id=2))[:-200], encoding="utf-8")
    assert read(path, True, monkeypatch)[0] is InputError
    assert read(path, False, monkeypatch)[0] is InputError


def test_xml_text():
    assert xml_text(b"&lt;ref&gt;x&lt;/ref&gt; &amp;lt; &quot;&apos;") == "<ref>x</ref> &lt; \"'"
    assert xml_text("Ærø".encode()) == "Ærø"
    for declined in [b"&#39;", b"&nbsp;", b"a & b", b"\xff", b"a\rb", b"\x00", b"\xef\xbf\xbe"]:
        assert xml_text(declined) is None


def test_scan_page_reads_inside_a_larger_buffer():
    raw = dump(page(), page(id=2)).encode("utf-8")
    start = raw.index(b"<page>", 20)
    fields, end = scan_page(raw, start, len(raw))
    assert (
        fields["page_id"] == 2
        and raw[start:end].endswith(b"</page>")
        and raw[end:].strip() == b"</mediawiki>"
    )
    assert scan_page(raw, start, end - 1) == (None, 0)  # cut short: not read
    assert pagescan.to_int(" 12 ") == 12 and pagescan.to_int("x") is None
