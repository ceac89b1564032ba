"""gradcheck / gradgradcheck: finite differences against the analytical Jacobian.

Note: follows torch.autograd.gradcheck. The numerical Jacobian perturbs each input
element in place (on the raw array, so no version bump) by +-eps and takes central
differences; the analytical one runs `autograd.grad` once per output element with a
one-hot grad_output. Complex inputs use PyTorch's convention: the column for an
element is ds/dx + 1j * ds/dy (real and imaginary perturbations). Complex outputs are
checked as two real functions, real(out) (grad_output e_j) and imag(out) (grad_output
1j * e_j, which is what imag's backward produces). Fast mode compares v^T J u with
random u, v instead of whole Jacobians.
"""
import warnings
from itertools import product

import numpy as np

from .._tensor import Tensor, wrap, wrap_view
from .graph import Node, gradient_edge

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck/gradgradcheck when a check fails (a RuntimeError, as in torch)."""


def _as_tuple(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _differentiable_outputs(x):
    return tuple(o for o in _as_tuple(x) if o.requires_grad)


def _diff_inputs(inputs):
    return [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]


def _check_inputs(inputs):
    found = False
    for idx, inp in enumerate(inputs):
        if isinstance(inp, Tensor) and inp.requires_grad:
            if inp.dtype.name not in ("float64", "complex128"):
                warnings.warn(f"Input #{idx} requires gradient and is not a double precision "
                              "floating point or complex. This check will likely fail if all "
                              "the inputs are not of double precision floating point or "
                              "complex. ", stacklevel=3)
            if not all(st > 0 or sz <= 1 for st, sz in zip(inp.stride(), inp.shape)):
                raise RuntimeError(
                    f"The {idx}th input has a dimension with stride 0. gradcheck only supports "
                    "inputs that are non-overlapping to be able to compute the numerical "
                    "gradients correctly. You should call .contiguous on the input before "
                    "passing it to gradcheck.")
            found = True
    if not found:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, "
                         "but none of them have requires_grad=True.")


# ------------------------------------------------------------------ numerical side

def _outputs_np(func, inputs):
    """Run func and copy every float/complex output to a flat float64/complex128 array."""
    res = []
    for o in _as_tuple(func(*inputs)):
        a = np.array(o._data, copy=True).reshape(-1)
        res.append(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64))
    return res


def _central(func, inputs, arr, idx, delta, eps):
    orig = arr[idx].copy()
    arr[idx] = orig - delta
    a = _outputs_np(func, inputs)
    arr[idx] = orig + delta
    b = _outputs_np(func, inputs)
    arr[idx] = orig
    return [(y - x) / (2 * eps) for x, y in zip(a, b)]


def _numerical_jacobian(func, inputs, eps, part):
    """jac[k][i] = (numel_in_k, numel_out_i) for each differentiable input k."""
    outs = [o for o in _as_tuple(func(*inputs))]
    sizes = [o.numel() for o in outs]
    jacs = []
    for x in _diff_inputs(inputs):
        arr = x._data
        cplx = arr.dtype.kind == "c"
        cols = [np.zeros((x.numel(), n), np.complex128 if cplx else np.float64) for n in sizes]
        for d, idx in enumerate(product(*[range(m) for m in arr.shape])):
            dx = _central(func, inputs, arr, idx, eps, eps)
            if cplx:
                dy = _central(func, inputs, arr, idx, eps * 1j, eps)
                dx = [part(a) + 1j * part(b) for a, b in zip(dx, dy)]
            else:
                dx = [part(a) for a in dx]
            for c, v in zip(cols, dx):
                c[d] = v
        jacs.append(cols)
    return jacs


def _real(a):
    return a.real if a.dtype.kind == "c" else a


def _imag(a):
    return a.imag if a.dtype.kind == "c" else a


# ----------------------------------------------------------------- analytical side

def _grad(output, inputs, grad_output):
    from . import grad
    return grad(output, inputs, grad_output, retain_graph=True, allow_unused=True)


def _one_hot(o, j, value):
    g = np.zeros(o.numel(), o._data.dtype)
    g[j] = value
    return wrap(g.reshape(o._data.shape), o.dtype)


def _analytical_rows(output, inputs, value):
    diff = _diff_inputs(inputs)
    rows = [[] for _ in diff]
    for j in range(output.numel()):
        for k, d in enumerate(_grad(output, diff, _one_hot(output, j, value))):
            rows[k].append(None if d is None else np.array(d._data, copy=True))
    return rows


def _stack(rows, inputs, n_out, check_grad_dtypes):
    jacs = []
    for x, col in zip(_diff_inputs(inputs), rows):
        cplx = x._data.dtype.kind == "c"
        jac = np.zeros((x.numel(), n_out), np.complex128 if cplx else np.float64)
        for j, d in enumerate(col):
            if d is None:
                continue
            if d.shape != x._data.shape:
                raise GradcheckError("Analytical gradient has incorrect size")
            if check_grad_dtypes and d.dtype != x._data.dtype:
                raise GradcheckError("Gradient has dtype mismatch")
            jac[:, j] = d.reshape(-1)
        jacs.append(jac)
    return jacs


def _analytical_jacobian(output, inputs, value, nondet_tol, check_grad_dtypes):
    n = output.numel()
    j1 = _stack(_analytical_rows(output, inputs, value), inputs, n, check_grad_dtypes)
    j2 = _stack(_analytical_rows(output, inputs, value), inputs, n, check_grad_dtypes)
    for a, b in zip(j1, j2):
        if a.size and np.abs(a - b).max() > nondet_tol:
            raise GradcheckError(
                "Backward is not reentrant, i.e., running backward with same input and "
                "grad_output multiple times gives different values, although analytical "
                "gradient matches numerical gradient."
                f"The tolerance for nondeterminism was {nondet_tol}.")
    return j1


def _allclose(a, n, rtol, atol):
    return bool(np.all(np.abs(a - n) <= atol + rtol * np.abs(n)))


def _mismatch_msg(a, n, i, k, out_is_complex, test_imag):
    part = "imaginary" if test_imag else "real"
    prefix = (f"While considering the {part} part of complex outputs only, "
              if out_is_complex else "")
    return (prefix + f"Jacobian mismatch for output {i:d} with respect to input {k:d},\n"
            f"numerical:{_show(n)}\nanalytical:{_show(a)}\n")


def _show(a):
    return repr(wrap(np.ascontiguousarray(a)))


# ----------------------------------------------------------------------- the checks

def _slow_check(func, inputs, func_out, eps, rtol, atol, nondet_tol, check_grad_dtypes,
                test_imag):
    part = _imag if test_imag else _real
    outs = _as_tuple(func_out)
    diff = [o for o in outs if o.requires_grad]
    numerical = _numerical_jacobian(func, inputs, eps, part)
    if not diff:
        for per_input in numerical:
            for jac in per_input:
                if np.any(jac != 0):
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        return
    numerical = [[per_input[i] for i, o in enumerate(outs) if o.requires_grad]
                 for per_input in numerical]
    for i, o in enumerate(diff):
        value = 1j if test_imag and o.is_complex() else 1
        analytical = _analytical_jacobian(o, inputs, value, nondet_tol, check_grad_dtypes)
        for k, a in enumerate(analytical):
            n = numerical[k][i]
            if not _allclose(a, n, rtol, atol):
                raise GradcheckError(_mismatch_msg(a, n, i, k, o.is_complex(), test_imag))


def _fast_check(func, inputs, func_out, eps, rtol, atol, nondet_tol, check_grad_dtypes,
                test_imag):
    rng = np.random.default_rng(0)
    part = _imag if test_imag else _real
    outs = _as_tuple(func_out)
    diff_x = _diff_inputs(inputs)

    def unit(n):
        v = rng.random(n)
        nrm = np.linalg.norm(v)
        return v / nrm if nrm else v

    all_u = [(unit(x.numel()), unit(x.numel())) if x.is_complex() else unit(x.numel())
             for x in diff_x]
    diff_out = [o for o in outs if o.requires_grad]
    all_v = [unit(o.numel()) for o in diff_out]
    for k, (x, u) in enumerate(zip(diff_x, all_u)):
        ju = _numerical_jvp(func, inputs, x, u, eps, part)
        ju = [j for j, o in zip(ju, outs) if o.requires_grad]
        if not diff_out:
            if any(j.size and np.abs(j).max() > nondet_tol for j in ju):
                raise GradcheckError("Numerical gradient for function expected to be zero")
            continue
        for i, (o, v, jui) in enumerate(zip(diff_out, all_v, ju)):
            n = np.dot(v, jui)
            scaled = v * (1j if test_imag and o.is_complex() else 1)
            g = _grad(o, diff_x, wrap(scaled.astype(o._data.dtype).reshape(o._data.shape),
                                      o.dtype))[k]
            vj = np.zeros(x.numel()) if g is None else np.array(g._data).reshape(-1)
            if isinstance(u, tuple):
                a = np.dot(vj.real, u[0]) + 1j * np.dot(vj.imag, u[1])
                tol = atol * (u[0].sum() + u[1].sum()) * v.sum()
            else:
                a = np.dot(vj, u)
                tol = atol * u.sum() * v.sum()
            if not _allclose(a, n, rtol, tol):
                raise GradcheckError(_mismatch_msg(a, n, i, k, o.is_complex(), test_imag)
                                     + "Fast gradcheck failed; rerun with fast_mode=False "
                                     "for the full Jacobians.")


def _numerical_jvp(func, inputs, x, u, eps, part):
    arr = x._data
    idx = ...
    ur = u[0] if isinstance(u, tuple) else u
    dx = _central(func, inputs, arr, idx, (eps * ur).reshape(arr.shape).astype(arr.dtype), eps)
    if isinstance(u, tuple):
        dy = _central(func, inputs, arr, idx,
                      (eps * 1j * u[1]).reshape(arr.shape).astype(arr.dtype), eps)
        return [part(a) + 1j * part(b) for a, b in zip(dx, dy)]
    return [part(a) for a in dx]


def _mul_by_grad_output_check(outputs, inputs):
    from . import grad
    diff = _diff_inputs(inputs)
    zeros = [wrap(np.zeros(o._data.shape, o._data.dtype), o.dtype) for o in outputs]
    for gi, di in zip(grad(outputs, diff, zeros, allow_unused=True), diff):
        if gi is None:
            continue
        if np.any(gi._data != 0):
            raise GradcheckError("backward not multiplied by grad_output")
        if gi.dtype is not di.dtype:
            raise GradcheckError("grad is incorrect type")
        if tuple(gi.shape) != tuple(di.shape):
            raise GradcheckError("grad is incorrect size")


class _UndefinedGradBackward(Node):
    """Passes an undefined (None) gradient on, as torch's UndefinedGrad does."""

    def name(self):
        return "UndefinedGradBackward"

    def apply(self, grads):
        return [None]


def _undefined_grad(o):
    t = o.detach()
    node = _UndefinedGradBackward()
    node.next_functions = (gradient_edge(o),)
    t._grad_fn, t._output_nr, t._rg = node, 0, True
    t._view_version = t._storage.version    # a fresh history, not a stale view's
    return t


def _undefined_grad_check(func, inputs):
    from . import grad
    diff = _diff_inputs(inputs)
    n = len(_differentiable_outputs(func(*inputs)))
    cases = [None] + (list(range(n)) if n > 1 else [])
    for which in cases:
        outs = _differentiable_outputs(func(*inputs))
        outs = [_undefined_grad(o) if which is None or i == which else o
                for i, o in enumerate(outs)]
        zeros = [wrap(np.zeros(o._data.shape, o._data.dtype), o.dtype) for o in outs]
        try:
            gis = grad(outs, diff, zeros, allow_unused=True)
        except RuntimeError as e:
            raise GradcheckError("Expected backward function to handle undefined output "
                                 "grads.") from e
        for gi in gis:
            if gi is not None and np.any(gi._data != 0):
                raise GradcheckError("Expected all input grads to be undefined or zero when all "
                                     "output grads are undefined or zero.")


def _batched_grad_check(inputs, output):
    """Gradients for a batch of grad_outputs (is_grads_batched) equal one-at-a-time ones."""
    from . import grad
    diff = _diff_inputs(inputs)
    rng = np.random.default_rng(1)
    gos = rng.standard_normal((2,) + tuple(output.shape))
    if output.is_complex():
        gos = gos + 1j * rng.standard_normal(gos.shape)
    batch = wrap(gos.astype(output._data.dtype), output.dtype)
    batched = grad(output, diff, batch, retain_graph=True, allow_unused=True,
                   is_grads_batched=True)
    for b in range(2):
        single = grad(output, diff, batch[b], retain_graph=True, allow_unused=True)
        for got, exp in zip(batched, single):
            if exp is None:
                continue
            if got is None or not np.allclose(got._data[b], exp._data, atol=1e-5, rtol=1e-5):
                raise GradcheckError("gradcheck or gradgradcheck failed while testing batched "
                                     "gradient computation.")


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False, masked=None):
    """Check analytical gradients of `func` at `inputs` against finite differences."""
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad "
                             "to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to "
                             "be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires "
                             "check_forward_ad to be True")
    if check_forward_ad:
        raise NotImplementedError("gradcheck(check_forward_ad=True): ember has no forward-mode AD")
    try:
        return _gradcheck(func, _as_tuple(inputs), eps, atol, rtol, nondet_tol,
                          check_undefined_grad, check_grad_dtypes, check_batched_grad,
                          fast_mode)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
               check_grad_dtypes, check_batched_grad, fast_mode):
    _check_inputs(inputs)
    func_out = func(*inputs)
    outputs = _differentiable_outputs(func_out)
    check = _fast_check if fast_mode else _slow_check
    if any(o.is_complex() for o in _as_tuple(func_out)):
        check(func, inputs, func_out, eps, rtol, atol, nondet_tol, check_grad_dtypes, True)
    check(func, inputs, func_out, eps, rtol, atol, nondet_tol, check_grad_dtypes, False)
    if check_batched_grad:
        for o in outputs:
            _batched_grad_check(inputs, o)
    _mul_by_grad_output_check(outputs, inputs)
    if check_undefined_grad:
        _undefined_grad_check(func, inputs)
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """gradcheck of the function (inputs, grad_outputs) -> autograd.grad(func(inputs))."""
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev "
                             "to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_undefined_grad=True requires check_rev_over_rev "
                             "to be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_batched_grad=True requires check_rev_over_rev to "
                             "be True")
    from . import grad
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        grad_outputs = tuple(_random_like(o, gen_non_contig_grad_outputs)
                             for o in _differentiable_outputs(func(*inputs)))
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n_out = len(grad_outputs)
    diff_in = {i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad}

    def new_func(*args):
        ins = args[:-n_out] if n_out else args
        outs = _differentiable_outputs(func(*ins))
        gos = args[-n_out:] if n_out else ()
        d = tuple(x for i, x in enumerate(ins) if i in diff_in)
        gis = grad(outs, d, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in gis if g is not None)

    return gradcheck(new_func, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     fast_mode=fast_mode, check_forward_ad=check_fwd_over_rev,
                     check_backward_ad=check_rev_over_rev, masked=masked)


def _random_like(o, noncontig):
    """A grad_output like torch.testing.make_tensor(low=-1, high=1, requires_grad=True)."""
    rng = np.random.default_rng(2)
    dt = o._data.dtype if o._data.dtype.kind in "fc" else np.dtype(np.float64)
    a = rng.uniform(-1, 1, tuple(o.shape))
    if dt.kind == "c":
        a = a + 1j * rng.uniform(-1, 1, tuple(o.shape))
    t = wrap(a.astype(dt))
    if noncontig and a.ndim:
        big = np.zeros(a.shape[:-1] + (a.shape[-1] * 2,), dt)
        big[..., ::2] = a
        t = wrap_view(big[..., ::2], wrap(big))
    return t.requires_grad_(True)
