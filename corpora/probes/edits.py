"""An edit of a probe: characters of the sentence replaced, and applying edits.

>>> apply_edits("He left.", [Edit(0, 2, "He", "She")])
'She left.'
"""

from __future__ import annotations

from typing import NamedTuple


class Edit(NamedTuple):
    start: int  # character span [start, end) in the original sentence
    end: int
    before: str  # the original characters (the token or tokens replaced)
    after: str  # what replaces them

    def to_row(self) -> dict:
        return {"start": self.start, "end": self.end, "before": self.before, "after": self.after}


def apply_edits(sentence: str, edits: list[Edit]) -> str:
    """The sentence with every edit applied (edits must not overlap; any order).

    >>> apply_edits("It was 18 m.", [Edit(7, 9, "18", "1.8"), Edit(0, 2, "It", "She")])
    'She was 1.8 m.'
    """
    out, position = [], 0
    for edit in sorted(edits):
        if edit.start < position or sentence[edit.start : edit.end] != edit.before:
            raise ValueError(f"edit {edit} overlaps another or does not match {sentence!r}")
        out += [sentence[position : edit.start], edit.after]
        position = edit.end
    out.append(sentence[position:])
    return "".join(out)


def replace(token, after: str) -> Edit:
    """The edit replacing one token (a :class:`corpora.probes.text.Token`) by ``after``."""
    return Edit(token.start, token.end, token.text, after)


class NoSite(list):
    """No edit, and why: what a phenomenon returns for a sentence without a site (an empty, falsy list, equal to
    ``[]``, with a ``reason``, counted by ``probes`` as ``no_site/<phenomenon>/<reason>``).

    >>> skip = NoSite("no_context_gender")
    >>> skip == [], bool(skip), skip.reason
    (True, False, 'no_context_gender')
    """

    def __init__(self, reason: str):
        super().__init__()
        self.reason = reason

    def __repr__(self) -> str:
        return f"NoSite({self.reason!r})"


class Moved(list):
    """Edits and the name of the move that made them (``number``'s ``year_earlier``, ``count_up``, ...), counted as
    ``move/<phenomenon>/<move>`` so the mix of moves is in the run summary and the card.

    >>> Moved([Edit(0, 2, "18", "18,000")], "count_up").move
    'count_up'
    """

    def __init__(self, edits: list[Edit], move: str):
        super().__init__(edits)
        self.move = move
