"""The engine's modules form floors: no module imports (directly or around a circle) one that imports it,
and no module takes another's private names (``_name``).  Read with ``ast`` from the source, so imports
inside functions count too: a circle closed at run time is still a circle."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "ptospec"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _base(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = importer if is_package else importer.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def _imports(name: str, source: str, is_package: bool, modules: dict[str, Path]):
    """(imported module, names taken from it, line) for every import of a ptospec module in ``source``."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    yield alias.name, (), node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = _base(name, is_package, node)
            if base not in modules and not base.startswith("ptospec"):
                continue
            taken = []
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if sub in modules:  # ``from . import storage``: the module itself
                    yield sub, (), node.lineno
                else:
                    taken.append(alias.name)
            if taken and base in modules:
                yield base, tuple(taken), node.lineno


def _graph() -> tuple[dict[str, set[str]], list[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    private: list[str] = []
    for name, path in modules.items():
        source = path.read_text(encoding="utf-8")
        for target, names, line in _imports(name, source, path.name == "__init__.py", modules):
            if target != name:
                graph[name].add(target)
            for taken in names:
                if taken.startswith("_") and not taken.startswith("__"):
                    private.append(f"{path.relative_to(PACKAGE.parent)}:{line} takes {target}.{taken}")
    return graph, private


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), and modules importing themselves."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_circles():
    graph, _ = _graph()
    circles = _circles(graph)
    assert not circles, "import circles (move the shared piece down a floor, or register instead of importing " \
        "back):\n" + "\n".join(" <-> ".join(c) for c in circles)


def test_no_private_names_across_modules():
    _, private = _graph()
    assert not private, "private names imported from another module (make them public or move them):\n" + \
        "\n".join(private)


def test_the_checks_see_a_circle_and_a_private_import():
    """The reader finds what it is meant to find: a circle, module imports and private names, inside a
    function too."""
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    source = "from . import fifo, layer\nfrom .walker import Walker\n\ndef f():\n    from ..storage import _x\n"
    found = list(_imports("ptospec.program.handlers", source, False, _modules()))
    assert found == [("ptospec.program.fifo", (), 1), ("ptospec.program.layer", (), 1),
                     ("ptospec.program.walker", ("Walker",), 2), ("ptospec.storage", ("_x",), 5)]
