#!/usr/bin/env python3
"""Random probes of real text, for a reader to judge (the hand readings of docs/probes.md). One command:

    .venv/bin/python bench/probe_sample.py --data PATH/TO/shared/data --phenomenon past-to-future --out SAMPLE.md

``--data`` is the shared offline data folder (``../shared/data`` beside a checkout; MANIFEST.md there gives the
provenance): its Wikipedia lead extracts (``wiki/ovos_vital_article_leads/summaries_en-us.json``), its CNN
stories (``cnn/**/*.story``, text before the first ``@highlight``) and the Lee et al. (2005) news corpus
(``other/lee/*.cor``, one story a line; Australian news, dense in people and pronouns). Each document of 3 or
more sentences (the first 8 kept) gets an intruder INSteD-style: a non-opening sentence is replaced by a
non-opening sentence of another document of the same collection, both drawn with ``--seed``. The intruder
documents are probed in-process with :func:`corpora.probes.rows.probe_document`, exactly as ``incoherent
probes`` does, and ``--n`` probes of the phenomenon are drawn at random (``--seed``), each written with its
document's other sentences, the intruder before and after, the edits, and a verdict line for the reader to fill
in: right kind, grammatical, minimal, detectable from the context (``y``/``n``), and a note.

The seed of a reading is written in the file: the same data, seed and code give the same sample. Use a seed not
used while writing the rules, so that the reading is a held-out check.
"""

from __future__ import annotations

import argparse
import collections
import glob
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from incoherent.corpora.probes import PHENOMENA  # noqa: E402
from incoherent.corpora.probes.rows import DEMONSTRATIVE_VARIANTS, probe_document  # noqa: E402
from incoherent.sources.sentences import split_sentences  # noqa: E402


def collections_of(data: Path) -> dict[str, list[tuple[str, list[str]]]]:
    """``{collection: [(name, sentences)]}`` of the shared data, in a fixed order."""
    found: dict[str, list[tuple[str, list[str]]]] = {"wiki": [], "cnn": [], "lee": []}
    leads = json.loads((data / "wiki/ovos_vital_article_leads/summaries_en-us.json").read_text("utf-8"))
    for title in sorted(leads):
        found["wiki"].append((title, split_sentences((leads[title] or {}).get("extract") or "")))
    for path in sorted(glob.glob(str(data / "cnn/**/*.story"), recursive=True)):
        text = Path(path).read_text("utf-8").split("@highlight")[0]
        found["cnn"].append((Path(path).name, split_sentences(" ".join(text.split()))))
    for path in sorted(glob.glob(str(data / "other/lee/*.cor"))):
        for n, line in enumerate(Path(path).read_text("utf-8", errors="replace").splitlines()):
            found["lee"].append((f"{Path(path).stem}:{n}", split_sentences(line.strip())))
    return {name: [(k, s[:8]) for k, s in docs if len(s) >= 3] for name, docs in found.items()}


def intruder_documents(data: Path, seed: int):
    rng = random.Random(seed)
    for name, docs in collections_of(data).items():
        for n, (key, sentences) in enumerate(docs):
            other = rng.randrange(len(docs) - 1)
            donor = docs[other + (other >= n)][1]
            position = rng.randrange(1, len(sentences))
            intruder = donor[rng.randrange(1, len(donor))]
            doc = list(sentences)
            original, doc[position] = doc[position], intruder
            yield {"id": f"{name}:{key}", "source": name, "split": "test", "sentences": doc,
                   "intruder_index": position, "original_sentence": original, "file_id": n}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="the shared offline data folder")
    parser.add_argument("--phenomenon", required=True, choices=sorted(PHENOMENA))
    parser.add_argument("--demonstrative", default="insted", choices=DEMONSTRATIVE_VARIANTS)
    parser.add_argument("--n", type=int, default=40, help="probes drawn (default 40)")
    parser.add_argument("--seed", type=int, default=2027, help="intruders and the draw (default 2027)")
    parser.add_argument("--out", type=Path, required=True, help="the markdown sample to write")
    args = parser.parse_args(argv)
    counts: collections.Counter[str] = collections.Counter()
    probes, sources = [], collections.Counter()
    for doc in intruder_documents(args.data, args.seed):
        for row in probe_document(doc, [args.phenomenon], args.seed, counts.update and (lambda c: counts.update([c])),
                                  args.demonstrative):  # fmt: skip
            if isinstance(row, dict):
                probes.append((doc, row))
                sources[doc["source"]] += 1
    drawn = random.Random(args.seed).sample(probes, min(args.n, len(probes)))
    lines = [
        f"# {args.phenomenon}"
        + (
            f" (`--demonstrative {args.demonstrative}`)" if args.phenomenon == "demonstrative" else ""
        ),  # fmt: skip
        "",
        f"`bench/probe_sample.py --phenomenon {args.phenomenon} --demonstrative {args.demonstrative} --n {args.n} "
        f"--seed {args.seed}`: {len(drawn)} of {len(probes)} probes ("
        + ", ".join(f"{k} {v}" for k, v in sorted(sources.items()))
        + "), drawn at random.",
        "",
        "Skips: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()) if k.startswith("no_site/")),
        "",
        "Verdict: right kind / grammatical / minimal / detectable from context (y or n), then a note.",
        "",
    ]
    for n, (doc, row) in enumerate(drawn, 1):
        context = [s for i, s in enumerate(doc["sentences"]) if i != doc["intruder_index"]]
        lines += [
            f"## {n}. {doc['id']} (sentence {doc['intruder_index']})",
            "",
            "Context: " + " | ".join(context),
            "",
            f"- before: {row['intruder_sentence']}",
            f"- after: {row['probed_sentence']}",
            "- verdict: ? / ? / ? / ? —",
            "",
        ]
    args.out.write_text("\n".join(lines), encoding="utf-8")
    print(f"{args.out}: {len(drawn)} of {len(probes)} {args.phenomenon} probes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
