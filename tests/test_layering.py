"""The core's import layering (issue 8 point 6), read from the source with `ast`.

The core is ember's private top-level modules (ember/_*.py), ember.ops and
ember.autograd. Their module-level imports must form no cycle, so the layers can be
drawn (ember/ops/README.md, "Layers"); imports inside functions are deferred uses and
do not count. Ops never import nn: nn is built on ops. These tests parse files; they
import nothing, so they cannot be fooled by import order.
"""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "ember"



def _modules():
    mods = {}
    for path in PKG.rglob("*.py"):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        mods[".".join(parts)] = path
    return mods


MODULES = _modules()


def _is_core(name):
    parts = name.split(".")
    return ((len(parts) == 2 and parts[1].startswith("_")) or parts[1:2] == ["ops"]
            or parts[1:2] == ["autograd"]) if parts[0] == "ember" and len(parts) > 1 else False


def _resolve(mod, path, level, name):
    if level == 0:
        return name
    base = mod.split(".")
    if path.name != "__init__.py":
        base = base[:-1]
    base = base[:len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def _imports(mod, path, module_level):
    """The ember modules `mod` imports (at module level only, or anywhere)."""
    tree = ast.parse(path.read_text())
    found = set()

    def visit(node):
        for s in ast.iter_child_nodes(node):
            if isinstance(s, ast.Import):
                found.update(a.name for a in s.names)
            elif isinstance(s, ast.ImportFrom):
                base = _resolve(mod, path, s.level, s.module)
                found.add(base)
                found.update(f"{base}.{a.name}" for a in s.names)
            elif module_level and isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                 ast.Lambda)):
                continue                   # a deferred import: runs when called
            elif isinstance(s, ast.ClassDef) and module_level:
                visit(s)                   # a class body runs at import time
            else:
                visit(s)
    visit(tree)
    # a module's own parent packages are being imported already: not an edge
    return {m for m in found if m in MODULES and m != mod and not mod.startswith(m + ".")}


def _cycles(graph):
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def test_core_has_no_module_level_import_cycle():
    core = {m: p for m, p in MODULES.items() if _is_core(m)}
    assert "ember.ops._registry" in core and "ember.autograd.graph" in core
    graph = {m: {n for n in _imports(m, p, True) if _is_core(n)} for m, p in core.items()}
    cycles = _cycles(graph)
    detail = ["; ".join(f"{m} -> {sorted(n for n in graph[m] if n in c)}" for m in c)
              for c in cycles]
    assert not cycles, "import cycles in the core: " + " | ".join(detail)


def test_the_cycle_check_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_ops_never_import_nn():
    bad = {}
    for m, p in MODULES.items():
        if m.startswith("ember.ops"):
            nn = sorted(n for n in _imports(m, p, False) if n.startswith("ember.nn"))
            if nn:
                bad[m] = nn
    assert not bad, f"ops modules importing nn: {bad}"


def test_every_file_stays_under_1000_lines():
    """Every ember/**/*.py file, not only the core: a module keeps to one job (STYLE.md)."""
    long = {m: n for m, p in MODULES.items() if (n := len(p.read_text().splitlines())) >= 1000}
    assert not long, f"split these by concept: {long}"


# ---------------------------------------------------------------- Tensor's method table

def _tensor_class_body():
    """Names the Tensor class body in ember/_tensor.py defines."""
    tree = ast.parse((PKG / "_tensor.py").read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Tensor")
    names = set()
    for s in cls.body:
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(s.name)
        elif isinstance(s, ast.Assign):
            names.update(t.id for t in s.targets if isinstance(t, ast.Name))
    return names


def _assignments_to_tensor(path):
    """(line, text) of every `Tensor.x = ...`, `setattr(Tensor, ...)` (also through an
    alias such as `T = Tensor`) in one file."""
    tree = ast.parse(path.read_text())
    aliases = {"Tensor"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and \
                node.value.id in aliases:
            aliases.update(t.id for t in node.targets if isinstance(t, ast.Name))
    found = []
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        for t in targets:
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and \
                    t.value.id in aliases:
                found.append((node.lineno, ast.unparse(t)))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id in ("setattr", "delattr") and node.args and \
                isinstance(node.args[0], ast.Name) and node.args[0].id in aliases:
            found.append((node.lineno, ast.unparse(node)[:60]))
    return found


def test_no_module_assigns_methods_to_tensor():
    """Only ember/_tensor_methods.py installs Tensor's methods (fx's Patcher swaps some
    for the length of a trace through its own setattr, which restores them)."""
    bad = {}
    for m, p in MODULES.items():
        if m in ("ember._tensor_methods", "ember._tensor"):
            continue
        hits = _assignments_to_tensor(p)
        if hits:
            bad[m] = hits
    assert not bad, f"declare these in ember/_tensor_methods.py's TABLE instead: {bad}"


def test_the_assignment_check_finds_assignments(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("T = Tensor\nT.a = 1\nTensor.b = T.c = 2\nsetattr(T, 'd', 3)\nx.e = 4\n")
    assert [line for line, _ in _assignments_to_tensor(src)] == [2, 3, 3, 4]


def test_every_tensor_method_is_declared():
    """Every attribute on Tensor is in the class body or the table, and is the function
    the table names (nothing overwrote it after install)."""
    import ember  # noqa: F401
    from ember import _tensor_methods as TM
    from ember._tensor import Tensor
    declared = TM.declared()
    body = _tensor_class_body()
    python = {"__module__", "__dict__", "__weakref__", "__doc__", "__qualname__"}
    attached = set(vars(Tensor)) - body - python - TM.ADDED
    assert not attached - set(declared), f"undeclared: {sorted(attached - set(declared))}"
    assert not set(declared) & body, f"in the class body and the table: {set(declared) & body}"
    wrong = [n for n, (_, mod) in declared.items() if vars(Tensor).get(n) is not
             TM._lookup(mod, n)]
    assert not wrong, f"not the table's function: {wrong}"
    assert len(declared) > 500


def test_install_refuses_an_undeclared_or_doubly_declared_method(monkeypatch):
    import pytest
    import ember  # noqa: F401
    from ember import _tensor_methods as TM
    from ember.ops import pointwise
    monkeypatch.setitem(pointwise.METHODS, "not_a_declared_method", lambda self: self)
    with pytest.raises(RuntimeError, match="does not declare.*not_a_declared_method"):
        TM.install()
    monkeypatch.delitem(pointwise.METHODS, "not_a_declared_method")
    monkeypatch.setattr(TM, "TABLE", TM.TABLE + (("again", pointwise, "add"),))
    with pytest.raises(RuntimeError, match="'add' is declared twice"):
        TM.install()
