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

# ops modules that still reach into nn (each with the reason); fixing one means removing
# it here, and a new one fails test_ops_never_import_nn
OPS_IMPORTING_NN = {
    "ember.ops.internal": "grid_sampler's registry op is registered in nn/functional/_vision.py",
    "ember.ops.aten_only": "the antialiased upsample kernels live in nn/functional/_antialias.py",
}


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
    unexpected = sorted(set(bad) - set(OPS_IMPORTING_NN))
    assert not unexpected, f"ops modules importing nn: { {m: bad[m] for m in unexpected} }"
    fixed = sorted(m for m in OPS_IMPORTING_NN if m in MODULES and m not in bad)
    assert not fixed, f"no longer import nn, remove from OPS_IMPORTING_NN: {fixed}"


def test_core_files_stay_under_1000_lines():
    long = {m: n for m, p in MODULES.items() if _is_core(m)
            and (n := len(p.read_text().splitlines())) >= 1000}
    assert not long, f"split these by concept: {long}"
