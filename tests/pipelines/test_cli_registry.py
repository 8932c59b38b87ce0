"""``pipelines.commands.COMMANDS`` is the one table of commands; the build's maps and the fork server's preloads
derive from it, so renaming a module or a command breaks loudly here instead of silently elsewhere."""

from __future__ import annotations

import ast
import importlib.util

import pytest

from incoherent.pipelines import cli
from incoherent.pipelines.build import config as build_config
from incoherent.pipelines.build import processes as stage_process
from incoherent.pipelines.commands import COMMANDS, module_of, selected_module, stage_modules


def _defines(module: str) -> set[str]:
    path = importlib.util.find_spec(module).origin
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c.words))
def test_every_command_names_a_module_with_add_arguments_and_run(command):
    assert importlib.util.find_spec(command.module) is not None, f"{command.module} is gone"
    assert {"add_arguments", "run"} <= _defines(command.module)
    assert selected_module([*command.words, "--help"]) == command.module


def test_command_words_and_modules_are_unique():
    assert len({c.words for c in COMMANDS}) == len(COMMANDS)
    assert len({c.module for c in COMMANDS}) == len(COMMANDS)


def test_module_of_refuses_an_unknown_command():
    assert module_of("ingest", "cnn") == "incoherent.pipelines.ingest.cnn"
    with pytest.raises(KeyError, match="no command 'ingest nowhere'"):
        module_of("ingest", "nowhere")


def test_the_build_maps_derive_from_the_table():
    ingest = {c.words[1]: c.module for c in COMMANDS if c.words[0] == "ingest"}
    assert build_config.INGEST_MODULES == ingest
    assert set(build_config.KINDS) == set(ingest)
    for section, (module, _reserved) in build_config.SECTION_COMMANDS.items():
        assert module == module_of(section)
    built = set(ingest.values()) | {module for module, _ in build_config.SECTION_COMMANDS.values()}
    assert built | {module_of("index")} == set(stage_modules())  # every stage a build runs is preloaded


def test_the_fork_server_preloads_the_stage_modules():
    assert stage_process.PRELOAD[:4] == [
        "incoherent.pipelines.build.fork_server",  # first: Ctrl-C ignored while the rest loads
        "incoherent.pipelines.cli",
        "apache_beam",
        "incoherent.pipelines.build.processes",
    ]
    stages = stage_modules()
    assert stage_process.PRELOAD[4 : 4 + len(stages)] == stages
    # then what the stages import when they run (their Beam transforms), read from their run()
    assert {
        "incoherent.pipelines.index.transforms",
        "incoherent.pipelines.intruders.transforms",
        "incoherent.pipelines.runtime.run",
    } <= set(stage_process.PRELOAD[4 + len(stages) :])
    assert not any(m.startswith("filters") for m in stage_process.PRELOAD)
    for module in stage_process.PRELOAD:
        assert importlib.util.find_spec(module) is not None, module


@pytest.mark.parametrize(
    ("command", "argv"),
    [
        ("publish", ["publish", "out/none", "--repo-id", "me/x"]),
        ("train-shuffle", ["train-shuffle", "out/none", "--base-model", "m", "--out", "out/m"]),
        ("annotate report", ["annotate", "report", "out/none"]),
    ],
)
def test_a_beam_flag_given_to_a_command_that_runs_no_pipeline_is_one_line(command, argv, capsys):
    assert cli.main([*argv, "--direct_num_workers=2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {command}: unrecognized arguments: --direct_num_workers=2"]
