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
from collections.abc import Callable, Iterator

from incoherent.fileio.paths import Files, expand_inputs, open_regular
from incoherent.schemas.records import InputError, Rejected, document
from incoherent.sources.limits import DEFAULT, Limits
from incoherent.sources.sentences import merge_fragments, split_sentences

SOURCE = "cnn"
ARCHIVE_SUFFIXES = (".tgz", ".tar.gz", ".tar")
_DATELINE = re.compile(
    r"^\s*(?:[A-Z][\w.'’\- ]*(?:,\s*[\w.'’\- ]+)*\s*)?\(CNN[^)\n]{0,30}\)\s*(?:--\s*|—\s*)?"
)
_TEASER = re.compile(r"(?:^|\s{2,}|(?<=[.!?\"'”]) )[^»\n.!?]{0,200}»\s*$")
_FURNITURE = re.compile(r"\s*\bE-mail to a friend\b\s*")

Counter = Callable[[str, int], None]


def _no_count(name: str, n: int = 1) -> None:
    pass


def _stem(name: str) -> str:
    stem = os.path.basename(name)
    return stem[: -len(".story")] if stem.endswith(".story") else stem


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


def parse_story(
    name: str, data: bytes, origin: str, limits: Limits = DEFAULT, source: str = SOURCE
) -> Iterator[dict | Rejected]:
    """One ``.story`` file's bytes -> a document row of ``source``, or a Rejected with the reason.

    ``name`` is the file name (its stem, the sha1 of the story's URL, becomes the id ``<source>:<sha1>``,
    ``cnn:<sha1>`` by default). A story longer than ``limits.max_text_chars`` characters is a Rejected
    (``text_too_long``).
    """
    doc_id = f"{source}:{_stem(name)}"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        yield Rejected("not_utf8", id=doc_id, source=source, detail=f"{origin}: {exc}")
        return
    over = limits.over_record(len(data)) or limits.over_text(len(text))
    if over:
        yield Rejected(
            over, id=doc_id, source=source, detail=f"{origin}: {len(text)} characters", record=text[:500]
        )
        return
    if not text.strip():
        yield Rejected("empty_story", id=doc_id, source=source, detail=origin)
        return
    body = text.split("@highlight", 1)[0]
    paragraphs = clean_body(body)
    # FRANK-style stories put every sentence in its own paragraph, so a lone quote can be a paragraph.
    sentences = merge_fragments([s for p in paragraphs for s in split_sentences(p)])
    if not sentences:
        yield Rejected("empty_body", id=doc_id, source=source, detail=origin, record=text[:500])
        return
    yield document(doc_id, source, sentences, dump=os.path.basename(origin))


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


def _member_kind(member: tarfile.TarInfo) -> str | None:
    """The counter of an archive member that is not a regular file or a directory, else None."""
    if member.issym():
        return "archive_symlinks"
    if member.ischr() or member.isblk():
        return "archive_devices"
    if member.isfifo():
        return "archive_fifos"
    if member.isfile() or member.isdir() or member.islnk():
        return None
    return "archive_other_members"


def read_input(
    path: str, limits: Limits = DEFAULT, count: Counter = _no_count, source: str = SOURCE
) -> Iterator[tuple[str, bytes, str] | Rejected]:
    """``(name, bytes, origin)`` of every story in a ``.story`` file or an archive such as ``cnn_stories.tgz``.

    A story larger than ``limits.max_record_bytes`` is a Rejected (``record_too_large``), never read. Archive
    members that are symbolic links, devices or FIFOs are Rejected too (counted by kind, never followed);
    a hard link is read as the story it points to (and counted as ``archive_hardlinks``).
    """
    if not _is_archive(path):
        with open_regular(path) as f:
            size = os.fstat(f.fileno()).st_size
            over = limits.over_record(size)
            if over:
                yield Rejected(
                    over, id=f"{source}:{_stem(path)}", source=source, detail=f"{path}: {size} bytes"
                )
                return
            yield os.path.basename(path), f.read(limits.max_record_bytes + 1), path
        return
    try:
        with open_regular(path) as raw, tarfile.open(fileobj=raw, mode="r:*") as archive:
            for member in archive:
                origin = f"{path}!{member.name}"
                kind = _member_kind(member)
                if kind is not None:
                    yield Rejected(kind, source=source, detail=f"{origin}: not a regular file, not read")
                    continue
                if member.isdir() or not member.name.endswith(".story"):
                    continue
                if member.islnk():
                    count("archive_hardlinks", 1)
                    try:
                        target = archive._find_link_target(member)  # what extractfile reads for a hard link
                    except KeyError:
                        yield Rejected(
                            "archive_broken_hardlinks", source=source, detail=f"{origin} -> {member.linkname}"
                        )
                        continue
                    size = target.size
                else:
                    size = member.size
                over = limits.over_record(size)
                if over:
                    stem = _stem(member.name)
                    yield Rejected(
                        over, id=f"{source}:{stem}", source=source, detail=f"{origin}: {size} bytes"
                    )
                    continue
                handle = archive.extractfile(member)
                yield os.path.basename(member.name), handle.read(size), origin
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise InputError(f"{path}: unreadable archive ({exc})") from None


def stories(
    path: str, limits: Limits = DEFAULT, count: Counter = _no_count, source: str = SOURCE
) -> Iterator[dict | Rejected]:
    """The documents (ids ``<source>:<sha1>``) and Rejected records of one story file or archive."""
    for item in read_input(path, limits, count, source):
        if isinstance(item, Rejected):
            yield item
        else:
            yield from parse_story(*item, limits=limits, source=source)
