"""The card itself: :func:`render_card` puts the sections together, :func:`write_card` writes ``README.md``,
its figures and the summaries.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import yaml

from incoherent.corpora.card.inputs import (
    LOCAL,
    SUMMARIES,
    check_table_versions,
    config_sources,
    find_configs,
    load_build_summary,
    load_summaries,
)
from incoherent.corpora.card.metadata import (
    CITATIONS,
    COLUMN_DOCS,
    TABLE_KINDS,
    WIKIPEDIA_LICENSE,
    _incoherent_version,
    built_section,
    card_metadata,
    derive_license,
    source_terms,
    tool_link,
    validate_card,
)
from incoherent.corpora.card.probes import probes_section
from incoherent.corpora.card.provenance import provenance_section, write_summaries
from incoherent.corpora.card.statistics import (
    collect_stats,
    funnel_section,
    statistics_section,
    write_figures,
)
from incoherent.corpora.kinds import source_kinds
from incoherent.fileio.outputs import replace_text
from incoherent.fileio.paths import Files
from incoherent.schemas import SCHEMA_VERSION
from incoherent.terminal import printable


def render_card(
    build_dir: str,
    dataset_dir: str,
    pretty_name: str,
    license_id: str | None = None,
    figures: bool = True,
    *,
    files: Files = LOCAL,
    stats: dict | None = None,
    figures_dir: str | None = None,
    out: str | None = None,
    verification: Callable[[str], list[str]] | None = None,
) -> str:
    """The full ``README.md`` text (YAML front matter, then the card); writes the figures when asked.

    A remote build passes its own ``files`` (Beam's filesystems: the card reads only footers and JSON there),
    the ``stats`` its pipeline computed, a local ``figures_dir`` to upload from, and ``out``, the build's
    folder, when ``build_dir`` is a local copy of the run summaries.
    """
    configs = find_configs(dataset_dir, files)
    check_table_versions(configs, files)
    summaries = load_summaries(build_dir)
    build = load_build_summary(build_dir)
    kinds = source_kinds(summaries)
    stats = stats if stats is not None else collect_stats(configs, files)
    by_config = config_sources(configs, stats)
    all_sources = set().union(*by_config.values())
    derived, reason = derive_license(all_sources, kinds)
    chosen = license_id or derived
    meta = card_metadata(dataset_dir, pretty_name, chosen, configs, files, kinds)
    default = next(c["config_name"] for c in meta["configs"] if c.get("default"))
    intruders = next((s for s in summaries if s.get("command") == "intruders"), None)
    params = (intruders or {}).get("params") or {}
    threshold = params.get("similarity_threshold")
    figure_links = (
        write_figures(stats, figures_dir or dataset_dir, threshold, params.get("easy_threshold"))
        if figures
        else []
    )
    lines = [
        *_head_section(meta, configs, pretty_name),
        *built_section(configs, by_config, kinds, build),
        *_usage_section(meta, configs, default),
    ]
    lines += ["", "Labels: `0` = coherent, `1` = intruder.", "", "## Statistics", ""]
    lines += statistics_section(stats)
    lines += funnel_section(intruders, threshold)
    lines += probes_section(stats, summaries)
    if (
        files is LOCAL and verification is not None
    ):  # `incoherent annotate verify` writes into a local dataset
        lines += verification(dataset_dir)
    if figure_links:
        lines += ["## Figures", ""]
        for caption, rel in figure_links:
            lines += [f"![{caption}]({rel})", ""]
    lines += columns_section(meta)
    lines += provenance_section(build_dir, build, summaries, files, out)
    lines += [
        "Every record dropped on the way is counted in the run summaries (copies under `summaries/`, paths "
        "relativised); ids are stable source ids and all randomness is derived from (seed, id), so the same inputs "
        "and seed rebuild the same rows.",
        "",
        "## Sources and licences",
        "",
    ]
    lines += licence_section(license_id, derived, reason, all_sources, kinds, build)
    # text from the user (--name, --license, a config's licence terms) and from the data, never raw control
    # characters: a reader `cat`s the card (incoherent.terminal.printable; newlines and tabs kept)
    text = printable("\n".join(lines), lines=True)
    validate_card(text)
    return text


def _head_section(meta: dict, configs: dict, pretty_name: str) -> list[str]:
    """The YAML front matter, the title and one line per kind of table the dataset holds."""
    return [
        "---",
        yaml.safe_dump(meta, sort_keys=False, allow_unicode=True).rstrip(),
        "---",
        "",
        f"# {pretty_name}",
        "",
        f"Coherence-evaluation corpora built with {tool_link()} {_incoherent_version()} (schema version "
        f"{SCHEMA_VERSION}; how: [`{SUMMARIES}/`]({SUMMARIES}/)).",
        "",
        *(
            f"- `{kind}{'' if kind == 'candidates' else '-*'}`: {text}"
            for kind, text in TABLE_KINDS.items()
            if any(c.split("-", 1)[0] == kind for c in configs)
        ),
        "",
    ]


def _usage_section(meta: dict, configs: dict, default: str) -> list[str]:
    """How to load the default config, then the table of configs, splits and rows."""
    first_split = "train" if "train" in configs[default] else sorted(configs[default])[0]
    lines = [
        "## Usage",
        "",
        "```python",
        "from datasets import load_dataset",
        "",
        f'ds = load_dataset("<this repo or folder>", "{default}")  # the default config: load_dataset("<repo>") alike',
        f'print(ds["{first_split}"][0])',
        "```",
        "",
        "## Configs and splits",
        "",
        "| config | split | rows |",
        "|---|---|---:|",
    ]
    for info in meta["dataset_info"]:
        for split in info["splits"]:
            lines.append(f"| `{info['config_name']}` | {split['name']} | {split['num_examples']:,} |")
    return lines


def columns_section(meta: dict) -> list[str]:
    """One description of the columns per kind of table (``intruder-*``, ``shuffle-*``, ...)."""
    lines = ["## Columns", ""]
    by_table: dict[str, list[dict]] = {}
    for info in meta["dataset_info"]:
        by_table.setdefault(info["config_name"].split("-", 1)[0], []).append(info)
    for table, infos in by_table.items():
        docs = COLUMN_DOCS.get(table, {})
        described = [f"- `{f['name']}`: {docs[f['name']]}" for f in infos[0]["features"] if f["name"] in docs]
        if described:
            names = ", ".join(f"`{info['config_name']}`" for info in infos)
            lines += [f"{names}:", "", *described, ""]
    return lines


def licence_section(
    license_id: str | None, derived: str, reason: str, all_sources: set, kinds: dict, build: dict | None
) -> list[str]:
    """The licence chosen (by the builder or derived from the sources), each source's terms, the citation."""
    if license_id and license_id != derived:
        lines = [
            f"Licence `{license_id}` set by the builder (derived from the sources: `{derived}`, {reason})."
        ]
    elif derived == WIKIPEDIA_LICENSE:
        lines = [f"Licence `{derived}`: {reason}."]
    else:
        lines = [f"Licence `other`: {reason}."]
    lines += ["", "The terms of each source's text:", ""]
    lines += [f"- `{source}`: {source_terms(source, kinds, build)}" for source in sorted(all_sources)]
    lines += [
        "",
        "Check the terms of every source you include before redistributing.",
        "",
        "## Citation",
        "",
        CITATIONS,
        "",
    ]
    return lines


def write_card(
    build_dir: str,
    dataset_dir: str,
    pretty_name: str,
    license_id: str | None = None,
    verification: Callable[[str], list[str]] | None = None,
) -> str:
    """Write ``README.md``, ``figures/*.png`` and ``summaries/`` into ``dataset_dir``; returns the card's path.

    ``verification(dataset_dir)`` gives the lines of the "Human verification" section
    (:func:`annotation.verify.card_lines`; passed in because ``annotation`` sits above ``corpora``).
    """
    text = render_card(build_dir, dataset_dir, pretty_name, license_id, verification=verification)
    summaries = load_summaries(build_dir)
    write_summaries(build_dir, dataset_dir, load_build_summary(build_dir), summaries)
    path = os.path.join(dataset_dir, "README.md")
    replace_text(path, text)  # a link planted at README.md is replaced, its target left alone
    return path
