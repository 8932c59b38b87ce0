"""Wikitext -> clean plain text: lead sections, redirects, disambiguation pages, markup removal.

>>> clean_wikitext("'''Albedo''' ({{IPAc-en|æ|l|ˈ|b|iː|d|oʊ}}) is the [[diffuse reflection|reflection]]<ref>x</ref>.")
'Albedo is the reflection.'

Markup goes through mwparserfromhell (imported lazily). Templates, ``<ref>``, tables, galleries, maths,
File/Image/Category and interlanguage links, comments, behaviour switches and HTML tags are removed; the
text of links, bold/italic and other inline tags is kept; entities are decoded. :func:`tidy` then repairs
what removal leaves behind: ``Albedo () or`` -> ``Albedo or``, ``Achilles (; , Akhilleus, ) was`` ->
``Achilles (Akhilleus) was``, spaces before punctuation, non-breaking spaces.
"""

from __future__ import annotations

import functools
import re

HEADING = re.compile(r"^==", re.M)

# Tags whose content is not running text.
DROP_TAGS = frozenset(
    """ref references table gallery math chem ce score timeline imagemap syntaxhighlight source pre
    templatedata graph mapframe maplink categorytree inputbox section includeonly
    poem hiero charinsert indicator templatestyles noscript style script""".split()
)
# Tags that separate words.
BREAK_TAGS = frozenset({"br", "hr", "p", "div", "li", "tr", "td", "th", "dd", "dt"})
# Link namespaces that are not running text (media, categories) - interlanguage links are dropped too.
DROP_LINK_PREFIXES = frozenset({"file", "image", "media", "category", "wikipedia", "wp", "special"})
# {{Disambiguation}} and friends (enwiki's disambiguation and set-index templates, lower case, no spaces).
DISAMBIGUATION_TEMPLATES = frozenset(
    """disambiguation disambig disamb dab disambiguationpage hndis geodis numberdis letter-numbercombdisambig
    letterdisambiguation numberdisambiguation airportdisambiguation callsigndisambiguation
    placenamedisambiguation humannamedisambiguation schooldisambiguation hospitaldisambiguation
    mathematicaldisambiguation roaddisambiguation speciesdisambiguation specieslatinnamedisambiguation
    genusdisambiguation taxondisambiguation chinesetitledisambiguation mountainindex roadindex shipindex
    sportindex setindexarticle setindex sia surname givenname lakeindex portindex plantcommonname
    animalcommonname enzymeindex fishcommonname molecularformulaindex chemistryindex""".split()
)
_TEMPLATE_NAME = re.compile(r"\{\{\s*([^{}|\n]{1,60}?)\s*(?:\||\}\})")
_PIPE_TRICK = re.compile(r"\s*\([^()]*\)$|^[^:]*:")
_REDIRECT = re.compile(r"^\s*#\s*redirect\b", re.I)


def lead_section(text: str) -> str:
    """Text before the first ``==`` heading: ``lead_section("Intro.\\n==History==\\nOld.") == "Intro.\\n"``."""
    match = HEADING.search(text)
    return text[: match.start()] if match else text


def is_redirect(text: str) -> bool:
    """``#REDIRECT [[Target]]`` (any case) at the start of the text."""
    return bool(_REDIRECT.match(text))


def disambiguation_marker(title: str, *texts: str) -> str | None:
    """Why a page is a disambiguation or set-index page, or None.

    >>> disambiguation_marker("Mercury", "'''Mercury''' may refer to:", "{{Disambiguation|surname}}")
    '{{Disambiguation}}'
    >>> disambiguation_marker("Pyrus (disambiguation)")
    'title'
    """
    if title.rstrip().endswith("(disambiguation)"):
        return "title"
    for text in texts:
        if not text:
            continue
        if "__DISAMBIG__" in text:
            return "__DISAMBIG__"
        for match in _TEMPLATE_NAME.finditer(text):
            name = match.group(1)
            key = name.lower().replace(" ", "").replace("_", "")
            if key.startswith("template:"):
                key = key[len("template:") :]
            if key in DISAMBIGUATION_TEMPLATES:
                return "{{" + name + "}}"
    return None


# --------------------------------------------------------------------------------------------- cleaning


def _link_prefix(title: str) -> str | None:
    if ":" not in title:
        return None
    return title.split(":", 1)[0].strip().lower()


def _is_language(prefix: str) -> bool:
    """Interlanguage prefixes: ``fr``, ``zh-yue``, ``simple``, ``be-x-old``."""
    return prefix == "simple" or bool(re.fullmatch(r"[a-z]{2,3}(?:-[a-z]{2,8})*", prefix))


def _render(code, out: list[str]) -> None:
    from mwparserfromhell.nodes import (
        Argument,
        Comment,
        ExternalLink,
        Heading,
        HTMLEntity,
        Tag,
        Template,
        Text,
        Wikilink,
    )

    for node in code.nodes:
        kind = type(node)
        if kind is Text:
            out.append(node.value)
        elif kind is Template or kind is Comment or kind is Argument or kind is Heading:
            continue
        elif kind is Wikilink:
            title = str(node.title).strip()
            if title.startswith(":"):  # [[:Category:X]] is a visible link
                title = title[1:]
            else:
                prefix = _link_prefix(title)
                if prefix is not None and (prefix in DROP_LINK_PREFIXES or _is_language(prefix)):
                    continue
            if node.text is not None and str(node.text).strip():
                _render(node.text, out)
            elif title.startswith("#"):  # [[#Section]]
                out.append(title[1:])
            else:  # [[Title#Section]], and the pipe trick [[Title (film)|]] -> Title
                page = title.split("#", 1)[0]
                out.append(_PIPE_TRICK.sub("", page) if node.text is not None else page)
        elif kind is Tag:
            name = str(node.tag).strip().lower()
            if name in DROP_TAGS or node.wiki_markup == "{|":
                continue
            if name in BREAK_TAGS:
                out.append(" ")
            if node.contents is not None and not node.self_closing:
                _render(node.contents, out)
            if name in BREAK_TAGS:
                out.append(" ")
        elif kind is HTMLEntity:
            out.append(node.normalize())
        elif kind is ExternalLink:
            if node.brackets:
                if node.title is not None:
                    _render(node.title, out)
            else:
                out.append(str(node.url))
        else:  # anything newer mwparserfromhell may add: fall back to its own stripping
            stripped = node.__strip__(normalize=True, collapse=True, keep_template_params=False)
            if stripped:
                out.append(str(stripped))


_BRACES = re.compile(r"\{\{|\}\}")
_REF = re.compile(r"<ref(?:\s[^<>]*)?/>|<ref(?:\s[^<>]*)?>.*?</ref\s*>", re.S | re.I)
_COMMENT = re.compile(r"<!--.*?-->", re.S)
# an empty bold/italic pair, as a bold template leaves behind: ''' + ''' -> nothing
_EMPTY_STYLE = re.compile(r"(?<!')('{2,5})(\s*)\1(?!')")
# verbatim tags and tables: texts holding them go to mwparserfromhell whole
_VERBATIM_TAG = re.compile(r"<(?:nowiki|pre|math|syntaxhighlight|source|code|score|chem)\b", re.I)
_TABLE_START = re.compile(r"^\s*\{\|", re.M)
# what an empty style pair needs: two quotes, maybe spaces, two quotes (a cheap test before _EMPTY_STYLE)
_QUOTE_PAIR = re.compile(r"''\s*''")


def remove_templates(text: str) -> str:
    """Cut balanced ``{{...}}`` spans (nested ones included) with a brace counter; unbalanced ones stay.

    >>> remove_templates("a {{b|{{c}}}} d {{e")
    'a  d {{e'
    """
    if "{{" not in text:
        return text
    out: list[str] = []
    depth = 0
    last = 0  # end of the last removed span
    outer = 0  # start of the template being skipped
    for match in _BRACES.finditer(text):
        if match.group() == "{{":
            if depth == 0:
                outer = match.start()
                out.append(text[last:outer])
            depth += 1
        elif depth:
            depth -= 1
            if depth == 0:
                last = match.end()
    out.append(text[outer:] if depth else text[last:])
    return "".join(out)


def prestrip(text: str) -> str:
    """Remove comments, ``<ref>`` and templates with fast string scans before mwparserfromhell sees the text.

    Infoboxes, citations and pronunciation templates are most of a lead's wikitext, and all of it is thrown
    away: cutting it first makes the parse several times faster with the same result. Texts holding
    verbatim tags (``<nowiki>``, ``<pre>``, ``<math>``...) or template parameters (``{{{arg}}}``, whose braces
    the template counter would split) are left whole for mwparserfromhell to read.
    """
    if ("<" in text and _VERBATIM_TAG.search(text)) or ("{|" in text and _TABLE_START.search(text)):
        return text
    if "{{{" in text:
        return text
    if "<!--" in text:
        text = _COMMENT.sub("", text)
    if "<" in text:
        text = _REF.sub("", text)
    text = remove_templates(text)
    return _EMPTY_STYLE.sub(r"\2", text) if _QUOTE_PAIR.search(text) else text


class _Unusual(Exception):
    """The token renderer met a construct it does not mirror exactly: use the node tree instead."""


@functools.lru_cache(maxsize=1)
def _token_types():
    from mwparserfromhell.parser import tokens

    return tokens


def _render_tokens(toks: list) -> str:
    """What :func:`_render` gives for ``mwparserfromhell.parse(text)``, read straight from the tokenizer's
    token list, without building the node tree (the builder and the node constructors are most of the
    parsing time).

    It follows mwparserfromhell's ``Builder`` token by token (:class:`_TokenRenderer`). Where the output would
    depend on the source text of a node that is not plain text (a template in a link target, an entity in a
    bare URL...), or the token stream is not one the builder accepts, it raises :class:`_Unusual` and the
    caller falls back to the node tree, so the output is the same in every case.
    """
    return _TokenRenderer(toks).render()


class _TokenRenderer:
    """One token list, consumed from its end (the list is reversed once, so ``pop`` is O(1)).

    Each method renders one kind of node into ``out`` (``None``: read past it, render nothing) and leaves the
    tokens after it.
    """

    __slots__ = ("t", "toks", "pop")

    def __init__(self, toks: list):
        self.t = _token_types()
        toks.reverse()
        self.toks = toks
        self.pop = toks.pop

    def render(self) -> str:
        toks, pop, node = self.toks, self.pop, self.node
        out: list[str] = []
        while toks:
            node(pop(), out)
        return "".join(out)

    def skip_until(self, close, *separators) -> None:
        toks, pop, node = self.toks, self.pop, self.node
        while toks:
            tok = pop()
            kind = type(tok)
            if kind is close:
                return
            if kind not in separators:
                node(tok, None)
        raise _Unusual

    def collect(self, stops: tuple, out: list | None) -> tuple[object, bool]:
        """Render nodes into ``out`` until a token of a type in ``stops``; return it, and whether the nodes'
        source is not blank (a node other than text, or text with a non-space)."""
        toks, pop, node, Text = self.toks, self.pop, self.node, self.t.Text
        blank = True
        while toks:
            tok = pop()
            kind = type(tok)
            if kind in stops:
                return tok, not blank
            if kind is Text:
                if out is not None:
                    out.append(tok.text)
                if blank and tok.text.strip():
                    blank = False
            else:
                blank = False
                node(tok, out)
        raise _Unusual

    def raw_until(self, stops: tuple) -> tuple[object, str]:
        """Source of Text tokens up to a token of a type in ``stops``."""
        toks, pop, Text = self.toks, self.pop, self.t.Text
        parts = []
        while toks:
            tok = pop()
            if type(tok) in stops:
                return tok, "".join(parts)
            if type(tok) is not Text:
                raise _Unusual
            parts.append(tok.text)
        raise _Unusual

    def node(self, tok, out: list | None) -> None:
        t = self.t
        kind = type(tok)
        if kind is t.Text:
            if out is not None:
                out.append(tok.text)
        elif kind is t.TemplateOpen:
            self.skip_until(t.TemplateClose, t.TemplateParamSeparator, t.TemplateParamEquals)
        elif kind is t.CommentStart:
            self.skip_until(t.CommentEnd)
        elif kind is t.ArgumentOpen:
            self.skip_until(t.ArgumentClose, t.ArgumentSeparator)
        elif kind is t.HeadingStart:
            self.skip_until(t.HeadingEnd)
        elif kind is t.WikilinkOpen:
            self.wikilink(out)
        elif kind is t.ExternalLinkOpen:
            self.external_link(tok, out)
        elif kind is t.HTMLEntityStart:
            self.entity(out)
        elif kind is t.TagOpenOpen:
            self.tag(tok, out)
        else:  # a token the builder would reject here (ParserError): let it say so
            raise _Unusual

    def wikilink(self, out: list | None) -> None:
        t = self.t
        end, title = self.raw_until((t.WikilinkSeparator, t.WikilinkClose))
        piped = type(end) is t.WikilinkSeparator
        sub: list | None = [] if out is not None else None
        shown = False
        if piped:
            _, shown = self.collect((t.WikilinkClose,), sub)
        if out is None:
            return
        title = title.strip()
        if title.startswith(":"):
            title = title[1:]
        else:
            prefix = _link_prefix(title)
            if prefix is not None and (prefix in DROP_LINK_PREFIXES or _is_language(prefix)):
                return
        if piped and shown:
            out.extend(sub)
        elif title.startswith("#"):
            out.append(title[1:])
        else:
            page = title.split("#", 1)[0]
            out.append(_PIPE_TRICK.sub("", page) if piped else page)

    def external_link(self, tok, out: list | None) -> None:
        t = self.t
        if tok.brackets:
            end, _ = self.collect((t.ExternalLinkSeparator, t.ExternalLinkClose), None)
            if type(end) is t.ExternalLinkSeparator:
                self.collect((t.ExternalLinkClose,), out)
        else:
            end, url = self.raw_until((t.ExternalLinkSeparator, t.ExternalLinkClose))
            if type(end) is t.ExternalLinkSeparator:
                raise _Unusual
            if out is not None:
                out.append(url)

    def entity(self, out: list | None) -> None:
        from mwparserfromhell.nodes import HTMLEntity

        t, pop = self.t, self.pop
        tok = pop()
        if type(tok) is t.HTMLEntityNumeric:
            tok = pop()
            if type(tok) is t.HTMLEntityHex:
                entity = HTMLEntity(pop().text, named=False, hexadecimal=True, hex_char=tok.char)
            else:
                entity = HTMLEntity(tok.text, named=False, hexadecimal=False)
        else:
            entity = HTMLEntity(tok.text, named=True, hexadecimal=False)
        if type(pop()) is not t.HTMLEntityEnd:
            raise _Unusual
        if out is not None:
            out.append(entity.normalize())

    def attribute(self) -> None:
        t, toks, pop = self.t, self.toks, self.pop
        while toks:
            tok = pop()
            kind = type(tok)
            if kind is t.TagAttrStart or kind is t.TagCloseOpen or kind is t.TagCloseSelfclose:
                toks.append(tok)
                return
            if kind is not t.TagAttrEquals and kind is not t.TagAttrQuote:
                self.node(tok, None)
        raise _Unusual

    def tag(self, open_tok, out: list | None) -> None:
        t, toks, pop = self.t, self.toks, self.pop
        TagCloseOpen, TagCloseSelfclose = t.TagCloseOpen, t.TagCloseSelfclose
        name_parts: list[str] = []
        while toks:  # the tag name and attributes
            tok = pop()
            kind = type(tok)
            if kind is t.TagAttrStart:
                self.attribute()
            elif kind is t.Text:
                name_parts.append(tok.text)
            elif kind is TagCloseOpen or kind is TagCloseSelfclose:
                break
            else:
                raise _Unusual
        else:
            raise _Unusual
        name = "".join(name_parts).strip().lower()
        keep = out is not None and name not in DROP_TAGS and open_tok.wiki_markup != "{|"
        brk = keep and name in BREAK_TAGS
        if brk:
            out.append(" ")
        if kind is TagCloseOpen:  # contents, then the closing tag
            end, _ = self.collect((t.TagOpenClose, TagCloseSelfclose, t.TagCloseClose), out if keep else None)
            if type(end) is not t.TagOpenClose:
                raise _Unusual
            end, _ = self.collect((t.TagCloseClose,), None)
        if brk:
            out.append(" ")


def _tokenize(text: str) -> list:
    """mwparserfromhell's token list for ``text``: what ``mwparserfromhell.parse`` builds its tree from."""
    from mwparserfromhell.parser import Parser

    return Parser()._tokenizer.tokenize(text, 0, False)


def strip_markup(text: str, fast: bool = True) -> str:
    """Plain text of a wikitext snippet (no tidying). Raises whatever mwparserfromhell raises.

    ``fast`` first removes templates, refs and comments with :func:`prestrip` (same output, less parsing)
    and renders mwparserfromhell's token list directly (:func:`_render_tokens`) instead of its node tree.
    """
    import mwparserfromhell

    if fast:
        text = prestrip(text)
        try:
            return _render_tokens(_tokenize(text))
        except Exception:  # unusual markup, or an error the node tree will report in its own words
            pass
    code = mwparserfromhell.parse(text)
    out: list[str] = []
    _render(code, out)
    return "".join(out)


_SWITCH = re.compile(r"__[A-Z]{3,}__")
_NBSP_CHARS = "\u00a0\u2007\u202f\u200b\ufeff"
_NBSP = re.compile(r"[\u00a0\u2007\u202f\u200b\ufeff]|&nbsp;|&#160;|&#xa0;", re.I)
_LIST_MARK = re.compile(r"^[ \t]*[*#:;]+[ \t]*", re.M)
_LEFTOVER_LINES = re.compile(r"^[ \t]*(?:\|[^\n]*|!|\{\||\|\}|[-|{}\[\]]+)[ \t]*$", re.M)
_OPEN_SEPARATORS = re.compile(r"\(\s*(?:[,;:]\s*)+")
_CLOSE_SEPARATORS = re.compile(r"[,;:][\s,;:]*\)")
_EMPTY_PARENS = re.compile(r"\(\s*\)|\[\s*\]")
_SPACE_AFTER_OPEN = re.compile(r"\(\s+")
_SPACE_BEFORE_CLOSE = re.compile(r"\s+\)")
_SPACE_BEFORE_PUNCT = re.compile(r"[ \t]+([,.;:!?%)\]])")
_DOUBLE_PUNCT = re.compile(r"([,;:])(?:\s*[,;:])+")
_COMMA_BEFORE_STOP = re.compile(r"[,;:]\s*([.!?])")
_COMMA_BEFORE_DASH = re.compile(r"[,;:]\s*([–—])")
_SPACES = re.compile(r"[ \t\r\f\v]{2,}|[\t\r\f\v]")
_BLANK_LINES = re.compile(r"\n[ \t]*(?:\n[ \t]*)+")


# Cheap pre-checks: most leads need none of the substitutions they guard. A space before punctuation;
# a separator followed, after optional white space, by another separator or a stop or a dash.
_SPACED_PUNCT = re.compile(r"[ \t][,.;:!?%)\]]")
_PUNCT_RUN = re.compile(r"[,;:]\s*[,;:.!?–—]")


def _squeeze_spaces(text: str) -> str:
    """``_SPACES.sub(" ", text)``, with the common cases (no run, or runs of plain spaces) done by str methods."""
    if "\t" in text or "\r" in text or "\f" in text or "\v" in text:
        return _SPACES.sub(" ", text)
    while "  " in text:
        text = text.replace("  ", " ")
    return text


def tidy(text: str) -> str:
    """Repair what markup removal leaves behind.

    >>> tidy("Achilles (; , Akhilleus, ) was a hero , born () in  Phthia&nbsp;.")
    'Achilles (Akhilleus) was a hero, born in Phthia.'
    """
    # each substitution runs only if the text holds a character its pattern needs (same result, less scanning)
    if "&" in text or any(c in text for c in _NBSP_CHARS):
        text = _NBSP.sub(" ", text)
    if "__" in text:
        text = _SWITCH.sub("", text)
    if any(c in text for c in "|!{}[]-"):
        text = _LEFTOVER_LINES.sub("", text)
    if any(c in text for c in "*#:;"):
        text = _LIST_MARK.sub("", text)
    text = _squeeze_spaces(text)
    for _ in range(2):  # "( ; ( ) )" needs two passes (the second only if the first changed something)
        before = text
        if "(" in text:
            text = _OPEN_SEPARATORS.sub("(", text)
        if ")" in text:
            text = _CLOSE_SEPARATORS.sub(")", text)
        if "(" in text or "[" in text:
            text = _EMPTY_PARENS.sub("", text)
        if "(" in text:
            text = _SPACE_AFTER_OPEN.sub("(", text)
        if ")" in text:
            text = _SPACE_BEFORE_CLOSE.sub(")", text)
        if text == before:
            break
    if _SPACED_PUNCT.search(text):
        text = _SPACE_BEFORE_PUNCT.sub(r"\1", text)
    if _PUNCT_RUN.search(text):
        text = _DOUBLE_PUNCT.sub(r"\1", text)
        text = _COMMA_BEFORE_STOP.sub(r"\1", text)
        if "–" in text or "—" in text:
            text = _COMMA_BEFORE_DASH.sub(r" \1", text)
    text = _squeeze_spaces(text)
    if "\n" in text:
        text = _BLANK_LINES.sub("\n\n", text)
    return "\n".join(line.strip() for line in text.split("\n")).strip()


def clean_wikitext(text: str, fast: bool = True) -> str:
    """Clean plain text of a wikitext snippet: :func:`strip_markup` then :func:`tidy`."""
    return tidy(strip_markup(text, fast=fast))
