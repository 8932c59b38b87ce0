"""A stage's parameters declared once (issue 49): each build parameter is a flag of its stage's command (the
config key is the flag), checked by that command's parser and ``check_options`` before any work, and what a
later stage must share with an earlier one (``AGREE_WITH``: the index's n-gram order and hash size) is read
from the earlier stage's output (``index.json``), never assumed."""

from __future__ import annotations

import json

import pytest
import yaml

from incoherent.pipelines.build.config import SECTION_COMMANDS, check_config, command_flags, load_config
from incoherent.schemas.records import InputError
from tests.conftest import ROOT, SAMPLES, read_rows, run_cli

WSJ = SAMPLES / "wsj" / "wsj.jsonl"

# Every build parameter with a value other than its default, and where its stage's run summary says it.
SWEEP = {
    "index": {"ngram": (1, "ngram"), "hash_size": (65536, "hash_size")},
    "neighbors": {
        "k": (3, "k"),
        "block_rows": (16, "block_rows"),
        "threads": (1, "threads_per_worker"),
        "ngram": (1, "ngram"),  # must be the index's: read from its index.json
        "hash_size": (65536, "hash_size"),
    },
    "intruders": {
        "similarity_threshold": (0.5, "similarity_threshold"),
        "drift_threshold": (0.7, "drift_threshold"),
        "validation_fraction": (0.1, "validation_fraction"),
        "sample": (40, "sample.wsj"),
        "seed": (7, "seed"),
    },
    "shuffle": {
        "block_sizes": ([1, 2], "block_sizes"),
        "max_sentences": (12, "max_sentences"),
        "permutations": (2, "permutations"),
        "test_fraction": (0.5, "fractions.test"),
        "validation_fraction": (0.25, "fractions.validation"),
        "sample": (30, "sample.wsj"),
        "seed": (7, "seed"),
    },
}
# Parameters the sweep leaves out, and why.
NOT_SWEPT = {
    "intruders": {
        "filter": "needs a trained classifier: tests/filters and test_intruders_cli run it",
        **dict.fromkeys(
            ("device", "batch_size", "max_length", "easy_threshold", "torch_threads"), "only with a filter"
        ),
        "k": "neighbors.k is the build's k for both stages",
    }
}


def test_the_sweep_covers_every_build_parameter():
    for section, (module, reserved) in SECTION_COMMANDS.items():
        declared = command_flags(module) - set(reserved)
        assert declared == set(SWEEP[section]) | set(NOT_SWEPT.get(section, {})), section


def write(tmp_path, **sections):
    config = {"base": str(ROOT), "sources": {"wsj": {"kind": "text", "inputs": [str(WSJ)]}}, **sections}
    path = tmp_path / "build.yaml"
    path.write_text(yaml.safe_dump(config))
    return str(path)


def test_a_later_stage_that_disagrees_with_the_index_is_refused_before_any_work(tmp_path):
    path = write(tmp_path, neighbors={"hash_size": 65536})  # the index is built with the default 2**24
    with pytest.raises(InputError) as error:
        check_config(load_config(path), path)
    assert "neighbors.hash_size: 65536 differs from the index stage's hash_size (16777216)" in str(
        error.value
    )
    path = write(tmp_path, index={"hash_size": 65536}, neighbors={"hash_size": 65536})
    assert check_config(load_config(path), path)["index"] == {"hash_size": 65536}
    out = tmp_path / "out"
    path = write(tmp_path, index={"hash_size": 1})
    assert run_cli("build", path, "--out", out) == 2  # the index's own check, before any work
    assert not out.exists()


def test_hash_size_chain_index_neighbors_intruders(tmp_path, capsys):
    """``index --hash-size 65536``, then ``neighbors`` with it (or reading it from the index), then
    ``intruders`` on them: issue 49's chain failed at the last step ("index built with other parameters")."""
    docs, index, nbrs = tmp_path / "docs", tmp_path / "index", tmp_path / "nbrs"
    assert run_cli("ingest", "text", WSJ, "--source", "wsj", "--head", "60", "--out", docs) == 0
    assert run_cli("index", docs, "--out", index, "--hash-size", "65536") == 0
    assert json.loads((index / "index.json").read_text())["hash_size"] == 65536
    assert run_cli("neighbors", docs, "--index", index, "--hash-size", "65536", "--out", nbrs) == 0
    assert json.loads((nbrs / "run_summary.json").read_text())["params"]["hash_size"] == 65536
    capsys.readouterr()
    assert run_cli("neighbors", docs, "--index", index, "--hash-size", "1024", "--out", tmp_path / "n2") == 2
    assert "--hash-size 1024: the index" in capsys.readouterr().err and not (tmp_path / "n2").exists()
    assert run_cli("neighbors", docs, "--index", index, "--out", tmp_path / "n3") == 0  # the index's own
    assert json.loads((tmp_path / "n3" / "run_summary.json").read_text())["params"]["hash_size"] == 65536
    out = tmp_path / "out"
    assert (
        run_cli("intruders", docs, "--index", f"wsj={index}", "--neighbors", f"wsj={nbrs}", "--out", out) == 0
    )
    assert read_rows(out, "intruder-wsj")


def value_at(summary: dict, where: str):
    for key in where.split("."):
        summary = summary[key]
    return summary


@pytest.mark.e2e
def test_every_build_parameter_reaches_the_output_the_summary_and_the_card(tmp_path):
    sections = {
        section: {key: value for key, (value, _) in values.items()} for section, values in SWEEP.items()
    }
    seed = sections["intruders"].pop("seed")
    sections["shuffle"].pop("seed")
    path = write(tmp_path, seed=seed, **sections)
    out = tmp_path / "out"
    assert run_cli("build", path, "--out", out, "--quiet") == 0
    work = out / "work"
    summaries = {
        "index": work / "retrieval" / "wsj" / "index",
        "neighbors": work / "retrieval" / "wsj" / "neighbors",
        "intruders": work / "intruders",
        "shuffle": work / "shuffle" / "wsj",
    }
    for section, values in SWEEP.items():
        params = json.loads((summaries[section] / "run_summary.json").read_text())["params"]
        for key, (value, where) in values.items():
            got = value_at(params, where)
            assert str(got) == str(value), f"{section}.{key}: the run summary has {got!r}"
    # The output: each value changed what was written.
    meta = json.loads((summaries["index"] / "index.json").read_text())
    assert (meta["ngram"], meta["hash_size"]) == (1, 65536)
    assert max(len(row["neighbors"]) for row in read_rows(summaries["neighbors"], "neighbors")) == 3
    shuffled = read_rows(out / "dataset", "shuffle-wsj")
    assert {r["block_size"] for r in shuffled} <= {1, 2} and {r["split"] for r in shuffled} >= {
        "test",
        "validation",
    }
    intruder_rows = read_rows(out / "dataset", "intruder-wsj")
    assert len(intruder_rows) <= 40 and "validation" in {r["split"] for r in intruder_rows}
    # The card: the index line from index.json, and the build config.
    card = (out / "dataset" / "README.md").read_text()
    assert "1-grams hashed into 65,536 features" in card
    assert "similarity threshold `0.5`" in card and "drift threshold `0.7`" in card
    config_block = yaml.safe_load(
        card.split("### Build config", 1)[1].split("```yaml", 1)[1].split("```", 1)[0]
    )
    for section, values in sections.items():
        assert config_block[section] == values, section
    assert config_block["seed"] == seed
