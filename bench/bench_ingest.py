"""Benchmark of `incoherent ingest wikipedia` (not a test): ratios against baselines timed in the same run.

    .venv/bin/python bench/bench_ingest.py              # everything, ~15 min on 2 busy cores
    .venv/bin/python bench/bench_ingest.py --quick      # 10/5 repeats, smoke run

Dumps are built from the real gensim enwiki fragment (206 pages, 106 articles) with
``/work/shared/bench/make_bench_dump.py SRC REPEATS OUT [--multistream]`` into ``bench/work/`` (gitignored).

Measured, each in its own process, wall clock:
1. ``bzip2 -dc FILE > /dev/null`` (single core) vs ``incoherent ingest wikipedia`` on the same file:
   single-stream (default in-process runner; and 2 worker processes) and multistream (2 worker processes);
2. WikiExtractor 3.1.0 ``--no-templates`` on the same single-stream dump, and a plain full-article
   ``mwparserfromhell.parse(text).strip_code()`` over every page vs our ingest on a smaller dump of the same
   pages (that baseline is slow: ~2 s per 206 pages);
3. peak RSS of the whole process tree (psutil, sampled every 0.1 s) at two dump sizes;
4. where the time goes: CPU seconds per step of the ingest logic, run in one process.

Results are printed as a Markdown table and written to ``bench/work/bench_ingest.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
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
MAKE_DUMP = Path("/work/shared/bench/make_bench_dump.py")
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


def run_measured(cmd: list[str] | str, *, shell: bool = False, cwd: Path | None = None) -> dict:
    """Run a command; wall seconds, exit status, peak RSS of its whole process tree, stderr tail.

    ``cpu_s`` is the CPU time of the command's process tree (``getrusage`` of waited-for children: short-lived
    ``bzip2`` helpers included); ``other_cpu_s`` is what the rest of the
    machine used meanwhile (busy CPU seconds of all cores minus ours): near 0 means the run was alone.
    """
    busy_before = machine_busy_s()
    children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = psutil.Popen(cmd, shell=shell, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
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
            "stderr_tail": err.strip().splitlines()[-3:]}  # fmt: skip


def bzip2(path: Path) -> dict:
    return run_measured(f"bzip2 -dc '{path}' > /dev/null", shell=True)


def ingest(path: Path, extra: list[str] = ()) -> dict:
    out = Path(tempfile.mkdtemp(prefix="bench-ingest-", dir=WORK))
    try:
        result = run_measured([INCOHERENT, "ingest", "wikipedia", str(path), "--out", str(out), *extra])
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
import bz2, sys, time
import xml.etree.ElementTree as ET
import mwparserfromhell
pages = chars = 0
for event, elem in ET.iterparse(bz2.open(sys.argv[1]), events=("end",)):
    if elem.tag.endswith("}page") or elem.tag == "page":
        for node in elem.iter():
            if node.tag.endswith("}text") and node.text:
                mwparserfromhell.parse(node.text).strip_code()
                chars += len(node.text)
        pages += 1
        elem.clear()
print(pages, chars)
"""


LOGIC_ONLY = r"""
import sys
from sources.mediawiki import read_pages
from sources.wikipedia import compact, page_to_document
print(sum(1 for page in read_pages(sys.argv[1]) for _ in page_to_document(compact(page))))
"""


def logic_only(path: Path) -> dict:
    """Reader + page rules + cleaning + splitting in one process, no Beam: is the logic's memory flat?"""
    result = run_measured([PYTHON, "-c", LOGIC_ONLY, str(path)], cwd=ROOT)
    result.pop("stdout", None)
    return result


def mwp_full_articles(path: Path) -> dict:
    result = run_measured([PYTHON, "-c", MWP_BASELINE, str(path)])
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
from pipelines.common import run_pipeline
out["import apache_beam"] = cpu() - t
t = cpu(); w = time.perf_counter()
p = beam.Pipeline(runner="apache_beam.runners.portability.fn_api_runner.FnApiRunner")
p | beam.Create([1]) | beam.Map(lambda x: x)
p.run().wait_until_finish()
out["Beam: run an empty 1-element pipeline (wall)"] = time.perf_counter() - w
t = cpu()
from sources.sentences import split_sentences
split_sentences("Warm up.")
out["import nltk + build Punkt"] = cpu() - t
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
from sources.mediawiki import read_pages
t = cpu()
pages = list(read_pages(sys.argv[1]))
out["read_pages: decompress thread + expat + lead cut"] = cpu() - t
out["  of which expat + lead cut (difference)"] = out["read_pages: decompress thread + expat + lead cut"] - out["bz2 decompression (python bz2, 1 thread)"]
from sources.wikitext import prestrip, tidy, strip_markup
from sources.wikipedia import page_to_document
arts = [p for p in pages if p["ns"] == 0 and p["redirect"] is None]
t = cpu(); pre = [prestrip(p["lead"]) for p in arts]; out["prestrip (templates, refs, comments)"] = cpu() - t
import mwparserfromhell
t = cpu(); raw = [strip_markup(p["lead"]) for p in arts]; out["mwparserfromhell parse + walk (incl. prestrip)"] = cpu() - t
t = cpu(); txt = [tidy(x) for x in raw]; out["tidy"] = cpu() - t
t = cpu(); [split_sentences(x) for x in txt]; out["split_sentences (Punkt)"] = cpu() - t
t = cpu(); docs = [d for p in pages for d in page_to_document(p) if isinstance(d, dict)]; out["page_to_document, all pages (sum of the 4 above)"] = cpu() - t
from pipelines.common import write_shard
from schemas import DOCUMENT_SCHEMA
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


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if a and b else "n/a"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=60, help="dump size for the bzip2 comparisons")
    parser.add_argument(
        "--small", type=int, default=10, help="dump size for WikiExtractor / full mwparserfromhell"
    )
    parser.add_argument("--memory", default="25,100", help="dump sizes for peak RSS")
    parser.add_argument("--quick", action="store_true", help="--repeats 10 --small 5 --memory 5,10")
    parser.add_argument("--bzip2-only", action="store_true", help="only part 1 (bzip2 comparisons)")
    args = parser.parse_args(argv)
    if args.quick:
        args.repeats, args.small, args.memory = 10, 5, "5,10"
    mem_sizes = [int(x) for x in args.memory.split(",")]
    results: dict = {"machine": {"cpus": os.cpu_count(), "load_avg_start": os.getloadavg()}}

    single, multi = dump_path(args.repeats), dump_path(args.repeats, multistream=True)
    small = dump_path(args.small)
    for size in mem_sizes:
        dump_path(size)

    print(f"[1/4] bzip2 -dc vs ingest, {args.repeats} repeats", flush=True)
    r = results["single"] = {"bzip2": bzip2(single), "ingest": ingest(single)}
    r["ingest_2_workers"] = ingest(single, TWO_WORKERS)
    r["bzip2_after"] = bzip2(single)
    m = results["multistream"] = {"bzip2": bzip2(multi), "ingest_2_workers": ingest(multi, TWO_WORKERS)}
    m["bzip2_after"] = bzip2(multi)

    print(
        f"[2/4] WikiExtractor ({args.repeats} repeats), full-article mwparserfromhell ({args.small})",
        flush=True,
    )
    print("| run | wall s | CPU s (process tree) | peak RSS MB |\n|---|---|---|---|")
    for name, res in [
        *(("single " + k, v) for k, v in r.items()),
        *(("multistream " + k, v) for k, v in m.items()),
    ]:
        print(f"| {name} | {res['wall_s']} | {res['cpu_s']} | {res['peak_rss_mb']} |", flush=True)
    if args.bzip2_only:
        return 0
    r["wikiextractor"] = wikiextractor(single)
    b = results["baselines"] = {"ingest": ingest(small), "mwparserfromhell_full": mwp_full_articles(small)}

    print(f"[3/4] peak RSS at {mem_sizes} repeats", flush=True)
    results["memory"] = {str(size): ingest(dump_path(size)) for size in mem_sizes}
    results["memory_logic_only"] = {str(size): logic_only(dump_path(size)) for size in mem_sizes}

    print("[4/4] where the time goes", flush=True)
    results["breakdown"] = {"dump": small.name, "cpu_s": breakdown(small)}
    results["machine"]["load_avg_end"] = os.getloadavg()

    for section in ("single", "multistream", "baselines", "memory"):
        for value in results[section].values():
            value.pop("stdout", None)
    WORK.mkdir(exist_ok=True)
    (WORK / "bench_ingest.json").write_text(json.dumps(results, indent=2) + "\n")

    bz_s = (r["bzip2"]["wall_s"] + r["bzip2_after"]["wall_s"]) / 2
    bz_m = (m["bzip2"]["wall_s"] + m["bzip2_after"]["wall_s"]) / 2
    we, mwp = r["wikiextractor"], b["mwparserfromhell_full"]
    ours = b["ingest"]["wall_s"]
    rows = [
        ("multistream, 2 workers vs `bzip2 -dc`", f"{args.repeats}", m["ingest_2_workers"]["wall_s"], bz_m,
         ratio(m["ingest_2_workers"]["wall_s"], bz_m), "<= 1.0x"),
        ("single-stream, in-process vs `bzip2 -dc`", f"{args.repeats}", r["ingest"]["wall_s"], bz_s,
         ratio(r["ingest"]["wall_s"], bz_s), "<= 2.0x"),
        ("single-stream, 2 workers vs `bzip2 -dc`", f"{args.repeats}", r["ingest_2_workers"]["wall_s"], bz_s,
         ratio(r["ingest_2_workers"]["wall_s"], bz_s), "<= 2.0x"),
        ("WikiExtractor `--no-templates` vs ingest (in-process)", f"{args.repeats}", we.get("wall_s"),
         r["ingest"]["wall_s"], ratio(we.get("wall_s") or 0, r["ingest"]["wall_s"]) + " faster", ">= 3x"),
        ("full-article mwparserfromhell vs ingest", f"{args.small}", mwp["wall_s"], ours,
         ratio(mwp["wall_s"], ours) + " faster", ">= 10x"),
    ]  # fmt: skip
    print("\n| comparison | repeats | ours / theirs (s) | baseline (s) | ratio | target |")
    print("|---|---|---|---|---|---|")
    for name, reps, a, base, rat, target in rows:
        print(f"| {name} | {reps} | {a} | {round(base, 2)} | {rat} | {target} |")
    print(
        "\n| dump repeats | pages | documents | ingest wall (s) | peak RSS, ingest (MB) | peak RSS, logic only (MB) |"
    )
    print("|---|---|---|---|---|---|")
    for size, res in results["memory"].items():
        logic = results["memory_logic_only"][size]["peak_rss_mb"]
        print(
            f"| {size} | {res.get('pages_read')} | {res.get('documents')} | {res['wall_s']} | {res['peak_rss_mb']} "
            f"| {logic} |"
        )
    print(f"\nCPU seconds per step, in one process, on {small.name}:\n")
    print("| step | CPU s |\n|---|---|")
    for step, seconds in results["breakdown"]["cpu_s"].items():
        print(f"| {step} | {seconds} |")
    if we.get("error"):
        print(f"\nWikiExtractor failed: {we['error']}")
    print(
        f"\nload average start {results['machine']['load_avg_start']}, end {results['machine']['load_avg_end']}"
    )
    print(f"peak RSS of the ingest runs: single {r['ingest']['peak_rss_mb']} MB, "
          f"multistream {m['ingest_2_workers']['peak_rss_mb']} MB; WikiExtractor docs {we.get('documents')}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
