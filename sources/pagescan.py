"""Fast path of the dump reader: one ``<page>...</page>`` element (bytes, UTF-8) -> its page record.

Expat turns every character of every article into Python strings, although only the lead and the last
:data:`TAIL_CHARS` characters are used: on a 60-repeat benchmark dump that is 365 MB of XML for 12,360 pages,
2.4 CPU-s on the thread that also cleans and splits the leads. :func:`scan_page` reads a page of the shape
MediaWiki writes with ``bytes.find`` and a few anchored regular expressions, and decodes only the page's
metadata, its lead and its tail::

    >>> page = (b"<page><title>A &amp; B</title><ns>0</ns><id>7</id><revision><id>9</id>"
    ...         b"<timestamp>2020-01-01T00:00:00Z</timestamp><text bytes=\\"30\\">Lead &lt;i&gt;.\\n== H ==\\nBody"
    ...         b"</text></revision></page>")
    >>> fields, end = scan_page(page, 0, len(page))
    >>> fields["title"], fields["lead"], fields["tail"], end == len(page)
    ('A & B', 'Lead <i>.\\n', '== H ==\\nBody', True)

It walks the page forward (header, each ``<revision>``, one ``memchr`` for the ``<`` that must open
``</text>``, ``</revision>``, ``</page>``) without copying it out of the read buffer. It declines (``None``)
anything it cannot read exactly as expat would: a comment, CDATA or processing instruction, a carriage
return, a character reference or an unknown entity where it decodes, invalid UTF-8 or a control character
there, elements in an order MediaWiki does not write, markup inside ``<text>``. :func:`sources.mediawiki_xml.parse_pages`
then gives that page to expat, whose records and errors are the reference; a test holds the two paths to
the same records on every bundled dump and on generated edge cases.

What it does not check: the bytes of an article body between its lead and its tail are neither decoded
nor checked for well-formedness (a stray ``<`` anywhere in the text is still caught).
"""

from __future__ import annotations

import re

# Characters kept from the end of a page's text (disambiguation templates sit at the bottom).
TAIL_CHARS = 4000

_ATTRS = rb"((?:\s+[A-Za-z_][\w.:-]*\s*=\s*(?:\"[^\"<]*\"|'[^'<]*'))*)\s*"
_HEAD = re.compile(
    rb"<page>\s*<title>([^<]*)</title>\s*(?:<ns>([^<]*)</ns>\s*)?<id>([^<]*)</id>\s*"
    rb"(?:<redirect" + _ATTRS + rb"(?:/>|></redirect>)\s*)?"
    rb"(?:<restrictions>[^<]*</restrictions>\s*)?"
)
_ATTR = re.compile(rb"([A-Za-z_][\w.:-]*)\s*=\s*(?:\"([^\"<]*)\"|'([^'<]*)')")
_REVISION_ID = re.compile(rb"<revision>\s*<id>([^<]*)</id>")
_TIMESTAMP = re.compile(rb"<timestamp>([^<]*)</timestamp>")
_TEXT = re.compile(rb"<text" + _ATTRS + rb"(/?)>")
_SPACE = re.compile(rb"\s*")
# Bytes expat refuses (control characters) or rewrites (carriage returns): this path declines them.
_CONTROL = bytes([*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0D, 0x20)])
_ENTITIES = (("&lt;", "<"), ("&gt;", ">"), ("&quot;", '"'), ("&apos;", "'"))


def to_int(value: str | None) -> int | None:
    """``" 12 " -> 12``; None for None or anything that is not an integer."""
    try:
        return int(value.strip()) if value is not None else None
    except ValueError:
        return None


def xml_text(raw: bytes) -> str | None:
    r"""Character data as expat reports it (predefined entities only), or None where it could differ.

    >>> xml_text(b"Fish &amp; chips &lt;3"), xml_text(b"&#39;"), xml_text(b"&nbsp;"), xml_text(b"a\r\nb")
    ('Fish & chips <3', None, None, None)
    """
    if len(raw.translate(None, _CONTROL)) != len(raw):
        return None
    if raw.find(b"\xef\xbf") >= 0 and (raw.find(b"\xef\xbf\xbe") >= 0 or raw.find(b"\xef\xbf\xbf") >= 0):
        return None  # U+FFFE, U+FFFF: not XML characters
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if "&" not in text:
        return text
    for entity, char in _ENTITIES:
        text = text.replace(entity, char)
    amp = text.count("&amp;")
    if text.count("&") != amp:  # a character reference, an unknown entity or a bare '&': expat decides
        return None
    return text.replace("&amp;", "&") if amp else text


def _attribute(attrs: bytes, name: bytes) -> str | None:
    """Value of attribute ``name`` with expat's normalisation (tab and newline -> space); None: decline."""
    for match in _ATTR.finditer(attrs):
        if match.group(1) == name:
            raw = match.group(2) if match.group(2) is not None else match.group(3)
            value = xml_text(raw)
            return None if value is None else value.replace("\t", " ").replace("\n", " ")
    return ""


def _tail(buf: bytes, cut: int, end: int) -> str | None:
    """The last TAIL_CHARS characters of the text in ``buf[cut:end]``, decoding as little as it can."""
    size = TAIL_CHARS + 256
    while True:
        start = end - size
        if start <= cut:
            tail = xml_text(buf[cut:end])
            return None if tail is None else tail[-TAIL_CHARS:]
        while 0x80 <= buf[start] < 0xC0:  # not inside a UTF-8 sequence
            start += 1
        semicolon, amp = buf.find(b";", start, start + 8), buf.find(b"&", start, start + 8)
        if semicolon >= 0 and (amp < 0 or semicolon < amp):  # not inside an entity reference
            start = semicolon + 1
        if buf.find(b"&#", max(cut, start - 32), start) >= 0:
            return None  # a character reference across the boundary: expat decides
        tail = xml_text(buf[start:end])
        if tail is None or len(tail) >= TAIL_CHARS:
            return None if tail is None else tail[-TAIL_CHARS:]
        size *= 2


def _lead_and_tail(buf: bytes, start: int, end: int) -> tuple[str, str] | None:
    """Text before the first ``==`` at a line start (expat path: ``re.compile("^==", re.M)``), and the tail."""
    if buf.startswith(b"==", start):
        cut = start
    else:
        cut = buf.find(b"\n==", start, end)
        if cut < 0:
            lead = xml_text(buf[start:end])
            return None if lead is None else (lead, "")
        cut += 1
    lead = xml_text(buf[start:cut])
    if lead is None:
        return None
    tail = _tail(buf, cut, end)
    return None if tail is None else (lead, tail)


def has_markup(buf: bytes, start: int, end: int) -> bool:
    """Markup other than elements in ``buf[start:end]`` (comment, CDATA, DOCTYPE, processing instruction)."""
    return buf.find(b"<!", start, end) >= 0 or buf.find(b"<?", start, end) >= 0


def scan_page(buf: bytes, start: int, limit: int) -> tuple[dict | None, int]:
    """Read the ``<page>`` element at ``buf[start]``, looking no further than ``limit``.

    Returns ``(fields, end)`` with ``buf[start:end]`` the whole element, or ``(None, 0)`` when this path
    does not read it: the element runs past ``limit`` (call again with more bytes), or it is not of the
    shape this path reads exactly (expat reads it). Fields: ``page_id``, ``ns`` (None where the page has no ``<ns>``), ``title``, ``redirect``,
    ``revision_id``, ``timestamp``, ``lead`` and ``tail`` of the last revision, as the expat handler of
    :mod:`sources.mediawiki` collects them; that module completes the record.
    """
    head = _HEAD.match(buf, start, limit)
    if head is None:
        return None, 0
    title_raw, ns_raw, id_raw, redirect_attrs = head.groups()
    pos, last = head.end(), None
    while buf.startswith(b"<revision>", pos):  # find the last revision, reading only the element tags
        text = buf.find(b"<text", pos, limit)
        closing = buf.find(b"</revision>", pos, limit if text < 0 else text)
        if closing < 0:
            if text < 0:
                return None, 0
            match = _TEXT.match(buf, text, limit)
            if match is None:
                return None, 0
            body = match.end()
            if match.group(2):  # <text ... />: deleted or empty
                text_end = body
            else:
                text_end = buf.find(b"<", body, limit)
                if text_end < 0:
                    return None, 0
                if not buf.startswith(b"</text>", text_end):
                    return None, 0  # markup inside the text: expat decides
                text_end += len(b"</text>")
            closing = buf.find(b"</revision>", text_end, limit)
            if closing < 0:
                return None, 0
            if has_markup(buf, text_end, closing) or buf.find(b"<text", text_end, closing) >= 0:
                return None, 0
        else:
            match = body = text_end = None
        if has_markup(buf, pos, match.start() if match else closing):
            return None, 0
        last = (pos, match, body, text_end, closing)
        pos = _SPACE.match(buf, closing + len(b"</revision>"), limit).end()
    if not buf.startswith(b"</page>", pos, limit):
        return None, 0  # more to come, or <upload>, <discussionthreadinginfo>... that MediaWiki rarely writes
    end = pos + len(b"</page>")

    title, page_id = xml_text(title_raw), xml_text(id_raw)
    ns = xml_text(ns_raw) if ns_raw is not None else None
    if title is None or page_id is None or (ns_raw is not None and ns is None):
        return None, 0
    redirect = None
    if redirect_attrs is not None:
        redirect = _attribute(redirect_attrs, b"title")
        if redirect is None:
            return None, 0
    fields = {
        "page_id": to_int(page_id),
        "ns": to_int(ns),
        "title": title,
        "redirect": redirect,
        "revision_id": None,
        "timestamp": None,
        "lead": "",
        "tail": "",
    }
    if last is None:
        return fields, end
    rev_start, match, body, text_end, closing = last
    rev_id = _REVISION_ID.match(buf, rev_start, closing)
    revision_id = xml_text(rev_id.group(1)) if rev_id is not None else None
    if revision_id is None:
        return None, 0  # no <id> first in the revision: not MediaWiki's order
    fields["revision_id"] = to_int(revision_id)
    stamp = _TIMESTAMP.search(buf, rev_id.end(), match.start() if match else closing)
    if stamp is not None:
        fields["timestamp"] = xml_text(stamp.group(1))
        if fields["timestamp"] is None:
            return None, 0
    if match is not None and not match.group(2):
        parts = _lead_and_tail(buf, body, text_end - len(b"</text>"))
        if parts is None:
            return None, 0
        fields["lead"], fields["tail"] = parts
    return fields, end
