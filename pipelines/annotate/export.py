"""``incoherent annotate export DATASET_DIR --config CONFIG --out TASKS_DIR``: annotation tasks of a built dataset.

Writes ``tasks.json`` (what annotators see), ``key.json`` (the gold: keep it), Amazon Mechanical Turk's batch
input CSV and HTML template (``mturk/``) and Label Studio's tasks and labeling configuration
(``labelstudio/``). Deterministic from ``--seed``.
"""

from __future__ import annotations

import argparse

from incoherent.pipelines.commands import add_overwrite, list_item
from incoherent.schemas.records import InputError

TAKES_BEAM_ARGS = False  # not a Beam pipeline: any Beam flag is an error (pipelines.cli)
MAX_WORKERS = 100  # annotators per task (INSteD asked 5, Laban et al. 2)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "dataset_dir", metavar="DATASET_DIR", help="a built dataset (e.g. out/sample/dataset)"
    )
    parser.add_argument(
        "--config",
        required=True,
        help="intruder-<source>, probe-<phenomenon> (`incoherent probes`) or shuffle-<source>",
    )
    parser.add_argument("--split", default="test", help="split to annotate (test)")
    parser.add_argument("--out", required=True, metavar="TASKS_DIR", help="export folder")
    parser.add_argument("--seed", type=int, default=0, help="selection, control items and order (0)")
    parser.add_argument("--documents", type=int, default=None, help="intruder: documents to annotate (all)")
    parser.add_argument("--per-task", type=int, default=5, help="items per task, control items included (5)")
    parser.add_argument(
        "--controls",
        type=int,
        default=None,
        help="check documents (control items) per task (1; 0 for probes): intruder: easy training documents; "
        "shuffle: an original beside its words reversed",
    )
    parser.add_argument("--workers", type=int, default=None, help="annotators per task (5; 2 for pairs)")
    parser.add_argument("--per-k", type=int, default=None, help="shuffle: documents per block size (all)")
    parser.add_argument(
        "--block-sizes",
        type=list_item(int, "--block-sizes"),
        nargs="+",
        default=None,
        help="shuffle: block sizes (all)",
    )
    parser.add_argument(
        "--instructions",
        default=None,
        metavar="FILE.md",
        help="instructions (Markdown; consent text may be part of them) shown in-lab, on MTurk and in Label "
        "Studio (a default text with a worked example per task kind)",
    )
    parser.add_argument(
        "--practice",
        type=int,
        default=0,
        metavar="N",
        help="N practice items with feedback before the study (in-lab app and MTurk HIT), never counted (0)",
    )
    parser.add_argument(
        "--unprobed",
        action="store_true",
        help="probe-* configs: the documents before the probe, the baseline study of INSteD's Table 7 human row "
        "(`annotate report PROBE_STUDY --baseline THIS_STUDY`); the same --seed and --documents give the same "
        "documents",
    )
    add_overwrite(parser)


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    from incoherent.annotation.export import export

    for flag in ("documents", "workers", "per_k"):
        value = getattr(args, flag)
        if value is not None and value < 1:
            raise InputError(f"--{flag.replace('_', '-')}: must be >= 1, got {value}")
    if args.workers is not None and args.workers > MAX_WORKERS:
        raise InputError(f"--workers: must be 1..{MAX_WORKERS} annotators per task, got {args.workers}")
    options = (
        "seed", "documents", "per_task", "controls", "workers", "per_k", "block_sizes", "overwrite",
        "instructions", "practice", "unprobed",
    )  # fmt: skip
    key = export(
        args.dataset_dir, args.config, args.split, args.out, **{o: getattr(args, o) for o in options}
    )
    roles = [item["role"] for item in key["items"].values()]
    practice = f", {len(key['practice'])} practice items" if key.get("practice") else ""
    print(
        f"{len(key['tasks'])} tasks of up to {key['per_task']} items ({roles.count('test')} documents, "
        f"{roles.count('control')} control items{practice}), {key['workers']} annotators each -> {args.out} "
        f"(export {key['export_id']}; keep key.json to yourself)"
    )
    return 0
