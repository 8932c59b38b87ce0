"""A tiny real XLNet classifier and intruder data built offline from the bundled samples (test fixtures).

Nothing is downloaded: a Unigram tokenizer is trained with the ``tokenizers`` library on ``samples/wsj`` and
the CNN sample stories, wrapped as transformers' ``XLNetTokenizer``; the model is a 2-layer, width-32
``XLNetForSequenceClassification``. Both are saved with ``save_pretrained`` (safetensors). Test modules
import the fixtures they use: ``from tests.tiny_model import tiny_base_dir  # noqa: F401``. Builds are cached
once per test run, for every pytest-xdist worker (:mod:`tests.run_once`: a fixture imported into several modules
is set up once per module, so the fixtures alone would not do).
"""

from __future__ import annotations

import glob
import json
import os
import random

import pyarrow as pa
import pyarrow.parquet as pq

from incoherent.schemas import INTRUDER_SCHEMA
from incoherent.schemas.tables import empty_row
from tests.fixture import fixture, needs_model_stack
from tests.run_once import shared

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPECIAL_TOKENS = ["<unk>", "<s>", "</s>", "<cls>", "<sep>", "<pad>", "<mask>", "<eod>", "<eop>"]
VOCAB_SIZE = 1000


def sample_texts() -> list[str]:
    texts = []
    with open(os.path.join(ROOT, "samples", "wsj", "wsj.jsonl"), encoding="utf-8") as f:
        texts.extend(json.loads(line)["text"] for line in f if line.strip())
    for path in sorted(glob.glob(os.path.join(ROOT, "samples", "cnn", "*", "*.story"))):
        with open(path, encoding="utf-8") as f:
            texts.append(f.read().split("@highlight", 1)[0])
    return texts


def sample_documents(min_sentences: int = 3, max_sentences: int = 8) -> list[tuple[str, list[str]]]:
    """``(id, sentences)`` of the WSJ sample documents with at least ``min_sentences``, cut to ``max_sentences``."""
    from incoherent.sources.sentences import split_sentences

    docs = []
    with open(os.path.join(ROOT, "samples", "wsj", "wsj.jsonl"), encoding="utf-8") as f:
        for line in f:
            record = json.loads(line)
            sentences = split_sentences(record["text"])[:max_sentences]
            if len(sentences) >= min_sentences:
                docs.append((f"wsj:{record['id']}", sentences))
    return docs


def intruder_rows(docs: list[tuple[str, list[str]]], seed: int = 0) -> list[dict]:
    """INTRUDER_SCHEMA rows: every other document gets a sentence of the next document at a random position."""
    rows = []
    for k, (doc_id, sentences) in enumerate(docs):
        rng = random.Random(f"{seed}-{doc_id}")
        row = empty_row(INTRUDER_SCHEMA)
        row.update(id=doc_id, source="wsj", title=None, num_candidates=0, intruder_index=-1, label=0)
        sentences = list(sentences)
        if k % 2 == 1:
            donor = docs[(k + 1) % len(docs)][1]
            index = rng.randrange(1, len(sentences))
            intruder = donor[rng.randrange(1, len(donor))]
            row.update(
                label=1,
                intruder_index=index,
                original_sentence=sentences[index],
                intruder_sentence=intruder,
                intruder_source_id=docs[(k + 1) % len(docs)][0],
                num_candidates=1,
                difficulty="unfiltered",
            )
            sentences[index] = intruder
        row["sentences"] = sentences
        rows.append(row)
    return rows


def write_intruder_build(out_dir: str, splits: dict[str, list[dict]], source: str = "wsj") -> str:
    """Write rows as an intruder build: ``out_dir/intruder-<source>/<split>-00000-of-00001.parquet``."""
    config_dir = os.path.join(out_dir, f"intruder-{source}")
    os.makedirs(config_dir, exist_ok=True)
    for split, rows in splits.items():
        rows = [dict(r, split=split) for r in rows]
        table = pa.Table.from_pylist(rows, schema=INTRUDER_SCHEMA)
        pq.write_table(table, os.path.join(config_dir, f"{split}-00000-of-00001.parquet"))
    return out_dir


def build_tokenizer(out_dir: str):
    """Train a Unigram tokenizer on the samples, save it as an ``XLNetTokenizer``; return the tokenizer."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers
    from transformers import XLNetTokenizer

    raw = Tokenizer(models.Unigram())
    raw.normalizer = normalizers.Sequence([normalizers.NFKD(), normalizers.StripAccents()])
    raw.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")]
    )
    trainer = trainers.UnigramTrainer(vocab_size=VOCAB_SIZE, special_tokens=SPECIAL_TOKENS, unk_token="<unk>")
    raw.train_from_iterator(sample_texts(), trainer=trainer)
    vocab = [(token, score) for token, score in json.loads(raw.to_str())["model"]["vocab"]]
    tokenizer = XLNetTokenizer(vocab=vocab, unk_id=0)
    tokenizer.save_pretrained(out_dir)
    return tokenizer


def build_model(out_dir: str, tokenizer, head: bool = True, num_labels: int = 2, seed: int = 0) -> str:
    """A randomly initialised tiny XLNet (with a classification head unless ``head=False``), saved."""
    import torch
    from transformers import XLNetConfig, XLNetForSequenceClassification, XLNetModel

    torch.manual_seed(seed)
    config = XLNetConfig(
        vocab_size=len(tokenizer),
        d_model=32,
        n_layer=2,
        n_head=2,
        d_inner=64,
        num_labels=num_labels,
        dropout=0.0,
    )
    model = (XLNetForSequenceClassification if head else XLNetModel)(config)
    model.save_pretrained(out_dir, safe_serialization=True)
    tokenizer.save_pretrained(out_dir)
    return out_dir


def _cached(name: str, factory, tmp_path_factory) -> str:
    """``factory(FOLDER)`` once per test run, whichever xdist worker asks first (:func:`tests.run_once.shared`)."""

    def make(folder) -> dict:
        factory(str(folder))
        return {}

    folder, _ = shared(tmp_path_factory, name, make)
    return str(folder)


@fixture(scope="session")
def tiny_base_dir(tmp_path_factory) -> str:
    """An untrained tiny XLNet classifier with its tokenizer."""
    needs_model_stack()

    def make(path):
        build_model(path, build_tokenizer(path))

    return _cached("tiny-base", make, tmp_path_factory)


@fixture(scope="session")
def tiny_data_dir(tmp_path_factory) -> str:
    """A small intruder build from the WSJ samples: train / validation / test splits."""

    def make(path):
        rows = intruder_rows(sample_documents())
        write_intruder_build(path, {"train": rows[:40], "validation": rows[40:60], "test": rows[60:90]})

    return _cached("tiny-data", make, tmp_path_factory)


@fixture(scope="session")
def tiny_trained_dir(tmp_path_factory, tiny_base_dir, tiny_data_dir) -> str:
    """The tiny classifier fine-tuned for a few steps on the tiny build (via ``filters.train.train``)."""
    needs_model_stack()
    from incoherent.filters.train import TrainConfig, train

    def make(path):
        train(
            TrainConfig(
                data_dir=tiny_data_dir,
                base_model=tiny_base_dir,
                out=path,
                epochs=2,
                learning_rate=3e-3,
                batch_size=16,
                max_length=64,
                seed=0,
                max_steps=None,
                device="cpu",
            )
        )

    return _cached("tiny-trained", make, tmp_path_factory)
