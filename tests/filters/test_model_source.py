"""A model named as on the Hub is taken from the local Hugging Face cache, offline, by every command.

The cache is laid out as ``huggingface_hub`` writes it (``models--NAME/blobs/<sha>``, ``snapshots/<commit>/``
holding links into ``blobs/``, ``refs/main`` naming the commit) in a temporary folder that ``HF_HUB_CACHE``
points at, with ``HF_HUB_OFFLINE=1``; the models are the tiny real ones of ``tests/tiny_lm.py`` and
``tests/tiny_model.py``.
"""

from __future__ import annotations

import hashlib
import os
import shutil

import pytest

from incoherent.filters.model_source import cached_snapshot, hub_cache_dir, resolve_model
from incoherent.schemas.records import InputError
from tests.conftest import run_cli
from tests.corpora.test_score_shuffle import data_dir  # noqa: F401
from tests.tiny_lm import tiny_gpt2_dir  # noqa: F401
from tests.tiny_model import tiny_base_dir  # noqa: F401

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def put_in_cache(cache, name: str, model_dir: str) -> str:
    """Copy ``model_dir`` into ``cache`` as the Hub client stores ``name``; returns the snapshot folder."""
    repo = os.path.join(cache, "models--" + name.replace("/", "--"))
    blobs, snapshot = os.path.join(repo, "blobs"), os.path.join(repo, "snapshots", COMMIT)
    os.makedirs(blobs, exist_ok=True)
    os.makedirs(snapshot, exist_ok=True)
    for file in sorted(os.listdir(model_dir)):
        data = open(os.path.join(model_dir, file), "rb").read()
        blob = hashlib.sha256(data).hexdigest()
        with open(os.path.join(blobs, blob), "wb") as f:
            f.write(data)
        os.symlink(os.path.join("..", "..", "blobs", blob), os.path.join(snapshot, file))
    os.makedirs(os.path.join(repo, "refs"), exist_ok=True)
    with open(os.path.join(repo, "refs", "main"), "w") as f:
        f.write(COMMIT)
    return snapshot


@pytest.fixture
def hub_cache(tmp_path, monkeypatch, tiny_gpt2_dir, tiny_base_dir):  # noqa: F811
    cache = tmp_path / "hf-cache"
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    put_in_cache(cache, "gpt2", tiny_gpt2_dir)
    put_in_cache(cache, "my-org/tiny-xlnet", tiny_base_dir)
    return cache


def test_the_cache_is_found_as_huggingface_hub_finds_it(monkeypatch, tmp_path):
    for variable in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert hub_cache_dir() == str(tmp_path / ".cache" / "huggingface" / "hub")
    monkeypatch.setenv("XDG_CACHE_HOME", "/x")
    assert hub_cache_dir() == "/x/huggingface/hub"
    monkeypatch.setenv("HF_HOME", "/h")
    assert hub_cache_dir() == "/h/hub"
    monkeypatch.setenv("HF_HUB_CACHE", "/c")
    assert hub_cache_dir() == "/c"


def test_resolves_names_directories_and_refuses_the_rest(hub_cache, tiny_gpt2_dir):  # noqa: F811
    snapshot = str(hub_cache / "models--gpt2" / "snapshots" / COMMIT)
    assert resolve_model("gpt2", "MODEL_DIR") == cached_snapshot("gpt2") == snapshot
    assert resolve_model("my-org/tiny-xlnet", "--base-model").endswith(
        f"models--my-org--tiny-xlnet/snapshots/{COMMIT}"
    )
    assert resolve_model(tiny_gpt2_dir, "MODEL_DIR") == tiny_gpt2_dir
    assert resolve_model("gs://bucket/model", "MODEL_DIR") == "gs://bucket/model"
    with pytest.raises(InputError, match=r"^--base-model gpt3: no such model directory, and no Hub model"):
        resolve_model("gpt3", "--base-model")
    with pytest.raises(InputError, match=r"^MODEL_DIR \./gpt2: no such model directory$"):
        resolve_model("./gpt2", "MODEL_DIR")  # a path is never looked up in the cache
    for bad in ("../models--gpt2", "a/b/c", "x--y"):
        assert cached_snapshot(bad) is None
    (hub_cache / "models--gpt2" / "refs" / "main").write_text("not-a-commit")
    assert cached_snapshot("gpt2") is None


def test_score_shuffle_takes_a_cached_name(hub_cache, data_dir, tmp_path, capsys):  # noqa: F811
    by_name, by_dir = tmp_path / "by-name", tmp_path / "by-dir"
    assert run_cli("score-shuffle", "gpt2", data_dir, "--out", by_name, "--pool-size", "8") == 0
    snapshot = cached_snapshot("gpt2")
    assert run_cli("score-shuffle", snapshot, data_dir, "--out", by_dir, "--pool-size", "8") == 0
    capsys.readouterr()
    scores = sorted(os.listdir(by_name / "scores"))
    assert scores and all(
        (by_name / "scores" / f).read_bytes() == (by_dir / "scores" / f).read_bytes() for f in scores
    )
    assert run_cli("score-shuffle", "gpt3", data_dir, "--out", tmp_path / "x") == 2
    assert capsys.readouterr().err.startswith("error: MODEL_DIR gpt3: no such model directory, and no Hub")


def test_every_model_taker_resolves_cached_names(hub_cache):
    from incoherent.filters.lm_load import check_language_model
    from incoherent.filters.model import load_base_model
    from incoherent.filters.shuffle_classifier import load_base_classifier

    model, tokenizer = load_base_model("my-org/tiny-xlnet")  # train-filter --base-model
    assert model.config.num_labels == 2 and len(tokenizer) > 2
    model, _ = load_base_classifier("my-org/tiny-xlnet")  # train-shuffle --base-model
    assert model.config.num_labels == 2
    assert check_language_model(resolve_model("gpt2", "--base-model")) == "causal"  # finetune-lm


def test_a_broken_cached_model_is_checked_like_a_directory(hub_cache):
    snapshot = cached_snapshot("gpt2")
    os.remove(os.path.join(snapshot, "model.safetensors"))
    with pytest.raises(InputError, match="no model.safetensors weights"):
        from incoherent.filters.lm_load import check_language_model

        check_language_model(resolve_model("gpt2", "MODEL_DIR"))
    shutil.rmtree(snapshot)
    assert cached_snapshot("gpt2") is None


def test_a_build_config_filter_may_be_a_cached_name(hub_cache, tmp_path):
    import yaml

    from incoherent.pipelines.build.config import check_config, load_config
    from tests.conftest import ROOT

    config = {"base": str(ROOT), "sources": {"cnn": {"kind": "cnn", "inputs": ["samples/cnn/frank"]}}}
    for model, expected in (
        ("my-org/tiny-xlnet", cached_snapshot("my-org/tiny-xlnet")),
        ("no-such-model", None),
    ):
        path = tmp_path / f"{model.replace('/', '_')}.yaml"
        path.write_text(yaml.safe_dump({**config, "intruders": {"filter": model}}))
        if expected is None:
            with pytest.raises(InputError, match=r"intruders\.filter: no-such-model not found"):
                check_config(load_config(str(path)), str(path))
        else:
            assert check_config(load_config(str(path)), str(path))["intruders"]["filter"] == expected


@pytest.mark.parametrize(
    "argv",
    [
        ["score-shuffle", "no-such-org/no-such-model", "{data}", "--out", "{out}"],
        ["evaluate", "no-such-org/no-such-model", "{data}"],
        ["train-filter", "{data}", "--base-model", "no-such-org/no-such-model", "--out", "{out}"],
        ["finetune-lm", "{data}", "--base-model", "no-such-org/no-such-model", "--out", "{out}"],
        ["train-shuffle", "{data}", "--base-model", "no-such-org/no-such-model", "--out", "{out}"],
    ],
)
def test_a_missing_model_is_refused_at_once_with_the_offline_routes(tmp_path, argv):
    """Before torch or Beam is imported (they took the refusal to 19.6 s), in under a second; the line says
    how a machine without the Hub gets a model (a save_pretrained folder, a copied cache and HF_HOME)."""
    import subprocess
    import sys

    from tests.conftest import ROOT

    (tmp_path / "data").mkdir()
    args = [a.format(data=tmp_path / "data", out=tmp_path / "out") for a in argv]
    code = (
        "import sys, time\n"
        "from incoherent.pipelines.cli import main\n"
        "start = time.perf_counter()\n"
        f"rc = main({args!r})\n"
        "print(rc, round(time.perf_counter() - start, 3), sorted(m for m in ('torch', 'transformers', "
        "'apache_beam') if m in sys.modules))\n"
    )
    env = dict(os.environ, HF_HOME=str(tmp_path / "empty-hf-home"), PYTHONPATH=str(ROOT))
    env.pop("HF_HUB_CACHE", None)
    env.pop("HUGGINGFACE_HUB_CACHE", None)
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    rc, seconds, heavy = done.stdout.split(" ", 2)
    assert (rc, heavy.strip()) == ("2", "[]"), done.stderr
    assert float(seconds) < 1.0
    (line,) = done.stderr.splitlines()
    assert line.startswith("error: ") and "no-such-org/no-such-model: no such model directory" in line
    assert f"({tmp_path / 'empty-hf-home' / 'hub'})" in line
    assert (
        "save_pretrained" in line and "HF_HOME" in line and "docs/install.md#models-without-the-hub" in line
    )
    assert not (tmp_path / "out").exists()


def test_a_cache_copied_from_another_machine_is_found_through_hf_home(tmp_path, monkeypatch, tiny_gpt2_dir):  # noqa: F811
    """docs/install.md#models-without-the-hub: copy a machine's Hugging Face home, point HF_HOME at it."""
    there = tmp_path / "machine-with-hub" / "huggingface"
    put_in_cache(there / "hub", "openai-community/gpt2", tiny_gpt2_dir)
    here = tmp_path / "copied" / "huggingface"
    shutil.copytree(there, here, symlinks=True)  # the snapshot's links are relative: they survive the copy
    for variable in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("HF_HOME", str(here))
    snapshot = resolve_model("openai-community/gpt2", "MODEL_DIR")
    assert snapshot == str(here / "hub" / "models--openai-community--gpt2" / "snapshots" / COMMIT)
    assert sorted(os.listdir(snapshot)) == sorted(os.listdir(tiny_gpt2_dir))
    from incoherent.filters.lm_load import check_language_model

    assert check_language_model(snapshot) == "causal"  # the copied folder is checked like any model folder
