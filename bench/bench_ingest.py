"""Benchmark of `incoherent ingest wikipedia` (not a test): ratios against baselines timed in the same run.

    .venv/bin/python bench/bench_ingest.py                       # every part, small dumps: a quick check
    .venv/bin/python bench/bench_ingest.py --full                # every part at the published sizes, ~20 min
    .venv/bin/python bench/bench_ingest.py --full --parts multistream   # one part (see PARTS), a few minutes
    .venv/bin/python bench/bench_ingest.py --report              # tables of the --full parts measured so far

Dumps are built from the real gensim enwiki fragment (206 pages, 106 articles) with
``bench/inputs/make_bench_dump.py SRC REPEATS OUT [--multistream]`` into ``bench/work/`` (gitignored). ``incoherent`` and ``wikiextractor`` are the ones installed beside
the Python running this script.

Parts, each command in its own process, wall clock, other processes' CPU recorded for every run:
- ``multistream`` / ``single``: ``bzip2 -dc FILE > /dev/null`` (one core) and ``incoherent ingest wikipedia``
  on the same file, interleaved (bzip2, ingest, bzip2, ingest, ...): each ingest run is divided by the mean
  of the bzip2 runs just before and after it (the machine's speed drifts by tens of per cent over minutes);
  the default in-process runner and ``--direct_running_mode=multi_processing --direct_num_workers=2``;
- ``wikiextractor``: WikiExtractor 3.1.0 ``--no-templates`` vs ingest (in-process) on the single-stream dump;
- ``mwparserfromhell``: two plain baselines over every page of the ``--mwp-repeats`` dump (bz2 + ElementTree
  reading, one process), interleaved with ingest runs (in-process): ``mwparserfromhell.parse(text).strip_code()``
  of the **whole article** (what a user would run instead: we read leads only), and of the **lead only** (the
  text before the first heading, cut as we cut it), which separates "we skip the body" from "we clean faster";
- ``memory``: peak RSS of the process tree (psutil, every 0.1 s) at two dump sizes, with and without Beam;
- ``breakdown``: CPU seconds per step of the ingest logic in one process, and markup residue on the
  gensim fragment.

Results are merged into ``bench/work/bench_ingest.json`` (one entry per part, with its time and load).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "bench" / "work"
PYTHON = sys.executable
INCOHERENT = str(Path(PYTHON).with_name("incoherent"))
WIKIEXTRACTOR = str(Path(PYTHON).with_name("wikiextractor"))
MAKE_DUMP = ROOT / "bench" / "inputs" / "make_bench_dump.py"
SOURCE = ROOT / "samples/wikipedia/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
TWO_WORKERS = ["--direct_running_mode=multi_processing", "--direct_num_workers=2"]


# --------------------------------------------------------------------------------------------- helpers


def dump_path(repeats: int, multistream: bool = False) -> Path:
    name = f"bench{repeats}-multistream.xml.bz2" if multistream else f"bench{repeats}.xml.bz2"
    path = WORK / name
    if not path.exists():
        WORK.mkdir(parents=True, exist_ok=True)
        cmd = [PYTHON, str(MAKE_DUMP), str(SOURCE), str(repeats), str(path)] + (
            ["--multistream"] if multistream else []
        )
        print(f"building {path.name} ...", flush=True)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return path


def machine_busy_s() -> float:
    """CPU seconds the whole machine has been busy since boot (all cores, from /proc/stat)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def run_measured(
    cmd: list[str] | str, *, shell: bool = False, cwd: Path | None = None, env: dict | None = None
) -> dict:
    """Run a command; wall seconds, exit status, peak RSS of its whole process tree, stderr tail.

    ``cpu_s`` is the CPU time of the command's process tree (``getrusage`` of waited-for children: short-lived
    ``bzip2`` helpers included); ``other_cpu_s`` is what the rest of the
    machine used meanwhile (busy CPU seconds of all cores minus ours): near 0 means the run was alone.
    """
    busy_before = machine_busy_s()
    children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = psutil.Popen(
        cmd, shell=shell, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    peak = 0
    cpu: dict[int, float] = {}  # pid -> last seen user+system seconds (the tree's CPU, robust to contention)
    done = threading.Event()

    def sample():
        nonlocal peak
        while not done.is_set():
            try:
                procs = [proc, *proc.children(recursive=True)]
                total = 0
                for p in procs:
                    try:
                        total += p.memory_info().rss
                        times = p.cpu_times()
                        cpu[p.pid] = times.user + times.system
                    except psutil.Error:
                        pass
                peak = max(peak, total)
            except psutil.Error:
                pass
            done.wait(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = proc.communicate()
    wall = time.perf_counter() - started
    busy = machine_busy_s() - busy_before
    done.set()
    sampler.join()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    waited = (children.ru_utime - children_before.ru_utime) + (children.ru_stime - children_before.ru_stime)
    ours = max(waited, sum(cpu.values()))  # waited-for descendants; samples if some were not waited for
    return {"wall_s": round(wall, 2), "cpu_s": round(ours, 1), "rc": proc.returncode,
            "other_cpu_s": round(max(0.0, busy - ours), 1),
            "peak_rss_mb": round(peak / 2**20, 1), "stdout": out,
            "busiest_process_cpu_s": round(max(cpu.values(), default=0.0), 1),
            "stderr_tail": err.strip().splitlines()[-3:]}  # fmt: skip


def bzip2(path: Path) -> dict:
    return run_measured(f"bzip2 -dc '{path}' > /dev/null", shell=True)


def ingest(path: Path, extra: list[str] = (), tree: Path | None = None) -> dict:
    """One ``incoherent ingest wikipedia`` run; with ``tree``, the code of that checkout (same virtualenv)."""
    out = Path(tempfile.mkdtemp(prefix="bench-ingest-", dir=WORK))
    try:
        args = ["ingest", "wikipedia", str(path), "--out", str(out), *extra]
        if tree is None:
            result = run_measured([INCOHERENT, *args])
        else:  # run from outside this checkout, so that PYTHONPATH, not the editable install, names the code
            env = {**os.environ, "PYTHONPATH": str(tree)}
            result = run_measured([PYTHON, "-m", "incoherent.pipelines.cli", *args], cwd=WORK, env=env)
        summary_path = out / "run_summary.json"
        if summary_path.exists():
            summary = json.loads(summary_path.read_text())
            result["documents"] = summary["counters"].get("ingest-wikipedia", {}).get("kept")
            result["pages_read"] = summary["counters"].get("ingest-wikipedia-read", {}).get("pages_read")
        return result
    finally:
        shutil.rmtree(out, ignore_errors=True)


def wikiextractor(path: Path) -> dict:
    if not Path(WIKIEXTRACTOR).exists():
        return {"rc": None, "error": f"{WIKIEXTRACTOR} not installed (pip install wikiextractor==3.1.0)"}
    out = Path(tempfile.mkdtemp(prefix="bench-wikiextractor-", dir=WORK))
    try:
        result = run_measured([WIKIEXTRACTOR, "--no-templates", "-q", "-o", str(out), str(path)])
        docs = 0
        for f in out.rglob("wiki_*"):
            docs += f.read_text(encoding="utf-8", errors="replace").count("<doc ")
        result["documents"] = docs
        if result["rc"] != 0:
            result["error"] = " | ".join(result["stderr_tail"])
        return result
    finally:
        shutil.rmtree(out, ignore_errors=True)


MWP_BASELINE = r"""
import bz2, re, sys, time
import xml.etree.ElementTree as ET
import mwparserfromhell
lead_only = sys.argv[2] == "lead"
heading = re.compile(r"(?:^|\n)==")  # the lead ends at the first heading, as sources.wikitext.lead_section
pages = chars = 0
for event, elem in ET.iterparse(bz2.open(sys.argv[1]), events=("end",)):
    if elem.tag.endswith("}page") or elem.tag == "page":
        for node in elem.iter():
            if node.tag.endswith("}text") and node.text:
                text = node.text
                if lead_only:
                    cut = heading.search(text)
                    text = text[: cut.start() + (cut.group().startswith("\n"))] if cut else text
                mwparserfromhell.parse(text).strip_code()
                chars += len(text)
        pages += 1
        elem.clear()
print(pages, chars)
"""


LOGIC_ONLY = r"""
import sys
from incoherent.sources.mediawiki import read_pages
from incoherent.sources.wikipedia import compact, page_to_document
print(sum(1 for page in read_pages(sys.argv[1]) for _ in page_to_document(compact(page))))
"""


def logic_only(path: Path) -> dict:
    """Reader + page rules + cleaning + splitting in one process, no Beam: is the logic's memory flat?"""
    result = run_measured([PYTHON, "-c", LOGIC_ONLY, str(path)], cwd=ROOT)
    result.pop("stdout", None)
    return result


def mwp_baseline(path: Path, what: str) -> dict:
    """``what`` is ``"full"`` (whole articles) or ``"lead"`` (the text before the first heading)."""
    result = run_measured([PYTHON, "-c", MWP_BASELINE, str(path), what])
    if result["rc"] != 0:
        sys.exit(f"mwparserfromhell baseline ({what}) failed: {result['stderr_tail']}")
    result["pages"], result["wikitext_chars"] = map(int, result["stdout"].split())
    return result


BREAKDOWN = r"""
import json, resource, sys, time, threading, io
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
out = {}
t = cpu(); w = time.perf_counter()
import apache_beam as beam
from incoherent.pipelines.runtime.run import run_pipeline
out["import apache_beam"] = cpu() - t
t = cpu(); w = time.perf_counter()
p = beam.Pipeline(runner="apache_beam.runners.portability.fn_api_runner.FnApiRunner")
p | beam.Create([1]) | beam.Map(lambda x: x)
p.run().wait_until_finish()
out["Beam: run an empty 1-element pipeline (wall)"] = time.perf_counter() - w
t = cpu()
from incoherent.sources.sentences import split_sentences
split_sentences("Warm up.")
out["import Punkt (sources.sentences) + build tokenizer"] = cpu() - t
import bz2
t = cpu()
d = bz2.BZ2Decompressor()
with open(sys.argv[1], "rb") as f:
    while True:
        b = f.read(1 << 17)
        if not b:
            break
        while b:
            d.decompress(b)
            if d.eof:
                b = d.unused_data; d = bz2.BZ2Decompressor()
            else:
                b = b""
out["bz2 decompression (python bz2, 1 thread)"] = cpu() - t
import indexed_bzip2
for n in (1, 2):
    t = cpu(); w = time.perf_counter()
    with indexed_bzip2.open(sys.argv[1], parallelization=n) as f:
        while f.read(1 << 19):
            pass
    out[f"bz2 decompression (indexed_bzip2, {n} thread{'s' if n > 1 else ''})"] = cpu() - t
    out[f"  wall s with {n} thread{'s' if n > 1 else ''}"] = time.perf_counter() - w
from incoherent.sources import mediawiki, mediawiki_xml
from incoherent.sources.mediawiki import read_pages
# the parsing thread's own CPU (time.thread_time): the bz2 thread's share varies by more than the parse costs
mediawiki_xml.SCAN_PAGES = False
t = time.thread_time()
pages = list(read_pages(sys.argv[1]))
out["read_pages, parsing thread only: expat reads every page (+ lead cut)"] = time.thread_time() - t
mediawiki_xml.SCAN_PAGES = True
t = time.thread_time()
scanned = list(read_pages(sys.argv[1]))
out["read_pages, parsing thread only: fast page scanner (default)"] = time.thread_time() - t
assert scanned == pages, "the fast page scanner and expat disagree"
from incoherent.sources.wikitext import prestrip, tidy, strip_markup
from incoherent.sources.wikipedia import page_to_document
arts = [p for p in pages if p["ns"] == 0 and p["redirect"] is None]
t = cpu(); pre = [prestrip(p["lead"]) for p in arts]; out["prestrip (templates, refs, comments)"] = cpu() - t
import mwparserfromhell
t = cpu(); raw = [strip_markup(p["lead"]) for p in arts]; out["strip_markup: prestrip + mwparserfromhell tokens, rendered"] = cpu() - t
t = cpu(); txt = [tidy(x) for x in raw]; out["tidy"] = cpu() - t
t = cpu(); [split_sentences(x) for x in txt]; out["split_sentences (Punkt)"] = cpu() - t
t = cpu(); docs = [d for p in pages for d in page_to_document(p) if isinstance(d, dict)]; out["page_to_document, all pages (sum of the 4 above)"] = cpu() - t
from incoherent.pipelines.runtime.tables import write_shard
from incoherent.schemas import DOCUMENT_SCHEMA
import pickle
t = cpu(); blob = [pickle.dumps(p) for p in pages]; out["pickle page records (shuffle cost proxy)"] = cpu() - t
t = cpu(); write_shard(sys.argv[2], DOCUMENT_SCHEMA, sorted(docs, key=lambda r: r["id"])); out["write documents Parquet"] = cpu() - t
print(json.dumps({k: round(v, 2) for k, v in out.items()}))
"""


def breakdown(path: Path) -> dict:
    with tempfile.TemporaryDirectory(dir=WORK) as tmp:
        result = run_measured(
            [PYTHON, "-c", BREAKDOWN, str(path), os.path.join(tmp, "docs.parquet")], cwd=ROOT
        )
    if result["rc"] != 0:
        return {"error": result["stderr_tail"]}
    return json.loads(result["stdout"].strip().splitlines()[-1])


# --------------------------------------------------------------------------------------------- main

PARTS = (
    "multistream", "single", "wikiextractor", "wikiextractor-multistream", "mwparserfromhell", "memory", "breakdown",
)  # fmt: skip
RESULTS = WORK / "bench_ingest.json"
RESIDUE = r"\{\{|\}\}|\[\[|\]\]|<ref|\||&nbsp;|\(\s*\)"


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if a and b else "n/a"


def slim(result: dict) -> dict:
    return {k: v for k, v in result.items() if k not in ("stdout",)}


def interleaved(path: Path, runs: list[tuple[str, list[str], Path | None]]) -> dict:
    """bzip2, run 1, bzip2, run 2, ..., bzip2: each run's wall time over the mean of its two bzip2 neighbours."""
    bz = [slim(bzip2(path))]
    out = []
    for name, extra, tree in runs:
        res = slim(ingest(path, extra, tree))
        bz.append(slim(bzip2(path)))
        base = (bz[-2]["wall_s"] + bz[-1]["wall_s"]) / 2
        res.update(name=name, bzip2_s=round(base, 2), ratio=round(res["wall_s"] / base, 3))
        out.append(res)
        print(f"  {name}: {res['wall_s']} s / bzip2 {base:.2f} s = {res['ratio']:.2f}x "
              f"(CPU {res['cpu_s']} s, others {res['other_cpu_s']} s)", flush=True)  # fmt: skip
    return {"dump": path.name, "bzip2": bz, "runs": out}


def part_bzip2(path: Path, rounds: int, baseline: Path | None = None) -> dict:
    """``rounds`` in-process runs (each followed by one of the ``baseline`` checkout, if given), then 2 workers."""
    run = [("in-process (default)", [], None)]
    if baseline is not None:
        run.append((f"baseline {baseline.name}, in-process", [], baseline))
    return interleaved(path, run * rounds + [("2 workers", TWO_WORKERS, None)])


def part_wikiextractor(path: Path) -> dict:
    first = slim(ingest(path))
    we = slim(wikiextractor(path))
    second = slim(ingest(path))
    ours = (first["wall_s"] + second["wall_s"]) / 2
    return {"dump": path.name, "ingest": [first, second], "wikiextractor": we,
            "ratio": round((we.get("wall_s") or 0) / ours, 2)}  # fmt: skip


def part_mwparserfromhell(path: Path) -> dict:
    """ingest, full articles, ingest, leads only, ingest: each baseline over the mean of the ingests around it."""
    runs = [slim(ingest(path))]
    full = slim(mwp_baseline(path, "full"))
    runs.append(slim(ingest(path)))
    lead = slim(mwp_baseline(path, "lead"))
    runs.append(slim(ingest(path)))
    ours_full = (runs[0]["wall_s"] + runs[1]["wall_s"]) / 2
    ours_lead = (runs[1]["wall_s"] + runs[2]["wall_s"]) / 2
    return {"dump": path.name, "ingest": runs, "mwparserfromhell_full": full, "mwparserfromhell_lead": lead,
            "ratio": round(full["wall_s"] / ours_full, 2), "ratio_lead": round(lead["wall_s"] / ours_lead, 2)}  # fmt: skip


def part_memory(sizes: list[int]) -> dict:
    return {
        "ingest": {str(n): slim(ingest(dump_path(n))) for n in sizes},
        "logic_only": {str(n): slim(logic_only(dump_path(n))) for n in sizes},
    }


def residue() -> dict:
    import re

    import pyarrow.parquet as pq

    out = Path(tempfile.mkdtemp(prefix="bench-residue-", dir=WORK))
    try:
        subprocess.run([INCOHERENT, "ingest", "wikipedia", str(SOURCE), "--out", str(out), "--overwrite"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        sentences = [s for f in out.rglob("documents-*/*.parquet") for doc in pq.read_table(f).to_pylist()
                     for s in doc["sentences"]]  # fmt: skip
    finally:
        shutil.rmtree(out, ignore_errors=True)
    bad = [s for s in sentences if re.search(RESIDUE, s)]
    return {"sentences": len(sentences), "with_residue": len(bad), "examples": bad[:5]}


def report(results: dict) -> None:
    def when(part):
        info = results[part]
        return f"{info['at']}, load average {info['load_avg_start'][0]:.1f} -> {info['load_avg_end'][0]:.1f}"

    for part in ("multistream", "single"):
        if part not in results:
            continue
        r = results[part]
        print(f"\n{part} ({r['dump']}; {when(part)}):\n")
        print(
            "| run | wall s | bzip2 -dc s (mean of neighbours) | ratio | CPU s | others' CPU s | peak RSS MB |"
        )
        print("|---|---|---|---|---|---|---|")
        for res in r["runs"]:
            print(f"| {res['name']} | {res['wall_s']} | {res['bzip2_s']} | {res['ratio']:.2f}x | {res['cpu_s']} "
                  f"| {res['other_cpu_s']} | {res['peak_rss_mb']} |")  # fmt: skip
        print("bzip2 -dc runs (s): " + ", ".join(str(b["wall_s"]) for b in r["bzip2"]))
        quiet = sorted(
            x["ratio"] for x in r["runs"] if x["name"].startswith("in-process") and x["other_cpu_s"] < 1
        )
        if quiet:
            print(f"in-process runs alone on the machine: median {statistics.median(quiet):.2f}x "
                  f"(range {quiet[0]:.2f}-{quiet[-1]:.2f}x, {len(quiet)} runs)")  # fmt: skip
        ours = [x for x in r["runs"] if x["name"] == "in-process (default)"]
        theirs = [x for x in r["runs"] if x["name"].startswith("baseline ")]
        if theirs:
            base = sorted(x["ratio"] for x in theirs)
            paired = sorted(a["wall_s"] / b["wall_s"] for a, b in zip(ours, theirs, strict=False))
            print(f"{theirs[0]['name']}: median {statistics.median(base):.2f}x bzip2 (range {base[0]:.2f}-"
                  f"{base[-1]:.2f}x); ours / baseline, same round: median {statistics.median(paired):.2f} "
                  f"(range {paired[0]:.2f}-{paired[-1]:.2f}, {len(paired)} rounds)")  # fmt: skip
    for part in ("wikiextractor", "wikiextractor-multistream"):
        if part not in results:
            continue
        r = results[part]
        print(f"\nWikiExtractor ({r['dump']}; {when(part)}): WikiExtractor {r['wikiextractor'].get('wall_s')} s"
              f" ({r['wikiextractor'].get('documents')} docs), ingest {[x['wall_s'] for x in r['ingest']]} s: "
              f"**{r['ratio']}x faster**")  # fmt: skip
    if "mwparserfromhell" in results:
        r = results["mwparserfromhell"]
        m = r["mwparserfromhell_full"]
        ingests = [x["wall_s"] for x in r["ingest"]]
        print(f"\nfull-article mwparserfromhell ({r['dump']}, {m.get('pages')} pages, all of them; {when('mwparserfromhell')}):"
              f" {m['wall_s']} s ({m['cpu_s']} CPU-s), ingest {ingests[:2]} s: **{r['ratio']}x faster**")  # fmt: skip
        lead = r.get("mwparserfromhell_lead")
        if lead:
            print(f"lead-only mwparserfromhell (same dump and reading, {lead['wikitext_chars']:,} of "
                  f"{m['wikitext_chars']:,} wikitext chars): {lead['wall_s']} s ({lead['cpu_s']} CPU-s), "
                  f"ingest {ingests[1:]} s: **{r['ratio_lead']}x faster**")  # fmt: skip
    if "memory" in results:
        r = results["memory"]
        print(f"\nmemory ({when('memory')}):\n")
        print(
            "| dump repeats | pages | documents | ingest wall (s) | peak RSS, ingest (MB) | peak RSS, logic only (MB) |"
        )
        print("|---|---|---|---|---|---|")
        for size, res in r["ingest"].items():
            print(f"| {size} | {res.get('pages_read')} | {res.get('documents')} | {res['wall_s']} | "
                  f"{res['peak_rss_mb']} | {r['logic_only'][size]['peak_rss_mb']} |")  # fmt: skip
    if "breakdown" in results:
        r = results["breakdown"]
        print(f"\nCPU seconds per step, in one process, on {r['dump']} ({when('breakdown')}):\n")
        print("| step | CPU s |\n|---|---|")
        for step, seconds in r["cpu_s"].items():
            print(f"| {step} | {seconds} |")
        res = r["residue"]
        print(f"\nmarkup residue, gensim fragment: {res['with_residue']} of {res['sentences']} sentences "
              f"({100 * res['with_residue'] / max(1, res['sentences']):.3f}%)")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated, of {', '.join(PARTS)}")
    parser.add_argument("--repeats", type=int, default=10, help="dump size for bzip2 and WikiExtractor")
    parser.add_argument("--mwp-repeats", type=int, default=5, help="dump size for full mwparserfromhell")
    parser.add_argument("--rounds", type=int, default=1, help="in-process ingest runs per bzip2 part")
    parser.add_argument(
        "--baseline-tree",
        type=lambda p: Path(p).resolve(),
        default=None,
        help="a checkout of an earlier commit (git worktree add DIR REV): its ingest runs interleaved with ours "
        "in the bzip2 parts, for a ratio of the two measured side by side",
    )
    parser.add_argument("--memory", default="5,10", help="dump sizes for peak RSS")
    parser.add_argument("--small", type=int, default=5, help="dump size for the CPU breakdown")
    parser.add_argument(
        "--full",
        action="store_true",
        help="the sizes of the published figures (60 repeats, 3 rounds, memory at 25,100; about 20 min in all), "
        "saved to bench/work/bench_ingest.json for --report; the default is a small run of a few minutes",
    )
    parser.add_argument("--report", action="store_true", help="only print the tables of earlier runs")
    args = parser.parse_args(argv)
    if args.full:  # the published sizes, for every size not given on the command line
        full = {"repeats": 60, "mwp_repeats": 60, "small": 10, "rounds": 3, "memory": "25,100"}
        for name, value in full.items():
            if getattr(args, name) == parser.get_default(name):
                setattr(args, name, value)
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() and args.full else {}
    if args.report:
        report(results)
        return 0
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    unknown = set(parts) - set(PARTS)
    if unknown:
        parser.error(f"unknown parts {sorted(unknown)}")
    for part in parts:
        start = {"at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "load_avg_start": os.getloadavg(),
                 "cpus": os.cpu_count()}  # fmt: skip
        print(f"[{part}] {start['at']}", flush=True)
        if part == "multistream":
            data = part_bzip2(dump_path(args.repeats, multistream=True), args.rounds, args.baseline_tree)
        elif part == "single":
            data = part_bzip2(dump_path(args.repeats), max(1, args.rounds - 1), args.baseline_tree)
        elif part == "wikiextractor":
            data = part_wikiextractor(dump_path(args.repeats))
        elif part == "wikiextractor-multistream":
            data = part_wikiextractor(dump_path(args.repeats, multistream=True))
        elif part == "mwparserfromhell":
            data = part_mwparserfromhell(dump_path(args.mwp_repeats))
        elif part == "memory":
            data = part_memory([int(x) for x in args.memory.split(",")])
        else:
            small = dump_path(args.small)
            data = {"dump": small.name, "cpu_s": breakdown(small), "residue": residue()}
        results[part] = {**start, **data, "load_avg_end": os.getloadavg()}
        if args.full:
            WORK.mkdir(exist_ok=True)
            RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    report({k: v for k, v in results.items() if k in parts})
    return 0


if __name__ == "__main__":
    sys.exit(main())
