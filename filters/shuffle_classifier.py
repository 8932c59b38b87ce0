"""The supervised Shuffle Test (Laban et al., 2021, section 2.2, their model F): a sequence classifier trained
to tell a document from its k-block shuffles (``incoherent train-shuffle``), and its scorer for
``score-shuffle --scorer classifier``.

Examples come from a shuffle dataset's train split: every original document once, labelled ``coherent``, and
each of its shuffles for the chosen block sizes, labelled ``incoherent``. The paper's recipe is the default:
Adam, learning rate 1e-5, batch size 16, the epoch with the best validation accuracy kept: the shuffle test's
accuracy on the validation pairs (the original more probably coherent than its shuffle), ties broken by
the classification accuracy at 0.5 (validation: the validation split, or a deterministic 10% of the train
documents by stable hash of the id). The saved model's
``provenance.json`` says ``saw_shuffled_text: true``: it is never a zero-shot model.

As a scorer, a text's score is ``-log P(coherent | text)`` in nats (lower = more coherent), so
``score-shuffle`` compares it like an LM's mean NLL.
"""

from __future__ import annotations

import glob
import math
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from incoherent.corpora.seeding import stable_hash
from incoherent.fileio.outputs import files_written
from incoherent.filters.lm_load import model_positions
from incoherent.filters.lm_windows import join_sentences
from incoherent.filters.model import check_weights, load_config, load_pretrained, open_tokenizer
from incoherent.filters.model_source import resolve_model
from incoherent.filters.provenance import PROVENANCE, data_fingerprint, write_provenance
from incoherent.filters.training import check_out, fit, prepare_out
from incoherent.schemas.records import InputError
from incoherent.sources import parquet

COHERENT, INCOHERENT = "coherent", "incoherent"
ID2LABEL = {0: INCOHERENT, 1: COHERENT}
LABEL2ID = {v: k for k, v in ID2LABEL.items()}
VALIDATION_SHARE = 0.1
COLUMNS = ["id", "source", "block_size", "original", "shuffled"]


@dataclass(frozen=True)
class ShuffleTrainConfig:
    """Parameters of ``incoherent train-shuffle`` (recorded in ``provenance.json``)."""

    data_dir: str
    base_model: str
    out: str
    block_sizes: tuple[int, ...] = (1,)
    epochs: int = 3
    learning_rate: float = 1e-5
    batch_size: int = 16
    max_length: int = 512
    seed: int = 0
    device: str = "auto"
    max_steps: int | None = None
    overwrite: bool = False
    precision: str = (
        "auto"  # auto: bf16 autocast on a GPU (fp16 + loss scaling without bf16), float32 on a CPU
    )


def shuffle_split_files(data_dir: str) -> dict[str, list[str]]:
    """``{split: [files]}`` of every ``shuffle-*/`` table of a dataset (or a build's ``dataset/``)."""
    if not os.path.isdir(data_dir):
        raise InputError(f"{data_dir}: no such directory")
    files = sorted(glob.glob(os.path.join(data_dir, "shuffle-*", "*.parquet")))
    if not files:
        files = sorted(glob.glob(os.path.join(data_dir, "dataset", "shuffle-*", "*.parquet")))
    if not files:
        raise InputError(f"{data_dir}: no shuffle-*/ tables (write them with `incoherent shuffle`)")
    out: dict[str, list[str]] = {}
    for path in files:
        out.setdefault(os.path.basename(path).split("-", 1)[0], []).append(path)
    return out


def read_pairs(files: Sequence[str], block_sizes: Sequence[int]) -> list[dict]:
    """Shuffle rows of the chosen block sizes (``id``, ``source``, ``block_size``, ``original``, ``shuffled``)."""

    rows = []
    for path in files:
        table = parquet.read_table(path)
        missing = set(COLUMNS) - set(table.column_names)
        if missing:
            raise InputError(f"{path}: not a shuffle table, missing columns {sorted(missing)}")
        rows += [r for r in table.select(COLUMNS).to_pylist() if int(r["block_size"]) in block_sizes]
    return sorted(rows, key=lambda r: (r["id"], r["block_size"], r["shuffled"]))


def examples_of(pairs: Sequence[dict]) -> list[tuple[str, list[str], int]]:
    """``(id, sentences, label)``: each original once (coherent), every shuffle (incoherent).

    >>> [e[2] for e in examples_of([{"id": "a", "original": ["x", "y"], "shuffled": ["y", "x"]}] * 2)]
    [1, 0, 0]
    """
    out, seen = [], set()
    for pair in pairs:
        if pair["id"] not in seen:
            seen.add(pair["id"])
            out.append((pair["id"], list(pair["original"]), LABEL2ID[COHERENT]))
        out.append((pair["id"], list(pair["shuffled"]), LABEL2ID[INCOHERENT]))
    return out


def carve_validation(pairs: Sequence[dict], share: float = VALIDATION_SHARE):
    """``(train, validation)`` pairs: the documents with the smallest stable hash of their id held out."""
    ids = sorted({p["id"] for p in pairs}, key=lambda i: (stable_hash("shuffle-validation", i), i))
    held = set(ids[: max(1, round(len(ids) * share))]) if len(ids) > 1 else set()
    return [p for p in pairs if p["id"] not in held], [p for p in pairs if p["id"] in held]


def load_base_classifier(model_dir: str, option: str = "--base-model"):
    """``(model, tokenizer)`` to fine-tune: a local checkpoint (no code, safetensors) with a fresh 2-label head."""
    from transformers import AutoModelForSequenceClassification

    model_dir = resolve_model(model_dir, option)  # a directory, or a Hub name in the local cache
    check_weights(model_dir)
    load_config(model_dir)
    tokenizer = open_tokenizer(model_dir)
    try:
        model = AutoModelForSequenceClassification.from_pretrained(
            model_dir,
            use_safetensors=True,
            trust_remote_code=False,
            num_labels=2,
            id2label=ID2LABEL,
            label2id=LABEL2ID,
            ignore_mismatched_sizes=True,
        )
    except (OSError, ValueError, RuntimeError) as exc:
        raise InputError(
            f"{option} {model_dir}: cannot load it as a classifier ({str(exc).splitlines()[0]})"
        ) from None
    _set_padding(model, tokenizer)
    return model, tokenizer


def classifier_positions(config, model_dir: str, unlimited: int) -> int:
    """:func:`filters.lm_load.model_positions`, or ``unlimited`` for a model with relative positions and no limit
    (XLNet's ``max_position_embeddings`` is -1: taken as a length, it failed the tokenizer)."""
    n = getattr(config, "n_positions", None) or getattr(config, "max_position_embeddings", None)
    if isinstance(n, int) and n <= 0:
        return unlimited
    return model_positions(config, model_dir)


def _set_padding(model, tokenizer) -> None:
    if tokenizer.pad_token_id is None:  # GPT-2-like tokenizers: pad with EOS, masked out anyway
        tokenizer.pad_token = tokenizer.eos_token
    if model.config.pad_token_id is None:
        model.config.pad_token_id = tokenizer.pad_token_id


def encode(tokenizer, sentences: Sequence[str], max_length: int, join: str = "space") -> list[int]:
    return tokenizer(join_sentences(list(sentences), join), truncation=True, max_length=max_length)[
        "input_ids"
    ]


def collate(tokenizer, items: list[tuple[list[int], int]]) -> dict:
    import torch

    width = max(len(ids) for ids, _ in items)
    pad = tokenizer.pad_token_id
    input_ids = torch.full((len(items), width), pad, dtype=torch.long)
    mask = torch.zeros((len(items), width), dtype=torch.long)
    for r, (ids, _) in enumerate(items):
        input_ids[r, : len(ids)] = torch.tensor(ids)
        mask[r, : len(ids)] = 1
    labels = torch.tensor([label for _, label in items], dtype=torch.long)
    return {"input_ids": input_ids, "attention_mask": mask, "labels": labels}


def coherent_probabilities(
    model, tokenizer, encoded: list[list[int]], device: str, batch_size: int
) -> list[float]:
    """P(coherent) of every encoded text, in order (batches of similar length)."""
    import torch

    coherent = _coherent_index(model.config)
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
    out = [0.0] * len(encoded)
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            batch = collate(tokenizer, [(encoded[i], 0) for i in chunk])
            batch.pop("labels")
            logits = model(**{k: v.to(device) for k, v in batch.items()}).logits.float()
            probs = torch.softmax(logits, dim=-1)[:, coherent].cpu().tolist()
            for i, p in zip(chunk, probs, strict=True):
                out[i] = p
    return out


def _coherent_index(config) -> int:
    labels = {str(v).lower(): int(k) for k, v in (getattr(config, "id2label", None) or {}).items()}
    if COHERENT not in labels:
        raise InputError(
            f"the classifier has no {COHERENT!r} label (labels: {sorted(labels)}); train it with "
            "`incoherent train-shuffle`"
        )
    return labels[COHERENT]


def validation_scores(model, tokenizer, pairs, device, batch_size, max_length) -> dict:
    """Classification accuracy over the validation examples, and pair accuracy (original more coherent)."""
    examples = examples_of(pairs)
    encoded = [encode(tokenizer, s, max_length) for _, s, _ in examples]
    probs = coherent_probabilities(model, tokenizer, encoded, device, batch_size)
    correct = sum(
        (p >= 0.5) == (label == LABEL2ID[COHERENT]) for p, (_, _, label) in zip(probs, examples, strict=True)
    )
    original = {e[0]: p for p, e in zip(probs, examples, strict=True) if e[2] == LABEL2ID[COHERENT]}
    shuffled = [(e[0], p) for p, e in zip(probs, examples, strict=True) if e[2] != LABEL2ID[COHERENT]]
    pair_correct = sum(original[i] > p for i, p in shuffled)
    return {
        "validation_accuracy": round(correct / len(examples), 4) if examples else 0.0,
        "validation_pair_accuracy": round(pair_correct / len(shuffled), 4) if shuffled else 0.0,
        "validation_examples": len(examples),
    }


def train_shuffle(config: ShuffleTrainConfig) -> dict:
    """Fine-tune the classifier, keep the best validation accuracy, save model + tokenizer + provenance."""
    import torch

    from incoherent.filters.model import resolve_device

    splits = shuffle_split_files(config.data_dir)
    if "train" not in splits:
        raise InputError(
            f"{config.data_dir}: no train split in the shuffle tables (found: {', '.join(sorted(splits))}); "
            "write one with `incoherent shuffle --test-fraction 0.5 --validation-fraction 0.1` or similar"
        )
    train_pairs = read_pairs(splits["train"], config.block_sizes)
    if "validation" in splits:
        validation_pairs = read_pairs(splits["validation"], config.block_sizes)
        validation_source = "validation split"
    else:
        train_pairs, validation_pairs = carve_validation(train_pairs)
        validation_source = (
            f"no validation split: {VALIDATION_SHARE:.0%} of train documents by stable hash of id"
        )
    if not train_pairs:
        raise InputError(f"{config.data_dir}: no train rows with block sizes {list(config.block_sizes)}")
    base_dir = resolve_model(config.base_model, "--base-model")
    check_out(config.out, config.overwrite, [config.data_dir, base_dir], command="train-shuffle")
    device = resolve_device(config.device)
    torch.manual_seed(config.seed)
    model, tokenizer = load_base_classifier(base_dir)
    max_length = min(
        config.max_length, classifier_positions(model.config, config.base_model, config.max_length)
    )
    examples = [(encode(tokenizer, s, max_length), label) for _, s, label in examples_of(train_pairs)]

    def evaluate(m) -> dict:
        return validation_scores(m, tokenizer, validation_pairs, device, config.batch_size, max_length)

    result = fit(
        model,
        examples,
        lambda items: collate(tokenizer, items),
        evaluate,
        key=lambda r: (r["validation_pair_accuracy"], r["validation_accuracy"]),
        name="train-shuffle",
        epochs=config.epochs,
        batch_size=config.batch_size,
        learning_rate=config.learning_rate,
        seed=config.seed,
        device=device,
        optimizer="adam",
        max_steps=config.max_steps,
        precision=config.precision,
        lengths=[len(ids) for ids, _ in examples],
    )
    kept = prepare_out(config.out)
    model.save_pretrained(config.out, safe_serialization=True)
    tokenizer.save_pretrained(config.out)
    provenance = {
        "command": "train-shuffle",
        "objective": "sequence classification: original (coherent) vs k-block shuffle (incoherent)",
        "base_model": config.base_model,
        "data_dir": config.data_dir,
        "data_fingerprint": data_fingerprint(
            (f"{p['id']}/{p['block_size']}", p["shuffled"]) for p in train_pairs
        ),
        "saw_shuffled_text": True,
        "block_sizes": list(config.block_sizes),
        "train_documents": len({p["id"] for p in train_pairs}),
        "train_examples": len(examples),
        "validation_documents": len({p["id"] for p in validation_pairs}),
        "validation_source": validation_source,
        "epochs": config.epochs,
        "seed": config.seed,
        "config": asdict(config),
        "device": device,
        "max_length": max_length,
        **result,
        "files": files_written(config.out, kept, PROVENANCE),  # what a later --overwrite deletes
    }
    write_provenance(config.out, provenance)
    return provenance


class ClassifierScorer:
    """``score_documents(documents, join) -> ([(-log P(coherent), tokens)], counters)``: the interface of
    :class:`filters.lm.LanguageModelScorer`, for ``score-shuffle --scorer classifier``."""

    def __init__(self, model, tokenizer, device: str, batch_size: int = 16):
        self.model, self.tokenizer, self.device, self.batch_size = model, tokenizer, device, batch_size
        self.max_length = classifier_positions(model.config, "model", 512)
        _coherent_index(model.config)

    @classmethod
    def load(cls, model_dir: str, device: str = "auto", dtype: str = "auto", batch_size: int = 16, **_):
        from incoherent.filters.model import resolve_device, resolve_dtype

        device = resolve_device(device)
        model = load_classifier_model(model_dir, resolve_dtype(dtype, device))
        tokenizer = open_tokenizer(model_dir)
        _set_padding(model, tokenizer)
        model.to(device)
        model.eval()
        return cls(model, tokenizer, device, batch_size)

    def score_documents(self, documents, join: str = "space"):
        encoded = [encode(self.tokenizer, d, self.max_length, join) for d in documents]
        probs = coherent_probabilities(self.model, self.tokenizer, encoded, self.device, self.batch_size)
        scores = [(-math.log(max(p, 1e-30)), len(ids)) for p, ids in zip(probs, encoded, strict=True)]
        return scores, {"texts": len(documents)}


def check_classifier(model_dir: str) -> None:
    """A sequence classifier with a ``coherent`` label (cheap checks, no weights loaded)."""
    check_weights(model_dir)
    config = load_config(model_dir)
    architectures = getattr(config, "architectures", None) or []
    if not any(a.endswith("ForSequenceClassification") for a in architectures):
        raise InputError(
            f"--scorer classifier: {model_dir} has no sequence-classification head (architectures: "
            f"{', '.join(architectures) or 'none recorded'}); train one with `incoherent train-shuffle`"
        )
    try:
        _coherent_index(config)
    except InputError as exc:
        raise InputError(f"--scorer classifier: {model_dir}: {exc}") from None


def load_classifier_model(model_dir: str, dtype=None):
    from transformers import AutoModelForSequenceClassification

    check_classifier(model_dir)
    return load_pretrained(AutoModelForSequenceClassification, model_dir, "the classifier", dtype)
