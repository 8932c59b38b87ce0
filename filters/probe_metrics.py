"""INSteD's Table 7 (Shen et al., 2021, §7) from a probes folder: per phenomenon and model, sentence F1 on the
unprobed documents and ΔF1, the change with the probes.

A probe row holds the document with the probed intruder (``sentences``) and the intruder before the probe
(``intruder_sentence``); the unprobed document is the same with the intruder put back. Every document of a
probe table is incoherent, so sentence F1 is that of the intruder position over those documents' non-opening
sentences (:func:`filters.metrics.evaluate_scores`), as the paper computed it on its probe instances.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence

from incoherent.filters import metrics
from incoherent.schemas.records import InputError
from incoherent.sources import parquet

COLUMNS = ["id", "phenomenon", "sentences", "intruder_index", "intruder_sentence"]


def is_probes_dir(path: str) -> bool:
    """Whether ``path`` holds ``probe-*/`` tables (``incoherent probes``) rather than an intruder build."""
    return os.path.isdir(path) and bool(glob.glob(os.path.join(path, "probe-*", "*.parquet")))


def read_probes(probes_dir: str, split: str) -> dict[str, list[dict]]:
    """``{phenomenon: rows}`` of one split, rows sorted by id; a clear error when the split is missing."""
    tables: dict[str, list[dict]] = {}
    for config in sorted(glob.glob(os.path.join(probes_dir, "probe-*"))):
        phenomenon = os.path.basename(config).removeprefix("probe-")
        rows = []
        for path in sorted(glob.glob(os.path.join(config, f"{split}-*.parquet"))):
            table = parquet.read_table(path)
            missing = set(COLUMNS) - set(table.column_names)
            if missing:
                raise InputError(f"{path}: not a probe table, missing columns {sorted(missing)}")
            rows.extend(table.select(COLUMNS).to_pylist())
        if rows:
            tables[phenomenon] = sorted(rows, key=lambda r: r["id"])
    if not tables:
        raise InputError(
            f"{probes_dir}: no probe-*/{split}-*.parquet tables (write them with `incoherent probes`)"
        )
    return tables


def missing_phenomena(tables: dict[str, list[dict]]) -> list[str]:
    """The phenomena of :data:`corpora.probes.PHENOMENA` with no probe of the split in ``tables`` (not
    generated, or no document had a site): rows Table 7 would silently lack.

    >>> missing_phenomena({"gender": [{}], "negation": [{}]})[:3]
    ['animacy-down', 'animacy-up', 'demonstrative']
    """
    from incoherent.corpora.probes import PHENOMENA

    return [p for p in PHENOMENA if p not in tables]


def missing_line(missing: Sequence[str], probes_dir: str, split: str) -> str:
    """The note under Table 7 when phenomena are missing (``""`` when none is)."""
    from incoherent.corpora.probes import PHENOMENA

    if not missing:
        return ""
    return (
        f"not in the table: {len(missing)} of the {len(PHENOMENA)} phenomena have no '{split}' probes in "
        f"{probes_dir} ({', '.join(missing)})"
    )


def unprobed(row: dict) -> list[str]:
    """The document before the probe: the intruder sentence put back."""
    sentences = list(row["sentences"])
    sentences[row["intruder_index"]] = row["intruder_sentence"]
    return sentences


def documents(tables: dict[str, list[dict]]) -> list[list[str]]:
    """Every distinct document to score, probed and unprobed (an unprobed document is shared by the
    phenomena of its id), in a fixed order."""
    seen: dict[tuple[str, ...], None] = {}
    for rows in tables.values():
        for row in rows:
            seen.setdefault(tuple(unprobed(row)))
            seen.setdefault(tuple(row["sentences"]))
    return [list(d) for d in seen]


def table7(
    tables: dict[str, list[dict]], scores: dict[tuple[str, ...], Sequence[float]], threshold: float
) -> list[dict]:
    """One row per phenomenon: documents, sentence F1 unprobed and probed, and ΔF1 (probed - unprobed).

    >>> rows = [{"id": "a", "sentences": ["A.", "She left."], "intruder_index": 1, "intruder_sentence": "He left."}]
    >>> scores = {("A.", "He left."): [0.2], ("A.", "She left."): [0.9]}
    >>> table7({"gender": rows}, scores, 0.5)[0]["delta_f1"]
    1.0
    """
    out = []
    for phenomenon, rows in tables.items():
        gold = [r["intruder_index"] for r in rows]
        before = metrics.evaluate_scores(gold, [scores[tuple(unprobed(r))] for r in rows], threshold)
        after = metrics.evaluate_scores(gold, [scores[tuple(r["sentences"])] for r in rows], threshold)
        f1, probed = before["sentence"]["f1"], after["sentence"]["f1"]
        out.append(
            {
                "phenomenon": phenomenon,
                "documents": len(rows),
                "sentence_f1": f1,
                "probed_sentence_f1": probed,
                "delta_f1": round(probed - f1, 4),
            }
        )
    return out


def format_table7(results: dict[str, list[dict]], title: str = "") -> str:
    """INSteD's Table 7 layout: a row per phenomenon, per model its F1 and ΔF1, and the documents."""
    models = list(results)
    phenomena = [r["phenomenon"] for r in results[models[0]]]
    width = max(len("phenomenon"), *map(len, phenomena)) + 2
    lines = [title] if title else []
    lines.append("phenomenon".ljust(width) + "".join(f"{m[:20]:>24}" for m in models) + f"{'docs':>7}")
    lines.append(" " * width + "".join(f"{'F1':>12}{'ΔF1':>12}" for _ in models))
    for i, phenomenon in enumerate(phenomena):
        cells = "".join(
            f"{results[m][i]['sentence_f1']:>12.4f}{results[m][i]['delta_f1']:>+12.4f}" for m in models
        )
        lines.append(phenomenon.ljust(width) + cells + f"{results[models[0]][i]['documents']:>7}")
    return "\n".join(lines)
