"""The XML layer of :mod:`sources.mediawiki`: the page records' fields, read by ``xml.parsers.expat`` or, for pages
of the shape MediaWiki writes, by :func:`sources.pagescan.scan_page` (``SCAN_PAGES = False``: expat reads all).

Safety: DTD entity declarations and external entities are refused (no billion laughs, no file or network
access); every limit of :mod:`sources.limits` holds.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from xml.parsers import expat

from incoherent.schemas.records import InputError
from incoherent.sources.bz2decode import (
    Counter,
    _no_count,
)
from incoherent.sources.limits import DEFAULT, Limits
from incoherent.sources.pagescan import TAIL_CHARS, has_markup, scan_page, to_int

EXPAT_BUFFER = 1 << 16  # character data handed to Python in pieces of up to this size
MAX_SCANNED_PAGE = 64 << 20  # a page not closed within this many bytes streams through expat instead
SCAN_PAGES = True  # read pages with sources.pagescan where it can (False: expat reads everything)

DEFAULT_NAMESPACES = {
    "media": -2, "special": -1, "talk": 1, "user": 2, "user talk": 3, "wikipedia": 4, "wikipedia talk": 5,
    "project": 4, "file": 6, "image": 6, "file talk": 7, "mediawiki": 8, "mediawiki talk": 9, "template": 10,
    "template talk": 11, "help": 12, "help talk": 13, "category": 14, "category talk": 15, "portal": 100,
    "portal talk": 101, "draft": 118, "draft talk": 119, "module": 828, "module talk": 829,
}  # fmt: skip
DEFAULT_BASE = "https://en.wikipedia.org/wiki/"


@dataclass
class SiteInfo:
    """What ``<siteinfo>`` says: the article URL prefix, the wiki's name and its namespace names."""

    base: str | None = None  # e.g. "https://en.wikipedia.org/wiki/" (from <base>, without the main page)
    dbname: str | None = None
    namespaces: dict[str, int] = field(default_factory=dict)  # lower-cased name -> key

    def namespace_of(self, title: str) -> int:
        """Namespace from a title prefix, for schema 0.3 dumps without ``<ns>``: ``"Talk:Pear" -> 1``."""
        if ":" not in title:
            return 0
        prefix = title.split(":", 1)[0].strip().lower().replace("_", " ")
        names = self.namespaces or DEFAULT_NAMESPACES
        return names.get(prefix, 0)


def base_url(base: str | None) -> str | None:
    """``"https://en.wikipedia.org/wiki/Main_Page" -> "https://en.wikipedia.org/wiki/"``."""
    if not base:
        return None
    return base.rsplit("/", 1)[0] + "/" if "/" in base else base


# --------------------------------------------------------------------------------------------- expat


class PageHandler:
    """expat callbacks that turn the element stream into page records (see the module docstring)."""

    def __init__(self, dump: str, site: SiteInfo | None, count: Counter, limits: Limits = DEFAULT):
        self.dump = dump
        self.limits = limits
        self.site = site or SiteInfo()
        self.count = count
        self.pages: list[dict] = []
        self.depth = 0
        self.root_closed = False
        self.in_siteinfo = False
        self.siteinfo_done = site is not None
        self.stack: list[str] = []
        self.capture: list[str] | None = None
        self.namespace_key: int | None = None
        self.page: dict | None = None
        self.revision: dict | None = None
        # text of the current revision
        self.in_text = False
        self.lead_parts: list[str] = []
        self.lead_len = 0
        self.lead_cut: int | None = None
        self.carry = ""
        self.tail = ""
        self.text_chars = 0
        self.over: str | None = None  # the limit the current revision's text passed
        self.captured = 0  # characters captured for the current metadata element

    # -- element events
    def start(self, name: str, attrs: dict) -> None:
        self.depth += 1
        parent = self.stack[-1] if self.stack else ""
        self.stack.append(name)
        if name == "page":
            self.page = {"page_id": None, "ns": None, "title": None, "redirect": None}
            self.revision = None
        elif self.page is not None:
            if name == "revision" and parent == "page":
                self.revision = {"revision_id": None, "timestamp": None}
                self._reset_text()
            elif name == "text" and self.revision is not None:
                self.in_text = True
                self._reset_text()
            elif name in ("title", "ns") and parent == "page":
                self.capture = []
            elif name == "id" and parent in ("page", "revision"):
                self.capture = []
            elif name == "timestamp" and parent == "revision":
                self.capture = []
            elif name == "redirect" and parent == "page":
                self.page["redirect"] = attrs.get("title", "")
        elif name == "siteinfo":
            self.in_siteinfo = True
        elif self.in_siteinfo and name in ("base", "dbname"):
            self.capture = []
        elif self.in_siteinfo and name == "namespace":
            self.capture = []
            try:
                self.namespace_key = int(attrs.get("key", ""))
            except ValueError:
                self.namespace_key = None

    def end(self, name: str) -> None:
        self.depth -= 1
        self.stack.pop()
        parent = self.stack[-1] if self.stack else ""
        if self.depth == 0:
            self.root_closed = True
        value = None
        if self.capture is not None:
            value = "".join(self.capture)
            self.capture = None
            self.captured = 0
        if self.page is not None:
            if name == "page":
                self._finish_page()
            elif name == "text" and self.in_text:
                self.in_text = False
                self._finish_text()
            elif name == "title" and parent == "page":
                self.page["title"] = value
            elif name == "ns" and parent == "page":
                self.page["ns"] = to_int(value)
            elif name == "id" and parent == "page":
                self.page["page_id"] = to_int(value)
            elif name == "id" and parent == "revision" and self.revision is not None:
                self.revision["revision_id"] = to_int(value)
            elif name == "timestamp" and parent == "revision" and self.revision is not None:
                self.revision["timestamp"] = value
        elif self.in_siteinfo:
            if name == "siteinfo":
                self.in_siteinfo = False
                self.siteinfo_done = True
            elif name == "base":
                self.site.base = base_url(value)
            elif name == "dbname":
                self.site.dbname = value
            elif name == "namespace" and self.namespace_key is not None and value:
                self.site.namespaces[value.strip().lower()] = self.namespace_key

    def data(self, text: str) -> None:
        if self.in_text:
            self._text(text)
        elif self.capture is not None:
            self.captured += len(text)
            if self.captured <= self.limits.max_text_chars:  # a title is short; a hostile one stays bounded
                self.capture.append(text)

    # -- wikitext of the current revision, cut to its lead while it streams in
    def _reset_text(self) -> None:
        self.lead_parts = []
        self.lead_len = 0
        self.lead_cut = None
        self.carry = ""
        self.tail = ""
        self.text_chars = 0
        self.over = None

    def _text(self, text: str) -> None:
        self.text_chars += len(text)
        if self.over is None:
            self.over = self.limits.over_record(self.text_chars)
        if self.lead_cut is None and self.over is None:
            # a heading is "==" at the start of the text or after a newline; pieces can split either
            probe = self.carry + text
            offset = self.lead_len - len(self.carry)  # where the probe starts in the text
            if offset == 0 and probe.startswith("=="):
                self.lead_cut = 0
            else:
                newline = probe.find("\n==")
                if newline >= 0:
                    self.lead_cut = offset + newline + 1
            self.lead_parts.append(text)
            self.lead_len += len(text)
            self.carry = probe[-2:]
            if self.lead_cut is None:  # no heading yet: the lead is already too long, stop holding it
                self.over = self.limits.over_text(self.lead_len)
        self.tail = text[-TAIL_CHARS:] if len(text) >= TAIL_CHARS else (self.tail + text)[-TAIL_CHARS:]

    def _finish_text(self) -> None:
        full = "".join(self.lead_parts)
        if self.lead_cut is None:
            lead, tail = full, ""
        else:
            lead = full[: self.lead_cut]
            after = self.text_chars - self.lead_cut
            tail = self.tail[max(0, len(self.tail) - after) :]
        self.revision["lead"] = lead
        self.revision["tail"] = tail
        self.revision["over"] = self.over
        self.lead_parts = []

    def _finish_page(self) -> None:
        page, revision = self.page, self.revision or {}
        self.page = self.revision = None
        self.add(
            {
                "page_id": page["page_id"],
                "ns": page["ns"],
                "title": page["title"] or "",
                "redirect": page["redirect"],
                "revision_id": revision.get("revision_id"),
                "timestamp": revision.get("timestamp"),
                "lead": revision.get("lead", ""),
                "tail": revision.get("tail", ""),
            },
            over=revision.get("over"),
        )

    def add(self, fields: dict, size: int = 0, over: str | None = None) -> None:
        """Complete a page's fields (from expat or :func:`sources.pagescan.scan_page`) into its record.

        A page over a limit (``over``, or its ``size`` in bytes, or its lead's length) keeps the first 200
        characters of its lead and says which limit in ``rejected``: :func:`sources.wikipedia.page_to_document`
        dead-letters it.
        """
        over = over or self.limits.over_record(size) or self.limits.over_text(len(fields["lead"]))
        if over:
            fields["lead"] = fields["lead"][:200]
            fields["tail"] = ""
            fields["rejected"] = over
        if fields["ns"] is None:  # schema 0.3 has no <ns>: the title's prefix says
            fields["ns"] = self.site.namespace_of(fields["title"])
        fields["dump"] = self.dump
        fields["base"] = self.site.base or DEFAULT_BASE
        self.count("pages_read", 1)
        self.pages.append(fields)

    def between_pages(self) -> bool:
        """Inside the root, outside any page: where a whole ``<page>`` may be read by the fast path."""
        return self.depth == 1 and self.page is None and not self.in_siteinfo and not self.root_closed


def _refuse_entity(name, is_parameter_entity, value, base, system_id, public_id, notation_name):
    kind = "external" if system_id or public_id else "internal"
    raise InputError(f"DTD declares {kind} entity {name!r}; entity declarations are refused")


def _refuse_external(context, base, system_id, public_id):
    raise InputError(f"external entity reference ({system_id}) refused")


def make_parser(handler: PageHandler) -> expat.XMLParserType:
    parser = expat.ParserCreate(encoding="UTF-8")
    parser.buffer_text = True
    parser.buffer_size = EXPAT_BUFFER
    parser.ordered_attributes = False
    parser.StartElementHandler = handler.start
    parser.EndElementHandler = handler.end
    parser.CharacterDataHandler = handler.data
    parser.EntityDeclHandler = _refuse_entity
    parser.ExternalEntityRefHandler = _refuse_external
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    return parser


_DECLARATION_ONLY = re.compile(rb"\s*<\?xml[^>]*\?>")


def _plain_prolog(prolog: bytes) -> bool:
    """True when the bytes before the first page hold no comment, PI, DOCTYPE or CDATA (an XML declaration
    at the start aside): then the first ``<page>`` found with ``bytes.find`` is an element of the root."""
    declaration = _DECLARATION_ONLY.match(prolog)
    return not has_markup(prolog, declaration.end() if declaration else 0, len(prolog))


def parse_pages(
    chunks: Iterable[bytes],
    handler: PageHandler,
    path: str,
    *,
    suffix: bytes = b"",
    count: Counter = _no_count,
    scan: bool | None = None,
) -> Iterator[dict]:
    """Parse a UTF-8 stream and yield page records as they complete. ``suffix`` is fed before the end.

    With ``scan``, each ``<page>`` element that :func:`sources.pagescan.scan_page` can read is read by it
    (most of them, far faster); expat gets everything else, and the pages read that way as white space of
    the same shape, so it still checks the document around them and stays the reference for every page the
    fast path declines. Pages longer than ``MAX_SCANNED_PAGE`` (full-history files) and everything after
    a comment, processing instruction or DOCTYPE outside a page go to expat as they stream.
    """
    stream = _PageStream(make_parser(handler), handler, SCAN_PAGES if scan is None else scan)
    chunks = iter(chunks)
    try:
        for chunk in chunks:
            stream.take(chunk)
            if handler.pages:
                yield from handler.pages
                handler.pages.clear()
        stream.finish(suffix)
        yield from handler.pages
        handler.pages.clear()
    except expat.ExpatError as exc:
        if handler.root_closed:  # junk after </mediawiki>: the pages are complete, ignore the rest
            junk = (
                max(0, stream.fed - stream.parser.CurrentByteIndex)
                + stream.unfed
                + sum(len(c) for c in chunks)
            )
            count("trailing_junk_bytes", junk)
            count("files_with_trailing_junk", 1)
            yield from handler.pages
            handler.pages.clear()
            return
        raise stream.not_well_formed(path, exc) from None
    except InputError as exc:
        message = str(exc)
        if not message.startswith(path):
            message = f"{path}: {message}"
        raise InputError(message) from None


class _PageStream:
    """The state of :func:`parse_pages` between chunks: expat, the scanning buffer and the byte bookkeeping
    that turns expat's byte index into the file's when the fast path has read pages expat never saw."""

    def __init__(self, parser: expat.XMLParserType, handler: PageHandler, scan: bool):
        self.parser, self.handler, self.scan = parser, handler, scan
        self.fed = 0  # bytes given to expat
        self.unfed = 0  # bytes of the scanning buffer that expat has not been given yet (for the junk count)
        self.skipped = 0  # bytes of pages read by the fast path, which expat never sees
        self.skips: list[
            tuple[int, int]
        ] = []  # (expat's byte index, bytes skipped before it), where skipped grows
        self.buffer, self.prolog, self.retry_at = b"", True, 0
        self.searched = 0  # no "</page>" in buffer[start:searched] (the open page's bytes looked at already)

    def feed(self, data: bytes) -> None:
        self.fed += len(data)
        self.parser.Parse(data, False)

    def skip(self, n: int) -> None:
        self.skipped += n
        self.skips.append((self.fed, self.skipped))

    def take(self, chunk: bytes) -> None:
        """One chunk of the stream: to expat whole, or through the page scanner."""
        if not self.scan:
            self.unfed = 0
            self.feed(chunk)
        else:
            self.take_scanning(chunk)

    def take_scanning(self, chunk: bytes) -> None:
        handler, feed, skip = self.handler, self.feed, self.skip
        buffer = self.buffer + chunk if self.buffer else chunk
        prolog, scan, retry_at, searched = self.prolog, self.scan, self.retry_at, self.searched
        pos = 0
        while True:
            start = buffer.find(b"<page>", pos)
            if start < 0:
                keep = max(pos, len(buffer) - len(b"<page>"))  # a tag cut by the chunk boundary
                self.unfed = len(buffer) - keep
                feed(buffer[pos:keep])
                pos = keep
                break
            if pos < start:
                if prolog:
                    scan = plain = _plain_prolog(buffer[pos:start])
                else:
                    plain = buffer[pos:start].isspace()
                    if not plain and has_markup(buffer, pos, start):
                        scan = False
                self.unfed = len(buffer) - start
                if plain and not prolog:
                    skip(start - pos)  # white space between pages: nothing for expat
                else:
                    feed(buffer[pos:start])
            else:
                plain = True
            prolog = False
            if not scan or handler.root_closed:
                scan, self.unfed = False, 0
                feed(buffer[start:])
                pos = len(buffer)
                break
            fields, end = None, 0
            if plain and len(buffer) >= retry_at and handler.between_pages():
                fields, end = scan_page(buffer, start, len(buffer))
            if fields is None:
                close = buffer.find(b"</page>", max(start, searched))
                if close < 0:  # the page goes on in the next chunks
                    searched = len(buffer) - len(b"</page>") + 1
                    if len(buffer) - start > MAX_SCANNED_PAGE:
                        scan, self.unfed = False, 0
                        feed(buffer[start:])
                        pos = len(buffer)
                    else:
                        pos = start
                        retry_at = 2 * (len(buffer) - start)
                    break
                end = close + len(b"</page>")
                self.unfed = len(buffer) - end
                feed(buffer[start:end])  # expat reads this one
            else:
                skip(end - start)
                handler.add(fields, size=end - start)
            retry_at = searched = 0
            pos = end
        if scan:
            self.buffer = buffer[pos:]
            self.retry_at = retry_at and retry_at - pos
            self.searched = max(0, searched - pos)
        else:
            self.buffer = b""
            self.retry_at, self.searched = retry_at, searched
        self.prolog, self.scan = prolog, scan

    def finish(self, suffix: bytes) -> None:
        self.unfed = 0
        if self.buffer:
            self.feed(self.buffer)
        self.parser.Parse(suffix, True)

    def not_well_formed(self, path: str, exc: expat.ExpatError) -> InputError:
        """The one line for a stream expat refused, at the file's own byte offset when pages were skipped."""
        parser, skips = self.parser, self.skips
        where = f"line {exc.lineno}, column {exc.offset}"
        if skips and parser.ErrorByteIndex >= skips[0][0]:  # pages read by the fast path came before
            before = skips[bisect.bisect_right(skips, (parser.ErrorByteIndex, float("inf"))) - 1][1]
            where = f"byte {parser.ErrorByteIndex + before} of the XML"
        reason = expat.errors.messages[exc.code]
        if exc.code == expat.errors.codes[expat.errors.XML_ERROR_NO_ELEMENTS]:
            reason = "document ends before its root element closes (truncated file?)"
        return InputError(f"{path}: not well-formed XML ({reason}, {where})")
