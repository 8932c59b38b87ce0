"""A few edited bytes of a model directory never cost gigabytes (issue #31): the config is checked against the
safetensors headers' shapes before transformers builds the model, and tokenizer files are bounded by size.

Tiny real models (tests/tiny_lm.py, tests/tiny_model.py) with their ``config.json`` tampered with; the loader
runs in a fresh interpreter whose own peak memory (``VmHWM``) is measured.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from incoherent.filters import model_files
from incoherent.schemas.records import InputError
from tests.conftest import ROOT, run_cli
from tests.corpora.test_score_shuffle import shuffle_rows, write_shuffles
from tests.tiny_lm import tiny_bert_dir, tiny_gpt2_dir  # noqa: F401
from tests.tiny_model import tiny_base_dir  # noqa: F401

# Before: n_layer=2000, n_embd=256 beside 42 KB of weights took 6.8 GB; n_positions=30000000 2.4 GB; a 436 MB
# vocab.json 2.3 GB. Importing torch and transformers alone is ~0.5 GB.
PEAK_MB = 1200


def child(code: str) -> tuple[float, list]:
    """Run ``code`` in a fresh interpreter: its own peak resident memory (``VmHWM``, MB; ``ru_maxrss`` would be
    inherited from this process) and the JSON values it printed, one a line."""
    script = textwrap.dedent(code) + (
        "\nprint(next(int(line.split()[1]) for line in open('/proc/self/status') if line.startswith('VmHWM:')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300, check=True
    )
    lines = done.stdout.strip().splitlines()
    return int(lines[-1]) / 1024, [json.loads(line) for line in lines[:-1]]


def hashes(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def tampered(src: str, dst: Path, **changes) -> Path:
    shutil.copytree(src, dst)
    config = json.loads((dst / "config.json").read_text())
    (dst / "config.json").write_text(json.dumps({**config, **changes}))
    return dst


CASES = [  # (loader, fixture, config changes, expected start of the message after "config.json: ")
    ("check_language_model", "tiny_gpt2_dir", {"n_layer": 2000, "n_embd": 256}, "the config makes wte.weight ["),
    ("check_language_model", "tiny_gpt2_dir", {"n_layer": 2000}, "the config describes a model of"),
    ("check_language_model", "tiny_gpt2_dir", {"n_positions": 30_000_000}, "the config makes wpe.weight [30000000, 16]"),
    ("load_base_model", "tiny_base_dir", {"n_layer": 3000}, "the config describes a model of"),
    ("load_base_model", "tiny_base_dir", {"d_inner": 4_000_000}, "the config makes layer.0.ff.layer_1.weight"),
    ("check_language_model", "tiny_gpt2_dir", {"text_config": {"model_type": "gpt2", "n_embd": 16}},
     "transformers cannot build the model this config describes (AttributeError: "),
]  # fmt: skip


@pytest.mark.e2e
def test_a_config_that_does_not_fit_its_weights_or_a_huge_vocab_is_refused_in_small_memory(request, tmp_path):
    """A nested ``text_config`` in a text model's config passed the checks and failed inside RunInference.
    Every case loads in one fresh interpreter (one import of torch): each is refused with its one line,
    and the interpreter's peak memory stays that of the imports."""
    models = []
    for i, (loader, fixture, changes, expected) in enumerate(CASES):
        model = tampered(request.getfixturevalue(fixture), tmp_path / f"model{i}", **changes)
        models.append((loader, model, f"{model / 'config.json'}: {expected}"))
    vocab = Path(shutil.copytree(request.getfixturevalue("tiny_gpt2_dir"), tmp_path / "vocab"))
    with open(vocab / "vocab.json", "wb") as f:
        f.truncate(436 << 20)  # sparse: 436 MB to the file system, no disk used
    big = f"{vocab / 'vocab.json'}: {436 << 20:,} bytes, larger than any real tokenizer file"
    models.append(("check_language_model", vocab, big))
    before = {str(m): hashes(m) for _, m, _ in models}
    calls = "\n".join(f"attempt({loader!r}, {str(model)!r})" for loader, model, _ in models)
    peak, printed = child(
        textwrap.dedent(
            """
        import json
        from incoherent.filters.lm_load import check_language_model
        from incoherent.filters.model import load_base_model
        from incoherent.schemas.records import InputError

        def attempt(loader, path):
            try:
                globals()[loader](path)
                print(json.dumps("loaded " + path))
            except InputError as exc:
                print(json.dumps(str(exc)))
            """
        )
        + calls
    )
    assert peak < PEAK_MB, f"{peak:.0f} MB"
    for (_, _model, expected), message in zip(models, printed, strict=True):
        assert message.startswith(expected), message
        assert "refusing the model" in message or "refusing to read it" in message, message
    assert {str(m): hashes(m) for _, m, _ in models} == before


@pytest.mark.parametrize(
    "changes, expected",
    [
        ({"n_positions": 30_000_000}, "the config makes wpe.weight [30000000, 16]"),
        (
            {"text_config": {"model_type": "gpt2"}},
            "transformers cannot build the model this config describes",
        ),
    ],
)
def test_score_shuffle_on_a_tampered_model_is_one_line_and_writes_nothing(
    tiny_gpt2_dir,  # noqa: F811
    tmp_path,
    capsys,
    changes,
    expected,
):
    model = tampered(tiny_gpt2_dir, tmp_path / "model", **changes)
    shuffles = write_shuffles(tmp_path / "shuffles", shuffle_rows(permutations=1, docs=2))
    before = hashes(model)
    out = tmp_path / "scores"
    assert run_cli("score-shuffle", model, shuffles, "--out", out) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and expected in err[0], err
    assert not out.exists() and hashes(model) == before


def test_untouched_tiny_models_pass(tiny_gpt2_dir, tiny_bert_dir, tiny_base_dir):  # noqa: F811
    for model in (tiny_gpt2_dir, tiny_bert_dir, tiny_base_dir):
        model_files.check_model_files(model)


def test_a_header_whose_shape_does_not_match_its_bytes_is_refused(tiny_gpt2_dir, tmp_path):  # noqa: F811
    """A header may not claim a large tensor over a few bytes (the model would be built from the claim)."""
    model = Path(shutil.copytree(tiny_gpt2_dir, tmp_path / "model"))
    path = model / "model.safetensors"
    data = path.read_bytes()
    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8 : 8 + n])
    name = next(k for k in header if k.endswith("wpe.weight"))
    header[name]["shape"] = [30_000_000, 16]
    text = json.dumps(header).encode()  # the same tensor bytes: only the claimed shape changed
    path.write_bytes(len(text).to_bytes(8, "little") + text + data[8 + n :])
    with pytest.raises(InputError, match=r"shape \[30000000, 16\] does not match its"):
        model_files.check_model_files(str(model))
