"""A page record of :mod:`sources.mediawiki` -> a document row of its lead section, or a :class:`Rejected`.

>>> page = {"page_id": 39, "ns": 0, "title": "Albedo", "redirect": None, "revision_id": 7, "timestamp": "2016",
...         "lead": "'''Albedo''' ({{IPAc-en|æ|l}}) is a measure. It is reflection.", "tail": "",
...         "dump": "enwiki.xml.bz2", "base": "https://en.wikipedia.org/wiki/"}
>>> next(page_to_document(page))["sentences"]
['Albedo is a measure.', 'It is reflection.']

Reasons for rejection (counted by the Beam wrapper as ``ingest-wikipedia/<reason>``): ``not_article``
(namespace other than 0), ``redirect``, ``disambiguation``, ``missing_id``, ``parse_error`` (mwparserfromhell
failed on the lead, or it decodes to invalid Unicode such as the lone surrogate of ``&#xD800;``), ``empty_lead`` (no sentence left after cleaning).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from incoherent.schemas.records import Rejected, document
from incoherent.sources.sentences import split_sentences
from incoherent.sources.wikitext import clean_wikitext, disambiguation_marker, is_redirect

_URL_UNSAFE = re.compile(r"[%?#\"<>\s\\^`{|}]")


def article_url(base: str, title: str) -> str:
    """``article_url("https://en.wikipedia.org/wiki/", "Abraham Lincoln")`` -> ``.../wiki/Abraham_Lincoln``.

    Only characters that would break a URL are percent-encoded (``?``, ``#``, ``%``, quotes, spaces...).
    """
    path = title.strip().replace(" ", "_")
    return base + _URL_UNSAFE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group(0).encode("utf-8")), path)


def compact(page: dict) -> dict:
    """The page record with only what :func:`page_to_document` needs, to keep shuffles small.

    The tail of the text is replaced by the ``disambiguation`` marker found in it; redirects and pages
    outside namespace 0 keep only the first 200 characters of their lead (for the dead-letter detail).
    """
    page = dict(page)
    tail = page.pop("tail", "") or ""
    page["disambiguation"] = disambiguation_marker(page.get("title") or "", page.get("lead") or "", tail)
    if page.get("ns", 0) != 0 or page.get("redirect") is not None or is_redirect(page.get("lead") or ""):
        page["lead"] = (page.get("lead") or "")[:200]
    return page


def page_to_document(page: dict, source: str = "wikipedia") -> Iterator[dict | Rejected]:
    """Yield the document row of a namespace-0 article page, or one :class:`Rejected` saying why not."""
    page_id = page.get("page_id")
    title = page.get("title") or ""
    doc_id = f"{source}:{page_id}" if page_id is not None else None
    lead = page.get("lead") or ""

    def reject(reason: str, detail: str | None = None, record=None) -> Rejected:
        return Rejected(reason, id=doc_id, source=source, detail=detail, record=record)

    if page_id is None:
        yield reject("missing_id", detail=title or None)
        return
    if page.get("rejected"):  # over a size limit (sources.limits): the reader kept only the lead's start
        yield reject(
            page["rejected"],
            detail=f"{title}: over the limit (--max-text-chars, --max-record-mb)",
            record=lead or None,
        )
        return
    if page.get("ns", 0) != 0:
        yield reject("not_article", detail=f"ns={page.get('ns')}: {title}")
        return
    if page.get("redirect") is not None or is_redirect(lead):
        target = page.get("redirect") or lead.strip()[:200]
        yield reject("redirect", detail=f"{title} -> {target}")
        return
    marker = (
        page["disambiguation"]
        if "disambiguation" in page
        else disambiguation_marker(title, lead, page.get("tail") or "")
    )
    if marker:
        yield reject("disambiguation", detail=f"{title}: {marker}")
        return
    try:
        text = clean_wikitext(lead)
        text.encode("utf-8")  # entities such as &#xD800; decode to lone surrogates that no file can hold
    except Exception as exc:  # mwparserfromhell's tokenizer and our walker: any failure is this page's
        yield reject("parse_error", detail=f"{title}: {type(exc).__name__}: {exc}"[:500], record=lead)
        return
    sentences = split_sentences(text)
    if not sentences:
        yield reject("empty_lead", detail=f"{title}: {len(lead)} chars of lead wikitext", record=lead or None)
        return
    base = page.get("base") or "https://en.wikipedia.org/wiki/"
    yield document(
        id=doc_id,
        source=source,
        sentences=sentences,
        title=title,
        url=article_url(base, title),
        dump=page.get("dump"),
        revision_id=page.get("revision_id"),
        timestamp=page.get("timestamp"),
    )
