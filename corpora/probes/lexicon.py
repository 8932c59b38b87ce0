"""Verb lemmas and inflections from lemminflect's dictionary (the NIH SPECIALIST lexicon); its neural models for
out-of-vocabulary words (stored as pickle) are never used, so a verb the dictionary does not know has no lemma.
"""

from __future__ import annotations

import functools


@functools.lru_cache(maxsize=8192)
def lemma(verb: str) -> str | None:
    """The base form of a verb from lemminflect's dictionary (None if it is not there).

    >>> lemma("led"), lemma("was"), lemma("received"), lemma("blorfed")
    ('lead', 'be', 'receive', None)
    """
    import lemminflect

    forms = lemminflect.getLemma(verb.lower(), "VERB", lemmatize_oov=False)
    return forms[0] if forms else None


@functools.lru_cache(maxsize=8192)
def inflect(base: str, tag: str) -> str | None:
    """A form of a verb from lemminflect's dictionary (``inflect("win", "VBD") == "won"``)."""
    import lemminflect

    forms = lemminflect.getInflection(base, tag, inflect_oov=False)
    return forms[0] if forms else None


@functools.lru_cache(maxsize=8192)
def past_forms(base: str) -> frozenset[str]:
    """Every past-tense form of a verb in lemminflect's dictionary (``be``: was, were)."""
    import lemminflect

    if base == "be":
        return frozenset({"was", "were"})
    return frozenset(lemminflect.getInflection(base, "VBD", inflect_oov=False))


@functools.lru_cache(maxsize=8192)
def is_noun(word: str) -> bool:
    """Whether lemminflect's dictionary knows ``word`` as a noun (``presents``: yes; ``refers``: no)."""
    import lemminflect

    return bool(lemminflect.getLemma(word.lower(), "NOUN", lemmatize_oov=False))
