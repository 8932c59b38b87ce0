"""One option convention for every command, checked on the real parser (docs/commands.md#common-behaviour).

Every flag of every command of :data:`pipelines.commands.COMMANDS` is ``--kebab-case`` with help text that
shows its default; a list is given as repeated values (``--block-sizes 1 2 3``), never as one comma-separated
value; ``--overwrite``, ``--dry-run`` and ``--quiet`` mean the same everywhere. Also: ``--version``, help for a
bare ``incoherent`` and shell completion generated from the same parser.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import re
import shutil
import subprocess

import pytest

from incoherent.pipelines import cli
from incoherent.pipelines.commands import COMMANDS, OVERWRITE_HELP, build_parser

KEBAB = re.compile(r"^--[a-z0-9]+(-[a-z0-9]+)*$")


def command_parser(words: tuple[str, ...], parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    for word in words:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[word]
    return parser


def command_actions() -> list[tuple[str, argparse.Action]]:
    """``(command, action)`` for every argument of every command, from the parser with every command."""
    parser = build_parser(every_command=True)
    found = []
    for command in COMMANDS:
        sub = command_parser(command.words, parser)
        for action in sub._actions:
            if not isinstance(action, argparse._HelpAction):
                found.append((" ".join(command.words), action))
    return found


def renderings(value) -> set[str]:
    """The ways a default may be written in a help text."""
    if isinstance(value, list | tuple):
        return {" ".join(map(str, value)), ",".join(map(str, value))}
    out = {str(value)}
    if isinstance(value, float):
        out |= {f"{value:g}", f"{value:.0e}".replace("e-0", "e-"), str(value).removesuffix(".0")}
    return out


def convention_problems(actions: list[tuple[str, argparse.Action]]) -> list[str]:
    """What breaks the convention: a flag without help, a non-kebab flag, a list flag that takes one value or
    commas, a default the help does not show."""
    problems = []
    for command, action in actions:
        name = f"{command} {'/'.join(action.option_strings) or action.dest}"
        text = action.help or ""
        if len(re.findall(r"[A-Za-z]{2,}", text)) < 2:
            problems.append(f"{name}: no help text")
        for flag in action.option_strings:
            if flag.startswith("--") and not KEBAB.match(flag):
                problems.append(f"{name}: {flag} is not --kebab-case")
        if (
            re.search(r"\bcomma\b|comma-separated", text, re.I)
            or isinstance(action.default, str)
            and "," in action.default
        ):
            problems.append(f"{name}: a list given with commas")
        listy = isinstance(action, argparse._AppendAction)  # _ExtendAction is one too
        if listy or isinstance(action.default, list | tuple):
            if action.nargs not in ("+", "*") or type(action) is argparse._AppendAction:
                problems.append(f"{name}: a list must take repeated values (nargs='+', action='extend')")
        default = action.default
        shown = default in (None, False, [], argparse.SUPPRESS) or action.required
        if not shown and "default" not in text and not any(r in text for r in renderings(default)):
            problems.append(f"{name}: the help does not show the default {default!r}")
    return problems


def test_every_flag_follows_the_convention():
    actions = command_actions()
    assert len({c for c, _ in actions}) == len(COMMANDS)
    assert len(actions) > 150
    problems = convention_problems(actions)
    assert not problems, "\n".join(problems)


def test_the_check_catches_each_kind_of_fault():
    parser = argparse.ArgumentParser()
    parser.add_argument("--no-help")
    parser.add_argument("--snake_case", help="a value of some kind (default: x)")
    parser.add_argument("--sizes", default="1,2,3", help="block sizes k (default: 1,2,3)")
    parser.add_argument("--each", action="append", default=[], help="one value per flag (default: none)")
    parser.add_argument("--batch-size", type=int, default=16, help="examples per step")
    found = convention_problems([("x", a) for a in parser._actions[1:]])
    assert [p.split(": ", 1)[1] for p in found] == [
        "no help text",
        "--snake_case is not --kebab-case",
        "a list given with commas",
        "a list must take repeated values (nargs='+', action='extend')",
        "the help does not show the default 16",
    ]


def test_shared_flags_mean_the_same_everywhere():
    by_command: dict[str, dict[str, argparse.Action]] = {}
    for command, action in command_actions():
        for flag in action.option_strings:
            by_command.setdefault(command, {})[flag] = action
    for command in COMMANDS:
        name = " ".join(command.words)
        flags = by_command[name]
        module = importlib.import_module(command.module)
        assert "--quiet" in flags, name
        assert set(flags["--quiet"].help.split()) >= {"no", "progress", "bars"}
        overwrite = flags.get("--overwrite")
        if overwrite is not None:
            assert "own earlier output" in overwrite.help, name
            assert "nothing else there is touched" in overwrite.help, name
        runs_beam = getattr(module, "DRY_RUN", getattr(module, "TAKES_BEAM_ARGS", True))
        if runs_beam:
            assert "--dry-run" in flags and "nothing ran" not in flags["--dry-run"].help, name
    assert "--dry-run" in by_command["publish"]  # its own: lists the upload, uploads nothing
    assert OVERWRITE_HELP.format(where="--out") == by_command["shuffle"]["--overwrite"].help


@pytest.mark.parametrize(
    "argv, attribute, expected",
    [
        (["shuffle", "D", "--out", "O", "--block-sizes", "1", "3"], "block_sizes", [1, 3]),
        (["shuffle", "D", "--out", "O", "--sample", "wsj=5", "--sample", "cnn=3"], "sample", ["wsj=5", "cnn=3"]),
        (["score-shuffle", "M", "D", "--out", "O", "--config", "shuffle-a", "shuffle-b"], "config", ["shuffle-a", "shuffle-b"]),
        (["train-shuffle", "D", "--base-model", "M", "--out", "O", "--k", "1", "2"], "k", [1, 2]),
        (["intruders", "D", "--out", "O", "--index", "a=I", "b=J", "--sample", "a=3"], "index", ["a=I", "b=J"]),
        (["export", "insted", "D", "--out", "O", "--source", "cnn", "wikipedia"], "source", ["cnn", "wikipedia"]),
    ],
)  # fmt: skip
def test_lists_are_repeated_values(argv, attribute, expected):
    from incoherent.pipelines.commands import selected_module

    args, extra = build_parser(selected_module(argv)).parse_known_args(argv)
    assert getattr(args, attribute) == expected and extra == []


def test_a_comma_list_is_refused_with_one_line(capsys):
    with pytest.raises(SystemExit) as exit_:  # argparse: the usage, one error line, exit status 2
        cli.main(["shuffle", "samples/cnn/frank", "--out", "/nonexistent-out", "--block-sizes", "1,2"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    # the form earlier docs and scripts used: the line says how to write it
    assert "--block-sizes: '1,2': write a list as values separated by spaces: --block-sizes 1 2" in err
    assert "Traceback" not in err


def run_cli(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        try:
            code = cli.main(argv)
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue()


def test_version_and_help_without_a_command():
    code, out = run_cli(["--version"])
    assert code == 0 and re.fullmatch(r"incoherent \S+\n", out)
    code, out = run_cli([])
    assert code == 0 and out.startswith("usage: incoherent") and "build" in out and "score-shuffle" in out
    code, out = run_cli(["annotate"])  # a group without its command: the group's help
    assert code == 0 and out.startswith("usage: incoherent annotate") and "export" in out
    code, _ = run_cli(["no-such-command"])
    assert code == 2


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_bash_completion_from_the_parser(tmp_path, capsys):
    assert cli.main(["completion", "bash"]) == 0
    script = tmp_path / "incoherent.bash"
    script.write_text(capsys.readouterr().out)

    def complete(*words: str) -> list[str]:
        line = " ".join(("incoherent", *words))
        shell = (
            f"source {script}; COMP_WORDS=(incoherent {' '.join(words)}); COMP_CWORD={len(words)}; "
            f'COMP_LINE="{line}"; COMP_POINT=${{#COMP_LINE}}; _shtab_incoherent; printf "%s\\n" "${{COMPREPLY[@]}}"'
        )
        result = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, timeout=30, check=True)
        return result.stdout.split()

    assert complete("score-s") == ["score-shuffle"]
    assert complete("ingest", "") == ["cnn", "text", "wikipedia"] or set(complete("ingest", "")) == {
        "cnn",
        "text",
        "wikipedia",
    }
    assert "--block-sizes" in complete("shuffle", "--bl")
    assert "--easy-threshold" in complete("intruders", "--ea")


def test_zsh_completion_names_every_command(capsys):
    assert cli.main(["completion", "zsh"]) == 0
    script = capsys.readouterr().out
    assert script.startswith("#compdef incoherent")
    for command in COMMANDS:
        assert command.words[-1] in script


def test_dry_run_flag_is_beams_dry_run(tmp_path, capsys):
    """``--dry-run`` on a Beam command checks and builds the graph, writes nothing, and says so (as Beam's own
    ``--dry_run=True``); a command that runs no pipeline has no such flag to ignore."""
    out = tmp_path / "docs"
    assert cli.main(["ingest", "cnn", "samples/cnn/frank", "--out", str(out), "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("dry run: `incoherent ingest cnn` job graph built and validated")
    assert "nothing ran and nothing was written" in printed and not out.exists()
    assert cli.main(["train-filter", "D", "--out", str(tmp_path / "m"), "--dry-run"]) == 2
    assert capsys.readouterr().err.startswith("error: --dry-run: unknown option")
