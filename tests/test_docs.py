"""The README, docs/ and bench/ notes stay true: links resolve, command lines parse, the README stays short.

Every relative link of ``README.md``, ``docs/*.md`` and ``bench/*.md`` must name a file of the repository and,
with ``#anchor``, a heading of it. Every ``incoherent ...`` line in a code block of ``README.md`` and
``docs/*.md`` must parse with the real command-line parser (``incoherent.pipelines.cli``: the command's own flags, then
Beam's pipeline options). A block preceded by ``<!-- needs: WHAT -->`` needs something the repository does not
bundle (docs/README.md explains the marker); its lines are parsed all the same. Every other ``bash`` block that
is not a synopsis is run (:func:`test_unmarked_blocks_run`), page by page, in a folder holding the samples, the
configs and the Quickstart build. ``docs/cli-reference.md`` must be what ``python -m incoherent.pipelines.reference``
writes, and the shard names, index files and progress units the pages state must be the real ones.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from tests.sample_build import quickstart_build

ROOT = Path(__file__).resolve().parent.parent
MARKER = re.compile(r"^<!-- needs: \S.* -->$")  # what the block needs beyond the repository
README_MAX_LINES = 250
SHELLS = ("bash", "sh", "shell", "console")


def pages(*patterns: str) -> list[Path]:
    return sorted(p for pattern in patterns for p in ROOT.glob(pattern))


LINKED = pages("README.md", "docs/*.md", "bench/*.md")
WITH_COMMANDS = pages("README.md", "docs/*.md")


def fenced_blocks(text: str) -> list[dict]:
    """The fenced code blocks of a Markdown text: ``language``, ``body``, ``marked`` (a ``needs`` marker stands
    right before it) and ``line`` (of the opening fence, 1-based).

    >>> [(b["language"], b["body"], b["marked"]) for b in fenced_blocks("<!-- needs: a GPU -->\\n```bash\\nx\\n```\\n```\\ny\\n```")]
    [('bash', 'x', True), ('', 'y', False)]
    """
    blocks, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        fence = re.match(r"^(\s*)(```+|~~~+)\s*(\S*)", lines[i])
        if not fence:
            i += 1
            continue
        before = next((line.strip() for line in reversed(lines[:i]) if line.strip()), "")
        end = i + 1
        while end < len(lines) and not lines[end].strip().startswith(fence.group(2)):
            end += 1
        body = "\n".join(lines[i + 1 : end])
        blocks.append(
            {"language": fence.group(3), "body": body, "marked": bool(MARKER.match(before)), "line": i + 1}
        )
        i = end + 1
    return blocks


def code_blocks(text: str) -> list[tuple[str, bool]]:
    """The fenced code blocks of a Markdown text, each with whether a ``needs`` marker stands right before it.

    >>> code_blocks("a\\n<!-- needs: external data -->\\n```bash\\nx\\n```\\n```\\ny\\n```\\n")
    [('x', True), ('y', False)]
    """
    return [(block["body"], block["marked"]) for block in fenced_blocks(text)]


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
    >>> command_lines("```bash\\nincoherent completion bash > ~/x\\n```")
    [(['completion', 'bash'], False)]
    """
    found = []
    for block, marked in code_blocks(text):
        for line in block.replace("\\\n", " ").splitlines():
            lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|<>")
            lexer.whitespace_split = True
            try:
                tokens = list(lexer)
            except ValueError:  # not shell (a YAML or Python block)
                continue
            segment: list[str] = []
            redirect = False
            for token in tokens + [";"]:
                if redirect:  # the file of a redirection is not an argument
                    redirect = False
                elif set(token) <= set("<>") and token:
                    redirect = True
                elif token in {";", "&&", "||", "|", "&"}:
                    if segment and Path(segment[0]).name == "incoherent":  # a synopsis's [--flag VALUE] too
                        found.append(([a.removeprefix("[").removesuffix("]") for a in segment[1:]], marked))
                    segment = []
                else:
                    segment.append(token)
    return found


def parse_error(argv: list[str]) -> str | None:
    """Why ``incoherent ARGV`` would not parse (the command's flags, then Beam's options), or None."""
    from incoherent.pipelines import cli, commands

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
            if line.strip().startswith("<!-- needs") and not MARKER.match(line.strip()):
                pytest.fail(f"{page.relative_to(ROOT)}:{i + 1}: write the marker as <!-- needs: WHAT -->")
            if MARKER.match(line.strip()):
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


def test_cli_reference_is_generated_from_the_parser():
    """docs/cli-reference.md is what ``python -m incoherent.pipelines.reference`` writes: every flag of every command."""
    from incoherent.pipelines import reference

    page = (ROOT / "docs" / "cli-reference.md").read_text(encoding="utf-8")
    assert page == reference.render(), (
        "docs/cli-reference.md is out of date: run `python -m incoherent.pipelines.reference > docs/cli-reference.md`"
    )


def test_every_flag_is_documented():
    """Every flag of every command appears in the flag reference (and so on a page of docs/)."""
    import argparse

    from incoherent.pipelines import reference
    from incoherent.pipelines.commands import COMMANDS, build_parser

    page = (ROOT / "docs" / "cli-reference.md").read_text(encoding="utf-8")
    sections = dict(re.findall(r"^## `incoherent ([^`]+)`\n(.*?)(?=^## |\Z)", page, flags=re.M | re.S))
    parser, missing = build_parser(every_command=True), []
    for command in COMMANDS:
        name = " ".join(command.words)
        sub = reference.command_parser(parser, command.words)
        for action in sub._actions:
            for flag in action.option_strings:
                if flag not in ("-h", "--help") and f"`{flag}" not in sections.get(name, ""):
                    missing.append(f"{name} {flag}")
    assert sections and not missing, missing
    assert not isinstance(parser, argparse.Namespace)


def test_progress_units_are_the_documented_ones():
    """docs/build.md names the rate each ingest bar shows (``progress.advance(..., unit=...)``)."""
    progress = (ROOT / "docs" / "build.md").read_text(encoding="utf-8").split("**Progress.**", 1)[1]
    progress = progress.split("\n\n", 1)[0]
    units = set()
    for path in (ROOT / "pipelines" / "ingest").glob("*.py"):
        for call in re.findall(r"progress\.advance\(([^)]*)\)", path.read_text(encoding="utf-8")):
            unit = re.search(r"unit=\"(\w+)\"", call)
            units.add(unit.group(1) if unit else "doc")  # progress.advance's default unit
    assert units and all(f"{unit}s/s" in progress for unit in units), (units, progress)
    assert "MB/s" not in progress.split("(after", 1)[0]


SHARD = re.compile(r"-\d{5}-of-\d{5}\.parquet")
PLACEHOLDER = re.compile(r"\[.*|.*\]|[A-Z][A-Z0-9_]{2,}(\.\.\.)?(/.*)?")


def is_synopsis(block: str) -> bool:
    """A block whose command lines hold a placeholder (``DATASET_DIR``) or an optional ``[--flag]``.

    >>> is_synopsis("incoherent annotate report DIR [--min-agreement 3]"), is_synopsis("incoherent build")
    (True, False)
    """
    return any(
        PLACEHOLDER.fullmatch(arg) for argv, _ in command_lines(f"```bash\n{block}\n```") for arg in argv
    )


def runnable_blocks(page: Path) -> list[dict]:
    blocks = fenced_blocks(page.read_text(encoding="utf-8"))
    return [b for b in blocks if b["language"] in SHELLS and not b["marked"] and not is_synopsis(b["body"])]


RUN_PAGES = [p for p in WITH_COMMANDS if runnable_blocks(p)]


@pytest.fixture(scope="module")
def quickstart(tmp_path_factory) -> Path:
    """The Quickstart's ``incoherent build`` (``out/sample``), built once for every page."""
    out, run = quickstart_build(tmp_path_factory)
    assert run.returncode == 0, run.stderr
    return out


def page_folder(tmp_path: Path, quickstart: Path) -> tuple[Path, dict]:
    """A working folder with the samples, the configs and a copy of the Quickstart build, and an environment
    whose ``incoherent`` is this tree's CLI (offline)."""
    work = tmp_path / "work"
    work.mkdir()
    for name in ("samples", "pipelines"):
        (work / name).symlink_to(ROOT / name)
    shutil.copytree(quickstart, work / "out" / "sample")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "incoherent"
    shim.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m incoherent.pipelines.cli "$@"\n')
    shim.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", PYTHONPATH=str(ROOT))
    env.update(HF_HUB_OFFLINE="1", HF_HUB_CACHE=str(tmp_path / "hf-cache"), HOME=str(tmp_path))
    return work, env


@pytest.mark.e2e
@pytest.mark.parametrize("page", RUN_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_unmarked_blocks_run(page, quickstart, tmp_path):
    """Every unmarked ``bash`` block that is not a synopsis runs, in page order, needing only the repository's
    samples and configs, the Quickstart build and the blocks above it."""
    work, env = page_folder(tmp_path, quickstart)
    for block in runnable_blocks(page):
        run = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", block["body"]],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        where = f"{page.relative_to(ROOT)}:{block['line']}"
        assert run.returncode == 0, f"{where}: exit {run.returncode}\n{run.stderr[-3000:]}"
    if page.name == "commands.md":  # the files the page says `index` writes are the files it writes
        text = page.read_text(encoding="utf-8").split("The index is", 1)[1].split(";", 1)[0]
        named = set(re.findall(r"`([\w.]+\.(?:npz|json))`", text))
        written = {p.name for p in (work / "out" / "wsj-index").iterdir()} - {"run_summary.json"}
        assert named == {name for name in written if not name.startswith(".")}, (named, written)


@pytest.mark.e2e
def test_shard_names_shown_are_those_a_build_writes(quickstart):
    """Every ``-NNNNN-of-NNNNN.parquet`` name on a page ends like a file of the Quickstart build."""
    written = {SHARD.search(p.name).group(0) for p in quickstart.rglob("*.parquet")}
    shown = {
        (page.name, m) for page in WITH_COMMANDS for m in SHARD.findall(page.read_text(encoding="utf-8"))
    }
    external = ("huggingface.co", "FiscalNote", "billsum")  # a file name of someone else's dataset
    wrong = sorted(
        (page, name)
        for page, name in shown
        if name not in written
        and not any(
            word in line
            for line in (ROOT / ("README.md" if page == "README.md" else f"docs/{page}"))
            .read_text()
            .splitlines()
            if name in line
            for word in external
        )
    )
    assert written and shown and not wrong, (wrong, written)


def test_the_internals_map_matches_the_folders():
    """docs/internals.md's map names every package folder (one with an ``__init__.py``) outside tests/ and bench/,
    and every folder it names exists."""
    page = (ROOT / "docs" / "internals.md").read_text(encoding="utf-8")
    table = page.split("## Map: where everything lives", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"^\| `([a-z_/]+/)` \|", table, flags=re.M))
    packages = {
        f"{path.parent.relative_to(ROOT).as_posix()}/"
        for path in ROOT.rglob("__init__.py")
        if path.relative_to(ROOT).parts[0]
        in {"incoherent", "schemas", "sources", "retrieval", "corpora", "filters", "annotation", "pipelines"}
    }
    assert packages - named == set(), "folders missing from docs/internals.md's map"
    assert {n for n in named if not (ROOT / n).is_dir()} == set(), "folders in the map that do not exist"


def _internals_section(title: str) -> str:
    page = (ROOT / "docs" / "internals.md").read_text(encoding="utf-8")
    return page.split(f"## {title}", 1)[1].split("\n## ", 1)[0]


def test_the_runtime_table_lists_every_runtime_module():
    """docs/internals.md's layer table names every module of pipelines/runtime/ in its runtime row, and no other."""
    section = _internals_section("Where it lives in `pipelines/`")
    (row,) = [line for line in section.splitlines() if line.startswith("| runtime | `pipelines/runtime/` |")]
    named = set(re.findall(r"`([a-z_]+\.py)`", row))
    modules = {p.name for p in (ROOT / "pipelines" / "runtime").glob("*.py") if p.name != "__init__.py"}
    assert modules - named == set(), "runtime modules missing from docs/internals.md"
    assert named - modules == set(), "modules in docs/internals.md's runtime row that do not exist"


def stage_unit(module: str) -> str:
    """The stage a module of the stages layer belongs to: its folder (``neighbors`` for
    ``pipelines.neighbors.command``) or, for a flat module, the module (``sampling``)."""
    return module.split(".")[1]


def test_the_imports_between_stages_are_the_documented_ones():
    """The list under docs/internals.md's layer table is every import from one stage to another (by ``ast``,
    lazy imports included): a stage importing another is seen, and a documented one that went away too."""
    from tests.test_imports import graph, pipeline_layer

    section = _internals_section("Where it lives in `pipelines/`")
    documented = set(re.findall(r"^- `([a-z_.]+)` imports `([a-z_.]+)`", section, flags=re.M))
    assert documented, "no list of imports between stages in docs/internals.md"
    found = {
        (name.removeprefix("pipelines."), target.removeprefix("pipelines."))
        for name, targets in graph().items()
        if name.startswith("pipelines.") and pipeline_layer(name) == "stages"
        for target in targets
        if target.startswith("pipelines.")
        and pipeline_layer(target) == "stages"
        and stage_unit(target) != stage_unit(name)
    }
    assert found - documented == set(), "imports between stages missing from docs/internals.md"
    assert documented - found == set(), (
        "imports between stages in docs/internals.md that the code no longer has"
    )
