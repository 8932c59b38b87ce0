"""Text from a file or a server, made safe to print: the one function every command prints untrusted text with.

A worker id, a project title or a server's error text can hold ``ESC [ 2 J`` (clear the screen), an OSC
sequence (retitle the terminal, write the clipboard) or a right-to-left override that reorders what follows.
:func:`printable` escapes every control and format character (Unicode categories Cc, Cf, Cs, Zl, Zp) the way
Python's ``repr`` does, so what reaches the terminal is the text as characters, never as commands.
"""

from __future__ import annotations

import unicodedata

_ESCAPED = {"Cc", "Cf", "Cs", "Zl", "Zp"}
_KEPT_IN_LINES = {"\n", "\t"}


def _escape(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(text: object, lines: bool = False) -> str:
    """``text`` with control and format characters escaped (``lines``: newlines and tabs kept).

    >>> printable("A1\\x1b]0;pwned\\x07\\x1b[2J")
    'A1\\\\x1b]0;pwned\\\\x07\\\\x1b[2J'
    >>> printable("evil\\u202etxt.exe"), printable("two\\nlines"), printable("two\\nlines", lines=True)
    ('evil\\\\u202etxt.exe', 'two\\\\x0alines', 'two\\nlines')
    >>> printable("Zoë, 日本, x\\u0301")
    'Zoë, 日本, x́'
    """
    text = str(text)
    if text.isprintable():  # the common case: nothing to escape
        return text
    out = []
    for char in text:
        if (lines and char in _KEPT_IN_LINES) or unicodedata.category(char) not in _ESCAPED:
            out.append(char)
        else:
            out.append(_escape(char))
    return "".join(out)
