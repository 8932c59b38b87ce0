"""``incoherent build [CONFIG]``: ingest -> index -> neighbours -> intruders -> shuffle from one YAML file.

Without CONFIG the bundled ``pipelines/configs/default.yaml`` builds from the repository's ``samples/``
into ``out/sample/``. Every input named by the config is checked before any work starts.

Config (see the default for a complete example)::

    base: ../..                  # relative input paths: against base (relative to the config file), then the CWD
    out: out/sample              # relative to the current directory; --out overrides
    seed: 0
    sources:
      wikipedia: {kind: wikipedia, inputs: [dump.xml.bz2], history: [old-dump.xml.bz2]}
      cnn: {kind: cnn, inputs: [cnn/stories]}
      news: {kind: text, inputs: [news.jsonl], options: {text-field: body}}
    neighbors: {k: 10}
    intruders: {filter: none, similarity_threshold: 0.6, drift_threshold: 0.72, validation_fraction: 0.0}
    shuffle: {block_sizes: [1, 2, 3, 4, 5], max_sentences: 20}

Layout of the output directory::

    OUT/build_summary.json                  config, resolved inputs, seconds per stage
    OUT/dataset/intruder-<source>/          the dataset (Hugging Face layout): intruder, shuffle, candidates
    OUT/dataset/shuffle-<source>/
    OUT/dataset/candidates/
    OUT/work/documents/<source>/            ingest output (documents-<source>/, run_summary.json)
    OUT/work/history/<source>/<dump>/       each older dump ingested on its own
    OUT/work/retrieval/<source>/index/      incoherent index
    OUT/work/retrieval/<source>/neighbors/  incoherent neighbors
    OUT/work/intruders/  OUT/work/shuffle/<source>/   run_summary.json and dead letters of those runs

The tables of the intruder and shuffle runs are moved from ``work/`` into ``dataset/`` when their run ends, so
``incoherent card OUT/dataset --build-dir OUT`` and ``incoherent publish`` see one dataset folder.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
import os
import shutil
import time
from importlib import resources

import yaml

from corpora.card import write_card
from schemas.records import InputError

KINDS = ("wikipedia", "cnn", "text")
BUILD_SUMMARY = "build_summary.json"
DATASET, WORK = "dataset", "work"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "config", nargs="?", metavar="CONFIG", help="YAML build config (default: bundled samples)"
    )
    parser.add_argument("--out", help="output directory (default: the config's `out`)")
    parser.add_argument(
        "--overwrite", action="store_true", help="replace an earlier build in the output directory"
    )


def default_config_path() -> str:
    return str(resources.files("pipelines").joinpath("configs/default.yaml"))


# --------------------------------------------------------------------------------------------- config


def load_config(path: str) -> dict:
    if not os.path.isfile(path):
        raise InputError(f"{path}: no such config file")
    try:
        with open(path, encoding="utf-8") as f:
            config = yaml.safe_load(f)
    except yaml.YAMLError as exc:
        raise InputError(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(config, dict):
        raise InputError(f"{path}: expected a mapping at the top level")
    return config


def resolve_path(value: str, base: str, config_path: str, key: str) -> str:
    """An input path: absolute as given; relative against ``base``, then the current directory."""
    path = os.path.expanduser(str(value))
    if os.path.isabs(path):
        tried = [path]
    else:
        tried = [os.path.normpath(os.path.join(base, path)), os.path.abspath(path)]
    for candidate in tried:
        if os.path.exists(candidate):
            return candidate
    raise InputError(f"{config_path}: {key}: {value} not found (tried {', '.join(dict.fromkeys(tried))})")


def _section(config: dict, name: str, config_path: str) -> dict:
    value = config.get(name) or {}
    if not isinstance(value, dict):
        raise InputError(f"{config_path}: `{name}` must be a mapping")
    return value


def check_config(config: dict, config_path: str) -> dict:
    """The config with every input path resolved and checked; raises :class:`InputError` on the first fault."""
    known = {"base", "out", "seed", "sources", "neighbors", "intruders", "shuffle", "card"}
    unknown = sorted(set(config) - known)
    if unknown:
        raise InputError(f"{config_path}: unknown keys {unknown} (known: {sorted(known)})")
    config_dir = os.path.dirname(os.path.abspath(config_path))
    base = os.path.normpath(os.path.join(config_dir, str(config.get("base", "."))))
    sources = config.get("sources")
    if not isinstance(sources, dict) or not sources:
        raise InputError(f"{config_path}: `sources` must map source names to {{kind, inputs}}")
    resolved = {}
    for name, spec in sources.items():
        where = f"sources.{name}"
        if not isinstance(spec, dict):
            raise InputError(f"{config_path}: {where} must be a mapping with `kind` and `inputs`")
        kind = spec.get("kind")
        if kind not in KINDS:
            raise InputError(f"{config_path}: {where}.kind must be one of {list(KINDS)}, got {kind!r}")
        if kind == "cnn" and name != "cnn":
            raise InputError(f"{config_path}: {where}: CNN documents are named `cnn`; call the source cnn")
        inputs = spec.get("inputs")
        if not isinstance(inputs, list) or not inputs:
            raise InputError(f"{config_path}: {where}.inputs must be a non-empty list of paths")
        history = spec.get("history") or []
        if history and kind != "wikipedia":
            raise InputError(f"{config_path}: {where}.history is only for Wikipedia dumps")
        unknown_keys = sorted(set(spec) - {"kind", "inputs", "history", "options"})
        if unknown_keys:
            raise InputError(f"{config_path}: {where}: unknown keys {unknown_keys}")
        options = spec.get("options") or {}
        if not isinstance(options, dict):
            raise InputError(f"{config_path}: {where}.options must map flag names to values")
        resolved[name] = {
            "kind": kind,
            "inputs": [resolve_path(p, base, config_path, f"{where}.inputs") for p in inputs],
            "history": [resolve_path(p, base, config_path, f"{where}.history") for p in history],
            "options": options,
        }
    neighbors = _section(config, "neighbors", config_path)
    intruders = _section(config, "intruders", config_path)
    shuffle = _section(config, "shuffle", config_path)
    card = _section(config, "card", config_path)
    unknown_card = sorted(set(card) - {"name", "license"})
    if unknown_card:
        raise InputError(f"{config_path}: card: unknown keys {unknown_card} (known: name, license)")
    model = intruders.get("filter", "none")
    if model not in (None, "none"):
        intruders = dict(intruders, filter=resolve_path(model, base, config_path, "intruders.filter"))
    return {
        "sources": resolved,
        "seed": int(config.get("seed", 0)),
        "neighbors": neighbors,
        "intruders": intruders,
        "shuffle": shuffle,
        "card": {
            "name": str(card.get("name", "incoherent coherence corpora")),
            "license": str(card["license"]) if card.get("license") else None,  # None: from the sources
        },
    }


# --------------------------------------------------------------------------------------------- stages


def _flags(options: dict) -> list[str]:
    """``{"block_sizes": [1, 2], "overwrite": True}`` -> ``["--block-sizes", "1,2", "--overwrite"]``."""
    argv: list[str] = []
    for key, value in options.items():
        flag = "--" + str(key).replace("_", "-")
        if value is True:
            argv.append(flag)
        elif value is False or value is None:
            continue
        elif isinstance(value, list):
            argv += [flag, ",".join(str(v) for v in value)]
        else:
            argv += [flag, str(value)]
    return argv


def run_command(argv: list[str], beam_args: list[str], quiet: bool = True) -> None:
    """Run one ``incoherent`` command in this process (its InputError propagates)."""
    from pipelines.cli import COMMANDS, build_parser, selected_module

    words = tuple(argv[:2]) if argv[0] in ("ingest", "export") else (argv[0],)
    module = next((m for w, m, _ in COMMANDS if w == words), None)
    if module is None or importlib.util.find_spec(module) is None:
        raise InputError(f"build: the `{' '.join(words)}` command is not available in this installation")
    parser = build_parser(selected_module(argv))
    args, extra = parser.parse_known_args(argv + list(beam_args))
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink) if quiet else contextlib.nullcontext():
        importlib.import_module(args._module).run(args, extra)


def move_tables(run_dir: str, dataset_dir: str, prefixes: tuple[str, ...]) -> list[str]:
    """Move ``run_dir/<config>/`` folders whose name starts with a prefix into ``dataset_dir``."""
    moved = []
    for name in sorted(os.listdir(run_dir)):
        if name.startswith(prefixes) and os.path.isdir(os.path.join(run_dir, name)):
            target = os.path.join(dataset_dir, name)
            if os.path.exists(target):
                raise InputError(f"{target}: two runs wrote the same table")
            shutil.move(os.path.join(run_dir, name), target)
            moved.append(name)
    return moved


def peak_rss_mb() -> int:
    """High-water resident memory of this process so far (MB; Linux reports ru_maxrss in KB)."""
    import resource

    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)


def prepare_build_dir(out: str, overwrite: bool) -> None:
    if os.path.exists(out) and os.listdir(out):
        if not overwrite:
            raise InputError(
                f"{out}: output directory is not empty (pass --overwrite to replace an earlier build)"
            )
        if not os.path.exists(os.path.join(out, BUILD_SUMMARY)) and not os.path.isdir(
            os.path.join(out, WORK)
        ):
            raise InputError(f"{out}: not an earlier build (no {BUILD_SUMMARY}); refusing to delete it")
        shutil.rmtree(out)
    os.makedirs(out, exist_ok=True)


CONFIG_SUFFIXES = (".yaml", ".yml")


def untangle(config: str | None, beam_args: list[str]) -> tuple[str | None, list[str]]:
    """Undo argparse giving a Beam flag's value to the optional CONFIG positional.

    ``incoherent build --runner DirectRunner`` parses as CONFIG=``DirectRunner`` with ``--runner`` left
    dangling among Beam's flags; put the value back after its flag and take a ``*.yaml`` token as CONFIG.

    >>> untangle("DirectRunner", ["--runner"])
    (None, ['--runner', 'DirectRunner'])
    >>> untangle("DirectRunner", ["--runner", "my.yaml", "--x=1"])
    ('my.yaml', ['--runner', 'DirectRunner', '--x=1'])
    """
    if config is None or config.endswith(CONFIG_SUFFIXES) or os.path.isfile(config):
        return config, beam_args
    dangling = [
        i
        for i, a in enumerate(beam_args)
        if a.startswith("--")
        and "=" not in a
        and (
            i + 1 == len(beam_args)
            or beam_args[i + 1].startswith("-")
            or beam_args[i + 1].endswith(CONFIG_SUFFIXES)
        )
    ]
    if not dangling:
        return config, beam_args
    i = dangling[0]
    rest = beam_args[: i + 1] + [config] + beam_args[i + 1 :]
    configs = [a for a in rest if a.endswith(CONFIG_SUFFIXES) and not a.startswith("-")]
    if configs:
        rest.remove(configs[0])
        return configs[0], rest
    return None, rest


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    args.config, beam_args = untangle(args.config, list(beam_args))
    config_path = args.config or default_config_path()
    raw = load_config(config_path)
    config = check_config(raw, config_path)
    out = args.out or str(raw.get("out", "out/build"))
    if "://" in out:
        raise InputError(
            f"--out {out}: `build` writes to a local directory (run the commands one by one for gs://)"
        )
    prepare_build_dir(out, args.overwrite)
    work, dataset = os.path.join(out, WORK), os.path.join(out, DATASET)
    os.makedirs(dataset, exist_ok=True)
    seed = str(config["seed"])
    timings: dict[str, float] = {}
    peak_rss: dict[str, int] = {}
    summary = {
        "command": "build",
        "config": os.path.abspath(config_path),
        "raw_config": raw,
        "resolved": config,
        "commands": [],  # argv of every stage, for the card
        "beam_args": list(beam_args),
        "complete": False,
        "seconds": timings,
        "peak_rss_mb_after": peak_rss,  # this process's high-water mark after each stage (in-process runners)
    }

    def stage(name: str, argv: list[str]) -> None:
        started = time.time()
        print(f"[build] {name}: incoherent {' '.join(argv)}", flush=True)
        summary["commands"].append(argv + list(beam_args))
        run_command(argv, beam_args)
        timings[name] = round(time.time() - started, 2)
        peak_rss[name] = peak_rss_mb()

    def write_summary() -> None:
        with open(os.path.join(out, BUILD_SUMMARY), "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=2, default=str)
            f.write("\n")

    write_summary()
    docs_dirs, history_dirs, index_args, neighbor_args = {}, [], [], []
    k = str(config["neighbors"].get("k", 10))
    for name, spec in config["sources"].items():
        docs = os.path.join(work, "documents", name)
        source_flag = [] if spec["kind"] == "cnn" else ["--source", name]
        stage(
            f"ingest/{name}",
            ["ingest", spec["kind"], *spec["inputs"], "--out", docs, *source_flag, *_flags(spec["options"])],
        )
        docs_dirs[name] = docs
        for old in spec["history"]:
            label = os.path.basename(old).split(".", 1)[0]
            old_docs = os.path.join(work, "history", name, label)
            stage(
                f"ingest-history/{name}/{label}",
                ["ingest", spec["kind"], old, "--out", old_docs, *source_flag],
            )
            history_dirs.append(old_docs)
        index = os.path.join(work, "retrieval", name, "index")
        neighbors = os.path.join(work, "retrieval", name, "neighbors")
        stage(f"index/{name}", ["index", docs, "--out", index])
        stage(f"neighbors/{name}", ["neighbors", docs, "--index", index, "--k", k, "--out", neighbors])
        index_args += ["--index", f"{name}={index}"]
        neighbor_args += ["--neighbors", f"{name}={neighbors}"]
    intruders_dir = os.path.join(work, "intruders")
    history_flag = ["--history", *history_dirs] if history_dirs else []
    stage(
        "intruders",
        ["intruders", *docs_dirs.values(), "--out", intruders_dir, *index_args, *neighbor_args, *history_flag,
         "--seed", seed, "--k", k, *_flags(config["intruders"])],
    )  # fmt: skip
    move_tables(intruders_dir, dataset, ("intruder-", "candidates"))
    for name, docs in docs_dirs.items():
        shuffle_dir = os.path.join(work, "shuffle", name)
        stage(
            f"shuffle/{name}",
            ["shuffle", docs, "--out", shuffle_dir, "--seed", seed, *_flags(config["shuffle"])],
        )
        move_tables(shuffle_dir, dataset, ("shuffle-",))
    started = time.time()
    write_summary()  # the card reads the stage commands from it
    card_path = write_card(out, dataset, config["card"]["name"], config["card"]["license"])
    timings["card"] = round(time.time() - started, 2)
    print(f"[build] card: {card_path}", flush=True)
    with open(os.path.join(intruders_dir, "run_summary.json"), encoding="utf-8") as f:
        intruders_summary = json.load(f)
    summary["complete"] = True
    summary["total_seconds"] = round(sum(timings.values()), 2)
    summary["dataset"] = {
        name: sorted(os.listdir(os.path.join(dataset, name)))
        for name in sorted(os.listdir(dataset))
        if os.path.isdir(os.path.join(dataset, name))
    }
    summary["sources"] = intruders_summary.get("sources", {})
    write_summary()
    print_build(summary, out)
    return 0


def print_build(summary: dict, out: str) -> None:
    print(f"[build] dataset in {os.path.join(out, DATASET)}:")
    for config, files in summary["dataset"].items():
        print(f"  {config}: {', '.join(files)}")
    for source, s in summary["sources"].items():
        art = s.get("artefact_check", {})
        check = (
            f"; artefact check F1 {art['f1']:.2f} (majority {art['majority_f1']:.2f})" if "f1" in art else ""
        )
        print(
            f"  {source}: {s['documents_read']} read, {s['produced']} intruders of {s['incoherent_attempted']} "
            f"attempted, positive rate {s['positive_rate']}, splits {s['splits']}{check}"
        )
    print(
        f"[build] {summary['total_seconds']} s; stages: "
        + ", ".join(f"{k} {v}s" for k, v in summary["seconds"].items())
    )
