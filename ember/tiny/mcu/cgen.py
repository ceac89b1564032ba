"""Small C-emitting helpers shared by hand-written drivers and the tiny code generator:
arrays as C initializers (floats as exact hex literals) and `tiny_requant` constants."""
import numpy as np

__all__ = ["c_array", "c_float", "c_requant"]

_CTYPES = {np.int8: "int8_t", np.uint8: "uint8_t", np.int16: "int16_t", np.int32: "int32_t",
           np.float32: "float"}


def c_float(v):
    """A float32 value as a C literal that reads back bit for bit (hex float)."""
    v = float(np.float32(v))
    if np.isinf(v):
        return "(1.0f/0.0f)" if v > 0 else "(-1.0f/0.0f)"
    return v.hex() + "f"


def c_array(name, a, const=True, static=True):
    """`[static] [const] T name[N] = {...};` of a NumPy array (flattened, C order). A
    non-const array without data (a buffer) is zero-initialized and lands in .bss."""
    a = np.asarray(a)
    ctype = _CTYPES.get(a.dtype.type)
    if ctype is None:
        raise TypeError(f"c_array: no C type for dtype {a.dtype} ({name})")
    flat = a.reshape(-1)
    body = ", ".join(c_float(v) for v in flat) if ctype == "float" else \
        ", ".join(str(int(v)) for v in flat)
    quals = ("static " if static else "") + ("const " if const else "")
    init = f" = {{{body}}}" if const else ""
    return f"{quals}{ctype} {name}[{max(flat.size, 1)}]{init};"


def c_requant(name, p):
    """C definitions of a `tiny_requant` called `name` from kernels.requant_params(...) (float
    form) or kernels.requant_params_int(...) (integer form)."""
    lines, refs = [], {}
    for field in ("mult", "bias", "qmult", "qbias", "qshift"):
        refs[field] = "0"
        if p.get(field) is not None:
            lines.append(c_array(f"{name}_{field}", p[field]))
            refs[field] = f"{name}_{field}"
    lines.append(f"static const tiny_requant {name} = {{{refs['mult']}, {refs['bias']}, "
                 f"{c_float(p['inv_so'])}, {p['zo']}, {p['qmin']}, {p['qmax']}, "
                 f"{refs['qmult']}, {refs['qbias']}, {refs['qshift']}}};")
    return "\n".join(lines)
