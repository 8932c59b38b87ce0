"""Scale-out on a cluster: remote multistream dumps split into ranges on the workers (GCS emulator, external
SDK worker pool), the index assembled off the driver, remote builds resumed."""

from __future__ import annotations

import json
import time

import pytest

from incoherent.pipelines.ingest.wikipedia_plan import plan_reads
from incoherent.schemas.records import InputError
from tests.conftest import MULTI_PROCESS, ROOT, file_bytes, run_cli
from tests.sources.test_mediawiki import GENSIM, build_multistream
from tests.worker_reads import read_log

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

# every test here runs pipelines on the services (a GCS emulator, Beam's job service, a worker pool): 1.5-5 min
# each on 2 cores, so the whole module is left out of the fast set (the default run, pytest -m "not e2e")
pytestmark = pytest.mark.e2e

NAME = "mini-pages-articles-multistream.xml.bz2"
INDEX = "mini-pages-articles-multistream-index.txt.bz2"


def external(services) -> list[str]:
    """FnApiRunner in this process, two SDK workers in the external pool."""
    return [
        "--runner=DirectRunner",
        "--environment_type=EXTERNAL",
        f"--environment_config=localhost:{services['pool']}",
        "--direct_num_workers=2",
    ]


def summary(out) -> dict:
    return json.loads((out / "run_summary.json").read_text())


@pytest.fixture(scope="module")
def multistream(tmp_path_factory):
    folder = tmp_path_factory.mktemp("dump")
    return build_multistream(GENSIM, folder / NAME, 120, 6)  # 20 page streams


def test_remote_multistream_dump_is_split_into_the_same_ranges_with_the_same_documents(
    services, multistream, tmp_path
):
    local = tmp_path / "local"
    assert run_cli("ingest", "wikipedia", multistream, "--out", local, beam=MULTI_PROCESS) == 0
    prefix = f"gs://{BUCKET}/split/"
    upload(multistream, prefix + NAME)
    upload(multistream.with_name(INDEX), prefix + INDEX)
    with WorkerCount(services["pool_process"]) as workers:
        assert (
            run_cli("ingest", "wikipedia", prefix + NAME, "--out", prefix + "out", beam=external(services))
            == 0
        )
    download_tree(prefix + "out", tmp_path / "remote")
    read = summary(local)["counters"]["ingest-wikipedia-read"]
    remote_read = summary(tmp_path / "remote")["counters"]["ingest-wikipedia-read"]
    assert read["read_tasks"] == read["multistream_ranges"] >= 8  # ranges of whole streams
    assert remote_read == read  # as many read tasks, the same pages and bytes
    assert workers.most >= 2
    # Both SDK workers read ranges, and together every planned range once: none twice, none skipped.
    reads = read_log(services["reads"], prefix + NAME)
    ranged = [read for read in reads if "read_range" in read["callers"]]
    planned = [(task["start"], task["end"] - task["start"]) for task in plan_reads([str(multistream)])]
    assert sorted((read["start"], read["bytes"]) for read in ranged) == planned
    assert len({read["pid"] for read in ranged}) >= 2 and {read["pid"] for read in ranged} <= workers.seen
    # Besides: one worker hashes the whole dump for the run's provenance (its sha256) and reads its header
    # (the wiki's name); one worker reads the index, once, to plan the ranges.
    described = [(read["start"], read["bytes"]) for read in reads if "describe_input" in read["callers"]]
    assert len(described) == len(reads) - len(ranged) == 2
    assert (0, multistream.stat().st_size) in described and all(start == 0 for start, _ in described)
    index = [(read["start"], read["bytes"]) for read in read_log(services["reads"], prefix + INDEX)]
    assert index == [(0, multistream.with_name(INDEX).stat().st_size)]
    local_files, remote_files = file_bytes(local), file_bytes(tmp_path / "remote")
    assert local_files == remote_files and len(local_files) == 2
    assert summary(local)["counters"]["ingest-wikipedia"]["kept"] >= 20


def test_remote_multistream_index_given_with_a_flag(services, multistream, tmp_path):
    prefix = f"gs://{BUCKET}/flag/"
    upload(multistream, prefix + "dump/" + NAME)
    upload(multistream.with_name(INDEX), prefix + "elsewhere/offsets.txt.bz2")
    out = prefix + "out"
    args = ("ingest", "wikipedia", prefix + "dump/" + NAME, "--out", out)
    flag = ("--multistream-index", prefix + "elsewhere/offsets.txt.bz2")
    assert run_cli(*args, *flag, beam=external(services)) == 0
    download_tree(out, tmp_path / "remote")
    assert summary(tmp_path / "remote")["counters"]["ingest-wikipedia-read"]["read_tasks"] >= 8


def test_a_build_config_names_a_remote_multistream_index(services, multistream, tmp_path):
    import yaml

    from incoherent.pipelines.build.config import check_config, load_config
    from incoherent.pipelines.build.plan import plan

    prefix = f"gs://{BUCKET}/config/"
    upload(multistream, prefix + "dump/" + NAME)
    upload(multistream.with_name(INDEX), prefix + "elsewhere/offsets.txt.bz2")

    def config(index: str) -> str:
        source = {
            "kind": "wikipedia",
            "inputs": [prefix + "dump/" + NAME],
            "options": {"multistream_index": index},
        }
        path = tmp_path / "build.yaml"
        path.write_text(yaml.safe_dump({"out": "unused", "sources": {"w": source}}))
        return str(path)

    path = config(prefix + "elsewhere/offsets.txt.bz2")
    ingest = plan(check_config(load_config(path), path), "work")[0]
    assert ingest.argv[-2:] == ["--multistream-index", prefix + "elsewhere/offsets.txt.bz2"]
    path = config(prefix + "elsewhere/nope.txt.bz2")
    with pytest.raises(
        InputError, match="sources.w.options.multistream_index: gs://.*/nope.txt.bz2 not found"
    ):
        check_config(load_config(path), path)


def test_remote_multistream_dump_without_its_index_is_one_line_saying_how_to_get_it(
    services, multistream, capsys
):
    prefix = f"gs://{BUCKET}/noindex/"
    upload(multistream, prefix + NAME)
    code = run_cli("ingest", "wikipedia", prefix + NAME, "--out", prefix + "out", beam=external(services))
    assert code == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"error: {prefix}{NAME}: its multistream index {prefix}{INDEX} is missing; copy it there from the "
        "dump's folder on https://dumps.wikimedia.org/ (or pass --multistream-index), so workers can split the dump"
    ]


class DriverBytes:
    """Bytes this process (the driver) reads and writes through Beam's filesystems while it is active."""

    def __init__(self, monkeypatch):
        from apache_beam.io.filesystems import FileSystems

        self.read = self.written = 0
        opened, created = FileSystems.open, FileSystems.create
        counter = self

        class Counted:
            def __init__(self, f, kind):
                self._f, self._kind = f, kind

            def read(self, *args):
                data = self._f.read(*args)
                counter.read += len(data)
                return data

            def write(self, data):
                counter.written += len(data)
                return self._f.write(data)

            def __getattr__(self, name):
                return getattr(self._f, name)

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return self._f.__exit__(*exc)

        monkeypatch.setattr(FileSystems, "open", staticmethod(lambda *a, **k: Counted(opened(*a, **k), "r")))
        monkeypatch.setattr(
            FileSystems, "create", staticmethod(lambda *a, **k: Counted(created(*a, **k), "w"))
        )


def wsj_documents(tmp_path, copies: int):
    """The WSJ sample repeated ``copies`` times with fresh ids (the matrix grows with ``copies``)."""
    rows = [json.loads(line) for line in (ROOT / "samples/wsj/wsj.jsonl").read_text().splitlines()]
    jsonl = tmp_path / f"wsj{copies}.jsonl"
    jsonl.write_text(
        "".join(
            json.dumps({"id": f"{r['id']}-{i}", "text": r["text"]}) + "\n"
            for i in range(copies)
            for r in rows
        )
    )
    docs = tmp_path / f"docs{copies}"
    assert run_cli("ingest", "text", jsonl, "--source", "wsj", "--out", docs) == 0
    return docs


def test_the_index_matrix_never_passes_through_the_driver(services, tmp_path, monkeypatch):
    from apache_beam.io.filesystems import FileSystems

    measured = {}
    for copies in (1, 4):
        docs = wsj_documents(tmp_path, copies)
        out = f"gs://{BUCKET}/index{copies}"
        driver = DriverBytes(monkeypatch)
        assert run_cli("index", docs, "--out", out, "--hash-size", "65536", beam=external(services)) == 0
        monkeypatch.undo()
        matrix = FileSystems.match([f"{out}/tfidf.npz"])[0].metadata_list[0].size_in_bytes
        measured[copies] = (driver.read, driver.written, matrix)
    (read1, written1, matrix1), (read4, written4, matrix4) = measured[1], measured[4]
    assert matrix4 > 3 * matrix1  # the matrix grew ...
    assert written4 <= 1.2 * written1 and read4 <= 1.2 * read1  # ... what the driver moved did not
    assert 0 < written1 < matrix1 and 0 < read1 < matrix1  # run_summary.json, index.json
    download_tree(f"gs://{BUCKET}/index4", tmp_path / "remote")
    local = tmp_path / "local"
    assert run_cli("index", tmp_path / "docs4", "--out", local, "--hash-size", "65536") == 0
    for name in ("tfidf.npz", "idf.npz", "ids.json", "docs.npz", "index.json"):
        assert (tmp_path / "local" / name).read_bytes() == (tmp_path / "remote" / name).read_bytes(), name


CNN = {"cnn": {"kind": "cnn", "inputs": ["samples/cnn/allennlp", "samples/cnn/frank"]}}


def test_a_remote_build_killed_in_its_intruder_stage_resumes_to_the_same_bytes(services, tmp_path):
    import os
    import signal
    import subprocess
    import sys

    import psutil
    import yaml

    config = tmp_path / "build.yaml"
    config.write_text(yaml.safe_dump({"base": str(ROOT), "out": "unused", "sources": CNN}))
    reference = tmp_path / "reference"
    assert run_cli("build", config, "--out", reference) == 0
    out = f"gs://{BUCKET}/resume"
    command = [
        sys.executable,
        "-m",
        "incoherent.pipelines.cli",
        "build",
        str(config),
        "--out",
        out,
        "--runner",
        "DirectRunner",
    ]
    paused = (
        tmp_path / "paused"
    )  # the intruder stage's pipeline creates it and waits (pipelines/runtime/run.py)
    env = dict(os.environ, INCOHERENT_TEST_PAUSE_FILE=str(paused), INCOHERENT_TEST_PAUSE_COMMAND="intruders")
    build = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL
    )  # STORAGE_EMULATOR_HOST: set
    try:
        deadline = time.monotonic() + 600
        while not paused.exists():
            assert build.poll() is None, "the build ended before its intruder stage's pipeline ran"
            assert time.monotonic() < deadline, "the intruder stage's pipeline never started"
            time.sleep(0.05)
        stage_processes = psutil.Process(build.pid).children(recursive=True)
        os.kill(build.pid, signal.SIGKILL)
        build.wait(timeout=30)
        psutil.wait_procs(stage_processes, timeout=10)
    finally:
        if build.poll() is None:
            build.kill()
    interrupted = remote_json(f"{out}/build_summary.json")
    assert interrupted["complete"] is False and "intruders" not in interrupted["stages"]
    assert not exists(f"{out}/work/intruders.complete")

    assert run_cli("build", config, "--out", out) == 0
    resumed = remote_json(f"{out}/build_summary.json")
    assert resumed["complete"] is True
    assert resumed["skipped"] == ["ingest/cnn", "index/cnn", "neighbors/cnn", "shuffle/cnn"]
    assert set(resumed["seconds"]) == {"intruders", "card"}
    assert {name: resumed["stages"][name] for name in resumed["skipped"]} == interrupted["stages"]
    download_tree(out, tmp_path / "remote")
    assert not list((tmp_path / "remote").rglob("*.partial"))
    assert file_bytes(tmp_path / "remote" / "dataset") == file_bytes(reference / "dataset") != {}
    assert file_bytes(tmp_path / "remote" / "work") == file_bytes(reference / "work")
    # a stage is redone when its input changes (fingerprinted from the store's metadata)


def remote_json(url: str) -> dict:
    from incoherent.pipelines.runtime import storage

    return json.loads(storage.read_bytes(url))


def exists(url: str) -> bool:
    from apache_beam.io.filesystems import FileSystems

    return FileSystems.exists(url)


def test_remote_inputs_are_fingerprinted_from_the_stores_metadata(services, tmp_path):
    from incoherent.pipelines.build.remote_resume import input_fingerprints

    prefix = f"gs://{BUCKET}/prints/"
    (tmp_path / "a.txt").write_bytes(b"first")
    upload(tmp_path / "a.txt", prefix + "dir/a.txt")
    before = input_fingerprints([prefix + "dir", prefix + "dir/a.txt", str(tmp_path / "a.txt")])
    assert set(before) == {prefix + "dir/a.txt", str(tmp_path / "a.txt")}
    assert before[prefix + "dir/a.txt"][0] == 5
    (tmp_path / "b.txt").write_bytes(b"other")  # the same size, other bytes
    upload(tmp_path / "b.txt", prefix + "dir/a.txt")
    after = input_fingerprints([prefix + "dir"])
    assert after[prefix + "dir/a.txt"] != before[prefix + "dir/a.txt"]
