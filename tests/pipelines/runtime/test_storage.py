"""Direct tests of :mod:`pipelines.runtime.storage` on the local disk (remote paths: tests/e2e/test_s3.py,
tests/e2e/test_distributed.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from incoherent.fileio.paths import LocalFiles, is_remote
from incoherent.pipelines.runtime import storage
from tests.conftest import ROOT


@pytest.mark.parametrize(
    ("path", "remote"),
    [
        ("gs://b/x", True),
        ("s3://b/x", True),
        ("/data/x", False),
        ("data/x", False),
        ("file:///data/x", False),
    ],
)
def test_one_remote_path_test(path, remote):
    assert is_remote(path) is remote
    assert storage.is_remote is is_remote


def test_absolute_and_join(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert storage.absolute("gs://b/docs") == "gs://b/docs"
    assert storage.absolute("docs/../docs") == str(tmp_path / "docs")
    assert storage.join("gs://b/out", "a", "b.json") == "gs://b/out/a/b.json"
    assert storage.join(str(tmp_path), "a") == os.path.join(str(tmp_path), "a")


def _tree(root):
    (root / "d" / "sub").mkdir(parents=True)
    (root / "d" / "a.json").write_bytes(b'{"a": 1}')
    (root / "d" / "sub" / "b.parquet").write_bytes(b"PAR1")
    return root / "d"


def test_beam_files_and_local_files_agree_on_local_paths(tmp_path):
    folder = _tree(tmp_path)
    beam_files, local = storage.BeamFiles(), LocalFiles()
    for files in (beam_files, local):
        assert files.isdir(str(folder)) and not files.isdir(str(folder / "a.json"))
        assert files.isfile(str(folder / "a.json")) and not files.isfile(str(folder))
        assert files.size(str(folder / "a.json")) == 8
        with files.open(str(folder / "sub" / "b.parquet")) as f:
            assert f.read() == b"PAR1"
    assert sorted(beam_files.files_under(str(folder))) == sorted(local.files_under(str(folder)))
    pattern = str(folder / "**" / "*.parquet")
    assert beam_files.glob(pattern) == local.glob(pattern) == [str(folder / "sub" / "b.parquet")]


def test_bytes_exists_list_and_delete_tree(tmp_path):
    path = str(tmp_path / "out" / "deep" / "x.bin")
    storage.write_bytes(path, b"abc")  # parent folders are made
    assert storage.read_bytes(path) == b"abc"
    assert storage.exists(path) and storage.exists(str(tmp_path / "out"))
    assert not storage.exists(str(tmp_path / "missing"))
    assert storage.list_files(str(tmp_path / "out" / "**")) == [path]
    with pytest.raises(FileNotFoundError):
        storage.open_file(str(tmp_path / "missing.bin"))
    storage.delete_tree(str(tmp_path / "out"))
    assert not os.path.exists(tmp_path / "out")
    storage.delete_tree(str(tmp_path / "out"))  # already gone: nothing to do


def test_local_copy_of_a_local_file_is_the_file(tmp_path):
    path = tmp_path / "model.bin"
    path.write_bytes(b"m")
    with storage.local_copy(str(path)) as local:
        assert local == str(path)


def test_importing_storage_leaves_beams_credentials_alone():
    """The emulator's anonymous connection is an explicit call (pipelines.runtime.options.use_gcs_emulator)."""
    code = (
        "from apache_beam.internal.gcp import auth\n"
        "import incoherent.pipelines.runtime.storage\n"
        "assert not auth._Credentials._credentials_init\n"
        "from incoherent.pipelines.runtime.options import use_gcs_emulator\n"
        "assert use_gcs_emulator()\n"
        "assert auth._Credentials._credentials_init and auth._Credentials._credentials is None\n"
    )
    env = dict(os.environ, STORAGE_EMULATOR_HOST="http://127.0.0.1:9", PYTHONPATH=str(ROOT))
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=120)


def test_use_gcs_emulator_does_nothing_without_an_emulator(monkeypatch):
    from incoherent.pipelines.runtime.options import use_gcs_emulator

    monkeypatch.delenv("STORAGE_EMULATOR_HOST", raising=False)
    assert use_gcs_emulator() is False


def test_an_sdk_workers_s3_check_uses_the_pipelines_endpoint_and_keys(monkeypatch):
    """On a worker host the check of an ``s3://`` path takes the endpoint and keys Beam's ``sdk_worker_main`` gave
    the filesystems (the build's ``--s3_*`` options), not only the driver's (none there): without them it went to
    AWS itself and every job failed "no AWS credentials" (tests/e2e/test_hosts.py, whose workers have no AWS
    configuration of their own). The endpoint here is a local server that answers S3's HeadBucket."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from apache_beam.io.filesystems import FileSystems
    from apache_beam.options.pipeline_options import PipelineOptions

    from incoherent.pipelines.runtime import options

    seen = []

    class HeadBucket(BaseHTTPRequestHandler):
        def do_HEAD(self):
            seen.append((self.path, self.headers.get("Authorization", "")))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), HeadBucket)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        for name in [k for k in os.environ if k.startswith("AWS_")]:
            monkeypatch.delenv(name)
        monkeypatch.setenv("AWS_CONFIG_FILE", os.devnull)
        monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", os.devnull)
        monkeypatch.setattr(options, "_STORAGE_OPTIONS", None)  # no driver options in this process
        monkeypatch.setattr(storage, "_REACHED", set())
        worker = PipelineOptions([f"--s3_endpoint_url=http://127.0.0.1:{server.server_port}",
                                  "--s3_access_key_id=worker-key", "--s3_secret_access_key=worker-secret",
                                  "--s3_region_name=us-east-1"])  # fmt: skip
        monkeypatch.setattr(FileSystems, "_pipeline_options", worker)
        storage.check_reachable("s3://the-bucket/in/docs.jsonl")
    finally:
        server.shutdown()
        server.server_close()
    assert [path for path, _ in seen] == ["/the-bucket"]
    assert "Credential=worker-key/" in seen[0][1]
