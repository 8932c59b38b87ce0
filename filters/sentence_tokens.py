"""Token ids of sentence-joined texts, from the ids of their sentences.

The shuffles of a document are the same sentences in other orders, so a pool of one document's texts holds
about 20 distinct sentences and thousands of sentence occurrences. For tokenizers that never join characters
across whitespace, the ids of ``"A b." + " " + "C d."`` are the ids of ``"A b."`` followed by those of
``" C d."``: each distinct piece (a sentence, or the separator and a sentence) is tokenized once and the
texts' ids are concatenations (:func:`joined_token_ids`).

When that holds is read from the tokenizer's own description (:func:`tokenizes_by_parts`), not assumed:

- its normalizer maps characters one by one (lower-casing, Unicode normal forms, accent stripping, BERT's
  clean-up), so normalizing the pieces normalizes the text;
- its pre-tokenizer cuts at every whitespace: GPT-2's byte-level regex (a pre-token is a run of letters,
  digits or other characters with at most one leading space, or a run of whitespace; none reaches past a
  space into the next word), BERT's and the plain whitespace splitters;
- its model (BPE without dropout, WordPiece) tokenizes each pre-token on its own.

The sentences must not begin or end with whitespace (they are stripped; a text with one that is not is
tokenized whole) and the separator is one whitespace character. A tokenizer that does not qualify (a
SentencePiece ``Metaspace``, a custom ``Split`` regex, a slow Python tokenizer) tokenizes every text whole.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence

LOCAL_NORMALIZERS = {"Lowercase", "NFC", "NFD", "NFKC", "NFKD", "StripAccents", "BertNormalizer"}
WHITESPACE_PRE_TOKENIZERS = {"BertPreTokenizer", "Whitespace", "WhitespaceSplit"}
FURTHER_SPLITS = {"Digits", "Punctuation"}  # they cut pre-tokens, never join them
PIECEWISE_MODELS = {"BPE", "WordPiece"}


def _local_normalizer(spec: dict | None) -> bool:
    if spec is None:
        return True
    if spec.get("type") == "Sequence":
        return all(_local_normalizer(s) for s in spec.get("normalizers", []))
    return spec.get("type") in LOCAL_NORMALIZERS


def _splits_at_whitespace(spec: dict | None) -> bool:
    if spec is None:
        return False  # the whole text is one pre-token
    if spec.get("type") == "Sequence":  # each member cuts at every whitespace, or only further (digits, ...)
        members = spec.get("pretokenizers", [])
        cuts = [_splits_at_whitespace(s) for s in members]
        return any(cuts) and all(
            c or s.get("type") in FURTHER_SPLITS for c, s in zip(cuts, members, strict=True)
        )
    if spec.get("type") == "ByteLevel":
        return bool(spec.get("use_regex", True))
    return spec.get("type") in WHITESPACE_PRE_TOKENIZERS


def tokenizes_by_parts(tokenizer) -> bool:
    """Whether ``tokenizer`` gives a sentence-joined text the concatenated ids of its pieces (see the module's
    docstring); False for anything it cannot tell."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        return False
    spec = json.loads(backend.to_str())
    model = spec.get("model") or {}
    if model.get("type") not in PIECEWISE_MODELS or model.get("dropout"):
        return False
    separators = (" ", "\n")
    if any(any(c in t.get("content", "") for c in separators) for t in spec.get("added_tokens", [])):
        return False  # an added token could span the separator
    return _local_normalizer(spec.get("normalizer")) and _splits_at_whitespace(spec.get("pre_tokenizer"))


def _clean(sentences: Sequence[str]) -> bool:
    return all(s and s == s.strip() for s in sentences)


def joined_token_ids(
    tokenizer, documents: Sequence[Sequence[str]], separator: str
) -> tuple[list[tuple[int, ...]], bool]:
    """The ids (no special tokens) of ``separator.join(document)`` for every document, and whether they came
    from pieces: each distinct piece tokenized once, in one call, the documents' ids concatenated (documents
    with a sentence that is empty or padded with whitespace are tokenized whole). The caller has checked
    :func:`tokenizes_by_parts`; as a guard, the first document of two or more sentences is also tokenized
    whole, and if the two disagree every document is (False is returned)."""
    pieces: dict[str, int] = {}
    whole: dict[str, int] = {}
    probe = None
    for document in documents:
        if _clean(document):
            for j, sentence in enumerate(document):
                pieces.setdefault(sentence if j == 0 else separator + sentence, len(pieces))
            if probe is None and len(document) > 1:
                probe = separator.join(document)
                whole.setdefault(probe, len(whole))
        else:
            whole.setdefault(separator.join(document), len(whole))
    if not pieces and not whole:
        return [], True
    encoded = tokenizer(list(pieces) + list(whole), add_special_tokens=False)["input_ids"]
    piece_ids, whole_ids = encoded[: len(pieces)], encoded[len(pieces) :]
    out = []
    for document in documents:
        if _clean(document):
            parts = (piece_ids[pieces[s if j == 0 else separator + s]] for j, s in enumerate(document))
            out.append(tuple(itertools.chain.from_iterable(parts)))
        else:
            out.append(tuple(whole_ids[whole[separator.join(document)]]))
        if probe is not None and separator.join(document) == probe:
            if list(out[-1]) != whole_ids[whole[probe]]:
                texts = [separator.join(d) for d in documents]
                encoded = tokenizer(texts, add_special_tokens=False)["input_ids"]
                return [tuple(ids) for ids in encoded], False
            probe = None
    return out, True
