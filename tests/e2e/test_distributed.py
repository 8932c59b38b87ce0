"""Distributed runs for real: ``incoherent build`` with every input and output under ``gs://`` (a Google Cloud
Storage emulator on 127.0.0.1), on Beam's portable runner with a job service and an external SDK worker pool
that this test starts and stops, in another working directory: every job runs in SDK worker processes that
share nothing with this process but the emulator. The dataset must be byte-identical to a local in-process
build. Relative paths are tested with two SDK workers of the pool at once.
"""

from __future__ import annotations

import os
import time

import pytest
import yaml

from tests.conftest import ROOT, file_bytes, run_cli

pytest.importorskip("google.cloud.storage", reason="needs apache-beam[gcp] (the `dataflow` extra)")
from tests.services import (  # noqa: E402
    BUCKET,
    EMULATOR,
    WorkerCount,
    download_tree,
    services_fixture,  # noqa: F401 - the `services` fixture
    upload,
)

if not EMULATOR.exists():
    pytest.skip("needs gcp-storage-emulator (the `test` extra)", allow_module_level=True)

# One source with history: two remote bz2 dumps, and every stage once (6 jobs; each job starts new SDK workers).
INPUTS = {"wikipedia": ["samples/wikipedia/2022-08-24_minidumps-en_3def73f3.xml.bz2"]}
HISTORY = ["samples/wikipedia/history/2019-08-16_minidumps-en_89657c7a.xml.bz2"]


def config(prefix: str) -> dict:
    return {
        "out": "unused",
        "sources": {
            "wikipedia": {
                "kind": "wikipedia",
                "inputs": [prefix + p for p in INPUTS["wikipedia"]],
                "history": [prefix + p for p in HISTORY],
            },
        },
        "card": {"name": "distributed test"},
    }


@pytest.mark.e2e
def test_gcs_build_through_the_job_service_and_a_worker_pool_is_byte_identical_to_local(services, tmp_path):
    local_config = tmp_path / "local.yaml"
    local_config.write_text(yaml.safe_dump(dict(config(str(ROOT) + "/")), sort_keys=False))
    assert run_cli("build", local_config, "--out", tmp_path / "local") == 0

    prefix = f"gs://{BUCKET}/"
    for paths in (*INPUTS.values(), HISTORY):
        for path in paths:
            source = ROOT / path
            files = sorted(p for p in source.rglob("*") if p.is_file()) if source.is_dir() else [source]
            for f in files:
                upload(f, prefix + str(f.relative_to(ROOT)))
    remote_config = tmp_path / "remote.yaml"
    remote_config.write_text(yaml.safe_dump(config(prefix), sort_keys=False))
    portable = [
        "--runner=PortableRunner",
        f"--job_endpoint=localhost:{services['job']}",
        "--environment_type=EXTERNAL",
        f"--environment_config=localhost:{services['pool']}",
        "--no_auth",
    ]
    with WorkerCount(services["pool_process"]) as workers:
        assert run_cli("build", remote_config, "--out", f"{prefix}out", beam=portable) == 0
    # Beam's local job service runs a job on FnApiRunner.run_via_runner_api, which never reads
    # --direct_num_workers: one SDK worker per job, a new process for each of the 6 jobs.
    assert len(workers.seen) >= 6

    download_tree(f"{prefix}out", tmp_path / "remote")
    local, remote = file_bytes(tmp_path / "local" / "dataset"), file_bytes(tmp_path / "remote" / "dataset")
    assert set(local) == set(remote) and len(local) >= 5
    assert [name for name in local if local[name] != remote[name]] == []
    for work in ("work/documents/wikipedia", "work/history/wikipedia", "work/retrieval/wikipedia/neighbors"):
        assert file_bytes(tmp_path / "local" / work) == file_bytes(tmp_path / "remote" / work)
    for name in ("tfidf.npz", "idf.npz", "ids.json", "docs.npz"):
        index = "work/retrieval/wikipedia/index"
        assert (tmp_path / "local" / index / name).read_bytes() == (
            tmp_path / "remote" / index / name
        ).read_bytes()
    assert not list((tmp_path / "remote").rglob("_parts"))  # the index parts were cleaned up
    # The card: statistics counted by a pipeline on the workers, inputs hashed by the ingest workers; the same
    # numbers, hashes and figures as the local card, and no bucket path in it.
    local_card = (tmp_path / "local" / "dataset" / "README.md").read_text()
    remote_card = (tmp_path / "remote" / "dataset" / "README.md").read_text()
    assert "gs://" not in remote_card and BUCKET not in remote_card

    def between(text: str, start: str, end: str) -> str:
        return text[text.index(start) : text.index(end)]

    assert between(remote_card, "## Statistics", "## Columns") == between(
        local_card, "## Statistics", "## Columns"
    )

    def inputs(text: str) -> list[str]:
        return [
            line for line in text.splitlines() if line.startswith(("| input |", "| history (older dump) |"))
        ]

    assert inputs(remote_card) == inputs(local_card) and len(inputs(local_card)) == 2
    figures = sorted(p.name for p in (tmp_path / "local" / "dataset" / "figures").iterdir())
    assert figures == sorted(p.name for p in (tmp_path / "remote" / "dataset" / "figures").iterdir())
    for name in figures:
        assert (tmp_path / "local" / "dataset" / "figures" / name).read_bytes() == (
            tmp_path / "remote" / "dataset" / "figures" / name
        ).read_bytes()
    assert not list((tmp_path / "remote").rglob("_inputs")) and not list((tmp_path / "remote").rglob("_card"))


@pytest.mark.e2e
def test_relative_paths_work_with_workers_in_another_directory(services, tmp_path, monkeypatch):
    """The worker pool runs in another working directory: relative paths must reach it as absolute ones.

    Two SDK workers at once: FnApiRunner in this process with an EXTERNAL environment and
    ``--direct_num_workers=2`` asks the pool for two workers (the local job service asks for one).
    """
    monkeypatch.chdir(tmp_path)
    os.symlink(ROOT / "samples" / "cnn" / "frank", tmp_path / "stories")
    external = [  # Beam's FnApiRunner in this process, its two SDK workers in the external pool
        "--runner=DirectRunner",
        "--environment_type=EXTERNAL",
        f"--environment_config=localhost:{services['pool']}",
        "--direct_num_workers=2",
    ]
    with WorkerCount(services["pool_process"]) as workers:
        assert run_cli("ingest", "cnn", "stories", "--out", "docs", beam=external) == 0
        assert run_cli("shuffle", "docs", "--out", "shuffled", beam=external) == 0
    assert workers.most >= 2  # two SDK worker processes at once
    local = tmp_path / "local"
    assert run_cli("shuffle", "docs", "--out", local) == 0
    assert file_bytes(tmp_path / "shuffled") == file_bytes(local) != {}


@pytest.mark.e2e  # starts the services (10-30 s on 2 cores) when run alone
def test_a_missing_remote_path_is_one_line_naming_it(services, tmp_path, capsys):
    started = time.time()
    missing = f"gs://{BUCKET}/no/such/docs"
    assert run_cli("shuffle", missing, "--out", tmp_path / "out", beam=["--no_auth"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {missing}: no such directory"]
    assert run_cli("ingest", "cnn", f"gs://{BUCKET}/no/story.story", "--out", tmp_path / "o2") == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"error: gs://{BUCKET}/no/story.story: no such file or directory"
    ]
    assert time.time() - started < 60  # no retry loop
