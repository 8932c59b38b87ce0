"""A real Flink session cluster: Flink 1.19.0's JobManager and TaskManager (2 task slots) as processes of their
own on 127.0.0.1 (tools/flink-cluster.sh), Beam's Flink job server assembled with Maven
(tools/flink-job-server.sh, Beam 2.62.0: no shaded job-server jar is served, see docs/scale-out.md#flink), and
``incoherent`` on ``--runner FlinkRunner --parallelism=2`` with the SDK workers in the command's process
(``LOOPBACK``). One cluster for the module: ``ingest wikipedia`` of a multistream dump read by both slots (each
subtask's share from Flink's REST API), ``shuffle``, ``probes`` and ``score-shuffle`` with the tiny GPT-2, each
file for file byte-identical to the local runner's output, and ``--dry-run``'s checks of the cluster. Skipped
when the job server has not been fetched (``.ci/run`` fetches it first); the whole Quickstart build on a cluster
is ``.ci/run``'s Flink step. Measured on the shared 2-core machine at load 15-30 (2026-11-27): the cluster
starts in 70-100 s, each command on it takes 2.5-5 minutes (a job server started per command, then the job).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_cli
from tests.corpora.test_score_shuffle import shuffle_rows, write_shuffles
from tests.services import free_port, start, stop
from tests.sources.test_mediawiki import GENSIM, build_multistream
from tests.tiny_lm import tiny_gpt2_dir  # noqa: F401
from tests.tiny_model import tiny_data_dir  # noqa: F401

JAR = "beam-runners-flink-1.19-job-server-2.62.0.jar"


def job_server_home() -> Path | None:
    """The folder tools/flink-job-server.sh filled (``$INCOHERENT_FLINK_HOME`` or its default), if complete."""
    default = Path.home() / ".cache" / "incoherent" / "flink-job-server-2.62.0-flink-1.19"
    home = Path(os.environ.get("INCOHERENT_FLINK_HOME", default))
    return home if (home / "COMPLETE").is_file() and (home / JAR).is_file() else None


HOME = job_server_home()
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(HOME is None, reason="Beam's Flink job server not fetched: tools/flink-job-server.sh"),
]


def overview(port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/overview", timeout=30) as response:
        return json.loads(response.read())


def wait_for_slots(port: int, work: Path, seconds: float = 240) -> None:
    """Until the cluster at ``port`` has its TaskManager's 2 slots (its log's tail if not within ``seconds``)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            if overview(port)["slots-total"] >= 2:
                return
        except OSError:  # the REST endpoint is up but slow to answer while the JVMs start
            pass
        assert time.monotonic() < deadline, (work / "taskmanager.log").read_text()[-3000:]
        time.sleep(1)


@pytest.fixture(scope="module")
def flink(tmp_path_factory):
    """A Flink session cluster on a free REST port, up with its TaskManager's 2 slots; stopped on every exit
    (tests.services: atexit and SIGTERM); its logs stay in the work folder."""
    work, port = tmp_path_factory.mktemp("flink"), free_port()
    cluster = start(["bash", str(ROOT / "tools" / "flink-cluster.sh"), str(HOME), str(work), str(port)], port,
                    dict(os.environ), work, seconds=240)  # fmt: skip
    try:
        wait_for_slots(port, work)
        yield {"port": port, "work": work}
    finally:
        stop(cluster)


def flags(flink, environment: tuple[str, ...] = ("--environment_type=LOOPBACK",)) -> list[str]:
    """Beam's flags of a run on the session cluster, as the docs give them: parallelism 2, SDK workers in the
    command's own process (or ``environment``'s)."""
    return [
        "--runner=FlinkRunner",
        f"--flink_master=127.0.0.1:{flink['port']}",
        f"--flink_job_server_jar={HOME / JAR}",
        *environment,
        "--parallelism=2",
    ]


def job_ids(port: int) -> set[str]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/jobs/overview", timeout=30) as response:
        return {job["jid"] for job in json.loads(response.read())["jobs"]}


def on_flink(flink, *args, environment: tuple[str, ...] = ("--environment_type=LOOPBACK",)) -> str:
    """Run ``incoherent ARGS`` on the session cluster (a fresh process: with ``LOOPBACK`` its SDK workers are its
    own); the id of the one Flink job it ran."""
    before = job_ids(flink["port"])
    command = [
        sys.executable,
        "-m",
        "incoherent.pipelines.cli",
        *map(str, args),
        "--quiet",
        *flags(flink, environment),
    ]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    new = (
        job_ids(flink["port"]) - before
    )  # the job ran on the session cluster, not in an embedded mini cluster
    assert len(new) == 1, new
    return new.pop()


def rest(flink, path: str) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{flink['port']}{path}", timeout=30) as response:
        return json.loads(response.read())


def assert_same_output(local: Path, remote: Path, counters=lambda c: c) -> tuple[dict, dict]:
    """Every file the command wrote is byte-identical (Parquet tables, dead letters, JSONL, results, figures)
    but ``run_summary.json``, whose rows per table and counters (``counters`` picks those that do not depend
    on the runner) must be equal; the two summaries."""

    def files(root: Path) -> dict[str, bytes]:
        return {str(f.relative_to(root)): f.read_bytes() for f in sorted(root.rglob("*")) if f.is_file()}

    mine, theirs = files(local), files(remote)
    assert set(mine) == set(theirs) and any(name.endswith(".parquet") for name in mine)
    assert [name for name in mine if mine[name] != theirs[name]] == ["run_summary.json"]
    a, b = (json.loads((root / "run_summary.json").read_text()) for root in (local, remote))
    assert a["outputs"] == b["outputs"] and a["outputs"]
    assert counters(a["counters"]) == counters(b["counters"]) and a["counters"]
    return a, b


@pytest.fixture(scope="module")
def multistream(tmp_path_factory) -> Path:
    """A real multistream dump (the gensim sample's first 120 pages, 6 to a bz2 stream) with its index beside
    it, as tests/e2e/test_scaleout.py makes it."""
    folder = tmp_path_factory.mktemp("multistream")
    return build_multistream(GENSIM, folder / "mini-pages-articles-multistream.xml.bz2", 120, 6)


@pytest.fixture(scope="module")
def local_docs(multistream, tmp_path_factory) -> Path:
    """The dump ingested by the local runner in this process: one worker, one read task for the whole file."""
    out = tmp_path_factory.mktemp("local") / "docs"
    assert run_cli("ingest", "wikipedia", multistream, "--out", out) == 0
    return out


def test_a_multistream_dump_is_split_over_both_slots_with_the_rows_of_one_worker(
    flink, multistream, local_docs, tmp_path
):
    job = on_flink(flink, "ingest", "wikipedia", multistream, "--out", tmp_path / "flink")

    # ranges of whole streams: the counters but read_tasks / multistream_ranges (1 and 0 on one local worker)
    def pages(counters: dict) -> dict:
        read = counters["ingest-wikipedia-read"]
        return {k: v for k, v in counters.items() if k != "ingest-wikipedia-read"} | {
            "pages": read["pages_read"]
        }

    local, remote = assert_same_output(local_docs, tmp_path / "flink", pages)
    read = remote["counters"]["ingest-wikipedia-read"]
    assert read["read_tasks"] == read["multistream_ranges"] >= 8 and local["params"]["read_tasks"] == 1
    # each slot's share: the subtasks of the Flink vertex that reads the ranges (records in: ranges; out: pages)
    vertex = next(v for v in rest(flink, f"/jobs/{job}")["vertices"] if "ReadPages" in v["name"])
    subtasks = rest(flink, f"/jobs/{job}/vertices/{vertex['id']}")["subtasks"]
    shares = [(s["metrics"]["read-records"], s["metrics"]["write-records"]) for s in subtasks]
    assert len(shares) == 2 and all(ranges > 0 and pages > 0 for ranges, pages in shares), shares
    assert sum(r for r, _ in shares) == read["read_tasks"]
    assert sum(p for _, p in shares) == read["pages_read"] == 120


def test_shuffle_on_flink_with_an_external_worker_pool_is_byte_identical_to_local(
    flink, local_docs, tmp_path
):
    # the SDK workers come from Beam's worker pool (EXTERNAL), a process of its own in another working directory,
    # as on each TaskManager node of a cluster without Docker; `python` on its PATH is this interpreter
    elsewhere, port = tmp_path / "pool-cwd", free_port()
    elsewhere.mkdir()
    env = dict(
        os.environ,
        PYTHONPATH=str(ROOT),
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    )
    pool = start([sys.executable, "-m", "apache_beam.runners.worker.worker_pool_main", "--service_port", str(port)],
                 port, env, elsewhere)  # fmt: skip
    try:
        assert run_cli("shuffle", local_docs, "--out", tmp_path / "local") == 0
        external = ("--environment_type=EXTERNAL", f"--environment_config=localhost:{port}")
        on_flink(flink, "shuffle", local_docs, "--out", tmp_path / "flink", environment=external)
    finally:
        stop(pool)
    assert_same_output(tmp_path / "local", tmp_path / "flink")


def test_probes_on_flink_are_byte_identical_to_local(flink, tiny_data_dir, tmp_path):  # noqa: F811
    # all eight phenomena, one Flink job: its tables are written in one pass (WriteTables); one pass per table
    # made a job of 78 vertices whose TaskManager missed its heartbeats in 3 runs of 3 on 2 shared cores
    argv = ("probes", tiny_data_dir)
    assert run_cli(*argv, "--out", tmp_path / "local") == 0
    job = on_flink(flink, *argv, "--out", tmp_path / "flink")
    assert_same_output(tmp_path / "local", tmp_path / "flink")
    vertices = len(rest(flink, f"/jobs/{job}")["vertices"])
    print(f"probes on Flink: {vertices} vertices")
    assert vertices <= 40, vertices  # 78 with one pass per table
    # real probes of the WSJ sample: six of the eight phenomena find sites in its 30 test documents
    assert len(list((tmp_path / "flink").glob("probe-*/*.parquet"))) == 6


def test_score_shuffle_with_a_tiny_model_on_flink_is_byte_identical_to_local(flink, tiny_gpt2_dir, tmp_path):  # noqa: F811
    data = write_shuffles(tmp_path / "shuffles", shuffle_rows())
    threads = (
        "--pool-size",
        "4",
        "--torch-threads",
        "1",
    )  # scores are bit for bit the same at one thread count
    assert run_cli("score-shuffle", tiny_gpt2_dir, data, "--out", tmp_path / "local", *threads) == 0
    on_flink(flink, "score-shuffle", tiny_gpt2_dir, data, "--out", tmp_path / "flink", *threads)
    assert_same_output(tmp_path / "local", tmp_path / "flink")
    assert (tmp_path / "flink" / "results.json").is_file()


def test_a_dry_run_checks_the_cluster_and_its_flink_version_and_runs_nothing(flink, tmp_path, capsys):
    before = job_ids(flink["port"])
    argv = ("ingest", "cnn", ROOT / "samples" / "cnn" / "frank", "--out", tmp_path / "out", "--dry-run")
    capsys.readouterr()
    assert run_cli(*argv, beam=flags(flink)) == 0
    out = capsys.readouterr().out
    assert f"master 127.0.0.1:{flink['port']}: Flink 1.19.0, 1 TaskManager(s), 2 slots; Flink's own " in out
    assert "translation not run" in out and out.rstrip().endswith("nothing ran and nothing was written")
    # a job server built for another Flink version than the cluster's is refused (the jar's Maven name says which)
    other = tmp_path / "beam-runners-flink-1.18-job-server-2.62.0.jar"
    other.write_bytes((HOME / JAR).read_bytes())
    beam = [
        f if not f.startswith("--flink_job_server_jar") else f"--flink_job_server_jar={other}"
        for f in flags(flink)
    ]
    assert run_cli(*argv, beam=beam) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"error: --flink_master 127.0.0.1:{flink['port']}: a Flink 1.19.0 cluster, but the job server {other} is "
        "built for Flink 1.18"
    )
    assert job_ids(flink["port"]) == before and not (tmp_path / "out").exists()
