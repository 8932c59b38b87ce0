"""The flag reference of every command, generated from the CLI's own parser: ``docs/cli-reference.md``.

    python -m incoherent.pipelines.reference > docs/cli-reference.md     # after adding or changing a command or flag
    python -m incoherent.pipelines.reference --check docs/cli-reference.md   # exit 1 when the page is out of date

Every command of :data:`pipelines.commands.COMMANDS`, in table order, with each argument's form, default and
help text exactly as ``incoherent COMMAND --help`` has them (the same parser, so the page cannot drift:
``tests/test_docs.py`` fails when it is not what this module writes). Nothing depends on the terminal width.
"""

from __future__ import annotations

import argparse
import sys

from incoherent.pipelines.commands import COMMANDS, build_parser

HEADER = """# Flag reference

Every flag of every `incoherent` command, generated from the command-line parser itself
(`python -m incoherent.pipelines.reference > docs/cli-reference.md`; a test fails when this page is out of date). What the
commands do, with examples, is in the [command reference](commands.md); the conventions every command follows
are in [Common behaviour](commands.md#common-behaviour).

Flags that `incoherent` does not know are Beam's pipeline options and go to the pipeline (`--runner`,
`--direct_num_workers`, Dataflow and Flink options); a flag that Beam does not know either is an error.

`incoherent` itself takes `--version` (print the version and exit), `-v`/`--verbose` (log Beam's progress) and
`--help`; with no command it prints its help. `incoherent completion bash|zsh|tcsh` prints a shell completion
script generated from the same parser.
"""


def _cell(text: str, code: bool = False) -> str:
    """One table cell: one line, ``|`` escaped; outside code, ``<``, ``>`` and ``*`` too (not HTML, not emphasis)."""
    text = " ".join(str(text).split()).replace("|", "\\|")
    if not code:
        text = text.replace("<", "&lt;").replace(">", "&gt;").replace("*", "\\*")
    return text


def _form(action: argparse.Action) -> str:
    """``--block-sizes K [K ...]``, ``--overwrite``, ``DOCS_DIR``: how the argument is written."""
    metavar = action.metavar or (action.dest.upper() if action.option_strings else action.dest.upper())
    if isinstance(metavar, tuple):
        metavar = " ".join(metavar)
    if action.choices and not action.metavar:
        metavar = "{" + ",".join(map(str, action.choices)) + "}"
    value = {
        None: metavar,
        "?": f"[{metavar}]",
        "*": f"[{metavar} ...]",
        "+": f"{metavar} [{metavar} ...]",
        0: "",
    }.get(action.nargs, metavar)
    if not action.option_strings:
        return value
    return " ".join(part for part in (", ".join(action.option_strings), value) if part)


def _default(action: argparse.Action) -> str:
    value = action.default
    if action.required or action.nargs == 0 or value is None or value is False or value == argparse.SUPPRESS:
        return ""
    if isinstance(value, list | tuple) and not value:
        return ""
    if isinstance(value, list | tuple):
        return " ".join(map(str, value))
    return str(value)


def _help(action: argparse.Action, prog: str) -> str:
    text = action.help or ""
    if "%(" in text:
        text = text % {**vars(action), "prog": prog, "default": action.default}
    if action.required and action.option_strings:
        text = f"required: {text}"
    return text


def command_parser(parser: argparse.ArgumentParser, words: tuple[str, ...]) -> argparse.ArgumentParser:
    for word in words:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[word]
    return parser


def render() -> str:
    """The whole page."""
    parser = build_parser(every_command=True)
    lines = [HEADER]
    for command in COMMANDS:
        name = " ".join(command.words)
        sub = command_parser(parser, command.words)
        lines += [f"## `incoherent {name}`", "", f"{command.help[0].upper()}{command.help[1:]}.", ""]
        lines += ["| argument | default | what it is |", "|---|---|---|"]
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            form, default = _cell(_form(action), code=True), _cell(_default(action), code=True)
            lines.append(
                f"| `{form}` | {f'`{default}`' if default else ''} | {_cell(_help(action, sub.prog))} |"
            )
        takes_beam = _takes_beam_args(command.module)
        lines += ["", "Beam's pipeline options: " + ("accepted." if takes_beam else "none (refused)."), ""]
    return "\n".join(lines).rstrip() + "\n"


def _takes_beam_args(module: str) -> bool:
    import importlib

    return getattr(importlib.import_module(module), "TAKES_BEAM_ARGS", True)


def main(argv: list[str] | None = None) -> int:
    args = argparse.ArgumentParser(
        prog="python -m incoherent.pipelines.reference", description=__doc__.split("\n")[0]
    )
    args.add_argument("--check", metavar="FILE", help="exit 1 when FILE is not the page this writes")
    options = args.parse_args(argv)
    page = render()
    if options.check:
        with open(options.check, encoding="utf-8") as f:
            if f.read() != page:
                print(
                    f"{options.check}: out of date; run python -m incoherent.pipelines.reference > {options.check}"
                )
                return 1
        return 0
    sys.stdout.write(page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
