"""Size limits of the ingest readers: what one record, one text and one dump header may hold.

Every reader is bounded by construction: decompression hands out at most :data:`DECOMPRESS_CHUNK` bytes per
call (a few KB of bz2 can expand to gigabytes), and each record is checked against :class:`Limits` before it
is held whole. A record over a limit is counted and dead-lettered, never fatal; a dump whose header
(everything before its first ``<page>``) passes ``max_header_bytes`` is unusable (one line, exit 2). The
limits and the flags that raise them are listed in ``docs/input-limits.md``.

>>> Limits.from_flags(max_text_chars=10, max_record_mb=1).max_record_bytes
1048576
>>> Limits().over_text(2_000_000)
'text_too_long'
"""

from __future__ import annotations

import argparse
from dataclasses import asdict, dataclass

DECOMPRESS_CHUNK = 1 << 20  # most decompressed bytes one decompress call may return
MAX_TEXT_CHARS = 1_000_000  # a document's text: a Wikipedia lead, a CNN story, a text record's text field
MAX_RECORD_MB = 64  # a raw record: a JSONL line, a .story file or archive member, a Wikipedia page's text
MAX_HEADER_MB = 16  # decompressed bytes of a dump before its first <page> (<siteinfo> is a few KB)

TEXT_TOO_LONG = "text_too_long"
RECORD_TOO_LARGE = "record_too_large"


@dataclass(frozen=True)
class Limits:
    """The limits of one ingest run (a frozen value, so it travels to Beam workers as is)."""

    max_text_chars: int = MAX_TEXT_CHARS
    max_record_bytes: int = MAX_RECORD_MB << 20
    max_header_bytes: int = MAX_HEADER_MB << 20

    @classmethod
    def from_flags(cls, max_text_chars: int | None = None, max_record_mb: float | None = None) -> Limits:
        return cls(
            max_text_chars=MAX_TEXT_CHARS if max_text_chars is None else int(max_text_chars),
            max_record_bytes=int((MAX_RECORD_MB if max_record_mb is None else max_record_mb) * (1 << 20)),
        )

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Limits:
        return cls.from_flags(getattr(args, "max_text_chars", None), getattr(args, "max_record_mb", None))

    @classmethod
    def from_dict(cls, fields: dict | None) -> Limits:
        return cls(**fields) if fields else cls()

    def to_dict(self) -> dict:
        return asdict(self)

    def over_text(self, chars: int) -> str | None:
        """The rejection reason for a text of ``chars`` characters, or None when it fits."""
        return TEXT_TOO_LONG if chars > self.max_text_chars else None

    def over_record(self, size: int) -> str | None:
        """The rejection reason for a raw record of ``size`` bytes (or characters), or None when it fits."""
        return RECORD_TOO_LARGE if size > self.max_record_bytes else None


DEFAULT = Limits()


def _positive_int(value: str) -> int:
    number = int(value)
    if number <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, not {value}")
    return number


def positive_float(value: str) -> float:
    number = float(value)
    if not number > 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, not {value}")
    return number


def add_limit_arguments(parser: argparse.ArgumentParser) -> None:
    """``--max-text-chars`` and ``--max-record-mb`` of the ingest commands."""
    parser.add_argument(
        "--max-text-chars",
        type=_positive_int,
        default=MAX_TEXT_CHARS,
        help=f"longest document text kept, in characters (a Wikipedia lead, a story, a text record; default "
        f"{MAX_TEXT_CHARS:,}); longer ones are counted as text_too_long and dead-lettered",
    )
    parser.add_argument(
        "--max-record-mb",
        type=positive_float,
        default=MAX_RECORD_MB,
        help=f"largest raw record read, in MB (a JSONL line, a .story file or archive member, a Wikipedia "
        f"page's text; default {MAX_RECORD_MB}); larger ones are counted as record_too_large and dead-lettered",
    )
