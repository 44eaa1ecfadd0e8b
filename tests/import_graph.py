"""Which modules of `prove` import which, read from the source with `ast` (test helper).

    from import_graph import module_imports, find_cycle
    graph = module_imports()                  # {"prove.llm.vllm": {"prove.env.launch", ...}, ...}
    assert find_cycle(graph) is None

Every import counts: function-level ones (a deferred import still makes a module depend on the
other when the function runs) and `if TYPE_CHECKING:` ones (a type from a later layer is a
dependency on it too). So do modules loaded by name: in a file that calls `import_module`, every
string constant spelling a module of the package (`"prove.x.y"` or `"prove.x.y:attr"`) counts.
Only edges between modules of the package are kept; `from prove.a import b` is an edge to the
module `prove.a.b` where that is a module, else to `prove.a`. Importing `prove.a.b` also runs
`prove/a/__init__.py`, but that implicit edge is not drawn: Python initialises a parent before its
children, so it never makes a cycle.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import prove

SRC = Path(prove.__file__).parent
"""src/prove: the package whose modules are read."""


_DOTTED = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)+(:[A-Za-z_][\w]*)?$")


def module_files(root: Path = SRC, package: str = "prove") -> dict[str, Path]:
    """Every module of `package` under `root` by dotted name (a package is its `__init__.py`)."""
    out: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join([package, *parts])] = path
    return out


def _absolute(node: ast.ImportFrom, name: str, is_package: bool) -> str:
    """The absolute module a (possibly relative) `from ... import` in module `name` names."""
    if not node.level:
        return node.module or ""
    parts = name.split(".")
    if not is_package:
        parts = parts[:-1]
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join(parts + ([node.module] if node.module else []))


def imported_names(path: Path, name: str) -> set[str]:
    """Absolute names of every module the file at `path` (module `name`) imports, anywhere in it."""
    tree = ast.parse(path.read_text(), filename=str(path))
    is_package = path.name == "__init__.py"
    out: set[str] = set()
    strings: set[str] = set()
    loads_by_name = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, name, is_package)  # `from a import b`: module a.b, else a
            out.update(base if alias.name == "*" else f"{base}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module":
            loads_by_name = True
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _DOTTED.match(node.value):
            strings.add(node.value.partition(":")[0])
    return out | strings if loads_by_name else out


def module_imports(root: Path = SRC, package: str = "prove") -> dict[str, set[str]]:
    """{module: the package's modules it imports}. A name that is not a module (`from prove.a
    import f`) counts as its module `prove.a`; a module never depends on itself."""
    files = module_files(root, package)
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        deps: set[str] = set()
        for imported in imported_names(path, name):
            if imported.split(".")[0] != package:
                continue
            target = imported
            while target and target not in files:
                target = target.rpartition(".")[0]
            if target and target != name:
                deps.add(target)
        graph[name] = deps
    return graph


def find_cycle(graph: Mapping[str, Iterable[str]]) -> list[str] | None:
    """One import cycle as [a, b, ..., a], or None when the graph has none."""
    done: set[str] = set()
    for start in sorted(graph):
        if start in done:
            continue
        path: list[str] = []
        on_path: set[str] = set()
        stack = [(start, iter(sorted(graph[start])))]
        path.append(start)
        on_path.add(start)
        while stack:
            node, deps = stack[-1]
            for dep in deps:
                if dep in on_path:
                    return path[path.index(dep):] + [dep]
                if dep not in done and dep in graph:
                    stack.append((dep, iter(sorted(graph[dep]))))
                    path.append(dep)
                    on_path.add(dep)
                    break
            else:
                stack.pop()
                path.pop()
                on_path.discard(node)
                done.add(node)
    return None


def all_cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (each an import knot), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def connect(node: str) -> None:  # Tarjan; the package is small enough for recursion
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for dep in graph.get(node, ()):
            if dep not in graph:
                continue
            if dep not in index:
                connect(dep)
                low[node] = min(low[node], low[dep])
            elif dep in on_stack:
                low[node] = min(low[node], index[dep])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return sorted(out)
