"""The Python package imports downwards only (docs/design/python.md, "Layers"): no module of
crossbow (python/crossbow, and crossbow.nets from nets/) reaches itself again through the
modules it imports, at the top of the file or inside a function. A late import that only
dodges a circle at load time is still a circle: it ties the two files together all the same.

An edge is what a module names: ``import crossbow.x``, ``from crossbow import x``, ``from
crossbow.x import y``, ``from . import x`` and ``importlib.import_module("crossbow.x")``; a
package's ``__init__`` running before its modules is not one.
"""

import ast
import pathlib
import shutil
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
# package: its folder (crossbow.nets lives at the top of the checkout: crossbow/__init__.py)
PACKAGES = {"crossbow": "python/crossbow", "crossbow.nets": "nets"}


def modules():
    """{module name: path} of every module of the packages."""
    found = {}
    for package, folder in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((package,) + parts)] = path
    return found


def _targets(node, module, is_package, known):
    """The modules of the packages one import statement or call in `module` names."""
    if isinstance(node, ast.Import):
        names = {alias.name for alias in node.names}
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:  # relative: from the package `module` is in (or is)
            anchor = module.split(".")
            anchor = anchor[:len(anchor) - node.level + (1 if is_package else 0)]
            base = ".".join(anchor + ([base] if base else []))
        # `from a import b`: the module a.b where there is one, else a name inside a
        names = {f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                 for alias in node.names}
    elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
          and node.func.attr == "import_module" and node.args
          and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
        names = {node.args[0].value}
    else:
        return set()
    return {name for name in names if name in known and name != module}


def imports():
    """{module: {imported module: line of its first import}} within the packages."""
    known = modules()
    graph = {}
    for module, path in known.items():
        edges = graph.setdefault(module, {})
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            for target in _targets(node, module, path.name == "__init__.py", known):
                edges[target] = min(edges.get(target, node.lineno), node.lineno)
    return graph


def circles(graph):
    """The groups of modules that reach each other through imports (Tarjan's strongly
    connected components of more than one module), each sorted."""
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return groups


def example(graph, group):
    """The shortest cycle [m1, m2, ..., m1] through the group's first module, inside it."""
    start = group[0]
    paths, seen = [[start]], {start}
    while paths:
        path = paths.pop(0)
        for w in sorted(graph[path[-1]]):
            if w == start:
                return path + [start]
            if w in group and w not in seen:
                seen.add(w)
                paths.append(path + [w])
    raise AssertionError(f"{group} is not strongly connected")


def describe(graph, group):
    """The group's modules, then one circle through them with each import's file and line."""
    known = modules()
    cycle = example(graph, group)
    steps = [cycle[0]] + [f"{b} ({known[a].relative_to(ROOT)}:{graph[a][b]})"
                          for a, b in zip(cycle, cycle[1:])]
    return f"{len(group)} modules ({', '.join(group)}): " + " -> ".join(steps)


def test_every_package_has_modules():
    found = modules()
    for package in PACKAGES:
        assert package in found, f"no {package} under {PACKAGES[package]} (moved? update PACKAGES)"
    assert len(found) > 20


def test_no_import_circle():
    graph = imports()
    found = [describe(graph, group) for group in circles(graph)]
    assert not found, "import circles:\n" + "\n".join(found)


# The option table stands on the extension and the name hints alone: whatever reads options
# (the builder, the trainer, the commands) may import it.
LOWER = {"crossbow.options": {"crossbow._native", "crossbow.names"},
         "crossbow.weights": {"crossbow._native"}}


@pytest.mark.parametrize("module", sorted(LOWER))
def test_lower_layers_import_only_what_is_below_them(module):
    assert set(imports()[module]) <= LOWER[module], (
        f"{module} imports {sorted(set(imports()[module]) - LOWER[module])}, above it")


@pytest.mark.parametrize("file, planted, importer, imported", [
    ("python/crossbow/weights.py", "from crossbow.model import Model\n",
     "crossbow.weights", "crossbow.model"),
    ("python/crossbow/options.py", "def f():\n    from crossbow import trainer\n",
     "crossbow.options", "crossbow.trainer"),
    ("python/crossbow/builder.py",
     "import importlib\nimportlib.import_module('crossbow.net_source')\n",
     "crossbow.builder", "crossbow.net_source"),
    ("nets/lenet.py", "def f():\n    from .. import nets\n", "crossbow.nets.lenet",
     "crossbow.nets"),
])
def test_a_planted_circle_is_found(tmp_path, monkeypatch, file, planted, importer, imported):
    """The scan itself: one import added to a copy of the package closes a circle, which the
    test names with the planted line: at the top of a file, inside a function, through
    importlib and relative."""
    for folder in PACKAGES.values():
        shutil.copytree(ROOT / folder, tmp_path / folder,
                        ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert circles(imports()) == []
    line = len((tmp_path / file).read_text().splitlines()) + planted.count("\n")
    with open(tmp_path / file, "a") as f:
        f.write(planted)
    graph = imports()
    found = circles(graph)
    assert len(found) == 1 and {importer, imported} <= set(found[0]), found
    # Every circle now runs through the planted import, the one that closed it.
    assert f"-> {imported} ({file}:{line})" in describe(graph, found[0])
