"""``incoherent build``: resuming after a real kill, and sampled builds over the whole retrieval pool."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import psutil
import pytest
import yaml

from incoherent.pipelines.build.plan import plan
from tests.conftest import ROOT, file_bytes, read_rows, run_cli

pytestmark = pytest.mark.e2e

CNN = {"cnn": {"kind": "cnn", "inputs": ["samples/cnn/allennlp", "samples/cnn/frank"]}}


def write_config(path, **changes):
    config = {"base": str(ROOT), "out": "unused", "sources": CNN, "shuffle": {"block_sizes": [2, 3]}}
    config.update(changes)
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    """An uninterrupted build of the CNN samples."""
    root = tmp_path_factory.mktemp("full")
    config = write_config(root / "build.yaml")
    assert run_cli("build", config, "--out", root / "out") == 0
    return config, root / "out"


def summary(out):
    return json.loads((out / "build_summary.json").read_text())


def test_a_build_killed_in_the_intruder_stage_resumes_to_the_same_bytes(full, tmp_path):
    config, reference = full
    out = tmp_path / "out"
    partial = out / "work" / "intruders.partial"
    command = [sys.executable, "-m", "incoherent.pipelines.cli", "build", str(config), "--out", str(out)]
    paused = (
        tmp_path / "paused"
    )  # the intruder stage's pipeline creates it and waits (pipelines/runtime/run.py)
    env = dict(os.environ, INCOHERENT_TEST_PAUSE_FILE=str(paused), INCOHERENT_TEST_PAUSE_COMMAND="intruders")
    build = subprocess.Popen(
        command + ["--runner", "DirectRunner"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL
    )
    try:
        deadline = time.time() + 240
        while not paused.exists() and build.poll() is None and time.time() < deadline:
            time.sleep(0.02)
        assert build.poll() is None, "the build ended before its intruder stage started"
        assert paused.exists(), "the intruder stage's pipeline never started"
        stage_processes = psutil.Process(build.pid).children(recursive=True)  # the stage runs in a child
        assert stage_processes
        os.kill(build.pid, signal.SIGKILL)  # a real kill, in the middle of the stage
        build.wait(timeout=30)
        _gone, alive = psutil.wait_procs(stage_processes, timeout=10)
        assert not alive, "a stage process outlived the killed build"
    finally:
        if build.poll() is None:
            build.kill()
    assert partial.exists() and not (out / "work" / "intruders").exists()  # nothing under the final name
    assert not (out / "dataset" / "intruder-cnn").exists()
    interrupted = summary(out)
    assert interrupted["complete"] is False and "intruders" not in interrupted["stages"]
    assert {"ingest/cnn", "index/cnn", "neighbors/cnn", "shuffle/cnn"} <= set(interrupted["stages"])

    assert run_cli("build", config, "--out", out) == 0
    resumed = summary(out)
    assert resumed["complete"] is True
    assert resumed["skipped"] == ["ingest/cnn", "index/cnn", "neighbors/cnn", "shuffle/cnn"]
    assert set(resumed["seconds"]) == {"intruders", "card"}  # the shuffle ran before the intruder stage
    assert not partial.exists()
    assert file_bytes(out / "dataset") == file_bytes(reference / "dataset")
    assert file_bytes(out / "work") == file_bytes(reference / "work")
    assert {name: resumed["stages"][name] for name in resumed["skipped"]} == interrupted["stages"]


def test_a_finished_build_is_skipped_changed_options_redo_their_stages_and_force_redoes_all(full, tmp_path):
    config, reference = full
    out = tmp_path / "out"
    shutil.copytree(reference, out)  # a build moved elsewhere is still finished
    assert run_cli("build", config, "--out", out) == 0
    assert len(summary(out)["skipped"]) == len(plan_of(config, out))
    assert file_bytes(out) == file_bytes(reference)
    changed = write_config(tmp_path / "changed.yaml", shuffle={"block_sizes": [2]})
    assert run_cli("build", changed, "--out", out) == 0
    assert set(summary(out)["seconds"]) == {"shuffle/cnn", "card"}
    assert {r["block_size"] for r in read_rows(out / "dataset", "shuffle-cnn")} == {2}
    (out / "dataset" / "LICENSE").write_text("the user's own\n")  # beside the build's files: --force keeps it
    (out / "dataset" / "notes").mkdir()
    (out / "NOTES.txt").write_text("mine\n")
    assert run_cli("build", changed, "--out", out, "--force") == 0
    assert summary(out)["skipped"] == []
    assert (out / "dataset" / "LICENSE").read_text() == "the user's own\n"
    assert (out / "dataset" / "notes").is_dir() and (out / "NOTES.txt").read_text() == "mine\n"


def plan_of(config_path, out):
    from incoherent.pipelines.build.config import check_config, load_config

    return plan(check_config(load_config(str(config_path)), str(config_path)), str(out / "work"))


def test_a_sampled_build_gives_the_full_builds_rows_of_its_documents(full, tmp_path):
    _, reference = full
    config = write_config(
        tmp_path / "sampled.yaml", intruders={"sample": 25}, shuffle={"sample": {"cnn": 0.5}}
    )
    out = tmp_path / "out"
    assert run_cli("build", config, "--out", out) == 0
    ids = (out / "work" / "sample" / "cnn" / "ids.txt").read_text().split()
    assert len(ids) == 25
    work, full_work = out / "work" / "retrieval" / "cnn", reference / "work" / "retrieval" / "cnn"
    neighbors = read_rows(work / "neighbors", "neighbors")
    assert [r["id"] for r in neighbors] == sorted(ids)  # only the sample is queried ...
    full_neighbors = {r["id"]: r for r in read_rows(full_work / "neighbors", "neighbors")}
    assert neighbors == [full_neighbors[r["id"]] for r in neighbors]  # ... against the whole index
    rows = read_rows(out / "dataset", "intruder-cnn")
    full_rows = {r["id"]: r for r in read_rows(reference / "dataset", "intruder-cnn")}
    assert rows and {r["id"] for r in rows} <= set(ids)
    assert rows == [full_rows[r["id"]] for r in rows]
    shuffled = read_rows(out / "dataset", "shuffle-cnn")
    assert (
        0
        < len({r["id"] for r in shuffled})
        < len({r["id"] for r in read_rows(reference / "dataset", "shuffle-cnn")})
    )
    sample = summary(out)["sources"]["cnn"]["sample"]
    assert sample["requested"] == "25" and sample["documents"] == 25 and sample["pool"] > 25


def test_bad_samples_in_the_config_stop_the_build_before_any_work(tmp_path, capsys):
    config = write_config(tmp_path / "bad.yaml", intruders={"sample": {"wiki": 10}})
    assert run_cli("build", config, "--out", tmp_path / "out") == 2
    assert "intruders.sample.wiki: no such source" in capsys.readouterr().err
    config = write_config(tmp_path / "bad2.yaml", shuffle={"sample": 1.5})
    assert run_cli("build", config, "--out", tmp_path / "out") == 2
    assert "shuffle.sample: a sample fraction must be in (0, 1), got 1.5" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_the_insted_recipe_config_samples_insteds_sizes_over_the_whole_pool(tmp_path):
    from importlib import resources

    from incoherent.pipelines.build.config import check_config, load_config

    recipe = resources.files("incoherent.pipelines").joinpath("configs/insted.yaml")
    config = yaml.safe_load(recipe.read_text())
    for spec in config["sources"].values():  # stand-ins for the downloads, so the paths resolve
        for name in spec["inputs"] + spec.get("history", []):
            (tmp_path / name).write_bytes(b"")
    path = tmp_path / "insted.yaml"
    path.write_text(recipe.read_text())
    stages = plan(check_config(load_config(str(path)), str(path)), str(tmp_path / "work"))
    names = [s.name for s in stages]
    assert names.index("sample/wikipedia") < names.index("neighbors/wikipedia") < names.index("intruders")
    by_name = {s.name: s for s in stages}
    assert "--queries" in by_name["neighbors/cnn"].argv
    intruders = by_name["intruders"].argv
    assert "wikipedia=106352" in intruders and "cnn=72670" in intruders and "--history" in intruders
    assert by_name["shuffle/cnn"].argv[by_name["shuffle/cnn"].argv.index("--sample") + 1] == "72670"


def test_a_stage_process_that_fails_on_its_input_raises_the_same_one_line_error(tmp_path, capfd):
    from incoherent.pipelines.build.processes import run_isolated
    from incoherent.schemas.records import InputError

    missing = tmp_path / "none"
    with pytest.raises(InputError, match=f"{missing}: no such index directory"):
        argv = [
            "neighbors",
            str(ROOT / "samples" / "cnn"),
            "--index",
            str(missing),
            "--out",
            str(tmp_path / "o"),
        ]
        run_isolated(argv, [])
    assert "Traceback" not in capfd.readouterr().err  # the child reports it, it does not crash


def running(process: psutil.Process) -> bool:
    """Alive and not a zombie (an ended process its new parent has not reaped yet)."""
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_a_long_stage_process_ends_with_the_build_that_started_it(tmp_path):
    """The fork server outlives its client while a child it forked runs, so the stage must watch the build
    itself: kill the process that called ``run_isolated`` while the stage's pipeline runs (held by the test hook
    of pipelines/runtime/run.py until then)."""
    out, paused = tmp_path / "docs", tmp_path / "paused"
    code = (
        "import sys; from incoherent.pipelines.build.processes import run_isolated; "
        "run_isolated(sys.argv[1:], [])"
    )
    argv = ["ingest", "text", str(ROOT / "samples" / "wsj" / "wsj.jsonl"), "--out", str(out)]
    env = dict(os.environ, INCOHERENT_TEST_PAUSE_FILE=str(paused))
    caller = subprocess.Popen(
        [sys.executable, "-c", code, *argv], cwd=ROOT, env=env, stdout=subprocess.DEVNULL
    )
    try:
        deadline, stage = time.time() + 120, None
        while not paused.exists() and caller.poll() is None and time.time() < deadline:
            time.sleep(0.05)
        # the stage is the fork server's child (the caller's grandchild), inside its pipeline
        stage = psutil.Process(int(paused.read_text())) if paused.exists() else None
        assert stage is not None, "no stage process started"
        fork_server = stage.parent()
        assert fork_server.ppid() == caller.pid
        os.kill(caller.pid, signal.SIGKILL)
        caller.wait(timeout=30)
        _gone, alive = psutil.wait_procs([stage, fork_server], timeout=30)  # a deadline: they end by an event
        alive = [p for p in alive if running(p)]
        assert not alive, "the stage process (or the fork server) outlived the killed build"
    finally:
        if caller.poll() is None:
            caller.kill()
    assert not (out / "run_summary.json").exists()  # it was stopped in the middle, not finished


def test_ctrl_c_says_that_running_again_resumes(tmp_path, capsys, monkeypatch):
    import incoherent.pipelines.build.command as build_command

    def interrupted(args, beam_args):
        raise KeyboardInterrupt

    monkeypatch.setattr(build_command, "run", interrupted)
    assert run_cli("build", "--out", tmp_path / "out", beam=[]) == 130
    assert capsys.readouterr().err == (
        "interrupted: run the same command again to resume (finished stages are kept; the stage that was "
        "running starts over)\n"
    )


@pytest.mark.parametrize("how", ["ctrl-c", "kill"])
def test_a_build_stopped_in_a_stage_says_so_in_one_line(tmp_path, how):
    """Ctrl-C at a terminal (SIGINT to the build and its stage process alike) or ``kill`` of the build (SIGTERM to
    it alone) while a stage's pipeline runs: exit 130 or 143, the build's one line that a rerun resumes, no
    traceback from the stage process, no stage process left and the --out lock let go."""
    config = write_config(tmp_path / "build.yaml")
    out = tmp_path / "out"
    command = [sys.executable, "-m", "incoherent.pipelines.cli", "build", str(config), "--out", str(out), "--quiet",
               "--runner", "DirectRunner"]  # fmt: skip
    paused = tmp_path / "paused"  # the first stage's pipeline creates it and waits (pipelines/runtime/run.py)
    env = dict(os.environ, INCOHERENT_TEST_PAUSE_FILE=str(paused))
    build = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 180
        while not paused.exists():
            assert build.poll() is None, build.communicate()
            assert time.monotonic() < deadline, "no stage's pipeline started"
            time.sleep(0.05)
        stage = psutil.Process(int(paused.read_text()))  # the stage process, inside its pipeline
        assert stage.pid in [p.pid for p in psutil.Process(build.pid).children(recursive=True)]
        if how == "ctrl-c":
            os.killpg(build.pid, signal.SIGINT)
        else:
            build.send_signal(signal.SIGTERM)
        _, stderr = build.communicate(timeout=120)
        _gone, alive = psutil.wait_procs([stage], timeout=10)
    finally:
        if build.poll() is None:
            os.killpg(build.pid, signal.SIGKILL)
            build.wait()
    assert build.returncode == (130 if how == "ctrl-c" else 143), stderr[-3000:]
    assert "Traceback" not in stderr, stderr[-3000:]
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("interrupted: run the same command again to resume"), stderr
    assert not alive
    assert not (out / ".incoherent-build.lock").read_bytes()  # released: emptied (a build keeps the file)
