"""The import graph of the project has no cycle and no upward import.

The packages are layered, lowest first; a module may import only from its own package or from a package below
it (imports inside functions count too, since they are dependencies all the same):

    incoherent < schemas < sources < retrieval < corpora < filters < annotation < pipelines

- ``incoherent`` (the floor: the modules of the folder ``incoherent/`` itself, ``incoherent.terminal``,
  ``incoherent.deadline``, ...): what every floor above needs and that knows nothing of the project; it imports
  no other layer. Its ``__main__`` (``python -m incoherent``) is the entry point, not the floor: it imports
  ``pipelines.cli`` and the runtime's signal and stdout handling, nothing else.
- ``schemas``: record types, Parquet schemas and the input error; imports no project package but the floor.
- ``sources``: readers of raw collections (Wikipedia dumps, CNN stories, text files) into documents.
- ``retrieval``: the hashed-bigram TF-IDF index and top-k search.
- ``corpora``: the corpus logic (seeding, intruder and shuffle construction, selection, sampling, the card).
- ``filters``: the adversarial classifier and language-model scoring (uses ``corpora.seeding``).
- ``annotation``: human verification (uses ``filters.metrics`` and ``corpora`` helpers).
- ``pipelines``: the Beam stages, the CLI and the build that runs them.

Inside ``pipelines`` the same rule holds between its sub-layers, lowest first (:data:`PIPELINE_LAYERS`):

    runtime < commands < stages < build < cli

- ``runtime`` (``pipelines/runtime/``): Beam plumbing that knows no stage (running a pipeline, tables,
  spill, storage, options, progress, output safety, summaries, error lines).
- ``commands`` (``pipelines/commands.py``): the one table of commands, the parser, running a command by its
  command line. It names the command modules as strings and imports the one asked for with ``importlib``,
  never with an import statement: that is how the table can sit below the commands it lists, and how a stage
  (``intruders`` runs ``index`` and ``neighbors``) can run another command without importing it.
- ``stages``: every other module of ``pipelines`` (``ingest/``, ``index``, ``neighbors``, ``intruders/``,
  ``shuffle``, ``score_shuffle``, ``card``, ``publish``, the ``annotate/`` commands, ...); stages may import
  each other.
- ``build`` (``pipelines/build/``): plans and runs stages (it imports ``card`` and ``sampling`` directly).
- ``cli`` (``pipelines/cli.py``): the entry point; it imports the table, never a command module.

Imports by name through ``importlib`` are not imports to this test; the only ones on a command module are the
table's (:mod:`pipelines.commands`) and the build's, which reads a stage's flags (``pipelines.build``).

All of them install under the one import package ``incoherent`` (``incoherent.pipelines`` is the folder
``pipelines/``): an absolute import names ``incoherent.<package>``, never the bare folder (which a wheel does not
install), and module names below are written without the ``incoherent.`` prefix (but the floor's, which keep it).

The test reads the sources with ``ast`` (nothing is imported), so it is fast and sees lazy imports as well.
Cycles are checked between modules and between packages.
"""

from __future__ import annotations

import ast
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLOOR = "incoherent"  # the modules of the folder incoherent/ (named incoherent.<module> here)
PACKAGES = ("schemas", "sources", "retrieval", "corpora", "filters", "annotation", "pipelines")
LAYERS = (FLOOR, *PACKAGES)
ENTRY = "incoherent.__main__"  # python -m incoherent: the entry point, above everything
PIPELINE_LAYERS = ("runtime", "commands", "stages", "build", "cli")


def pipeline_layer(module: str) -> str:
    """The sub-layer of a module of ``pipelines`` (see the module docstring).

    >>> [pipeline_layer(m) for m in ("pipelines.runtime.run", "pipelines.ingest.cnn", "pipelines.build.plan")]
    ['runtime', 'stages', 'build']
    """
    parts = module.split(".")
    if len(parts) == 1:
        return "runtime"  # the package itself: empty
    return parts[1] if parts[1] in PIPELINE_LAYERS else "stages"


def module_files() -> dict[str, str]:
    """``{dotted module name: path}`` of every module of the project packages and the floor (not the entry)."""
    modules = {}
    for package in LAYERS:
        for folder, _, names in os.walk(os.path.join(ROOT, package)):
            for name in sorted(names):
                if not name.endswith(".py"):
                    continue
                path = os.path.join(folder, name)
                parts = os.path.relpath(path, ROOT)[: -len(".py")].split(os.sep)
                if parts[-1] == "__init__":
                    parts = parts[:-1]
                if ".".join(parts) != ENTRY:
                    modules[".".join(parts)] = path
    return modules


def imports_of(name: str, path: str, modules: dict[str, str]) -> set[str]:
    """The project modules that module ``name`` imports (``from p import m`` counts as ``p.m`` when ``m`` is a
    module)."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    is_package = path.endswith("__init__.py")
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".") if is_package else name.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        for target in targets:
            if target.startswith("incoherent.") and target.split(".")[1] in PACKAGES:
                target = target[len("incoherent.") :]
            elif target == FLOOR or target.startswith(FLOOR + "."):
                pass  # the floor keeps its name
            elif not getattr(node, "level", 0):
                continue  # not the project (a bare project name is test_no_bare_import's)
            if target.split(".")[0] not in LAYERS:
                continue
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name and target != FLOOR:  # the package __init__ maps folders: no edge
                found.add(target)
    return found


def graph() -> dict[str, set[str]]:
    modules = module_files()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the directed graph as ``[a, b, ..., a]``, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def test_find_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_imports_of_resolves_relative_and_from_imports(tmp_path):
    module = tmp_path / "m.py"
    module.write_text(
        "from incoherent.corpora import seeding\nfrom .x import y\nimport incoherent.schemas.records\nimport corpora\n"
    )
    modules = {"corpora": "", "corpora.seeding": "", "pipelines.x": "", "schemas.records": ""}
    assert imports_of("pipelines.m", str(module), modules) == {
        "corpora",
        "corpora.seeding",
        "pipelines.x",
        "schemas.records",
    }


def test_no_module_cycle():
    cycle = find_cycle(graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_no_package_cycle():
    packages: dict[str, set[str]] = {}
    for name, targets in graph().items():
        package = name.split(".")[0]
        packages.setdefault(package, set()).update(
            t.split(".")[0] for t in targets if t.split(".")[0] != package
        )
    cycle = find_cycle(packages)
    assert cycle is None, "package cycle: " + " -> ".join(cycle)


@pytest.mark.parametrize("package", LAYERS)
def test_no_upward_import(package):
    rank = {name: i for i, name in enumerate(LAYERS)}
    upward = sorted(
        f"{name} imports {target}"
        for name, targets in graph().items()
        if name.split(".")[0] == package
        for target in targets
        if rank[target.split(".")[0]] > rank[package]
    )
    assert not upward, f"upward imports (layers {' < '.join(LAYERS)}):\n" + "\n".join(upward)


def test_no_upward_import_inside_pipelines():
    rank = {name: i for i, name in enumerate(PIPELINE_LAYERS)}
    upward = sorted(
        f"{name} ({pipeline_layer(name)}) imports {target} ({pipeline_layer(target)})"
        for name, targets in graph().items()
        if name.split(".")[0] == "pipelines"
        for target in targets
        if target.split(".")[0] == "pipelines" and rank[pipeline_layer(target)] > rank[pipeline_layer(name)]
    )
    assert not upward, f"upward imports (layers {' < '.join(PIPELINE_LAYERS)}):\n" + "\n".join(upward)


def test_pipeline_layers():
    assert pipeline_layer("pipelines") == "runtime"
    assert pipeline_layer("pipelines.commands") == "commands"
    assert pipeline_layer("pipelines.annotate.serve") == "stages"
    assert pipeline_layer("pipelines.cli") == "cli"


def bare_imports(path: str) -> list[str]:
    """The absolute imports in ``path`` that name a project package without ``incoherent.`` (``from corpora import
    seeding``): they work only from the repository's root, never from an installed wheel."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names = [node.module or ""]
        elif isinstance(node, ast.Constant) and isinstance(
            node.value, str
        ):  # code run by a subprocess, doctests
            names = [m.group(1) for m in BARE_IN_TEXT.finditer(node.value)]
        else:
            continue
        found += [
            f"{os.path.relpath(path, ROOT)}:{node.lineno}: {n}" for n in names if n.split(".")[0] in PACKAGES
        ]
    return found


# `from pipelines.cli import main`, `import corpora.seeding`, `-m pipelines.cli` inside a string
BARE_IN_TEXT = re.compile(
    r"(?:^|[\s;>'\"])(?:from|import|-m)\s+((?:" + "|".join(LAYERS) + r")(?:\.\w+)*)(?![\w.])"
)


def test_no_bare_import(tmp_path):
    sample = tmp_path / "m.py"
    sample.write_text(
        "import corpora.seeding\nfrom schemas import records\nfrom incoherent.sources import cnn\n"
    )
    assert [line.split(": ")[1] for line in bare_imports(str(sample))] == ["corpora.seeding", "schemas"]
    python_files = [
        os.path.join(folder, name)
        for top in (*LAYERS, "tests", "bench", "tools")
        for folder, _, names in os.walk(os.path.join(ROOT, top))
        for name in names
        if name.endswith(".py")
    ]
    here = os.path.abspath(__file__)  # its own samples above are bare on purpose
    found = [
        line for path in sorted(python_files) if os.path.abspath(path) != here for line in bare_imports(path)
    ]
    assert not found, "imports of a bare project package (use incoherent.<package>):\n" + "\n".join(found)


def test_the_floor_imports_nothing_of_the_project():
    modules = module_files()
    floor = sorted(name for name in modules if name.split(".")[0] == FLOOR)
    assert {"incoherent.terminal", "incoherent.deadline"} <= set(floor)
    above = sorted(
        f"{name} imports {target}"
        for name in floor
        for target in imports_of(name, modules[name], modules)
        if target.split(".")[0] != FLOOR
    )
    assert not above, "the floor (incoherent/*.py) imports the project:\n" + "\n".join(above)


def test_the_floor_is_seen_from_above(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("from incoherent.terminal import printable\nfrom incoherent import deadline\n")
    modules = {"incoherent": "", "incoherent.terminal": "", "incoherent.deadline": ""}
    assert imports_of("schemas.m", str(module), modules) == {"incoherent.terminal", "incoherent.deadline"}
    assert "incoherent.terminal" in graph()["pipelines.cli"]


def test_the_entry_point_imports_the_cli_and_the_runtime_alone():
    path = os.path.join(ROOT, "incoherent", "__main__.py")
    found = imports_of(ENTRY, path, module_files())
    assert "pipelines.cli" in found
    others = {m for m in found if m != "pipelines.cli" and pipeline_layer(m) != "runtime"}
    assert others == set(), (
        f"python -m incoherent imports more than the CLI and the runtime: {sorted(others)}"
    )
