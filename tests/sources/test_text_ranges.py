"""One JSONL file read in byte ranges (``sources.textfiles.range_lines``, ``ingest text --range-mb``): every line
read once, long lines never held, the same output bytes whatever the ranges and workers."""

import io
import json
import random

import pytest

from incoherent.sources.textfiles import _lines, json_file_records, plan_ranges, range_lines
from tests.conftest import MULTI_PROCESS, SAMPLES, file_bytes, read_rows, run_cli


def ranged(data: bytes, range_bytes: int, max_line: int, chunk: int) -> list:
    tasks = plan_ranges("f.jsonl", lambda path: len(data), range_bytes)
    return [
        item
        for _, start, end in tasks
        for item in range_lines("f", io.BytesIO(data), start, end, max_line, chunk)
    ]


def test_ranges_read_every_line_once():
    rng = random.Random(7)
    for trial in range(300):
        lines = [
            b"x" * rng.choice([0, 1, 2, 5, 9, 30]) + rng.choice([b"", b"\r"])
            for _ in range(rng.randint(0, 12))
        ]
        data = b"\n".join(lines) + rng.choice([b"", b"\n"])
        max_line, chunk = rng.randint(1, 12), rng.randint(1, 7)
        whole = list(_lines("f", io.BytesIO(data), max_line, chunk))
        for range_bytes in (1, 2, 3, 7, 50):
            assert ranged(data, range_bytes, max_line, chunk) == whole, (trial, data, range_bytes)


class CountingStream(io.BytesIO):
    def __init__(self, data: bytes):
        super().__init__(data)
        self.bytes_read = 0

    def read(self, size=-1):
        out = super().read(size)
        self.bytes_read += len(out)
        return out


def test_a_range_inside_a_long_line_reads_only_its_bytes():
    data = b'{"id": 1}\n' + b"y" * (8 << 20) + b"\n{}\n"
    inside = CountingStream(data)
    assert list(range_lines("f", inside, 1 << 20, 2 << 20, 1 << 10, chunk=1 << 16)) == []
    assert inside.bytes_read <= 1 << 20
    first = CountingStream(data)  # owns the long line: skips it to its end, holds at most the limit
    assert list(range_lines("f", first, 0, 1 << 20, 1 << 10, chunk=1 << 16)) == [
        (0, b'{"id": 1}', 9),
        (10, None, 8 << 20),
    ]
    assert first.bytes_read < (8 << 20) + (1 << 17)  # the next line, which starts past the range, is not read


def test_rejected_lines_are_located_by_byte_offset(tmp_path):
    path = tmp_path / "news.jsonl"
    path.write_bytes(b'{"id": 1, "text": "Fine. Yes."}\n{"id": 2, "text": broken\n')
    (good, bad) = json_file_records(str(path), "id", "text", "news", start=0, end=None)
    assert good["id"] == "news:1" and good["dump"] == "news.jsonl"
    assert bad.reason == "bad_json" and bad.detail.startswith(f"{path}: byte 32: ")


@pytest.mark.e2e
def test_cli_output_is_the_same_whatever_the_ranges_and_workers(tmp_path):
    wsj = (SAMPLES / "wsj" / "wsj.jsonl").read_bytes()
    long_text = " ".join(f"Sentence {i} of a long record." for i in range(400))  # ~12 KB: crosses many ranges
    mixed = [
        json.dumps({"id": "long", "text": long_text}),
        '{"id": "big", "text": "' + "z" * 40_000 + '"}',  # over --max-record-mb 0.03: record_too_large
        '{"id": "bad", "text": broken',
        json.dumps({"id": "wsj_0001", "text": "A duplicate id. In another file."}),
        "",
        json.dumps({"id": "last", "text": "The last line. No newline after it."}),
    ]
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "wsj.jsonl").write_bytes(wsj)
    (inputs / "wsj2.jsonl").write_text("\r\n".join(mixed))
    common = ("ingest", "text", inputs, "--source", "wsj", "--max-record-mb", "0.03")
    assert run_cli(*common, "--out", tmp_path / "one") == 0
    assert run_cli(*common, "--out", tmp_path / "kib", "--range-mb", str(1 / 1024)) == 0
    assert run_cli(*common, "--out", tmp_path / "multi", "--range-mb", "0.002", beam=MULTI_PROCESS) == 0
    one = file_bytes(tmp_path / "one")
    assert one == file_bytes(tmp_path / "kib") == file_bytes(tmp_path / "multi")
    assert len(read_rows(tmp_path / "one", "documents-wsj")) == 199 + 2
    rejected = sorted(r["reason"] for r in read_rows(tmp_path / "one", "rejected/ingest-text"))
    assert rejected == ["bad_json", "duplicate_id", "record_too_large"]
    tasks = {run: read_counters(tmp_path / run) for run in ("one", "kib", "multi")}
    assert tasks["one"] == {"read_tasks": 2}  # files under 64 MB: one task each
    sizes = [(inputs / name).stat().st_size for name in ("wsj.jsonl", "wsj2.jsonl")]
    kib_ranges = sum(-(-size // 1024) for size in sizes)  # 503 + 53
    assert tasks["kib"] == {"read_tasks": kib_ranges, "json_ranges": kib_ranges}
    assert tasks["multi"]["json_ranges"] == sum(-(-size // 2097) for size in sizes)  # 0.002 MB


def read_counters(out) -> dict:
    return json.loads((out / "run_summary.json").read_text())["counters"]["ingest-text-read"]
