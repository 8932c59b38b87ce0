#!/usr/bin/env python3
"""How many number probes carry a value that is impossible on its own, whatever the document says.

Issue #50: a number probe should clash with its document (a date that breaks the order of the context's dates,
a count that contradicts another), not be absurd without it. :func:`impossible` says why a probe's value is
impossible on its own, or None:

- ``future_year``: a year after the current year (2026) where the original was not (*1957* -> *2957*);
- ``bc_without_context``: *BC*/*BCE* added where the document's other sentences have none;
- ``year_digits``: a number of 5 or more digits without separators made from a year (*the 1969000 amendments*);
- ``label``: a number edited inside a compound label (*4×100-meter*);
- ``percentage``: a percentage made negative or over 100;
- ``beyond_scale``: a unit no earthly measure takes (*light-years*, *times the speed of light*, *millions of
  square kilometres*).

    .venv/bin/python bench/probe_number_check.py INSTED.jsonl [--limit 3000] [--show N]

reads INSteD JSONL records (``incoherent probes``' reader: :func:`corpora.probes.rows.insted_document`), probes
the first ``--limit`` for ``number`` as ``incoherent probes`` does and prints the share of probes impossible on
their own, by reason, and the moves.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT.parent) not in sys.path:
    sys.path.insert(0, str(ROOT))

CURRENT_YEAR = 2026
_BC = re.compile(r"\b(BC|BCE|B\.C\.)")
_DIGITS = re.compile(r"\d[\d,]*(?:\.\d+)?")
_BEYOND = ("light-year", "speed of light", "million square", "cubic kilomet", "millennia")


def impossible(row: dict) -> str | None:
    """Why the number probe ``row`` (a probe row: ``edits``, ``sentences``, ``intruder_index``) is impossible
    on its own, or None.

    >>> row = {"edits": [{"start": 3, "end": 7, "before": "1957", "after": "2957"}],
    ...        "sentences": ["A.", "In 2957 it fell."], "intruder_index": 1, "intruder_sentence": "In 1957 it fell."}
    >>> impossible(row)
    'future_year'
    >>> row["edits"][0]["after"] = "1907"
    >>> impossible(row) is None
    True
    """
    context = " ".join(s for i, s in enumerate(row["sentences"]) if i != row["intruder_index"])
    sentence = row["intruder_sentence"]
    for edit in row["edits"]:
        before, after = edit["before"], edit["after"]
        if _BC.search(after) and not _BC.search(before) and not _BC.search(context):
            return "bc_without_context"
        if any(word in after for word in _BEYOND):
            return "beyond_scale"
        near = sentence[max(0, edit["start"] - 1) : edit["end"] + 1]
        if "×" in near or re.search(r"\d[x×]\d", sentence[max(0, edit["start"] - 6) : edit["end"] + 6]):
            return "label"
        for number in _DIGITS.findall(after):
            plain = number.replace(",", "")
            if re.fullmatch(r"\d{4}", before) and re.fullmatch(r"\d{5,}", number):
                return "year_digits"
            if re.fullmatch(r"1\d{3}|20\d{2}", before) and plain.isdigit() and len(plain) == 4:
                if int(plain) > CURRENT_YEAR >= int(before):
                    return "future_year"
        tail = sentence[edit["end"] : edit["end"] + 12].lower()
        if re.match(r"\s*(%|percent|per cent)", tail) or after.strip().endswith("%"):
            value = after.replace(",", "").rstrip("%")
            try:
                if float(value) < 0 or float(value) > 100:
                    return "percentage"
            except ValueError:
                pass
    return None


def rows(path: Path, limit: int) -> list[dict]:
    from incoherent.corpora.probes.rows import insted_document, probe_document

    out = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f):
            if n >= limit:
                break
            doc = insted_document(line, f"{path}:{n + 1}", "insted")
            if isinstance(doc, dict):
                out.extend(r for r in probe_document(doc, ["number"], 0) if isinstance(r, dict))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--limit", type=int, default=3000)
    parser.add_argument("--show", type=int, default=0, help="print N probes of each reason")
    args = parser.parse_args(argv)
    probes = rows(args.data, args.limit)
    reasons = Counter(impossible(r) for r in probes)
    bad = sum(n for reason, n in reasons.items() if reason)
    print(
        f"{len(probes)} number probes; impossible on their own: {bad} ({100 * bad / max(1, len(probes)):.1f}%)"
    )
    for reason, n in reasons.most_common():
        print(f"  {reason or 'possible'}: {n}")
    if args.show:
        shown = Counter()
        for r in probes:
            reason = impossible(r) or "possible"
            if shown[reason] < args.show:
                shown[reason] += 1
                print(f"[{reason}] {r['intruder_sentence'][:160]!r}\n    -> {r['probed_sentence'][:160]!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
