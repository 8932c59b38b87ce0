#!/usr/bin/env python3
"""The probe counts of docs/probes.md: probes and skip reasons per phenomenon, on the Quickstart build and on a
Wikipedia set of about 3,000 incoherent documents. One command:

    .venv/bin/python bench/probe_counts.py --leads PATH/TO/summaries_en-us.json

``--leads`` is the JSON of Wikipedia lead extracts of the shared offline data
(``wiki/ovos_vital_article_leads/summaries_en-us.json``: 10,033 vital articles' leads, ``{title: {"extract":
...}}``). The script, under ``--work`` (default ``bench/work/probe-counts``):

1. builds the Quickstart (``incoherent build --out WORK/sample``; ``--sample DIR`` reuses a finished one) and
   probes its ``train`` split (its ``test`` split holds 4 incoherent documents);
2. writes the leads of 3 to 8 sentences as a JSONL collection (``{"id": "wiki:<title>", "text": ...}``),
   builds its intruder corpus (``corpora: [intruders]``, a sample of ``--documents`` drawn by hash, the whole
   collection as the retrieval pool), and probes all its incoherent documents (``train``: no history, so no
   drift test split);
3. prints the markdown tables (probes, documents without a site and the reasons given, per phenomenon, and the
   number probes' mix of moves) and writes them with the raw counts to ``WORK/probe-counts.json`` and
   ``WORK/probe-counts.md``.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(])")  # only to choose leads of 3 to 8 sentences


def incoherent(*args: str) -> None:
    command = [str(Path(sys.executable).parent / "incoherent"), *args]
    print("+", " ".join(command), flush=True)
    subprocess.run(command, check=True, cwd=ROOT)


def write_leads(leads: str, out: Path) -> int:
    """``out``: the leads of 3 to 8 sentences, one JSON document a line, in title order."""
    with open(leads, encoding="utf-8") as f:
        pages = json.load(f)
    lines = []
    for title in sorted(pages):
        text = (pages[title] or {}).get("extract") or ""
        if 3 <= len(SENTENCE.split(text)) <= 8:
            lines.append(json.dumps({"id": f"wiki:{title}", "text": text}, ensure_ascii=False) + "\n")
    data = "".join(lines).encode("utf-8")
    if not out.exists() or out.read_bytes() != data:  # unchanged: left alone, so the build resumes
        out.write_bytes(data)
    return len(lines)


def wiki_config(jsonl: Path, documents: int, out: Path) -> Path:
    config = out.with_suffix(".yaml")
    config.write_text(
        f"""# written by bench/probe_counts.py
base: .
out: {out}
seed: 0
corpora: [intruders]
sources:
  wikipedia:
    kind: text
    inputs: [{jsonl}]
    license: cc-by-sa-4.0
neighbors: {{k: 10}}
intruders: {{sample: {documents}, filter: none, similarity_threshold: 0.6, drift_threshold: 0.72, validation_fraction: 0.0}}
card: {{name: probe counts (Wikipedia leads)}}
""",
        encoding="utf-8",
    )
    return config


def probe(dataset: Path, out: Path, split: str) -> dict:
    incoherent("probes", str(dataset), "--out", str(out), "--split", split, "--overwrite")
    summary = json.loads((out / "run_summary.json").read_text(encoding="utf-8"))
    moves = Counter()
    from incoherent.corpora.probes.quantities import number_edit
    from incoherent.corpora.probes.text import analyse

    for line in (out / "insted" / "number.jsonl").read_text(encoding="utf-8").splitlines():
        sentence = json.loads(line)["original_replace_with"]
        moves[number_edit(sentence, analyse(sentence))[1]] += 1
    counters = summary["counters"]["probes"]
    return {
        "incoherent": counters.get("incoherent", 0),
        "probes": summary["probes"],
        "number_moves": dict(moves),
    }


def table(name: str, result: dict) -> str:
    rows = [
        f"**{name}** ({result['incoherent']:,} incoherent documents)",
        "",
        "| phenomenon | probes | no site | reasons given for no site |",
        "|---|---:|---:|---|",
    ]
    for phenomenon, c in result["probes"].items():
        reasons = ", ".join(
            f"{r} {n:,}" for r, n in sorted(c.get("skips", {}).items(), key=lambda kv: -kv[1])
        )
        rows.append(f"| `{phenomenon}` | {c['probes']:,} | {c['no_site']:,} | {reasons or '—'} |")
    moves = result["number_moves"]
    total = sum(moves.values())
    if total:
        mix = ", ".join(
            f"{m} {n} ({100 * n / total:.0f}%)" for m, n in sorted(moves.items(), key=lambda kv: -kv[1])
        )
        rows += ["", f"Number probes by move: {mix}."]
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--leads", required=True, help="summaries_en-us.json of the Wikipedia lead extracts")
    parser.add_argument("--sample", help="a finished Quickstart build's folder (default: build one)")
    parser.add_argument("--documents", type=int, default=6600, help="documents sampled for the Wikipedia set")
    parser.add_argument("--work", default=str(ROOT / "bench" / "work" / "probe-counts"))
    args = parser.parse_args()
    work = Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    started = time.time()
    sample = Path(args.sample).resolve() if args.sample else work / "sample"
    if not args.sample:
        incoherent("build", "--out", str(sample))
    results = {"quickstart": probe(sample / "dataset", work / "probes-sample", "train")}
    jsonl = work / "wiki-leads.jsonl"
    leads = write_leads(args.leads, jsonl)
    wiki = work / "wiki"
    incoherent("build", str(wiki_config(jsonl, args.documents, wiki)), "--out", str(wiki))
    results["wikipedia"] = probe(wiki / "dataset", work / "probes-wiki", "train")
    results["wikipedia"]["leads"] = leads
    results["machine"] = f"{os.cpu_count()} cores; {time.time() - started:.0f} s"
    markdown = "\n\n".join(
        [table("Quickstart build, train split", results["quickstart"]),
         table(f"Wikipedia leads ({leads:,} leads of 3-8 sentences, {args.documents:,} sampled)", results["wikipedia"])]
    )  # fmt: skip
    (work / "probe-counts.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    (work / "probe-counts.md").write_text(markdown + "\n", encoding="utf-8")
    print(markdown)
    for path in glob.glob(str(work / "*.partial")):
        print("left over:", path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
