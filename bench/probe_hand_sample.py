#!/usr/bin/env python3
"""Draw INSteD's own hand-edited probe sites to read: ``--n`` records of a phenomenon's hand file at random
(``random.Random("hand<seed>:<phenomenon>")``), each printed as markdown with its document's other sentences
(the sentence back at ``sen_position``, as ``bench/probe_hand_sites.py`` puts it), the sentence before, the
authors' hand edit, and our probe of the same document (``probe_document``, as ``incoherent probes`` runs it),
or our skip reason. It reads the paper's own edits with the criteria our probes are read with.

    .venv/bin/python bench/probe_hand_sample.py --seed 1 --n 40 --phenomena negation number
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT.parent) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from probe_hand_sites import DATA, FILES, hand_records, probe_hand_document  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--phenomena", nargs="+", choices=list(FILES), default=list(FILES))
    parser.add_argument("--data", type=Path, default=DATA, help="the folder of original_*.txt")
    args = parser.parse_args(argv)
    for phenomenon in args.phenomena:
        records = [  # the opening sentence is never probed
            (number, record, doc)
            for number, record, doc, _ in hand_records(phenomenon, args.data)
            if doc["intruder_index"] >= 1
        ]
        drawn = random.Random(f"hand{args.seed}:{phenomenon}").sample(records, min(args.n, len(records)))
        print(f"# {phenomenon}: {len(drawn)} of {len(records)} hand records (seed {args.seed})\n")
        for k, (number, record, doc) in enumerate(drawn, 1):
            rows, reason = probe_hand_document(doc, phenomenon, args.seed)
            context = [s for i, s in enumerate(doc["sentences"]) if i != doc["intruder_index"]]
            print(f"## {phenomenon} {k} (hand record {number}, sentence {doc['intruder_index']})\n")
            print("Context: " + " | ".join(context) + "\n")
            print(f"- before: {record['to_be_replaced']}\n- INSteD's hand edit: {record['replace_with']}")
            print(f"- ours: {rows[0]['probed_sentence'] if rows else 'no probe (' + (reason or '') + ')'}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
