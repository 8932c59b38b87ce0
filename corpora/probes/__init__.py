"""Linguistic probes of intruder sentences: INSteD's eight phenomena (Shen et al. 2021, §7, Table 7),
generated automatically.

Each phenomenon is a pure function ``sentence -> list of edits`` (:class:`corpora.probes.edits.Edit`; an empty
list: the sentence has no site); :data:`PHENOMENA` names them. Document rows and INSteD's JSONL records:
:mod:`corpora.probes.rows`.

>>> from incoherent.corpora.probes.edits import apply_edits
>>> s = "He was the first mayor of the town."
>>> apply_edits(s, PHENOMENA["negation"](s))
'He was not the first mayor of the town.'
"""

from __future__ import annotations

from collections.abc import Callable

from incoherent.corpora.probes.connectives import conjunction
from incoherent.corpora.probes.edits import Edit
from incoherent.corpora.probes.pronouns import animacy_down, animacy_up, gender
from incoherent.corpora.probes.quantities import number
from incoherent.corpora.probes.verbs import negation, past_to_future
from incoherent.corpora.probes.words import demonstrative

PHENOMENA: dict[str, Callable[..., list[Edit]]] = {
    "gender": gender,
    "animacy-down": animacy_down,
    "animacy-up": animacy_up,
    "demonstrative": demonstrative,
    "conjunction": conjunction,
    "past-to-future": past_to_future,
    "negation": negation,
    "number": number,
}

__all__ = ["PHENOMENA", "Edit"]
