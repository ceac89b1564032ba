"""jvp rules attached to the registry entries (`op.jvp(args, tangents, out)`).

Note: ops linear in their one tensor input (every `view`-tagged op, sums, means, copies)
get the op itself applied to the tangent; the common pointwise math and the matmul family
get their closed forms. Any other differentiable op uses the transpose of its registry vjp
(ember/autograd/forward_ad.py), so these rules are about speed, not coverage. Rules are
written in ember ops: run under an outer autograd, the tangents are differentiable too.
"""
from ..ops._registry import REGISTRY


def _make_linear(op):
    def rule(args, tans, out):
        t = tans[0]
        if t is None:
            return None
        return op(t, *args[1:])
    return rule


def _identity(args, tans, out):
    return tans[0]


def _sum_terms(*terms):
    res = None
    for t in terms:
        if t is not None:
            res = t if res is None else res + t
    return res


def _add(args, tans, out):
    ta, tb = tans[0], tans[1]
    alpha = args[2] if len(args) > 2 else 1
    return _sum_terms(ta, None if tb is None else (tb if alpha == 1 else tb * alpha))


def _sub(args, tans, out):
    ta, tb = tans[0], tans[1]
    alpha = args[2] if len(args) > 2 else 1
    return _sum_terms(ta, None if tb is None else -(tb if alpha == 1 else tb * alpha))


def _mul(args, tans, out):
    a, b = args[0], args[1]
    ta, tb = tans[0], tans[1]
    return _sum_terms(None if ta is None else ta * b, None if tb is None else a * tb)


def _div(args, tans, out):
    if len(args) > 2 and args[2] is not None:        # floor/trunc division: flat
        return None
    b = args[1]
    ta, tb = tans[0], tans[1]
    return _sum_terms(None if ta is None else ta / b, None if tb is None else -(out * tb) / b)


def _unary(f):
    def rule(args, tans, out):
        t = tans[0]
        return None if t is None else t * f(args[0], out)
    return rule


def _matmul_like(op):
    def rule(args, tans, out):
        a, b = args[0], args[1]
        ta, tb = tans[0], tans[1]
        return _sum_terms(None if ta is None else op(ta, b), None if tb is None else op(a, tb))
    return rule


def _attach():
    unary = {
        "exp": lambda a, o: o,
        "sin": lambda a, o: a.cos(),
        "cos": lambda a, o: -a.sin(),
        "tanh": lambda a, o: 1 - o * o,
        "sigmoid": lambda a, o: o * (1 - o),
        "relu": lambda a, o: (a > 0).to(a.dtype),
        "log": lambda a, o: 1 / a,
        "sqrt": lambda a, o: 0.5 / o,
    }
    rules = {"add": _add, "sub": _sub, "mul": _mul, "div": _div,
             "detach": _identity, "alias": _identity}
    for name, f in unary.items():
        rules[name] = _unary(f)
    for name in ("matmul", "mm", "bmm"):
        rules[name] = _matmul_like(REGISTRY[name])
    linear = [n for n, op in REGISTRY.items() if "view" in op.tags]
    linear += ["sum", "mean", "neg", "clone", "_reshape_copy", "flip", "repeat", "tril",
               "triu", "roll"]
    for name in linear:
        op = REGISTRY.get(name)
        if op is not None and name not in rules and _single_tensor(op):
            rules[name] = _make_linear(op)
    for name, rule in rules.items():
        op = REGISTRY.get(name)
        if op is not None and getattr(op, "jvp", None) is None:
            op.jvp = rule


def _single_tensor(op):
    if op._schema_text is None:
        return False
    args = op._schema.arguments
    return bool(args) and str(args[0].type).startswith("Tensor") and \
        not any(str(a.type).startswith("Tensor") for a in args[1:])


_attach()
