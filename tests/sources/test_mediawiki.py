"""sources.mediawiki: streaming MediaWiki XML reading on real dumps and on the bad inputs of tests/data/wiki."""

from __future__ import annotations

import bz2
import collections
import re
import subprocess
import sys
from pathlib import Path

import pytest

from incoherent.schemas.records import InputError
from incoherent.sources import bz2decode, mediawiki_xml
from incoherent.sources.bz2decode import multistream_index, multistream_ranges, stream_offsets
from incoherent.sources.mediawiki import SiteInfo, detect_encoding, read_pages, read_range, read_siteinfo

ROOT = Path(__file__).resolve().parents[2]
GENSIM = ROOT / "samples/wikipedia/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
DATA = ROOT / "tests/data/wiki"


def counting():
    counts: collections.Counter = collections.Counter()

    def inc(name: str, n: int = 1) -> None:
        counts[name] += n

    return counts, inc


def build_multistream(src: Path, out: Path, n_pages: int, per_stream: int) -> Path:
    """Write the first ``n_pages`` real pages of ``src`` as a multistream dump + index (Wikipedia's layout)."""
    xml = bz2.open(src, "rt", encoding="utf-8").read()
    head = xml.split("<page>", 1)[0]
    pages = re.findall(r"  <page>.*?</page>\n", xml, flags=re.S)[:n_pages]
    index = []
    with open(out, "wb") as f:
        f.write(bz2.compress(head.encode("utf-8")))
        for i in range(0, len(pages), per_stream):
            offset = f.tell()
            chunk = pages[i : i + per_stream]
            for page in chunk:
                pid = re.search(r"<id>(\d+)</id>", page).group(1)
                title = re.search(r"<title>(.*?)</title>", page).group(1)
                index.append(f"{offset}:{pid}:{title}\n")
            f.write(bz2.compress("".join(chunk).encode("utf-8")))
        f.write(bz2.compress(b"</mediawiki>\n"))
    stem = str(out)[: -len(".xml.bz2")]
    with bz2.open(stem + "-index.txt.bz2", "wt", encoding="utf-8") as f:
        f.writelines(index)
    return out


@pytest.fixture(scope="module")
def gensim_pages():
    counts, inc = counting()
    return list(read_pages(str(GENSIM), count=inc)), counts


def test_gensim_fragment_pages_and_fields(gensim_pages):
    pages, counts = gensim_pages
    assert len(pages) == 206 and counts["pages_read"] == 206
    first = pages[0]
    assert first["page_id"] == 10 and first["title"] == "AccessibleComputing"
    assert first["redirect"] == "Computer accessibility" and first["ns"] == 0
    assert first["revision_id"] == 631144794 and first["timestamp"] == "2014-10-26T04:50:23Z"
    assert first["base"] == "https://en.wikipedia.org/wiki/"
    assert first["dump"] == GENSIM.name
    assert sum(1 for p in pages if p["ns"] == 0 and p["redirect"] is None) == 106


def test_lead_is_cut_at_read_time(gensim_pages):
    pages, _ = gensim_pages
    anarchism = next(p for p in pages if p["title"] == "Anarchism")
    assert anarchism["lead"].startswith("{{Redirect2|Anarchist|")
    assert "\n==" not in anarchism["lead"] and "'''Anarchism''' is" in anarchism["lead"]
    assert len(anarchism["lead"]) < 20_000  # of a text of over 100,000 characters
    assert len(anarchism["tail"]) == mediawiki_xml.TAIL_CHARS
    assert anarchism["tail"].rstrip().endswith("]]")  # categories / interwiki at the bottom


def _write_page_xml(path: Path, text: str) -> None:
    path.write_text(
        "<mediawiki><page><title>T</title><ns>0</ns><id>1</id><revision><id>5</id>"
        f"<timestamp>2020</timestamp><text>{text}</text></revision></page></mediawiki>",
        encoding="utf-8",
    )


def _no_scan(*args):
    raise AssertionError("the page scanner read the page: expat and its buffer size were not tested")


@pytest.mark.parametrize("buffer", [1, 3, 7, 1 << 16])
def test_lead_cut_across_character_data_pieces(tmp_path, monkeypatch, buffer):
    # expat reads the page (the fast scanner would read it otherwise), in character data pieces of `buffer`
    monkeypatch.setattr(mediawiki_xml, "SCAN_PAGES", False)
    monkeypatch.setattr(mediawiki_xml, "scan_page", _no_scan)
    monkeypatch.setattr(mediawiki_xml, "EXPAT_BUFFER", buffer)
    path = tmp_path / "p.xml"
    _write_page_xml(path, "Intro a==b.\n\nMore.\n== History ==\nOld.\n==More==\nEnd.")
    [page] = read_pages(str(path))
    assert page["lead"] == "Intro a==b.\n\nMore.\n"
    assert page["tail"] == "== History ==\nOld.\n==More==\nEnd."
    _write_page_xml(path, "== Only ==\nbody")
    [page] = read_pages(str(path))
    assert page["lead"] == "" and page["tail"] == "== Only ==\nbody"


def test_schema_03_full_history_takes_last_revision():
    [page] = read_pages(str(DATA / "article-pear.xml"))
    assert page["title"] == "Pear" and page["ns"] == 0  # no <ns> in schema 0.3: from the title
    assert page["revision_id"] == 188924 and page["timestamp"] == "2002-08-31T05:53:10Z"
    assert page["lead"].startswith("Pears are [[tree]]s of the [[genus]]")
    assert SiteInfo().namespace_of("Talk:Pear") == 1 and SiteInfo().namespace_of("Pear: a fruit") == 0


@pytest.mark.parametrize("name", ["article-pyrus-utf16.xml", "article-pyrus-utf16.xml.bz2"])
def test_utf16_without_bom(name):
    [page] = read_pages(str(DATA / name))
    assert page["title"] == "Pyrus" and page["page_id"] == 9261472
    assert page["redirect"] == "" and page["lead"] == "#REDIRECT [[Pear]]"  # the last of 6 revisions
    assert page["revision_id"] == 238392911


@pytest.mark.parametrize("suffix", ["", ".bz2", ".gz", ".xz", ".lzma"])
def test_compressed_copies_read_the_same(suffix):
    [page] = read_pages(str(DATA / f"article-pyrus.xml{suffix}"))
    [plain] = read_pages(str(DATA / "article-pyrus.xml"))
    assert page == {**plain, "dump": f"article-pyrus.xml{suffix}"}
    assert page["title"] == "Pyrus" and page["revision_id"] == 238392911


def test_7z_archive_is_a_one_line_error():
    with pytest.raises(InputError, match=r"article-pyrus\.xml\.7z: 7z archives are not read; extract"):
        list(read_pages(str(DATA / "article-pyrus.xml.7z")))


def test_utf16_with_bom_bulgarian():
    pages = list(read_pages(str(DATA / "bgwiki-latest-pages-articles-shortened.xml.bz2")))
    assert [p["ns"] for p in pages] == [0, 4, 4]
    assert pages[0]["title"] == "Григориански календар"
    assert "Григорианският календар" in pages[0]["lead"]


def test_bare_page_fragment_without_root():
    counts, inc = counting()
    [page] = read_pages(str(DATA / "enwiki-20120104-id1718.xml"), count=inc)
    assert (page["page_id"], page["title"], page["ns"]) == (1718, "Ambrosiaster", 0)
    assert page["lead"].startswith("__NOTOC__\n'''Ambrosiaster''' is the name given")
    assert page["base"] == "https://en.wikipedia.org/wiki/"  # no siteinfo: the default
    assert counts["fragment_files"] == 1


def test_trailing_junk_after_root_is_ignored_and_counted():
    counts, inc = counting()
    pages = list(read_pages(str(DATA / "2022-08-22_minidumps-simple_c20e4a02.xml.bz2"), count=inc))
    assert len(pages) == counts["pages_read"] > 0
    assert counts["files_with_trailing_junk"] == 1 and counts["trailing_junk_bytes"] >= 2


def test_truncated_bz2_is_an_input_error_naming_the_file():
    path = str(DATA / "truncated-wikipedia2vec-sample.xml.bz2")
    with pytest.raises(InputError, match=r"truncated-wikipedia2vec-sample\.xml\.bz2: truncated bz2"):
        list(read_pages(path))


def test_truncated_xml_is_an_input_error(tmp_path):
    path = tmp_path / "cut.xml"
    path.write_bytes((DATA / "article-pear.xml").read_bytes()[:3000])
    with pytest.raises(InputError, match=r"cut\.xml: not well-formed XML \(document ends"):
        list(read_pages(str(path)))


@pytest.mark.parametrize("name", ["billion-laughs.xml", "external-entity.xml"])
def test_entity_declarations_are_refused(name):
    with pytest.raises(InputError, match=rf"{name}: DTD declares (internal|external) entity"):
        list(read_pages(str(DATA / name)))


def test_not_xml_missing_and_empty_inputs(tmp_path):
    with pytest.raises(InputError, match=r"not-xml-cnn-story\.xml\.bz2: not XML"):
        list(read_pages(str(DATA / "not-xml-cnn-story.xml.bz2")))
    with pytest.raises(InputError, match=r"nowhere\.xml\.bz2: no such file"):
        list(read_pages(str(tmp_path / "nowhere.xml.bz2")))
    (tmp_path / "empty.xml").write_bytes(b"")
    with pytest.raises(InputError, match=r"empty\.xml: empty file"):
        list(read_pages(str(tmp_path / "empty.xml")))
    (tmp_path / "plain.xml.bz2").write_bytes(b"plain text, not bz2")
    with pytest.raises(InputError, match=r"plain\.xml\.bz2: not a bz2 file"):
        list(read_pages(str(tmp_path / "plain.xml.bz2")))
    (tmp_path / "html.xml").write_text("<html><body>hi</body></html>")
    with pytest.raises(InputError, match=r"html\.xml: root element <html> is not a MediaWiki dump"):
        list(read_pages(str(tmp_path / "html.xml")))


def test_detect_encoding():
    assert detect_encoding(b"\xff\xfe<\x00m\x00") == "utf-16-le"
    assert detect_encoding(b"\xfe\xff\x00<") == "utf-16-be"
    assert detect_encoding(b"\x00<\x00?\x00x") == "utf-16-be"
    assert detect_encoding(b"<\x00?\x00x\x00") == "utf-16-le"
    assert detect_encoding(b"\xef\xbb\xbf<mediawiki>") == "utf-8-sig"
    assert detect_encoding(b'<?xml version="1.0" encoding="ISO-8859-1"?>') == "iso8859-1"
    assert detect_encoding(b"<mediawiki>") == "utf-8"


def test_siteinfo():
    site = read_siteinfo(str(GENSIM))
    assert site.base == "https://en.wikipedia.org/wiki/" and site.dbname == "enwiki"
    assert site.namespaces["wikipedia"] == 4 and site.namespaces["category"] == 14


def test_multistream_ranges_read_the_same_pages(tmp_path):
    dump = build_multistream(GENSIM, tmp_path / "mini-pages-articles-multistream.xml.bz2", 23, 5)
    index = multistream_index(str(dump))
    assert index == str(tmp_path / "mini-pages-articles-multistream-index.txt.bz2")
    offsets = stream_offsets(index)
    assert len(offsets) == 5
    size = dump.stat().st_size
    ranges = multistream_ranges(str(dump), offsets, size, target_bytes=1)
    assert ranges == list(zip(offsets, [*offsets[1:], size], strict=True))
    assert multistream_ranges(str(dump), offsets, size, target_bytes=1 << 30, min_ranges=1) == [
        (offsets[0], size)
    ]
    site = read_siteinfo(str(dump))
    by_range = [
        page
        for i, (start, end) in enumerate(ranges)
        for page in read_range(str(dump), start, end, site, last=i == len(ranges) - 1)
    ]
    whole = list(read_pages(str(dump)))
    assert len(whole) == 23 and by_range == whole


def test_multistream_index_names(tmp_path):
    dump = tmp_path / "enwiki-20240101-pages-articles-multistream1.xml-p1p41242.bz2"
    index = tmp_path / "enwiki-20240101-pages-articles-multistream-index1.txt-p1p41242.bz2"
    dump.write_bytes(b"")
    assert multistream_index(str(dump)) is None
    index.write_bytes(b"")
    assert multistream_index(str(dump)) == str(index)
    assert multistream_index(str(GENSIM)) is None


@pytest.mark.parametrize("threads", [2, 3])
def test_parallel_decompression_reads_the_same_pages_in_order(tmp_path, threads):
    dump = build_multistream(GENSIM, tmp_path / "mini-pages-articles-multistream.xml.bz2", 23, 5)
    offsets = stream_offsets(multistream_index(str(dump)))
    size = dump.stat().st_size
    site = read_siteinfo(str(dump))
    whole = list(read_pages(str(dump)))
    assert list(read_pages(str(dump), threads=threads)) == whole
    assert list(read_range(str(dump), offsets[0], size, site, last=True, threads=threads)) == whole
    # a single-stream dump: blocks inside one stream are decoded in parallel too
    assert list(read_pages(str(GENSIM), threads=threads)) == list(read_pages(str(GENSIM)))


def test_parallel_decompression_of_ranges_matches_the_index(tmp_path):
    dump = build_multistream(GENSIM, tmp_path / "mini-pages-articles-multistream.xml.bz2", 23, 5)
    offsets = stream_offsets(multistream_index(str(dump)))
    size = dump.stat().st_size
    ranges = multistream_ranges(str(dump), offsets, size, target_bytes=1)
    site = read_siteinfo(str(dump))
    by_range = [
        page
        for i, (start, end) in enumerate(ranges)
        for page in read_range(str(dump), start, end, site, last=i == len(ranges) - 1, threads=2)
    ]
    assert by_range == list(read_pages(str(dump)))


@pytest.mark.parametrize("threads", [1, 2])
def test_decompression_reports_a_truncated_dump(tmp_path, threads):
    dump = build_multistream(GENSIM, tmp_path / "mini-pages-articles-multistream.xml.bz2", 23, 5)
    offsets = stream_offsets(multistream_index(str(dump)))
    cut = tmp_path / "cut-pages-articles-multistream.xml.bz2"
    cut.write_bytes(dump.read_bytes()[: offsets[3] + 100])
    site = read_siteinfo(str(cut))
    with pytest.raises(InputError, match=r"cut-pages-articles-multistream\.xml\.bz2.*truncated bz2 file"):
        list(read_range(str(cut), offsets[0], offsets[3] + 100, site, last=True, threads=threads))
    with pytest.raises(InputError, match=r"cut-pages-articles-multistream\.xml\.bz2: truncated bz2 file"):
        list(read_pages(str(cut), threads=threads))


@pytest.mark.parametrize("threads", [1, 2])
def test_garbage_after_the_last_bz2_stream_is_ignored_and_counted(tmp_path, threads):
    # bzip2 -d ignores such bytes with a warning; we read every page and count the bytes
    garbage = b"not bz2: a download that appended an HTTP error page\n" * 3000  # spans several read chunks
    dump = tmp_path / "garbage.xml.bz2"
    dump.write_bytes(GENSIM.read_bytes() + garbage)
    counts, inc = counting()
    pages = list(read_pages(str(dump), threads=threads, count=inc))
    expected = [{**page, "dump": dump.name} for page in read_pages(str(GENSIM))]
    assert pages == expected and counts[bz2decode.BZ2_GARBAGE] == len(garbage)

    multi = build_multistream(GENSIM, tmp_path / "mini-pages-articles-multistream.xml.bz2", 23, 5)
    offsets = stream_offsets(multistream_index(str(multi)))
    site = read_siteinfo(str(multi))
    clean = list(read_range(str(multi), offsets[0], multi.stat().st_size, site, last=True))
    with multi.open("ab") as f:
        f.write(garbage)
    counts, inc = counting()
    got = list(
        read_range(str(multi), offsets[0], multi.stat().st_size, site, last=True, threads=threads, count=inc)
    )
    assert got == clean and counts[bz2decode.BZ2_GARBAGE] == len(garbage)


@pytest.mark.parametrize("threads", [1, 2])
def test_clean_bz2_files_count_no_garbage(threads):
    counts, inc = counting()
    list(read_pages(str(GENSIM), threads=threads, count=inc))
    assert counts[bz2decode.BZ2_GARBAGE] == 0 and counts["pages_read"] == 206


@pytest.mark.parametrize("threads", [1, 2])
def test_bad_bz2_files_are_one_line_errors_with_either_decoder(tmp_path, threads):
    truncated = str(DATA / "truncated-wikipedia2vec-sample.xml.bz2")
    with pytest.raises(InputError, match=r"truncated-wikipedia2vec-sample\.xml\.bz2: truncated bz2"):
        list(read_pages(truncated, threads=threads))
    plain = tmp_path / "plain.xml.bz2"
    plain.write_bytes(b"<mediawiki></mediawiki>")
    with pytest.raises(InputError, match=r"plain\.xml\.bz2: not a bz2 file"):
        list(read_pages(str(plain), threads=threads))
    empty = tmp_path / "empty.xml.bz2"
    empty.write_bytes(b"")
    with pytest.raises(InputError, match=r"empty\.xml\.bz2: empty file"):
        list(read_pages(str(empty), threads=threads))


def test_parallel_reader_left_open_does_not_abort_the_interpreter(tmp_path):
    # indexed_bzip2 aborts the process when its threads still run at exit; the reader closes them first
    script = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "from incoherent.sources import mediawiki\n"
        "pages = mediawiki.read_pages(sys.argv[2], threads=2)\n"
        "next(pages)\n"
        "keep = pages  # never finished, never closed\n"
        "print('read one page')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(ROOT), str(GENSIM)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "read one page"


# --------------------------------------------------------------------------------------------- decoder process


def test_a_started_decoder_is_taken_over_by_the_read():
    expected = list(read_pages(str(GENSIM)))
    assert bz2decode.start_decoder(str(GENSIM), 2)
    assert len(bz2decode._STARTED) == 1
    assert list(read_pages(str(GENSIM), threads=2)) == expected
    assert bz2decode._STARTED == {} and not bz2decode._DECODERS  # taken over, then closed


def test_decoders_start_only_for_local_bz2_dumps_read_in_parallel(tmp_path):
    (tmp_path / "fake.xml.bz2").write_bytes(b"<mediawiki/>")
    assert not bz2decode.start_decoder(str(DATA / "article-pear.xml"), 2)  # not bz2
    assert not bz2decode.start_decoder(str(tmp_path / "fake.xml.bz2"), 2)  # not bz2 inside
    assert not bz2decode.start_decoder(str(tmp_path / "missing.xml.bz2"), 2)
    assert not bz2decode.start_decoder(str(GENSIM), 1)  # one thread reads with Python's bz2
    assert bz2decode.start_decoder(str(GENSIM), 2)
    [decoder] = bz2decode._STARTED.values()
    bz2decode.stop_started_decoders()  # nobody took it over: its child process is stopped
    assert bz2decode._STARTED == {} and decoder.child.poll() is not None


def test_an_unfinished_read_stops_its_decoder_process():
    pages = read_pages(str(GENSIM), threads=2)
    next(pages)
    [decoder] = bz2decode._DECODERS
    pages.close()
    assert decoder.child.poll() is not None and not bz2decode._DECODERS


def test_decoder_threads_in_this_process_read_the_same(tmp_path, monkeypatch):
    # DECODER_PROCESS = False: indexed_bzip2's threads in the reading process (as for multistream ranges)
    monkeypatch.setattr(bz2decode, "DECODER_PROCESS", False)
    assert not bz2decode.start_decoder(str(GENSIM), 2)
    assert list(read_pages(str(GENSIM), threads=2)) == list(read_pages(str(GENSIM)))
    dump = tmp_path / "garbage.xml.bz2"
    dump.write_bytes(GENSIM.read_bytes() + b"<html>not bz2</html>\n")
    counts, inc = counting()
    assert len(list(read_pages(str(dump), threads=2, count=inc))) == 206
    assert counts[bz2decode.BZ2_GARBAGE] == 21
    cut = tmp_path / "cut.xml.bz2"
    cut.write_bytes(GENSIM.read_bytes()[:400_000])
    with pytest.raises(InputError, match=r"cut\.xml\.bz2: truncated bz2 file"):
        list(read_pages(str(cut), threads=2))
