"""The printed tables, PNG figures and dataset-card section of a human annotation study.

Figures are drawn headless with the card's helpers (no date in the PNG metadata: the same answers give the
same bytes).
"""

from __future__ import annotations

import os

from incoherent.terminal import printable

VERIFICATION_DIR = "human_verification"


def _fmt(value) -> str:
    """A table cell; text (worker ids, names from answer files) with control characters escaped."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4f}"
    return printable(value)


def _table(header: list[str], rows: list[list]) -> list[str]:
    cells = [header] + [[_fmt(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    return ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells]


def skipped_note(count: int) -> str:
    """What ``report``, ``release`` and ``verify`` say of the lines of ``answers.jsonl`` they could not use.

    >>> skipped_note(2)
    'skipped: 2 lines of answers.jsonl that are not answers'
    """
    return f"skipped: {count} lines of answers.jsonl that are not answers"


def tables(report: dict) -> str:
    """The report as text tables for the terminal."""
    kept = report["kept"]
    spread = report["annotators_per_document"]
    lines = [
        f"{report['documents']} documents, {report['answers']} answers by {report['annotators']} annotators"
        f" ({report['unanswered']} documents unanswered)",
        f"annotators per document: {_spread(spread)}",
        f"kept (>= {report['min_agreement']} agree): {kept['documents']} ({_fmt(kept['fraction'])})",
    ]
    if report.get("skipped_lines"):
        lines.append(skipped_note(report["skipped_lines"]))
    lines.append("")
    rows = [
        ["human accuracy", report["human_accuracy"]],
        ["human F1 (intruder position)", report["human_f1"]],
        *(
            [
                [
                    f"human F1, every judgement ({report['judgements']['judgements']})",
                    report["judgements"]["f1"],
                ]
            ]
            if report["kind"] == "intruder"
            else []
        ),
        ["Krippendorff's alpha (nominal)", report["krippendorff_alpha"]],
        ["Cohen's kappa (two annotators)", report["cohen_kappa"]],
        ["control accuracy", report["control_accuracy"]],
        ["judgement accuracy", report["judgements"]["accuracy"]],
        ["mean seconds per answer (check documents included)", report["mean_seconds"]],
        ["median seconds per answer (check documents included)", report["median_seconds"]],
    ]
    lines += _table(["", "value"], rows) + [""]
    intruder = report["kind"] == "intruder"
    lines += ["per annotator (documents under study only: check documents left out):"]
    lines += _table(
        ["annotator", "judgements", "accuracy"]
        + (["coherent/incoherent"] if intruder else [])
        + ["mean s", "median s"],
        [
            [w, v["judgements"], v["accuracy"]]
            + ([v["document_accuracy"]] if intruder else [])
            + [v["mean_seconds"], v["median_seconds"]]
            for w, v in [*report["per_annotator"].items(), ("all judgements", report["judgements"])]
        ],
    )
    lines.append("")
    if report["kind"] == "intruder":
        u = report["unanimous"]
        lines += [f"unanimous documents: {u['documents']} ({u['right_position']} with the right position)"]
        lines += _table(
            ["human \\ gold", "without intruder", "with intruder"],
            [[h, u[h]["without_intruder"], u[h]["with_intruder"]] for h in ("coherent", "incoherent")],
        )
        lines.append("")
    else:
        lines += _table(
            ["k", "judgements", "accuracy", "kappa", "median s"],
            [
                [k, v["judgements"], v["accuracy"], v["cohen_kappa"], v["median_seconds"]]
                for k, v in report["per_k"].items()
            ],
        )
        lines.append("")
    hist = report["gold_agreement"]
    lines += ["annotators giving the gold answer: documents"]
    lines += _table(
        ["annotators", "all", "incoherent"],
        [[n, c, (hist["incoherent"] or {}).get(n, "-")] for n, c in hist["all"].items()],
    )
    model = report.get("model")
    if model:
        lines += [
            "",
            f"model: {model['predictions']}",
            "model accuracy by annotators giving the gold answer:",
        ]
        lines += _table(
            ["annotators", "documents", "model accuracy"],
            [[n, v["documents"], v["model_accuracy"]] for n, v in model["by_agreement"].items()],
        )
        if model.get("per_k"):
            lines += ["", "accuracy per block size k (human judgements, model):"]
            lines += _table(
                ["k", "human", "model"],
                [[k, v["human_accuracy"], v["model_accuracy"]] for k, v in model["per_k"].items()],
            )
        hm = model["human_vs_model"]
        lines += ["", "human vs model on the kept documents:"]
        lines += _table(
            ["", "documents", "accuracy", "F1"],
            [
                [who, hm[who]["documents"], hm[who]["accuracy"], hm[who].get("f1")]
                for who in ("human", "model")
            ],
        )
    return "\n".join(lines)


def _spread(spread: dict) -> str:
    """``{min, median, max}`` as ``2-3 (median 3)``, or ``3`` when every document has the same number."""
    if spread["min"] is None:
        return "-"
    if spread["min"] == spread["max"]:
        return str(spread["min"])
    return f"{spread['min']}-{spread['max']} (median {spread['median']:g})"


def review_table(assignments: list[dict]) -> str:
    """``annotate review``'s table: one row per assignment, its check documents wrong of answered, its median
    seconds per item beside the floor it is held to (what the decision compares), MTurk's work time (the whole
    HIT, seconds) and the decision."""
    return "\n".join(
        _table(
            [
                "assignment",
                "worker",
                "answers",
                "checks wrong",
                "median s/item",
                "floor s",
                "work time s",
                "decision",
            ],
            [
                [
                    a["assignment_id"],
                    a["worker"],
                    a["answers"],
                    f"{a['control_errors']}/{a['controls']}",
                    "-" if a["median_seconds"] is None else f"{a['median_seconds']:.1f}",
                    "-" if a.get("min_seconds") is None else f"{a['min_seconds']:g}",
                    "-" if a["work_time_seconds"] is None else f"{a['work_time_seconds']:g}",
                    a["decision"] + (f": {a['reason']}" if a["reason"] else ""),
                ]
                for a in assignments
            ],
        )
    )


def write_figures(report: dict, out_dir: str) -> list[str]:
    """``figures/gold_agreement.png`` (INSteD's Figure 2) and, with predictions, ``figures/model_by_agreement.png``
    (Figure 3); relative paths of the files written."""
    from incoherent.corpora.card.figures import SIZE, _pyplot, _save
    from incoherent.fileio.outputs import make_folder

    make_folder(os.path.join(out_dir, "figures"))  # a link there is replaced, never written through
    plt = _pyplot()
    written = []
    hist = report["gold_agreement"]
    fig, ax = plt.subplots(figsize=SIZE)
    series = [("all documents", hist["all"])] + (
        [("incoherent documents", hist["incoherent"])] if hist["incoherent"] else []
    )
    keys = sorted({int(n) for _, h in series for n in h})
    width = 0.8 / len(series)
    for i, (label, h) in enumerate(series):
        total = sum(h.values()) or 1
        xs = [k + (i - (len(series) - 1) / 2) * width for k in keys]
        ax.bar(xs, [h.get(str(k), 0) / total for k in keys], width, label=f"{label} (n={total})")
    ax.set_xticks(keys, [str(k) for k in keys])
    ax.set_xlabel("annotators who gave the gold answer")
    ax.set_ylabel("fraction of documents")
    ax.legend(frameon=False)
    ax.grid(axis="y", alpha=0.3)
    written.append(_save(fig, os.path.join(out_dir, "figures", "gold_agreement.png")))
    model = report.get("model")
    if model and model["by_agreement"]:
        fig, ax = plt.subplots(figsize=SIZE)
        levels = list(model["by_agreement"].items())
        ax.bar([int(n) for n, _ in levels], [v["model_accuracy"] or 0.0 for _, v in levels], 0.6)
        ax.set_xticks([int(n) for n, _ in levels], [n for n, _ in levels])
        ax.set_xlabel("annotators who gave the gold answer")
        ax.set_ylabel("model accuracy")
        ax.set_ylim(0, 1)
        ax.grid(axis="y", alpha=0.3)
        written.append(_save(fig, os.path.join(out_dir, "figures", "model_by_agreement.png")))
    return [os.path.relpath(p, out_dir) for p in written]


def _failures(protocol: dict) -> str:
    """The card's words on assignments that failed their check documents: how many, how many excluded, and
    how many are still among the answers (records written before these counts say only what was excluded)."""
    if "failing_assignments" not in protocol:
        excluded = protocol.get("excluded_assignments")
        return f", {excluded} assignments excluded for failing control items" if excluded else ""
    failing, kept = protocol["failing_assignments"], protocol["failing_kept"]
    if not protocol.get("controls"):
        return "; no check documents, so no assignment's answers were checked"
    if not failing:
        return f"; none of the {protocol['assignments']} assignments failed its check documents"
    limit = protocol.get("max_control_errors")
    words = f"more than {limit:.0%} of" if isinstance(limit, (int, float)) else "too many of"
    return (
        f"; {failing} of {protocol['assignments']} assignments answered {words} their check documents wrong: "
        f"{failing - kept} excluded, **{kept} kept among the answers**"
    )


def card_section(verifications: list[dict]) -> list[str]:
    """The card's "Human verification" section from ``human_verification/<config>.json`` records."""
    if not verifications:
        return []
    lines = ["## Human verification", ""]
    for v in verifications:
        r, p = v["report"], v["protocol"]
        lines += [
            f"### `{v['config']}` split `{v['verified_split']}`",
            "",
            f"Documents of split `{v['source_split']}` judged by people ({p['platform']}): tasks of "
            f"{p['per_task']} items, {p['controls']} of them quality-control items ({p['control_rule'] or 'none'}); "
            f"{r['answers']} answers by {r['annotators']} annotators, "
            + (
                f"{_spread(r['annotators_per_document'])} annotators per document"
                if r.get("annotators_per_document")
                else f"{p.get('workers_planned', p.get('workers'))} annotators per task"
            )
            + f" ({p.get('workers_planned', p.get('workers'))} planned)"
            + _failures(p)
            + f". A document is kept when at least {r['min_agreement']} annotators give the same answer: "
            f"{r['kept']['documents']} of {r['documents']} kept ({_fmt(r['kept']['fraction'])}), written as "
            f"split `{v['verified_split']}` ({v['rows']} rows).",
            "",
            "| | value |",
            "|---|---:|",
            f"| human accuracy (majority answer, kept documents) | {_fmt(r['human_accuracy'])} |",
            f"| human F1 (intruder position) | {_fmt(r['human_f1'])} |",
            f"| Krippendorff's alpha (nominal) | {_fmt(r['krippendorff_alpha'])} |",
            f"| Cohen's kappa (two annotators) | {_fmt(r['cohen_kappa'])} |",
            f"| control accuracy (check documents, every answer) | {_fmt(r.get('control_accuracy'))} |",
            f"| judgement accuracy (each answer against the gold) | {_fmt((r.get('judgements') or {}).get('accuracy'))} |",
            *_judgement_f1_rows(r),
            f"| mean seconds per answer (check documents included) | {_fmt(r.get('mean_seconds'))} |",
            f"| median seconds per answer (check documents included) | {_fmt(r['median_seconds'])} |",
            "",
        ]
        if v.get("answers"):
            lines += [
                f"The answers of every annotator to every document are in [{v['answers']}]({v['answers']}), in "
                "INSteD's released format (`file_id`, `gold`, `annoated`).",
                "",
            ]
        captions = {
            "gold_agreement.png": "Annotators who gave the gold answer (all and incoherent documents)",
            "model_by_agreement.png": "Model accuracy by the number of annotators who gave the gold answer",
        }
        for rel in v.get("figures", []):
            caption = next((c for name, c in captions.items() if rel.endswith(name)), "Human verification")
            lines += [f"![{caption}]({rel})", ""]
        if r.get("per_k"):
            lines += [
                "| k | judgements | human accuracy | kappa | median seconds |",
                "|---:|---:|---:|---:|---:|",
            ]
            for k, s in r["per_k"].items():
                lines.append(
                    f"| {k} | {s['judgements']} | {_fmt(s['accuracy'])} | {_fmt(s['cohen_kappa'])} | {_fmt(s['median_seconds'])} |"
                )
            lines.append("")
    return lines


def _judgement_f1_rows(report: dict) -> list[str]:
    """The card's per-judgement F1 of an intruder study and, after ``annotate report --baseline``, its Table 7
    human row (the baseline's F1 on the same documents unprobed, and ΔF1)."""
    judgements = report.get("judgements") or {}
    if judgements.get("f1") is None:
        return []
    rows = [
        f"| human F1, every judgement ({judgements['judgements']} judgements) | {_fmt(judgements['f1'])} |"
    ]
    b = report.get("baseline")
    if b:
        rows.append(
            f"| unprobed baseline (INSteD Table 7 human row): F1 on the same {b['baseline_documents']} documents "
            f"({b['baseline_judgements']} judgements), ΔF1 | {_fmt(b['baseline_f1'])}, {b['delta_f1']:+.4f} |"
        )
    return rows
