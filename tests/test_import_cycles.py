"""The project's import graph: no cycles between our modules, and the layers of DESIGN.md.

Every module under ``engine/``, ``vision/``, ``kiosk/`` and ``hardware/`` is parsed (``ast``, the
files are not imported) and every import statement in it counts, wherever it stands: at the top,
inside a function or under ``if TYPE_CHECKING:``. A function-local import does not make a cycle
go away, it only moves the moment it bites; a cycle is broken by moving the shared piece to a
module both sides import, or by handing the dependency in.

An import names the longest module of ours it reaches (``from kiosk.table.app import x`` ->
``kiosk.table.app``; ``from engine import Card`` -> the package ``engine``). The parents a
submodule import initialises (``kiosk``, ``kiosk.table``) are not edges: Python runs them first,
before the module itself, so they cannot close a loop through it.

Layers (DESIGN.md, "who may import whom"): ``engine`` imports nothing of ours; ``vision`` and
``hardware`` import ``engine`` and themselves only (never ``kiosk``, never each other).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("engine", "vision", "kiosk", "hardware")
#: what each layer may import besides itself
ALLOWED = {"engine": set(), "vision": {"engine"}, "hardware": {"engine"}, "kiosk": set(PACKAGES)}
#: Cycles known and not yet broken, each with why it is here. The list only shrinks: a cycle
#: listed here that no longer exists fails the test too (take it off the list).
KNOWN_CYCLES: dict[frozenset[str], str] = {}


def project_modules(root: Path = ROOT) -> dict[str, tuple[Path, bool]]:
    """Dotted name -> (file, is a package's ``__init__``) for every module of ours."""
    mods: dict[str, tuple[Path, bool]] = {}
    for pkg in PACKAGES:
        for f in sorted((root / pkg).rglob("*.py")):
            parts = list(f.relative_to(root).with_suffix("").parts)
            is_pkg = parts[-1] == "__init__"
            if is_pkg:
                parts.pop()
            mods[".".join(parts)] = (f, is_pkg)
    return mods


def _ours(name: str, mods: dict[str, tuple[Path, bool]]) -> str | None:
    """The longest module of ours that ``name`` (a dotted path) reaches, or None."""
    parts = name.split(".")
    while parts:
        if ".".join(parts) in mods:
            return ".".join(parts)
        parts.pop()
    return None


def imports_of(module: str, mods: dict[str, tuple[Path, bool]]) -> dict[str, int]:
    """The modules of ours that ``module`` imports -> the first line that does."""
    path, is_pkg = mods[module]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if is_pkg else module.rpartition(".")[0]
    out: dict[str, int] = {}

    def add(target: str | None, line: int) -> None:
        if target is not None and target != module:
            out.setdefault(target, line)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(_ours(alias.name, mods), node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                full = ".".join(base + ([node.module] if node.module else []))
            else:
                full = node.module or ""
            for alias in node.names:
                sub = f"{full}.{alias.name}"
                add(sub if sub in mods else _ours(full, mods), node.lineno)
    return out


def import_graph(root: Path = ROOT) -> dict[str, dict[str, int]]:
    mods = project_modules(root)
    return {m: imports_of(m, mods) for m in mods}


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative), each as
    one loop through it, e.g. ``[a, b, a]``."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    comps: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, list[str]]] = [(start, sorted(graph[start]))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, todo = work[-1]
            if todo:
                w = todo.pop(0)
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, sorted(graph[w])))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    comps.append(sorted(comp))
    return [_loop(comp, graph) for comp in comps]


def _loop(comp: list[str], graph: dict[str, dict[str, int]]) -> list[str]:
    """A shortest loop from the component's first module back to itself (for the message)."""
    inside = set(comp)
    first = comp[0]
    paths = {first: [first]}
    frontier = [first]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v]):
                if w == first:
                    return paths[v] + [first]
                if w in inside and w not in paths:
                    paths[w] = paths[v] + [w]
                    nxt.append(w)
        frontier = nxt
    return comp  # not reached: a component of more than one module has a loop through first


def _describe(loop: list[str], graph: dict[str, dict[str, int]]) -> str:
    steps = [f"{a} (line {graph[a][b]}) -> {b}" for a, b in zip(loop, loop[1:], strict=False)]
    return "; ".join(steps)


GRAPH = import_graph()


def test_every_package_is_parsed() -> None:
    for pkg in PACKAGES:
        assert pkg in GRAPH
    assert "engine.referee" in GRAPH and "kiosk.table.app" in GRAPH and "vision.detector" in GRAPH


def test_no_import_cycles() -> None:
    found = cycles(GRAPH)
    new = [loop for loop in found if frozenset(loop) not in KNOWN_CYCLES]
    assert not new, "import cycles between project modules:\n" + "\n".join(
        _describe(loop, GRAPH) for loop in new
    )
    gone = set(KNOWN_CYCLES) - {frozenset(loop) for loop in found}
    assert not gone, f"these cycles are broken now, take them off KNOWN_CYCLES: {gone}"


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layers(layer: str) -> None:
    may = ALLOWED[layer] | {layer}
    bad = [
        f"{m} (line {line}) imports {target}"
        for m, targets in GRAPH.items()
        if m.split(".")[0] == layer
        for target, line in targets.items()
        if target.split(".")[0] not in may
    ]
    assert not bad, f"{layer} may import only {sorted(may)}:\n" + "\n".join(bad)


def test_the_checker_sees_function_local_and_relative_imports(tmp_path: Path) -> None:
    """The checker itself: a cycle closed by an import inside a function, or by a relative
    import, is found; a package's own ``__init__`` importing its submodule is not a cycle."""
    pkg = tmp_path / "kiosk"
    (pkg / "sub").mkdir(parents=True)
    for name in PACKAGES:
        (tmp_path / name).mkdir(exist_ok=True)
        (tmp_path / name / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("from kiosk import a\n")
    (pkg / "a.py").write_text("import engine\n\ndef f():\n    from kiosk.sub import b\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("from .. import a\nfrom . import c\n")
    (pkg / "sub" / "c.py").write_text("")
    (tmp_path / "engine" / "x.py").write_text("import vision.y\n")
    (tmp_path / "vision" / "y.py").write_text("")
    graph = import_graph(tmp_path)
    assert graph["kiosk.sub.b"] == {"kiosk.a": 1, "kiosk.sub.c": 2}
    assert cycles(graph) == [["kiosk.a", "kiosk.sub.b", "kiosk.a"]]
    assert graph["engine.x"] == {"vision.y": 1}
