"""Pairs and accuracy of the zero-shot k-block shuffle test (plain functions, no Beam, no model).

A pair is one shuffle row: the original document's score against one shuffled version's (mean NLL per token,
lower = more likely). The model is right when the original is strictly better by more than ``TIE_EPSILON``;
a difference within ``TIE_EPSILON`` is a tie, reported apart and left out of the accuracy.

>>> compare(2.0, 2.5)
(True, False)
>>> summarize([{"source": "wsj", "block_size": 1, "correct": True, "tie": False}])["wsj"]["1"]["accuracy"]
1.0
"""

from __future__ import annotations

from collections.abc import Iterable

TIE_EPSILON = 1e-6


def compare(score_original: float, score_shuffled: float) -> tuple[bool, bool]:
    """``(correct, tie)``: the original's score is lower by more than ``TIE_EPSILON``, or within it."""
    diff = score_shuffled - score_original
    return diff > TIE_EPSILON, abs(diff) <= TIE_EPSILON


def summarize(rows: Iterable[dict]) -> dict[str, dict[str, dict]]:
    """``{source: {str(k): {pairs, correct, incorrect, ties, accuracy}}}``; accuracy = correct / (pairs - ties),
    ``None`` when every pair is a tie."""
    counts: dict[str, dict[int, list[int]]] = {}
    for row in rows:
        c = counts.setdefault(row["source"], {}).setdefault(int(row["block_size"]), [0, 0, 0])
        c[0] += 1
        c[1] += bool(row["correct"])
        c[2] += bool(row["tie"])
    out: dict[str, dict[str, dict]] = {}
    for source in sorted(counts):
        out[source] = {}
        for k in sorted(counts[source]):
            pairs, correct, ties = counts[source][k]
            decided = pairs - ties
            out[source][str(k)] = {
                "pairs": pairs,
                "correct": correct,
                "incorrect": decided - correct,
                "ties": ties,
                "accuracy": correct / decided if decided else None,
            }
    return out


def format_table(summary: dict[str, dict[str, dict]], title: str = "") -> str:
    """Accuracy (%) in the layout of Laban et al.'s Table 2: block sizes across, sources down; pair counts and
    ties below.

    >>> print(format_table({"wsj": {"1": {"pairs": 4, "correct": 3, "incorrect": 1, "ties": 0, "accuracy": 0.75}}}))
    source          k=1
    wsj            75.0
    pairs (wsj)       4
    """
    ks = sorted({int(k) for per in summary.values() for k in per})
    width = max([6] + [len(s) + 8 for s in summary])
    lines = [title] if title else []
    lines.append("source".ljust(width) + "".join(f"{f'k={k}':>8}" for k in ks))

    def cell(source: str, k: int, field: str) -> str:
        value = summary[source].get(str(k), {}).get(field)
        if value is None:
            return f"{'-':>8}"
        return f"{100 * value:8.1f}" if field == "accuracy" else f"{value:8d}"

    for source in summary:
        lines.append(source.ljust(width) + "".join(cell(source, k, "accuracy") for k in ks))
    for source in summary:
        lines.append(f"pairs ({source})".ljust(width) + "".join(cell(source, k, "pairs") for k in ks))
        if any(v["ties"] for v in summary[source].values()):
            lines.append(f"ties ({source})".ljust(width) + "".join(cell(source, k, "ties") for k in ks))
    return "\n".join(line.rstrip() for line in lines)


def plot_accuracy(summary: dict[str, dict[str, dict]], path, title: str = "") -> None:
    """``path`` (a file name or a binary file object) gets a PNG: accuracy against k, one line per source, chance at 50% (matplotlib, headless Agg)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    figure = Figure(figsize=(5, 3.5), dpi=100)
    axes = figure.add_subplot()
    for source, per in summary.items():
        ks = [int(k) for k in per if per[k]["accuracy"] is not None]
        axes.plot(ks, [100 * per[str(k)]["accuracy"] for k in ks], marker="o", label=source)
    axes.axhline(50, color="grey", linestyle=":", linewidth=1, label="chance")
    axes.set_xticks(sorted({int(k) for per in summary.values() for k in per}))
    axes.set_xlabel("block size k")
    axes.set_ylabel("accuracy (%)")
    axes.set_ylim(0, 100)
    if title:
        axes.set_title(title, fontsize=9)
    axes.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, format="png", metadata={"Software": None})


def table1(summary: dict[str, dict[str, dict]], k: int = 1) -> dict[str, float | None]:
    """Laban et al.'s Table 1 row of one model: accuracy per domain at block size ``k`` and their unweighted
    mean (``overall``; None when no domain has an accuracy at ``k``).

    >>> table1({"wsj": {"1": {"accuracy": 0.9}}, "reddit": {"1": {"accuracy": 0.7}}})
    {'wsj': 0.9, 'reddit': 0.7, 'overall': 0.8}
    """
    row = {source: per.get(str(k), {}).get("accuracy") for source, per in summary.items()}
    known = [v for v in row.values() if v is not None]
    return {**row, "overall": sum(known) / len(known) if known else None}


def format_table1(row: dict[str, float | None], model: str, k: int = 1) -> str:
    """Table 1's layout: one model's accuracy (%) per domain and the overall mean, for block size ``k``.

    >>> print(format_table1({"wsj": 0.9, "reddit": 0.7, "overall": 0.8}, "gpt2"))
    Table 1 layout (k=1), accuracy (%)
    model    wsj  reddit  overall
    gpt2    90.0    70.0     80.0
    """
    names = list(row)
    width = max(6, len(model) + 2)
    widths = [max(6, len(n) + 2) for n in names]
    head = "model".ljust(width) + "".join(f"{n:>{w}}" for n, w in zip(names, widths, strict=True))
    cells = "".join(
        f"{'-':>{w}}" if row[n] is None else f"{100 * row[n]:>{w}.1f}"
        for n, w in zip(names, widths, strict=True)
    )
    return "\n".join([f"Table 1 layout (k={k}), accuracy (%)", head, model.ljust(width) + cells])
