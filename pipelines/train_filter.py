"""``incoherent train-filter DATA_DIR --out MODEL_DIR``: fine-tune the adversarial intruder classifier.

Trains any ``AutoModelForSequenceClassification`` checkpoint (default ``xlnet-large-cased``: a local
directory, or a name already in the Hugging Face cache) on the train split of an intruder build, picks the
epoch that does best on validation, and writes safetensors weights, the tokenizer and ``metrics.json``. No
Beam here: training is one process on one GPU (or the CPU).
"""

from __future__ import annotations

import argparse

from incoherent.filters.hardware import add_precision_argument
from incoherent.pipelines.commands import DEVICE_HELP, add_overwrite
from incoherent.pipelines.runtime.model_stack import require_model_stack
from incoherent.pipelines.runtime.threads import (
    add_torch_threads_argument,
    check_torch_threads,
    torch_threads,
)

TAKES_BEAM_ARGS = False  # not a Beam pipeline: any Beam flag is an error (pipelines.cli)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "data_dir", metavar="DATA_DIR", help="an intruder build (intruder-<source>/<split>-*.parquet)"
    )
    parser.add_argument("--out", required=True, metavar="MODEL_DIR", help="where the trained model goes")
    parser.add_argument(
        "--base-model",
        default="xlnet-large-cased",
        help="a directory, or a Hub name in the local Hugging Face cache (default: xlnet-large-cased)",
    )
    parser.add_argument("--epochs", type=int, default=2, help="training epochs (2)")
    parser.add_argument("--learning-rate", type=float, default=1e-5, help="peak AdamW learning rate (1e-5)")
    parser.add_argument("--batch-size", type=int, default=16, help="examples per step (16)")
    parser.add_argument(
        "--max-length", type=int, default=512, help="tokens per sentence + document input (512)"
    )
    parser.add_argument("--bf16", action="store_true", help="the same as --precision bfloat16")
    add_precision_argument(parser)
    parser.add_argument("--seed", type=int, default=0, help="random seed (0)")
    parser.add_argument("--device", default="auto", choices=("auto", "cuda", "cpu"), help=DEVICE_HELP)
    parser.add_argument("--max-steps", type=int, default=None, help="stop after this many steps (smoke runs)")
    add_torch_threads_argument(parser, "torch threads (0: every core this process may use)")
    add_overwrite(parser)


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    require_model_stack("train-filter")  # before any work: one line when the extra is missing
    from incoherent.pipelines.runtime.numbers import TRAINING, Rule, check_numbers

    check_numbers(vars(args), TRAINING | {"max_length": Rule(16, 1 << 24, whole=True)})  # before any loading
    from incoherent.filters.model_source import resolve_model

    resolve_model(args.base_model, "--base-model")  # a missing model is refused before torch loads
    from incoherent.filters.metrics import format_table
    from incoherent.filters.train import TrainConfig, train

    config = TrainConfig(
        data_dir=args.data_dir,
        out=args.out,
        base_model=args.base_model,
        epochs=args.epochs,
        learning_rate=args.learning_rate,
        batch_size=args.batch_size,
        max_length=args.max_length,
        bf16=args.bf16,
        precision=args.precision,
        seed=args.seed,
        device=args.device,
        max_steps=args.max_steps,
        overwrite=args.overwrite,
    )
    from incoherent.filters.threads import torch_threads_during

    with torch_threads_during(torch_threads(requested=check_torch_threads(args.torch_threads))):
        summary = train(config)
    print(
        f"trained {args.base_model} on {summary['train_examples']} examples ({summary['device']}), "
        f"epoch {summary['chosen_epoch']} kept ({summary['validation_source']})"
    )
    if summary["validation"]:
        print(format_table(summary["validation"], title="validation"))
    print(f"wrote {args.out} (model.safetensors, tokenizer, metrics.json)")
    return 0
