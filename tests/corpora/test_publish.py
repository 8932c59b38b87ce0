"""``incoherent publish`` against a fake Hub on 127.0.0.1 (tests/fake_hub.py): the real huggingface_hub client
talks HTTP to it; nothing reaches the network (name lookups other than 127.0.0.1 fail in these tests)."""

from __future__ import annotations

import json
import logging
import os
import shutil
import socket
import subprocess
import sys
import threading

import pytest

from incoherent.corpora.publish import files_to_upload
from incoherent.schemas import SCHEMA_VERSION
from tests.conftest import ROOT, run_cli
from tests.fake_hub import FakeHub
from tests.sample_build import wikipedia_build

TOKEN = "hf_fakeTokenThatMustNeverBePrinted0123"
LOCAL_HOSTS = {"127.0.0.1", "localhost"}


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    return wikipedia_build(tmp_path_factory)


@pytest.fixture
def dataset(build, tmp_path):
    """A private copy of the built dataset folder (tests change it), next to a copy of the build summary."""
    copy = tmp_path / "build"
    shutil.copytree(build / "dataset", copy / "dataset")
    shutil.copy(build / "build_summary.json", copy / "build_summary.json")
    return copy / "dataset"


@pytest.fixture
def hub(tmp_path, monkeypatch):
    """A fake Hub in a thread of this process, the client pointed at it, no token anywhere unless a test sets one."""
    import huggingface_hub.constants as constants

    server = FakeHub(str(tmp_path / "hub"), TOKEN)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    home = tmp_path / "hf-home"
    home.mkdir()
    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_OIDC_RESOURCE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    monkeypatch.setattr(constants, "ENDPOINT", server.url)
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(home / "token"))
    monkeypatch.setattr(constants, "HF_STORED_TOKENS_PATH", str(home / "stored_tokens"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    real_getaddrinfo = socket.getaddrinfo

    def local_only(host, *args, **kwargs):
        if host not in LOCAL_HOSTS:
            raise OSError(f"test tried to reach the network ({host})")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", local_only)
    yield server
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


def publish(dataset, *extra):
    return run_cli("publish", dataset, "--repo-id", "me/insted", *extra, beam=[])


def local_files(dataset) -> dict[str, bytes]:
    return {rel: (dataset / rel).read_bytes() for rel in files_to_upload(str(dataset), False)}


@pytest.mark.e2e
def test_publish_uploads_the_build_byte_identical_and_a_second_publish_commits_nothing(
    dataset, hub, capsys, monkeypatch
):
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    assert publish(dataset) == 0
    out = capsys.readouterr().out
    expected = local_files(dataset)
    assert {"README.md", "figures/similarity.png", "summaries/work/intruders/run_summary.json"} <= set(
        expected
    )
    assert "intruder-wikipedia/train-00000-of-00001.parquet" in expected
    assert not any(rel.startswith("rejected/") for rel in expected)
    remote = hub.files_of("me/insted")
    assert remote.pop(".gitattributes")  # created with the repository, kept
    assert remote == expected
    assert f"{len(expected)} files on the Hub match the build" in out
    assert f"{hub.url}/datasets/me/insted" in out
    commits = hub.commits_of("me/insted")
    assert len(commits) == 2  # the repository's first commit and ours

    hub.requests.clear()
    assert publish(dataset) == 0
    assert "unchanged" in capsys.readouterr().out
    assert hub.commits_of("me/insted") == commits
    assert not [r for r in hub.requests if r[0] == "POST" and "/commit/" in r[1]]


@pytest.mark.e2e
def test_a_changed_build_commits_only_what_changed_and_removes_what_is_gone(dataset, hub, capsys):
    assert publish(dataset, "--token", TOKEN) == 0
    (dataset / "figures" / "similarity.png").unlink()
    card = dataset / "README.md"
    card.write_text(card.read_text().replace("# Wikipedia intruders (test build)", "# Renamed"))
    capsys.readouterr()
    assert publish(dataset, "--token", TOKEN) == 0
    assert "committed 1 changed files and 1 deletions" in capsys.readouterr().out
    remote = hub.files_of("me/insted")
    assert "figures/similarity.png" not in remote and remote["README.md"] == card.read_bytes()
    assert len(hub.commits_of("me/insted")) == 3


@pytest.mark.e2e
def test_load_dataset_through_the_hub_gives_the_built_rows_and_features(dataset, hub, tmp_path, monkeypatch):
    assert publish(dataset, "--token", TOKEN) == 0
    script = """
import json, socket, sys
real = socket.getaddrinfo
def local_only(host, *a, **k):
    if host not in ("127.0.0.1", "localhost"):
        raise OSError(f"network access to {host}")
    return real(host, *a, **k)
socket.getaddrinfo = local_only
import datasets
datasets.config.USE_PARQUET_EXPORT = False  # the dataset viewer is another service (datasets-server.<host>)
named = datasets.load_dataset("me/insted", "intruder-wikipedia")
default = datasets.load_dataset("me/insted")
print(json.dumps({
    "splits": sorted(named),
    "rows": {s: named[s].to_list() for s in named},
    "features": named["train"].features.to_dict(),
    "default_rows": {s: default[s].to_list() for s in default},
}))
"""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("HF_", "HUGGING", "TRANSFORMERS"))
    }
    env.update(
        HF_ENDPOINT=hub.url,
        HF_HOME=str(tmp_path / "reader-home"),
        HF_HUB_DISABLE_TELEMETRY="1",
        HF_HUB_OFFLINE="0",
        HF_DATASETS_OFFLINE="0",
        PYTHONPATH=str(ROOT),
    )
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    remote = json.loads(done.stdout.strip().splitlines()[-1])

    import datasets

    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    local = datasets.load_dataset(str(dataset), "intruder-wikipedia", cache_dir=str(tmp_path / "local-cache"))
    assert remote["splits"] == sorted(local) == ["test", "train"]
    assert remote["features"] == local["train"].features.to_dict()
    assert remote["features"]["label"]["names"] == ["coherent", "intruder"]
    for split in local:
        assert remote["rows"][split] == local[split].to_list()
        assert remote["default_rows"][split] == local[split].to_list()  # default: true is intruder-wikipedia
    assert any(("GET", f"/datasets/me/insted/resolve/{c}/intruder-wikipedia/train-00000-of-00001.parquet")
               in hub.requests for c in hub.commits_of("me/insted"))  # fmt: skip


@pytest.mark.e2e
def test_server_failing_mid_upload_is_one_line_and_a_rerun_completes(dataset, hub, capsys):
    hub.fail_commits = 1
    assert publish(dataset, "--token", TOKEN) == 2
    err = capsys.readouterr().err.strip()
    assert (
        err.startswith("error: --repo-id me/insted: upload failed (") and "re-run `incoherent publish`" in err
    )
    assert "\n" not in err and "Traceback" not in err
    assert len(hub.commits_of("me/insted")) == 1  # the upload was refused: the repository is as it was
    assert publish(dataset, "--token", TOKEN) == 0
    remote = hub.files_of("me/insted")
    remote.pop(".gitattributes")
    assert remote == local_files(dataset)


@pytest.mark.e2e
def test_the_token_is_never_printed_or_logged(dataset, hub, capsys, caplog, monkeypatch, request):
    hf_logger = logging.getLogger("huggingface_hub")
    monkeypatch.setattr(hf_logger, "propagate", True)
    level = hf_logger.level
    hf_logger.setLevel(logging.DEBUG)  # the client's debug log (requests, skipped files) is captured too
    request.addfinalizer(lambda: hf_logger.setLevel(level))
    caplog.set_level(logging.DEBUG)
    # stored login (hf auth login writes this file), then a failed upload, then HF_TOKEN
    import huggingface_hub.constants as constants

    with open(constants.HF_TOKEN_PATH, "w") as f:
        f.write(TOKEN)
    assert publish(dataset, "--private") == 0
    hub.fail_commits = 1
    (dataset / "README.md").write_text((dataset / "README.md").read_text() + "\n")
    assert publish(dataset) == 2
    os.remove(constants.HF_TOKEN_PATH)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    assert publish(dataset) == 0
    (dataset / "README.md").write_text((dataset / "README.md").read_text() + "\n")  # something to commit
    assert publish(dataset, "--token", TOKEN + "x") == 2
    captured = capsys.readouterr()
    assert "refused the token (401)" in captured.err
    logged = caplog.text + captured.err  # huggingface_hub logs through its own stderr handler as well
    assert "/api/datasets/me/insted/preupload/main (authenticated: True)" in logged  # its debug log was seen
    for text in (captured.out, logged):
        assert TOKEN not in text


@pytest.mark.parametrize("repo_id", ["insted", "me/in/sted", "me/in sted", "-me/x", "me/x..y", "me/", "/x"])
def test_a_malformed_repo_id_is_one_line(dataset, repo_id, capsys):
    assert run_cli("publish", dataset, f"--repo-id={repo_id}", beam=[]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --repo-id: expected ORG/NAME") and "\n" not in err


def test_no_token_says_how_to_log_in(dataset, hub, capsys):
    assert publish(dataset) == 2
    err = capsys.readouterr().err.strip()
    assert (
        err == "error: no Hugging Face token: pass --token, set HF_TOKEN, or log in once with `hf auth login`"
    )
    assert hub.requests == []


def test_failed_incomplete_or_old_builds_and_missing_cards_are_refused(dataset, hub, capsys):
    summary_path = dataset.parent / "build_summary.json"
    summary = json.loads(summary_path.read_text())
    summary_path.write_text(json.dumps(dict(summary, complete=False)))
    assert publish(dataset, "--token", TOKEN) == 2
    assert "the build did not complete" in capsys.readouterr().err
    summary_path.write_text(json.dumps(summary))

    copy = dataset / "summaries" / "work" / "intruders" / "run_summary.json"
    run = json.loads(copy.read_text())
    copy.write_text(json.dumps(dict(run, schema_version="0")))
    assert publish(dataset, "--token", TOKEN) == 2
    assert f"schema version 0, this incoherent writes {SCHEMA_VERSION}; rebuild" in capsys.readouterr().err
    copy.write_text(json.dumps(dict(run, complete=False)))
    assert publish(dataset, "--token", TOKEN) == 2
    assert "run did not complete" in capsys.readouterr().err
    copy.write_text(json.dumps(run))

    (dataset / "README.md").unlink()
    assert publish(dataset, "--token", TOKEN) == 2
    err = capsys.readouterr().err.strip()
    assert "no README.md dataset card (run `incoherent card" in err and "\n" not in err
    assert hub.requests == []  # refused before talking to the Hub


@pytest.mark.e2e
def test_publish_to_a_branch_leaves_main_alone(dataset, hub, capsys):
    assert publish(dataset, "--token", TOKEN, "--revision", "v1") == 0
    assert capsys.readouterr().out.strip().endswith(f"{hub.url}/datasets/me/insted/tree/v1")
    remote = hub.files_of("me/insted", "v1")
    remote.pop(".gitattributes")
    assert remote == local_files(dataset)
    assert set(hub.files_of("me/insted", "main")) == {".gitattributes"}


def test_plan_compares_git_blob_ids_lfs_sha256_and_sizes(tmp_path):
    from types import SimpleNamespace

    from incoherent.corpora.publish import git_blob_sha1, plan, sha256

    for name, data in {"a.txt": b"hello\n", "b/c.parquet": b"PAR1" * 100, "d.md": b"new"}.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(data)
    # the id git itself gives the file
    git = subprocess.run(["git", "hash-object", str(tmp_path / "a.txt")], capture_output=True, text=True)
    assert git.returncode == 0 and git_blob_sha1(str(tmp_path / "a.txt")) == git.stdout.strip()
    remote = {
        "a.txt": SimpleNamespace(size=6, blob_id=git_blob_sha1(str(tmp_path / "a.txt")), lfs=None),
        "b/c.parquet": SimpleNamespace(
            size=400, blob_id="pointer", lfs=SimpleNamespace(sha256=sha256(str(tmp_path / "b/c.parquet")))
        ),
        "d.md": SimpleNamespace(size=3, blob_id="0" * 40, lfs=None),  # same size, other content
        "gone.json": SimpleNamespace(size=1, blob_id="1" * 40, lfs=None),
        ".gitattributes": SimpleNamespace(size=1, blob_id="2" * 40, lfs=None),
    }
    assert plan(str(tmp_path), ["a.txt", "b/c.parquet", "d.md"], remote) == (["d.md"], ["gone.json"])
    assert plan(str(tmp_path), ["a.txt"], {}) == (["a.txt"], [])
