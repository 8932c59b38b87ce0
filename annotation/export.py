"""``annotate export``: the tasks, the key and every platform's files of a study."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence

from incoherent.annotation.study import (
    EXPORT_FILES,
    MAX_PRACTICE,
    PAIR_CONTROL_RULE,
    prepare_out,
    read_rows,
    write_json,
    write_text,
)
from incoherent.schemas.annotation import KEY_FORMAT
from incoherent.schemas.records import InputError


def export(
    dataset_dir: str,
    config: str,
    split: str,
    out_dir: str,
    *,
    seed: int = 0,
    documents: int | None = None,
    per_task: int = 5,
    controls: int | None = None,
    workers: int | None = None,
    per_k: int | None = None,
    block_sizes: Sequence[int] | None = None,
    overwrite: bool = False,
    instructions: str | None = None,
    practice: int = 0,
    unprobed: bool = False,
) -> dict:
    """Write an export folder (:data:`EXPORT_FILES`); returns the key. ``instructions``: a Markdown file (the
    default text of the task kind when None); ``practice``: practice items for the in-lab app and the MTurk HIT;
    ``unprobed``: a probe-* config's documents before the probe (the baseline of INSteD's Table 7 human row:
    with the same seed and --documents, the same documents as the probe study)."""
    from incoherent.annotation import tasks

    kind, text = _checked_request(
        config, per_task, documents, per_k, block_sizes, practice, unprobed, instructions
    )
    rows = read_rows(dataset_dir, config, split)
    if unprobed:
        from incoherent.filters.probe_metrics import unprobed as before_the_probe

        rows = [dict(r, sentences=before_the_probe(r)) for r in rows]
    if kind == "intruder":
        task_list, key_items, chosen, rule, controls, workers, train = _intruder_study(
            rows, dataset_dir, config, split, seed, documents, per_task, controls, workers
        )
    else:
        task_list, key_items, chosen, rule, controls, workers, train = _pair_study(
            rows, dataset_dir, config, split, seed, per_k, block_sizes, per_task, controls, workers
        )
    if not task_list:
        raise InputError(f"{os.path.join(dataset_dir, config)}: no documents to annotate in split '{split}'")
    meta = {
        "config": config,
        "split": split,
        "seed": seed,
        "per_task": per_task,
        "controls": controls,
        "control_rule": rule,
        "workers": workers,
        "documents": len(chosen),
        **({"unprobed": True} if unprobed else {}),
    }
    practice_items: list[dict] = []
    if practice:
        practice_items, practice_key = _practice(
            rows, train, dataset_dir, config, split, kind, key_items, seed, practice
        )
    tasks_doc, key = tasks.documents(
        kind, task_list, key_items, meta, instructions=text, practice=practice_items
    )
    if practice_items:
        key["practice"] = dict(sorted(practice_key.items()))
    _write_export(out_dir, overwrite, kind, tasks_doc, key, practice_items, instructions, text)
    return key


def _checked_request(
    config: str,
    per_task: int,
    documents: int | None,
    per_k: int | None,
    block_sizes: Sequence[int] | None,
    practice: int,
    unprobed: bool,
    instructions: str | None,
) -> tuple[str, str]:
    """The task kind of ``config`` (``intruder`` or ``pair``) and the instructions' text, once every option is
    checked against it."""
    from incoherent.annotation import formats
    from incoherent.annotation import instructions as guide

    # a probe-* config (`incoherent probes`) asks the intruder question of its probed documents
    kind = (
        "intruder"
        if config.startswith(("intruder-", "probe-"))
        else "pair"
        if config.startswith("shuffle-")
        else None
    )
    if kind is None:
        raise InputError(f"--config: {config!r} is neither an intruder-*, probe-* nor a shuffle-* config")
    if per_task < 1 or per_task > formats.MAX_ITEMS:
        raise InputError(f"--per-task: must be 1..{formats.MAX_ITEMS}, got {per_task}")
    if kind == "intruder" and (per_k is not None or block_sizes):
        raise InputError("--per-k/--block-sizes: only for shuffle configs (use --documents)")
    if kind == "pair" and documents is not None:
        raise InputError("--documents: only for intruder configs (use --per-k)")
    if not 0 <= practice <= MAX_PRACTICE:
        raise InputError(f"--practice: must be 0..{MAX_PRACTICE}, got {practice}")
    text = guide.read(instructions, kind)
    try:
        leaked = json.loads(text)
    except (ValueError, RecursionError):
        leaked = None
    if isinstance(leaked, dict) and leaked.get("format") == KEY_FORMAT:
        raise InputError(
            f"--instructions: {instructions} is the key of an export (the gold answers); annotators would see it"
        )
    if unprobed and not config.startswith("probe-"):
        raise InputError(
            f"--unprobed: only for probe-* configs (the documents before the probe), not {config}"
        )
    return kind, text


def _intruder_study(
    rows: list[dict],
    dataset_dir: str,
    config: str,
    split: str,
    seed: int,
    documents: int | None,
    per_task: int,
    controls: int | None,
    workers: int | None,
):
    """An intruder study's tasks and key items, the documents chosen, the control rule, the controls per task
    and workers settled, and the train split if it was read (for the control items)."""
    from incoherent.annotation import tasks

    train: list[dict] | None = None
    controls = (
        (0 if config.startswith("probe-") else 1) if controls is None else controls
    )  # probes: no train split
    workers = workers or 5
    if not 0 <= controls < per_task:
        raise InputError(f"--controls: must be 0..{per_task - 1} (fewer than --per-task), got {controls}")
    chosen = tasks.select(rows, seed, documents)
    pool, rule = [], None
    if controls:
        try:
            train = rows if split == "train" else read_rows(dataset_dir, config, "train")
        except InputError as exc:
            raise InputError(f"{exc}; control items come from it (--controls 0 for none)") from None
        pool, rule = tasks.control_pool(train, {r["id"] for r in chosen}, seed)
        if len(pool) < controls:
            raise InputError(
                f"--controls: {controls} control items per task, but the train split of {config} has only "
                f"{len(pool)} incoherent documents outside the study"
            )
    task_list, key_items = tasks.intruder_tasks(chosen, pool, seed=seed, per_task=per_task, controls=controls)
    return task_list, key_items, chosen, rule, controls, workers, train


def _pair_study(
    rows: list[dict],
    dataset_dir: str,
    config: str,
    split: str,
    seed: int,
    per_k: int | None,
    block_sizes: Sequence[int] | None,
    per_task: int,
    controls: int | None,
    workers: int | None,
):
    """A shuffle study's tasks, as :func:`_intruder_study` (check pairs from the train split when it has one,
    else from the split's documents not chosen)."""
    from incoherent.annotation import tasks

    train: list[dict] | None = None
    controls, workers = (1 if controls is None else controls), workers or 2
    if not 0 <= controls < per_task:
        raise InputError(f"--controls: must be 0..{per_task - 1} (fewer than --per-task), got {controls}")
    rule, pool = (PAIR_CONTROL_RULE if controls else None), []
    found = sorted({int(r["block_size"]) for r in rows})
    missing = sorted(set(block_sizes or ()) - set(found))
    if missing:
        raise InputError(
            f"--block-sizes: {', '.join(map(str, missing))} not in split '{split}' of {config} "
            f"(found: {', '.join(map(str, found))})"
        )
    chosen = tasks.select_pairs(rows, seed, per_k, block_sizes)
    if controls:  # documents outside the study: the train split, else the split's documents not chosen
        if split != "train":
            try:
                train = read_rows(dataset_dir, config, "train")
            except InputError:
                train = None
        studied = {r["id"] for r in chosen}
        pool = tasks.pair_control_pool(train if train is not None else rows, studied, seed)
        if len(pool) < controls:
            raise InputError(
                f"--controls: {controls} check pairs per task, but {config} has only {len(pool)} documents "
                "outside the study (choose fewer with --per-k, or --controls 0 for none)"
            )
    task_list, key_items = tasks.pair_tasks(
        chosen, seed=seed, per_task=per_task, controls=controls, controls_pool=pool
    )
    return task_list, key_items, chosen, rule, controls, workers, train


def _practice(
    rows: list[dict],
    train: list[dict] | None,
    dataset_dir: str,
    config: str,
    split: str,
    kind: str,
    key_items: dict,
    seed: int,
    practice: int,
) -> tuple[list[dict], dict]:
    """``practice`` items and their key: from the train split where the config has one, else from the
    documents of the split not under study."""
    from incoherent.annotation import tasks

    source = "train" if train is not None else split
    if train is None and split != "train":
        try:
            train, source = read_rows(dataset_dir, config, "train"), "train"
        except InputError:
            pass
    busy = {item["id"] for item in key_items.values()}  # documents under study and the controls dealt
    practice_items, practice_key = tasks.practice_items(
        kind, rows if train is None else train, busy, seed, practice
    )
    if len(practice_items) < practice:
        raise InputError(
            f"--practice: {practice} practice items, but the {source} split of {config} has only "
            f"{len(practice_items)} documents outside the study and its control items"
        )
    return practice_items, practice_key


def _write_export(
    out_dir: str,
    overwrite: bool,
    kind: str,
    tasks_doc: dict,
    key: dict,
    practice_items: list[dict],
    instructions: str | None,
    text: str,
) -> None:
    """:data:`EXPORT_FILES`: the tasks, the key, MTurk's and Label Studio's files and the instructions page."""
    from incoherent.annotation import instructions as guide
    from incoherent.annotation import labelstudio, mturk

    answers = os.path.join(out_dir, "answers")
    if os.path.isdir(answers) and os.listdir(answers):
        raise InputError(f"{answers}: holds answers to an earlier export; export to another folder")
    prepare_out(out_dir, EXPORT_FILES, overwrite, owner="key.json")
    write_json(os.path.join(out_dir, "tasks.json"), tasks_doc)
    write_json(os.path.join(out_dir, "key.json"), key)
    write_text(os.path.join(out_dir, "mturk", "input.csv"), mturk.mturk_input_csv(tasks_doc))
    write_text(
        os.path.join(out_dir, "mturk", "template.html"),
        mturk.mturk_template(
            kind, practice_items, preamble=guide.mturk_block(guide.read(instructions, kind, "mturk"))
        ),
    )
    ls_config, ls_tasks = guide.with_labelstudio_instructions(
        labelstudio.labelstudio_config(kind),
        labelstudio.labelstudio_tasks(tasks_doc),
        guide.read(instructions, kind, "labelstudio"),
    )
    write_json(os.path.join(out_dir, "labelstudio", "tasks.json"), ls_tasks)
    write_text(os.path.join(out_dir, "labelstudio", "config.xml"), ls_config)
    write_text(os.path.join(out_dir, "instructions.html"), guide.to_html(text))
