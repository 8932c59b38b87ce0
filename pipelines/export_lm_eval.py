"""``incoherent export lm-eval DIR [DIR ...] --out TASK_DIR``: shuffle and probe tables -> lm-evaluation-harness
tasks, so any model ``lm_eval`` runs (Hugging Face, vLLM, APIs) is scored on our corpora offline::

    lm_eval --model hf --model_args pretrained=MODEL --tasks incoherent_shuffle --include_path TASK_DIR

DIR is a folder holding ``shuffle-<source>/`` tables (the ``--out`` of ``incoherent shuffle``, or a build: its
``dataset/`` or the build folder itself) and/or ``probe-<phenomenon>/`` tables (the ``--out`` of ``incoherent
probes``). Every shuffle pair becomes a two-choice ``multiple_choice`` item with an empty context: the model's
log-likelihood of each whole document, from its BOS token (:mod:`docs/lm-eval.md` shows that this is what
``score-shuffle --compare sum`` computes). Every probe becomes one whose context is the document before the
intruder and whose choices are the rest of it, the intruder unprobed or probed; its headline metric is
lm-eval's ``acc_mutual_info`` (what the context adds to each choice's log-likelihood), not ``acc``, which a
random model wins by length (docs/lm-eval.md). Writes

    TASK_DIR/incoherent_shuffle_<source>_k<k>.yaml   one task per source and k (pairs of --split)
    TASK_DIR/incoherent_shuffle_<source>.yaml        a group: every k of the source, accuracy weighted by size
    TASK_DIR/incoherent_shuffle.yaml                 a group: every source and k (the overall accuracy)
    TASK_DIR/incoherent_probe_<phenomenon>.yaml      one task per phenomenon: unprobed vs probed document
    TASK_DIR/incoherent_probes.yaml                  a group: every phenomenon
    TASK_DIR/data/<task>.jsonl                       the items each task reads (local ``json`` files, no Hub)
    TASK_DIR/rejected.jsonl                          pairs left out, with their reason
    TASK_DIR/run_summary.json                        items per task, pairs left out per reason

An item is ``{"id", "block_size", "permutation" | "phenomenon", "context", "choices": [A, B], "label"}``:
which of A and B is the coherent document (the original; for a probe the unprobed one) is drawn per pair from a
stable hash of (seed, task, id, k, permutation), so a model that cannot tell them apart scores 50%, not 100%
(lm-eval's argmax takes the first choice on an exact tie). A pair whose two texts are the same (e.g. k = 1 of
a one-block document) is left out (``identical_texts``): it carries no signal, and ``score-shuffle`` counts it
as a tie, outside its accuracy. The data files are named by absolute path in the YAMLs (lm-eval reads
``data_files`` relative to its working directory): export again after moving TASK_DIR.
"""

from __future__ import annotations

import argparse
import json
import os
import posixpath
import time

from incoherent.corpora.seeding import stable_hash
from incoherent.fileio.paths import check_name
from incoherent.pipelines.commands import add_overwrite, list_flag
from incoherent.schemas.records import InputError
from incoherent.sources.parquet import read_open

TAKES_BEAM_ARGS = False  # not a Beam pipeline: any Beam flag is an error (pipelines.cli)
COMMAND = "export lm-eval"
PREFIX = "incoherent"
DATA = "data"
METRICS = ("acc", "acc_norm")  # lm-eval's multiple_choice metrics the shuffle tasks report (docs/lm-eval.md)
# The probe tasks' headline (first, what their group reports first) is lm-eval's ``acc_mutual_info``: each
# choice's log-likelihood given the context minus its log-likelihood alone, so what the context adds, whatever
# the choice's length (summed log-likelihood prefers the shorter choice: a random model's ``acc`` was 0.91, #50).
PROBE_METRICS = ("acc_mutual_info", *METRICS)
SHUFFLE_COLUMNS = ["id", "source", "block_size", "permutation", "original", "shuffled"]
PROBE_COLUMNS = ["id", "phenomenon", "sentences", "intruder_index", "intruder_sentence"]
JOINS = {"space": " ", "newline": "\n"}  # as filters.lm.JOINS (score-shuffle --join), without importing torch
# A choice lm-eval cannot score fails the whole run (0.4.13: ``assert len(continuation_enc) <= max_length``; it cuts
# only the context, and ours is empty). A text of N UTF-8 bytes is at most N tokens for a byte-level BPE (GPT-2,
# Llama 3, Qwen) and N + 1 for SentencePiece with byte fallback (Llama 2, Mistral), so a pair whose longer text
# is at most MAX_BYTES bytes fits every model with more positions than that (8,192: Llama 3, Mistral, Qwen2).
MAX_BYTES = 8_000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "dirs",
        nargs="+",
        metavar="DIR",
        help="folders of shuffle-<source>/ tables (shuffle's --out, a build or its dataset/) or probe-<phenomenon>/ "
        "tables (probes' --out)",
    )
    parser.add_argument("--out", required=True, help="the task folder to write (lm_eval --include_path)")
    list_flag(
        parser,
        "--config",
        metavar="CONFIG",
        help="only these configs, e.g. shuffle-wsj probe-gender (default: all found)",
    )
    parser.add_argument("--split", default="test", help="split to export (test)")
    parser.add_argument(
        "--join",
        default="space",
        choices=tuple(JOINS),
        help="what joins the sentences of a document: space or newline, as score-shuffle's --join (space)",
    )
    parser.add_argument("--seed", type=int, default=0, help="which choice is the coherent one (default 0)")
    parser.add_argument(
        "--max-bytes",
        type=int,
        default=MAX_BYTES,
        metavar="N",
        help="leave out (too_long) a pair whose longer document has more than N UTF-8 bytes: at most N + 1 "
        "tokens, so it fits a model with more positions; lm-eval fails the whole run on a longer one "
        f"(default {MAX_BYTES:,}: models of 8,192 positions; 1,000 for GPT-2's 1,024)",
    )
    add_overwrite(parser)


# --------------------------------------------------------------------------------------------- inputs


def table_files(path: str) -> tuple[str, list[str]]:
    """``(folder, files)``: the ``shuffle-*/`` and ``probe-*/`` Parquet files of ``path`` or of its ``dataset/``
    (a build folder); one clear line when neither has any."""
    from incoherent.pipelines.runtime import storage
    from incoherent.pipelines.runtime.tables import list_tables

    for folder in (path, posixpath.join(storage.absolute(path), "dataset")):
        if not storage.exists(folder):
            continue
        files = list_tables(folder, "shuffle-") + list_tables(folder, "probe-")
        if files:
            return storage.absolute(folder), files
    if not storage.exists(path):
        raise InputError(f"{path}: no such directory")
    raise InputError(
        f"{path}: no shuffle-*/ or probe-*/ tables (write them with `incoherent shuffle`, `build` or `probes`)"
    )


def read_tables(dirs: list[str], configs: list[str], split: str) -> dict[str, list[dict]]:
    """``{config: rows}`` of ``--split`` in every DIR, each config's rows sorted by (id, k, permutation)."""
    from apache_beam.io.filesystems import FileSystems

    found: dict[str, list[str]] = {}
    where: dict[str, str] = {}
    for path in dirs:
        _, files = table_files(path)
        for f in files:
            config = posixpath.basename(posixpath.dirname(f))
            if where.setdefault(config, path) != path:  # two corpora of one name would merge into one task
                raise InputError(
                    f"{config}: in both {where[config]} and {path}; export them to separate --out folders "
                    "(or choose one with --config)"
                )
            found.setdefault(config, []).append(f)
    unknown = [c for c in dict.fromkeys(configs) if c not in found]
    if unknown:
        raise InputError(f"--config: {', '.join(unknown)} not found (found: {', '.join(sorted(found))})")
    tables: dict[str, list[dict]] = {}
    for config in sorted(c for c in found if not configs or c in configs):
        check_name(config, "DIR")
        columns = SHUFFLE_COLUMNS if config.startswith("shuffle-") else PROBE_COLUMNS
        rows: list[dict] = []
        for path in sorted(f for f in found[config] if posixpath.basename(f).startswith(f"{split}-")):
            with FileSystems.open(path) as f:
                try:
                    rows.extend(read_open(f, columns=columns).to_pylist())
                except Exception as exc:  # pyarrow raises several types for corrupt or foreign files
                    raise InputError(f"{path}: not a {config.split('-')[0]} table ({exc})") from None
        if rows:
            tables[config] = sorted(
                rows, key=lambda r: (r["id"], r.get("block_size", 0), r.get("permutation", 0))
            )
    if not tables:
        raise InputError(f"--split {split}: no rows of that split in {', '.join(dirs)}")
    return tables


# --------------------------------------------------------------------------------------------- items


def task_name(*parts: object) -> str:
    """``task_name("shuffle", "wsj", "k2") == "incoherent_shuffle_wsj_k2"`` (lm-eval task names: ``_``, no ``-``)."""
    return "_".join([PREFIX, *(str(p).replace("-", "_").replace(".", "_") for p in parts)])


def task_names(tables: dict[str, list[dict]]) -> dict[str, str]:
    """``{task or group name: what it is}`` for every name the export of ``tables`` writes; one line when two
    configs give one name (in any case: the data files must differ on a case-insensitive disk too).

    :func:`task_name` writes ``-`` and ``.`` as ``_`` (as lm-eval's own task names are), so sources ``news-a``
    and ``news_a`` would both be ``incoherent_shuffle_news_a_k2``, and a source ``x_k1``'s group the k = 1
    task of ``x``: the second's items were written over the first's, silently.

    >>> task_names({"shuffle-news-a": [{"block_size": 2}], "shuffle-news_a": [{"block_size": 2}]})
    Traceback (most recent call last):
    ...
    incoherent.errors.InputError: shuffle-news_a: incoherent_shuffle_news_a, the lm-eval name of its group, \
is also incoherent_shuffle_news_a, the group of shuffle-news-a ('-' and '.' are written '_'; case is not told \
apart); rename a source or export them apart (--config)
    """
    names: dict[str, tuple[str, str]] = {}  # casefolded name -> (name, what)

    def claim(name: str, what: str, config: str) -> None:
        earlier = names.setdefault(name.casefold(), (name, what))
        if earlier[1] != what:
            raise InputError(
                f"{config}: {name}, the lm-eval name of its {what.removesuffix(' of ' + config)}, is also "
                f"{earlier[0]}, the {earlier[1]} ('-' and '.' are written '_'; case is not told apart); rename a "
                "source or export them apart (--config)"
            )

    for kind, group in (("shuffle", task_name("shuffle")), ("probes", task_name("probes"))):
        claim(group, f"group of every {kind} task", kind)
    for config, rows in sorted(tables.items()):
        kind, name = config.split("-", 1)
        if kind == "shuffle":
            claim(task_name("shuffle", name), f"group of {config}", config)
            for k in sorted({int(row["block_size"]) for row in rows}):
                claim(task_name("shuffle", name, f"k{k}"), f"k = {k} task of {config}", config)
        else:
            claim(task_name("probe", name), f"task of {config}", config)
    return {name: what for name, what in names.values()}


def join_text(sentences, join: str) -> str:
    """A document as score-shuffle reads it: its non-empty sentences joined (``filters.lm.join_sentences``)."""
    return JOINS[join].join(s for s in sentences or [] if s)


def two_choice(coherent: str, other: str, seed: int, *key: object) -> tuple[list[str], int]:
    """``(choices, label)``: the two texts in an order drawn from ``(seed, *key)``; ``label`` is the coherent's.

    >>> two_choice("A", "B", 0, "t", "d", 2, 0)[0] in (["A", "B"], ["B", "A"])
    True
    """
    label = stable_hash(seed, "lm-eval", *key) % 2
    return ([coherent, other] if label == 0 else [other, coherent]), label


def too_long(texts: tuple[str, str], max_bytes: int) -> bool:
    """Whether the longer of a pair's texts has more than ``max_bytes`` UTF-8 bytes (:data:`MAX_BYTES`).

    >>> too_long(("é" * 5, "e"), 9), too_long(("é" * 5, "e"), 10)
    (True, False)
    """
    return max(len(text.encode("utf-8")) for text in texts) > max_bytes


def shuffle_items(
    rows: list[dict], source: str, join: str, seed: int, tally, max_bytes: int = MAX_BYTES
) -> dict[str, list[dict]]:
    """``{task: items}`` of one shuffle config, one task per k."""
    tasks: dict[str, list[dict]] = {}
    for row in rows:
        k, permutation = int(row["block_size"]), int(row["permutation"] or 0)
        original, shuffled = join_text(row["original"], join), join_text(row["shuffled"], join)
        reason = "empty_document" if not original.strip() or not shuffled.strip() else None
        if reason is None and original == shuffled:
            reason = "identical_texts"
        if reason is None and too_long((original, shuffled), max_bytes):
            reason = "too_long"
        task = task_name("shuffle", source, f"k{k}")
        if reason:
            tally(reason, {"task": task, "id": row["id"], "block_size": k, "permutation": permutation})
            continue
        choices, label = two_choice(original, shuffled, seed, task, row["id"], k, permutation)
        tasks.setdefault(task, []).append(
            {"id": row["id"], "block_size": k, "permutation": permutation, "context": "", "choices": choices,
             "label": label}
        )  # fmt: skip
    return tasks


def probe_items(
    rows: list[dict], phenomenon: str, join: str, seed: int, tally, max_bytes: int = MAX_BYTES
) -> dict[str, list[dict]]:
    """``{task: items}`` of one probe config: the document up to the intruder is the context, the choices its
    rest with the intruder as it was (gold) or probed (:data:`PROBE_METRICS`: the headline compares what the
    context adds to each choice's log-likelihood, not the choices' lengths). A pair whose intruder opens the
    document has no context to clash with, so its two choices would tie on that metric: ``intruder_first``.

    >>> (item,) = probe_items([{"id": "p", "sentences": ["Ann ran.", "He sat.", "Bo won."], "intruder_index": 1,
    ...     "intruder_sentence": "She sat."}], "gender", "space", 0, print)["incoherent_probe_gender"]
    >>> item["context"], item["choices"][item["label"]], item["choices"][1 - item["label"]]
    ('Ann ran.', 'She sat. Bo won.', 'He sat. Bo won.')
    """
    task, items = task_name("probe", phenomenon), []
    for row in rows:
        sentences = list(row["sentences"] or [])
        index = int(row["intruder_index"])
        unprobed = list(sentences)
        if 0 <= index < len(unprobed):
            unprobed[index] = row["intruder_sentence"]
        probed_text, unprobed_text = join_text(sentences, join), join_text(unprobed, join)
        context = join_text(sentences[: max(index, 0)], join)
        reason = None
        if not 0 <= index < len(unprobed) or not probed_text.strip():
            reason = "bad_probe"
        elif probed_text == unprobed_text:
            reason = "identical_texts"
        elif too_long((probed_text, unprobed_text), max_bytes):
            reason = "too_long"
        elif not context.strip():
            reason = "intruder_first"
        if reason:
            tally(reason, {"task": task, "id": row["id"]})
            continue
        rest = join_text(unprobed[index:], join), join_text(sentences[index:], join)
        choices, label = two_choice(*rest, seed, task, row["id"])
        items.append(
            {
                "id": row["id"],
                "phenomenon": phenomenon,
                "context": context,
                "choices": choices,
                "label": label,
            }
        )
    return {task: items} if items else {}


def task_config(task: str, data_file: str, description: str, metrics=METRICS, delimiter: str = "") -> dict:
    """One lm-eval task: two-choice items read from a local JSONL file. A shuffle task: empty context, no
    delimiter (so the choice is the whole document, scored from the model's BOS token); a probe task: the
    document before the intruder, the sentence join as the delimiter (context + delimiter + choice is the
    whole document)."""
    return {
        "task": task,
        "dataset_path": "json",
        "dataset_kwargs": {"data_files": {"test": data_file}},
        "test_split": "test",
        "output_type": "multiple_choice",
        "doc_to_text": "context",
        "doc_to_choice": "choices",
        "doc_to_target": "label",
        "target_delimiter": delimiter,
        "num_fewshot": 0,
        "metric_list": [{"metric": m, "aggregation": "mean", "higher_is_better": True} for m in metrics],
        "metadata": {"version": 1.0, "description": description, "written_by": f"incoherent {COMMAND}"},
    }


def group_config(group: str, tasks: list[str], metrics=METRICS) -> dict:
    """A group of tasks whose accuracy is the mean over all their items (``weight_by_size``)."""
    return {
        "group": group,
        "task": tasks,
        "aggregate_metric_list": [
            {"metric": m, "aggregation": "mean", "weight_by_size": True} for m in metrics
        ],
        "metadata": {"version": 1.0, "written_by": f"incoherent {COMMAND}"},
    }


def dump_yaml(config: dict) -> str:
    import yaml

    return yaml.safe_dump(config, sort_keys=False, allow_unicode=True, width=10_000)


def jsonl(items: list[dict]) -> str:
    return "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items)


def export(
    tables: dict[str, list[dict]], out: str, join: str, seed: int, max_bytes: int = MAX_BYTES
) -> tuple[dict, dict, list[dict]]:
    """Write the tasks, groups and data files; ``(items per task, groups, rejected)``."""
    from incoherent.fileio.outputs import replace_text

    rejected: list[dict] = []

    def tally(reason: str, record: dict) -> None:
        rejected.append({**record, "reason": reason})

    tasks: dict[str, list[dict]] = {}
    shuffle_groups: dict[str, list[str]] = {}
    probe_tasks: list[str] = []
    for config, rows in tables.items():
        kind, name = config.split("-", 1)
        if kind == "shuffle":
            made = shuffle_items(rows, name, join, seed, tally, max_bytes)
            shuffle_groups[task_name("shuffle", name)] = sorted(made, key=lambda t: int(t.rsplit("_k", 1)[1]))
        else:
            made = probe_items(rows, name, join, seed, tally, max_bytes)
            probe_tasks.extend(made)
        tasks.update(made)
    if not tasks:
        raise InputError("nothing to export: every pair was left out (see the reasons above)")
    os.makedirs(os.path.join(out, DATA), exist_ok=True)
    for task, items in tasks.items():
        data_file = os.path.join(os.path.abspath(out), DATA, f"{task}.jsonl")
        replace_text(data_file, jsonl(items))
        if task in probe_tasks:
            description = "which rest of the document follows its context: the intruder unprobed or probed"
            config = task_config(task, data_file, description, PROBE_METRICS, JOINS[join])
        else:
            description = "which document is coherent: the original or the shuffled"
            config = task_config(task, data_file, description)
        replace_text(os.path.join(out, f"{task}.yaml"), dump_yaml(config))
    groups: dict[str, list[str]] = {}
    for group, members in shuffle_groups.items():
        if members:
            groups[group] = members
    every_k = [t for members in shuffle_groups.values() for t in members]
    if every_k:
        groups[task_name("shuffle")] = every_k
    if probe_tasks:
        groups[task_name("probes")] = sorted(probe_tasks)
    for group, members in groups.items():
        metrics = PROBE_METRICS if group == task_name("probes") else METRICS
        replace_text(os.path.join(out, f"{group}.yaml"), dump_yaml(group_config(group, members, metrics)))
    replace_text(os.path.join(out, "rejected.jsonl"), jsonl(rejected))
    return {t: len(items) for t, items in sorted(tasks.items())}, groups, rejected


def top_groups(groups: dict[str, list[str]]) -> list[str]:
    """The groups that hold every task once: the overall shuffle group and the probes group.

    >>> top_groups({"incoherent_shuffle_wsj": [], "incoherent_shuffle": [], "incoherent_probes": []})
    ['incoherent_shuffle', 'incoherent_probes']
    """
    return [g for g in groups if g in (task_name("shuffle"), task_name("probes"))]


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    from incoherent.pipelines.runtime.run import finish_output, prepare_output
    from incoherent.pipelines.runtime.summary import write_summary

    started = time.time()
    if args.max_bytes < 16:
        raise InputError(f"--max-bytes {args.max_bytes}: at least 16 (a document of a few words)")
    tables = read_tables(args.dirs, args.config, args.split)  # before --out is touched
    task_names(tables)  # every task and group a name of its own, or one line
    prepare_output(args.out, args.overwrite, COMMAND)
    counts, groups, rejected = export(tables, args.out, args.join, args.seed, args.max_bytes)
    reasons: dict[str, int] = {}
    for record in rejected:
        reasons[record["reason"]] = reasons.get(record["reason"], 0) + 1
    write_summary(
        args.out,
        {
            "command": COMMAND,
            "complete": True,
            "params": {"dirs": args.dirs, "configs": args.config, "split": args.split, "join": args.join,
                       "seed": args.seed, "max_bytes": args.max_bytes},
            "seconds": round(time.time() - started, 2),
            "counters": {"export-lm-eval": {"items": sum(counts.values()), **dict(sorted(reasons.items()))}},
            "tasks": counts,
            "groups": groups,
        },
    )  # fmt: skip
    finish_output(args.out, COMMAND)
    left_out = "".join(f"; left out: {reason} {n:,}" for reason, n in sorted(reasons.items()))
    print(f"{len(counts)} tasks, {sum(counts.values()):,} items -> {args.out}{left_out}")
    for group, members in groups.items():
        print(f"  {group}: {len(members)} tasks, {sum(counts[t] for t in members):,} items")
    print(
        f"run: lm_eval --model hf --model_args pretrained=MODEL --tasks {','.join(top_groups(groups))} "
        f"--include_path {args.out}"
    )
    return 0
