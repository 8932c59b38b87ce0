"""One JSON record of a line of a JSONL file, or why it is not one: the one parser of every JSONL reader.

A hostile line must never end a run: nesting too deep for Python's parser (``RecursionError``), an integer of
more digits than Python converts (``ValueError``), and a lone surrogate escape (``"\\udc80"``: valid JSON, but
a string no UTF-8 writer can encode, so it would fail later in a Parquet or JSON writer) are each a reason,
which the reader counts and dead-letters like any other bad record. Integers a Parquet ``int64`` column cannot
hold are checked by :func:`is_int64` where a field goes into one.

>>> load_line('{"a": 1}')
({'a': 1}, '', '')
>>> load_line('[' * 100_000)[1:]
('json_too_deep', 'nested too deeply')
>>> load_line('{"a": "\\\\udc80"}')[1]
'lone_surrogate'
>>> load_line('{"a": 1')[1]
'bad_json'
>>> is_int64(2**63 - 1), is_int64(2**63), is_int64(True)
(True, False, False)
"""

from __future__ import annotations

import json

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def load_line(line: str) -> tuple[object, str, str]:
    """``(value, "", "")`` of one JSON line, or ``(None, reason, detail)``: ``bad_json`` (not JSON, or an
    integer too long to convert), ``json_too_deep``, ``lone_surrogate``."""
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        return None, "bad_json", f"{exc.msg} at column {exc.colno}"
    except RecursionError:
        return None, "json_too_deep", "nested too deeply"
    except ValueError as exc:  # an integer of more digits than Python converts
        return None, "bad_json", str(exc)[:200]
    if "\\u" in line.lower() and not encodes(value):
        return None, "lone_surrogate", "a string holds a lone surrogate escape (\\ud800-\\udfff)"
    return value, "", ""


def has_lone_surrogate(value: str) -> bool:
    """True when ``value`` holds a lone surrogate (JSON's ``"\\ud800"``), which no UTF-8 file can hold."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def encodes(value) -> bool:
    """Every string of ``value`` (keys too) encodes as UTF-8 (no lone surrogate)."""
    if isinstance(value, str):
        return not has_lone_surrogate(value)
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    except (RecursionError, ValueError):  # deep (but parsed) values: not ours to judge here
        return True
    return True


def dumps_line(value, **options) -> str:
    """``json.dumps(value, ensure_ascii=False)``, or with every non-ASCII character escaped when a string holds a
    lone surrogate (a dead letter keeps what it was given, and its file stays UTF-8).

    >>> dumps_line({"w": "é"})
    '{"w": "é"}'
    >>> dumps_line(json.loads('["\\\\udc80 é"]'))
    '["\\\\udc80 \\\\u00e9"]'
    """
    text = json.dumps(value, ensure_ascii=False, **options)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, ensure_ascii=True, **options)
    return text


def is_int64(value) -> bool:
    """``value`` is an ``int`` (not a bool) that a Parquet ``int64`` column holds."""
    return type(value) is int and INT64_MIN <= value <= INT64_MAX
