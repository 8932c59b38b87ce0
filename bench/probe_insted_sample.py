#!/usr/bin/env python3
"""Draw probes to read from INSteD's own documents: every probe of a phenomenon on the first ``--limit`` records
of an INSteD JSONL file (``insted_document`` then ``probe_document``, as ``incoherent probes`` does, with
``--seed``), then ``--n`` of them at random (``random.Random("<seed>:<phenomenon>")``), printed as markdown with
the document's other sentences, the intruder before and after the probe.

    .venv/bin/python bench/probe_insted_sample.py INSTED.jsonl --seed 6060 --n 25 --phenomena number negation
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT.parent) not in sys.path:
    sys.path.insert(0, str(ROOT))


def main(argv: list[str] | None = None) -> int:
    from incoherent.corpora.probes import PHENOMENA
    from incoherent.corpora.probes.rows import insted_document, probe_document

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--limit", type=int, default=3000)
    parser.add_argument("--phenomena", nargs="+", default=list(PHENOMENA))
    parser.add_argument("--demonstrative", choices=("insted", "agree"), default="insted")
    parser.add_argument("--number", choices=("insted", "clash"), default="insted")
    args = parser.parse_args(argv)
    docs = []
    with open(args.data, encoding="utf-8") as f:
        for n, line in enumerate(f):
            if n >= args.limit:
                break
            doc = insted_document(line, f"{args.data.name}:{n + 1}", "insted")
            if isinstance(doc, dict):
                docs.append(doc)
    for phenomenon in args.phenomena:
        rows = [
            r
            for d in docs
            for r in probe_document(
                d, [phenomenon], args.seed, demonstrative=args.demonstrative, number=args.number
            )
            if isinstance(r, dict)
        ]
        drawn = random.Random(f"{args.seed}:{phenomenon}").sample(rows, min(args.n, len(rows)))
        print(f"# {phenomenon}: {len(drawn)} of {len(rows)} probes (seed {args.seed})\n")
        for k, row in enumerate(drawn, 1):
            context = [s for i, s in enumerate(row["sentences"]) if i != row["intruder_index"]]
            print(f"## {phenomenon} {k} (file {row['file_id']})\n")
            print("Context: " + " | ".join(context) + "\n")
            print(f"- before: {row['intruder_sentence']}\n- after: {row['probed_sentence']}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
