"""Train the part-of-speech tagger of ``incoherent probes`` and write its weights as JSON.

NLTK's averaged perceptron (``nltk.tag.perceptron.PerceptronTagger``, Honnibal's greedy tagger) trained on
the Penn Treebank sample that NLTK distributes (``treebank.zip`` of nltk_data: 199 Wall Street Journal files,
``treebank/combined/wsj_0001.mrg`` .. ``wsj_0199.mrg``). Files ``wsj_0001``..``wsj_0179`` train it; files
``wsj_0180``..``wsj_0199`` are held out and give the accuracy written into the weights file (and stated in
docs/probes.md). Empty elements (``-NONE-`` traces) are dropped. Reproducible: Python's ``random`` (which the
trainer shuffles sentences with) is seeded, and the same zip gives the same bytes.

    python tools/train_probe_tagger.py PATH/TO/treebank.zip [--out corpora/probes/data/tagger-wsj.json]

No pickle: the weights, tag dictionary and classes are written as one JSON object.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import sys
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(ROOT, "corpora", "probes", "data", "tagger-wsj.json")
HELD_OUT_FROM = 180  # wsj_0180 .. wsj_0199 are held out
ITERATIONS = 5
SEED = 0

PROVENANCE = (
    "Trained by tools/train_probe_tagger.py with nltk {nltk} (nltk.tag.perceptron.PerceptronTagger, "
    "{iterations} iterations, random.seed({seed})) on the Penn Treebank sample distributed by NLTK "
    "(nltk_data packages/corpora/treebank.zip, sha256 {sha256}): files wsj_0001-wsj_0{last:03d} of "
    "treebank/combined/, {train_sentences} sentences, {train_tokens} tokens; -NONE- elements dropped."
)
LICENCE = (
    "Derived from the 10% fragment of the Penn Treebank (C) LDC 1995, which NLTK distributes for "
    "non-commercial research under fair use; these weights are statistics of that text, not the text. "
    "Check the LDC terms before any commercial use."
)


def split_trees(text: str) -> list[str]:
    """Top-level bracketed trees of an .mrg file."""
    trees, depth, start = [], 0, None
    for i, ch in enumerate(text):
        if ch == "(":
            if depth == 0:
                start = i
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0 and start is not None:
                trees.append(text[start : i + 1])
    return trees


def tagged_sentences(zip_path: str) -> dict[int, list[list[tuple[str, str]]]]:
    """``{file number: [[(word, tag), ...], ...]}`` of the combined .mrg files."""
    from nltk.tree import Tree

    out: dict[int, list[list[tuple[str, str]]]] = {}
    with zipfile.ZipFile(zip_path) as archive:
        for name in sorted(archive.namelist()):
            match = re.fullmatch(r"treebank/combined/wsj_(\d{4})\.mrg", name)
            if not match:
                continue
            text = archive.read(name).decode("utf-8")
            sentences = []
            for tree in split_trees(text):
                pos = [(w, t) for w, t in Tree.fromstring(tree).pos() if t != "-NONE-"]
                if pos:
                    sentences.append(pos)
            out[int(match.group(1))] = sentences
    return out


def train(zip_path: str) -> dict:
    import nltk
    from nltk.tag.perceptron import PerceptronTagger

    files = tagged_sentences(zip_path)
    train_set = [s for n, ss in sorted(files.items()) if n < HELD_OUT_FROM for s in ss]
    test_set = [s for n, ss in sorted(files.items()) if n >= HELD_OUT_FROM for s in ss]
    random.seed(SEED)
    tagger = PerceptronTagger(load=False)
    tagger.train(train_set, nr_iter=ITERATIONS)
    correct = total = 0
    for sentence in test_set:
        words = [w for w, _ in sentence]
        for (_, gold), (_, guess) in zip(sentence, tagger.tag(words), strict=True):
            correct += gold == guess
            total += 1
    with open(zip_path, "rb") as f:
        sha256 = hashlib.sha256(f.read()).hexdigest()
    weights, tagdict, classes = tagger.encode_json_obj()
    return {
        "format": 1,
        "tagger": "nltk.tag.perceptron.PerceptronTagger",
        "tagset": "Penn Treebank",
        "provenance": PROVENANCE.format(
            nltk=nltk.__version__,
            iterations=ITERATIONS,
            seed=SEED,
            sha256=sha256,
            last=HELD_OUT_FROM - 1,
            train_sentences=len(train_set),
            train_tokens=sum(map(len, train_set)),
        ),
        "licence": LICENCE,
        "held_out": {
            "files": f"wsj_0{HELD_OUT_FROM:03d}-wsj_0{max(files):03d}",
            "sentences": len(test_set),
            "tokens": total,
            "accuracy": round(correct / total, 4),
        },
        "classes": sorted(classes),
        "tagdict": dict(sorted(tagdict.items())),
        "weights": {f: dict(sorted(w.items())) for f, w in sorted(weights.items()) if w},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("treebank_zip", help="nltk_data's treebank.zip")
    parser.add_argument("--out", default=DEFAULT_OUT, help="JSON file to write")
    args = parser.parse_args(argv)
    if not zipfile.is_zipfile(args.treebank_zip):
        print(f"error: {args.treebank_zip}: not a zip file", file=sys.stderr)
        return 2
    model = train(args.treebank_zip)
    text = json.dumps(model, ensure_ascii=False, separators=(",", ":"), sort_keys=False)
    with open(args.out + ".partial", "w", encoding="utf-8") as f:
        f.write(text + "\n")
    os.replace(args.out + ".partial", args.out)
    held = model["held_out"]
    print(
        f"{args.out}: held-out accuracy {held['accuracy']:.4f} on {held['tokens']:,} tokens "
        f"({held['sentences']} sentences, {held['files']}); {len(text):,} bytes"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
