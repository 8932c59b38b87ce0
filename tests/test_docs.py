"""The README, docs/ and bench/ notes stay true: links resolve, command lines parse, the README stays short.

Every relative link of ``README.md``, ``docs/*.md`` and ``bench/*.md`` must name a file of the repository and,
with ``#anchor``, a heading of it. Every ``incoherent ...`` line in a code block of ``README.md`` and
``docs/*.md`` must parse with the real command-line parser (``pipelines.cli``: the command's own flags, then
Beam's pipeline options); nothing is run. A block preceded by ``<!-- needs: external data -->`` needs data the
repository does not bundle (docs/README.md explains the marker); its lines are parsed all the same.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import re
import shlex
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MARKER = "<!-- needs: external data -->"
README_MAX_LINES = 250


def pages(*patterns: str) -> list[Path]:
    return sorted(p for pattern in patterns for p in ROOT.glob(pattern))


LINKED = pages("README.md", "docs/*.md", "bench/*.md")
WITH_COMMANDS = pages("README.md", "docs/*.md")


def code_blocks(text: str) -> list[tuple[str, bool]]:
    """The fenced code blocks of a Markdown text, each with whether the marker stands right before it.

    >>> code_blocks("a\\n<!-- needs: external data -->\\n```bash\\nx\\n```\\n```\\ny\\n```\\n")
    [('x', True), ('y', False)]
    """
    blocks, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        fence = re.match(r"^(\s*)(```+|~~~+)", lines[i])
        if not fence:
            i += 1
            continue
        before = next((line.strip() for line in reversed(lines[:i]) if line.strip()), "")
        end = i + 1
        while end < len(lines) and not lines[end].strip().startswith(fence.group(2)):
            end += 1
        blocks.append(("\n".join(lines[i + 1 : end]), before == MARKER))
        i = end + 1
    return blocks


def prose(text: str) -> str:
    """The text outside fenced code blocks and inline code (where links are links)."""
    out, inside = [], None
    for line in text.splitlines():
        fence = re.match(r"^\s*(```+|~~~+)", line)
        if fence and inside is None:
            inside = fence.group(1)
        elif fence and line.strip().startswith(inside):
            inside = None
        elif inside is None:
            out.append(re.sub(r"`[^`]*`", "", line))
    return "\n".join(out)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading.

    >>> slug("`incoherent build`: one config, every stage")
    'incoherent-build-one-config-every-stage'
    >>> slug("Spill: bounded memory on the local runner")
    'spill-bounded-memory-on-the-local-runner'
    """
    text = re.sub(r"<[^>]+>", "", heading).strip().lower()
    text = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LNM")
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    text = path.read_text(encoding="utf-8")
    for block, _ in code_blocks(text):  # headings inside code blocks are not headings
        text = text.replace(block, "")
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", text, flags=re.M):
        base = slug(heading)
        n = seen.get(base, 0)
        seen[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")
    return found


def links(path: Path) -> list[str]:
    text = prose(path.read_text(encoding="utf-8"))
    return re.findall(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)", text)


@pytest.mark.parametrize("page", LINKED, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page):
    broken = []
    for target in links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        where = (page.parent / path).resolve() if path else page
        if not where.exists() or ROOT not in where.parents and where != ROOT:
            broken.append(f"{target}: no such file")
        elif anchor and (where.suffix != ".md" or anchor not in anchors(where)):
            broken.append(f"{target}: no heading #{anchor}")
    assert not broken, f"{page.relative_to(ROOT)}: {broken}"


def command_lines(text: str) -> list[tuple[list[str], bool]]:
    """The ``incoherent`` command lines of the code blocks (continuations joined, comments and ``&&`` chains
    split), each as argv after ``incoherent`` with whether its block is marked as needing external data.

    >>> command_lines("```bash\\npip install . && .venv/bin/incoherent build   # the samples\\n```")
    [(['build'], False)]
    """
    found = []
    for block, marked in code_blocks(text):
        for line in block.replace("\\\n", " ").splitlines():
            lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
            lexer.whitespace_split = True
            try:
                tokens = list(lexer)
            except ValueError:  # not shell (a YAML or Python block)
                continue
            segment: list[str] = []
            for token in tokens + [";"]:
                if token in {";", "&&", "||", "|", "&"}:
                    if segment and Path(segment[0]).name == "incoherent":  # a synopsis's [--flag VALUE] too
                        found.append(([a.removeprefix("[").removesuffix("]") for a in segment[1:]], marked))
                    segment = []
                else:
                    segment.append(token)
    return found


def parse_error(argv: list[str]) -> str | None:
    """Why ``incoherent ARGV`` would not parse (the command's flags, then Beam's options), or None."""
    from pipelines import cli, commands

    module = commands.selected_module(argv)
    if module is None:
        return "no such command"
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            args, beam_args = commands.build_parser(module).parse_known_args(argv)
    except SystemExit:
        return err.getvalue().strip().splitlines()[-1]
    single_dash = [a for a in beam_args if a.startswith("-") and not a.startswith("--")]
    if single_dash:
        return f"unrecognized arguments: {single_dash}"
    untangle = getattr(importlib.import_module(module), "untangle", None)
    if untangle is not None and hasattr(args, "config"):  # build: a Beam flag's value taken as CONFIG
        _, beam_args = untangle(args.config, beam_args)
    try:
        cli.check_beam_args(beam_args, cli.command_name(args))
    except cli.InputError as exc:
        return str(exc)
    return None


def test_documented_commands_parse():
    problems, total = [], 0
    for page in WITH_COMMANDS:
        for argv, _ in command_lines(page.read_text(encoding="utf-8")):
            total += 1
            why = parse_error(argv)
            if why:
                problems.append(f"{page.relative_to(ROOT)}: incoherent {shlex.join(argv)}: {why}")
    assert not problems, "\n".join(problems)
    assert total >= 40  # the pages do hold commands: the extraction found them


def test_bundled_paths_exist():
    """A path under samples/ or pipelines/configs/ in a documented command names a real file."""
    missing = []
    for page in WITH_COMMANDS:
        for argv, _ in command_lines(page.read_text(encoding="utf-8")):
            for arg in argv:
                value = arg.split("=", 1)[-1]
                if value.startswith(("samples/", "pipelines/configs/")) and not (ROOT / value).exists():
                    missing.append(f"{page.relative_to(ROOT)}: {value}")
    assert not missing, missing


def test_marker_stands_before_a_block():
    """The marker is only used right before a code block (anywhere else it would mark nothing)."""
    for page in WITH_COMMANDS:
        lines = page.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            if line.strip() == MARKER:
                after = next((x for x in lines[i + 1 :] if x.strip()), "")
                if not after.lstrip().startswith(("```", "~~~")):
                    pytest.fail(
                        f"{page.relative_to(ROOT)}:{i + 1}: the marker is not followed by a code block"
                    )


def test_readme_stays_a_front_door():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; the reference belongs in docs/"
    assert "](docs/README.md)" in "\n".join(lines)


@pytest.mark.parametrize("folder, pattern", [("docs", "*.md"), ("bench", "README_*.md")])
def test_index_lists_every_page(folder, pattern):
    """docs/README.md links every page of docs/, bench/README.md every benchmark note: add a line there."""
    index = (ROOT / folder / "README.md").read_text(encoding="utf-8")
    pages = sorted(p.name for p in (ROOT / folder).glob(pattern) if p.name != "README.md")
    missing = [name for name in pages if f"]({name})" not in index]
    assert pages and not missing, f"{folder}/README.md does not list {missing}"


def test_helper_examples():
    import doctest
    import sys

    failed, attempted = doctest.testmod(sys.modules[__name__])
    assert attempted >= 4 and not failed
