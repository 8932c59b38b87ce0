"""The house's size rule for functions: no library function over :data:`MAX_FUNCTION_LINES` lines.

An entry function that passes it mixes concerns (docs/STYLE: split by concern; the app factory into routes,
security and storage, exports into reading, computing and writing). The library is every module of the
installed package (the folders of ``tests/test_imports.py``'s layers, the floor ``incoherent/`` included); ``tests/``,
``bench/`` and ``tools/`` are not library code. Functions are counted with ``ast`` as
``end_lineno - lineno + 1`` (the ``def`` line to the last line of the body, the docstring included); nested
functions and methods count on their own, and inside their enclosing function.
"""

from __future__ import annotations

import ast
import os

from tests.test_imports import LAYERS, ROOT

MAX_FUNCTION_LINES = 100
LIBRARY = LAYERS  # the floor incoherent/ and the seven packages


def long_functions(path: str, limit: int = MAX_FUNCTION_LINES) -> list[tuple[str, int, int]]:
    """``(qualified name, first line, lines)`` of every function of the file at ``path`` over ``limit`` lines."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    found = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    lines = child.end_lineno - child.lineno + 1
                    if lines > limit:
                        found.append((name, child.lineno, lines))
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def library_files() -> list[str]:
    paths = []
    for package in LIBRARY:
        for folder, dirs, names in os.walk(os.path.join(ROOT, package)):
            dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__pycache__")))
            paths += [os.path.join(folder, name) for name in sorted(names) if name.endswith(".py")]
    return paths


def test_long_functions_finds_a_long_method_and_a_long_nested_function(tmp_path):
    body = "".join(f"    x{i} = {i}\n" for i in range(99))  # with its def line: 100 lines, the limit
    source = (
        f"def short():\n{body}\n"
        f"def long():\n{body}    x = 1\n\n"
        f"class C:\n    def method(self):\n    {body.replace(chr(10), chr(10) + '    ')[:-4]}        y = 2\n\n"
        "def outer():\n    def inner():\n"
        + body.replace("\n    ", "\n        ").replace("    x0", "        x0", 1)
    )
    module = tmp_path / "m.py"
    module.write_text(source)
    found = {name: lines for name, _, lines in long_functions(str(module))}
    assert found == {"long": 101, "C.method": 101, "outer": 101}, found
    assert long_functions(str(module), limit=101) == []


def test_the_library_is_found():
    files = {os.path.relpath(p, ROOT) for p in library_files()}
    assert {
        "incoherent/__init__.py",
        "pipelines/cli.py",
        "sources/wikitext.py",
        "annotation/webapp.py",
    } <= files
    assert not any(p.startswith(("tests/", "bench/", "tools/")) for p in files)


def test_no_library_function_over_100_lines():
    long = [
        f"{os.path.relpath(path, ROOT)}:{line} {name}: {lines} lines"
        for path in library_files()
        for name, line, lines in long_functions(path)
    ]
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines (split them by concern):\n" + "\n".join(long)
