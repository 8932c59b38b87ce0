"""sources.wikitext: lead sections, redirects, disambiguation markers and wikitext cleaning (exact outputs)."""

from __future__ import annotations

import random

import pytest

from incoherent.sources.wikitext import (
    clean_wikitext,
    disambiguation_marker,
    is_redirect,
    lead_section,
    strip_markup,
    tidy,
)


def test_lead_section():
    assert lead_section("Intro.\n\nMore.\n==History==\nOld.") == "Intro.\n\nMore.\n"
    assert lead_section("No headings at all.") == "No headings at all."
    assert lead_section("== First ==\nbody") == ""
    assert lead_section("a == b in a sentence\n=== Sub ===\n") == "a == b in a sentence\n"


def test_is_redirect():
    assert is_redirect("#REDIRECT [[Pear]]")
    assert is_redirect("  #redirect[[Pear]]")
    assert not is_redirect("'''Pear''' is a tree. #REDIRECT")


def test_disambiguation_marker():
    assert disambiguation_marker("Mercury", "'''Mercury''' may refer to:", "{{Disambiguation|surname}}") == (
        "{{Disambiguation}}"
    )
    assert disambiguation_marker("Aa River", "", "{{geodis}}\n[[Category:X]]") == "{{geodis}}"
    assert disambiguation_marker("Ship", "{{Set index article}}") == "{{Set index article}}"
    assert disambiguation_marker("X", "{{dab}}") == "{{dab}}"
    assert disambiguation_marker("Austin (disambiguation)") == "title"
    assert disambiguation_marker("X", "__DISAMBIG__") == "__DISAMBIG__"
    assert disambiguation_marker("Pear", "{{Redirect|Pyrus}}{{Other uses}}", "{{DisambigProject}}") is None


@pytest.mark.parametrize(
    "wikitext, expected",
    [
        (
            "'''Albedo''' ({{IPAc-en|æ|l|ˈ|b|iː|d|oʊ}}) or '''reflection coefficient''' is the "
            "[[diffuse reflection|diffuse reflectivity]]<ref name=a>{{cite book|title=X}}</ref> of a surface.",
            "Albedo or reflection coefficient is the diffuse reflectivity of a surface.",
        ),
        (
            "'''Achilles''' ({{IPAc-en|ə|ˈ|k|ɪ|l|iː|z}}; {{lang-grc|Ἀχιλλεύς}}, ''Akhilleus'', "
            "{{IPA-el|akʰillěu̯s|}}) was a Greek hero.",
            "Achilles (Akhilleus) was a Greek hero.",
        ),
        (
            "[[File:Boulier1.JPG|right|thumb|A Chinese [[abacus]]]]\nThe '''abacus''' is a tool.<ref>Ref text.</ref>"
            "<ref name=x/> It is old.<!-- hidden -->",
            "The abacus is a tool. It is old.",
        ),
        (
            "{{Infobox country\n|name=X\n}}\nText with [[Category:Stuff]] a [[:Category:Visible]] link, "
            "[http://x.org an external link] and [[fr:Truc]] &nbsp;here&nbsp;.",
            "Text with a Category:Visible link, an external link and here.",
        ),
        (
            'Before\n{| class=wikitable\n|-\n| cell || cell2\n|}\nAfter <span style="x">inside</span> and '
            "<math>x^2</math> done.<br/>Next",
            "Before\n\nAfter inside and done. Next",
        ),
        ("A (born {{birth date|1885|4|3}}, – died 1981) was.", "A (born – died 1981) was."),
        ("__NOTOC__\n'''X''' is [[Y#Section|]] and [[Z#Part]].", "X is Y and Z."),
        ("* item one\n* item two", "item one\nitem two"),
        ("Tom &amp; Jerry &ndash; cartoon&#33;", "Tom & Jerry – cartoon!"),
    ],
)
def test_clean_wikitext(wikitext, expected):
    assert clean_wikitext(wikitext) == expected


def test_strip_markup_keeps_link_text_and_drops_templates():
    assert strip_markup("a [[b|c]] {{d|e}} [[f]]") == "a c  f"


def test_tidy():
    assert tidy("Achilles (; , Akhilleus, ) was a hero , born () in  Phthia&nbsp;.") == (
        "Achilles (Akhilleus) was a hero, born in Phthia."
    )
    assert tidy("Albedo () or reflection") == "Albedo or reflection"
    assert tidy("x ( ; ( ) ) y") == "x y"
    assert tidy("One.\n\n\n\nTwo .") == "One.\n\nTwo."


# (wikitext, its plain text), written out by hand. Markup that stands for a break (a tag such as <br/>, a list
# or definition marker, a horizontal rule) becomes two spaces; tidy() collapses white space later.
TOKEN_CASES = [
    (
        "'''Albedo''' ({{IPAc-en|æ|l}}) is the [[diffuse reflection|reflection]]<ref>x</ref>.",
        "Albedo () is the reflection.",
    ),
    (
        "a [[File:x.jpg|thumb|cap [[y]]]] b [[fr:Foo]] [[:Category:X]] [[Foo (film)|]] [[#Sec]] [[Pear#Uses]]",
        "a  b  Category:X Foo Sec Pear",
    ),
    (
        "&amp; &#x41; &#66; <br/> x<small>s</small> [http://a.b c d] http://e.f <!-- c --> [http://g.h]",
        "& A B    xs c d http://e.f  ",
    ),
    (
        '* one\n* two\n; term : def\n----\n{| class=x\n| cell\n|}\n<math>x^2</math> <span style="a">kept</span>',
        "   one\n   two\n   term    def\n  \n\n kept",
    ),
    (
        "[[{{tl|x}}|templated title]] and http://x.org/?a=1&amp;b=2 and {{{arg|d}}} ''it'' '''''bi'''''",
        "templated title and http://x.org/?a=1&amp;b=2 and  it bi",  # a bare URL keeps its source text
    ),
    (
        "== Heading ==\n[[Link|  ]] <div>block</div>text [[a|b|c]] <ref name=x/> unclosed [[ and ]] }} {{",
        "\nLink  block text b|c  unclosed and }} {{",
    ),
]
UNUSUAL = {4}  # a template in a link target: the token renderer hands the text to the node tree


@pytest.mark.parametrize("case", range(len(TOKEN_CASES)))
def test_token_renderer_node_tree_and_strip_markup_give_the_plain_text(case):
    """strip_markup renders mwparserfromhell's token list directly (fast) or its node tree: both give the
    text written above, and so does each renderer on its own (a construct the token renderer does not mirror
    raises _Unusual, and the tree is used)."""
    import mwparserfromhell

    from incoherent.sources import wikitext

    text, expected = TOKEN_CASES[case]
    out: list[str] = []
    wikitext._render(mwparserfromhell.parse(text), out)
    assert "".join(out) == expected
    if case in UNUSUAL:
        with pytest.raises(wikitext._Unusual):
            wikitext._render_tokens(wikitext._tokenize(text))
    else:
        assert wikitext._render_tokens(wikitext._tokenize(text)) == expected
    assert strip_markup(text, fast=False) == expected
    assert strip_markup(text) == expected


def test_token_renderer_falls_back_on_non_text_link_targets():
    from incoherent.sources import wikitext

    with pytest.raises(wikitext._Unusual):
        wikitext._render_tokens(wikitext._tokenize("[[{{tl|x}}|templated]]"))
    assert strip_markup("[[{{tl|x}}|templated]] title") == "templated title"


def _tidy_unguarded(text: str) -> str:
    """tidy() as a plain sequence of substitutions, without its cheap pre-checks."""
    from incoherent.sources import wikitext as w

    text = w._NBSP.sub(" ", text)
    text = w._SWITCH.sub("", text)
    text = w._LEFTOVER_LINES.sub("", text)
    text = w._LIST_MARK.sub("", text)
    text = w._SPACES.sub(" ", text)
    for _ in range(2):
        before = text
        text = w._OPEN_SEPARATORS.sub("(", text)
        text = w._CLOSE_SEPARATORS.sub(")", text)
        text = w._EMPTY_PARENS.sub("", text)
        text = w._SPACE_AFTER_OPEN.sub("(", text)
        text = w._SPACE_BEFORE_CLOSE.sub(")", text)
        if text == before:
            break
    text = w._SPACE_BEFORE_PUNCT.sub(r"\1", text)
    text = w._DOUBLE_PUNCT.sub(r"\1", text)
    text = w._COMMA_BEFORE_STOP.sub(r"\1", text)
    text = w._COMMA_BEFORE_DASH.sub(r" \1", text)
    text = w._SPACES.sub(" ", text)
    text = w._BLANK_LINES.sub("\n\n", text)
    return "\n".join(line.strip() for line in text.split("\n")).strip()


def test_tidy_pre_checks_change_nothing():
    rnd = random.Random(0)
    alphabet = " \t\r\n\f\va(),;:.[]!?%|{}-*#_&\u00a0\u2013\u2014"
    texts = ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 40))) for _ in range(5000)]
    texts += ["Achilles (; , Akhilleus, ) was a hero , born () in  Phthia&nbsp;.", "a ,— b", "x :  ! y"]
    for text in texts:
        assert tidy(text) == _tidy_unguarded(text), repr(text)
