"""``s3://`` for real, on loopback: moto's S3 server on 127.0.0.1, started and stopped here.

Inputs and outputs in a bucket give the same bytes as local ones; an unreachable endpoint, a missing bucket
for an input or for the output are one line naming the path, in seconds (Beam alone retried an unreachable
endpoint for 6.7 minutes).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, file_bytes, run_cli
from tests.services import free_port, start, stop

pytest.importorskip("boto3", reason="needs boto3 (the `aws` extra)")
MOTO = Path(sys.executable).with_name("moto_server")
if not MOTO.exists():
    pytest.skip("needs moto_server (the `test` extra)", allow_module_level=True)
pytestmark = pytest.mark.e2e  # a moto S3 server

BUCKET = "incoherent-test"
WSJ = ROOT / "samples" / "wsj" / "wsj.jsonl"
CREDENTIALS = ["--s3_access_key_id=test", "--s3_secret_access_key=test", "--s3_region_name=us-east-1"]


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory):
    import os

    port = free_port()
    server = start(
        [str(MOTO), "-H", "127.0.0.1", "-p", str(port)],
        port,
        dict(os.environ),
        tmp_path_factory.mktemp("moto"),
    )
    url = f"http://127.0.0.1:{port}"
    try:
        client = s3_client(url)
        client.create_bucket(Bucket=BUCKET)
        client.upload_file(str(WSJ), BUCKET, "in/wsj.jsonl")
        yield url
    finally:
        stop(server)


def s3_client(url: str):
    import boto3

    return boto3.client(
        "s3",
        endpoint_url=url,
        aws_access_key_id="test",
        aws_secret_access_key="test",
        region_name="us-east-1",
    )


def s3_flags(url: str) -> list[str]:
    return [f"--s3_endpoint_url={url}", *CREDENTIALS]


def test_s3_inputs_and_outputs_give_the_bytes_of_local_ones(endpoint, tmp_path):
    import hashlib
    import json

    s3 = [*s3_flags(endpoint)]
    docs, shuffled = f"s3://{BUCKET}/out/docs", f"s3://{BUCKET}/out/shuffle"
    # read in 10 byte ranges of 50 KB (seek + read through Beam's S3 filesystem), locally in one task
    remote_ranges = ["--range-mb", "0.05"]
    assert (
        run_cli("ingest", "text", f"s3://{BUCKET}/in/wsj.jsonl", "--out", docs, *remote_ranges, beam=s3) == 0
    )
    assert run_cli("shuffle", docs, "--out", shuffled, beam=s3) == 0
    assert run_cli("ingest", "text", WSJ, "--out", tmp_path / "docs") == 0
    assert run_cli("shuffle", tmp_path / "docs", "--out", tmp_path / "shuffle") == 0

    client = s3_client(endpoint)
    summary = json.loads(client.get_object(Bucket=BUCKET, Key="out/docs/run_summary.json")["Body"].read())
    assert summary["counters"]["ingest-text-read"]["json_ranges"] == 10
    remote = tmp_path / "remote"
    for item in client.list_objects_v2(Bucket=BUCKET, Prefix="out/")["Contents"]:
        target = remote / item["Key"][len("out/") :]
        target.parent.mkdir(parents=True, exist_ok=True)
        client.download_file(BUCKET, item["Key"], str(target))
    for name in ("docs", "shuffle"):
        local, there = file_bytes(tmp_path / name), file_bytes(remote / name)
        assert local and local == there, name
    summary = json.loads((remote / "docs" / "run_summary.json").read_text())
    assert summary["inputs"] == [
        {
            "name": "wsj.jsonl",
            "size": WSJ.stat().st_size,
            "sha256": hashlib.sha256(WSJ.read_bytes()).hexdigest(),
        }
    ]  # hashed by the worker that read it from the bucket
    left = [str(k.relative_to(remote)) for k in remote.rglob("*")]
    assert not [k for k in left if ".spill" in k or "_inputs" in k or ".write-check" in k], left


@pytest.mark.parametrize(
    "argv, named",
    [
        (["ingest", "text", f"s3://{BUCKET}/in/wsj.jsonl", "--out", "OUT"], f"s3://{BUCKET}/in/wsj.jsonl: cannot reach S3"),
        (["ingest", "text", "s3://no-such-bucket/in/wsj.jsonl", "--out", "OUT"], "s3://no-such-bucket/in/wsj.jsonl: no such bucket"),
        (["shuffle", "DOCS", "--out", "s3://no-such-bucket/out"], "s3://no-such-bucket/out: no such bucket"),
    ],
)  # fmt: skip
def test_s3_bad_paths_are_one_line_in_seconds(endpoint, tmp_path, capsys, argv, named):
    if "DOCS" in argv:
        assert run_cli("ingest", "text", WSJ, "--out", tmp_path / "docs") == 0
        capsys.readouterr()
    unreachable = "cannot reach" in named
    url = f"http://127.0.0.1:{free_port()}" if unreachable else endpoint  # nothing listens there
    argv = [str(tmp_path / "docs") if a == "DOCS" else str(tmp_path / "o") if a == "OUT" else a for a in argv]
    started = time.time()
    assert run_cli(*argv, beam=s3_flags(url)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {named}"), err
    assert time.time() - started < 60


def test_s3_out_is_replaced_only_when_that_command_wrote_it(endpoint, capsys):
    """docs/safety.md: a remote --out that holds someone else's files, or another command's output, is never
    deleted, even with --overwrite; an --out that contains an input is refused."""
    s3, client = s3_flags(endpoint), s3_client(endpoint)
    client.put_object(Bucket=BUCKET, Key="mine/thesis.tex", Body=b"years of work")
    client.put_object(
        Bucket=BUCKET, Key="index/.incoherent-run.json", Body=b'{"written_by": "incoherent index"}'
    )
    for out, message in (
        (f"s3://{BUCKET}/mine", "not the output of `incoherent ingest text`"),
        (f"s3://{BUCKET}/index", "not the output of `incoherent ingest text`"),
        (f"s3://{BUCKET}/in/", "contains the input"),
    ):
        assert (
            run_cli("ingest", "text", f"s3://{BUCKET}/in/wsj.jsonl", "--out", out, "--overwrite", beam=s3)
            == 2
        )
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0], err
    assert client.get_object(Bucket=BUCKET, Key="mine/thesis.tex")["Body"].read() == b"years of work"
    assert client.get_object(Bucket=BUCKET, Key="in/wsj.jsonl")["ContentLength"] == WSJ.stat().st_size
