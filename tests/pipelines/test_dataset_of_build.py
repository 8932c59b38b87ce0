"""A build folder where a dataset folder is wanted is read as its ``dataset/``: ``publish out/enwiki`` no longer
says "run `incoherent card out/enwiki` first", nor ``export insted out/enwiki`` "write them with ...".

The shared Quickstart build is copied first (``card`` writes into its dataset)."""

from __future__ import annotations

import shutil

import pytest

from incoherent.pipelines.runtime.safety import dataset_of_build
from tests.conftest import run_cli
from tests.sample_build import quickstart_build


def test_a_build_folder_stands_for_its_dataset_and_nothing_else_does(tmp_path):
    (tmp_path / "build" / "dataset").mkdir(parents=True)
    assert dataset_of_build(str(tmp_path / "build")) == str(tmp_path / "build")  # no marker: not ours
    (tmp_path / "build" / ".incoherent-build.json").write_text("{}")
    assert dataset_of_build(str(tmp_path / "build")) == str(tmp_path / "build" / "dataset")
    assert dataset_of_build(str(tmp_path / "build" / "dataset")) == str(tmp_path / "build" / "dataset")
    (tmp_path / "plain").mkdir()
    assert dataset_of_build(str(tmp_path / "plain")) == str(tmp_path / "plain")
    assert dataset_of_build("gs://bucket/build") == "gs://bucket/build"


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    out, result = quickstart_build(tmp_path_factory)
    assert result.returncode == 0, result.stderr[-3000:]
    copy = tmp_path_factory.mktemp("copy") / "sample"
    shutil.copytree(out, copy, symlinks=True)
    return copy


@pytest.mark.e2e
def test_every_dataset_command_takes_the_build_folder(build, tmp_path, capsys):
    dataset = build / "dataset"
    assert run_cli("export", "insted", build, "--out", tmp_path / "a.jsonl", beam=[]) == 0
    assert run_cli("export", "insted", dataset, "--out", tmp_path / "b.jsonl", beam=[]) == 0
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes() != b""
    capsys.readouterr()
    assert run_cli("publish", build, "--repo-id", "my-org/x", "--dry-run", beam=[]) == 0
    by_build = capsys.readouterr().out
    assert run_cli("publish", dataset, "--repo-id", "my-org/x", "--dry-run", beam=[]) == 0
    assert capsys.readouterr().out == by_build != ""
    assert run_cli("card", dataset, beam=[]) == 0
    card = (dataset / "README.md").read_bytes()
    assert run_cli("card", build, beam=[]) == 0
    assert (dataset / "README.md").read_bytes() == card  # rewritten in place, the same card
    assert not (build / "README.md").exists()
    assert run_cli("probes", build, "--out", tmp_path / "probes") == 0


@pytest.mark.e2e
def test_build_quiet_prints_no_stage_lines(tmp_path_factory):
    """The Quickstart build runs with --quiet: nothing but the result, no "[build] stage 2 of 9, ..." lines."""
    _, result = quickstart_build(tmp_path_factory)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "[build] stage" not in result.stdout and "[build] card:" not in result.stdout
    assert result.stdout.strip()  # the result itself is printed


def test_note_is_silent_under_quiet(capsys):
    from incoherent.pipelines.runtime import progress

    try:
        progress.configure(quiet=True)
        progress.note("[build] stage 1 of 2, ingest")
        progress.write("[build] removed work/x: not produced by this config")
        assert capsys.readouterr().out == "[build] removed work/x: not produced by this config\n"
        progress.configure(quiet=False)
        progress.note("[build] stage 1 of 2, ingest")
        assert capsys.readouterr().out == "[build] stage 1 of 2, ingest\n"
    finally:
        progress.configure(quiet=False)
