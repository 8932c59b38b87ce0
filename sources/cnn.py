"""CNN ``.story`` files (DeepMind Q&A layout) -> document rows.

A story is paragraphs separated by blank lines, then ``@highlight`` blocks. We keep the article body only,
strip the ``CITY (CNN) --`` dateline and the page furniture the crawl left in the text (``E-mail to a friend``,
``Watch ... »`` teasers).

>>> clean_body("WASHINGTON (CNN) -- Bush spoke.  Watch the speech »\\n\\nHe left. E-mail to a friend")
['Bush spoke.', 'He left.']
"""

from __future__ import annotations

import os
import re
import tarfile
from collections.abc import Iterator

from schemas.records import InputError, Rejected, document
from sources.paths import Files, expand_inputs
from sources.sentences import merge_fragments, split_sentences

SOURCE = "cnn"
ARCHIVE_SUFFIXES = (".tgz", ".tar.gz", ".tar")
_DATELINE = re.compile(
    r"^\s*(?:[A-Z][\w.'’\- ]*(?:,\s*[\w.'’\- ]+)*\s*)?\(CNN[^)\n]{0,30}\)\s*(?:--\s*|—\s*)?"
)
_TEASER = re.compile(r"(?:^|\s{2,}|(?<=[.!?\"'”]) )[^»\n.!?]{0,200}»\s*$")
_FURNITURE = re.compile(r"\s*\bE-mail to a friend\b\s*")


def clean_body(body: str) -> list[str]:
    """Article paragraphs (without dateline and furniture), in order; empty paragraphs dropped."""
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", body)]
    cleaned: list[str] = []
    for i, paragraph in enumerate(paragraphs):
        if i == 0 or not cleaned:
            paragraph = _DATELINE.sub("", paragraph, count=1)
        paragraph = _FURNITURE.sub(" ", paragraph)
        paragraph = _TEASER.sub("", paragraph).strip()
        if paragraph:
            cleaned.append(" ".join(paragraph.split()))
    return cleaned


def parse_story(name: str, data: bytes, origin: str) -> Iterator[dict | Rejected]:
    """One ``.story`` file's bytes -> a document row, or a Rejected with the reason.

    ``name`` is the file name (its stem, the sha1 of the story's URL, becomes the id ``cnn:<sha1>``).
    """
    stem = os.path.basename(name)
    stem = stem[: -len(".story")] if stem.endswith(".story") else stem
    doc_id = f"{SOURCE}:{stem}"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        yield Rejected("not_utf8", id=doc_id, source=SOURCE, detail=f"{origin}: {exc}")
        return
    if not text.strip():
        yield Rejected("empty_story", id=doc_id, source=SOURCE, detail=origin)
        return
    body = text.split("@highlight", 1)[0]
    paragraphs = clean_body(body)
    # FRANK-style stories put every sentence in its own paragraph, so a lone quote can be a paragraph.
    sentences = merge_fragments([s for p in paragraphs for s in split_sentences(p)])
    if not sentences:
        yield Rejected("empty_body", id=doc_id, source=SOURCE, detail=origin, record=text[:500])
        return
    yield document(doc_id, SOURCE, sentences, dump=os.path.basename(origin))


def list_inputs(paths: list[str], files: Files | None = None) -> list[str]:
    """Expand directories into their ``.story`` files (recursively); archives and single stories as given."""
    return expand_inputs(
        paths,
        (".story",),
        (".story", *ARCHIVE_SUFFIXES),
        "a .story file, a directory of them, or a .tgz archive",
        files,
    )


def _is_archive(path: str) -> bool:
    return path.endswith(ARCHIVE_SUFFIXES)


def read_input(path: str) -> Iterator[tuple[str, bytes, str]]:
    """``(name, bytes, origin)`` of every story in a ``.story`` file or an archive such as ``cnn_stories.tgz``."""
    if not _is_archive(path):
        with open(path, "rb") as f:
            yield os.path.basename(path), f.read(), path
        return
    try:
        with tarfile.open(path, "r:*") as archive:
            for member in archive:
                if member.isfile() and member.name.endswith(".story"):
                    handle = archive.extractfile(member)
                    yield os.path.basename(member.name), handle.read(), f"{path}!{member.name}"
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise InputError(f"{path}: unreadable archive ({exc})") from None


def stories(path: str) -> Iterator[dict | Rejected]:
    for name, data, origin in read_input(path):
        yield from parse_story(name, data, origin)
