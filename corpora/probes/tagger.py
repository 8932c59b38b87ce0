"""The averaged-perceptron part-of-speech tagger of NLTK (Honnibal's greedy tagger), reading our JSON weights.

The weights are trained by NLTK's own ``nltk.tag.perceptron.PerceptronTagger`` (``tools/train_probe_tagger.py``)
and saved as JSON (no pickle). Tagging re-implements that class's ``tag``: the same normalisation, the same
features in the same order, the same scoring and tie-break, so it returns the same tags (a test checks this
against NLTK on real text) without importing ``nltk`` (whose package import pulls in scipy.stats: seconds in
every Beam worker). NLTK is Apache-2.0; ``_normalize`` and ``_features`` follow ``nltk/tag/perceptron.py``
of nltk 3.10.4.

>>> tagger = load()
>>> tagger.tag(["The", "city", "was", "founded", "in", "1850", "."])
['DT', 'NN', 'VBD', 'VBN', 'IN', 'CD', '.']
"""

from __future__ import annotations

import functools
import json
import os

WEIGHTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tagger-wsj.json")
START = ["-START-", "-START2-"]
END = ["-END-", "-END2-"]


def _normalize(word: str) -> str:
    if "-" in word and word[0] != "-":
        return "!HYPHEN"
    if word.isdigit() and len(word) == 4:
        return "!YEAR"
    if word and word[0].isdigit():
        return "!DIGITS"
    return word.lower()


def _features(i: int, word: str, context: list[str], prev: str, prev2: str) -> dict[str, int]:
    features: dict[str, int] = {}

    def add(name: str, *args: str) -> None:
        key = " ".join((name,) + args)
        features[key] = features.get(key, 0) + 1

    i += len(START)
    add("bias")
    add("i suffix", word[-3:])
    add("i pref1", word[0] if word else "")
    add("i-1 tag", prev)
    add("i-2 tag", prev2)
    add("i tag+i-2 tag", prev, prev2)
    add("i word", context[i])
    add("i-1 tag+i word", prev, context[i])
    add("i-1 word", context[i - 1])
    add("i-1 suffix", context[i - 1][-3:])
    add("i-2 word", context[i - 2])
    add("i+1 word", context[i + 1])
    add("i+1 suffix", context[i + 1][-3:])
    add("i+2 word", context[i + 2])
    return features


class PerceptronTagger:
    """Tags of tokens (Penn Treebank forms) from averaged-perceptron weights."""

    def __init__(self, weights: dict[str, dict[str, float]], tagdict: dict[str, str], classes: list[str]):
        self.weights, self.tagdict, self.classes = weights, tagdict, sorted(classes)

    def predict(self, features: dict[str, int]) -> str:
        scores: dict[str, float] = {}
        weights = self.weights
        for feature, value in features.items():
            if feature not in weights or value == 0:
                continue
            for label, weight in weights[feature].items():
                scores[label] = scores.get(label, 0.0) + value * weight
        return max(self.classes, key=lambda label: (scores.get(label, 0.0), label))

    def tag(self, words: list[str]) -> list[str]:
        prev, prev2 = START
        context = START + [_normalize(w) for w in words] + END
        tags = []
        for i, word in enumerate(words):
            tag = self.tagdict.get(word)
            if not tag:
                tag = self.predict(_features(i, word, context, prev, prev2))
            tags.append(tag)
            prev2, prev = prev, tag
        return tags


def read_model(path: str = WEIGHTS) -> dict:
    with open(path, encoding="utf-8") as f:
        model = json.load(f)
    if model.get("format") != 1 or not {"weights", "tagdict", "classes"} <= set(model):
        raise ValueError(f"{path}: not a tagger weights file of format 1")
    return model


@functools.lru_cache(maxsize=1)
def load() -> PerceptronTagger:
    """The shipped tagger (read once per process)."""
    model = read_model()
    return PerceptronTagger(model["weights"], model["tagdict"], model["classes"])


def info() -> dict:
    """The weights file's description: provenance, licence, held-out accuracy (no weights)."""
    return {k: v for k, v in read_model().items() if k not in ("weights", "tagdict", "classes")}
