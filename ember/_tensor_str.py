"""repr(tensor) exactly as PyTorch prints it (a port of torch/_tensor_str.py).

Note: PyTorch formats each element as a Python float/int/bool taken from the
tensor (`item()`/`tolist()`), choosing one width, fixed/scientific/int mode per
tensor from its nonzero finite values. We do the same on the NumPy array directly
(half/bfloat16 widened to float32, which is exact), so printing never dispatches ops
and never shows up in modes or the profiler.
"""
import dataclasses
import math

import numpy as np


@dataclasses.dataclass
class _PrinterOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: object = None


PRINT_OPTS = _PrinterOptions()


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """torch.set_printoptions: same options, same profiles."""
    if profile is not None:
        prec, thr, edge = {"default": (4, 1000, 3), "short": (2, 1000, 2),
                           "full": (4, math.inf, 3)}[profile]
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems = prec, thr, edge
        PRINT_OPTS.linewidth = 80
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions():
    return dataclasses.asdict(PRINT_OPTS)


class _Formatter:
    """One column width and notation for every element of a (real) array."""

    def __init__(self, a, floating):
        self.floating_dtype = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = a.reshape(-1)
        if not floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(f"{v}"))
            return
        vals = flat[np.isfinite(flat) & (flat != 0)]
        if vals.size == 0:
            return
        absd = np.abs(vals).astype(np.float64)
        lo, hi = absd.min(), absd.max()
        vals = vals.tolist()
        self.int_mode = all(v == math.ceil(v) for v in vals)
        opts = PRINT_OPTS
        if opts.sci_mode is None:
            self.sci_mode = bool(hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4)
        else:
            self.sci_mode = opts.sci_mode
        if self.sci_mode:
            fmt, extra = f"{{:.{opts.precision}e}}", 0
        elif self.int_mode:
            fmt, extra = "{:.0f}", 1
        else:
            fmt, extra = f"{{:.{opts.precision}f}}", 0
        for v in vals:
            self.max_width = max(self.max_width, len(fmt.format(v)) + extra)

    def width(self):
        return self.max_width

    def format(self, value):
        if self.floating_dtype:
            if self.sci_mode:
                ret = f"{{:{self.max_width}.{PRINT_OPTS.precision}e}}".format(value)
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{{:.{PRINT_OPTS.precision}f}}".format(value)
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


def _val_str(val, f1, f2):
    if f2 is None:
        return f1.format(val)
    real_str = f1.format(val.real)
    imag_str = (f2.format(val.imag) + "j").lstrip()
    if imag_str[0] in "+-":
        return real_str + imag_str
    return real_str + "+" + imag_str


def _vector_str(a, indent, summarize, f1, f2):
    element_length = f1.width() + 2
    if f2 is not None:
        element_length += f2.width() + 1
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_length))
    edge = PRINT_OPTS.edgeitems
    if summarize and not edge:
        data = ["..."]
    elif summarize and a.shape[0] > 2 * edge:
        data = ([_val_str(v, f1, f2) for v in a[:edge].tolist()] + [" ..."]
                + [_val_str(v, f1, f2) for v in a[-edge:].tolist()])
    else:
        data = [_val_str(v, f1, f2) for v in a.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _str_with_formatter(a, indent, summarize, f1, f2):
    if a.ndim == 0:
        return _val_str(a.item(), f1, f2)
    if a.ndim == 1:
        return _vector_str(a, indent, summarize, f1, f2)
    edge = PRINT_OPTS.edgeitems
    n = a.shape[0]
    if summarize and n > 2 * edge:
        rows = list(range(edge)) + [None] + list(range(n - edge, n))
    else:
        rows = range(n)
    slices = ["..." if i is None else _str_with_formatter(a[i], indent + 1, summarize, f1, f2)
              for i in rows]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _summarized(a):
    """The elements a summarized print shows (what the formatter measures)."""
    edge = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return a
    if a.ndim == 1:
        return np.concatenate((a[:edge], a[-edge:])) if a.shape[0] > 2 * edge else a
    if not edge:
        return np.empty([0] * a.ndim, a.dtype)
    if a.shape[0] > 2 * edge:
        parts = [a[i] for i in range(edge)] + [a[i] for i in range(a.shape[0] - edge, a.shape[0])]
    else:
        parts = list(a)
    return np.stack([_summarized(x) for x in parts])


def _printable(t):
    """The tensor's values as an array Python formats exactly like torch's item()."""
    a = t._data
    if t.dtype.name == "bfloat16":
        a = a.astype(np.float32)
    return a


def _tensor_str(t, indent):
    a = _printable(t)
    if a.size == 0:
        return "[]"
    summarize = a.size > PRINT_OPTS.threshold
    if t.dtype.is_complex:
        re, im = a.real, a.imag
        f1 = _Formatter(_summarized(re) if summarize else re, True)
        f2 = _Formatter(_summarized(im) if summarize else im, True)
        return _str_with_formatter(a, indent, summarize, f1, f2)
    f = _Formatter(_summarized(a) if summarize else a, t.dtype.is_floating_point)
    return _str_with_formatter(a, indent, summarize, f, None)


def _add_suffixes(tensor_str, suffixes, indent):
    out = [tensor_str]
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            out.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            out.append(", " + suffix)
            last_line_len += len(suffix) + 2
    out.append(")")
    return "".join(out)


def _prefix(t):
    from ._tensor import Tensor
    if t._fake:
        return "FakeTensor("
    if type(t) is Tensor or t._is_param:
        return "tensor("
    return f"{type(t).__name__}("


def tensor_repr(t, tensor_contents=None):
    from . import _dtype as D
    prefix = _prefix(t)
    indent = len(prefix)
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    default = D.get_default_dtype()
    has_default_dtype = t.dtype in (default, D.default_complex(), D.int64, D.bool)
    shape = tuple(t._data.shape)
    if t._backend == "meta":
        suffixes.append(f"size={shape}")
        if t.dtype is not default:
            suffixes.append(f"dtype={t.dtype}")
        body = "..."
    elif t._data.size == 0:
        if t._data.ndim != 1:
            suffixes.append(f"size={shape}")
        if t.dtype is not default:
            suffixes.append(f"dtype={t.dtype}")
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={shape}")
        if not has_default_dtype:
            suffixes.append(f"dtype={t.dtype}")
        from ._device import CUSTOM
        # a PrivateUse1 device tensor prints its values copied to the cpu
        body = _tensor_str(t.detach().cpu() if t._device.type in CUSTOM else t, indent)
    if tensor_contents is not None:
        body = tensor_contents
    if t._grad_fn is not None:
        suffixes.append(f"grad_fn=<{t._grad_fn.name().rsplit('::', 1)[-1]}>")
    elif t._rg:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)
