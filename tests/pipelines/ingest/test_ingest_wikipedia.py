"""`incoherent ingest wikipedia` end to end: the gensim fragment, bad inputs, multistream under 2 workers."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from incoherent.pipelines.cli import main
from incoherent.sources import bz2decode
from tests.conftest import file_bytes
from tests.sources.test_mediawiki import build_multistream

ROOT = Path(__file__).resolve().parents[3]
GENSIM = ROOT / "samples/wikipedia/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
DATA = ROOT / "tests/data/wiki"
RESIDUE = re.compile(r"\{\{|\}\}|\[\[|\]\]|<ref|\||&nbsp;|\(\s*\)")
DISAMBIGUATION = {
    "Alien", "Austin (disambiguation)", "Ada", "Aberdeen (disambiguation)", "Argument (disambiguation)",
    "Animal (disambiguation)", "Asia Minor (disambiguation)", "Aa River",
}  # fmt: skip


def ingest(out: Path, *dumps: Path | str, extra: tuple[str, ...] = ()) -> int:
    return main(
        ["ingest", "wikipedia", *map(str, dumps), "--out", str(out), "--runner", "DirectRunner", *extra]
    )


def documents(out: Path, source: str = "wikipedia") -> list[dict]:
    return pq.read_table(out / f"documents-{source}" / "documents-00000-of-00001.parquet").to_pylist()


def rejected(out: Path) -> list[dict]:
    return pq.read_table(out / "rejected/ingest-wikipedia/rejected-00000-of-00001.parquet").to_pylist()


@pytest.fixture(scope="module")
def gensim_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("gensim")
    assert ingest(out, GENSIM) == 0
    return out


def test_no_beam_flags_runs_one_in_process_worker_with_the_same_bytes(gensim_run, tmp_path, monkeypatch):
    # without flags run() knows it has one in-process worker: one read task, the same files as the fixture's
    made = []

    class Counted(bz2decode._DecoderProcess):
        def __init__(self, *args):
            made.append(args)
            super().__init__(*args)

    monkeypatch.setattr(bz2decode, "_DecoderProcess", Counted)
    assert main(["ingest", "wikipedia", str(GENSIM), "--out", str(tmp_path)]) == 0
    assert len(made) == 1  # one decoder for the one dump, not one started early and another for the read
    assert bz2decode._STARTED == {} and not bz2decode._DECODERS
    summary = json.loads((tmp_path / "run_summary.json").read_text())
    assert summary["params"]["read_tasks"] == 1
    assert file_bytes(tmp_path) == file_bytes(gensim_run)


# Run in a fresh interpreter (Beam is already imported in this one): record each decoder as it is made, with
# whether apache_beam was imported by then, and which decoder the read consumed.
_WIRING = """
import json, sys
from incoherent.sources import bz2decode

events = []

class Spy(bz2decode._DecoderProcess):
    def __init__(self, *args):
        events.append(["made", id(self), "apache_beam" in sys.modules])
        super().__init__(*args)

    def chunks(self, *args, **kwargs):
        events.append(["read", id(self)])
        return super().chunks(*args, **kwargs)

bz2decode._DecoderProcess = Spy
from incoherent.pipelines.cli import main

code = main(["ingest", "wikipedia", sys.argv[1], "--out", sys.argv[2]])
print(json.dumps({"code": code, "events": events}))
"""


@pytest.mark.e2e
def test_the_read_takes_over_the_decoder_started_before_beam_is_imported(tmp_path):
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _WIRING, str(GENSIM), str(tmp_path / "out")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["code"] == 0
    [made, read] = result["events"]  # exactly one decoder, made and then read
    assert made[0] == "made" and made[2] is False  # started while apache_beam was not yet imported
    assert read == ["read", made[1]]  # and it is the one the read consumed


def test_gensim_fragment_yields_the_real_articles(gensim_run):
    docs, dropped = documents(gensim_run), rejected(gensim_run)
    summary = json.loads((gensim_run / "run_summary.json").read_text())
    assert summary["counters"]["ingest-wikipedia"] == {
        "disambiguation": 8, "empty_lead": 1, "kept": 97, "not_article": 1, "redirect": 99,
    }  # fmt: skip
    assert summary["counters"]["ingest-wikipedia-read"]["pages_read"] == 206
    # The 106 non-redirect articles of namespace 0: 97 documents + 8 disambiguation pages + 1 empty lead.
    disambiguation = {r["detail"].rsplit(": ", 1)[0] for r in dropped if r["reason"] == "disambiguation"}
    assert disambiguation == DISAMBIGUATION
    assert [r["detail"] for r in dropped if r["reason"] == "empty_lead"] == [
        "List of anthropologists: 17 chars of lead wikitext"
    ]
    assert [r["detail"] for r in dropped if r["reason"] == "not_article"] == [
        "ns=4: Wikipedia:Adding Wikipedia articles to Nupedia"
    ]
    assert len({d["id"] for d in docs}) == 97 and all(d["id"].startswith("wikipedia:") for d in docs)
    anarchism = next(d for d in docs if d["title"] == "Anarchism")
    assert anarchism["id"] == "wikipedia:12" and anarchism["url"] == "https://en.wikipedia.org/wiki/Anarchism"
    assert anarchism["sentences"][0] == (
        "Anarchism is a political philosophy that advocates self-governed societies based on voluntary "
        "institutions."
    )
    assert anarchism["dump"] == GENSIM.name and anarchism["revision_id"] == 716551092
    lincoln = next(d for d in docs if d["title"] == "Abraham Lincoln")
    assert lincoln["url"] == "https://en.wikipedia.org/wiki/Abraham_Lincoln"


def test_gensim_sentences_are_clean(gensim_run):
    """Markup residue in under 0.05% of the sentences of the fragment (issue 2 target)."""
    sentences = [s for d in documents(gensim_run) for s in d["sentences"]]
    assert len(sentences) > 900
    residue = [s for s in sentences if RESIDUE.search(s)]
    assert len(residue) / len(sentences) < 0.0005, residue[:5]
    assert all(s == s.strip() and "  " not in s and " ," not in s for s in sentences)


def test_bad_records_are_counted_and_odd_files_are_read(tmp_path):
    dumps = [
        DATA / "2022-08-22_minidumps-simple_c20e4a02.xml.bz2",  # junk after </mediawiki>
        DATA / "article-pyrus-utf16.xml.bz2",  # UTF-16, redirect as last revision
        DATA / "article-pear.xml",  # schema 0.3 full history
        DATA / "surrogate-entity-id1718.xml",  # bare <page> fragment whose lead cannot be decoded
        DATA / "list-of-anthropologists-empty-lead.xml",
    ]
    assert ingest(tmp_path, *dumps) == 0
    summary = json.loads((tmp_path / "run_summary.json").read_text())
    counters = summary["counters"]
    assert counters["ingest-wikipedia-read"]["files_with_trailing_junk"] == 1
    assert counters["ingest-wikipedia-read"]["fragment_files"] == 1
    stage = counters["ingest-wikipedia"]
    assert stage["parse_error"] == 1 and stage["empty_lead"] == 1 and stage["redirect"] >= 1
    reasons = {(r["id"], r["reason"]) for r in rejected(tmp_path)}
    assert {
        ("wikipedia:1718", "parse_error"),
        ("wikipedia:728", "empty_lead"),
        ("wikipedia:9261472", "redirect"),
    } <= (reasons)
    titles = {d["title"] for d in documents(tmp_path)}
    assert "Pear" in titles and len(titles) == stage["kept"]


@pytest.mark.parametrize(
    "name, message",
    [
        ("truncated-wikipedia2vec-sample.xml.bz2", "truncated bz2 file"),
        ("billion-laughs.xml", "DTD declares internal entity 'lol'"),
        ("external-entity.xml", "DTD declares external entity 'secret'"),
        ("not-xml-cnn-story.xml.bz2", "not XML"),
        ("does-not-exist.xml.bz2", "no such file"),
    ],
)
def test_unusable_inputs_fail_with_one_line(tmp_path, capsys, name, message):
    # these are found while the reads are planned, before the pipeline runs: nothing else is printed
    out = tmp_path / "out"
    assert ingest(out, DATA / name) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines  # no traceback, no log
    err = lines[0]
    assert err.startswith(f"error: {DATA / name}: ") and message in err
    assert not (out / "run_summary.json").exists()  # nothing is presented as a complete run


def test_a_dump_cut_after_its_header_fails_with_one_line_inside_the_pipeline(tmp_path, capsys):
    cut = tmp_path / "cut.xml.bz2"
    cut.write_bytes(GENSIM.read_bytes()[:500_000])  # <siteinfo> reads: the read plan accepts it
    assert main(["ingest", "wikipedia", str(cut), "--out", str(tmp_path / "out")]) == 2
    stderr = capsys.readouterr().err
    assert stderr.strip().splitlines()[-1].startswith(f"error: {cut}: truncated bz2 file")
    # Beam logs the failing step (ERROR and a traceback): the CLI's log filter keeps it off the terminal
    assert "Traceback" not in stderr and not (tmp_path / "out" / "run_summary.json").exists()


@pytest.mark.e2e  # two Beam worker processes: 40 s at load 18
def test_multistream_two_workers_match_in_process(tmp_path):
    dump = build_multistream(GENSIM, tmp_path / "mini-pages-articles-multistream.xml.bz2", 40, 4)
    single, multi = tmp_path / "single", tmp_path / "multi"
    # in process (the default): one read task per dump, its bz2 blocks decoded in parallel
    assert ingest(single, dump) == 0
    params = json.loads((single / "run_summary.json").read_text())["params"]
    assert params["read_tasks"] == 1 and params["decompress_threads"] >= 1
    assert (
        ingest(
            multi,
            dump,
            extra=(
                "--range-mb",
                "0.000001",
                "--direct_running_mode=multi_processing",
                "--direct_num_workers=2",
            ),
        )
        == 0
    )
    summary = json.loads((multi / "run_summary.json").read_text())
    assert summary["params"]["read_tasks"] == 10
    assert summary["counters"]["ingest-wikipedia-read"]["multistream_ranges"] == 10
    files = sorted(p.relative_to(single) for p in single.rglob("*.parquet"))
    assert files == sorted(p.relative_to(multi) for p in multi.rglob("*.parquet")) and len(files) == 2
    for rel in files:
        assert (single / rel).read_bytes() == (multi / rel).read_bytes()
    stage = summary["counters"]["ingest-wikipedia"]
    assert len(documents(single)) == stage["kept"] >= 3 and sum(stage.values()) == 40


def test_several_dumps_keep_the_newest_revision_of_a_page(tmp_path):
    # Atlantic Ocean (page 698) is in the 2016 gensim fragment and in the 2022 DBpedia minidump.
    minidump = ROOT / "samples/wikipedia/2022-08-24_minidumps-en_3def73f3.xml.bz2"
    out = tmp_path / "out"
    assert ingest(out, GENSIM, minidump) == 0
    docs = documents(out)
    assert len({d["id"] for d in docs}) == len(docs)
    (atlantic,) = [d for d in docs if d["id"] == "wikipedia:698"]
    assert atlantic["dump"] == minidump.name and atlantic["timestamp"].startswith("2022")
    dropped = [r for r in rejected(out) if r["reason"] == "duplicate_id"]
    assert "wikipedia:698" in {r["id"] for r in dropped}
    summary = json.loads((out / "run_summary.json").read_text())
    assert summary["counters"]["ingest-wikipedia"]["duplicate_id"] == len(dropped)
    assert summary["counters"]["ingest-wikipedia"]["kept"] == len(
        docs
    )  # #53: the copies were counted kept too
