#!/usr/bin/env python3
"""Recall on INSteD's own hand-chosen probe sites: how often ``incoherent probes`` makes the edit INSteD's
authors made by hand (same site, same phenomenon).

INSteD (Shen et al. 2021, §7) released the sentences its authors edited by hand, 100 per phenomenon
(AiliAili/Coherence_Modelling ``linguistic_probe_data/original_*.txt``; a copy in
``tests/data/probes/insted_hand_sites/``): ``to_be_replaced`` is the sentence before the edit, ``replace_with``
after it, ``ctx`` the document, ``sen_position`` the sentence's place in it. Each sentence is put back in its
document (in ``ctx`` already for seven phenomena; for the determiner file ``ctx`` lacks it, so it is inserted at
``sen_position``) and probed as ``incoherent probes`` probes a document (:func:`corpora.probes.rows.probe_document`,
the function its transform runs). A site is **found** when one of our edits overlaps a token the authors
changed (an insertion: the tokens on either side of it).

    .venv/bin/python bench/probe_hand_sites.py [--data DIR] [--misses PHENOMENON]

prints per phenomenon: sites found / records, records with a probe at any site, and the skip reasons of the
misses (``other_site``: a probe elsewhere in the sentence).
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT.parent) not in sys.path:
    sys.path.insert(0, str(ROOT))

FILES = {  # INSteD's file name -> our phenomenon
    "gender": "gender_pronoun_flip",
    "animacy-down": "animacy_pronoun_downgrade",
    "animacy-up": "animacy_pronoun_upgrade",
    "demonstrative": "singular_determiner_flip",
    "conjunction": "conjunction_flip",
    "past-to-future": "past_to_future_flip",
    "negation": "to_negation",
    "number": "number_exaggerate",
}
DATA = ROOT / "tests" / "data" / "probes" / "insted_hand_sites"
_TOKEN = re.compile(r"\w+|[^\w\s]")


def changed_spans(before: str, after: str) -> list[tuple[int, int]]:
    """The character spans of ``before`` that the edit to ``after`` changed (an insertion: the tokens on
    either side of it).

    >>> changed_spans("He was there.", "He was not there.")
    [(3, 12)]
    >>> changed_spans("His plays ran.", "Her plays ran.")
    [(0, 3)]
    """
    a, b = list(_TOKEN.finditer(before)), list(_TOKEN.finditer(after))
    matcher = difflib.SequenceMatcher(a=[m.group() for m in a], b=[m.group() for m in b], autojunk=False)
    spans = []
    for op, i1, i2, _, _ in matcher.get_opcodes():
        if op == "equal":
            continue
        if i1 < i2:
            spans.append((a[i1].start(), a[i2 - 1].end()))
        else:  # an insertion between tokens i1 - 1 and i1
            spans.append((a[max(i1 - 1, 0)].start(), a[min(i1, len(a) - 1)].end()))
    return spans


def hand_document(record: dict, number: int) -> dict:
    """The document of one hand-site record, its sentence back at ``sen_position``."""
    from incoherent.corpora.probes.rows import _split_around
    from incoherent.sources.sentences import split_sentences

    ctx, sentence, position = record["ctx"], record["to_be_replaced"], record["sen_position"]
    sentences = _split_around(ctx, sentence, position) if sentence in ctx else None
    if sentences is None:
        sentences = split_sentences(ctx)
        at = min(position, len(sentences))
        sentences = sentences[:at] + [sentence] + sentences[at + (sentence in ctx) :]
        position = at
    return {"id": f"hand:{number}", "source": "hand", "split": "test", "sentences": sentences,
            "intruder_index": position, "original_sentence": sentence, "file_id": number}  # fmt: skip


def hand_records(
    phenomenon: str, data: Path = DATA
) -> Iterator[tuple[int, dict, dict, list[tuple[int, int]]]]:
    """``(number, record, document, the spans the authors changed)`` of each record of a phenomenon's hand file
    that the authors edited (a few leave the sentence as it was)."""
    path = data / f"original_{FILES[phenomenon]}.txt"
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        record = json.loads(line)
        spans = changed_spans(record["to_be_replaced"], record["replace_with"])
        if spans:
            yield number, record, hand_document(record, number), spans


def probe_hand_document(
    doc: dict, phenomenon: str, seed: int = 0, variant: str = "insted"
) -> tuple[list[dict], str | None]:
    """Our probe rows of a hand document for ``phenomenon`` (as ``incoherent probes`` makes them), and our
    skip reason when there is none (None when the phenomenon gave none)."""
    from incoherent.corpora.probes.rows import probe_document

    counts: list[str] = []
    probes = probe_document(doc, [phenomenon], seed, counts.append, number=variant)
    rows = [r for r in probes if isinstance(r, dict)]
    reason = next((c.split("/")[2] for c in counts if c.startswith("no_site/") and c.count("/") == 2), None)
    return rows, reason


def hand_sites(
    phenomenon: str, data: Path = DATA, seed: int = 0, variant: str = "insted"
) -> tuple[int, int, list[dict]]:
    """(sites found, records, the misses: each record with our probe (``ours``, None: no probe) or our skip
    reason)."""
    found, total, misses = 0, 0, []
    for _, record, doc, spans in hand_records(phenomenon, data):
        total += 1
        if doc["intruder_index"] < 1:  # the opening sentence: probes never edit it
            misses.append(record | {"ours": None, "reason": "opening_sentence"})
            continue
        rows, reason = probe_hand_document(doc, phenomenon, seed, variant)
        ours = [(e["start"], e["end"]) for r in rows for e in r["edits"]]
        if any(s < e2 and s2 < e for s, e in ours for s2, e2 in spans):
            found += 1
        else:
            ours_sentence = rows[0]["probed_sentence"] if rows else None
            misses.append(record | {"ours": ours_sentence, "reason": reason or "other_site"})
    return found, total, misses


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the folder of original_*.txt")
    parser.add_argument("--misses", default=None, help="print the misses of this phenomenon")
    parser.add_argument("--number", choices=("insted", "clash"), default="insted", help="number's variant")
    args = parser.parse_args(argv)
    for phenomenon in FILES:
        found, total, misses = hand_sites(phenomenon, args.data, variant=args.number)
        reasons = Counter(m["reason"] for m in misses)
        probed = found + sum(m["ours"] is not None for m in misses)  # a probe of this phenomenon, any site
        print(f"| `{phenomenon}` | {found}/{total} | {probed}/{total} |", end=" ")
        print(f"{', '.join(f'{k} {v}' for k, v in reasons.most_common())} |")
        if phenomenon == args.misses:
            for m in misses:
                print(
                    f"  [{m['reason']}] {m['to_be_replaced']}\n    INSteD: {m['replace_with']}\n    ours:   {m['ours']}"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
