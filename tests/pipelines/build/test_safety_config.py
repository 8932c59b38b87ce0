"""Build configs with wrong value types or ranges, or hostile YAML: one line naming the key and the file,
exit 2, before the first stage (nothing written under --out)."""

from __future__ import annotations

import pytest

from incoherent.pipelines.build.config import MAX_CONFIG_BYTES, MAX_NODES, parse_yaml
from incoherent.schemas.records import InputError
from tests.conftest import ROOT, run_cli

SOURCES = "sources:\n  cnn: {kind: cnn, inputs: [samples/cnn/allennlp]}\n"


def alias_bomb(levels: int = 9) -> str:
    """``card.name`` as nine levels of nine aliases: ~9**9 values from a few hundred bytes."""
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return "card:\n  name: {" + ", ".join(lines) + "}\n"


CASES = {
    "k ten": ("neighbors: {k: ten}\n", "neighbors.k: invalid int value: 'ten'"),
    "k zero": ("neighbors: {k: 0}\n", "neighbors.k: must be >= 1"),
    "permutations absurd": (
        "shuffle: {block_sizes: [2], permutations: 99999999999}\n",
        "shuffle.permutations: at most 1,000 shuffles per document and block size, got 99,999,999,999",
    ),
    "k absurd": ("neighbors: {k: 1000000000}\n", "neighbors.k: at most 100,000 neighbours per document"),
    "seed abc": ("seed: abc\n", "seed: must be a whole number"),
    "block size 0": ("shuffle: {block_sizes: [0]}\n", "shuffle.block_sizes: block sizes must be >= 1"),
    "similarity 2": (
        "intruders: {similarity_threshold: 2}\n",
        "intruders.similarity_threshold: must be in (0, 1]",
    ),
    "intruders k": ("intruders: {k: -1}\n", "intruders.k: must be >= 1"),
    "max sentences": ("shuffle: {max_sentences: 1}\n", "shuffle.max_sentences: must be >= 2"),
    "nested value": ("neighbors: {threads: {a: 1}}\n", "neighbors.threads: must be a number"),
    "card name": ("card: {name: [1, 2]}\n", "card.name: must be text"),
    "ingest option": (
        "sources:\n  w: {kind: wikipedia, inputs: [samples/wikipedia], options: {range_mb: lots}}\n",
        "sources.w.options.range_mb: invalid float value",
    ),
    "history not a list": (
        "sources:\n  w: {kind: wikipedia, inputs: [samples/wikipedia], history: samples/wikipedia}\n",
        "sources.w.history: must be a list of paths",
    ),
    "alias bomb": (alias_bomb(), f"more than {MAX_NODES:,} values once its aliases are expanded"),
    "duplicate key": (
        "neighbors: {k: 5}\nshuffle: {block_sizes: [2]}\nneighbors: {k: 6}\n",
        "the key 'neighbors' twice in one mapping (line 6)",
    ),
    "duplicate nested key": ("neighbors: {k: 5, k: 6}\n", "the key 'k' twice in one mapping (line 4)"),
    "deep nesting": ("card: {name: " + "[" * 5000 + "]" * 5000 + "}\n", "refused"),
}


def write_config(tmp_path, text: str, sources: bool = True) -> str:
    path = tmp_path / "build.yaml"
    path.write_text(f"base: {ROOT}\n" + (SOURCES if sources and "sources:" not in text else "") + text)
    return str(path)


def refused(capsys, path: str, out, expected: str) -> None:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {path}: "), err
    assert expected in err[0], err[0]
    assert not out.exists(), "a stage ran"


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_bad_config_value_stops_the_build_before_any_stage(case, tmp_path, capsys):
    text, expected = CASES[case]
    path, out = write_config(tmp_path, text), tmp_path / "out"
    assert run_cli("build", path, "--out", out) == 2
    refused(capsys, path, out, expected)


def test_a_config_that_is_not_utf8_or_too_big_is_one_line(tmp_path, capsys):
    out = tmp_path / "out"
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"base: caf\xe9\n" + SOURCES.encode())
    assert run_cli("build", path, "--out", out) == 2
    refused(capsys, str(path), out, "not UTF-8 text (byte 0xe9 at offset 9)")
    path = tmp_path / "big.yaml"
    path.write_bytes(SOURCES.encode() + b"#" * MAX_CONFIG_BYTES)
    assert run_cli("build", path, "--out", out) == 2
    refused(capsys, str(path), out, "not a build config")


def test_parse_yaml_bounds_aliases_but_keeps_plain_ones():
    assert parse_yaml("a: &x {k: 1}\nb: *x\n", "c.yaml") == {"a": {"k": 1}, "b": {"k": 1}}
    with pytest.raises(InputError, match="recursive alias"):
        parse_yaml("a: &x [*x]\n", "c.yaml")
    with pytest.raises(InputError, match="not valid YAML"):
        parse_yaml("a: !!python/object:os.system ls\n", "c.yaml")
    with pytest.raises(InputError, match="aliases are expanded"):
        parse_yaml(alias_bomb(), "c.yaml")


def test_the_bundled_config_passes_every_check():
    from incoherent.pipelines.build.config import (
        check_before_run,
        check_config,
        default_config_path,
        load_config,
    )
    from incoherent.pipelines.build.plan import WORK, plan

    path = default_config_path()
    raw = load_config(path)
    config = check_config(raw, path)
    check_before_run(raw, config, plan(config, WORK), path)
