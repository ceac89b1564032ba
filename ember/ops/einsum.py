"""einsum: Einstein summation as a composition of ember ops (so it is differentiable,
twice, and the compiler sees only registry ops).

Note: follows PyTorch's algorithm and errors. Each operand's subscripts become
integer labels (letters 0..51, the dims an ellipsis covers 52, 53, ... aligned on the
right); a label repeated inside one operand takes the diagonal; a label found in
one operand only and not in the output is summed right away; operands are then
contracted pairwise (left to right, or NumPy's greedy `einsum_path` order for three or
more), each pair as one batched `matmul` over (batch, rows, contracted) x (batch,
contracted, cols), or as a broadcast `mul` when the pair shares no contracted label;
labels of size 1 broadcast against larger ones. The implicit output is the ellipsis
dims followed by the labels that occur exactly once, in ASCII order.
"""
import numpy as np

from .._tensor import Tensor
from ._elementwise import type_name

__all__ = ["einsum"]

_ELL = 52          # label of the first dim an ellipsis covers


def _label(c):
    return ord(c) - ord("A") if c <= "Z" else ord(c) - ord("a") + 26


def _char(lab):
    return chr(ord("A") + lab) if lab < 26 else chr(ord("a") + lab - 26)


def _err(msg):
    return RuntimeError("einsum(): " + msg)


def _parse_term(eq, start, stop, what):
    """Labels of eq[start:stop] (None marks the ellipsis); `what` names it in errors."""
    labels, i, ell = [], start, False
    while i < stop:
        c = eq[i]
        if c == " ":
            i += 1
            continue
        if c == ".":
            if ell:
                raise _err(f"found '.' for {what} for which an ellipsis was already found")
            if eq[i:i + 3] != "..." or i + 3 > stop:
                raise _err(f"found '.' for {what} that is not part of any ellipsis")
            labels.append(None)
            ell = True
            i += 3
            continue
        if not ("a" <= c <= "z" or "A" <= c <= "Z"):
            raise _err(f"invalid subscript given at index {i} in the equation string, "
                       "subscripts must be in [a-zA-Z]")
        labels.append(_label(c))
        i += 1
    return labels


def _parse(eq, n_ops):
    arrow = eq.find("->")
    lhs_end = len(eq) if arrow < 0 else arrow
    terms, start = [], 0
    for j in range(lhs_end + 1):
        if j == lhs_end or eq[j] == ",":
            terms.append(_parse_term(eq, start, j, f"operand {len(terms)}"))
            start = j + 1
    if len(terms) > n_ops:
        raise _err("fewer operands were provided than specified in the equation")
    if len(terms) < n_ops:
        raise _err("more operands were provided than specified in the equation")
    out = None if arrow < 0 else _parse_term(eq, arrow + 2, len(eq), "the output")
    return terms, out


def _sublist_equation(args):
    """einsum(op1, sub1, op2, sub2, ..., [out]) -> (equation, operands)."""
    ops = list(args[0::2])
    subs = list(args[1::2])
    out = None
    if len(ops) > len(subs):              # the last item is the output sublist
        out = ops.pop()

    def term(sub):
        s = ""
        for x in sub:
            if x is Ellipsis:
                s += "..."
            elif isinstance(x, int) and 0 <= x < 52:
                s += _char(x)
            else:
                raise ValueError("einsum(): expected subscript to be within the range [0, 52) "
                                 f"but got {x}")
        return s
    eq = ",".join(term(s) for s in subs)
    if out is not None:
        eq += "->" + term(out)
    return eq, ops


def _expand_ellipsis(i, t, labels, ell_ndim):
    """The operand's labels with its ellipsis replaced by ellipsis labels (right aligned)."""
    n = len([x for x in labels if x is not None])
    if None not in labels:
        if n != t.dim():
            raise _err(f"the number of subscripts in the equation ({n}) does not match the "
                       f"number of dimensions ({t.dim()}) for operand {i} and no ellipsis was "
                       "given")
        return labels
    if n > t.dim():
        raise _err(f"the number of subscripts in the equation ({n}) is more than the number "
                   f"of dimensions ({t.dim()}) for operand {i}")
    e = t.dim() - n
    k = labels.index(None)
    return labels[:k] + [_ELL + ell_ndim - e + j for j in range(e)] + labels[k + 1:]


def _take_diagonals(i, t, labels):
    """Repeated labels of one operand -> the diagonal (as PyTorch's einsum does)."""
    while True:
        seen = {}
        for p, lab in enumerate(labels):
            if lab in seen:
                q = seen[lab]
                if t.shape[q] != t.shape[p]:
                    raise _err(f"subscript {_char(lab)} is repeated for operand {i} but the "
                               f"sizes don't match, {t.shape[p]} != {t.shape[q]}")
                t = t.diagonal(0, q, p)
                labels = [x for j, x in enumerate(labels) if j not in (p, q)] + [lab]
                break
            seen[lab] = p
        else:
            return t, labels


def _check_broadcast(operands):
    sizes = {}
    for i, (t, labels) in enumerate(operands):
        for lab, n in zip(labels, t.shape):
            prev = sizes.get(lab)
            if prev is not None and n != prev and n != 1 and prev != 1:
                if lab >= _ELL:
                    raise _err(f"dimension {lab - _ELL} covered by ellipsis in operand {i}has "
                               f"size {n} which does not broadcast with previously seen "
                               f"ellipsis with size {prev} for the respective dimension")
                raise _err(f"subscript {_char(lab)} has size {n} for operand {i} which does "
                           f"not broadcast with previously seen size {prev}")
            if prev is None or prev == 1:
                sizes[lab] = n


def _output_labels(terms, out, ell_ndim):
    ells = [_ELL + j for j in range(ell_ndim)]
    if out is None:
        counts = {}
        for term in terms:
            for lab in term:
                if lab is not None:
                    counts[lab] = counts.get(lab, 0) + 1
        return ells + sorted(lab for lab, c in counts.items() if c == 1)
    seen, res = set(), []
    used = {lab for term in terms for lab in term}
    for lab in out:
        if lab is None:
            res += ells
            continue
        if lab in seen:
            raise _err(f"output subscript {_char(lab)} appears more than once in the output")
        if lab not in used:
            raise _err(f"output subscript {_char(lab)} does not appear in the equation for any "
                       "input operand")
        seen.add(lab)
        res.append(lab)
    return res


def _sum_out(t, labels, drop):
    dims = [p for p, lab in enumerate(labels) if lab in drop]
    if not dims:
        return t, labels
    return t.sum(dims), [lab for lab in labels if lab not in drop]


def _check_pair_dtypes(a, b):
    """PyTorch contracts through bmm, which refuses mixed dtypes and bool."""
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected scalar type {type_name(a.dtype)} but found "
                           f"{type_name(b.dtype)}")
    if a.dtype.name == "bool":
        raise NotImplementedError("\"bmm\" not implemented for 'Bool'")


def _contract(a, la, b, lb, keep):
    """Contract two labelled operands; labels in `keep` survive."""
    a, la = _sum_out(a, la, set(la) - set(lb) - keep)
    b, lb = _sum_out(b, lb, set(lb) - set(la) - keep)
    both = [lab for lab in la if lab in lb]
    batch = [lab for lab in both if lab in keep]
    summed = [lab for lab in both if lab not in keep]
    a_only = [lab for lab in la if lab not in lb]
    b_only = [lab for lab in lb if lab not in la]
    if not summed:                       # an outer product over the batch: broadcast mul
        pa = a.permute([la.index(x) for x in batch + a_only])
        pb = b.permute([lb.index(x) for x in batch + b_only])
        nb = len(batch)
        pa = pa.reshape(tuple(pa.shape) + (1,) * len(b_only))
        pb = pb.reshape(tuple(pb.shape[:nb]) + (1,) * len(a_only) + tuple(pb.shape[nb:]))
        return pa * pb, batch + a_only + b_only
    _check_pair_dtypes(a, b)
    for lab in summed:                   # a size-1 side broadcasts: sum the other side
        i, j = la.index(lab), lb.index(lab)
        if a.shape[i] != b.shape[j]:
            if a.shape[i] == 1:
                b = b.sum(j, keepdim=True)
            else:
                a = a.sum(i, keepdim=True)
    size = dict(zip(la, a.shape))
    size_b = dict(zip(lb, b.shape))
    m = int(np.prod([size[x] for x in a_only]))
    k = int(np.prod([size[x] for x in summed]))
    n = int(np.prod([size_b[x] for x in b_only]))
    pa = a.permute([la.index(x) for x in batch + a_only + summed])
    pb = b.permute([lb.index(x) for x in batch + summed + b_only])
    nb = len(batch)
    res = pa.reshape(tuple(pa.shape[:nb]) + (m, k)).matmul(
        pb.reshape(tuple(pb.shape[:nb]) + (k, n)))
    shape = tuple(res.shape[:nb]) + tuple(size[x] for x in a_only) + \
        tuple(size_b[x] for x in b_only)
    return res.reshape(shape), batch + a_only + b_only


def _path(operands):
    """Pairs of positions to contract, NumPy's greedy order (PyTorch uses opt_einsum's)."""
    labs = sorted({lab for _, ls in operands for lab in ls})
    if len(operands) < 3 or len(labs) > 52:
        return [(0, 1)] * (len(operands) - 1)
    ch = {lab: _char(i) for i, lab in enumerate(labs)}
    eq = ",".join("".join(ch[x] for x in ls) for _, ls in operands)
    dummies = [np.broadcast_to(np.zeros((), np.float32), tuple(t.shape)) for t, _ in operands]
    try:
        path = np.einsum_path(eq, *dummies, optimize="greedy")[0][1:]
    except ValueError:
        return [(0, 1)] * (len(operands) - 1)
    return [tuple(sorted(p)) for p in path]


def einsum(*args):
    """torch.einsum(equation, *operands), einsum(equation, [operands]) or the sublist
    form einsum(op1, sublist1, op2, sublist2, ..., [sublist_out])."""
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one "
                         "operand, or at least one operand and its subscripts list")
    if isinstance(args[0], str):
        eq, ops = args[0], list(args[1:])
        if len(ops) == 1 and isinstance(ops[0], (list, tuple)):
            ops = list(ops[0])
    else:
        eq, ops = _sublist_equation(args)
    for t in ops:
        if not isinstance(t, Tensor):
            raise TypeError(f"einsum(): expected Tensor operands, got {type(t).__name__}")
    terms, out = _parse(eq, len(ops))
    ell_ndim = max([t.dim() - len([x for x in term if x is not None])
                    for t, term in zip(ops, terms) if None in term] + [0])
    out_labels = _output_labels(terms, out, ell_ndim)
    operands = []
    for i, (t, term) in enumerate(zip(ops, terms)):
        labels = _expand_ellipsis(i, t, term, ell_ndim)
        operands.append(_take_diagonals(i, t, labels))
    _check_broadcast(operands)
    keep_out = set(out_labels)
    for i, (t, ls) in enumerate(operands):      # labels only this operand has: sum now
        others = {x for j, (_, l2) in enumerate(operands) if j != i for x in l2}
        operands[i] = _sum_out(t, ls, set(ls) - others - keep_out)
    for i, j in _path(operands):
        (a, la), (b, lb) = operands[i], operands[j]
        rest = [o for k, o in enumerate(operands) if k not in (i, j)]
        keep = keep_out | {x for _, ls in rest for x in ls}
        operands = rest + [_contract(a, la, b, lb, keep)]
    t, labels = operands[0]
    t, labels = _sum_out(t, labels, set(labels) - keep_out)
    return _to_output(t, labels, out_labels)


def _to_output(t, labels, out_labels):
    """Permute to the output order; an output label no operand had (an ellipsis dim
    the operands lacked) becomes a size-1 dim."""
    present = [lab for lab in out_labels if lab in labels]
    if present != labels:
        t = t.permute([labels.index(lab) for lab in present])
    if len(present) != len(out_labels):
        shape = [t.shape[present.index(lab)] if lab in present else 1 for lab in out_labels]
        t = t.reshape(shape)
    return t

