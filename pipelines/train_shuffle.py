"""``incoherent train-shuffle DATA_DIR --base-model MODEL_DIR --out MODEL_DIR``: the supervised Shuffle Test.

Fine-tunes a sequence classifier on a shuffle dataset's train split (originals coherent, their k-block
shuffles incoherent; Laban et al.'s model F: Adam, learning rate 1e-5, batch size 16), keeps the epoch with the
best validation accuracy and writes safetensors weights, the tokenizer and ``provenance.json``
(``saw_shuffled_text: true``): :mod:`filters.shuffle_classifier`. Score it with ``score-shuffle --scorer
classifier``; its results are labelled "supervised (not zero-shot)".
"""

from __future__ import annotations

import argparse

from incoherent.filters.hardware import add_precision_argument
from incoherent.pipelines.commands import DEVICE_HELP, add_overwrite, list_item
from incoherent.pipelines.runtime.model_stack import require_model_stack
from incoherent.pipelines.runtime.threads import (
    add_torch_threads_argument,
    check_torch_threads,
    torch_threads,
)
from incoherent.schemas.records import InputError

TAKES_BEAM_ARGS = False  # not a Beam pipeline: any Beam flag is an error (pipelines.cli)


def block_sizes(values: list[int]) -> tuple[int, ...]:
    """``--k 3 1`` -> ``(1, 3)``.

    >>> block_sizes([3, 1, 3])
    (1, 3)
    """
    sizes = tuple(sorted(set(values)))
    if not sizes or min(sizes) < 1:
        raise InputError(f"--k: block sizes must be >= 1, got {' '.join(map(str, values))}")
    return sizes


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "data_dir", metavar="DATA_DIR", help="a shuffle dataset with a train split (shuffle-*/)"
    )
    parser.add_argument(
        "--base-model",
        required=True,
        metavar="MODEL_DIR",
        help="a checkpoint: a directory, or a Hub name in the local Hugging Face cache",
    )
    parser.add_argument("--out", required=True, metavar="MODEL_DIR", help="where the classifier goes")
    parser.add_argument(
        "--k",
        nargs="+",
        type=list_item(int, "--k"),
        default=[1],
        metavar="K",
        help="block sizes whose shuffles are the incoherent examples (default: 1)",
    )
    parser.add_argument("--epochs", type=int, default=3, help="training epochs (3)")
    parser.add_argument("--learning-rate", type=float, default=1e-5, help="Adam learning rate (1e-5)")
    parser.add_argument("--batch-size", type=int, default=16, help="examples per step (16)")
    parser.add_argument("--max-length", type=int, default=512, help="input tokens (512, at most the model's)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (0)")
    parser.add_argument("--device", default="auto", choices=("auto", "cuda", "cpu"), help=DEVICE_HELP)
    parser.add_argument("--max-steps", type=int, default=None, help="stop after this many steps (smoke runs)")
    add_torch_threads_argument(parser, "torch threads (0: every core this process may use)")
    add_precision_argument(parser)
    add_overwrite(parser)


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    require_model_stack("train-shuffle")  # before any work: one line when the extra is missing
    from incoherent.pipelines.runtime.numbers import TRAINING, check_numbers

    check_numbers(vars(args), TRAINING)  # before any loading
    from incoherent.filters.model_source import resolve_model

    resolve_model(args.base_model, "--base-model")  # a missing model is refused before torch loads
    from incoherent.filters.shuffle_classifier import ShuffleTrainConfig, train_shuffle

    config = ShuffleTrainConfig(
        data_dir=args.data_dir,
        base_model=args.base_model,
        out=args.out,
        block_sizes=block_sizes(args.k),
        epochs=args.epochs,
        learning_rate=args.learning_rate,
        batch_size=args.batch_size,
        max_length=args.max_length,
        seed=args.seed,
        device=args.device,
        max_steps=args.max_steps,
        overwrite=args.overwrite,
        precision=args.precision,
    )
    from incoherent.filters.threads import torch_threads_during

    with torch_threads_during(torch_threads(requested=check_torch_threads(args.torch_threads))):
        p = train_shuffle(config)
    print(
        f"trained on {p['train_examples']} examples of {p['train_documents']} documents (k = "
        f"{','.join(map(str, p['block_sizes']))}), validation: {p['validation_source']} ({p['device']})"
    )
    print("epoch  validation accuracy  pair accuracy")
    for record in p["history"]:
        mark = "  <- kept" if record["epoch"] == p["chosen_epoch"] else ""
        print(
            f"{record['epoch']:>5}  {100 * record['validation_accuracy']:>19.1f}"
            f"  {100 * record['validation_pair_accuracy']:>13.1f}{mark}"
        )
    print(f"wrote {args.out} (model.safetensors, tokenizer, provenance.json): supervised (not zero-shot)")
    return 0
