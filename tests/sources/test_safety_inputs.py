"""Hostile and odd inputs of the ingest commands: bounded memory and time, one line and exit 2 for an unusable
input, a counted and dead-lettered record for a bad record inside usable input (issue 24: D6-D9, D10, D14)."""

from __future__ import annotations

import bz2
import io
import json
import os
import subprocess
import sys
import tarfile
import textwrap
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from incoherent.schemas.records import InputError
from incoherent.sources import cnn, mediawiki, mediawiki_xml
from incoherent.sources.bz2decode import _bz2_chunks
from incoherent.sources.limits import DECOMPRESS_CHUNK, Limits
from incoherent.sources.textfiles import json_lines, plan_ranges, range_lines
from incoherent.sources.wikipedia import page_to_document
from tests.conftest import ROOT, read_rows, run_cli

STORY = (
    b"WASHINGTON (CNN) -- The first sentence is here. The second one follows.\n\n@highlight\n\nA highlight"
)
_SPACES_40MB = bz2.compress(b" " * (40 << 20), 9)  # 49 bytes


def bz2_bomb(head: bytes, spaces_mb: int, tail: bytes = b"") -> bytes:
    """``head``, ``spaces_mb`` MB of spaces and ``tail`` as a multistream bz2 file of a few KB."""
    return bz2.compress(head) + _SPACES_40MB * (spaces_mb // 40) + (bz2.compress(tail) if tail else b"")


def one_line(capsys, *needles: str) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: "), err
    for needle in needles:
        assert needle in err[0], err[0]
    return err[0]


def summary_counters(out) -> dict:
    return json.loads((out / "run_summary.json").read_text())["counters"]


def peak_rss_mb(code: str) -> tuple[float, str]:
    """Run ``code`` in a fresh interpreter; its peak resident memory in MB and its last stdout line.

    The peak is the process's own ``VmHWM``: ``getrusage``'s ``ru_maxrss`` is inherited across fork and exec,
    so it would report this test process's peak (1.3 GB late in the suite) instead of the child's.
    """
    script = textwrap.dedent(code) + (
        "\nprint(next(int(line.split()[1]) for line in open('/proc/self/status') if line.startswith('VmHWM:')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True
    )
    lines = done.stdout.strip().splitlines()
    return int(lines[-1]) / 1024, lines[-2] if len(lines) > 1 else ""


# --------------------------------------------------------------------------------------------- D6: bz2, dumps


def test_bz2_decompression_hands_out_bounded_chunks():
    chunks = list(_bz2_chunks(io.BytesIO(_SPACES_40MB * 2), "x.bz2", lambda name, n: None))
    assert sum(map(len, chunks)) == 80 << 20
    assert max(map(len, chunks)) <= DECOMPRESS_CHUNK


def test_zero_bomb_dump_is_one_line_in_bounded_memory(tmp_path):
    """320 MB of zeros in one bz2 stream of a few hundred bytes: before, the one-thread reader held all of it
    at once (3 GiB of zeros: 6.2 GB); now 1 MiB at a time."""
    dump = tmp_path / "zeros.xml.bz2"
    compressor = bz2.BZ2Compressor(9)  # one stream: before, one decompress call returned all of it
    zeros = b"\0" * (40 << 20)
    dump.write_bytes(b"".join(compressor.compress(zeros) for _ in range(8)) + compressor.flush())
    assert dump.stat().st_size < 2_000
    peak, message = peak_rss_mb(
        f"""
        from incoherent.schemas.records import InputError
        from incoherent.sources import mediawiki
        for read in (mediawiki.read_siteinfo, lambda p: list(mediawiki.read_pages(p, threads=1))):
            try:
                read({str(dump)!r})
            except InputError as exc:
                print(exc)
        """
    )
    assert "not XML" in message
    assert peak < 250, f"peak RSS {peak:.0f} MB"  # unbounded, it was 6.35 GB


def test_header_bomb_is_refused_in_bounded_memory(tmp_path):
    """A well-formed start, then 1.2 GB of white space before any <page>: the header limit stops it."""
    dump = tmp_path / "spaces.xml.bz2"
    dump.write_bytes(bz2_bomb(b"<mediawiki>\n<siteinfo>\n<sitename>W</sitename>", 1200))
    peak, message = peak_rss_mb(
        f"""
        from incoherent.schemas.records import InputError
        from incoherent.sources import mediawiki
        try:
            mediawiki.read_siteinfo({str(dump)!r})
        except InputError as exc:
            print(exc)
        """
    )
    assert message.startswith(f"{dump}: no <page> and no end of <siteinfo> in the first 16 MiB")
    assert peak < 400, f"peak RSS {peak:.0f} MB"


def test_header_bomb_cli_is_one_line_exit_2(tmp_path, capsys):
    dump = tmp_path / "bomb.xml.bz2"
    dump.write_bytes(bz2_bomb(b"<mediawiki><siteinfo>", 80))
    assert run_cli("ingest", "wikipedia", dump, "--out", tmp_path / "out") == 2
    one_line(capsys, str(dump), "decompression bomb")


PAGE = (
    "<page><title>{title}</title><ns>0</ns><id>{id}</id><revision><id>1</id>"
    "<timestamp>2020-01-01T00:00:00Z</timestamp><text>{text}</text></revision></page>\n"
)


def _dump(pages: list[tuple[str, int, str]]) -> bytes:
    body = "".join(PAGE.format(title=t, id=i, text=x) for t, i, x in pages)
    return f"<mediawiki>\n{body}</mediawiki>\n".encode()


@pytest.mark.parametrize("scan", [True, False], ids=["fast-path", "expat"])
def test_long_lead_and_large_page_are_dead_lettered(tmp_path, scan, monkeypatch):
    monkeypatch.setattr(mediawiki_xml, "SCAN_PAGES", scan)
    lead = "A sentence that goes on. " * 200  # 5,000 characters, no heading
    pages = [
        ("Short", 1, "Alpha is a letter. It comes first.\n== History ==\nMore."),
        ("Long lead", 2, lead),
        ("Long page", 3, "Beta is a letter.\n== Body ==\n" + "x" * 20_000),
    ]
    path = tmp_path / "d.xml"
    path.write_bytes(_dump(pages))
    limits = Limits(max_text_chars=1_000, max_record_bytes=10_000)
    records = list(mediawiki.read_pages(str(path), limits=limits))
    assert [len(r["lead"]) <= 200 for r in records] == [True, True, True]
    outcomes = [next(iter(page_to_document(r))) for r in records]
    assert outcomes[0]["id"] == "wikipedia:1"
    assert [o.reason for o in outcomes[1:]] == ["text_too_long", "record_too_large"]


def test_long_page_in_gz_streams_in_bounded_memory(tmp_path):
    """A page whose text is 150 MB (a .gz of ~1 MB): before, a 300 MB one took 5.47 GB (>300 s here)."""
    import gzip

    path = tmp_path / "big.xml.gz"
    with gzip.open(path, "wb", compresslevel=1) as f:
        f.write(b"<mediawiki>\n<page><title>Big</title><ns>0</ns><id>5</id><revision><id>1</id><text>")
        block = b"Words words words. " * 5000 + b"\n"
        for _ in range((150 << 20) // len(block)):
            f.write(block)
        f.write(b"</text></revision></page>\n</mediawiki>\n")
    started = time.monotonic()
    peak, message = peak_rss_mb(
        f"""
        from incoherent.sources import mediawiki
        from incoherent.sources.wikipedia import page_to_document
        (page,) = mediawiki.read_pages({str(path)!r})
        print(next(iter(page_to_document(page))).reason)
        """
    )
    assert message == "text_too_long"  # no heading: the lead passed --max-text-chars first
    assert peak < 600, f"peak RSS {peak:.0f} MB"  # unbounded, it was 5.47 GB
    assert time.monotonic() - started < 60


# --------------------------------------------------------------------------------------------- D6, D14: CNN


def _add(archive: tarfile.TarFile, name: str, data: bytes | None = None, **fields) -> None:
    info = tarfile.TarInfo(name)
    for key, value in fields.items():
        setattr(info, key, value)
    if data is not None:
        info.size = len(data)
    archive.addfile(info, io.BytesIO(data) if data is not None else None)


def test_archive_members_that_are_not_stories_are_counted_and_hard_links_read(tmp_path):
    path = tmp_path / "cnn_stories.tgz"
    big = b"WASHINGTON (CNN) -- " + b"word " * 3_000 + b".\n"
    with tarfile.open(path, "w:gz") as archive:
        _add(archive, "cnn/stories/" + "a" * 40 + ".story", STORY)
        _add(
            archive,
            "cnn/stories/" + "b" * 40 + ".story",
            type=tarfile.LNKTYPE,
            linkname="cnn/stories/" + "a" * 40 + ".story",
        )
        _add(archive, "cnn/stories/" + "c" * 40 + ".story", type=tarfile.SYMTYPE, linkname="/etc/passwd")
        _add(archive, "cnn/stories/" + "d" * 40 + ".story", type=tarfile.FIFOTYPE)
        _add(archive, "cnn/stories/" + "e" * 40 + ".story", type=tarfile.CHRTYPE, devmajor=1, devminor=5)
        _add(archive, "cnn/stories/" + "f" * 40 + ".story", big)
    out = tmp_path / "out"
    assert run_cli("ingest", "cnn", path, "--out", out, "--max-record-mb", "0.01") == 0
    ids = sorted(d["id"] for d in read_rows(out, "documents-cnn"))
    assert ids == ["cnn:" + "a" * 40, "cnn:" + "b" * 40]  # the hard link is read as the story it points to
    counters = summary_counters(out)["ingest-cnn"]
    for name in (
        "archive_symlinks",
        "archive_fifos",
        "archive_devices",
        "archive_hardlinks",
        "record_too_large",
    ):
        assert counters[name] == 1, (name, counters)
    reasons = sorted(r["reason"] for r in read_rows(out, "rejected/ingest-cnn"))
    assert reasons == ["archive_devices", "archive_fifos", "archive_symlinks", "record_too_large"]


def test_long_story_is_dead_lettered_without_holding_it(tmp_path):
    """A 256 MB story (a ~250 KB .tgz): before, 909 MB; now its size in the tar header rejects it unread."""
    path = tmp_path / "cnn_stories.tgz"
    with tarfile.open(path, "w:gz", compresslevel=1) as archive:
        info = tarfile.TarInfo("cnn/stories/" + "a" * 40 + ".story")
        info.size = 256 << 20

        class Zeros(io.RawIOBase):
            left = info.size

            def readable(self):
                return True

            def readinto(self, buffer):
                n = min(len(buffer), self.left)
                buffer[:n] = b"a" * n
                self.left -= n
                return n

        archive.addfile(info, io.BufferedReader(Zeros()))
    items = list(cnn.read_input(str(path)))
    assert [i.reason for i in items] == ["record_too_large"]
    long_text = list(cnn.parse_story("x.story", STORY * 10, "x.story", Limits(max_text_chars=100)))
    assert [r.reason for r in long_text] == ["text_too_long"]


# --------------------------------------------------------------------------------------------- D7, D9: files


@pytest.fixture
def story_dir(tmp_path):
    folder = tmp_path / "stories"
    folder.mkdir()
    (folder / ("a" * 40 + ".story")).write_bytes(STORY)
    return folder


def test_fifo_story_is_refused_never_read(story_dir, tmp_path, capsys):
    fifo = story_dir / ("b" * 40 + ".story")
    os.mkfifo(fifo)
    assert run_cli("ingest", "cnn", story_dir, "--out", tmp_path / "out") == 2
    one_line(capsys, str(fifo), "a FIFO, not a regular file")
    assert run_cli("ingest", "cnn", fifo, "--out", tmp_path / "out") == 2
    one_line(capsys, str(fifo), "a FIFO")


def test_link_to_dev_zero_is_refused(story_dir, tmp_path, capsys):
    link = story_dir / ("b" * 40 + ".story")
    link.symlink_to("/dev/zero")
    assert run_cli("ingest", "cnn", story_dir, "--out", tmp_path / "out") == 2
    one_line(capsys, str(link), "a character device")


def test_dangling_link_in_input_folder_is_one_line(story_dir, tmp_path, capsys):
    link = story_dir / ("b" * 40 + ".story")
    link.symlink_to(tmp_path / "gone")
    assert run_cli("ingest", "cnn", story_dir, "--out", tmp_path / "out") == 2
    one_line(capsys, str(link), "dangling symbolic link")


def test_system_folder_as_input_is_one_line(tmp_path, capsys):
    assert run_cli("ingest", "cnn", "/etc", "--out", tmp_path / "out") == 2
    one_line(capsys, "/etc: directory holds no .story files")


def test_special_files_beside_inputs_are_not_hashed(story_dir, tmp_path):
    os.mkfifo(story_dir / "notes.fifo")  # not an input, but inside an input folder the card hashes
    (story_dir / "gone.txt").symlink_to(tmp_path / "nothing")
    out = tmp_path / "out"
    assert run_cli("ingest", "cnn", story_dir, "--out", out) == 0
    (described,) = json.loads((out / "run_summary.json").read_text())["inputs"]
    assert described["files"] == 1


# --------------------------------------------------------------------------------------------- D7, D8: JSONL


def test_long_jsonl_line_is_linear_and_capped():
    line = b'{"id": 1, "text": "' + b"x" * (60 << 20) + b'"}\n{"id": 2}\n'
    started = time.monotonic()
    items = list(json_lines("f.jsonl", io.BytesIO(line), 1 << 20))
    assert time.monotonic() - started < 5
    assert [(n, data) for n, data, _ in items] == [(1, None), (2, b'{"id": 2}')]


def test_long_jsonl_line_over_many_ranges_is_read_once_and_never_held():
    data = b'{"id": 1}\n{"id": 2, "text": "' + b"x" * (60 << 20) + b'"}\n{"id": 3}\n'
    started = time.monotonic()
    tasks = plan_ranges("f.jsonl", lambda path: len(data), 8 << 20)
    items = [item for _, s, e in tasks for item in range_lines("f", io.BytesIO(data), s, e, 1 << 20)]
    assert time.monotonic() - started < 5 and len(tasks) == 8
    assert [(offset, line) for offset, line, _ in items] == [
        (0, b'{"id": 1}'),
        (10, None),
        (len(data) - 10, b'{"id": 3}'),
    ]


def test_bad_jsonl_lines_are_counted_and_dead_lettered(tmp_path):
    good = [json.dumps({"id": i, "text": f"Sentence {i} is fine. And one more."}) for i in range(3)]
    bad = {
        "lone_surrogate": '{"id": 10, "text": "Bad \\ud800 text."}',
        "bad_json": '{"id": ' + "9" * 5000 + ', "text": "Long id."}',
        "json_too_deep": '{"id": 11, "text": ' + "[" * 100_000 + "]" * 100_000 + "}",
        "not_utf8": '{"id": 12, "text": "raw \xff byte."}',
        "record_too_large": '{"id": 13, "text": "' + "y" * 300_000 + '"}',
        "text_too_long": '{"id": 14, "text": "' + "z. " * 5_000 + '"}',
    }
    lines = [line.encode("utf-8", "surrogateescape") for line in good]
    for reason, line in bad.items():
        lines.append(line.encode("latin-1") if reason == "not_utf8" else line.encode())
    (tmp_path / "news.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    out = tmp_path / "out"
    assert (
        run_cli(
            "ingest",
            "text",
            tmp_path / "news.jsonl",
            "--out",
            out,
            "--max-record-mb",
            "0.25",
            "--max-text-chars",
            "10000",
        )
        == 0
    )
    assert [d["id"] for d in read_rows(out, "documents-news")] == ["news:0", "news:1", "news:2"]
    counters = summary_counters(out)["ingest-text"]
    for reason in bad:
        assert counters.get(reason) == 1, (reason, counters)
    assert sorted(r["reason"] for r in read_rows(out, "rejected/ingest-text")) == sorted(bad)


def test_utf16_jsonl_is_one_line(tmp_path, capsys):
    path = tmp_path / "news.jsonl"
    path.write_bytes('{"id": 1, "text": "One. Two."}\n'.encode("utf-16"))
    assert run_cli("ingest", "text", path, "--out", tmp_path / "out") == 2
    one_line(capsys, str(path), "UTF-16 or UTF-32")


# --------------------------------------------------------------------------------------------- D10: Parquet


def test_parquet_with_corrupt_data_page_is_one_line(tmp_path, capsys):
    path = tmp_path / "news.parquet"
    texts = [f"Document {i} says something. " + os.urandom(200).hex() for i in range(200)]
    pq.write_table(
        pa.table({"id": list(range(200)), "text": texts}), path, compression="snappy", use_dictionary=False
    )
    data = bytearray(path.read_bytes())
    meta = pq.ParquetFile(path).metadata.row_group(0).column(1)
    start = meta.data_page_offset + meta.total_compressed_size // 2  # inside the compressed values
    data[start : start + 64] = b"\xff" * 64
    path.write_bytes(bytes(data))
    assert pq.read_schema(path).names == ["id", "text"]  # the footer is intact
    assert run_cli("ingest", "text", path, "--out", tmp_path / "out") == 2
    one_line(capsys, str(path), "row group 0 cannot be read")


def test_limits_flags_must_be_positive(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        run_cli("ingest", "text", tmp_path / "x.jsonl", "--out", tmp_path / "out", "--max-record-mb", "0")
    assert exit_info.value.code == 2
    assert "--max-record-mb" in capsys.readouterr().err


def test_input_error_names_the_file_for_unreadable_gzip(tmp_path):
    path = tmp_path / "news.jsonl.gz"
    path.write_bytes(b"\x1f\x8b\x08\x00garbage")
    from incoherent.sources.textfiles import json_file_records

    with pytest.raises(InputError, match="news.jsonl.gz: unreadable"):
        list(json_file_records(str(path), "id", "text", "news"))


def test_fifo_and_device_dumps_are_refused(tmp_path, capsys):
    fifo = tmp_path / "dump.xml.bz2"
    os.mkfifo(fifo)
    assert run_cli("ingest", "wikipedia", fifo, "--out", tmp_path / "out") == 2
    one_line(capsys, str(fifo), "a FIFO, not a regular file")
    link = tmp_path / "zero.xml"
    link.symlink_to("/dev/zero")
    assert run_cli("ingest", "wikipedia", link, "--out", tmp_path / "out") == 2
    one_line(capsys, str(link), "a character device")


def test_limit_options_in_a_build_config_are_checked_before_any_stage(tmp_path, capsys):
    (tmp_path / "news.jsonl").write_text(json.dumps({"id": 1, "text": "One. Two."}) + "\n")
    config = tmp_path / "build.yaml"
    config.write_text(
        f"base: {tmp_path}\nsources:\n  news: {{kind: text, inputs: [news.jsonl], "
        "options: {max_text_chars: 100, max_record_mb: 0}}\n"
    )
    out = tmp_path / "out"
    assert run_cli("build", config, "--out", out) == 2
    one_line(capsys, "sources.news.options.max_record_mb: must be a positive number")
    assert not out.exists()
