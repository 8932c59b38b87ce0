"""The card's provenance section (inputs, the filter model, the commands, without local paths:
:mod:`corpora.provenance`) and the sanitised run summaries beside the card.
"""

from __future__ import annotations

import json
import os

import yaml

from incoherent.corpora.card.inputs import BUILD_SUMMARY, LOCAL, SUMMARIES, read_json
from incoherent.corpora.card.metadata import VERSIONED, package_version
from incoherent.corpora.kinds import ingest_runs
from incoherent.corpora.provenance import describe_input, relativise
from incoherent.fileio.outputs import make_folder, replace_text
from incoherent.fileio.paths import Files, is_remote
from incoherent.schemas import SCHEMA_VERSION


def _roots(build_dir: str, build: dict | None) -> dict[str, str | None]:
    config_path = (build or {}).get("config")
    config_dir = os.path.dirname(config_path) if config_path else None
    base = None
    if build and config_dir:
        base = os.path.normpath(
            os.path.join(config_dir, str((build.get("raw_config") or {}).get("base", ".")))
        )
    out = build_dir if is_remote(build_dir) else os.path.abspath(build_dir)
    return {"out": out, "config_dir": config_dir, "base": base}


def _filter_model(path: str, roots: dict, files: Files = LOCAL) -> list[str]:
    metrics_path = os.path.join(path, "metrics.json")
    name = relativise(path, roots)
    if not files.isfile(metrics_path):
        return [f"- adversarial filter: `{name}` (no metrics.json beside it)"]
    metrics = read_json(metrics_path, files)
    config = metrics.get("config") or {}
    validation = metrics.get("validation") or {}
    shown = ", ".join(
        f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}" for k, v in sorted(validation.items())
    )
    return [
        f"- adversarial filter: `{name}`, fine-tuned from `{config.get('base_model', 'unknown')}` "
        f"(epoch {metrics.get('chosen_epoch')} of {config.get('epochs', '?')}, "
        f"{metrics.get('train_examples', 0):,} training examples); validation: {shown or 'none'}"
    ]


def provenance_section(
    build_dir: str,
    build: dict | None,
    summaries: list[dict],
    files: Files = LOCAL,
    out: str | None = None,
) -> list[str]:
    roots = _roots(out or build_dir, build)
    lines = ["## How it was built", "", "### Inputs", ""]
    runs = list(ingest_runs(summaries))
    if not runs:
        lines += [
            "Not recorded here: no ingest run was found under the folder the card was written from (pass "
            "`--build-dir` the folder that holds the ingest runs, or use `incoherent build`).",
            "",
        ]
    else:
        lines += [
            "| role | source | file | size (bytes) | sha256 | wiki | dump date |",
            "|---|---|---|---:|---|---|---|",
        ]
    for summary, kind, params in runs:
        paths = params.get("dumps") or params.get("paths") or []
        role = "history (older dump)" if f"{os.sep}history{os.sep}" in os.sep + summary["_path"] else "input"
        source = params.get("source") or kind
        # recorded by the ingest run (hashed where the input lies); described here for older layouts
        infos = summary.get("inputs")
        if infos is None:
            infos = [describe_input(path, kind) for path in paths]
        for info in infos:
            info = dict(info)
            if "files" in info:
                info["name"] += f" ({info['files']} files)"
            lines.append(
                f"| {role} | {source} | `{info['name']}` | {info['size']:,} | `{info['sha256']}` | "
                f"{info.get('wiki') or ''} | {info.get('dump_date') or ('not in the file name' if kind == 'wikipedia' else '')} |"
            )
    lines += [
        "",
        "Sizes and sha256 are of the files as read (a folder: sha256 over its files' relative names and sha256).",
        "",
    ]
    intruders = next((s for s in summaries if s.get("command") == "intruders"), None)
    if intruders:
        params = intruders.get("params") or {}
        lines += ["### Parameters", ""]
        lines.append(
            f"- seed: `{params.get('seed')}` (all randomness is derived from (seed, purpose, document id))"
        )
        lines.append(
            f"- neighbours: top `{params.get('k')}` most similar documents of the same source; similarity threshold "
            f"`{params.get('similarity_threshold')}` (candidates at or above it are not used); drift threshold "
            f"`{params.get('drift_threshold')}`; validation fraction `{params.get('validation_fraction')}`"
        )
        for source, index in sorted(((intruders.get("retrieval") or {}).get("index") or {}).items()):
            meta_path = os.path.join(index, "index.json")
            if files.isfile(meta_path):
                meta = read_json(meta_path, files)
                lines.append(
                    f"- index `{source}`: DrQA TF-IDF, {meta.get('ngram')}-grams hashed into {meta.get('hash_size'):,} "
                    f"features, tokenizer `{meta.get('tokenizer')}`, {meta.get('num_docs', 0):,} documents, "
                    f"{meta.get('nnz', 0):,} non-zeros"
                )
        if params.get("filter") not in (None, "none"):
            lines += _filter_model(params["filter"], roots, files)
            lines.append(f"- easy threshold: `{params.get('easy_threshold')}`")
        else:
            lines.append("- adversarial filter: none (every intruder is `unfiltered`)")
        lines.append("")
    lines += [
        "### Commands",
        "",
        "Input paths are relative to the build config's `base` (as the config names them); `OUT` is the "
        "build's output folder; other paths are shown by file name.",
        "",
    ]
    lines.append("```bash")
    if build and build.get("commands"):
        config_name = relativise(build.get("config", ""), roots)
        lines.append(f"incoherent build {config_name}".rstrip() + " --out OUT")
        for argv in build["commands"]:
            lines.append("#   incoherent " + " ".join(relativise(list(argv), roots)))
    else:
        for summary in summaries:
            params = json.dumps(relativise(summary.get("params", {}), roots), sort_keys=True)
            lines.append(f"incoherent {summary['command']}  # {summary['_path']}: {params}")
    lines += ["```", ""]
    if build and build.get("raw_config"):
        lines += ["### Build config", "", "```yaml"]
        lines.append(yaml.safe_dump(relativise(build["raw_config"], roots), sort_keys=False).rstrip())
        lines += ["```", ""]
    lines += ["### Versions", ""]
    lines += [
        f"- {package} {package_version(package, 'unknown' if package == 'incoherent' else 'not installed')}"
        for package in VERSIONED
    ]
    lines += [f"- schema version {SCHEMA_VERSION}", ""]
    return lines


def write_summaries(
    build_dir: str, dataset_dir: str, build: dict | None, summaries: list[dict], out: str | None = None
) -> list[str]:
    """Copies of the run summaries (and the build summary) with paths relativised, under ``DATASET_DIR/summaries``.

    ``out``: where the build lies when ``build_dir`` is a local copy of its summaries (a remote build)."""
    roots = _roots(out or build_dir, build)
    folder = os.path.join(dataset_dir, SUMMARIES)
    if os.path.isdir(folder) and not os.path.islink(folder):
        import shutil

        shutil.rmtree(folder)
    make_folder(folder)  # a link there is replaced by a real folder, never written through
    written = []
    items = [(s["_path"], {k: v for k, v in s.items() if k != "_path"}) for s in summaries]
    if build:
        kept = ("command", "config", "raw_config", "resolved", "beam_args", "commands")
        items.append((BUILD_SUMMARY, {k: build[k] for k in kept if k in build}))
    for rel, summary in items:
        summary = {
            k: v for k, v in summary.items() if k != "seconds"
        }  # no wall times: the same build, the same files
        path = os.path.join(folder, rel)
        text = json.dumps(relativise(summary, roots), indent=2, sort_keys=True, default=str)
        replace_text(path, text + "\n")
        written.append(os.path.relpath(path, dataset_dir))
    return written
