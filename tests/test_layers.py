"""The import graph of kschedlib: layers only look down, and no module imports itself back.

Every import counts: module level, inside functions and under ``TYPE_CHECKING``.
Layers, low to high (see docs/architecture.md):

0. ``errors``, ``clock``, ``features`` (and its data, ``features_v1_35``), ``version``: leaf
   utilities every layer may use.
1. ``api``: Kubernetes objects, codec, validation, loading.
2. ``config``: KubeSchedulerConfiguration types, defaults, loading.
3. ``framework``: the plugin interfaces, runtime, statuses, registry type.
4. ``backend``: cache, scheduling queue, snapshot.
5. ``plugins``: in-tree plugins and their registry; ``contrib``: plugin packages on the
   public plugin API.
6. the scheduler: ``scheduler`` (facade), ``scheduler_base``, ``eventhandlers``, ``cycles``,
   ``schedule_one``, ``explain``, ``fork``, ``whatif_reports``, ``results``.
7. tools built on a scheduler: ``whatif``, ``eviction``, ``sweep``, ``report``,
   ``testing``, ``leaderelection``, ``conformance``, ``replay``, ``traces``.
8. entry points: ``cli``, ``bench``, the package ``__init__`` and ``__main__``.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "kschedlib"

LAYERS: dict[str, int] = {
    "errors": 0,
    "clock": 0,
    "features": 0,
    "features_v1_35": 0,
    "version": 0,
    "api": 1,
    "config": 2,
    "framework": 3,
    "backend": 4,
    "plugins": 5,
    "contrib": 5,
    "scheduler": 6,
    "eventhandlers": 6,
    "schedule_one": 6,
    "explain": 6,
    "fork": 6,
    "rollback": 6,
    "cycles": 6,
    "scheduler_base": 6,
    "whatif_reports": 6,
    "results": 6,
    "whatif": 7,
    "eviction": 7,
    "sweep": 7,
    "report": 7,
    "testing": 7,
    "leaderelection": 7,
    "conformance": 7,
    "replay": 7,
    "traces": 7,
    "cli": 8,
    "bench": 8,
    "__init__": 8,
    "__main__": 8,
}

# Circles left on purpose (none since issue 25 removed cel.py <-> selector_cache.py).
KNOWN_CIRCLES: set[frozenset[str]] = set()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Every kschedlib module ``name`` imports, wherever the import statement sits."""
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()

    def resolve(target: str) -> None:
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target and target != name:
            found.add(target)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("kschedlib"):
                    resolve(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                if not is_package:
                    base = base[:-1]
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if not module.startswith("kschedlib"):
                continue
            for alias in node.names:
                if f"{module}.{alias.name}" in known:
                    resolve(f"{module}.{alias.name}")
                else:
                    resolve(module)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    return {name: _imports(name, path, known) for name, path in modules.items()}


def _layer(module: str) -> int:
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "__init__"
    assert top in LAYERS, f"{module}: place kschedlib.{top} in a layer (tests/test_layers.py)"
    return LAYERS[top]


def _strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's algorithm, iterative; returns the components with more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[set[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(graph[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            if successors:
                nxt = successors.pop()
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph[nxt])))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: set[str] = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(component)
    return components


def test_every_module_has_a_layer() -> None:
    for module in _modules():
        _layer(module)


def test_no_import_runs_up_the_layers() -> None:
    upward = [
        f"{src} (layer {_layer(src)}) imports {dst} (layer {_layer(dst)})"
        for src, targets in sorted(_graph().items())
        for dst in sorted(targets)
        if _layer(dst) > _layer(src)
    ]
    assert upward == []


def test_no_import_circles() -> None:
    graph = _graph()
    # A package's __init__ re-exporting its own submodules is not a circle between modules:
    # drop the edge from a package to its own submodules when looking for circles.
    trimmed = {
        src: {dst for dst in targets if not dst.startswith(src + ".")} for src, targets in graph.items()
    }
    circles = [c for c in _strongly_connected(trimmed) if frozenset(c) not in KNOWN_CIRCLES]
    assert circles == [], [sorted(c) for c in circles]


def test_the_checker_sees_function_level_and_type_checking_imports(tmp_path: Path) -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from kschedlib.cli import simulate\n"
        "def f() -> None:\n    import kschedlib.whatif.fork\n"
        "    from . import errors\n"
    )
    path = tmp_path / "mod.py"
    path.write_text(source, encoding="utf-8")
    known = {"kschedlib.cli", "kschedlib.cli.simulate", "kschedlib.whatif", "kschedlib.whatif.fork",
             "kschedlib.errors"}
    assert _imports("kschedlib.mod", path, known) == {
        "kschedlib.cli.simulate", "kschedlib.whatif.fork", "kschedlib.errors"
    }
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _strongly_connected(graph) == [{"a", "b", "c"}]
