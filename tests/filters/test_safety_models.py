"""Model directories, publishing and full disks on hostile input: one line, exit 2, nothing run or written.

A model directory whose configs point at Python files of its own (``auto_map``) or name a model type that
transformers does not implement is refused before transformers reads it, by every command that loads a model;
its code, which would write a marker file, never runs. Also: pickled or broken safetensors weights, a model
without a tokenizer, links that leave a dataset folder, a Hub that never answers, a full disk, and no machine
path in any tracked file.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import socket
import subprocess
import threading

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from incoherent.schemas import INTRUDER_SCHEMA
from incoherent.schemas.records import InputError
from tests.conftest import ROOT, SAMPLES, run_cli
from tests.corpora.test_score_shuffle import shuffle_rows, write_shuffles
from tests.tiny_lm import tiny_gpt2_dir  # noqa: F401
from tests.tiny_model import intruder_rows, sample_documents, write_intruder_build

EVIL_CODE = """import os
open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "MARKER"), "w").write("the model's code ran")
from transformers import PretrainedConfig, PreTrainedModel
class EvilConfig(PretrainedConfig):
    model_type = "evilmodel"
class EvilModel(PreTrainedModel):
    config_class = EvilConfig
"""
AUTO_MAP = {
    "AutoConfig": "evil.EvilConfig",
    "AutoModelForCausalLM": "evil.EvilModel",
    "AutoModelForSequenceClassification": "evil.EvilModel",
}


def write_weights(model_dir, tensors: dict | None = None) -> str:
    import numpy as np
    from safetensors.numpy import save_file

    path = os.path.join(model_dir, "model.safetensors")
    save_file(tensors or {"w": np.zeros(4, dtype=np.float32)}, path)
    return path


def model_dir(tmp_path, config: dict, files: dict[str, str] | None = None, weights: bool = True) -> str:
    path = tmp_path / "model"
    path.mkdir()
    (path / "config.json").write_text(json.dumps(config))
    for name, text in (files or {}).items():
        (path / name).write_text(text)
    if weights:
        write_weights(str(path))
    return str(path)


EVIL_DIRS = {
    "auto_map": (
        {"model_type": "evilmodel", "auto_map": AUTO_MAP, "architectures": ["EvilForCausalLM"]},
        {"evil.py": EVIL_CODE},
        "auto_map",
    ),
    "unknown model_type": (
        {"model_type": "evilmodel", "architectures": ["EvilForSequenceClassification"]},
        {"evil.py": EVIL_CODE},
        "model_type 'evilmodel'",
    ),
    "auto_map in tokenizer_config": (
        {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"]},
        {
            "evil.py": EVIL_CODE,
            "tokenizer_config.json": json.dumps({"auto_map": {"AutoTokenizer": ["evil.T", None]}}),
        },
        "tokenizer_config.json: `auto_map`",
    ),
}


@pytest.fixture(params=sorted(EVIL_DIRS))
def evil_dir(request, tmp_path, monkeypatch):
    """A model directory whose code, if it ever ran, would write ``MARKER``; any prompt fails the test."""

    def no_prompt(*args, **kwargs):
        raise AssertionError("transformers asked whether to run the model's code")

    monkeypatch.setattr("builtins.input", no_prompt)
    config, files, expected = EVIL_DIRS[request.param]
    return model_dir(tmp_path, config, files), expected


@pytest.fixture(scope="module")
def shuffles(tmp_path_factory) -> str:
    return write_shuffles(tmp_path_factory.mktemp("shuffles"), shuffle_rows(permutations=1, docs=2))


@pytest.fixture(scope="module")
def intruders(tmp_path_factory) -> str:
    rows = intruder_rows(sample_documents())
    return write_intruder_build(
        str(tmp_path_factory.mktemp("intruders")),
        {"train": rows[:4], "validation": rows[4:6], "test": rows[6:8]},
    )


def one_line_error(capsys, *expected: str, after_progress: bool = False) -> str:
    """The one line on stderr (``after_progress``: after transformers' progress bar of a model it loaded)."""
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    if after_progress:
        lines = [line for line in lines if not line.startswith("Loading weights:")]
    assert len(lines) == 1 and lines[0].startswith("error: "), captured.err
    for text in expected:
        assert text in lines[0], lines[0]
    return lines[0]


def assert_refused(capsys, model: str, out=None, *expected: str) -> None:
    one_line_error(capsys, *expected)
    assert not os.path.exists(os.path.join(model, "MARKER")), "the model's code ran"
    if out is not None:
        assert not os.path.exists(out), "something was written"


def test_score_shuffle_refuses_a_model_with_code(evil_dir, shuffles, tmp_path, capsys):
    model, expected = evil_dir
    out = tmp_path / "scores"
    assert run_cli("score-shuffle", model, shuffles, "--out", out) == 2
    assert_refused(capsys, model, out, expected)


def test_evaluate_refuses_a_model_with_code(evil_dir, intruders, tmp_path, capsys):
    model, expected = evil_dir
    out = tmp_path / "eval.json"
    assert run_cli("evaluate", model, intruders, "--out", out, beam=[]) == 2
    assert_refused(capsys, model, out, expected)


def test_train_filter_refuses_a_base_model_with_code(evil_dir, intruders, tmp_path, capsys):
    model, expected = evil_dir
    out = tmp_path / "trained"
    assert (
        run_cli("train-filter", intruders, "--out", out, "--base-model", model, "--device", "cpu", beam=[])
        == 2
    )
    assert_refused(capsys, model, out, expected)


def test_the_filter_stage_and_a_build_refuse_a_filter_with_code(evil_dir, tmp_path, capsys):
    from incoherent.pipelines.intruders.filter_stage import ScoreCandidates

    model, expected = evil_dir
    with pytest.raises(InputError, match="refusing"):
        ScoreCandidates(model)
    config = tmp_path / "build.yaml"
    config.write_text(
        f"base: {ROOT}\nsources: {{cnn: {{kind: cnn, inputs: [samples/cnn/allennlp]}}}}\n"
        f"intruders: {{filter: {model}}}\n"
    )
    out = tmp_path / "build"
    assert run_cli("build", config, "--out", out) == 2
    assert_refused(capsys, model, out, expected)


def test_every_from_pretrained_refuses_remote_code():
    """Each ``from_pretrained`` call in the code passes ``trust_remote_code=False`` itself."""
    files = subprocess.run(
        ["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    calls = 0
    for rel in files:
        if not rel.startswith(("filters/", "pipelines/", "bench/", "corpora/", "retrieval/", "sources/")):
            continue
        text = (ROOT / rel).read_text(encoding="utf-8")
        for part in text.split("from_pretrained(")[1:]:
            calls += 1
            call = part[: part.index(")") + 1] if ")" in part else part
            assert "trust_remote_code=False" in call, f"{rel}: from_pretrained({call[:80]}"
    assert calls >= 6


@pytest.mark.parametrize(
    "case",
    ["pickle only", "truncated", "header bomb", "not json", "tensor past the end", "shard outside"],
)
def test_weights_that_are_not_clean_safetensors_are_one_line(case, shuffles, tmp_path, capsys):
    model = model_dir(tmp_path, {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"]}, weights=False)
    weights = os.path.join(model, "model.safetensors")
    expected = {
        "pickle only": "only pickled weights",
        "truncated": "truncated safetensors",
        "header bomb": "safetensors header of",
        "not json": "corrupt safetensors header",
        "tensor past the end": "truncated safetensors",
        "shard outside": "not a .safetensors file of the model directory",
    }[case]
    if case == "pickle only":
        with open(os.path.join(model, "pytorch_model.bin"), "wb") as f:
            f.write(b"\x80\x04pickle that must never be loaded")
    elif case == "truncated":
        write_weights(model)
        with open(weights, "r+b") as f:
            f.truncate(os.path.getsize(weights) - 3)
    elif case == "header bomb":
        with open(weights, "wb") as f:
            f.write((1 << 62).to_bytes(8, "little") + b"{}")
    elif case == "not json":
        with open(weights, "wb") as f:
            f.write((4).to_bytes(8, "little") + b"\xff\xfe{}")
    elif case == "tensor past the end":
        header = json.dumps({"w": {"dtype": "F32", "shape": [1000], "data_offsets": [0, 4000]}}).encode()
        with open(weights, "wb") as f:
            f.write(len(header).to_bytes(8, "little") + header + bytes(16))
    else:
        index = {"weight_map": {"w": "../elsewhere.safetensors"}}
        (tmp_path / "model" / "model.safetensors.index.json").write_text(json.dumps(index))
    out = tmp_path / "scores"
    assert run_cli("score-shuffle", model, shuffles, "--out", out) == 2
    assert_refused(capsys, model, out, expected)


@pytest.fixture(scope="module")
def gpt2_without_tokenizer(tmp_path_factory) -> str:
    """A tiny GPT-2 saved without its tokenizer (an untrained model of 400 ids)."""
    from transformers import GPT2Config, GPT2LMHeadModel

    path = str(tmp_path_factory.mktemp("gpt2-no-tokenizer"))
    config = GPT2Config(vocab_size=400, n_positions=32, n_embd=16, n_layer=1, n_head=2)
    GPT2LMHeadModel(config).save_pretrained(path, safe_serialization=True)
    return path


def test_score_shuffle_without_a_tokenizer_is_an_error_not_an_empty_result(
    gpt2_without_tokenizer, shuffles, tmp_path, capsys
):
    out = tmp_path / "scores"
    assert run_cli("score-shuffle", gpt2_without_tokenizer, shuffles, "--out", out) == 2
    one_line_error(capsys, "no tokenizer files")
    assert not os.path.exists(out)


def test_score_shuffle_that_scores_nothing_is_not_complete(tiny_gpt2_dir, tmp_path, capsys):  # noqa: F811
    rows = [dict(row, original=["", " "], shuffled=[" ", ""]) for row in shuffle_rows(permutations=1, docs=2)]
    data = write_shuffles(tmp_path / "empty", rows)
    out = tmp_path / "scores"
    assert run_cli("score-shuffle", tiny_gpt2_dir, data, "--out", out) == 2
    one_line_error(capsys, "no pair was scored (empty_document", after_progress=True)
    assert not (out / "results.json").exists() and not (out / "run_summary.json").exists()


def test_a_tokenizer_with_an_empty_vocabulary_is_refused(gpt2_without_tokenizer, tmp_path):
    from incoherent.filters.model import open_tokenizer

    model = tmp_path / "model"
    model.mkdir()
    (model / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "GPT2Tokenizer"}))
    (model / "config.json").write_text((open(os.path.join(gpt2_without_tokenizer, "config.json"))).read())
    with pytest.raises(InputError, match="tokenizer"):
        open_tokenizer(str(model))


# --------------------------------------------------------------------------------------------- publish


@pytest.fixture
def dataset(tmp_path):
    """The smallest folder publish accepts: a card and one table."""
    folder = tmp_path / "dataset"
    (folder / "intruder-wsj").mkdir(parents=True)
    (folder / "figures").mkdir()
    (folder / "README.md").write_text("# card\n")
    pq.write_table(
        pa.Table.from_pylist([], schema=INTRUDER_SCHEMA),
        folder / "intruder-wsj" / "test-00000-of-00001.parquet",
    )
    return folder


def test_publish_refuses_a_link_that_leaves_the_dataset(dataset, tmp_path, capsys):
    outside = tmp_path / "secret.png"
    outside.write_bytes(b"not yours")
    (dataset / "figures" / "leak.png").symlink_to(outside)
    assert run_cli("publish", dataset, "--repo-id", "me/x", "--dry-run", beam=[]) == 2
    one_line_error(capsys, "leak.png", "outside")
    (dataset / "figures" / "leak.png").unlink()
    (dataset / "figures" / "folder").symlink_to(tmp_path, target_is_directory=True)
    assert run_cli("publish", dataset, "--repo-id", "me/x", "--dry-run", beam=[]) == 2
    one_line_error(capsys, "folder", "outside")


def test_publish_uploads_only_regular_files_inside(dataset, capsys):
    from incoherent.corpora.publish import files_to_upload

    (dataset / "figures" / "a.png").write_bytes(b"png")
    (dataset / "figures" / "same.png").symlink_to(dataset / "figures" / "a.png")  # inside: allowed
    os.mkfifo(dataset / "figures" / "pipe.png")  # never opened
    assert files_to_upload(str(dataset), False) == [
        "README.md",
        "figures/a.png",
        "figures/same.png",
        "intruder-wsj/test-00000-of-00001.parquet",
    ]


@contextlib.contextmanager
def hub_server(monkeypatch, serve):
    """A server on 127.0.0.1 that hands each connection to ``serve(conn, stop)`` in a thread of its own, the Hub
    client pointed at it; ``stop`` is set when the test ends."""
    import huggingface_hub.constants as constants

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.1)
    stop = threading.Event()

    def accept():
        while not stop.is_set():
            try:
                conn = server.accept()[0]
            except OSError:
                continue
            threading.Thread(target=serve, args=(conn, stop), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.getsockname()[1]}"
    monkeypatch.setenv("HF_ENDPOINT", url)
    monkeypatch.setattr(constants, "ENDPOINT", url)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    try:
        yield url
    finally:
        stop.set()
        thread.join(timeout=5)
        server.close()


@pytest.fixture
def silent_hub(monkeypatch):
    """A server on 127.0.0.1 that accepts connections and never answers; the Hub client pointed at it."""

    def hold(conn, stop):
        with conn:
            stop.wait()

    with hub_server(monkeypatch, hold) as url:
        yield url


@pytest.mark.e2e
def test_publish_to_a_hub_that_never_answers_times_out_with_one_line(dataset, silent_hub, capsys):
    import time

    started = time.monotonic()
    code = run_cli("publish", dataset, "--repo-id", "me/x", "--token", "hf_x", "--timeout", "1", beam=[])
    assert code == 2 and time.monotonic() - started < 30
    one_line_error(capsys, "did not answer within 1 s", silent_hub)


@pytest.fixture
def dripping_hub(monkeypatch):
    """A server on 127.0.0.1 that reads each request and answers it one byte every 0.2 s, never finishing (each
    read is well within any per-request timeout); the Hub client pointed at it."""

    def drip(conn, stop):
        with conn, contextlib.suppress(OSError):
            conn.recv(65536)
            conn.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n"
            )
            while not stop.wait(0.2):
                conn.sendall(b" ")

    with hub_server(monkeypatch, drip) as url:
        yield url


def test_publish_to_a_hub_that_drips_its_answers_is_cut_off_by_max_time(dataset, dripping_hub, capsys):
    """--timeout bounds each read, which a byte every 0.2 s never exceeds; --max-time bounds the whole publish."""
    import time

    started = time.monotonic()
    code = run_cli("publish", dataset, "--repo-id", "me/x", "--token", "hf_x", "--timeout", "5",
                   "--max-time", "2", beam=[])  # fmt: skip
    assert code == 2 and time.monotonic() - started < 20
    one_line_error(
        capsys, "the publish did not finish within 2 s (--max-time)", "re-run `incoherent publish`"
    )
    assert run_cli("publish", dataset, "--repo-id", "me/x", "--max-time", "0", beam=[]) == 2
    one_line_error(capsys, "--max-time: must be > 0 seconds, got 0")


# --------------------------------------------------------------------------------------------- disk full


def _disk_full(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "OUT/some-file")


@pytest.mark.parametrize(
    "where",
    ["incoherent.pipelines.runtime.run.write_summary", "incoherent.pipelines.runtime.tables.write_shard"],
)
def test_a_full_disk_is_one_line_and_no_complete_run(where, tmp_path, capsys, monkeypatch):
    """On the driver (the run summary) and inside a Beam worker (a table shard, reported wrapped by Beam)."""
    monkeypatch.setattr(where, _disk_full)
    out = tmp_path / "docs"
    assert run_cli("ingest", "cnn", SAMPLES / "cnn" / "allennlp", "--out", out) == 2
    one_line_error(capsys, "no space left on device")
    assert not (out / "run_summary.json").exists()


# --------------------------------------------------------------------------------------------- machine paths


def test_no_tracked_file_names_a_machine_path():
    import re

    # not after a name, a `}` or a `)`: f"{out}/work/..." and os.path.join(...)/work are relative
    pattern = re.compile(r"(?<![\w.~}\])-])/(?:" + "work" + "|" + "root" + r")/")
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    named = []
    for rel in files.split():
        path = ROOT / rel
        if not path.is_file() or path.stat().st_size > 5 << 20:
            continue
        text = path.read_bytes().decode("utf-8", errors="ignore")
        named += [f"{rel}: {m.group(0)}" for m in pattern.finditer(text)]
    assert not named, named
